#include "ggufguard/base/text.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "absl/strings/str_format.h"
#include "ggufguard/base/cpu.h"

namespace ggufguard {

size_t FindInvalidUtf8(std::string_view s) {
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    // ASCII fast path, eight bytes at a time.
    if (n - i >= 8) {
      uint64_t w;
      std::memcpy(&w, p + i, 8);
      if ((w & 0x8080808080808080ull) == 0) {
        i += 8;
        continue;
      }
    }
    if (p[i] < 0x80) {
      ++i;
      continue;
    }
    const size_t len = DecodeUtf8At(s, i).length;
    if (len == 0) return i;
    i += len;
  }
  return kValidUtf8;
}

void AppendUtf8(std::string* out, uint32_t cp) {
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

#if defined(__x86_64__)
namespace {

// Vectorised UTF-8 validation after Keiser and Lemire, "Validating UTF-8 in
// less than one instruction per byte" (2021), the algorithm of simdjson's
// "lookup4" validator, written here for AVX2 so that the CLI can be one static
// binary (Debian ships simdjson only as a shared library, and loading it and
// the libstdc++.so it needs cost ~1 ms per process; docs/performance.md).
//
// Every invalid sequence shows in a pair of adjacent bytes (prev1, cur), except
// a missing or surplus third or fourth byte, which needs prev2 and prev3.
// Three 16-entry tables, indexed by prev1's high nibble, prev1's low nibble
// and cur's high nibble, give a bit set per error kind each pair may be; the
// AND of the three is the set of errors the pair really is.
constexpr uint8_t kTooShort = 1 << 0;    // lead followed by a lead or ASCII
constexpr uint8_t kTooLong = 1 << 1;     // ASCII followed by a continuation
constexpr uint8_t kOverlong3 = 1 << 2;   // E0 80..9F
constexpr uint8_t kTooLarge = 1 << 3;    // F4 90..BF, F5..FF 90..BF
constexpr uint8_t kSurrogate = 1 << 4;   // ED A0..BF
constexpr uint8_t kOverlong2 = 1 << 5;   // C0..C1 any continuation
constexpr uint8_t kTooLarge1000 = 1 << 6;  // F5..FF 80..8F
constexpr uint8_t kOverlong4 = 1 << 6;   // F0 80..8F (same bit: told apart by prev1's low nibble)
constexpr uint8_t kTwoConts = 1 << 7;    // continuation after continuation
constexpr uint8_t kCarry = kTooShort | kTooLong | kTwoConts;  // errors that need only prev1's high nibble

__attribute__((target("avx2"))) __m256i Table(const uint8_t (&t)[16]) {
  const __m128i half = _mm_loadu_si128(reinterpret_cast<const __m128i*>(t));
  return _mm256_broadcastsi128_si256(half);
}

__attribute__((target("avx2"))) __m256i HighNibbles(__m256i v) {
  return _mm256_and_si256(_mm256_srli_epi16(v, 4), _mm256_set1_epi8(0x0F));
}

// The 32 bytes that end N bytes before the end of `cur`: (prev ++ cur) shifted.
template <int N>
__attribute__((target("avx2"))) __m256i Previous(__m256i cur, __m256i prev) {
  return _mm256_alignr_epi8(cur, _mm256_permute2x128_si256(prev, cur, 0x21), 16 - N);
}

struct Utf8Tables {
  __m256i byte1_high, byte1_low, byte2_high;
};

__attribute__((target("avx2"))) Utf8Tables MakeTables() {
  static constexpr uint8_t kByte1High[16] = {
      // 0xxx: ASCII
      kTooLong, kTooLong, kTooLong, kTooLong, kTooLong, kTooLong, kTooLong, kTooLong,
      // 10xx: continuation
      kTwoConts, kTwoConts, kTwoConts, kTwoConts,
      // 1100: C0..CF, 1101: D0..DF
      kTooShort | kOverlong2, kTooShort,
      // 1110: three-byte lead
      kTooShort | kOverlong3 | kSurrogate,
      // 1111: four-byte lead or worse
      kTooShort | kTooLarge | kTooLarge1000 | kOverlong4};
  static constexpr uint8_t kByte1Low[16] = {
      kCarry | kOverlong3 | kOverlong2 | kOverlong4,  // x0: E0, C0, F0
      kCarry | kOverlong2,                            // x1: C1
      kCarry, kCarry,                                 // x2, x3
      kCarry | kTooLarge,                             // x4: F4
      kCarry | kTooLarge | kTooLarge1000,             // x5..x7: F5..F7
      kCarry | kTooLarge | kTooLarge1000,
      kCarry | kTooLarge | kTooLarge1000,
      kCarry | kTooLarge | kTooLarge1000,             // x8..xC: F8..FC
      kCarry | kTooLarge | kTooLarge1000,
      kCarry | kTooLarge | kTooLarge1000,
      kCarry | kTooLarge | kTooLarge1000,
      kCarry | kTooLarge | kTooLarge1000,
      kCarry | kTooLarge | kTooLarge1000 | kSurrogate,  // xD: ED, FD
      kCarry | kTooLarge | kTooLarge1000,             // xE, xF
      kCarry | kTooLarge | kTooLarge1000};
  static constexpr uint8_t kByte2High[16] = {
      // 0xxx: ASCII after byte 1
      kTooShort, kTooShort, kTooShort, kTooShort, kTooShort, kTooShort, kTooShort, kTooShort,
      // 1000: 80..8F
      kTooLong | kOverlong2 | kTwoConts | kOverlong3 | kTooLarge1000 | kOverlong4,
      // 1001: 90..9F
      kTooLong | kOverlong2 | kTwoConts | kOverlong3 | kTooLarge,
      // 101x: A0..BF
      kTooLong | kOverlong2 | kTwoConts | kSurrogate | kTooLarge,
      kTooLong | kOverlong2 | kTwoConts | kSurrogate | kTooLarge,
      // 11xx: a lead after byte 1
      kTooShort, kTooShort, kTooShort, kTooShort};
  return {Table(kByte1High), Table(kByte1Low), Table(kByte2High)};
}

// Nonzero bytes where the 32 bytes of `cur` (preceded by `prev`) hold an error.
__attribute__((target("avx2"))) __m256i BlockErrors(const Utf8Tables& t, __m256i cur, __m256i prev) {
  const __m256i prev1 = Previous<1>(cur, prev);
  const __m256i low_nibble = _mm256_set1_epi8(0x0F);
  const __m256i pair_errors =
      _mm256_and_si256(_mm256_and_si256(_mm256_shuffle_epi8(t.byte1_high, HighNibbles(prev1)),
                                        _mm256_shuffle_epi8(t.byte1_low, _mm256_and_si256(prev1, low_nibble))),
                       _mm256_shuffle_epi8(t.byte2_high, HighNibbles(cur)));
  // A continuation after a continuation is right exactly where it is the
  // third byte of a 3- or 4-byte sequence or the fourth of a 4-byte one:
  // prev2 >= E0 or prev3 >= F0. The saturating subtractions leave the top bit
  // set exactly there; XOR with kTwoConts (the top bit) clears the expected
  // ones and flags a missing one.
  const __m256i third = _mm256_subs_epu8(Previous<2>(cur, prev), _mm256_set1_epi8(static_cast<char>(0xE0 - 0x80)));
  const __m256i fourth = _mm256_subs_epu8(Previous<3>(cur, prev), _mm256_set1_epi8(static_cast<char>(0xF0 - 0x80)));
  const __m256i must_continue =
      _mm256_and_si256(_mm256_or_si256(third, fourth), _mm256_set1_epi8(static_cast<char>(0x80)));
  return _mm256_xor_si256(must_continue, pair_errors);
}

// Adds the per-byte counts of `lanes` (each at most 255) to four 64-bit sums.
__attribute__((target("avx2"))) __m256i FoldCounts(__m256i sums, __m256i lanes) {
  return _mm256_add_epi64(sums, _mm256_sad_epu8(lanes, _mm256_setzero_si256()));
}

// Steps of 64 bytes (two blocks) go in pages of kStepsPerPage. A page's zero
// counts are folded into 64-bit sums at its end, so a byte lane counts at
// most 2 * kStepsPerPage blocks and never passes 255.
constexpr size_t kStepsPerPage = 16;

// UTF-8 validity and the zero-byte count in one pass: the string arrays these
// scan are megabytes, and a second pass would read them from memory again.
//
// An all-ASCII step needs no error computation, only a check that the step
// before it did not end inside a sequence. But taking that shortcut is a
// branch per step, and a vocabulary mixes ASCII and non-ASCII steps at
// random (a third of the benchmark header's steps are ASCII): the branch
// then mispredicts often, and costs more than it saves. So the shortcut
// branch is taken only on a page that follows an all-ASCII page (English
// text, WordPiece vocabularies); every other page runs without a branch per
// step. The choice changes only where the text changes character, so it is
// predicted. Two blocks a step: two independent error computations in
// flight. (With a branch per step, validate_bench's text_scan/header took
// 78 us on the 1x header and 542 on 4x: scanned over and over, the 1x
// header's ~28,000 outcomes are learnt by the branch predictor, 4x's are
// not. Now 103 and 417 us; docs/performance.md, "Linear in the header".)
__attribute__((target("avx2"))) TextScan ScanTextAvx2(const uint8_t* data, size_t size) {
  const Utf8Tables tables = MakeTables();
  const __m256i zero = _mm256_setzero_si256();
  // Bytes above these in the last three places of a block start a sequence
  // that needs more bytes than the block has: C0.. last, E0.. second to
  // last, F0.. third to last.
  const __m256i open_limits = _mm256_setr_epi8(
      -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
      -1, -1, static_cast<char>(0xEF), static_cast<char>(0xDF), static_cast<char>(0xBF));
  __m256i prev = zero;
  __m256i errors = zero;
  // Zero bytes: a compare gives 0xFF per zero byte, subtracting it adds one
  // to that byte's lane.
  __m256i zero_lanes = zero, zero_sums = zero;
  bool after_ascii_page = true;
  size_t i = 0;
  while (size - i >= 64) {
    const size_t page_end = i + std::min<size_t>((size - i) / 64, kStepsPerPage) * 64;
    __m256i seen = zero;  // every byte of the page ORed: ASCII when its top bits are clear
    if (after_ascii_page) {
      for (; i < page_end; i += 64) {
        const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + i));
        const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + i + 32));
        zero_lanes = _mm256_sub_epi8(zero_lanes, _mm256_cmpeq_epi8(a, zero));
        zero_lanes = _mm256_sub_epi8(zero_lanes, _mm256_cmpeq_epi8(b, zero));
        const __m256i both = _mm256_or_si256(a, b);
        seen = _mm256_or_si256(seen, both);
        if (_mm256_movemask_epi8(both) == 0) {
          // ASCII holds no error of its own; it is one only if the previous
          // block left a sequence open (BlockErrors would find exactly that,
          // at more cost).
          errors = _mm256_or_si256(errors, _mm256_subs_epu8(prev, open_limits));
        } else {
          errors = _mm256_or_si256(errors, BlockErrors(tables, a, prev));
          errors = _mm256_or_si256(errors, BlockErrors(tables, b, a));
        }
        prev = b;
      }
    } else {
      for (; i < page_end; i += 64) {
        const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + i));
        const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + i + 32));
        zero_lanes = _mm256_sub_epi8(zero_lanes, _mm256_cmpeq_epi8(a, zero));
        zero_lanes = _mm256_sub_epi8(zero_lanes, _mm256_cmpeq_epi8(b, zero));
        seen = _mm256_or_si256(seen, _mm256_or_si256(a, b));
        errors = _mm256_or_si256(errors, BlockErrors(tables, a, prev));
        errors = _mm256_or_si256(errors, BlockErrors(tables, b, a));
        prev = b;
      }
    }
    zero_sums = FoldCounts(zero_sums, zero_lanes);
    zero_lanes = zero;
    after_ascii_page = _mm256_movemask_epi8(seen) == 0;
  }
  if (size - i >= 32) {  // one block left before the tail
    const __m256i cur = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + i));
    zero_lanes = _mm256_sub_epi8(zero_lanes, _mm256_cmpeq_epi8(cur, zero));
    errors = _mm256_or_si256(errors, BlockErrors(tables, cur, prev));
    prev = cur;
    i += 32;
  }
  // The tail, zero-padded: at least one padding byte (ASCII) follows the
  // last real byte, so a sequence cut by the end of the buffer is an error
  // like any sequence cut by ASCII. With no tail, the block is all padding.
  alignas(32) uint8_t tail[32] = {};
  if (size > i) std::memcpy(tail, data + i, size - i);  // data may be null when size is 0
  const __m256i cur = _mm256_load_si256(reinterpret_cast<const __m256i*>(tail));
  errors = _mm256_or_si256(errors, BlockErrors(tables, cur, prev));
  zero_sums = FoldCounts(zero_sums, _mm256_sub_epi8(zero_lanes, _mm256_cmpeq_epi8(cur, zero)));
  alignas(32) uint64_t sums[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(sums), zero_sums);
  const uint64_t padding = 32 - (size - i);  // the tail's zero padding, counted above
  return TextScan{_mm256_testz_si256(errors, errors) != 0, sums[0] + sums[1] + sums[2] + sums[3] - padding};
}

}  // namespace
#endif

TextScan ScanTextBulk(const uint8_t* data, size_t size) {
#if defined(__x86_64__)
  if (CpuHasAvx2()) return ScanTextAvx2(data, size);
#endif
  return TextScan{FindInvalidUtf8(std::string_view(reinterpret_cast<const char*>(data), size)) == kValidUtf8,
                  CountZeroBytes(data, size)};
}

uint64_t CountZeroBytes(const uint8_t* data, size_t size) {
  uint64_t zeros = 0;
  size_t i = 0;
#if defined(__SSE2__)
  // SSE2 is part of every x86-64 target. A compare gives 0xFF for each zero
  // byte; subtracting it adds one to that byte lane. Four accumulators, so
  // that 64 bytes a step are not serialised on one register; lanes are
  // folded into 64-bit sums (psadbw) at least every 255 steps, before a lane
  // can wrap. (The earlier eight-bytes-at-a-time popcount compiled to a libgcc
  // call per word without -mpopcnt and cost more than the UTF-8 validation.)
  const __m128i zero = _mm_setzero_si128();
  auto load = [&](size_t at) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + at)); };
  auto fold = [&](__m128i lanes) {
    __m128i sums = _mm_sad_epu8(lanes, zero);
    return static_cast<uint64_t>(_mm_cvtsi128_si64(sums)) +
           static_cast<uint64_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums)));
  };
  while (size - i >= 64) {
    const size_t steps = std::min<size_t>((size - i) / 64, 255);
    __m128i l0 = zero, l1 = zero, l2 = zero, l3 = zero;
    for (size_t k = 0; k < steps; ++k, i += 64) {
      l0 = _mm_sub_epi8(l0, _mm_cmpeq_epi8(load(i), zero));
      l1 = _mm_sub_epi8(l1, _mm_cmpeq_epi8(load(i + 16), zero));
      l2 = _mm_sub_epi8(l2, _mm_cmpeq_epi8(load(i + 32), zero));
      l3 = _mm_sub_epi8(l3, _mm_cmpeq_epi8(load(i + 48), zero));
    }
    zeros += fold(l0) + fold(l1) + fold(l2) + fold(l3);
  }
  __m128i lanes = zero;  // at most three more 16-byte steps
  for (; size - i >= 16; i += 16) lanes = _mm_sub_epi8(lanes, _mm_cmpeq_epi8(load(i), zero));
  zeros += fold(lanes);
#endif
  // The tail, or the whole buffer elsewhere (compilers vectorise this loop).
  for (; i < size; ++i) zeros += (data[i] == 0);
  return zeros;
}

std::string EscapeForDisplay(std::string_view s, size_t max_bytes) {
  // A name that is too long keeps its start and its end: tensor and key
  // names that share a long prefix (blk.12.ffn_..., a padded attack name)
  // differ at the end, and two of them must not read alike in a message.
  const bool cut = s.size() > max_bytes;
  const size_t tail = cut ? max_bytes / 4 : 0;
  const size_t head = cut ? max_bytes - tail : s.size();
  std::string out;
  out.reserve(head + tail + 8);
  auto append = [&out](std::string_view part) {
    for (char ch : part) {
      auto c = static_cast<uint8_t>(ch);
      if (c >= 0x20 && c < 0x7F && c != '\\' && c != '\'' && c != '"') {
        out.push_back(static_cast<char>(c));
      } else {
        absl::StrAppendFormat(&out, "\\x%02x", c);
      }
    }
  };
  append(s.substr(0, head));
  if (cut) {
    out += "...";
    append(s.substr(s.size() - tail));
  }
  return out;
}

}  // namespace ggufguard
