// Byte-level text checks used by the rules: UTF-8 validity and byte counts.
#ifndef GGUFGUARD_BASE_TEXT_H_
#define GGUFGUARD_BASE_TEXT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ggufguard {

inline constexpr size_t kValidUtf8 = static_cast<size_t>(-1);

// One UTF-8 sequence: its code point and its length in bytes, or length 0
// where the bytes at that index are no valid sequence.
struct Utf8Sequence {
  uint32_t code_point = 0;
  size_t length = 0;
};

// The one UTF-8 decoder (the rules, the template scan and the template
// lexer all use it): the sequence starting at s[i], i < s.size(), in strict
// UTF-8 (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF, no
// truncated sequence, no stray continuation byte).
inline Utf8Sequence DecodeUtf8At(std::string_view s, size_t i) {
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  const size_t n = s.size();
  const uint8_t b = p[i];
  if (b < 0x80) return {b, 1};
  size_t len;
  uint32_t cp;
  if (b >= 0xC2 && b <= 0xDF) {
    len = 2, cp = b & 0x1F;
  } else if (b >= 0xE0 && b <= 0xEF) {
    len = 3, cp = b & 0x0F;
  } else if (b >= 0xF0 && b <= 0xF4) {
    len = 4, cp = b & 0x07;
  } else {
    return {};  // continuation byte, overlong lead C0/C1, or F5..FF
  }
  if (n - i < len) return {};
  for (size_t k = 1; k < len; ++k) {
    if ((p[i + k] & 0xC0) != 0x80) return {};
    cp = (cp << 6) | (p[i + k] & 0x3F);
  }
  if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    return {};
  }
  return {cp, len};
}

// Appends code point `cp` as UTF-8; a surrogate or a value above U+10FFFF
// becomes U+FFFD, as Python's encoder with errors="replace" writes it.
void AppendUtf8(std::string* out, uint32_t cp);

// Strict UTF-8 (RFC 3629: no overlongs, no surrogates, nothing above
// U+10FFFF). Returns the index of the first byte of the first invalid
// sequence, or kValidUtf8. Scalar, with an ASCII fast path; for the short
// strings of keys and names.
size_t FindInvalidUtf8(std::string_view s);
inline bool IsValidUtf8(std::string_view s) { return FindInvalidUtf8(s) == kValidUtf8; }

// One pass over a large buffer (a whole string array): whether it is valid
// UTF-8 (IsValidUtf8's verdict, no position) and how many of its bytes are
// 0x00 (CountZeroBytes's count). AVX2 where the CPU has it; elsewhere the two
// scalar/SSE2 functions.
struct TextScan {
  bool valid_utf8 = false;
  uint64_t zero_bytes = 0;
};
TextScan ScanTextBulk(const uint8_t* data, size_t size);

// Number of 0x00 bytes in [data, data+size); vectorised (SSE2 on x86-64).
uint64_t CountZeroBytes(const uint8_t* data, size_t size);

// Printable ASCII rendering for messages and text output: control bytes,
// quotes, backslashes and non-ASCII bytes escaped as \xNN. A longer string
// shows `max_bytes` of its bytes: the first three quarters, "...", and the
// last quarter, so that names sharing a long prefix stay apart.
std::string EscapeForDisplay(std::string_view s, size_t max_bytes = 64);
// A string as C code sees it (gguf_get_val_str and friends hand out
// const char*): cut at the first NUL.
inline std::string_view CString(std::string_view s) { return s.substr(0, s.find('\0')); }

// Paths are printed escaped up to PATH_MAX bytes.
inline constexpr size_t kMaxPathBytes = 4096;

}  // namespace ggufguard

#endif  // GGUFGUARD_BASE_TEXT_H_
