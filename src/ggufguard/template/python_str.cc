// Python's str methods on exact strings. See python_str.h.
#include "ggufguard/template/python_str.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ggufguard::jinja::analysis {

std::string Pad(std::string_view s, size_t width, char fill, char align) {
  if (width <= s.size()) return std::string(s);
  const size_t pad = width - s.size();
  size_t left = 0;
  if (align == '>') left = pad;
  if (align == '^') left = pad / 2 + (pad & width & 1);
  return std::string(left, fill) + std::string(s) + std::string(pad - left, fill);
}

std::string ToLower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}
std::string ToUpper(std::string s) {
  for (char& c : s) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return s;
}
std::string Title(std::string s) {
  bool start = true;
  for (char& c : s) {
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (alpha) {
      c = start ? ToUpper(std::string(1, c))[0] : ToLower(std::string(1, c))[0];
      start = false;
    } else {
      start = true;
    }
  }
  return s;
}
std::string Capitalize(std::string s) {
  s = ToLower(std::move(s));
  if (!s.empty()) s[0] = ToUpper(std::string(1, s[0]))[0];
  return s;
}
std::string Strip(std::string_view s, std::string_view chars, bool left, bool right) {
  if (chars.empty()) chars = " \t\n\r\v\f";
  size_t b = 0, e = s.size();
  if (left) {
    while (b < e && chars.find(s[b]) != std::string_view::npos) ++b;
  }
  if (right) {
    while (e > b && chars.find(s[e - 1]) != std::string_view::npos) --e;
  }
  return std::string(s.substr(b, e - b));
}
std::string Replace(std::string_view s, std::string_view from, std::string_view to, long long count,
                    size_t max_bytes) {
  std::string out;
  if (from.empty()) {  // Python inserts `to` between every character
    // With a count, the characters past the last insertion stay as they are:
    // 'abc'.replace('', '-', 2) is '-a-bc'.
    size_t i = 0;
    for (; i <= s.size() && count != 0; ++i, --count) {
      out += to;
      if (i < s.size()) out += s[i];
      if (out.size() > max_bytes) return out;
    }
    if (i < s.size()) out.append(s.substr(i));
    return out;
  }
  size_t pos = 0;
  for (;;) {
    const size_t hit = count == 0 ? std::string_view::npos : s.find(from, pos);
    if (hit == std::string_view::npos) break;
    out.append(s.substr(pos, hit - pos));
    out.append(to);
    pos = hit + from.size();
    if (count > 0) --count;
    if (out.size() > max_bytes) break;
  }
  out.append(s.substr(pos));
  return out;
}

std::string Slice(std::string_view s, std::optional<long long> start, std::optional<long long> stop,
                  std::optional<long long> step) {
  const long long n = static_cast<long long>(s.size());
  long long st = step.value_or(1);
  if (st == 0) st = 1;
  auto norm = [&](std::optional<long long> v, long long dflt) {
    if (!v) return dflt;
    long long i = *v;
    if (i < 0) i += n;
    if (st > 0) return std::clamp(i, 0LL, n);
    return std::clamp(i, -1LL, n - 1);
  };
  long long b = norm(start, st > 0 ? 0 : n - 1);
  long long e = norm(stop, st > 0 ? n : -1);
  std::string out;
  if (st > 0) {
    for (long long i = b; i < e; i += st) out += s[static_cast<size_t>(i)];
  } else {
    for (long long i = b; i > e; i += st) out += s[static_cast<size_t>(i)];
  }
  return out;
}

std::string SwapCase(std::string s) {
  for (char& c : s) {
    if (c >= 'a' && c <= 'z') {
      c = static_cast<char>(c - 'a' + 'A');
    } else if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return s;
}

std::string JoinItems(const std::vector<std::string>& items, std::string_view sep, size_t max_bytes) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
    if (out.size() > max_bytes) break;
  }
  return out;
}

std::string Reverse(std::string_view s) { return std::string(s.rbegin(), s.rend()); }

}  // namespace ggufguard::jinja::analysis
