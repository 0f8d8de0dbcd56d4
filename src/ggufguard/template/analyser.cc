// Abstract interpretation of a Jinja2 template. See analyser.h and scan.h.
//
// A Value describes what an expression may be at render time: a few exact
// strings or one exact number (when the template computes them from
// literals), or an unknown value whose origin says how far to trust it:
//   kData      chat data from the request (messages, tools, their fields), or
//              harmless computation on it;
//   kComputed  built by the template in a way not followed here (a global's
//              repr, a list mutated in a loop, a macro's output);
//   kRoot      may be a Python object beyond chat data (lipsum, cycler,
//              raise_exception, loop, a macro, self...), named by `root`.
// An unknown value may still be, or hold, something the template spelled (a
// literal joined with the request's, a literal container): its literal
// strings are kept for the name checks, and computing on it is template-made.
// A name used for an attribute or subscript is flagged when one of its exact
// strings is a dunder or private name, when it is unknown and not chat data,
// or when it is unknown and the object is a root.
#include "ggufguard/template/analyser.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/text.h"

namespace ggufguard::jinja {
namespace {

using Kind = TemplateIssueKind;

constexpr size_t kMaxStrings = 8;         // exact candidates a value keeps
constexpr size_t kMaxStringBytes = 1024;  // longest exact string kept
constexpr size_t kMaxListed = 32;         // roots and folded names reported
constexpr size_t kMaxExprChars = 80;      // expression text in a finding
constexpr int kMacroRounds = 3;           // re-analyses with call-site arguments
constexpr size_t kMaxFields = 16;         // keys of a dict literal followed one by one
constexpr int kLoopPasses = 3;            // passes over a loop body before what still changes widens

enum Mask : uint8_t { kStr = 1, kNum = 2, kOther = 4, kAny = 7 };
enum class Origin : uint8_t { kData = 0, kComputed = 1, kRoot = 2 };

struct Field;

struct Value {
  uint8_t mask = kAny;
  bool exact = false;             // strs (or number) are all it can be
  std::vector<std::string> strs;  // exact strings
  double number = 0;              // exact && mask != kStr: the number (bools: 0/1)
  Origin origin = Origin::kData;
  std::string root;               // origin == kRoot
  std::string ns_slot;            // root "namespace()": the variable it was made as, if one
  bool built = false;             // strs were computed, not one literal
  double size = 0;                // known length: string bytes or list items
  bool items_exact = false;       // a list/tuple/dict whose elements/keys are `items`
  bool items_numbers = false;     // ... and they are numbers (range)
  std::vector<std::string> items;
  // Not items_exact, but some elements are known: strings that one of the
  // values joined into this one holds (`{% if x %}{% set l = ['a'] %}{% endif
  // %}`, `['__class__'] if x else y`), or that a nested container or a dict
  // value under a computed key holds. Iterating or reading gives them among
  // the rest.
  std::vector<std::string> maybe_items;
  // Inexact, but may be, or hold, a literal beyond those in strs and
  // maybe_items (a number: '%c' % (x or 95) is '_'). See Spelled().
  bool spelled = false;
  // A dict literal's values by key, so that reading one key by its name
  // gives that key's value, not the worst of the dict's: `{'role': 'tool',
  // 'content': render(m)}.role` is a literal, not a macro's output. Kept
  // through joins (a key one side lacks reads as that side reads it); a key
  // not among them reads as `rest` reads it (nothing, for dict literals
  // alone).
  bool keyed = false;
  std::vector<Field> fields;  // keyed: at most kMaxFields, none keyed itself
  std::vector<Value> rest;    // keyed: none, or the join of the values no dict literal
  NodeId macro = kNoNode;         // a reference to this {% macro %}
  bool reached = false;           // reached into a root already (reported once per chain)
};

struct Field {
  std::string key;
  Value value;
};

Value Data(uint8_t mask = kAny) {
  Value v;
  v.mask = mask;
  return v;
}
Value Computed(uint8_t mask = kAny) {
  Value v;
  v.mask = mask;
  v.origin = Origin::kComputed;
  return v;
}
Value RootValue(std::string name) {
  Value v;
  v.mask = kOther;
  v.origin = Origin::kRoot;
  v.root = std::move(name);
  return v;
}
Value Str(std::string s, bool built) {
  Value v;
  v.mask = kStr;
  v.size = static_cast<double>(s.size());
  v.built = built;
  if (s.size() <= kMaxStringBytes) {
    v.exact = true;
    v.strs.push_back(std::move(s));
  } else {
    v.origin = Origin::kComputed;
  }
  return v;
}
Value Num(double n) {
  Value v;
  v.mask = kNum;
  v.exact = true;
  v.number = n;
  return v;
}
Value Bool(int truth) {  // -1 unknown
  Value v;
  v.mask = kOther;
  if (truth >= 0) {
    v.exact = true;
    v.number = truth;
  }
  return v;
}

bool IsExactStr(const Value& v) { return v.exact && v.mask == kStr; }
bool IsExactNum(const Value& v) { return v.exact && v.mask == kNum; }
bool IsExactInt(const Value& v) { return IsExactNum(v) && std::floor(v.number) == v.number && std::fabs(v.number) < 9e15; }

// The worse of two origins (root over computed over data).
void MergeOrigin(Value* into, const Value& from) {
  if (from.origin > into->origin) {
    into->origin = from.origin;
    if (from.origin == Origin::kRoot) into->root = from.root;
  }
}

// May `v` be, or hold, a string or number the template spelled? Exact
// values, values joined with a literal (`x if x else 'Any'`), containers
// holding literals. (None and booleans print as letters no name is made of.)
bool Spelled(const Value& v) {
  return (v.exact && v.mask != kOther) || v.spelled || !v.strs.empty() || !v.items.empty() ||
         !v.maybe_items.empty() || !v.fields.empty();
}

// Unknown result of an operation on `a` (and `b`): template literals make
// template-made (computed) values, chat data stays data, roots stay roots.
// A value that may be a literal counts as one: slicing, formatting or
// joining it may build a name from the literal's pieces.
Value Derived(const Value& a, uint8_t mask = kAny) {
  // A number made from literals (a counter: `state.i + 1`) names nothing;
  // only formatting it (%c) can make a name, so it stays spelled for that.
  if (mask == kNum && a.origin == Origin::kData) {
    Value v = Data(kNum);
    v.spelled = Spelled(a) || a.items_exact;
    return v;
  }
  Value v = Spelled(a) || a.items_exact ? Computed(mask) : Data(mask);
  if (a.origin != Origin::kData) MergeOrigin(&v, a);
  return v;
}
// Of two operands, the known one adds nothing: i + 1 with i from the
// request is the request's. Only when both are known (and not folded) is
// the result template-made.
Value Derived2(const Value& a, const Value& b, uint8_t mask = kAny) {
  const bool a_known = a.exact || a.items_exact, b_known = b.exact || b.items_exact;
  if (a_known && !b_known) return Derived2(Data(), b, mask);
  if (b_known && !a_known) return Derived2(a, Data(), mask);
  Value v = Derived(a, mask);
  Value w = Derived(b, mask);
  MergeOrigin(&v, w);
  return v;
}

// Adds to `into` each of `from` it lacks, up to `bound` strings; false when
// some did not fit (the caller then treats the value as template-made).
bool AddStrings(std::vector<std::string>* into, const std::vector<std::string>& from, size_t bound) {
  for (const std::string& s : from) {
    if (std::find(into->begin(), into->end(), s) != into->end()) continue;
    if (into->size() >= bound) return false;
    into->push_back(s);
  }
  return true;
}

// `e`, which may also be any of `strs` (a list's possible items): the
// strings are kept for the name checks, e's origin stands.
Value WithPossibleStrs(Value e, const std::vector<std::string>& strs) {
  if (strs.empty()) return e;
  e.exact = false;
  e.mask |= kStr;
  if (!AddStrings(&e.strs, strs, kMaxStrings)) MergeOrigin(&e, Computed());  // too many to follow
  return e;
}

template <size_t N>
bool In(const std::string_view (&list)[N], std::string_view s) {
  return std::find(std::begin(list), std::end(list), s) != std::end(list);
}

// The names a str, number, list or dict has as attributes (methods, a
// number's real and imag...): a literal read by any other name gives
// nothing (Jinja2's Undefined).
constexpr std::string_view kLiteralMembers[] = {
    "capitalize", "casefold", "center", "count", "encode", "endswith", "expandtabs", "find", "format",
    "format_map", "index", "isalnum", "isalpha", "isascii", "isdecimal", "isdigit", "isidentifier", "islower",
    "isnumeric", "isprintable", "isspace", "istitle", "isupper", "join", "ljust", "lower", "lstrip", "maketrans",
    "partition", "removeprefix", "removesuffix", "replace", "rfind", "rindex", "rjust", "rpartition", "rsplit",
    "rstrip", "split", "splitlines", "startswith", "strip", "swapcase", "title", "translate", "upper", "zfill",
    "append", "clear", "copy", "extend", "insert", "pop", "remove", "reverse", "sort", "fromkeys", "get",
    "items", "keys", "popitem", "setdefault", "update", "values", "real", "imag", "numerator", "denominator",
    "conjugate", "bit_length", "bit_count", "to_bytes", "from_bytes", "as_integer_ratio", "is_integer", "hex",
    "fromhex"};

Value Join(const Value& a, const Value& b);

bool LiteralStrings(const Value& v, std::vector<std::string>* out);

// The literal strings `v` holds as members (its elements, a dict literal's
// keys and values, what its nested containers held), unlike strs, which it
// may be. False when they do not fit in `out`.
bool HeldStrings(const Value& v, std::vector<std::string>* out) {
  bool fit = v.items_numbers || AddStrings(out, v.items, 4 * kMaxStrings);
  fit = AddStrings(out, v.maybe_items, 4 * kMaxStrings) && fit;
  for (const Field& f : v.fields) {
    fit = AddStrings(out, {f.key}, 4 * kMaxStrings) && fit;
    fit = LiteralStrings(f.value, out) && fit;
  }
  for (const Value& r : v.rest) fit = HeldStrings(r, out) && fit;
  return fit;
}

// Every literal string `v` may be or holds.
bool LiteralStrings(const Value& v, std::vector<std::string>* out) {
  const bool fit = !(v.mask & kStr) || AddStrings(out, v.strs, 4 * kMaxStrings);
  return HeldStrings(v, out) && fit;
}

// `v` without its fields: the dict's values join what it holds (maybe_items
// and origin), the values it was joined with join it; as for a dict literal
// of more than kMaxFields keys.
Value Unkeyed(Value v) {
  if (!v.keyed) return v;
  std::vector<std::string> held;
  bool fit = HeldStrings(v, &held);
  for (const Field& f : v.fields) {
    v.spelled = v.spelled || Spelled(f.value);
    MergeOrigin(&v, f.value);
  }
  std::vector<Value> rest = std::move(v.rest);
  v.keyed = false;
  v.fields.clear();
  v.rest.clear();
  v.maybe_items.clear();
  if (!AddStrings(&v.maybe_items, held, 4 * kMaxStrings) || !fit) MergeOrigin(&v, Computed());
  return rest.empty() ? v : Join(v, rest[0]);
}

// What reading member `name` of `obj` (an attribute, a key, an element; any
// member when `name` is empty) gives when nothing more precise is known:
// obj's origin, and any literal string obj holds (`(x or ['__class__'])[i]`
// may be '__class__'), which the member may hold too (nested containers are
// not told apart). A literal's own member (a str method, whose repr is the
// template's; an int's numerator) is spelled: computing on it is
// template-made.
Value ReadOf(const Value& obj, std::string_view name = {}) {
  Value v = Data();
  MergeOrigin(&v, obj);
  if (obj.keyed) {  // any of its values, or what the values it was joined with give
    for (const Field& f : obj.fields) v = Join(v, f.value);
    for (const Value& r : obj.rest) v = Join(v, ReadOf(r, name));
    return v;
  }
  std::vector<std::string> held;
  const bool fit = HeldStrings(obj, &held);
  const bool own = ((obj.exact && obj.mask != kOther) || obj.spelled || !obj.strs.empty()) &&
                   (name.empty() || In(kLiteralMembers, name));
  if (!fit) MergeOrigin(&v, Computed());
  if (held.empty() && !own) return v;
  v = WithPossibleStrs(std::move(v), held);
  v.maybe_items = std::move(held);
  v.spelled = true;
  return v;
}

// A container of `obj`'s members, rearranged (|items, |sort, |selectattr,
// .values(), list concatenation): reading it gives what reading obj gives.
Value Members(const Value& obj) {
  Value c = Data(kOther);
  MergeOrigin(&c, obj);
  if (!Spelled(obj)) return c;
  if (!HeldStrings(obj, &c.maybe_items)) MergeOrigin(&c, Computed());
  c.spelled = true;
  return c;
}

// Key `k` of `x`, as dict.get(k) reads it: a dict literal's value, or (a key
// it lacks, or x not a dict literal) what the other values give.
Value FieldOf(const Value& x, std::string_view k) {
  if (!x.keyed) return ReadOf(x, k);
  for (const Field& f : x.fields) {
    if (f.key == k) return f.value;
  }
  return x.rest.empty() ? Data() : ReadOf(x.rest[0], k);
}

// The fields of a join of `a` and `b`, at least one keyed: each key reads
// as either side reads it; `rest` joins the values that are no dict
// literal.
void JoinFields(const Value& a, const Value& b, Value* v) {
  std::vector<std::string> keys;
  for (const Value* x : {&a, &b}) {
    for (const Field& f : x->fields) {
      if (std::find(keys.begin(), keys.end(), f.key) == keys.end()) keys.push_back(f.key);
    }
  }
  if (keys.size() > kMaxFields) {
    *v = Join(Unkeyed(a), Unkeyed(b));
    return;
  }
  v->keyed = true;
  for (const std::string& k : keys) v->fields.push_back({k, Join(FieldOf(a, k), FieldOf(b, k))});
  std::vector<const Value*> others;
  for (const Value* x : {&a, &b}) {
    if (!x->keyed) others.push_back(x);
    for (const Value& r : x->rest) others.push_back(&r);
  }
  if (others.size() == 1) v->rest.push_back(*others[0]);
  if (others.size() == 2) v->rest.push_back(Join(*others[0], *others[1]));
}

Value Join(const Value& a, const Value& b) {
  Value v;
  v.mask = a.mask | b.mask;
  v.origin = a.origin;
  v.root = a.root;
  MergeOrigin(&v, b);
  v.built = a.built || b.built;
  v.size = std::min(a.size, b.size);
  v.macro = a.macro == b.macro ? a.macro : kNoNode;
  v.ns_slot = a.ns_slot == b.ns_slot ? a.ns_slot : "";
  if (a.exact && b.exact) {
    if (a.mask == kStr && b.mask == kStr) {
      v.strs = a.strs;
      for (const std::string& s : b.strs) {
        if (std::find(v.strs.begin(), v.strs.end(), s) == v.strs.end()) v.strs.push_back(s);
      }
      v.exact = v.strs.size() <= kMaxStrings;
      if (!v.exact) {
        v.strs.clear();
        MergeOrigin(&v, Computed());
      }
    } else if (a.mask == b.mask && a.mask != kStr && a.number == b.number) {
      v.exact = true;
      v.number = a.number;
    } else if (a.mask != kStr && b.mask != kStr) {
      // Two literal numbers (or booleans): either, not followed further, so
      // computing on it is template-made (before, it was template-made
      // itself, and a counter joined with the request's value read as a
      // computed name: Kimi K3's image_prompts[state.image_index]).
      v.spelled = a.mask == kNum || b.mask == kNum;
    } else {
      // A string and something else: keep the strings, mark the rest.
      for (const Value* x : {&a, &b}) {
        if (x->mask == kStr) v.strs = x->strs;
      }
      MergeOrigin(&v, Computed());
    }
  } else {
    // A literal joined with the request's value is the request's or the
    // literal, neither template-made: `x if x else 'Any'` keeps 'Any' for
    // the name checks and stays data (before, it was template-made, and a
    // macro given it as a parameter read json_spec.type as a computed name).
    // Computing on it is template-made (Spelled). Past the bound, it is.
    for (const Value* x : {&a, &b}) {
      if ((x->mask & kStr) && !AddStrings(&v.strs, x->strs, kMaxStrings)) MergeOrigin(&v, Computed());
    }
  }
  if (a.items_exact && b.items_exact && a.items == b.items) {
    v.items_exact = true;
    v.items = a.items;
    v.items_numbers = a.items_numbers && b.items_numbers;
  } else {
    // Two lists of different literals, or a literal list and anything else:
    // the strings either side may yield are kept for the name checks (before,
    // they were dropped and the elements counted as chat data), up to a bound
    // past which the value is template-made anyway.
    for (const Value* x : {&a, &b}) {
      if (!x->items_numbers && !AddStrings(&v.maybe_items, x->items, 4 * kMaxStrings)) MergeOrigin(&v, Computed());
    }
  }
  for (const Value* x : {&a, &b}) {
    if (!AddStrings(&v.maybe_items, x->maybe_items, 4 * kMaxStrings)) MergeOrigin(&v, Computed());
  }
  // What strs, items and fields do not say: a number may be the literal.
  for (const Value* x : {&a, &b}) v.spelled = v.spelled || x->spelled || (x->exact && x->mask == kNum && !v.exact);
  if (a.keyed || b.keyed) JoinFields(a, b, &v);
  return v;
}

// The same strings, in any order: a join lists them as it meets them.
bool SameStrings(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.size() != b.size()) return false;
  for (const std::string& s : a) {
    if (std::find(b.begin(), b.end(), s) == b.end()) return false;
  }
  return true;
}

bool SameValue(const Value& a, const Value& b) {
  if (!(a.mask == b.mask && a.exact == b.exact && SameStrings(a.strs, b.strs) && a.number == b.number &&
        a.origin == b.origin && a.root == b.root && a.ns_slot == b.ns_slot && a.items_exact == b.items_exact &&
        a.items == b.items &&
        SameStrings(a.maybe_items, b.maybe_items) && a.spelled == b.spelled && a.keyed == b.keyed &&
        a.fields.size() == b.fields.size() && a.rest.size() == b.rest.size())) {
    return false;
  }
  for (size_t i = 0; i < a.fields.size(); ++i) {
    if (a.fields[i].key != b.fields[i].key || !SameValue(a.fields[i].value, b.fields[i].value)) return false;
  }
  return a.rest.empty() || SameValue(a.rest[0], b.rest[0]);
}

// Unknown, but keeps the mask and the worst origin: what a loop-carried
// value is once it stops settling. One that may hold a literal is
// template-made (its strings are not followed further).
Value Widen(const Value& a) {
  Value v = a.origin == Origin::kData && !Spelled(a) ? Data(a.mask) : Computed(a.mask);
  MergeOrigin(&v, a);
  return v;
}

// str() of an exact number as Python prints it; false when not exact.
bool NumberToString(double n, std::string* out) {
  if (std::floor(n) == n && std::fabs(n) < 1e15) {
    *out = std::to_string(static_cast<long long>(n));
    return true;
  }
  return false;
}

// The exact strings `v` converts to with str(), or false.
bool ExactStrings(const Value& v, std::vector<std::string>* out) {
  out->clear();
  if (!v.exact) return false;
  if (v.mask == kStr) {
    *out = v.strs;
    return true;
  }
  std::string s;
  if (v.mask == kNum && NumberToString(v.number, &s)) {
    out->push_back(s);
    return true;
  }
  if (v.mask == kOther) {  // bools and none
    out->push_back(v.number != 0 ? "True" : "False");
    return true;
  }
  return false;
}

// Applies `f` to every exact string of `v`; inexact when any result is too long.
template <typename F>
Value MapStrings(const Value& v, F f) {
  std::vector<std::string> in;
  if (!ExactStrings(v, &in)) return Derived(v, kStr);
  Value out;
  out.mask = kStr;
  out.exact = true;
  out.built = true;
  out.size = 1e300;
  for (std::string& s : in) {
    std::string r = f(s);
    out.size = std::min(out.size, static_cast<double>(r.size()));
    if (r.size() > kMaxStringBytes) return Computed(kStr);
    if (std::find(out.strs.begin(), out.strs.end(), r) == out.strs.end()) out.strs.push_back(std::move(r));
  }
  if (out.strs.empty()) out.size = 0;
  return out;
}

bool IsDunderLike(std::string_view s) {
  return s.size() >= 3 && s.starts_with("__") && s.find_first_not_of('_') != std::string_view::npos;
}

// Python's str.center / ljust / rjust.
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
std::string Replace(std::string_view s, std::string_view from, std::string_view to, long long count) {
  std::string out;
  if (from.empty()) {  // Python inserts `to` between every character
    for (size_t i = 0; i <= s.size() && count != 0; ++i, --count) {
      out += to;
      if (i < s.size()) out += s[i];
      if (out.size() > kMaxStringBytes) break;
    }
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
    if (out.size() > kMaxStringBytes) break;
  }
  out.append(s.substr(pos));
  return out;
}

// Python slicing s[start:stop:step] (bytes; chat names are ASCII).
std::string Slice(std::string_view s, const Value* start, const Value* stop, const Value* step) {
  const long long n = static_cast<long long>(s.size());
  long long st = step && IsExactInt(*step) ? static_cast<long long>(step->number) : 1;
  if (st == 0) st = 1;
  auto norm = [&](const Value* v, long long dflt) {
    if (!v || !IsExactInt(*v)) return dflt;
    long long i = static_cast<long long>(v->number);
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

// Attribute names a root may use, and what using them gives.
struct RootRule {
  std::string_view root;
  std::vector<std::string_view> attrs;  // empty: none; {"*"}: any public name
};
const std::vector<RootRule>& RootRules() {
  static const std::vector<RootRule> kRules = {
      {"loop", {"index", "index0", "revindex", "revindex0", "first", "last", "length", "cycle", "depth", "depth0",
                "previtem", "nextitem", "changed"}},
      {"cycler()", {"next", "current", "reset"}},
      {"namespace()", {"*"}},
  };
  return kRules;
}
bool RootAllows(std::string_view root, std::string_view attr) {
  for (const RootRule& r : RootRules()) {
    if (r.root != root) continue;
    for (std::string_view a : r.attrs) {
      if (a == attr || (a == "*" && !attr.starts_with("_"))) return true;
    }
  }
  return false;
}

// Jinja2's default globals and the callables chat renderers add.
constexpr std::string_view kGlobals[] = {"range", "dict", "lipsum", "cycler", "joiner", "namespace",
                                         "raise_exception", "strftime_now"};
// Free names that only escapes need (Python, OS, Flask/Jinja internals).
constexpr std::string_view kDangerousNames[] = {
    "os",       "popen",   "eval",      "exec",     "subprocess", "system",   "import",   "open",
    "getattr",  "setattr", "delattr",   "compile",  "globals",    "locals",   "builtins", "request",
    "config",   "self",    "url_for",   "get_flashed_messages",   "breakpoint", "__builtins__", "g",
    "session",  "application"};

// Attribute names only escapes use (words like system or config are also
// fields of chat data, so only the free names above count for them).
constexpr std::string_view kDangerousAttributes[] = {
    "popen", "eval", "exec", "subprocess", "getattr", "setattr", "delattr", "compile", "builtins",
    "func_globals", "f_globals", "f_builtins", "f_back", "gi_frame", "cr_frame", "tb_frame", "breakpoint"};

// A dict's methods: what attribute syntax finds before a key of that name.
constexpr std::string_view kDictMethods[] = {"clear", "copy",     "fromkeys",   "get",    "items", "keys",
                                             "pop",   "popitem", "setdefault", "update", "values"};

// The slot of the environment that joins every value a namespace attribute
// was set to (no variable's name is empty, so no NsKey is this).
constexpr char kAnyNamespaceAttribute[] = "\x01";

class Analyser {
 public:
  Analyser(const Program& p, std::string_view src, const TemplateScanOptions& o, TemplateScan* out)
      : p_(p), src_(src), opts_(o), out_(out) {
    budget_ = static_cast<int64_t>(4 * (p.stmts.size() + p.exprs.size()) + 4096);
    for (size_t i = 0; i < p.stmts.size(); ++i) {
      const Stmt& s = p.stmts[i];
      if (s.kind == StmtKind::kMacro && !macros_.contains(s.name)) macros_[s.name] = static_cast<NodeId>(i);
    }
  }

  void Run() {
    Walk(p_.top);
    // Macros whose call sites pass something other than plain data are
    // analysed again with what they receive (a root, a constant name).
    for (int round = 0; round < kMacroRounds; ++round) {
      bool any = false;
      auto pending_map = std::move(pending_params_);
      pending_params_.clear();
      // In definition order: a hash map's order differs between tables, and
      // with the issue cap and the budget, order decides what is reported.
      std::vector<std::pair<NodeId, std::vector<Value>>> pending(pending_map.begin(), pending_map.end());
      std::sort(pending.begin(), pending.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      for (auto& [macro, params] : pending) {
        if (budget_ <= 0) break;
        any = true;
        AnalyseMacroBody(macro, &params);
      }
      if (!any) break;
    }
    ReportRecursion();
  }

 private:
  // --- findings ---

  std::string ExprText(NodeId id) const {
    if (id == kNoNode) return "?";
    const Expr& e = p_.expr(id);
    return EscapeForDisplay(src_.substr(e.begin, e.end - e.begin), kMaxExprChars);
  }
  size_t Begin(NodeId id) const { return id == kNoNode ? 0 : p_.expr(id).begin; }
  // Where the name of an access is: the attribute after the dot, the
  // subscript, the argument of |attr; a finding points at it.
  size_t NameOffset(NodeId id) const {
    if (id == kNoNode) return 0;
    const Expr& e = p_.expr(id);
    if (e.kind == ExprKind::kGetAttr) return e.name_at;
    if (e.kind == ExprKind::kGetItem && e.b != kNoNode) return p_.expr(e.b).begin;
    if (e.kind == ExprKind::kFilter && e.args_count > 0 && p_.args[e.args_begin].value != kNoNode) {
      return p_.expr(p_.args[e.args_begin].value).begin;
    }
    return e.begin;
  }

  void Emit(Kind kind, size_t offset, std::string detail) {
    const uint64_t key = static_cast<uint64_t>(offset) * 32 + static_cast<uint64_t>(kind);
    if (!seen_.insert(key).second) return;
    if (emitted_++ >= opts_.max_issues) return;
    out_->issues.push_back({kind, offset, 0, 0, std::move(detail)});
  }
  void NoteRoot(std::string_view name) {
    if (out_->roots.size() >= kMaxListed) return;
    if (std::find(out_->roots.begin(), out_->roots.end(), name) == out_->roots.end()) out_->roots.emplace_back(name);
  }
  void NoteFolded(std::string_view name) {
    std::string e = EscapeForDisplay(name, 64);
    if (out_->folded_names.size() >= kMaxListed) return;
    if (std::find(out_->folded_names.begin(), out_->folded_names.end(), e) == out_->folded_names.end()) {
      out_->folded_names.push_back(std::move(e));
    }
  }

  // Checks a name used to reach into `obj`. `attribute`: attribute syntax,
  // |attr or attribute= (where `_`-prefixed names are internal too).
  void CheckName(const Value& name, const Value& obj, NodeId at, bool attribute) {
    if (!(name.mask & kStr)) return;  // numbers index; they never reach attributes
    for (const std::string& s : name.strs) {
      if (IsDunderLike(s) || (attribute && s.starts_with("_"))) {
        std::string detail = ExprText(at);
        if (name.built) {
          absl::StrAppend(&detail, " builds '", EscapeForDisplay(s, 64), "'");
          NoteFolded(s);
        }
        Emit(Kind::kDunderAccess, NameOffset(at), std::move(detail));
        return;
      }
    }
    if (name.exact) return;
    if (name.origin != Origin::kData) {
      Emit(Kind::kComputedName, NameOffset(at), absl::StrCat(ExprText(at), ": a name computed at render time"));
    } else if (obj.origin == Origin::kRoot && obj.root != "namespace()") {
      // A namespace holds only what the template set, like chat data, and
      // a name from the request reaches into it as far as into a dict.
      Emit(Kind::kComputedName, NameOffset(at),
           absl::StrCat(ExprText(at), ": a name from the request on ", EscapeForDisplay(obj.root, 40)));
    }
  }

  // A dotted attribute path (attribute='a.b', selectattr('a.b')).
  void CheckAttributePath(const Value& path, const Value& obj, NodeId at) {
    if (!(path.mask & kStr)) return;
    Value parts;
    parts.mask = kStr;
    parts.exact = path.exact;
    parts.built = path.built;
    parts.origin = path.origin;
    for (const std::string& s : path.strs) {
      size_t start = 0;
      for (;;) {
        const size_t dot = s.find('.', start);
        parts.strs.push_back(s.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
        if (dot == std::string::npos) break;
        start = dot + 1;
      }
    }
    CheckName(parts, obj, at, /*attribute=*/true);
  }

  void Bomb(NodeId at, std::string what) {
    Emit(Kind::kRenderBomb, Begin(at), absl::StrCat(ExprText(at), ": ", what));
  }
  void CheckOutputSize(double size, NodeId at) {
    if (size > static_cast<double>(opts_.max_output_bytes)) {
      Bomb(at, absl::StrCat("makes about ", FormatCount(size), " bytes > ", opts_.max_output_bytes));
    }
  }
  void CheckCount(double count, NodeId at, std::string_view what) {
    if (count > static_cast<double>(opts_.max_iterations)) {
      Bomb(at, absl::StrCat(Sv(what), " of about ", FormatCount(count), " > ", opts_.max_iterations));
    }
  }
  static std::string FormatCount(double n) {
    if (n < 1e15) return std::to_string(static_cast<long long>(n));
    return absl::StrCat("10^", static_cast<int>(std::log10(n)));
  }

  // --- environment: one map, and a journal to undo scopes and branches ---

  struct Entry {
    std::string key;
    bool had;
    Value old;
    bool shared;  // a namespace attribute: outlives the scope that set it
  };

  const Value* Lookup(const std::string& key) const {
    auto it = vars_.find(key);
    return it == vars_.end() ? nullptr : &it->second;
  }
  void Assign(const std::string& key, Value v, bool shared = false) {
    auto it = vars_.find(key);
    if (it == vars_.end()) {
      journal_.push_back({key, false, Value(), shared});
      vars_.emplace(key, std::move(v));
    } else {
      journal_.push_back({key, true, std::move(it->second), shared});
      it->second = std::move(v);
    }
  }
  void Undo(Entry& e) {
    if (e.had) {
      vars_[e.key] = std::move(e.old);
    } else {
      vars_.erase(e.key);
    }
  }
  void RollbackAll(size_t pos) {
    while (journal_.size() > pos) {
      Undo(journal_.back());
      journal_.pop_back();
    }
  }
  // Leaves a scope: its local variables go, namespace attributes stay.
  void RollbackLocals(size_t pos) {
    std::vector<Entry> kept;
    while (journal_.size() > pos) {
      Entry& e = journal_.back();
      if (e.shared) {
        kept.push_back(std::move(e));
      } else {
        Undo(e);
      }
      journal_.pop_back();
    }
    for (auto it = kept.rbegin(); it != kept.rend(); ++it) journal_.push_back(std::move(*it));
  }
  // Every key the journal touched since `pos`, once: its value now, and the
  // value it had at `pos` (kept by its first entry). One pass, so a loop
  // body that sets a hundred thousand attributes costs that, not its square.
  struct Touched {
    std::string key;
    bool set_now;
    Value now;
    bool had_before;
    Value before;
  };
  std::vector<Touched> TouchedSince(size_t pos) const {
    std::vector<Touched> out;
    absl::flat_hash_set<std::string> done;
    for (size_t i = pos; i < journal_.size(); ++i) {
      const Entry& e = journal_[i];
      if (!done.insert(e.key).second) continue;
      const Value* v = Lookup(e.key);
      out.push_back({e.key, v != nullptr, v ? *v : Value(), e.had, e.had ? e.old : Value()});
    }
    return out;
  }
  static std::string NsKey(std::string_view var, std::string_view attr) { return absl::StrCat(Sv(var), "\x01", Sv(attr)); }

  // --- statements ---

  struct CondScope {  // code that may not run: calls under it are guarded
    Analyser* a;
    bool on;
    CondScope(Analyser* an, bool conditional) : a(an), on(conditional) { a->cond_depth_ += on; }
    ~CondScope() { a->cond_depth_ -= on; }
  };

  void Walk(const std::vector<NodeId>& body) {
    for (NodeId s : body) Statement(s);
  }

  static int Truth(const Value& v) {
    if (!v.exact) return -1;
    if (v.mask == kStr) {
      bool all = true, none = true;
      for (const std::string& s : v.strs) (s.empty() ? all : none) = false;
      return all ? 1 : none ? 0 : -1;
    }
    return v.number != 0 ? 1 : 0;
  }

  void Statement(NodeId id) {
    --budget_;
    const Stmt& s = p_.stmt(id);
    switch (s.kind) {
      case StmtKind::kData:
      case StmtKind::kLoopControl:
        break;
      case StmtKind::kOutput:
      case StmtKind::kDo:
        Eval(s.a);
        break;
      case StmtKind::kIf: If(s); break;
      case StmtKind::kFor: For(s); break;
      case StmtKind::kMacro: {
        Value m = RootValue(absl::StrCat("macro:", Sv(s.name)));
        m.macro = id;
        Assign(std::string(s.name), std::move(m));
        AnalyseMacroBody(id, nullptr);
        break;
      }
      case StmtKind::kCallBlock: {
        Eval(s.a);
        const size_t pos = journal_.size();
        BindParams(s, nullptr);
        {
          CondScope c(this, true);  // the body runs only if the callee calls caller()
          Walk(s.body);
        }
        RollbackLocals(pos);
        break;
      }
      case StmtKind::kFilterBlock:
        Walk(s.body);
        if (s.a != kNoNode) Eval(s.a);
        break;
      case StmtKind::kSet: {
        Value v = Eval(s.b);
        CheckDoubling(s);
        AssignTarget(s.a, std::move(v), s.b);
        // `{% set b = a %}` makes b the same list as a: a mutation through
        // either changes both (Mutate widens every alias).
        const std::string to = SlotOf(s.a), from = SlotOf(s.b);
        if (!to.empty() && !from.empty() && to != from) Alias(to, from);
        break;
      }
      case StmtKind::kSetBlock: {
        Value v = BodyString(s.body);
        Walk(s.body);
        if (s.c != kNoNode) v = Eval(s.c, &v);
        AssignTarget(s.a, std::move(v), kNoNode);
        break;
      }
      case StmtKind::kWith: {
        std::vector<Value> values;
        for (uint32_t i = 0; i < s.params_count; ++i) values.push_back(Eval(p_.args[s.params_begin + i].value));
        const size_t pos = journal_.size();
        for (uint32_t i = 0; i < s.params_count; ++i) {
          const Arg& a = p_.args[s.params_begin + i];
          if (!a.name.empty()) Assign(std::string(a.name), std::move(values[i]));
        }
        Walk(s.body);
        RollbackLocals(pos);
        break;
      }
      case StmtKind::kInclude:
        Emit(Kind::kFileAccess, s.begin,
             absl::StrCat("{% ", Sv(s.name), " ", s.a == kNoNode ? "" : ExprText(s.a), " %} reads a template through the renderer's loader"));
        if (s.a != kNoNode) Eval(s.a);
        break;
      case StmtKind::kBlock:
      case StmtKind::kScope:
        if (s.a != kNoNode) Eval(s.a);
        Walk(s.body);
        break;
    }
  }

  void If(const Stmt& s) {
    const int truth = Truth(Eval(s.a));
    const size_t pos = journal_.size();
    {
      CondScope c(this, truth != 1);
      Walk(s.body);
    }
    auto then_values = TouchedSince(pos);
    RollbackAll(pos);
    {
      CondScope c(this, truth != 0);
      Walk(s.orelse);
    }
    if (truth == 0) return;  // the then-branch never runs
    if (truth == 1) RollbackAll(pos);
    for (Touched& t : then_values) {
      const Value* now = Lookup(t.key);
      if (!t.set_now) continue;
      const bool shared = t.key.find('\x01') != std::string::npos;
      // When the then-branch may not run, the name keeps what it was: its
      // binding, or for a name nothing bound what a lookup of it gives (the
      // request's value). `{% if tools is not defined %}{% set tools = [] %}
      // {% endif %}` (Qwen3-Coder, Nemotron 3 Nano) leaves the request's tools
      // or an empty list, not a template-made list: values read out of them by
      // their own keys are the request's. A literal joined with the
      // request's value stays the request's (Join).
      Assign(t.key, truth != 1 ? Join(t.now, now ? *now : Unbound(t.key, shared)) : t.now, shared);
    }
  }

  // What iterating over `v` gives, and whatever a mutation the analysis
  // could not pin to a variable may have put there.
  Value ElementOf(const Value& v) { return WithUntrackedMutations(ElementOfUnmutated(v)); }

  // `e`, a member read out of a container, or whatever a mutation the
  // analysis could not pin to a variable put there: an element, and a
  // literal dict's key read by name too (`d.x.update(...)` changes d.x.a).
  Value WithUntrackedMutations(Value e) const {
    if (!untracked_mutations_) return e;
    e = WithPossibleStrs(std::move(e), untracked_mutation_.strs);
    MergeOrigin(&e, untracked_mutation_);
    return e;
  }

  // Is `slot` a parameter of the macro being analysed? It holds the
  // caller's value, which a mutation through it changes for the caller too.
  bool IsMacroParameter(std::string_view slot) const {
    if (current_macro_ == kNoNode) return false;
    const Stmt& m = p_.stmt(current_macro_);
    for (uint32_t i = 0; i < m.params_count; ++i) {
      if (p_.args[m.params_begin + i].name == slot) return true;
    }
    return slot == "varargs" || slot == "kwargs";
  }

  Value ElementOfUnmutated(const Value& v) {
    if (v.items_numbers) return Data(kNum);
    if (v.items_exact) {
      Value e;
      bool first = true;
      for (const std::string& s : v.items) {
        Value x = Str(s, true);
        e = first ? x : Join(e, x);
        first = false;
        if (!e.exact) break;
      }
      if (!first) return e;
    }
    if (IsExactStr(v)) {
      Value e;
      bool first = true;
      for (const std::string& s : v.strs) {
        for (char c : s) {
          Value x = Str(std::string(1, c), true);
          e = first ? x : Join(e, x);
          first = false;
        }
      }
      if (!first) return e;
    }
    // Anything else gives what any member of it gives: the request's, with
    // the literals it may hold, or template-made.
    Value e = ReadOf(v);
    if (v.origin == Origin::kRoot) e = RootValue(v.root);
    return e;
  }

  void BindTarget(NodeId target, const Value& v) {
    if (target == kNoNode) return;
    const Expr& t = p_.expr(target);
    if (t.kind == ExprKind::kName) {
      Assign(std::string(t.name), v);
    } else if (t.kind == ExprKind::kTuple) {
      const Value e = ElementOf(v);
      for (uint32_t i = 0; i < t.args_count; ++i) BindTarget(p_.args[t.args_begin + i].value, e);
    }
  }

  void For(const Stmt& s) {
    const Value iter = Eval(s.b);
    double count = 0;  // 0: as many as the request has
    if (iter.items_exact || iter.size > 0) count = std::max(iter.size, static_cast<double>(iter.items.size()));
    if (IsExactStr(iter)) count = iter.size;
    const double product = (loops_.empty() ? 1 : loops_.back().product) * std::max(count, 1.0);
    if (count > 0 && (loops_.empty() || loops_.back().product <= static_cast<double>(opts_.max_iterations))) {
      CheckCount(product, s.b, "nested loops run");
    }
    Loop frame;
    frame.recursive = s.recursive;
    frame.product = product;
    frame.known = (loops_.empty() || loops_.back().known) && count > 0;
    CollectTargetNames(s.a, &frame.targets);
    const Value element = ElementOf(iter);
    const bool runs = count > 0;  // a constant, non-empty sequence always runs

    auto pass = [&] {
      const size_t local = journal_.size();
      loops_.push_back(frame);
      BindTarget(s.a, element);
      Assign("loop", RootValue("loop"));
      {
        CondScope c(this, !runs);
        if (s.c != kNoNode) Eval(s.c);
        Walk(s.body);
      }
      loops_.pop_back();
      RollbackLocals(local);
    };
    NoteRoot("loop");
    // Namespace attributes carry values from one iteration to the next: join
    // each with what it was before and run the body again, until a pass adds
    // nothing to what was joined (a value set anew in every pass, like
    // GigaChat 3.5's `ns_p.n = ns_p.n[seg]`, settles in the third) or
    // kLoopPasses ran; then widen those that still change.
    // `order` keeps the journal's order so that widening assigns in a fixed
    // order (the hash map's would differ between runs).
    absl::flat_hash_map<std::string, Value> joined;
    std::vector<std::string> order, changed;
    for (int n = 0; n < kLoopPasses; ++n) {
      const size_t start = journal_.size();
      pass();
      changed.clear();
      for (Touched& t : TouchedSince(start)) {
        if (!t.set_now) continue;
        const auto it = joined.find(t.key);
        if (it == joined.end() && t.had_before && SameValue(t.before, t.now)) continue;
        Value next = it != joined.end() ? Join(it->second, t.now) : t.had_before ? Join(t.before, t.now) : t.now;
        if (it != joined.end() && SameValue(next, it->second)) {
          Assign(t.key, it->second, true);  // this pass may have left less
          continue;
        }
        Assign(t.key, next, true);
        if (it == joined.end()) {
          joined.emplace(t.key, std::move(next));
          order.push_back(t.key);
        } else {
          it->second = std::move(next);
        }
        changed.push_back(std::move(t.key));
      }
      if (changed.empty() || budget_ <= 0) break;
    }
    for (const std::string& key : order) {
      if (std::find(changed.begin(), changed.end(), key) != changed.end()) Assign(key, Widen(joined.at(key)), true);
    }
    CondScope c(this, true);
    Walk(s.orelse);
  }

  void CollectTargetNames(NodeId target, std::vector<std::string_view>* out) {
    if (target == kNoNode) return;
    const Expr& t = p_.expr(target);
    if (t.kind == ExprKind::kName) out->push_back(t.name);
    if (t.kind == ExprKind::kTuple) {
      for (uint32_t i = 0; i < t.args_count; ++i) CollectTargetNames(p_.args[t.args_begin + i].value, out);
    }
  }

  void AssignTarget(NodeId target, Value v, NodeId value_expr) {
    if (target == kNoNode) return;
    const Expr& t = p_.expr(target);
    if (t.kind == ExprKind::kGetAttr && t.a != kNoNode && p_.expr(t.a).kind == ExprKind::kName) {
      const Expr& ns = p_.expr(t.a);
      const Value* nsv = Lookup(std::string(ns.name));
      if (t.name.starts_with("_")) {
        Emit(Kind::kDunderAccess, t.begin, ExprText(target));
      } else if (nsv && nsv->origin == Origin::kRoot && nsv->root != "namespace()") {
        Emit(Kind::kGlobalsHelper, t.begin, absl::StrCat(ExprText(target), ": sets an attribute of ", EscapeForDisplay(nsv->root, 40)));
      }
      // Set through any name but the one it was made as (a macro's
      // parameter, a loop's target, {% with %}), it may be any namespace's.
      // Read before NoteNamespaceValue, whose Assign may rehash the scope
      // that `nsv` points into.
      const bool maker = nsv && nsv->origin == Origin::kRoot && nsv->root == "namespace()" && nsv->ns_slot == ns.name;
      nsv = nullptr;
      NoteNamespaceValue(v);
      if (!maker) {
        auto [it, fresh] = untracked_namespace_attributes_.try_emplace(std::string(t.name), v);
        if (!fresh) it->second = Join(it->second, v);
      }
      // Set through an alias (`{% set b = ns %}{% set b.x = ... %}`), the
      // attribute changes for the other names too.
      if (auto it = alias_group_.find(std::string(ns.name)); it != alias_group_.end()) {
        for (const std::string& other : alias_groups_[it->second]) {
          if (other == ns.name) continue;
          const std::string key = NsKey(other, t.name);
          const Value* cur = Lookup(key);
          Assign(key, cur ? Join(*cur, v) : v, true);
        }
      }
      Assign(NsKey(ns.name, t.name), std::move(v), true);
      return;
    }
    if (t.kind == ExprKind::kName && value_expr != kNoNode) {
      // {% set ns = namespace(a=...) %}: the attributes start as given.
      const Expr& call = p_.expr(value_expr);
      if (call.kind == ExprKind::kCall && call.a != kNoNode && p_.expr(call.a).kind == ExprKind::kName &&
          p_.expr(call.a).name == "namespace") {
        for (uint32_t i = 0; i < call.args_count; ++i) {
          const Arg& a = p_.args[call.args_begin + i];
          if (!a.name.empty()) Assign(NsKey(t.name, a.name), Eval(a.value), true);
        }
        v.ns_slot = t.name;
      }
    }
    BindTarget(target, v);
  }

  // {% set ns.s = ns.s ~ ns.s %} in a loop doubles ns.s every iteration.
  void CheckDoubling(const Stmt& s) {
    if (loops_.empty() || s.a == kNoNode || s.b == kNoNode) return;
    const Expr& t = p_.expr(s.a);
    if (t.kind != ExprKind::kGetAttr || t.a == kNoNode || p_.expr(t.a).kind != ExprKind::kName) return;
    const std::string_view ns = p_.expr(t.a).name;
    int refs = 0;
    double factor = 1;
    CountRefs(s.b, ns, t.name, &refs, &factor, 0);
    if (refs < 2 && factor < 2) return;
    const double growth = refs >= 2 ? refs : factor;
    const Loop& l = loops_.back();
    if (!l.known) {
      Bomb(s.b, absl::StrCat("multiplies ", Sv(ns), ".", Sv(t.name), " by ", growth, " in every iteration of a loop over request data"));
      return;
    }
    const Value* cur = Lookup(NsKey(ns, t.name));
    const double start = std::max(1.0, cur ? cur->size : 1.0);
    const double log_size = std::log10(start) + l.product * std::log10(growth);
    if (log_size > std::log10(static_cast<double>(opts_.max_output_bytes))) {
      Bomb(s.b, absl::StrCat("multiplies ", Sv(ns), ".", Sv(t.name), " by ", growth, " in each of ", FormatCount(l.product),
                             " iterations"));
    }
  }
  void CountRefs(NodeId id, std::string_view ns, std::string_view attr, int* refs, double* factor, int depth) {
    if (id == kNoNode || depth > 300) return;
    const Expr& e = p_.expr(id);
    if (e.kind == ExprKind::kGetAttr && e.name == attr && e.a != kNoNode && p_.expr(e.a).kind == ExprKind::kName &&
        p_.expr(e.a).name == ns) {
      ++*refs;
      return;
    }
    if (e.kind == ExprKind::kBinary && e.name == "*") {
      for (auto [x, y] : {std::pair{e.a, e.b}, std::pair{e.b, e.a}}) {
        if (x == kNoNode || y == kNoNode) continue;
        const Expr& ex = p_.expr(x);
        const Expr& ey = p_.expr(y);
        if (ex.kind == ExprKind::kGetAttr && ex.name == attr && ey.kind == ExprKind::kNumber) {
          *factor = std::max(*factor, ey.number);
        }
      }
    }
    for (NodeId c : {e.a, e.b, e.c, e.d}) CountRefs(c, ns, attr, refs, factor, depth + 1);
    for (uint32_t i = 0; i < e.args_count; ++i) CountRefs(p_.args[e.args_begin + i].value, ns, attr, refs, factor, depth + 1);
  }

  // The text a {% set x %}...{% endset %} body renders, when it is constant.
  // Trimmed variants are kept too: trim_blocks and `-` strip whitespace.
  Value BodyString(const std::vector<NodeId>& body) {
    std::string text;
    bool exact = true;
    for (NodeId id : body) {
      const Stmt& s = p_.stmt(id);
      if (s.kind == StmtKind::kData) {
        text.append(src_.substr(s.begin, s.end - s.begin));
      } else if (s.kind == StmtKind::kOutput) {
        std::vector<std::string> strs;
        if (ExactStrings(Eval(s.a), &strs) && strs.size() == 1) {
          text += strs[0];
        } else {
          exact = false;
        }
      } else {
        exact = false;
      }
      if (text.size() > kMaxStringBytes) return Computed(kStr);
    }
    if (!exact) return Computed(kStr);
    Value v = Str(text, true);
    const std::string trimmed = Strip(text, {}, true, true);
    if (trimmed != text) v = Join(v, Str(trimmed, true));
    return v;
  }

  // --- macros ---

  void BindParams(const Stmt& s, std::vector<Value>* given) {
    for (uint32_t i = 0; i < s.params_count; ++i) {
      const Arg& a = p_.args[s.params_begin + i];
      Value v = Data();
      if (a.value != kNoNode) v = Join(v, Eval(a.value));
      if (given && i < given->size()) v = (*given)[i];
      Assign(std::string(a.name), std::move(v));
    }
    for (std::string_view n : {"varargs", "kwargs"}) Assign(std::string(n), Data());
  }

  void AnalyseMacroBody(NodeId macro, std::vector<Value>* params) {
    const Stmt& s = p_.stmt(macro);
    const NodeId saved_macro = current_macro_;
    const int saved_cond = cond_depth_;
    auto saved_loops = std::move(loops_);
    loops_.clear();
    current_macro_ = macro;
    cond_depth_ = 0;
    const size_t pos = journal_.size();
    BindParams(s, params);
    Assign("caller", RootValue("caller"));
    Walk(s.body);
    RollbackLocals(pos);
    current_macro_ = saved_macro;
    cond_depth_ = saved_cond;
    loops_ = std::move(saved_loops);
  }

  // Call-site arguments, joined per parameter; a macro gets another look
  // when they are more than plain data.
  void RecordCall(NodeId macro, const Expr& call, const std::vector<Value>& args) {
    const Stmt& m = p_.stmt(macro);
    std::vector<Value> params(m.params_count, Data());
    bool interesting = false;
    size_t positional = 0;
    for (uint32_t i = 0; i < call.args_count; ++i) {
      const Arg& a = p_.args[call.args_begin + i];
      size_t slot = SIZE_MAX;
      if (a.star == 0 && a.name.empty()) {
        slot = positional++;
      } else if (a.star == 0) {
        for (uint32_t k = 0; k < m.params_count; ++k) {
          if (p_.args[m.params_begin + k].name == a.name) slot = k;
        }
      }
      if (slot >= params.size()) continue;
      params[slot] = args[i];
      // A literal, or a value holding one (`f({'k': '__class__'})`), reaches
      // the body only this way.
      if (Spelled(args[i]) || args[i].origin != Origin::kData) interesting = true;
    }
    if (!interesting) return;
    auto& joined = call_params_[macro];
    if (joined.empty()) {
      joined = params;
    } else {
      bool changed = false;
      for (size_t k = 0; k < params.size() && k < joined.size(); ++k) {
        Value j = Join(joined[k], params[k]);
        if (!SameValue(j, joined[k])) changed = true;
        joined[k] = std::move(j);
      }
      if (!changed) return;
    }
    pending_params_[macro] = joined;
  }

  struct Edge {
    NodeId from, to;
    bool conditional;
    size_t offset;
  };

  // Strongly connected components (Tarjan's algorithm, iterative: the
  // graph may be as long as the template).
  static absl::flat_hash_map<NodeId, int> Components(const std::vector<Edge>& edges, bool conditional_too) {
    absl::flat_hash_map<NodeId, std::vector<NodeId>> out;
    for (const Edge& e : edges) {
      if (conditional_too || !e.conditional) out[e.from].push_back(e.to);
    }
    absl::flat_hash_map<NodeId, int> index, low, component;
    absl::flat_hash_set<NodeId> on_stack;
    std::vector<NodeId> stack;
    int next_index = 0, next_component = 0;
    for (const auto& [root, unused] : out) {
      if (index.contains(root)) continue;
      std::vector<std::pair<NodeId, size_t>> work = {{root, 0}};
      index[root] = low[root] = next_index++;
      stack.push_back(root);
      on_stack.insert(root);
      while (!work.empty()) {
        auto& [node, next] = work.back();
        const auto it = out.find(node);
        if (it != out.end() && next < it->second.size()) {
          const NodeId to = it->second[next++];
          if (!index.contains(to)) {
            index[to] = low[to] = next_index++;
            stack.push_back(to);
            on_stack.insert(to);
            work.push_back({to, 0});
          } else if (on_stack.contains(to)) {
            low[node] = std::min(low[node], index[to]);
          }
          continue;
        }
        if (low[node] == index[node]) {
          for (;;) {
            const NodeId n = stack.back();
            stack.pop_back();
            on_stack.erase(n);
            component[n] = next_component;
            if (n == node) break;
          }
          ++next_component;
        }
        const NodeId done = node;
        work.pop_back();
        if (!work.empty()) low[work.back().first] = std::min(low[work.back().first], low[done]);
      }
    }
    return component;
  }

  // Every call that lies on a cycle: a cycle of unconditional calls
  // recurses without end (at each of its calls); a cycle with a condition on
  // the way is bounded recursion (noted at each guarded call on it).
  void ReportRecursion() {
    const auto unconditional = Components(edges_, false);
    const auto all = Components(edges_, true);
    auto same = [](const absl::flat_hash_map<NodeId, int>& c, NodeId a, NodeId b) {
      const auto x = c.find(a), y = c.find(b);
      return x != c.end() && y != c.end() && x->second == y->second;
    };
    for (const Edge& e : edges_) {
      const std::string name = EscapeForDisplay(p_.stmt(e.to).name, 40);
      if (!e.conditional && same(unconditional, e.from, e.to)) {
        Emit(Kind::kUnboundedRecursion, e.offset,
             absl::StrCat(name, "() recurses with no if, for, and, or or else on the way: nothing ends it"));
      } else if (e.conditional && same(all, e.from, e.to)) {
        Emit(Kind::kRecursiveMacro, e.offset, absl::StrCat(name, "() recurses under a condition"));
      }
    }
  }

  // --- expressions ---

  Value Eval(NodeId id, const Value* filter_base = nullptr) {
    if (id == kNoNode) return Data();
    --budget_;
    const Expr& e = p_.expr(id);
    switch (e.kind) {
      case ExprKind::kName: return EvalName(e, id);
      case ExprKind::kString: return Str(e.text, false);
      case ExprKind::kNumber: return Num(e.number);
      case ExprKind::kConst: return Bool(e.name == "true" || e.name == "True" ? 1 : 0);
      case ExprKind::kList:
      case ExprKind::kTuple:
      case ExprKind::kDict: return EvalContainer(e);
      case ExprKind::kGetAttr: {
        const Value obj = Eval(e.a);
        return Attribute(obj, Str(std::string(e.name), false), id, e.a, /*attribute=*/true);
      }
      case ExprKind::kGetItem: {
        const Value obj = Eval(e.a);
        const Value key = Eval(e.b);
        return Subscript(obj, key, id, e.a);
      }
      case ExprKind::kSlice: {
        const Value obj = Eval(e.a);
        const Value b = Eval(e.b), c = Eval(e.c), d = Eval(e.d);
        if (IsExactStr(obj)) {
          return MapStrings(obj, [&](const std::string& s) {
            return Slice(s, e.b == kNoNode ? nullptr : &b, e.c == kNoNode ? nullptr : &c, e.d == kNoNode ? nullptr : &d);
          });
        }
        Value v = Derived(obj);
        if (obj.origin == Origin::kRoot) v = RootValue(obj.root);
        return v;
      }
      case ExprKind::kCall: return EvalCall(e, id);
      case ExprKind::kFilter: {
        Value base = e.a != kNoNode ? Eval(e.a) : filter_base ? *filter_base : Computed(kStr);
        return EvalFilter(e, id, base);
      }
      case ExprKind::kTest: {
        Eval(e.a);
        for (uint32_t i = 0; i < e.args_count; ++i) Eval(p_.args[e.args_begin + i].value);
        return Bool(-1);
      }
      case ExprKind::kConcat: return EvalConcat(e, id);
      case ExprKind::kBinary: return EvalBinary(e, id);
      case ExprKind::kUnary: {
        const Value v = Eval(e.a);
        if (e.name == "not") {
          const int t = Truth(v);
          return Bool(t < 0 ? -1 : 1 - t);
        }
        if (IsExactNum(v)) return Num(e.name == "-" ? -v.number : v.number);
        return Derived(v, kNum);
      }
      case ExprKind::kCondExpr: {
        const int truth = Truth(Eval(e.b));
        Value t, f;
        {
          CondScope c(this, truth != 1);
          t = Eval(e.a);
        }
        {
          CondScope c(this, truth != 0);
          f = e.c != kNoNode ? Eval(e.c) : Data();
        }
        if (truth == 1) return t;
        if (truth == 0) return f;
        return Join(t, f);
      }
    }
    return Data();
  }

  // What a name no statement has bound evaluates to, as EvalName finds it
  // (without its findings): a macro, a global or dangerous name, or the
  // request's data. A namespace attribute (`shared`) unset is data too.
  Value Unbound(const std::string& name, bool shared) const {
    if (shared) return Data();
    if (auto it = macros_.find(name); it != macros_.end()) {
      Value m = RootValue(absl::StrCat("macro:", name));
      m.macro = it->second;
      return m;
    }
    if (In(kGlobals, name) || In(kDangerousNames, name)) return RootValue(name);
    return Data();
  }

  // Records that slots `a` and `b` hold one list (`{% set b = a %}`): their
  // groups merge, up to kMaxAliasGroup slots a group and kMaxAliasSlots in
  // all, past which an alias is not followed. A mutation then costs one pass
  // over its receiver's group, whatever the number of set statements (a
  // closure over pairs walked per mutation took 17 s on a 1 MiB template).
  void Alias(const std::string& a, const std::string& b) {
    auto group_of = [&](const std::string& slot) -> std::optional<uint32_t> {
      if (auto it = alias_group_.find(slot); it != alias_group_.end()) return it->second;
      if (alias_group_.size() >= kMaxAliasSlots) return std::nullopt;
      alias_group_.emplace(slot, static_cast<uint32_t>(alias_groups_.size()));
      alias_groups_.push_back({slot});
      return static_cast<uint32_t>(alias_groups_.size() - 1);
    };
    const std::optional<uint32_t> ga = group_of(a), gb = group_of(b);
    if (!ga || !gb || *ga == *gb) return;
    std::vector<std::string>& into = alias_groups_[*ga];
    std::vector<std::string>& from = alias_groups_[*gb];
    if (into.size() + from.size() > kMaxAliasGroup) return;
    for (std::string& slot : from) {
      alias_group_[slot] = *ga;
      into.push_back(std::move(slot));
    }
    from.clear();
  }

  // The variable slot an expression names: a name, or a namespace attribute
  // `ns.x`; empty for anything else.
  std::string SlotOf(NodeId id) const {
    if (id == kNoNode) return "";
    const Expr& e = p_.expr(id);
    if (e.kind == ExprKind::kName) return std::string(e.name);
    if (e.kind == ExprKind::kGetAttr && e.a != kNoNode && p_.expr(e.a).kind == ExprKind::kName) {
      return NsKey(p_.expr(e.a).name, e.name);
    }
    return "";
  }

  Value EvalName(const Expr& e, NodeId id) {
    const std::string name(e.name);
    if (const Value* v = Lookup(name)) {
      if (v->macro != kNoNode || v->root == "caller") ValueUse(*v, id);
      return *v;
    }
    if (auto it = macros_.find(e.name); it != macros_.end()) {
      Value m = RootValue(absl::StrCat("macro:", Sv(e.name)));
      m.macro = it->second;
      ValueUse(m, id);
      return m;
    }
    if (In(kGlobals, e.name)) {
      NoteRoot(e.name);
      return RootValue(name);
    }
    if (In(kDangerousNames, e.name)) {
      NoteRoot(e.name);
      Emit(Kind::kDangerousName, e.begin, EscapeForDisplay(e.name, 40));
      return RootValue(name);
    }
    return Data();
  }

  // A macro or caller named other than in a call: f(f) self-application
  // recurses without any call the graph can see.
  void ValueUse(const Value& v, NodeId id) {
    if (calling_ == id) return;
    NoteRoot(v.root);
    Emit(Kind::kUnboundedRecursion, Begin(id),
         absl::StrCat(EscapeForDisplay(v.root, 40), " used as a value: self-application can recurse without end"));
  }

  // A list, tuple or dict literal: its elements (a dict's keys) when they
  // are all exact, and a dict's values by key. An element that may be a
  // literal or the request's (`[x or 'Any']`), or a nested container holding
  // one, keeps its strings in maybe_items.
  Value EvalContainer(const Expr& e) {
    Value v;
    v.mask = kOther;
    v.items_exact = true;
    v.items_numbers = e.args_count > 0;
    const bool dict = e.kind == ExprKind::kDict;
    v.keyed = dict;
    std::string key;  // dict: the key of the value that follows, when it is a literal string
    bool key_known = false;
    for (uint32_t i = 0; i < e.args_count; ++i) {
      const Value x = Eval(p_.args[e.args_begin + i].value);
      MergeOrigin(&v, x);
      if (dict && i % 2 == 1) {
        if (v.keyed && key_known) {
          AddField(&v, std::move(key), x);
        } else {  // under a key that is no literal string, any key may read it: `{m.role: '__class__'}`
          v = Unkeyed(std::move(v));
          if (!LiteralStrings(x, &v.maybe_items)) MergeOrigin(&v, Computed());
          AddElement(&v, x);
        }
        continue;
      }
      if (!IsExactNum(x)) v.items_numbers = false;
      key_known = IsExactStr(x) && x.strs.size() == 1;
      if (key_known) key = x.strs[0];
      std::vector<std::string> s;
      if (ExactStrings(x, &s) && s.size() == 1) {
        v.items.push_back(s[0]);
      } else {
        v.items_exact = false;
        AddElement(&v, x);
      }
    }
    v.size = dict ? e.args_count / 2 : e.args_count;
    if (!v.items_exact) v.items.clear();
    return v;
  }

  // What a container literal keeps of an element that is not one exact
  // string (see EvalContainer); nested literal containers are not followed.
  static void AddElement(Value* c, const Value& x) {
    if (!x.exact && !AddStrings(&c->maybe_items, x.strs, 4 * kMaxStrings)) MergeOrigin(c, Computed());
    c->spelled = c->spelled || x.spelled;
    // A nested container holding one: what it holds is held here too.
    if (HoldsJoinedLiteral(x) && !HeldStrings(x, &c->maybe_items)) MergeOrigin(c, Computed());
  }
  // Does container `x` hold a value that may be a literal or the request's?
  static bool HoldsJoinedLiteral(const Value& x) {
    if (!x.maybe_items.empty()) return true;
    for (const Field& f : x.fields) {
      if (f.value.spelled || (!f.value.exact && !f.value.strs.empty()) || HoldsJoinedLiteral(f.value)) return true;
    }
    for (const Value& r : x.rest) {
      if (r.spelled || !r.strs.empty() || HoldsJoinedLiteral(r)) return true;
    }
    return false;
  }

  // Sets key `k` of a keyed dict to `x` (a later one wins, as in Python);
  // past kMaxFields keys the dict is followed as a whole.
  static void AddField(Value* d, std::string k, const Value& x) {
    for (Field& f : d->fields) {
      if (f.key == k) {
        f.value = Unkeyed(x);
        return;
      }
    }
    d->fields.push_back({std::move(k), Unkeyed(x)});
    if (d->fields.size() > kMaxFields) *d = Unkeyed(std::move(*d));
  }

  // Key `k` of a keyed value, read by name. Attribute syntax finds a dict's
  // method before its key, a subscript the key first and the method when the
  // key is missing (Jinja2's getattr and getitem): Command R's
  // json_spec.items and MiniCPM3's json_spec['items'] of `{'type': t}`.
  static Value KeyOf(const Value& obj, const std::string& k, bool attribute) {
    const bool method = In(kDictMethods, k);
    if (method && attribute) return BoundMethod();
    for (const Field& f : obj.fields) {
      if (f.key == k) return f.value;
    }
    return method ? Join(BoundMethod(), FieldOf(obj, k)) : FieldOf(obj, k);
  }
  // A bound method, not called: it has no attribute but Python's own
  // (dunders, which the name checks catch), and its repr is the template's,
  // so it is spelled: stringifying it is template-made.
  static Value BoundMethod() {
    Value v = Data(kOther);
    v.spelled = true;
    return v;
  }

  // An attribute of a namespace: what `{% set ns.attr = ... %}` or
  // namespace(attr=...) gave it when the namespace is reached by the name it
  // was set through (and what it was set to through another name, which
  // may be this namespace); otherwise
  // (another name, a macro's parameter, a list, a key from the request)
  // whatever any namespace attribute was set to.
  Value NamespaceAttribute(NodeId obj_expr, std::string_view attr) {
    if (!attr.empty() && obj_expr != kNoNode && p_.expr(obj_expr).kind == ExprKind::kName) {
      if (const Value* v = Lookup(NsKey(p_.expr(obj_expr).name, attr))) {
        const auto it = untracked_namespace_attributes_.find(std::string(attr));
        return it == untracked_namespace_attributes_.end() ? *v : Join(*v, it->second);
      }
    }
    const Value* any = Lookup(kAnyNamespaceAttribute);
    return any ? *any : Data();
  }
  // Records that some namespace attribute is set to `v`.
  void NoteNamespaceValue(const Value& v) {
    const Value* cur = Lookup(kAnyNamespaceAttribute);
    Value j = Join(cur ? *cur : Data(), v);
    if (!cur || !SameValue(j, *cur)) Assign(kAnyNamespaceAttribute, std::move(j), /*shared=*/true);
  }

  Value Attribute(const Value& obj, const Value& name, NodeId at, NodeId obj_expr, bool attribute) {
    CheckName(name, obj, at, attribute);
    if (attribute && IsExactStr(name)) {
      for (const std::string& n : name.strs) {
        if (In(kDangerousAttributes, n)) Emit(Kind::kDangerousName, NameOffset(at), EscapeForDisplay(n, 40));
      }
    }
    const bool one = IsExactStr(name) && name.strs.size() == 1;
    if (obj.origin == Origin::kRoot) {
      // A namespace is read like chat data: by a public literal name, or by
      // a name from the request (GigaChat 3.5: add_tokens[f.type]), which
      // finds one of its attributes or, as on a dict, what getattr finds.
      if (obj.root == "namespace()" && (one ? RootAllows(obj.root, name.strs[0]) : name.origin == Origin::kData)) {
        return NamespaceAttribute(obj_expr, one ? name.strs[0] : std::string());
      }
      const bool allowed = one && RootAllows(obj.root, name.strs[0]);
      if (!allowed) {
        ReachInto(obj, at);
        Value v = RootValue(obj.root);
        v.reached = true;
        return v;
      }
      const std::string& attr = name.strs[0];
      if (obj.root == "loop") {
        if (attr == "cycle") return RootValue("loop.cycle");
        if (attr == "previtem" || attr == "nextitem") return Data();
        return Data(kNum | kOther);
      }
      return Data();
    }
    if (obj.keyed && one) return WithUntrackedMutations(KeyOf(obj, name.strs[0], attribute));
    return WithUntrackedMutations(ReadOf(obj, one ? std::string_view(name.strs[0]) : std::string_view()));
  }

  // One finding per chain (cycler.__init__.__globals__ reaches in once), and
  // none for a dangerous name, which has its own.
  void ReachInto(const Value& obj, NodeId at) {
    if (obj.reached || In(kDangerousNames, obj.root)) return;
    Emit(Kind::kGlobalsHelper, NameOffset(at), absl::StrCat(ExprText(at), ": reaches into ", EscapeForDisplay(obj.root, 40)));
  }

  Value Subscript(const Value& obj, const Value& key, NodeId at, NodeId obj_expr) {
    if (IsExactInt(key)) {
      const long long i = static_cast<long long>(key.number);
      if (IsExactStr(obj)) {
        Value k1 = Num(static_cast<double>(i)), k2 = Num(static_cast<double>(i + 1));
        if (i == -1) return MapStrings(obj, [&](const std::string& s) { return Slice(s, &k1, nullptr, nullptr); });
        return MapStrings(obj, [&](const std::string& s) { return Slice(s, &k1, &k2, nullptr); });
      }
      if (obj.items_exact && !obj.items_numbers) {
        const long long n = static_cast<long long>(obj.items.size());
        const long long j = i < 0 ? i + n : i;
        if (j >= 0 && j < n) return WithUntrackedMutations(Str(obj.items[static_cast<size_t>(j)], true));
      }
    }
    // A namespace has no items: getitem falls back to getattr.
    if (obj.origin == Origin::kRoot && obj.root == "namespace()") return Attribute(obj, key, at, obj_expr, true);
    if (obj.origin == Origin::kRoot) {
      CheckName(key, obj, at, false);
      ReachInto(obj, at);
      Value v = RootValue(obj.root);
      v.reached = true;
      return v;
    }
    return Attribute(obj, key, at, obj_expr, /*attribute=*/false);
  }

  Value EvalConcat(const Expr& e, NodeId id) {
    std::vector<std::string> acc = {""};
    bool exact = true;
    double size = 0;
    Value origin = Data(kStr);
    for (uint32_t i = 0; i < e.args_count; ++i) {
      const Value v = Eval(p_.args[e.args_begin + i].value);
      size += v.size;
      MergeOrigin(&origin, v);
      std::vector<std::string> parts;
      if (!exact || !ExactStrings(v, &parts)) {
        if (Spelled(v) || v.items_exact) MergeOrigin(&origin, Computed());
        exact = false;
        continue;
      }
      std::vector<std::string> next;
      for (const std::string& a : acc) {
        for (const std::string& b : parts) {
          if (a.size() + b.size() > kMaxStringBytes || next.size() == kMaxStrings) {
            exact = false;
            break;
          }
          next.push_back(a + b);
        }
      }
      acc = std::move(next);
    }
    CheckOutputSize(size, id);
    if (exact) {
      Value v;
      v.mask = kStr;
      v.exact = true;
      v.built = true;
      v.strs = std::move(acc);
      v.size = size;
      return v;
    }
    // Unknown parts from data keep the string data; parts the template
    // knows make it template-made.
    Value v = origin.origin == Origin::kData ? Data(kStr) : Computed(kStr);
    if (origin.origin == Origin::kRoot) v = Computed(kStr);  // a root's repr: a string, not the object
    v.size = size;
    return v;
  }

  Value EvalBinary(const Expr& e, NodeId id) {
    if (e.name == "and" || e.name == "or") {
      const Value a = Eval(e.a);
      const int t = Truth(a);
      Value b;
      {
        CondScope c(this, true);
        b = Eval(e.b);
      }
      if (e.name == "and") return t == 0 ? a : t == 1 ? b : Join(a, b);
      return t == 1 ? a : t == 0 ? b : Join(a, b);
    }
    const Value a = Eval(e.a);
    const Value b = Eval(e.b);
    const std::string_view op = e.name;
    if (op == "==" || op == "!=" || op == "<" || op == "<=" || op == ">" || op == ">=" || op == "in" || op == "notin") {
      return Bool(-1);
    }
    if (op == "+") {
      if (IsExactNum(a) && IsExactNum(b)) return Num(a.number + b.number);
      if (IsExactStr(a) && IsExactStr(b)) {
        Value v = Str("", true);
        v.strs.clear();
        for (const std::string& x : a.strs) {
          for (const std::string& y : b.strs) {
            if (x.size() + y.size() > kMaxStringBytes || v.strs.size() == kMaxStrings) return SizedComputed(a.size + b.size, id);
            v.strs.push_back(x + y);
          }
        }
        v.size = a.size + b.size;
        return v;
      }
      // A list on either side: concatenation keeps the members of both; a
      // number on either side: a sum (a str and a number do not add).
      const uint8_t mask = a.mask == kNum || b.mask == kNum ? kNum : a.mask | b.mask;
      Value v = a.mask == kOther || b.mask == kOther ? Join(Members(a), Members(b)) : Derived2(a, b, mask);
      v.size = a.size + b.size;
      CheckOutputSize(v.size, id);
      return v;
    }
    if (op == "*") return Multiply(a, b, id);
    if (op == "**") {
      if (IsExactNum(a) && IsExactNum(b)) {
        const double mag = b.number * std::log10(std::max(std::fabs(a.number), 1.0));
        if (mag > 18) {
          Bomb(id, absl::StrCat("a number of about 10^", static_cast<int>(std::min(mag, 1e9)), " digits' magnitude"));
          return Computed(kNum);
        }
        return Num(std::pow(a.number, b.number));
      }
      return Derived2(a, b, kNum);
    }
    if (op == "%" && (a.mask & kStr) && a.mask == kStr) return Format(a, {b}, id, /*percent=*/true);
    if (IsExactNum(a) && IsExactNum(b) && b.number != 0) {
      if (op == "-") return Num(a.number - b.number);
      if (op == "/") return Num(a.number / b.number);
      if (op == "//") return Num(std::floor(a.number / b.number));
      if (op == "%") return Num(a.number - b.number * std::floor(a.number / b.number));
    }
    return Derived2(a, b, kNum);
  }

  Value SizedComputed(double size, NodeId id) {
    CheckOutputSize(size, id);
    Value v = Computed(kStr);
    v.size = size;
    return v;
  }

  Value Multiply(const Value& a, const Value& b, NodeId id) {
    if (IsExactNum(a) && IsExactNum(b)) return Num(a.number * b.number);
    const Value& count = IsExactNum(b) ? b : a;
    const Value& seq = IsExactNum(b) ? a : b;
    if (!IsExactNum(count)) return Derived2(a, b);
    const double n = std::max(count.number, 0.0);
    if (seq.mask == kStr) {
      const double size = std::max(seq.size, seq.exact ? 0.0 : 1.0) * n;
      CheckOutputSize(size, id);
      if (IsExactStr(seq)) {
        return MapStrings(seq, [&](const std::string& s) {
          std::string out;
          // '' * 10**18 is '': the loop below must not run n times for nothing.
          if (s.empty() || n < 1) return out;
          if (static_cast<double>(s.size()) * n > kMaxStringBytes) return std::string(kMaxStringBytes + 1, ' ');
          for (double i = 0; i < n; ++i) out += s;
          return out;
        });
      }
      Value v = Derived(seq, kStr);
      v.size = size;
      return v;
    }
    // A list, or something unknown: messages * 10**9 is at least n items.
    const double items = std::max(seq.size, 1.0) * n;
    CheckCount(items, id, "repetition");
    Value v = Derived(seq);
    if (seq.mask == kAny && seq.size == 0) v.size = 0;  // maybe a number
    else v.size = items;
    return v;
  }

  // --- calls ---

  std::vector<Value> EvalArgs(const Expr& e) {
    std::vector<Value> out;
    for (uint32_t i = 0; i < e.args_count; ++i) out.push_back(Eval(p_.args[e.args_begin + i].value));
    return out;
  }
  // Positional argument `index`, or keyword `name`.
  const Value* ArgValue(const Expr& e, const std::vector<Value>& vals, size_t index, std::string_view name) const {
    size_t positional = 0;
    for (uint32_t i = 0; i < e.args_count; ++i) {
      const Arg& a = p_.args[e.args_begin + i];
      if (a.star != 0) continue;
      if (a.name.empty()) {
        if (positional++ == index) return &vals[i];
      } else if (a.name == name) {
        return &vals[i];
      }
    }
    return nullptr;
  }
  NodeId ArgExpr(const Expr& e, size_t index, std::string_view name) const {
    size_t positional = 0;
    for (uint32_t i = 0; i < e.args_count; ++i) {
      const Arg& a = p_.args[e.args_begin + i];
      if (a.star != 0) continue;
      if ((a.name.empty() && positional++ == index) || (!a.name.empty() && a.name == name)) return a.value;
    }
    return kNoNode;
  }
  static double ExactOr(const Value* v, double dflt) { return v && IsExactNum(*v) ? v->number : dflt; }

  Value EvalCall(const Expr& e, NodeId id) {
    const NodeId callee_id = e.a;
    const Expr* callee = callee_id == kNoNode ? nullptr : &p_.expr(callee_id);
    if (callee && callee->kind == ExprKind::kGetAttr) {
      const Value obj = Eval(callee->a);
      const Value name = Str(std::string(callee->name), false);
      const std::vector<Value> args = EvalArgs(e);
      const Value attr = Attribute(obj, name, callee_id, callee->a, /*attribute=*/true);
      return Method(obj, callee->name, e, args, id, callee->a, attr);
    }
    Value fn;
    if (callee && callee->kind == ExprKind::kName) {
      const NodeId saved = calling_;
      calling_ = callee_id;
      fn = Eval(callee_id);
      calling_ = saved;
    } else {
      fn = Eval(callee_id);
    }
    const std::vector<Value> args = EvalArgs(e);
    if (fn.macro != kNoNode) {
      edges_.push_back({current_macro_, fn.macro, cond_depth_ > 0, e.begin});
      if (current_macro_ == kNoNode) edges_.pop_back();
      RecordCall(fn.macro, e, args);
      NoteRoot(fn.root);
      return Computed(kStr);  // a macro's output
    }
    if (fn.origin != Origin::kRoot) return Derived(fn);
    const std::string& r = fn.root;
    if (r == "loop") return RecursiveLoopCall(e, id);
    if (r == "caller") return Computed(kStr);
    if (r == "range") return Range(e, args, id);
    if (r == "lipsum") {
      const double n = ExactOr(ArgValue(e, args, 0, "n"), 5);
      const double max_words = ExactOr(ArgValue(e, args, 3, "max"), 100);
      CheckCount(n, id, "lipsum paragraphs");
      CheckOutputSize(n * std::max(max_words, 1.0) * 8, id);
      return Data(kStr);
    }
    if (r == "dict") {
      // dict(k=v): keys and values as a literal's; a positional argument (a
      // mapping or pairs) makes the keys unknown.
      Value v;
      v.mask = kOther;
      v.items_exact = true;
      v.keyed = true;
      for (uint32_t i = 0; i < e.args_count; ++i) {
        const Arg& a = p_.args[e.args_begin + i];
        MergeOrigin(&v, args[i]);
        if (a.name.empty()) {
          v.items_exact = false;
          v = Unkeyed(std::move(v));
        } else {
          v.items.emplace_back(a.name);
        }
        if (v.keyed) {
          AddField(&v, std::string(a.name), args[i]);
        } else {
          AddElement(&v, args[i]);
        }
      }
      if (!v.items_exact) v.items.clear();
      v.size = static_cast<double>(v.items.size());
      return v;
    }
    if (r == "cycler") {
      NoteRoot("cycler()");
      return RootValue("cycler()");
    }
    if (r == "joiner") {
      NoteRoot("joiner()");
      return RootValue("joiner()");
    }
    if (r == "namespace") {
      // What it holds, for reads that cannot tell which namespace they reach
      // (a positional argument is a dict or pairs whose members it takes).
      for (uint32_t i = 0; i < e.args_count; ++i) {
        NoteNamespaceValue(p_.args[e.args_begin + i].name.empty() ? ReadOf(args[i]) : args[i]);
      }
      return RootValue("namespace()");
    }
    if (r == "joiner()" || r == "loop.cycle") {
      Value v = Data(kStr);
      for (const Value& a : args) {
        if (IsExactStr(a)) v = Join(v, a);
      }
      return v;
    }
    return Data();  // raise_exception, strftime_now, and other callables' results
  }

  // loop(x) in a `for ... recursive` body: bounded when x is a part of the
  // item (x.children, x['items'], x|dictsort), since data nests finitely.
  Value RecursiveLoopCall(const Expr& e, NodeId id) {
    if (loops_.empty() || !loops_.back().recursive) return Computed(kStr);
    NodeId arg = e.args_count > 0 ? p_.args[e.args_begin].value : kNoNode;
    bool part = false;
    bool wrapped = false;
    int steps = 0;
    while (arg != kNoNode && steps++ < 300) {
      const Expr& x = p_.expr(arg);
      if (x.kind == ExprKind::kGetAttr || x.kind == ExprKind::kGetItem || x.kind == ExprKind::kSlice) {
        wrapped = true;
        arg = x.a;
      } else if (x.kind == ExprKind::kFilter || (x.kind == ExprKind::kCall && x.a != kNoNode &&
                                                 p_.expr(x.a).kind == ExprKind::kGetAttr)) {
        arg = x.kind == ExprKind::kFilter ? x.a : p_.expr(x.a).a;
        wrapped = true;
      } else {
        if (x.kind == ExprKind::kName) {
          for (std::string_view t : loops_.back().targets) part = part || t == x.name;
        }
        break;
      }
    }
    (void)wrapped;
    if (!part) {
      Emit(Kind::kUnboundedRecursion, e.begin,
           absl::StrCat(ExprText(id), ": loop() on something that is not a part of the loop's item: nothing ends it"));
    }
    return Data(kStr);
  }

  Value Range(const Expr& e, const std::vector<Value>& args, NodeId id) {
    std::vector<const Value*> pos;
    for (uint32_t i = 0; i < e.args_count; ++i) {
      if (p_.args[e.args_begin + i].name.empty() && p_.args[e.args_begin + i].star == 0) pos.push_back(&args[i]);
    }
    double start = 0, stop = 0, step = 1;
    bool exact = true;
    auto get = [&](const Value* v, double* out) {
      if (IsExactNum(*v)) *out = v->number;
      else exact = false;
    };
    if (pos.size() == 1) get(pos[0], &stop);
    if (pos.size() >= 2) get(pos[0], &start), get(pos[1], &stop);
    if (pos.size() >= 3) get(pos[2], &step);
    Value v = Data(kOther);
    v.items_numbers = true;
    if (!exact || pos.empty() || step == 0) {
      // Unknown bounds: a bound from the request is the request's size; a
      // template-made one may be anything.
      for (const Value* a : pos) MergeOrigin(&v, *a);
      return v;
    }
    const double n = std::max(0.0, std::ceil((stop - start) / step));
    CheckCount(n, id, "a range");
    v.size = n;
    return v;
  }

  Value Method(const Value& obj, std::string_view m, const Expr& e, const std::vector<Value>& args, NodeId id,
               NodeId obj_expr, const Value& attr) {
    const Value* a0 = args.empty() ? nullptr : &args[0];
    const Value* a1 = args.size() > 1 ? &args[1] : nullptr;
    if (obj.origin == Origin::kRoot) return attr.origin == Origin::kRoot && attr.root == "loop.cycle"
                                                ? EvalRootCall(attr, args)
                                                : Data();
    // Mutation: the list or dict is no longer what its literal said.
    if (m == "append" || m == "extend" || m == "insert" || m == "update" || m == "setdefault" || m == "pop" ||
        m == "remove" || m == "clear" || m == "reverse" || m == "sort") {
      // The receiver: a variable, or a namespace attribute (`ns.l.append(x)`,
      // whose slot is shared), and every slot aliased to it (`{% set b = a
      // %}`).
      const std::string receiver = SlotOf(obj_expr);
      if (receiver.find('\x01') != std::string::npos) {
        for (const Value& a : args) NoteNamespaceValue(a);  // a namespace attribute's list or dict
      }
      // A receiver that is no variable of the template's own literal (a
      // subscript, the request's list, a macro's parameter, which is the
      // caller's): what it receives may come out of any loop.
      const Value* bound = receiver.empty() ? nullptr : Lookup(receiver);
      if (bound == nullptr || IsMacroParameter(receiver) || (!bound->items_exact && bound->origin == Origin::kData)) {
        for (const Value& a : args) {
          untracked_mutations_ = true;
          // Literal strings (or a literal list's) are kept for the name
          // checks; a root or a template-made value taints every element.
          std::vector<std::string> strs;
          const bool fit = LiteralStrings(a, &strs);
          if (!fit || !AddStrings(&untracked_mutation_.strs, strs, kMaxStrings)) MergeOrigin(&untracked_mutation_, Computed());
          if (a.origin != Origin::kData) MergeOrigin(&untracked_mutation_, a);
        }
      }
      std::vector<std::string> vars;
      if (auto it = alias_group_.find(receiver); it != alias_group_.end()) {
        vars = alias_groups_[it->second];
      } else if (!receiver.empty()) {
        vars.push_back(receiver);
      }
      for (const std::string& var : vars) {
        if (const Value* cur = Lookup(var)) {
          Value v = Widen(*cur);
          v.mask = cur->mask;
          for (const Value& a : args) {
            if (Spelled(a) || a.items_exact) MergeOrigin(&v, Computed());
            MergeOrigin(&v, a);
          }
          // Once widened a list stays so: the next mutation changes nothing.
          if (!SameValue(v, *cur)) Assign(var, std::move(v), /*shared=*/true);
        }
      }
      return Data(kOther);
    }
    if (m == "format") return FormatMethod(obj, e, args, id);
    if (m == "join" && a0) {
      if (IsExactStr(obj) && a0->items_exact && !a0->items_numbers) {
        return MapStrings(obj, [&](const std::string& sep) { return JoinItems(a0->items, sep); });
      }
      return Derived2(obj, *a0, kStr);
    }
    if (m == "replace" && a0 && a1 && IsExactStr(*a0) && IsExactStr(*a1) && a0->strs.size() == 1 && a1->strs.size() == 1) {
      const long long count = static_cast<long long>(ExactOr(args.size() > 2 ? &args[2] : nullptr, -1));
      return MapStrings(obj, [&](const std::string& s) { return Replace(s, a0->strs[0], a1->strs[0], count); });
    }
    if (m == "center" || m == "ljust" || m == "rjust" || m == "zfill" || m == "expandtabs") {
      const double w = ExactOr(a0, 0);
      CheckOutputSize(m == "expandtabs" ? w * std::max(obj.size, 1.0) : w, id);
      if (w > kMaxStringBytes) return Derived(obj, kStr);
      char fill = m == "zfill" ? '0' : ' ';
      if (a1 && IsExactStr(*a1) && a1->strs.size() == 1 && a1->strs[0].size() == 1) fill = a1->strs[0][0];
      if (m == "expandtabs") return Derived(obj, kStr);
      const char align = m == "center" ? '^' : m == "ljust" ? '<' : '>';
      return MapStrings(obj, [&](const std::string& s) { return Pad(s, static_cast<size_t>(std::max(w, 0.0)), fill, align); });
    }
    if (m == "lower") return MapStrings(obj, [](const std::string& s) { return ToLower(s); });
    if (m == "upper") return MapStrings(obj, [](const std::string& s) { return ToUpper(s); });
    if (m == "title") return MapStrings(obj, [](const std::string& s) { return Title(s); });
    if (m == "capitalize") return MapStrings(obj, [](const std::string& s) { return Capitalize(s); });
    if (m == "swapcase") {
      return MapStrings(obj, [](const std::string& s) {
        std::string o = s;
        for (char& c : o) c = (c >= 'a' && c <= 'z') ? static_cast<char>(c - 32) : (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
        return o;
      });
    }
    if (m == "strip" || m == "lstrip" || m == "rstrip") {
      const std::string chars = a0 && IsExactStr(*a0) && a0->strs.size() == 1 ? a0->strs[0] : "";
      return MapStrings(obj, [&](const std::string& s) { return Strip(s, chars, m != "rstrip", m != "lstrip"); });
    }
    if (m == "split" || m == "splitlines") return Derived(obj, kOther);
    if (m == "items" || m == "keys" || m == "values" || m == "copy") return Members(obj);
    // dict.get of a literal key reads that key (never a method).
    if (m == "get" && obj.keyed && a0 && IsExactStr(*a0) && a0->strs.size() == 1) {
      return Join(FieldOf(obj, a0->strs[0]), a1 ? *a1 : Data());
    }
    if (m == "get" || m == "pop") return a1 ? Join(ReadOf(obj), *a1) : ReadOf(obj);
    if (m == "startswith" || m == "endswith" || m == "isdigit" || m == "isalpha" || m == "count" || m == "find" ||
        m == "index") {
      return Bool(-1);
    }
    return Derived(obj);
  }

  Value EvalRootCall(const Value& fn, const std::vector<Value>& args) {
    Value v = Data(kStr);
    (void)fn;
    for (const Value& a : args) {
      if (IsExactStr(a)) v = Join(v, a);
    }
    return v;
  }

  static std::string JoinItems(const std::vector<std::string>& items, std::string_view sep) {
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) out += sep;
      out += items[i];
      if (out.size() > kMaxStringBytes) break;
    }
    return out;
  }

  // --- formatting: printf style (% and |format) and str.format ---

  // Checks widths/precisions against the output limit; folds when it can.
  Value Format(const Value& fmt, std::vector<Value> args, NodeId id, bool percent) {
    if (percent && args.size() == 1 && args[0].items_exact && args[0].mask == kOther) {
      // a tuple of exact values
      std::vector<Value> expanded;
      for (const std::string& s : args[0].items) expanded.push_back(args[0].items_numbers ? Num(std::stod(s)) : Str(s, true));
      args = std::move(expanded);
    }
    if (!IsExactStr(fmt)) {
      Value v = Derived(fmt, kStr);
      for (const Value& a : args) MergeOrigin(&v, a);
      return v;
    }
    bool exact = true;
    Value result = MapStrings(fmt, [&](const std::string& f) {
      std::string out;
      size_t next_arg = 0;
      for (size_t i = 0; i < f.size(); ++i) {
        if (f[i] != '%') {
          out += f[i];
          continue;
        }
        ++i;
        if (i < f.size() && f[i] == '%') {
          out += '%';
          continue;
        }
        if (i < f.size() && f[i] == '(') {  // %(name)s: mapping keys are not followed
          exact = false;
          const size_t close = f.find(')', i);
          if (close == std::string::npos) break;
          i = close + 1;
        }
        std::string flags;
        while (i < f.size() && std::string_view("-+ #0").find(f[i]) != std::string_view::npos) flags += f[i++];
        double width = 0, precision = -1;
        auto number = [&](double* out_n) {
          if (i < f.size() && f[i] == '*') {
            ++i;
            const Value* a = next_arg < args.size() ? &args[next_arg++] : nullptr;
            *out_n = ExactOr(a, 0);
            if (!a || !IsExactNum(*a)) exact = false;
            return;
          }
          double n = 0;
          while (i < f.size() && f[i] >= '0' && f[i] <= '9') n = n * 10 + (f[i++] - '0');
          *out_n = n;
        };
        number(&width);
        if (i < f.size() && f[i] == '.') {
          ++i;
          number(&precision);
        }
        while (i < f.size() && std::string_view("hlL").find(f[i]) != std::string_view::npos) ++i;
        CheckOutputSize(std::max(width, precision), id);
        if (i >= f.size()) break;
        const char conv = f[i];
        const Value* a = next_arg < args.size() ? &args[next_arg++] : nullptr;
        std::string piece;
        std::vector<std::string> s;
        if (!a) {
          exact = false;
        } else if (conv == 'c') {
          if (IsExactInt(*a) && a->number >= 0 && a->number < 0x110000) {
            lexer_append_utf8(&piece, static_cast<uint32_t>(a->number));
          } else if (IsExactStr(*a) && a->strs.size() == 1) {
            piece = a->strs[0];
          } else {
            exact = false;
          }
        } else if (conv == 'x' || conv == 'X' || conv == 'o') {
          if (IsExactInt(*a)) {
            char buf[32];
            std::snprintf(buf, sizeof buf, conv == 'x' ? "%llx" : conv == 'X' ? "%llX" : "%llo", static_cast<long long>(a->number));
            piece = buf;
          } else {
            exact = false;
          }
        } else if (ExactStrings(*a, &s) && s.size() == 1) {
          piece = s[0];
        } else {
          exact = false;
        }
        if (width > 0 && width <= kMaxStringBytes) {
          piece = Pad(piece, static_cast<size_t>(width), flags.find('0') != std::string::npos ? '0' : ' ',
                      flags.find('-') != std::string::npos ? '<' : '>');
        }
        out += piece;
        if (out.size() > kMaxStringBytes) break;
      }
      return out;
    });
    if (!exact) {
      Value v = Computed(kStr);
      for (const Value& a : args) {
        if (a.origin == Origin::kData && !Spelled(a)) v = Data(kStr);
      }
      return v;
    }
    return result;
  }

  // str.format: fields {}, {0}, {name}, with .attr / [key] lookups (which
  // reach attributes like getattr) and specs whose widths are checked.
  Value FormatMethod(const Value& fmt, const Expr& e, const std::vector<Value>& args, NodeId id) {
    std::vector<Value> positional;
    std::vector<std::pair<std::string_view, Value>> named;
    for (uint32_t i = 0; i < e.args_count; ++i) {
      const Arg& a = p_.args[e.args_begin + i];
      if (a.star) continue;
      if (a.name.empty()) positional.push_back(args[i]);
      else named.push_back({a.name, args[i]});
    }
    if (!IsExactStr(fmt)) {
      if (fmt.origin != Origin::kData) {
        Emit(Kind::kComputedName, Begin(id), absl::StrCat(ExprText(id), ": a format string computed at render time"));
      }
      return Derived(fmt, kStr);
    }
    bool exact = true;
    Value result = MapStrings(fmt, [&](const std::string& f) {
      std::string out;
      size_t auto_index = 0;
      for (size_t i = 0; i < f.size(); ++i) {
        const char c = f[i];
        if (c == '}' ) {
          out += '}';
          if (i + 1 < f.size() && f[i + 1] == '}') ++i;
          continue;
        }
        if (c != '{') {
          out += c;
          continue;
        }
        if (i + 1 < f.size() && f[i + 1] == '{') {
          out += '{';
          ++i;
          continue;
        }
        // The field up to its matching '}' (specs may nest one level).
        size_t j = i + 1;
        int depth = 1;
        while (j < f.size() && depth > 0) {
          if (f[j] == '{') ++depth;
          if (f[j] == '}') --depth;
          if (depth > 0) ++j;
        }
        const std::string field = f.substr(i + 1, j - i - 1);
        i = j;
        const size_t colon = field.find(':');
        std::string head = field.substr(0, colon);
        const std::string spec = colon == std::string::npos ? "" : field.substr(colon + 1);
        const size_t bang = head.find('!');
        if (bang != std::string::npos) head.resize(bang);
        const size_t lookup = head.find_first_of(".[");
        const std::string arg_name = head.substr(0, lookup);
        if (lookup != std::string::npos) {
          // '{0.__class__}': str.format walks attributes like getattr.
          Value path = Str(head.substr(lookup), true);
          std::string names;
          for (char ch : head.substr(lookup)) names += (ch == '[' || ch == ']') ? '.' : ch;
          Value comps = Str(names.substr(1), true);
          CheckAttributePath(comps, Data(), id);
          exact = false;
        }
        // Width and precision: digit runs in the spec.
        double longest = 0, n = 0;
        for (char ch : spec) {
          if (ch >= '0' && ch <= '9') {
            n = n * 10 + (ch - '0');
            longest = std::max(longest, n);
          } else {
            n = 0;
          }
        }
        CheckOutputSize(longest, id);
        const Value* a = nullptr;
        if (arg_name.empty()) {
          a = auto_index < positional.size() ? &positional[auto_index] : nullptr;
          ++auto_index;
        } else if (arg_name.find_first_not_of("0123456789") == std::string::npos) {
          const size_t k = std::stoul(arg_name.substr(0, 6));
          a = k < positional.size() ? &positional[k] : nullptr;
        } else {
          for (auto& [nm, v] : named) {
            if (nm == arg_name) a = &v;
          }
        }
        std::vector<std::string> s;
        if (!a || !ExactStrings(*a, &s) || s.size() != 1 || spec.find('{') != std::string::npos) {
          exact = false;
          continue;
        }
        std::string piece = s[0];
        // [[fill]align][width]: enough for '{:_^11}'.format('globals').
        if (!spec.empty()) {
          size_t k = 0;
          char fill = ' ', align = a->mask == kNum ? '>' : '<';
          if (spec.size() >= 2 && std::string_view("<>^=").find(spec[1]) != std::string_view::npos) {
            fill = spec[0], align = spec[1], k = 2;
          } else if (std::string_view("<>^=").find(spec[0]) != std::string_view::npos) {
            align = spec[0], k = 1;
          }
          double w = 0;
          while (k < spec.size() && spec[k] >= '0' && spec[k] <= '9') w = w * 10 + (spec[k++] - '0');
          if (w <= kMaxStringBytes) piece = Pad(piece, static_cast<size_t>(w), fill, align == '=' ? '>' : align);
        }
        out += piece;
        if (out.size() > kMaxStringBytes) break;
      }
      return out;
    });
    if (!exact) {
      Value v = Computed(kStr);
      bool data = false;
      for (const Value& a : args) data = data || (a.origin == Origin::kData && !Spelled(a));
      return data ? Data(kStr) : v;
    }
    return result;
  }

  static void lexer_append_utf8(std::string* out, uint32_t cp) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else {
      out->append("\xef\xbf\xbd");  // non-ASCII never builds a Python attribute name
    }
  }

  // --- filters ---

  Value EvalFilter(const Expr& e, NodeId id, const Value& base) {
    const std::vector<Value> args = EvalArgs(e);
    const std::string_view f = e.name;
    const Value* a0 = args.empty() ? nullptr : &args[0];
    auto name_arg = [&](size_t index, std::string_view kw) -> NodeId { return ArgExpr(e, index, kw); };
    if (f == "attr") {
      Emit(Kind::kAttrFilter, e.name_at, ExprText(id));
      if (a0) return Attribute(base, *a0, id, e.a, /*attribute=*/true);
      return Computed();
    }
    if (f == "map" || f == "select" || f == "reject") {
      const Value* first = ArgValue(e, args, 0, "");
      if (first && IsExactStr(*first) &&
          std::find(first->strs.begin(), first->strs.end(), "attr") != first->strs.end()) {
        Emit(Kind::kAttrFilter, e.name_at, ExprText(id));
        if (const Value* n = ArgValue(e, args, 1, "")) CheckName(*n, ElementOf(base), name_arg(1, ""), true);
      } else if (first && !first->exact && first->origin != Origin::kData) {
        Emit(Kind::kComputedName, e.begin, absl::StrCat(ExprText(id), ": a filter name computed at render time"));
      }
    }
    for (std::string_view kw : {"attribute"}) {
      if (const Value* path = ArgValue(e, args, SIZE_MAX, kw)) CheckAttributePath(*path, ElementOf(base), name_arg(SIZE_MAX, kw));
    }
    if (f == "selectattr" || f == "rejectattr" || f == "groupby") {
      if (const Value* path = ArgValue(e, args, 0, "")) CheckAttributePath(*path, ElementOf(base), name_arg(0, ""));
    }
    if (f == "string" || f == "tojson" || f == "pprint" || f == "e" || f == "escape" || f == "safe" ||
        f == "forceescape") {
      std::vector<std::string> s;
      if (ExactStrings(base, &s)) return MapStrings(base, [](const std::string& x) { return x; });
      if (base.origin == Origin::kRoot) return Computed(kStr);  // an object's repr
      return Derived(base, kStr);
    }
    if (f == "lower") return MapStrings(base, [](const std::string& s) { return ToLower(s); });
    if (f == "upper") return MapStrings(base, [](const std::string& s) { return ToUpper(s); });
    if (f == "title") return MapStrings(base, [](const std::string& s) { return Title(s); });
    if (f == "capitalize") return MapStrings(base, [](const std::string& s) { return Capitalize(s); });
    if (f == "trim") {
      const std::string chars = a0 && IsExactStr(*a0) && a0->strs.size() == 1 ? a0->strs[0] : "";
      return MapStrings(base, [&](const std::string& s) { return Strip(s, chars, true, true); });
    }
    if (f == "reverse") {
      if (base.items_exact) {
        Value v = base;
        std::reverse(v.items.begin(), v.items.end());
        return v;
      }
      return MapStrings(base, [](const std::string& s) { return std::string(s.rbegin(), s.rend()); });
    }
    if (f == "replace" && args.size() >= 2) {
      if (IsExactStr(args[0]) && IsExactStr(args[1]) && args[0].strs.size() == 1 && args[1].strs.size() == 1) {
        const long long count = static_cast<long long>(ExactOr(args.size() > 2 ? &args[2] : nullptr, -1));
        return MapStrings(base, [&](const std::string& s) { return Replace(s, args[0].strs[0], args[1].strs[0], count); });
      }
      return Derived2(base, args[1], kStr);
    }
    if (f == "center" || f == "indent") {
      const double w = ExactOr(a0, f == "center" ? 80 : 4);
      CheckOutputSize(f == "indent" ? w * std::max(base.size / 40, 1.0) : w, id);
      if (f == "center" && w <= kMaxStringBytes) {
        return MapStrings(base, [&](const std::string& s) { return Pad(s, static_cast<size_t>(std::max(w, 0.0)), ' ', '^'); });
      }
      return Derived(base, kStr);
    }
    if (f == "batch" || f == "slice") {
      CheckCount(ExactOr(a0, 0), id, f == "batch" ? "batches" : "slices");
      return Derived(base, kOther);
    }
    if (f == "wordwrap" || f == "truncate") {
      return Derived(base, kStr);
    }
    if (f == "format") return Format(base, args, id, /*percent=*/false);
    if (f == "join") {
      const std::string sep = a0 && IsExactStr(*a0) && a0->strs.size() == 1 ? a0->strs[0] : "";
      const bool sep_known = !a0 || (IsExactStr(*a0) && a0->strs.size() == 1) || ArgValue(e, args, SIZE_MAX, "attribute");
      if (base.items_exact && sep_known && !ArgValue(e, args, SIZE_MAX, "attribute")) {
        return Str(JoinItems(base.items, sep), true);
      }
      if (IsExactStr(base) && sep_known) {
        return MapStrings(base, [&](const std::string& s) {
          std::vector<std::string> chars;
          for (char c : s) chars.emplace_back(1, c);
          return JoinItems(chars, sep);
        });
      }
      Value v = Derived(base, kStr);
      if (a0) MergeOrigin(&v, Derived(*a0));
      if (v.origin == Origin::kRoot) v = Computed(kStr);
      return v;
    }
    if (f == "list") {
      if (IsExactStr(base) && base.strs.size() == 1) {
        Value v;
        v.mask = kOther;
        v.items_exact = true;
        for (char c : base.strs[0]) v.items.emplace_back(1, c);
        v.size = static_cast<double>(v.items.size());
        return v;
      }
      Value v = base;
      v.mask = kOther;
      v.exact = false;
      v.spelled = Spelled(base);  // a string's characters are still the literal's
      v.strs.clear();
      return v;
    }
    if (f == "first" || f == "last") {
      if (base.items_exact && !base.items.empty() && !base.items_numbers) {
        return WithUntrackedMutations(Str(f == "first" ? base.items.front() : base.items.back(), true));
      }
      if (IsExactStr(base)) {
        return MapStrings(base, [&](const std::string& s) {
          return s.empty() ? std::string() : std::string(1, f == "first" ? s.front() : s.back());
        });
      }
      return ElementOf(base);
    }
    if (f == "default" || f == "d") return a0 ? Join(base, *a0) : base;
    if (f == "length" || f == "count" || f == "wordcount" || f == "int" || f == "float" || f == "abs" ||
        f == "round" || f == "sum" || f == "filesizeformat") {
      if (f == "length" || f == "count") {
        if (IsExactStr(base) && base.strs.size() == 1) return Num(static_cast<double>(base.strs[0].size()));
        if (base.items_exact) return Num(static_cast<double>(base.items.size()));
      }
      return Derived(base, kNum);
    }
    if (f == "unique" || f == "sort" || f == "dictsort" || f == "items" || f == "map" || f == "select" ||
        f == "reject" || f == "selectattr" || f == "rejectattr" || f == "groupby") {
      // They pick and reorder members; map with a filter name makes new ones.
      const Value* mapped = f == "map" ? ArgValue(e, args, 0, "") : nullptr;
      Value v = mapped ? Derived(base, kOther) : Members(base);
      if (base.items_exact && (f == "unique" || f == "sort")) {
        v = base;
        if (f == "sort") std::sort(v.items.begin(), v.items.end());
      }
      return v;
    }
    Value v = Derived(base);
    if (base.origin == Origin::kRoot) v = Computed();
    return v;
  }

  struct Loop {
    std::vector<std::string_view> targets;
    bool recursive = false;
    double product = 1;  // iterations of this and the enclosing loops, where known
    bool known = true;   // every enclosing count is a constant
  };

  const Program& p_;
  std::string_view src_;
  const TemplateScanOptions& opts_;
  TemplateScan* out_;
  int64_t budget_;
  absl::flat_hash_set<uint64_t> seen_;
  absl::flat_hash_map<std::string, Value> vars_;
  std::vector<Entry> journal_;
  absl::flat_hash_map<std::string_view, NodeId> macros_;
  // Slots set from one another (`{% set b = a %}`), grouped, for mutations
  // through an alias (Alias()).
  static constexpr size_t kMaxAliasGroup = 16;
  static constexpr size_t kMaxAliasSlots = 4096;
  absl::flat_hash_map<std::string, uint32_t> alias_group_;
  std::vector<std::vector<std::string>> alias_groups_;
  // What mutations through receivers no slot names added (untracked_mutations_
  // once there is one): every loop's element may be it.
  bool untracked_mutations_ = false;
  Value untracked_mutation_;
  // What namespace attributes were set to through a name other than the one
  // the namespace was made as, by attribute name.
  absl::flat_hash_map<std::string, Value> untracked_namespace_attributes_;
  absl::flat_hash_map<NodeId, std::vector<Value>> call_params_;
  absl::flat_hash_map<NodeId, std::vector<Value>> pending_params_;
  std::vector<Edge> edges_;
  std::vector<Loop> loops_;
  NodeId current_macro_ = kNoNode;
  NodeId calling_ = kNoNode;
  int cond_depth_ = 0;
  size_t emitted_ = 0;
};

}  // namespace

void Analyse(const Program& program, std::string_view source, const TemplateScanOptions& options, TemplateScan* out) {
  Analyser(program, source, options, out).Run();
}

}  // namespace ggufguard::jinja
