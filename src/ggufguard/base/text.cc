#include "ggufguard/base/text.h"

#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "absl/strings/str_format.h"
#include "simdjson.h"

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
    uint8_t b = p[i];
    if (b < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp;
    if (b >= 0xC2 && b <= 0xDF) {
      len = 2;
      cp = b & 0x1F;
    } else if (b >= 0xE0 && b <= 0xEF) {
      len = 3;
      cp = b & 0x0F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      len = 4;
      cp = b & 0x07;
    } else {
      return i;  // continuation byte, overlong lead C0/C1, or F5..FF
    }
    if (n - i < len) return i;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
      return i;
    }
    i += len;
  }
  return kValidUtf8;
}

bool IsValidUtf8Bulk(const uint8_t* data, size_t size) {
  return simdjson::validate_utf8(reinterpret_cast<const char*>(data), size);
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
  std::string out;
  size_t n = s.size() < max_bytes ? s.size() : max_bytes;
  out.reserve(n + 8);
  for (size_t i = 0; i < n; ++i) {
    auto c = static_cast<uint8_t>(s[i]);
    if (c >= 0x20 && c < 0x7F && c != '\\' && c != '\'' && c != '"') {
      out.push_back(static_cast<char>(c));
    } else {
      absl::StrAppendFormat(&out, "\\x%02x", c);
    }
  }
  if (s.size() > n) out += "...";
  return out;
}

}  // namespace ggufguard
