// What fresh memory costs on this machine, behind docs/performance.md's
// "Per-file overhead: page faults" paragraph and base/page_buffer.h.
//
//   build/bench/bench/page_cost FILE
//
// Each line is one way of getting bytes into a process, timed from the call
// to the last byte touched (one write or read per 4 KiB page), in a fresh
// mapping each time (run it a few times; a line's first run may differ):
//   4k-pages 512K      mmap 512 KiB of 4 KiB pages, memset: one fault a page
//   huge-page 512K     the same on a 2 MiB-aligned MADV_HUGEPAGE mapping
//   pread 2M huge      pread FILE's first 2 MiB into such a mapping
//   mmap 2M populate   mmap FILE's first 2 MiB with MAP_POPULATE, read it
// FILE should be at least 2 MiB and in the page cache (cat it first).
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace {

constexpr size_t kHuge = size_t{2} << 20;
constexpr size_t kPage = 4096;
volatile uint64_t g_sink;

double Microseconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - since).count();
}

// A fresh 2 MiB-aligned anonymous mapping of kHuge bytes, advised for huge
// pages or not; nullptr on failure. Freed with munmap(p, kHuge).
uint8_t* MapAligned(bool huge) {
  void* raw = ::mmap(nullptr, 2 * kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kHuge - 1) & ~uintptr_t{kHuge - 1};
  if (aligned > start) ::munmap(raw, aligned - start);
  const uintptr_t end = start + 2 * kHuge;
  if (end > aligned + kHuge) ::munmap(reinterpret_cast<void*>(aligned + kHuge), end - (aligned + kHuge));
  if (huge) ::madvise(reinterpret_cast<void*>(aligned), kHuge, MADV_HUGEPAGE);
  return reinterpret_cast<uint8_t*>(aligned);
}

uint64_t TouchPages(const volatile uint8_t* p, size_t n) {
  uint64_t sum = 0;
  for (size_t i = 0; i < n; i += kPage) sum += p[i];
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: page_cost FILE (at least 2 MiB, page-cached)\n");
    return 2;
  }
  const int fd = ::open(argv[1], O_RDONLY);
  if (fd < 0) {
    std::perror(argv[1]);
    return 1;
  }
  uint64_t sink = 0;
  for (const bool huge : {false, true}) {
    uint8_t* p = MapAligned(huge);
    if (p == nullptr) return 1;
    const auto t = std::chrono::steady_clock::now();
    std::memset(p, 0, 512 << 10);
    std::printf("%-18s %8.1f us\n", huge ? "huge-page 512K" : "4k-pages 512K", Microseconds(t));
    ::munmap(p, kHuge);
  }
  {
    uint8_t* p = MapAligned(true);
    if (p == nullptr) return 1;
    const auto t = std::chrono::steady_clock::now();
    if (::pread(fd, p, kHuge, 0) != static_cast<ssize_t>(kHuge)) {
      std::fprintf(stderr, "page_cost: %s is shorter than 2 MiB\n", argv[1]);
      return 1;
    }
    sink += TouchPages(p, kHuge);
    std::printf("%-18s %8.1f us\n", "pread 2M huge", Microseconds(t));
    ::munmap(p, kHuge);
  }
  {
    const auto t = std::chrono::steady_clock::now();
    void* m = ::mmap(nullptr, kHuge, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (m == MAP_FAILED) return 1;
    sink += TouchPages(static_cast<const uint8_t*>(m), kHuge);
    std::printf("%-18s %8.1f us\n", "mmap 2M populate", Microseconds(t));
    ::munmap(m, kHuge);
  }
  ::close(fd);
  g_sink = sink;  // keeps the reads
  return 0;
}
