#include "ggufguard/remote/remote_cli.h"

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/text.h"
#include "ggufguard/io/bounded_read.h"
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

}  // namespace ggufguard
