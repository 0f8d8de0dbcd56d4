// The object model of a rendered chat template: which names and attributes
// reach Python objects beyond chat data. One place for the security
// knowledge of the analyser, as tables to read top to bottom:
//   - the globals Jinja2 and chat renderers define, and the free names only
//     escapes use;
//   - the attributes a str, number, list or dict literal has, and a dict's
//     methods (what attribute syntax finds before a key);
//   - the roots (objects beyond chat data) and the attributes of each that
//     are safe to read;
//   - attribute names only escapes use;
//   - what each filter returns from what input (kFilters); a filter not in
//     it is unknown (UnknownFilter in calls.cc, the one place for them).
// What a method returns is in calls.cc (Method).
#ifndef GGUFGUARD_TEMPLATE_OBJECT_MODEL_H_
#define GGUFGUARD_TEMPLATE_OBJECT_MODEL_H_

#include <algorithm>
#include <cstdint>
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

// What a filter returns, by what it does with its input. The interpreter
// (EvalFilter) switches on this and nothing else to choose how a filter's
// result is computed; the name then picks the string function.
enum class FilterResult : uint8_t {
  // The attribute its argument names: checked as a name, like `x[name]`.
  // The filter itself is GG8004 (a computed attribute walk).
  kAttribute,
  // The input's printed form (str, repr, JSON, escaped): the input's own
  // strings when they are exact, a template-made string for a root (an
  // object's repr), and for a container Python's spelling, whose letters
  // cut out and joined are template-made (can spell a name).
  kPrintedForm,
  // A string function, folded on exact strings (can spell a name:
  // '_CLASS_'|lower, '{}'|format('__'), ['__', 'class']|join); on anything
  // else a string derived from the input.
  kFoldedString,
  // A string derived from the input, never folded.
  kDerivedString,
  // A number from the input (exact for a literal's length).
  kNumber,
  // The input's members, picked or reordered (map with a filter name makes
  // new ones from them); a literal list's stay exact for unique and sort.
  kMembers,
  // The input's members in groups; their count is checked (GG8014).
  kGroups,
  // The input, or the argument when the input is undefined.
  kDefault,
  // Known to Jinja2 but not modelled: derived from the input, as an
  // unknown filter is.
  kDerived,
};

struct FilterRule {
  std::string_view name;
  FilterResult result;
};

// Jinja2's built-in filters and transformers' tojson, top to bottom.
inline constexpr FilterRule kFilters[] = {
    {"attr", FilterResult::kAttribute},
    {"string", FilterResult::kPrintedForm},
    {"tojson", FilterResult::kPrintedForm},
    {"pprint", FilterResult::kPrintedForm},
    {"e", FilterResult::kPrintedForm},
    {"escape", FilterResult::kPrintedForm},
    {"forceescape", FilterResult::kPrintedForm},
    {"safe", FilterResult::kPrintedForm},
    {"lower", FilterResult::kFoldedString},
    {"upper", FilterResult::kFoldedString},
    {"title", FilterResult::kFoldedString},
    {"capitalize", FilterResult::kFoldedString},
    {"trim", FilterResult::kFoldedString},
    {"reverse", FilterResult::kFoldedString},  // a literal list reversed stays exact
    {"replace", FilterResult::kFoldedString},
    {"center", FilterResult::kFoldedString},  // width checked (GG8014)
    {"indent", FilterResult::kFoldedString},  // width checked (GG8014), never folded
    {"format", FilterResult::kFoldedString},  // widths checked, fields folded
    {"join", FilterResult::kFoldedString},
    {"first", FilterResult::kFoldedString},   // a literal list's or string's first
    {"last", FilterResult::kFoldedString},
    {"list", FilterResult::kFoldedString},    // a string's characters
    {"wordwrap", FilterResult::kDerivedString},
    {"truncate", FilterResult::kDerivedString},
    {"length", FilterResult::kNumber},
    {"count", FilterResult::kNumber},
    {"wordcount", FilterResult::kNumber},
    {"int", FilterResult::kNumber},
    {"float", FilterResult::kNumber},
    {"abs", FilterResult::kNumber},
    {"round", FilterResult::kNumber},
    {"sum", FilterResult::kNumber},
    {"filesizeformat", FilterResult::kNumber},
    {"unique", FilterResult::kMembers},
    {"sort", FilterResult::kMembers},
    {"dictsort", FilterResult::kMembers},
    {"items", FilterResult::kMembers},
    {"map", FilterResult::kMembers},          // map('attr', name) is also GG8004
    {"select", FilterResult::kMembers},
    {"reject", FilterResult::kMembers},
    {"selectattr", FilterResult::kMembers},   // its attribute path is checked
    {"rejectattr", FilterResult::kMembers},
    {"groupby", FilterResult::kMembers},
    {"batch", FilterResult::kGroups},
    {"slice", FilterResult::kGroups},
    {"default", FilterResult::kDefault},
    {"d", FilterResult::kDefault},
    {"min", FilterResult::kDerived},
    {"max", FilterResult::kDerived},
    {"random", FilterResult::kDerived},
    {"striptags", FilterResult::kDerived},
    {"urlencode", FilterResult::kDerived},
    {"urlize", FilterResult::kDerived},
    {"xmlattr", FilterResult::kDerived},
};

// The row for filter `name`, or nullptr when Jinja2 has no such filter.
inline const FilterRule* FindFilter(std::string_view name) {
  for (const FilterRule& r : kFilters) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

// Is `attr` an attribute of root `root` (loop, cycler(), namespace()...) that
// gives chat data or a value the template made, not an object? Any other
// attribute of a root reaches into Python.
bool RootAllows(std::string_view root, std::string_view attr);

// `__x`, `__x__`: Python's special and private names (not `_` or `__`).
bool IsDunderLike(std::string_view s);

// Is `attr` one of a namespace's own attributes, the template's data? Jinja2's
// Namespace keeps them in a dict and its __getattribute__ answers every name
// from that dict but `_Namespace__attrs` (the dict itself) and `__class__`; a
// set of any name writes the dict (ns['_count'] = ...). So `ns._count` is the
// template's own value (Jinja2's sandbox still refuses to read it, as it
// refuses every `_` name), while dunders and the mangled `_Namespace__*`
// reach Python.
bool NamespaceOwnsAttribute(std::string_view attr);

}  // namespace ggufguard::jinja::analysis

#endif  // GGUFGUARD_TEMPLATE_OBJECT_MODEL_H_
