#include "ggufguard/remote/remote_validate.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "ggufguard/base/text.h"

namespace ggufguard {
namespace {

// SourceStream (io/source.h) over an HttpSource for --header-only: each
// read is one range request of what the reader asks for, which grows x2 as
// the prefix does, and the first block, already fetched, costs nothing.

bool IsSha256Hex(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// The hub's own word on the file against what its server served.
void CrossCheck(const HttpSource& source, const Policy& policy, ValidatedFile& file) {
  if (source.linked_size() && *source.linked_size() != source.size()) {
    file.AddFinding(policy, RuleId::kRemoteSizeMismatch, 0,
                    absl::StrCat("the hub says the file has ", *source.linked_size(),
                                 " bytes (X-Linked-Size), the server served ", source.size()));
  }
  const std::string etag = absl::AsciiStrToLower(source.linked_etag());
  const std::string& sha = file.report().sha256;
  if (!sha.empty() && IsSha256Hex(etag) && etag != sha) {
    file.AddFinding(policy, RuleId::kRemoteDigestMismatch, 0,
                    absl::StrCat("the hub says the file's SHA-256 is ", etag, " (X-Linked-Etag), the bytes served hash to ",
                                 sha));
  }
}

}  // namespace

RemoteValidation ValidateRemote(const std::string& url, const std::string& label, const Policy& policy,
                                RemoteValidateOptions options) {
  RemoteValidation out;
  options.remote.max_bytes = std::min(options.remote.max_bytes, policy.limits.max_remote_bytes);
  absl::StatusOr<std::unique_ptr<HttpSource>> source = HttpSource::Open(url, label, options.remote, &out.stats);
  if (!source.ok()) {
    // The budget spent on the first read is "could not verify", like one
    // spent later (inside the validators).
    out.file = IsBudgetSpent(source.status())
                   ? ValidatedFile::HeaderNotRead(policy, source.status(), out.stats.bytes, std::nullopt)
                   : absl::StatusOr<ValidatedFile>(source.status());
    return out;
  }
  HttpSource& http = **source;
  if (options.header_only) {
    StreamOptions stream_options;
    stream_options.hash = false;
    stream_options.header_only = true;
    stream_options.file_size = http.size();
    SourceStream stream(http);
    out.file = ValidateStream(stream, policy, stream_options, {});
  } else if (options.stream_whole || options.deep.enabled) {
    absl::StatusOr<std::unique_ptr<ByteStream>> stream = http.OpenStream();
    if (stream.ok()) {
      StreamOptions stream_options;
      stream_options.hash = true;
      stream_options.fail_fast = options.fail_fast;
      stream_options.max_bytes = http.size();
      out.file = ValidateStream(**stream, policy, stream_options, options.deep);
    } else {
      out.file = stream.status();
    }
  } else {
    out.file = ValidateSource(http, policy, {}, {});
  }
  if (out.file.ok()) CrossCheck(http, policy, *out.file);
  out.stats = http.stats();
  return out;
}

}  // namespace ggufguard
