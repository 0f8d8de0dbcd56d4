// The one way the tool reads a small input file whole: every file it reads
// besides the files it validates (a --token-file, a policy file, a
// suppressions file, a baseline, a scan cache entry, the sibling
// chat-template files next to a model) goes through ReadBoundedFile.
//
// Bounded as it comes, in bytes and in time:
//  - bytes: reading stops at max_bytes + 1, so `--token-file /dev/zero`
//    costs one chunk, not gigabytes, and memory grows with what arrived,
//    never to the bound up front;
//  - time: a pipe or a terminal that has not ended within the deadline
//    (a FIFO whose writer never comes, or never closes) is an error, never
//    a wait without end. A regular file needs no deadline.
// Any kind of file may be named (a regular file, a FIFO, /dev/stdin, a
// process substitution); a directory is refused. docs/threat-model.md lists
// every input with its bound.
#ifndef GGUFGUARD_IO_BOUNDED_READ_H_
#define GGUFGUARD_IO_BOUNDED_READ_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace ggufguard {

// How long a small input that is a pipe or a terminal may take to end.
inline constexpr int kSmallInputDeadlineMs = 60'000;

// The whole of `path`, at most `max_bytes`. Errors name `what` ("the
// suppressions file") and the path: NotFound when it cannot be opened,
// ResourceExhausted past max_bytes, DeadlineExceeded past the deadline,
// DataLoss on a read error, FailedPrecondition for a directory.
absl::StatusOr<std::string> ReadBoundedFile(const std::string& path, std::string_view what, size_t max_bytes,
                                            int deadline_ms = kSmallInputDeadlineMs);

// The same on a descriptor the caller opened and keeps (`name` for
// messages); it may be blocking or not.
absl::StatusOr<std::string> ReadBoundedFd(int fd, std::string_view name, size_t max_bytes,
                                          int deadline_ms = kSmallInputDeadlineMs);

}  // namespace ggufguard

#endif  // GGUFGUARD_IO_BOUNDED_READ_H_
