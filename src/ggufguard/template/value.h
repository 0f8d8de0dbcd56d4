// The value lattice of the template analyser: what an expression may be at
// render time, and how two possibilities join.
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
//
// Join is the least upper bound the interpreter takes where control flow
// meets (an if's branches, a loop's passes, a macro's call sites); Widen is
// where a value that keeps changing stops being followed. Every bound here
// (kMaxStrings, kMaxFields...) loses precision towards "template-made",
// which can only add findings.
#ifndef GGUFGUARD_TEMPLATE_VALUE_H_
#define GGUFGUARD_TEMPLATE_VALUE_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ggufguard/template/ast.h"
#include "ggufguard/template/extent.h"

namespace ggufguard::jinja::analysis {

constexpr size_t kMaxStrings = 8;         // exact candidates a value keeps
constexpr size_t kMaxStringBytes = 1024;  // longest exact string kept
constexpr size_t kMaxFields = 16;         // keys of a dict literal followed one by one

enum Mask : uint8_t { kStr = 1, kNum = 2, kOther = 4, kAny = 7 };
enum class Origin : uint8_t { kData = 0, kComputed = 1, kRoot = 2 };

struct Field;

// What the behaviour analysis (behaviour.h) knows of a value bound to a
// name: which parts of the request it reads (Reads bits), the condition on
// what a message says that it was made under or compares (the comparing
// expression + 1, 0 for none), and the pieces of text it may carry: literals,
// content, macro output (fragments of the Recorder's table, recorder.h, at
// most kMaxFragments). The value checks never read it; Join unites it, so a
// name set on two branches carries both.
constexpr size_t kMaxFragments = 32;

struct Facts {
  uint32_t reads = 0;
  uint32_t trigger = 0;
  std::vector<uint32_t> frags;
};

// The same facts, fragments in any order (a join lists them as it meets them).
bool SameFacts(const Facts& a, const Facts& b);

// Facts of a join: every read, the first trigger, every
// fragment up to the bound (a fragment past it is lost: the text it
// carries is listed nowhere, so the bound is far above real templates').
Facts JoinFacts(const Facts& a, const Facts& b);

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
  // How large it can get (extent.h): what the render-bomb checks measure.
  // Unlike `size`, an upper bound, and joins take the larger.
  Extent extent;
  // The bound of its text when it is a string, where a join made that
  // smaller than extent.bound (a number literal joined in: `n|default(64)`
  // is 64 as a number, a unit of request as text); -1 when it is
  // extent.bound. `int` and `float` read text as up to ten to the power of
  // its length, so they ask this (TextBound), not the number's magnitude.
  double text_bound = -1;
  Facts facts;                    // for the behaviour analysis only
};

struct Field {
  std::string key;
  Value value;
};

// --- constructors ---

Value Data(uint8_t mask = kAny);      // the request's
Value Computed(uint8_t mask = kAny);  // template-made, not followed
Value RootValue(std::string name);    // a Python object beyond chat data
Value Str(std::string s, bool built); // a literal (built: computed from literals)
Value Num(double n);
Value Bool(int truth);  // -1 unknown
// A bound method, not called: it has no attribute but Python's own
// (dunders, which the name checks catch), and its repr is the template's,
// so it is spelled: stringifying it is template-made.
Value BoundMethod();

inline bool IsExactStr(const Value& v) { return v.exact && v.mask == kStr; }
inline bool IsExactNum(const Value& v) { return v.exact && v.mask == kNum; }
inline double TextBound(const Value& v) { return v.text_bound >= 0 ? v.text_bound : v.extent.bound; }
inline bool IsExactInt(const Value& v) {
  return IsExactNum(v) && std::floor(v.number) == v.number && std::fabs(v.number) < 9e15;
}
// The exact integer `v` is, for an index; nullopt when `v` is absent or not one.
inline std::optional<long long> ExactIndex(const Value* v) {
  if (!v || !IsExactInt(*v)) return std::nullopt;
  return static_cast<long long>(v->number);
}
// Truth of an exact value: 1, 0, or -1 when it is not known.
int Truth(const Value& v);

// --- origins and literals ---

// The worse of two origins (root over computed over data).
void MergeOrigin(Value* into, const Value& from);
// May `v` be, or hold, a string or number the template spelled?
bool Spelled(const Value& v);
// Unknown result of an operation on `a` (and `b`).
Value Derived(const Value& a, uint8_t mask = kAny);
Value Derived2(const Value& a, const Value& b, uint8_t mask = kAny);
// Unknown piece of `a` (a slice, a split part, a stripped, re-cased or
// replaced copy) that may also contain `added` (replace's new text).
Value PieceOf(const Value& a, uint8_t mask, std::string_view added = {});
// Adds to `into` each of `from` it lacks, up to `bound` strings; false when
// some did not fit (the caller then treats the value as template-made).
bool AddStrings(std::vector<std::string>* into, const std::vector<std::string>& from, size_t bound);
// `e`, which may also be any of `strs`.
Value WithPossibleStrs(Value e, const std::vector<std::string>& strs);
// The literal strings `v` holds as members; false when they do not fit.
bool HeldStrings(const Value& v, std::vector<std::string>* out);
// Every literal string `v` may be or holds.
bool LiteralStrings(const Value& v, std::vector<std::string>* out);

// --- containers ---

// `v` without its fields (as for a dict literal of more than kMaxFields keys).
Value Unkeyed(Value v);
// What reading member `name` of `obj` gives when nothing more precise is
// known (any member when `name` is empty).
Value ReadOf(const Value& obj, std::string_view name = {});
// A container of `obj`'s members, rearranged.
Value Members(const Value& obj);
// Key `k` of `x`, as dict.get(k) reads it.
Value FieldOf(const Value& x, std::string_view k);
// Key `k` of a keyed value, read by name (attribute syntax or subscript).
Value KeyOf(const Value& obj, const std::string& k, bool attribute);
// Is `obj` only dict literals? Such a value is no root, whatever roots its
// values are ({'g': m} takes m's origin): its members are its values.
bool IsDictLiteral(const Value& obj);
// What a container literal keeps of an element that is not one exact string.
void AddElement(Value* c, const Value& x);
// Does container `x` hold a value that may be a literal or the request's?
bool HoldsJoinedLiteral(const Value& x);
// Sets key `k` of a keyed dict to `x`.
void AddField(Value* d, std::string k, const Value& x);

// --- the lattice ---

Value Join(const Value& a, const Value& b);
bool SameValue(const Value& a, const Value& b);
Value Widen(const Value& a);

// --- strings ---

// str() of an exact number as Python prints it; false when not exact.
bool NumberToString(double n, std::string* out);
// The exact strings `v` converts to with str(), or false.
bool ExactStrings(const Value& v, std::vector<std::string>* out);

// `f` applied to each of `in`, the exact strings of `v`.
template <typename F>
Value MapExactStrings(const std::vector<std::string>& in, const Value& v, F f) {
  Value out;
  out.mask = kStr;
  out.exact = true;
  out.built = true;
  out.size = 1e300;
  out.extent.bound = 0;
  out.extent.copies = v.extent.copies;  // a folded string function of it: as many copies
  for (const std::string& s : in) {
    std::string r = f(s);
    out.size = std::min(out.size, static_cast<double>(r.size()));
    out.extent.bound = std::max(out.extent.bound, static_cast<double>(r.size()));
    if (r.size() > kMaxStringBytes) return Computed(kStr);
    if (std::find(out.strs.begin(), out.strs.end(), r) == out.strs.end()) out.strs.push_back(std::move(r));
  }
  if (out.strs.empty()) out.size = 0;
  return out;
}

// Applies `f` to every exact string of `v`; inexact when any result is too long.
template <typename F>
Value MapStrings(const Value& v, F f) {
  std::vector<std::string> in;
  if (!ExactStrings(v, &in)) return Derived(v, kStr);
  return MapExactStrings(in, v, f);
}

// MapStrings for a function that only cuts, re-cases or replaces (with
// `added`): an inexact `v` gives PieceOf(v), not Derived(v).
template <typename F>
Value MapPieces(const Value& v, std::string_view added, F f) {
  std::vector<std::string> in;
  if (!ExactStrings(v, &in)) return PieceOf(v, kStr, added);
  return MapExactStrings(in, v, f);
}

}  // namespace ggufguard::jinja::analysis

#endif  // GGUFGUARD_TEMPLATE_VALUE_H_
