// A quick 64-bit hash of a short text, for telling texts apart in bulk (a
// vocabulary's tokens: GG9054). Shared by the parser, which hashes the token
// array in the same walk that proves its lengths, and by the duplicate-token
// rule, which hashes the texts the parser could not.
//
// Not keyed: a crafted vocabulary can make two texts collide, which only
// sends the caller to an exact comparison of the texts. The same bytes hash
// the same on every path (short or long, near the end of the buffer or
// not): tests/text_hash_test.cc.
#ifndef GGUFGUARD_BASE_TEXT_HASH_H_
#define GGUFGUARD_BASE_TEXT_HASH_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace ggufguard {
namespace text_hash_internal {

constexpr uint64_t kSeed = 0x9E3779B97F4A7C15ull;
// The first n bytes of a little-endian word, n in 0..8.
constexpr uint64_t FirstBytes(size_t n) { return n >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * n)) - 1; }
// For n in 0..16: the masks that keep the first n bytes of two words.
struct KeepFirstTable {
  uint64_t masks[17][2];
  constexpr KeepFirstTable() : masks() {
    for (size_t n = 0; n <= 16; ++n) {
      masks[n][0] = FirstBytes(n);
      masks[n][1] = n >= 8 ? FirstBytes(n - 8) : 0;
    }
  }
  constexpr const uint64_t* operator[](size_t n) const { return masks[n]; }
};
inline constexpr KeepFirstTable kKeepFirst;
// The 128-bit product of a and b, its halves XORed. The low half is a
// second multiply, not the product's own: GCC 12 stored the __int128 on the
// stack and read its halves back, a store-forwarding stall in every call
// (15% of the duplicate-token walk's samples).
inline uint64_t Mum(uint64_t a, uint64_t b) {
  const uint64_t high = static_cast<uint64_t>((static_cast<unsigned __int128>(a) * b) >> 64);
  return high ^ (a * b);
}

// Eight bytes as a little-endian word, so that FirstBytes keeps the first
// bytes of the text on every host.
inline uint64_t LoadWord(const uint8_t* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  if constexpr (std::endian::native == std::endian::big) w = __builtin_bswap64(w);
  return w;
}

}  // namespace text_hash_internal

// The hash of a text of n <= 16 bytes held in two words (the bytes past n
// zero): one 64x64->128-bit multiply of the words, folded (wyhash's "mum"),
// the length mixed into the first factor, so that the parser's walk, which
// hashes each token beside its chain of length loads, pays little for it.
// (Two multiplies XORed, one per word, collided in 5-20 pairs of every real
// vocabulary: a text of 7 bytes and its 8-byte extension differed only in
// the top byte of both products. This one gives no pair equal in its top 40
// bits on any vocabulary of ../shared/corpus-real nor the benchmark's:
// tests/text_hash_test.cc.)
inline uint64_t ShortTextHash(uint64_t w0, uint64_t w1, size_t n) {
  return text_hash_internal::Mum(w0 ^ text_hash_internal::kSeed ^ (uint64_t{n} * 0xD6E8FEB86659FD93ull),
                                 w1 ^ 0xC4CEB9FE1A85EC53ull);
}

// The bytes of a text of n <= 16 bytes as two words, the bytes past n zero,
// read whole from s, which must have 16 readable bytes.
inline void ShortTextWords(const uint8_t* s, size_t n, uint64_t* w0, uint64_t* w1) {
  using namespace text_hash_internal;
  *w0 = LoadWord(s) & kKeepFirst[n][0];
  *w1 = LoadWord(s + 8) & kKeepFirst[n][1];
}

// Any text, any length; `room` as for TextHash. Out of line: most tokens
// are short.
uint64_t LongTextHash(const uint8_t* s, size_t n, uint64_t room);

// The hash of the n bytes at s, whatever they hold (a NUL is a byte like
// any other). Reads whole words: a word may run past s + n, never past
// s + room; `room` >= n is how many bytes are readable from s.
//
// Most tokens are 16 bytes or shorter with 16 readable bytes from their
// start: two loads and masks, one well-predicted branch, no branch on the
// length (tokens shorter and longer than a word come in random order, and a
// branch on which, or a loop that runs 0, 1 or 2 times, mispredicts; in the
// parser's walk ternaries compiled to branches cost more than the walk).
inline uint64_t TextHash(const uint8_t* s, size_t n, uint64_t room) {
  if ((n <= 16) & (room >= 16)) {
    uint64_t w0, w1;
    ShortTextWords(s, n, &w0, &w1);
    return ShortTextHash(w0, w1, n);
  }
  return LongTextHash(s, n, room);
}

// A keyed 64-bit hash of any string, reading no byte outside it (keys may
// end the buffer they lie in). wyhash's shape: a string of up to 16 bytes
// is two overlapping loads and one multiply; longer ones a multiply per 16
// bytes. Keyed by `seed` so that no file can be built offline to make keys
// collide (a secret per process: ProcessHashSeed); tables that index a
// file's keys with it stay linear whatever the file.
inline uint64_t KeyedHash(std::string_view key, uint64_t seed) {
  using namespace text_hash_internal;
  const uint8_t* s = reinterpret_cast<const uint8_t*>(key.data());
  const size_t n = key.size();
  uint64_t a = 0, b = 0;
  if (n <= 16) {
    if (n >= 8) {
      a = LoadWord(s);
      b = LoadWord(s + n - 8);
    } else if (n >= 4) {
      uint32_t lo, hi;
      std::memcpy(&lo, s, 4);
      std::memcpy(&hi, s + n - 4, 4);
      a = (uint64_t{lo} << 32) | hi;
    } else if (n > 0) {
      a = (uint64_t{s[0]} << 16) | (uint64_t{s[n / 2]} << 8) | s[n - 1];
    }
    return Mum(a ^ seed ^ (uint64_t{n} * 0xD6E8FEB86659FD93ull), b ^ ~seed ^ 0xC4CEB9FE1A85EC53ull);
  }
  uint64_t h = seed ^ (uint64_t{n} * 0xD6E8FEB86659FD93ull);
  size_t i = 0;
  for (; i + 16 < n; i += 16) h = Mum(LoadWord(s + i) ^ h, LoadWord(s + i + 8) ^ ~seed);
  // The last 16 bytes, overlapping the block before when n is not a
  // multiple of 16.
  return Mum(LoadWord(s + n - 16) ^ h, LoadWord(s + n - 8) ^ ~seed ^ 0xC4CEB9FE1A85EC53ull);
}

// This process's secret for KeyedHash, from getrandom() once (one system
// call in a process, made by the first validation that indexes keys).
uint64_t ProcessHashSeed();

}  // namespace ggufguard

#endif  // GGUFGUARD_BASE_TEXT_HASH_H_
