// The value lattice: constructors, join, widen. See value.h.
#include "ggufguard/template/value.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "ggufguard/template/object_model.h"
#include "ggufguard/template/python_str.h"

namespace ggufguard::jinja::analysis {

static bool SameStrings(const std::vector<std::string>& a, const std::vector<std::string>& b);
static void JoinFields(const Value& a, const Value& b, Value* v);

Value Data(uint8_t mask) {
  Value v;
  v.mask = mask;
  return v;
}
Value Computed(uint8_t mask) {
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
  v.extent.bound = v.size;
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
  v.extent.bound = Magnitude(n);
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
Value Derived(const Value& a, uint8_t mask) {
  // A number made from literals (a counter: `state.i + 1`) names nothing;
  // only formatting it (%c) can make a name, so it stays spelled for that.
  if (mask == kNum && a.origin == Origin::kData) {
    Value v = Data(kNum);
    v.spelled = Spelled(a) || a.items_exact;
    v.extent = a.extent;
    return v;
  }
  Value v = Spelled(a) || a.items_exact ? Computed(mask) : Data(mask);
  if (a.origin != Origin::kData) MergeOrigin(&v, a);
  v.extent = a.extent;  // made from it: no larger (the operations that grow set their own)
  return v;
}
// Has `s` the makings of a name the checks look for, whole or in pieces:
// an underscore name, a format field, the attr filter (in any case)?
static bool MakingsOfAName(std::string_view s) {
  return s.find_first_of("_{%") != std::string_view::npos || ToLower(std::string(s)).find("attr") != std::string::npos;
}
static bool AnyMakingsOfAName(const std::vector<std::string>& strs) {
  return std::any_of(strs.begin(), strs.end(), [](const std::string& s) { return MakingsOfAName(s); });
}

// Adds `from` to the strings `v` may be. Past kMaxStrings they are no
// longer followed one by one: then `v` is template-made, unless none of
// them has the makings of a name, when it stays what it was, spelled
// (Llama Guard 3's thirteen category names, iterated and read back by key,
// are no computed name).
static void AddPossibleStrs(Value* v, const std::vector<std::string>& from) {
  if (AddStrings(&v->strs, from, kMaxStrings)) return;
  if (AnyMakingsOfAName(v->strs) || AnyMakingsOfAName(from)) {
    MergeOrigin(v, Computed());
  } else {
    v->spelled = true;
  }
}

// Could a piece of one of `v`'s literals (a substring, re-cased, with
// `added` put in) be a name the checks look for: an underscore name, a
// format field, the attr filter? Only if the literal has the makings of one.
static bool PiecesMaySpellAName(const Value& v, std::string_view added) {
  std::vector<std::string> literals;
  if (!LiteralStrings(v, &literals)) return true;  // too many to look at
  // Spelled, but by no string it shows (a number for %c, a literal's
  // member): the pieces are not known, so they may be anything.
  if (literals.empty()) return true;
  return MakingsOfAName(added) || AnyMakingsOfAName(literals);
}

// A piece of the request's value, or of a literal that has no makings of
// a name, is the request's: cutting a JSON pointer out of a schema's $ref
// whose other possible values are 'any' and 'type' builds nothing (GigaChat
// 3.5's json_schema_to_typescript). Anything else is Derived.
Value PieceOf(const Value& a, uint8_t mask, std::string_view added) {
  if (a.origin == Origin::kData && Spelled(a) && !PiecesMaySpellAName(a, added)) {
    Value v = Data(mask);
    v.extent = a.extent;
    return v;
  }
  return Derived(a, mask);
}

// Of two operands, the known one adds nothing: i + 1 with i from the
// request is the request's. Only when both are known (and not folded) is
// the result template-made.
Value Derived2(const Value& a, const Value& b, uint8_t mask) {
  const bool a_known = a.exact || a.items_exact, b_known = b.exact || b.items_exact;
  Value v = a_known && !b_known ? Derived(Data(), mask) : Derived(a, mask);
  Value w = b_known && !a_known ? Derived(Data(), mask) : Derived(b, mask);
  MergeOrigin(&v, w);
  v.extent = SumOf(a.extent, b.extent);  // at most both together
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
  AddPossibleStrs(&e, strs);
  return e;
}

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
Value ReadOf(const Value& obj, std::string_view name) {
  Value v = Data();
  MergeOrigin(&v, obj);
  if (obj.keyed) {  // any of its values, or what the values it was joined with give
    for (const Field& f : obj.fields) v = Join(v, f.value);
    for (const Value& r : obj.rest) v = Join(v, ReadOf(r, name));
    if (name.empty() && !obj.fields.empty()) {
      // Any member is a key too: iterating a dict gives its keys (`{% for
      // k in d %}` of a dict literal joined with the request's value).
      std::vector<std::string> keys;
      for (const Field& f : obj.fields) keys.push_back(f.key);
      v = WithPossibleStrs(std::move(v), keys);
      v.spelled = true;
    }
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
static void JoinFields(const Value& a, const Value& b, Value* v) {
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
  v.extent = EitherOf(a.extent, b.extent);
  // A number literal has no text to read a number from.
  auto text = [](const Value& x) { return IsExactNum(x) ? 0.0 : TextBound(x); };
  if (const double t = std::max(text(a), text(b)); t < v.extent.bound) v.text_bound = t;
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
        std::vector<std::string> all = std::move(v.strs);
        v.strs.clear();
        AddPossibleStrs(&v, all);
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
      if (x->mask & kStr) AddPossibleStrs(&v, x->strs);
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
  v.facts = JoinFacts(a.facts, b.facts);
  return v;
}

bool SameFacts(const Facts& a, const Facts& b) {
  if (a.reads != b.reads || a.trigger != b.trigger || a.frags.size() != b.frags.size()) {
    return false;
  }
  for (uint32_t id : a.frags) {
    if (std::find(b.frags.begin(), b.frags.end(), id) == b.frags.end()) return false;
  }
  return true;
}

Facts JoinFacts(const Facts& a, const Facts& b) {
  Facts f = a;
  f.reads |= b.reads;
  if (f.trigger == 0) f.trigger = b.trigger;
  for (uint32_t id : b.frags) {
    if (f.frags.size() >= kMaxFragments) break;
    if (std::find(f.frags.begin(), f.frags.end(), id) == f.frags.end()) f.frags.push_back(id);
  }
  return f;
}

// The same strings, in any order: a join lists them as it meets them.
static bool SameStrings(const std::vector<std::string>& a, const std::vector<std::string>& b) {
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
  if (!SameFacts(a.facts, b.facts)) return false;
  return a.rest.empty() || SameValue(a.rest[0], b.rest[0]);
}

// Unknown, but keeps the mask and the worst origin: what a loop-carried
// value is once it stops settling. One that may hold a literal is
// template-made (its strings are not followed further).
Value Widen(const Value& a) {
  Value v = a.origin == Origin::kData && !Spelled(a) ? Data(a.mask) : Computed(a.mask);
  MergeOrigin(&v, a);
  v.extent = a.extent;
  v.facts = a.facts;
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

int Truth(const Value& v) {
  if (!v.exact) return -1;
  if (v.mask == kStr) {
    bool all = true, none = true;
    for (const std::string& s : v.strs) (s.empty() ? all : none) = false;
    return all ? 1 : none ? 0 : -1;
  }
  return v.number != 0 ? 1 : 0;
}

// What a container literal keeps of an element that is not one exact
// string (see EvalContainer); nested literal containers are not followed.
void AddElement(Value* c, const Value& x) {
  if (!x.exact && !AddStrings(&c->maybe_items, x.strs, 4 * kMaxStrings)) MergeOrigin(c, Computed());
  c->spelled = c->spelled || x.spelled;
  // A nested container holding one: what it holds is held here too.
  if (HoldsJoinedLiteral(x) && !HeldStrings(x, &c->maybe_items)) MergeOrigin(c, Computed());
}

// Does container `x` hold a value that may be a literal or the request's?
bool HoldsJoinedLiteral(const Value& x) {
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
void AddField(Value* d, std::string k, const Value& x) {
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
Value KeyOf(const Value& obj, const std::string& k, bool attribute) {
  const bool method = In(kDictMethods, k);
  if (method && attribute) return BoundMethod();
  for (const Field& f : obj.fields) {
    if (f.key == k) return f.value;
  }
  return method ? Join(BoundMethod(), FieldOf(obj, k)) : FieldOf(obj, k);
}

bool IsDictLiteral(const Value& obj) { return obj.keyed && obj.rest.empty(); }  // rest: joined with other values

// A bound method, not called: it has no attribute but Python's own
// (dunders, which the name checks catch), and its repr is the template's,
// so it is spelled: stringifying it is template-made.
Value BoundMethod() {
  Value v = Data(kOther);
  v.spelled = true;
  return v;
}

}  // namespace ggufguard::jinja::analysis
