// The object model of a rendered chat template: which names and attributes
// reach Python objects beyond chat data. One place for the security
// knowledge of the analyser, as tables to read top to bottom:
//   - the globals Jinja2 and chat renderers define, and the free names only
//     escapes use;
//   - the attributes a str, number, list or dict literal has, and a dict's
//     methods (what attribute syntax finds before a key);
//   - the roots (objects beyond chat data) and the attributes of each that
//     are safe to read;
//   - attribute names only escapes use.
// What a filter or method returns is in calls.cc (EvalFilter, Method).
#ifndef GGUFGUARD_TEMPLATE_OBJECT_MODEL_H_
#define GGUFGUARD_TEMPLATE_OBJECT_MODEL_H_

#include <algorithm>
#include <iterator>
#include <string_view>

namespace ggufguard::jinja::analysis {

template <size_t N>
bool In(const std::string_view (&list)[N], std::string_view s) {
  return std::find(std::begin(list), std::end(list), s) != std::end(list);
}

// Jinja2's default globals and the callables chat renderers add.
inline constexpr std::string_view kGlobals[] = {"range",  "dict",      "lipsum",          "cycler",
                                                "joiner", "namespace", "raise_exception", "strftime_now"};
// Free names that only escapes need (Python, OS, Flask/Jinja internals).
inline constexpr std::string_view kDangerousNames[] = {
    "os",       "popen",   "eval",      "exec",     "subprocess", "system",   "import",   "open",
    "getattr",  "setattr", "delattr",   "compile",  "globals",    "locals",   "builtins", "request",
    "config",   "self",    "url_for",   "get_flashed_messages",   "breakpoint", "__builtins__", "g",
    "session",  "application"};

// Attribute names only escapes use (words like system or config are also
// fields of chat data, so only the free names above count for them).
inline constexpr std::string_view kDangerousAttributes[] = {
    "popen", "eval", "exec", "subprocess", "getattr", "setattr", "delattr", "compile", "builtins",
    "func_globals", "f_globals", "f_builtins", "f_back", "gi_frame", "cr_frame", "tb_frame", "breakpoint"};

// A dict's methods: what attribute syntax finds before a key of that name.
inline constexpr std::string_view kDictMethods[] = {"clear", "copy",    "fromkeys",   "get",    "items", "keys",
                                                    "pop",   "popitem", "setdefault", "update", "values"};

// The names a str, number, list or dict has as attributes (methods, a
// number's real and imag...): a literal read by any other name gives
// nothing (Jinja2's Undefined).
inline constexpr std::string_view kLiteralMembers[] = {
    "capitalize", "casefold", "center", "count", "encode", "endswith", "expandtabs", "find", "format",
    "format_map", "index", "isalnum", "isalpha", "isascii", "isdecimal", "isdigit", "isidentifier", "islower",
    "isnumeric", "isprintable", "isspace", "istitle", "isupper", "join", "ljust", "lower", "lstrip", "maketrans",
    "partition", "removeprefix", "removesuffix", "replace", "rfind", "rindex", "rjust", "rpartition", "rsplit",
    "rstrip", "split", "splitlines", "startswith", "strip", "swapcase", "title", "translate", "upper", "zfill",
    "append", "clear", "copy", "extend", "insert", "pop", "remove", "reverse", "sort", "fromkeys", "get",
    "items", "keys", "popitem", "setdefault", "update", "values", "real", "imag", "numerator", "denominator",
    "conjugate", "bit_length", "bit_count", "to_bytes", "from_bytes", "as_integer_ratio", "is_integer", "hex",
    "fromhex"};

// Is `attr` an attribute of root `root` (loop, cycler(), namespace()...) that
// gives chat data or a value the template made, not an object? Any other
// attribute of a root reaches into Python.
bool RootAllows(std::string_view root, std::string_view attr);

// `__x`, `__x__`: Python's special and private names (not `_` or `__`).
bool IsDunderLike(std::string_view s);

}  // namespace ggufguard::jinja::analysis

#endif  // GGUFGUARD_TEMPLATE_OBJECT_MODEL_H_
