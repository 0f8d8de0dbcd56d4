#include "ggufguard/base/text_hash.h"

#include <sys/random.h>

#include <ctime>

namespace ggufguard {
namespace {

using namespace text_hash_internal;

// The n <= 16 bytes at s, which may lie at the end of the readable bytes, as
// two words (the rest zero).
void CopyShort(const uint8_t* s, size_t n, uint64_t* w0, uint64_t* w1) {
  uint8_t bytes[16] = {};
  for (size_t k = 0; k < n; ++k) bytes[k] = s[k];
  *w0 = LoadWord(bytes);
  *w1 = LoadWord(bytes + 8);
}

}  // namespace

uint64_t LongTextHash(const uint8_t* s, size_t n, uint64_t room) {
  uint64_t w0, w1;
  if (n <= 16) {  // a short text too near the end of `room` to read whole words
    CopyShort(s, n, &w0, &w1);
    return ShortTextHash(w0, w1, n);
  }
  constexpr uint64_t kBlock = 0xC4CEB9FE1A85EC53ull;
  uint64_t h = kSeed ^ (uint64_t{n} * 0xFF51AFD7ED558CCDull);
  size_t i = 0;
  for (; i + 16 < n; i += 16) {  // whole blocks, leaving 1..16 bytes
    w0 = LoadWord(s + i);
    w1 = LoadWord(s + i + 8);
    h = Mum(w0 ^ h, w1 ^ kBlock);
  }
  const size_t rest = n - i;  // 1..16
  if (room - i >= 16) {
    ShortTextWords(s + i, rest, &w0, &w1);
  } else {
    CopyShort(s + i, rest, &w0, &w1);
  }
  return Mum(w0 ^ h ^ (uint64_t{rest} * 0xD6E8FEB86659FD93ull), w1 ^ kBlock);
}

uint64_t ProcessHashSeed() {
  static const uint64_t seed = [] {
    uint64_t v = 0;
    if (getrandom(&v, sizeof v, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof v)) {
      // No entropy yet (early boot): the clock and an address, which only
      // an attacker on this machine could guess; tables stay correct.
      timespec t{};
      clock_gettime(CLOCK_MONOTONIC, &t);
      v = Mum(static_cast<uint64_t>(t.tv_nsec) ^ reinterpret_cast<uintptr_t>(&v), 0x243F6A8885A308D3ull);
    }
    return v;
  }();
  return seed;
}

}  // namespace ggufguard
