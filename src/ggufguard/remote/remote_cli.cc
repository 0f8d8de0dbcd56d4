#include "ggufguard/remote/remote_cli.h"

#include <algorithm>
#include <cstdlib>

#include <algorithm>

#include "absl/strings/numbers.h"
#include "ggufguard/base/checked_math.h"
#include "absl/strings/strip.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/text.h"
#include "ggufguard/io/bounded_read.h"
#include "ggufguard/provenance/siblings.h"
#include "ggufguard/remote/http_source.h"
#include "ggufguard/remote/location.h"

namespace ggufguard {
namespace {

// A token is one line of at most 4096 bytes; the file may hold a few more
// (a line ending, a trailing line), never a megabyte.
constexpr size_t kMaxTokenBytes = 4096;
constexpr size_t kMaxTokenFileBytes = 2 * kMaxTokenBytes;

}  // namespace

bool ParseRemoteFlag(const std::vector<std::string>& args, size_t* i, RemoteFlags* flags, std::ostream& err,
                     bool* bad) {
  const std::string& a = args[*i];
  if (a == "--no-siblings") {
    flags->siblings = false;
    return true;
  }
  if (a != "--token-file" && a != "--connect-timeout" && a != "--idle-timeout" && a != "--timeout" &&
      a != "--min-rate") {
    return false;
  }
  if (*i + 1 >= args.size()) {
    err << "ggufguard: " << a << " needs a value\n";
    *bad = true;
    return true;
  }
  const std::string& v = args[++*i];
  if (a == "--token-file") {
    flags->token_file = v;
    return true;
  }
  // --timeout: up to a week (a --hash of a very large file); the others as
  // they were, up to an hour; --min-rate: bytes per second.
  const uint32_t most = a == "--timeout" ? 7 * 24 * 3600 : a == "--min-rate" ? UINT32_MAX : 3600;
  uint32_t n = 0;
  if (!absl::SimpleAtoi(v, &n) || n == 0 || n > most) {
    err << "ggufguard: " << a << " wants a number " << (a == "--min-rate" ? "of bytes per second" : "of seconds")
        << " from 1 to " << most << ", not '" << EscapeForDisplay(v) << "'\n";
    *bad = true;
    return true;
  }
  if (a == "--connect-timeout") {
    flags->remote.connect_timeout_ms = n * 1000;
  } else if (a == "--idle-timeout") {
    flags->remote.idle_timeout_s = n;
  } else if (a == "--timeout") {
    flags->timeout_s = n;
  } else {
    flags->min_rate = n;
  }
  return true;
}

RemoteOptions RemoteOptionsFor(const RemoteFlags& flags, const Policy& policy) {
  RemoteOptions o = flags.remote;
  o.total_timeout_s = flags.timeout_s.value_or(policy.limits.max_remote_seconds);
  o.idle_min_bytes_per_s = flags.min_rate.value_or(policy.limits.min_remote_bytes_per_second);
  o.max_bytes = std::min(o.max_bytes, policy.limits.max_remote_bytes);
  return o;
}

bool LoadRemoteToken(RemoteFlags* flags, std::ostream& err) {
  if (flags->token_file) {
    // Read bounded as it comes (io/bounded_read.h): `--token-file /dev/zero`
    // stops after kMaxTokenFileBytes + 1 bytes, a FIFO nobody writes after
    // the deadline.
    absl::StatusOr<std::string> text = ReadBoundedFile(*flags->token_file, "--token-file", kMaxTokenFileBytes);
    const std::string_view line = text.ok() ? std::string_view(*text).substr(0, text->find('\n')) : "";
    if (!text.ok() || line.size() > kMaxTokenBytes || absl::StripAsciiWhitespace(Sv(line)).empty()) {
      err << "ggufguard: cannot read a token (one line, at most " << kMaxTokenBytes << " bytes) from --token-file "
          << EscapeForDisplay(*flags->token_file, 4096);
      // The reason, never the contents: a status names sizes and errno only.
      if (!text.ok()) err << ": " << EscapeForDisplay(std::string(text.status().message()), 4096 + 200);
      err << "\n";
      return false;
    }
    flags->remote.token = std::string(absl::StripAsciiWhitespace(Sv(line)));
    return true;
  }
  if (const char* env = std::getenv("HF_TOKEN"); env != nullptr) {
    flags->remote.token = std::string(absl::StripAsciiWhitespace(env));
  }
  return true;
}

RemoteValidation ValidateRemoteArgument(const std::string& arg, const Policy& policy, const RemoteFlags& flags,
                                        bool hash, bool header_only, bool fail_fast, const DeepOptions& deep) {
  absl::StatusOr<Location> location = ResolveLocation(arg);
  if (!location.ok()) {
    RemoteValidation refused;
    refused.file = location.status();
    return refused;
  }
  RemoteValidateOptions options;
  options.remote = RemoteOptionsFor(flags, policy);
  options.stream_whole = hash;
  options.header_only = header_only;
  options.fail_fast = fail_fast;
  options.deep = deep;
  return ValidateRemote(location->value, arg, policy, options);
}

ShardOpener RemoteAwareShardOpener(const RemoteFlags& flags, const Policy& policy, ShardOpener local) {
  return [remote = RemoteOptionsFor(flags, policy), local = std::move(local)](
             const std::string& location) -> absl::StatusOr<std::unique_ptr<ByteSource>> {
    if (!IsRemoteArgument(location)) return local(location);
    absl::StatusOr<Location> resolved = ResolveLocation(location);
    if (!resolved.ok()) return resolved.status();
    absl::StatusOr<std::unique_ptr<HttpSource>> source = HttpSource::Open(resolved->value, location, remote);
    if (!source.ok()) return source.status();
    return std::unique_ptr<ByteSource>(std::move(*source));
  };
}

bool IsHubArgument(std::string_view arg) { return arg.starts_with("hf://"); }

void JudgeSiblingsOf(const std::string& location, ValidatedFile& file, const Policy& policy, const RemoteFlags& flags,
                     FinalLink links, TransferStats* spent) {
  if (!flags.siblings || file.report().templates.listed.empty()) return;
  if (location == "-" || (IsRemoteArgument(location) && !IsHubArgument(location))) return;
  const uint64_t max_bytes = policy.limits.max_sibling_file_bytes;
  SiblingOpener open = LocalShardOpener(links);
  if (IsHubArgument(location)) {
    // Each sibling is one small file: its first read asks for all of it,
    // and its budget is its bound plus the responses' headers.
    RemoteOptions options = flags.remote;
    options.max_bytes = SatAdd(max_bytes, uint64_t{256} << 10);
    options.first_read = std::min<uint64_t>(options.first_read, SatAdd(max_bytes, 1));
    open = [options, spent](const std::string& sibling) -> absl::StatusOr<std::unique_ptr<ByteSource>> {
      absl::StatusOr<Location> resolved = ResolveLocation(sibling);
      if (!resolved.ok()) return resolved.status();
      TransferStats cost;
      absl::StatusOr<std::unique_ptr<HttpSource>> source = HttpSource::Open(resolved->value, sibling, options, &cost);
      if (spent != nullptr) {
        spent->requests += cost.requests;
        spent->bytes = SatAdd(spent->bytes, cost.bytes);
      }
      if (!source.ok()) return source.status();
      return std::unique_ptr<ByteSource>(std::move(*source));
    };
  }
  JudgeAgainstSiblings(file, ReadSiblings(location, open, max_bytes), policy);
}

}  // namespace ggufguard
