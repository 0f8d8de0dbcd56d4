// The least a reader at the end of a pipe can cost here: what issue 13's
// "within 1.5x of cat > /dev/null" for `cat FILE | ggufguard validate -` is
// measured against in bench/measure_bulk.sh (docs/performance.md, "Pipe").
//
//   cat FILE | build/bench/bench/pipe_floor splice   moves the pipe's pages to /dev/null (splice(2)): no copy
//   cat FILE | build/bench/bench/pipe_floor read     read(2)s into one 1 MiB buffer and looks at nothing
//
// Both ask for a 1 MiB pipe, as ggufguard's FdStream does. Prints the bytes
// consumed on stderr; exit status 1 if a call failed.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>

int main(int argc, char** argv) {
  const bool splice_mode = argc == 2 && std::strcmp(argv[1], "splice") == 0;
  if (argc != 2 || (!splice_mode && std::strcmp(argv[1], "read") != 0)) {
    std::fprintf(stderr, "usage: %s splice|read < PIPE\n", argv[0]);
    return 2;
  }
  constexpr size_t kStep = size_t{1} << 20;
  (void)::fcntl(0, F_SETPIPE_SZ, static_cast<int>(kStep));
  uint64_t total = 0;
  if (splice_mode) {
    const int null_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null_fd < 0) return 1;
    for (;;) {
      const ssize_t n = ::splice(0, nullptr, null_fd, nullptr, kStep, SPLICE_F_MOVE);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return 1;
      if (n == 0) break;
      total += static_cast<uint64_t>(n);
    }
  } else {
    std::unique_ptr<char[]> buffer(new char[kStep]);
    for (;;) {
      const ssize_t n = ::read(0, buffer.get(), kStep);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return 1;
      if (n == 0) break;
      total += static_cast<uint64_t>(n);
    }
  }
  std::fprintf(stderr, "%llu bytes\n", static_cast<unsigned long long>(total));
  return 0;
}
