// Validates a remote file: the header through growing range requests and
// the bytes the layout rules read (padding, the tail) through more of them,
// as a local file is read; or, with --hash or --deep, the whole file as one
// streamed GET. The hub's X-Linked-Size and X-Linked-Etag are checked
// against what the server served (GG9120, GG9121).
#ifndef GGUFGUARD_REMOTE_REMOTE_VALIDATE_H_
#define GGUFGUARD_REMOTE_REMOTE_VALIDATE_H_

#include <string>

#include "absl/status/statusor.h"
#include "ggufguard/remote/http_source.h"
#include "ggufguard/remote/transfer_stats.h"
#include "ggufguard/validate.h"

namespace ggufguard {

struct RemoteValidateOptions {
  RemoteOptions remote;      // remote.max_bytes is set from the policy's max_remote_bytes
  bool stream_whole = false;  // --hash: read the file once, forward, hashing it
  bool header_only = false;   // stop after the header (the size is still known)
  bool fail_fast = false;
  DeepOptions deep;           // --deep: checked in the same forward pass
};

struct RemoteValidation {
  absl::StatusOr<ValidatedFile> file = absl::UnknownError("not validated");
  TransferStats stats;  // also when `file` is an error
};

// `url` from ResolveLocation; `label` is the argument as given, for messages.
// An error (ResourceExhausted for a spent budget) means the file could not
// be verified, never that it is valid.
RemoteValidation ValidateRemote(const std::string& url, const std::string& label, const Policy& policy,
                                RemoteValidateOptions options);

}  // namespace ggufguard

#endif  // GGUFGUARD_REMOTE_REMOTE_VALIDATE_H_
