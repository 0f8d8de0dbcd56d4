// Byte-level text checks used by the rules: UTF-8 validity and byte counts.
#ifndef GGUFGUARD_BASE_TEXT_H_
#define GGUFGUARD_BASE_TEXT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ggufguard {

inline constexpr size_t kValidUtf8 = static_cast<size_t>(-1);

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

}  // namespace ggufguard

#endif  // GGUFGUARD_BASE_TEXT_H_
