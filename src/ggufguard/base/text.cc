#include "ggufguard/base/text.h"

#include <cstring>

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
  constexpr uint64_t kLow7 = 0x7F7F7F7F7F7F7F7Full;
  uint64_t zeros = 0;
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t w;
    std::memcpy(&w, data + i, 8);
    // High bit of each byte of t is set iff that byte of w is zero; exact,
    // with no carries between bytes.
    uint64_t t = ~(((w & kLow7) + kLow7) | w | kLow7);
    zeros += __builtin_popcountll(t);
  }
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
