// Python's str methods, as CPython computes them, on the exact strings the
// analyser folds (`'XXclassXX'|replace('X', '_')`, `'globals'.center(11,
// '_')`): a name a template builds from literals is checked as the name it
// renders to. Bytes, not code points: the names that matter are ASCII, and
// the case functions change ASCII letters only (a non-ASCII letter stays as
// it is, which can only keep a name from matching a dangerous one that is
// ASCII anyway). tests/template_python_str_test.cc checks each against
// CPython (/usr/bin/python3).
#ifndef GGUFGUARD_TEMPLATE_PYTHON_STR_H_
#define GGUFGUARD_TEMPLATE_PYTHON_STR_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ggufguard::jinja::analysis {

// str.center (align '^'), str.ljust ('<'), str.rjust ('>'); str.zfill is
// rjust with '0' for the strings without a sign that names are made of.
std::string Pad(std::string_view s, size_t width, char fill, char align);
std::string ToLower(std::string s);     // str.lower
std::string ToUpper(std::string s);     // str.upper
std::string Title(std::string s);       // str.title
std::string Capitalize(std::string s);  // str.capitalize
std::string SwapCase(std::string s);    // str.swapcase
// str.strip / lstrip / rstrip; empty `chars`: whitespace.
std::string Strip(std::string_view s, std::string_view chars, bool left, bool right);
// str.replace(from, to, count) (count < 0: all). Stops once the result is
// longer than `max_bytes`: the caller discards such a result.
std::string Replace(std::string_view s, std::string_view from, std::string_view to, long long count,
                    size_t max_bytes);
// s[start:stop:step]; nullopt for an index left out (or not known). A step
// of 0 (ValueError in Python) reads as 1.
std::string Slice(std::string_view s, std::optional<long long> start, std::optional<long long> stop,
                  std::optional<long long> step);
// sep.join(items), stopping once longer than `max_bytes`.
std::string JoinItems(const std::vector<std::string>& items, std::string_view sep, size_t max_bytes);
// s[::-1] (Jinja2's |reverse on a string).
std::string Reverse(std::string_view s);

}  // namespace ggufguard::jinja::analysis

#endif  // GGUFGUARD_TEMPLATE_PYTHON_STR_H_
