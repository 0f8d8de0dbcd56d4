// Bulk byte checks over memory the caller proved readable.
#ifndef GGUFGUARD_BASE_BYTES_H_
#define GGUFGUARD_BASE_BYTES_H_

#include <cstdint>
#include <cstring>

namespace ggufguard {

// The index of the first non-zero byte of p[0, n), or n when all are zero.
// Padding and hole checks read gigabytes of zeros: 64 bytes a step as an OR
// of eight words (the compiler makes it two AVX2 or four SSE2 loads), then
// the exact byte once a step is not zero. A byte at a time ran ~1 GB/s.
inline uint64_t FirstNonZero(const uint8_t* p, uint64_t n) {
  uint64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    uint64_t w[8];
    std::memcpy(w, p + i, sizeof w);
    if ((w[0] | w[1] | w[2] | w[3] | w[4] | w[5] | w[6] | w[7]) != 0) break;
  }
  for (; i < n; ++i) {
    if (p[i] != 0) return i;
  }
  return n;
}

}  // namespace ggufguard

#endif  // GGUFGUARD_BASE_BYTES_H_
