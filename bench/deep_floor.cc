// The floor for `ggufguard validate --deep` (bench/measure_deep.sh): one
// read-only pass over a whole file through mmap, as fast as glibc's memchr
// goes, on one thread or on N threads over N slices.
//
//   build/bench/bench/deep_floor FILE [THREADS] [BYTE]
//
// Maps FILE read-only, advises MADV_SEQUENTIAL, and on each thread searches
// its slice (page-aligned, contiguous) for BYTE (default 0), going on past
// each hit, so every byte is read whatever the file holds; the data of
// make_deep_inputs's file has no zero byte, so the hits are the header's and
// the padding's. Prints the hits and the seconds and GB/s from the mmap to
// the last thread's end (page faults included, as a loader would see them).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

uint64_t CountByte(const uint8_t* p, size_t n, int byte) {
  uint64_t hits = 0;
  const uint8_t* end = p + n;
  while (p < end) {
    const void* hit = std::memchr(p, byte, static_cast<size_t>(end - p));
    if (hit == nullptr) break;
    ++hits;
    p = static_cast<const uint8_t*>(hit) + 1;
  }
  return hits;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 4) {
    std::fprintf(stderr, "usage: deep_floor FILE [THREADS] [BYTE]\n");
    return 2;
  }
  const unsigned threads = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 1;
  const int byte = argc > 3 ? std::atoi(argv[3]) : 0;
  if (threads == 0 || threads > 1024 || byte < 0 || byte > 255) {
    std::fprintf(stderr, "deep_floor: THREADS is 1-1024, BYTE 0-255\n");
    return 2;
  }
  const int fd = ::open(argv[1], O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || ::fstat(fd, &st) != 0 || st.st_size <= 0) {
    std::fprintf(stderr, "deep_floor: cannot open %s: %s\n", argv[1], std::strerror(errno));
    return 3;
  }
  const size_t size = static_cast<size_t>(st.st_size);
  const auto start = std::chrono::steady_clock::now();
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (map == MAP_FAILED) {
    std::fprintf(stderr, "deep_floor: mmap: %s\n", std::strerror(errno));
    return 3;
  }
  ::madvise(map, size, MADV_SEQUENTIAL);
  const uint8_t* base = static_cast<const uint8_t*>(map);
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t slice = (size / threads + page - 1) / page * page;
  std::vector<uint64_t> hits(threads, 0);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    const size_t begin = std::min(size, t * slice);
    const size_t n = std::min(size - begin, slice);
    pool.emplace_back([&, t, begin, n] { hits[t] = CountByte(base + begin, n, byte); });
  }
  uint64_t total = 0;
  for (unsigned t = 0; t < threads; ++t) {
    pool[t].join();
    total += hits[t];
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ::munmap(map, size);
  ::close(fd);
  std::printf("deep_floor: %zu bytes, %u threads, %ju hits of 0x%02x, %.4f s, %.2f GB/s\n", size, threads,
              static_cast<uintmax_t>(total), byte, seconds, static_cast<double>(size) / seconds / 1e9);
  return 0;
}
