// Where an input lives: a local path, or a remote file named by a URL or a
// Hugging Face repository path. One place turns a command-line argument into
// a location, so that every command (validate, scan, inspect) and the split
// set discovery read the same forms the same way.
//
//   https://HOST/...                    any host
//   http://HOST/...                     only a loopback host (127.0.0.0/8, localhost, [::1])
//   hf://ORG/REPO[@REVISION]/PATH       $HF_ENDPOINT/ORG/REPO/resolve/REVISION/PATH
//                                       (REVISION main, HF_ENDPOINT https://huggingface.co by default)
#ifndef GGUFGUARD_REMOTE_LOCATION_H_
#define GGUFGUARD_REMOTE_LOCATION_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace ggufguard {

struct Location {
  bool remote = false;
  std::string value;  // the path as given, or the URL to fetch
};

// True when `arg` names a remote file by its form (https://, http://,
// hf://), whether or not the rest of it is acceptable.
bool IsRemoteArgument(std::string_view arg);

// The location `arg` names. A remote one is checked (scheme, host, the
// characters of an hf:// path) and, for hf://, resolved against
// `hf_endpoint` (empty: https://huggingface.co). An error names what is
// wrong in the argument; nothing is fetched.
absl::StatusOr<Location> ResolveLocation(std::string_view arg, std::string_view hf_endpoint);
// The same with HF_ENDPOINT from the environment.
absl::StatusOr<Location> ResolveLocation(std::string_view arg);

// Only https, or http to a loopback host, is ever fetched: a URL given on
// the command line and each redirect target pass through here before any
// connection is made.
absl::Status CheckFetchableUrl(std::string_view url);

// True for localhost, 127.0.0.0/8 and ::1 (brackets allowed).
bool IsLoopbackHost(std::string_view host);

// The URL of file `name` in the same directory as `url`: its last path
// component replaced, the query and fragment dropped. `name` is one path
// component (no '/', not "." or ".."); what needs it is percent-encoded.
absl::StatusOr<std::string> SiblingUrl(std::string_view url, std::string_view name);

// scheme://host:port of a URL, lower-case, with the scheme's default port
// made explicit: a token is sent only to the origin the user named.
absl::StatusOr<std::string> UrlOrigin(std::string_view url);

// The host of a URL, for messages (never its path or query, which may hold
// a signature).
std::string UrlHostForDisplay(std::string_view url);

}  // namespace ggufguard

#endif  // GGUFGUARD_REMOTE_LOCATION_H_
