// Small std::string_view helpers for the remote code (Debian's Abseil has
// its own string_view type, which std::string_view does not convert to).
#ifndef GGUFGUARD_REMOTE_TEXT_UTIL_H_
#define GGUFGUARD_REMOTE_TEXT_UTIL_H_

#include <charconv>
#include <cstdint>
#include <string_view>
#include <vector>

namespace ggufguard::remote_text {

inline char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

inline bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}

inline bool StartsWithIgnoreCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && EqualsIgnoreCase(s.substr(0, prefix.size()), prefix);
}

inline std::string_view Strip(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r' || s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

// Splits at `sep` into at most `max_parts` parts (the last keeps the rest).
inline std::vector<std::string_view> Split(std::string_view s, char sep, size_t max_parts = SIZE_MAX) {
  std::vector<std::string_view> out;
  while (out.size() + 1 < max_parts) {
    const size_t at = s.find(sep);
    if (at == std::string_view::npos) break;
    out.push_back(s.substr(0, at));
    s.remove_prefix(at + 1);
  }
  out.push_back(s);
  return out;
}

// Decimal digits only (no sign, no space), at most 20 of them, no overflow.
inline bool ParseU64(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

}  // namespace ggufguard::remote_text

#endif  // GGUFGUARD_REMOTE_TEXT_UTIL_H_
