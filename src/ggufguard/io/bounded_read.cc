#include "ggufguard/io/bounded_read.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/io/source.h"

namespace ggufguard {
namespace {

using Clock = std::chrono::steady_clock;

// Read steps: small, so that a 20-byte token costs one page, and a stream
// of zeros stops within one step of the bound.
constexpr size_t kStep = size_t{64} << 10;

std::string Errno() { return std::strerror(errno); }

}  // namespace

absl::StatusOr<std::string> ReadBoundedFd(int fd, std::string_view name, size_t max_bytes, int deadline_ms) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return absl::DataLossError(absl::StrCat("cannot stat ", Sv(name), ": ", Errno()));
  if (S_ISDIR(st.st_mode)) return absl::FailedPreconditionError(absl::StrCat(Sv(name), " is a directory"));
  // A regular file is never waited on; anything else (a pipe, a socket, a
  // terminal, a device) is polled against one deadline for the whole read.
  const bool wait = !S_ISREG(st.st_mode);
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(deadline_ms);
  std::string data;
  char chunk[kStep];
  for (;;) {
    if (wait) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) {
        return absl::DeadlineExceededError(absl::StrCat(Sv(name), " did not end within ", deadline_ms / 1000.0,
                                                        " s (a pipe or terminal: ", data.size(), " bytes came)"));
      }
      pollfd ready{fd, POLLIN, 0};
      const int n = ::poll(&ready, 1, static_cast<int>(std::min<long long>(left, 1 << 30)));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return absl::DataLossError(absl::StrCat("cannot wait for ", Sv(name), ": ", Errno()));
      if (n == 0) continue;  // the deadline check above says so
    }
    // One byte past the bound tells "too large" from "exactly the bound".
    const size_t want = std::min(sizeof chunk, max_bytes + 1 - data.size());
    const ssize_t got = ::read(fd, chunk, want);
    if (got < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (got < 0) return absl::DataLossError(absl::StrCat("cannot read ", Sv(name), ": ", Errno()));
    if (got == 0) return data;
    data.append(chunk, static_cast<size_t>(got));
    if (data.size() > max_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat(Sv(name), " is larger than ", max_bytes, " bytes (reading stopped there)"));
    }
  }
}

absl::StatusOr<std::string> ReadBoundedFile(const std::string& path, std::string_view what, size_t max_bytes,
                                            int deadline_ms) {
  // Opened without waiting: a FIFO with no writer yet is then polled
  // against the deadline instead of blocking in open(2).
  const int fd = OpenWithoutWaiting(path, FinalLink::kFollow);
  if (fd < 0) return absl::NotFoundError(absl::StrCat("cannot open ", Sv(what), " ", path, ": ", Errno()));
  absl::StatusOr<std::string> data = ReadBoundedFd(fd, absl::StrCat(Sv(what), " ", path), max_bytes, deadline_ms);
  ::close(fd);
  return data;
}

}  // namespace ggufguard
