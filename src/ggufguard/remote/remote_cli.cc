#include "ggufguard/remote/remote_cli.h"

#include <cstdlib>
#include <fstream>

#include <algorithm>

#include "absl/strings/numbers.h"
#include "ggufguard/base/checked_math.h"
#include "absl/strings/strip.h"
#include "ggufguard/base/text.h"
#include "ggufguard/provenance/siblings.h"
#include "ggufguard/remote/http_source.h"
#include "ggufguard/remote/location.h"

namespace ggufguard {

bool ParseRemoteFlag(const std::vector<std::string>& args, size_t* i, RemoteFlags* flags, std::ostream& err,
                     bool* bad) {
  const std::string& a = args[*i];
  if (a == "--no-siblings") {
    flags->siblings = false;
    return true;
  }
  if (a != "--token-file" && a != "--connect-timeout" && a != "--idle-timeout") return false;
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
  uint32_t seconds = 0;
  if (!absl::SimpleAtoi(v, &seconds) || seconds == 0 || seconds > 3600) {
    err << "ggufguard: " << a << " wants a number of seconds from 1 to 3600, not '" << EscapeForDisplay(v) << "'\n";
    *bad = true;
    return true;
  }
  if (a == "--connect-timeout") {
    flags->remote.connect_timeout_ms = seconds * 1000;
  } else {
    flags->remote.idle_timeout_s = seconds;
  }
  return true;
}

bool LoadRemoteToken(RemoteFlags* flags, std::ostream& err) {
  if (flags->token_file) {
    std::ifstream in(*flags->token_file, std::ios::binary);
    std::string line;
    if (!in || !std::getline(in, line) || line.size() > 4096) {
      err << "ggufguard: cannot read a token (one line, at most 4096 bytes) from --token-file "
          << EscapeForDisplay(*flags->token_file, 4096) << "\n";
      return false;
    }
    flags->remote.token = std::string(absl::StripAsciiWhitespace(line));
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
  options.remote = flags.remote;
  options.stream_whole = hash;
  options.header_only = header_only;
  options.fail_fast = fail_fast;
  options.deep = deep;
  return ValidateRemote(location->value, arg, policy, options);
}

ShardOpener RemoteAwareShardOpener(const RemoteFlags& flags, ShardOpener local) {
  return [remote = flags.remote, local = std::move(local)](
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
