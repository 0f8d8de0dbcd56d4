// The interpreter: names, containers, attributes, subscripts, operators.
// See interpreter.h.
#include "ggufguard/template/interpreter.h"

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
#include "ggufguard/template/object_model.h"
#include "ggufguard/template/python_str.h"
#include "ggufguard/template/value.h"

namespace ggufguard::jinja::analysis {
namespace {

// The most items a slice with these literal bounds keeps whatever it cuts
// (a positive step): [:k] and [-k:] keep k, [a:b] of one sign b - a.
std::optional<double> SliceCap(std::optional<long long> from, std::optional<long long> to,
                               std::optional<long long> step) {
  if (!step || *step < 1) return std::nullopt;
  if (!from && to && *to >= 0) return static_cast<double>(*to);
  if (from && *from < 0 && !to) return static_cast<double>(-*from);
  if (from && to && (*from < 0) == (*to < 0)) return static_cast<double>(std::max(*to - *from, 0LL));
  return std::nullopt;
}

}  // namespace

Value Interpreter::Eval(NodeId id, const Value* filter_base) {
  if (id == kNoNode) return Data();
  --budget_;
  const Expr& e = p_.expr(id);
  switch (e.kind) {
    case ExprKind::kName: return EvalName(e, id);
    case ExprKind::kString: return Str(std::string(p_.text(e)), false);
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
      Value v = Subscript(obj, key, id, e.a);
      // One item: a character of a string, or one of a container's items,
      // which holds at most what the container holds of carried state.
      if (!v.exact && obj.origin != Origin::kRoot) {
        v.extent.bound = obj.mask == kStr ? 1 : obj.extent.element;
        v.extent.copies = obj.mask == kStr ? std::vector<Copies>{} : obj.extent.copies;
      }
      return v;
    }
    case ExprKind::kSlice: {
      const Value obj = Eval(e.a);
      const Value b = Eval(e.b), c = Eval(e.c), d = Eval(e.d);
      if (IsExactStr(obj)) {
        return MapStrings(obj, [&](const std::string& s) {
          return Slice(s, ExactIndex(e.b == kNoNode ? nullptr : &b), ExactIndex(e.c == kNoNode ? nullptr : &c),
                     ExactIndex(e.d == kNoNode ? nullptr : &d));
        });
      }
      Value v = PieceOf(obj, kAny);
      if (obj.origin == Origin::kRoot) v = RootValue(obj.root);
      // Literal bounds cap the length (`s[:80]`, `s[-1000:]`): then it holds
      // no copy of what it was cut from.
      if (const std::optional<double> cap = SliceCap(ExactIndex(e.b == kNoNode ? nullptr : &b),
                                                    ExactIndex(e.c == kNoNode ? nullptr : &c),
                                                    e.d == kNoNode ? std::optional<long long>(1) : ExactIndex(&d))) {
        v.extent.bound = std::min(v.extent.bound, *cap);
        v.extent.copies.clear();
      }
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
Value Interpreter::Unbound(const std::string& name, bool shared) const {
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
void Interpreter::Alias(const std::string& a, const std::string& b) {
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
std::string Interpreter::SlotOf(NodeId id) const {
  if (id == kNoNode) return "";
  const Expr& e = p_.expr(id);
  if (e.kind == ExprKind::kName) return std::string(e.name);
  if (e.kind == ExprKind::kGetAttr && e.a != kNoNode && p_.expr(e.a).kind == ExprKind::kName) {
    return NsKey(p_.expr(e.a).name, e.name);
  }
  return "";
}

Value Interpreter::EvalName(const Expr& e, NodeId id) {
  const std::string name(e.name);
  if (const Value* v = Lookup(name)) {
    if (v->macro != kNoNode || v->root == "caller") ValueUse(*v, id);
    return mutated_.contains(name) ? CarriedRead(name, *v) : *v;  // a list mutated in place is carried
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

// A macro or caller named other than in a call. A macro value is
// followed: a call through it is a call of each macro the template names
// as a value (CallThroughValue), so the call graph sees f(f)
// self-application as f calling f. A caller, or more macro values than
// are followed, can recurse without any call the graph can see.
void Interpreter::ValueUse(const Value& v, NodeId id) {
  if (calling_ == id) return;
  NoteRoot(v.root);
  if (v.macro != kNoNode && value_macros_.size() <= kMaxValueMacros) return;
  Emit(Kind::kUnboundedRecursion, Begin(id),
       absl::StrCat(EscapeForDisplay(v.root, 40), " used as a value: self-application can recurse without end"));
}

// A list, tuple or dict literal: its elements (a dict's keys) when they
// are all exact, and a dict's values by key. An element that may be a
// literal or the request's (`[x or 'Any']`), or a nested container holding
// one, keeps its strings in maybe_items.
Value Interpreter::EvalContainer(const Expr& e) {
  Value v;
  v.mask = kOther;
  v.items_exact = true;
  v.items_numbers = e.args_count > 0;
  const bool dict = e.kind == ExprKind::kDict;
  v.keyed = dict;
  std::string key;  // dict: the key of the value that follows, when it is a literal string
  std::vector<std::string> literal_strs;  // list or tuple: its elements that are literal strings
  bool key_known = false;
  Extent extent;  // the largest item (a dict's key), and every copy of carried state held
  extent.element = 0;
  for (uint32_t i = 0; i < e.args_count; ++i) {
    const Value x = Eval(p_.args[e.args_begin + i].value);
    MergeOrigin(&v, x);
    if (!dict || i % 2 == 0) extent.element = std::max(extent.element, x.extent.bound);
    AddCopies(&extent, x.extent, 1);
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
      if (!dict && IsExactStr(x)) literal_strs.push_back(s[0]);
    } else {
      v.items_exact = false;
      AddElement(&v, x);
    }
  }
  v.size = dict ? e.args_count / 2 : e.args_count;
  v.extent = extent;
  v.extent.bound = v.size;
  if (!v.items_exact) {
    // A list of literals and other values (`['__class__', m.role]`) may
    // still give its literal strings: keep them as items it may hold
    // (before, they went with `items`, and iterating gave the request's).
    if (!AddStrings(&v.maybe_items, literal_strs, 4 * kMaxStrings)) MergeOrigin(&v, Computed());
    v.items.clear();
  }
  return v;
}

// An attribute of a namespace: what `{% set ns.attr = ... %}` or
// namespace(attr=...) gave it when the namespace is reached by the name it
// was set through (and what it was set to through another name, which
// may be this namespace); otherwise
// (another name, a macro's parameter, a list, a key from the request)
// whatever any namespace attribute was set to.
Value Interpreter::NamespaceAttribute(NodeId obj_expr, std::string_view attr) {
  if (!attr.empty() && obj_expr != kNoNode && p_.expr(obj_expr).kind == ExprKind::kName) {
    const std::string key = NsKey(p_.expr(obj_expr).name, attr);
    if (const Value* v = Lookup(key)) {
      const auto it = untracked_namespace_attributes_.find(std::string(attr));
      return CarriedRead(key, it == untracked_namespace_attributes_.end() ? *v : Join(*v, it->second));
    }
  }
  const Value* any = Lookup(kAnyNamespaceAttribute);
  return any ? *any : Data();
}

// Records that some namespace attribute is set to `v`.
void Interpreter::NoteNamespaceValue(const Value& v) {
  const Value* cur = Lookup(kAnyNamespaceAttribute);
  Value j = Join(cur ? *cur : Data(), v);
  j.extent = Extent();  // for the name checks: no slot's carried state (bombs.cc)
  if (!cur || !SameValue(j, *cur)) Assign(kAnyNamespaceAttribute, std::move(j), /*shared=*/true);
}

Value Interpreter::Attribute(const Value& obj, const Value& name, NodeId at, NodeId obj_expr, bool attribute) {
  CheckName(name, obj, at, attribute);
  if (attribute && IsExactStr(name)) {
    for (const std::string& n : name.strs) {
      if (In(kDangerousAttributes, n)) Emit(Kind::kDangerousName, NameOffset(at), EscapeForDisplay(n, 40));
    }
  }
  const bool one = IsExactStr(name) && name.strs.size() == 1;
  // A dict of macros or helpers (`{'g': m}`, dispatch by name) is a dict:
  // a name reads its values or methods, not an attribute of a root.
  if (IsDictLiteral(obj)) return WithUntrackedMutations(one ? KeyOf(obj, name.strs[0], attribute) : ReadOf(obj));
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
      Value v = Data(kNum | kOther);  // index, length...: at most the loop's passes
      v.extent.bound = loops_.empty() ? 1 : loops_.back().passes + 1;
      return v;
    }
    return Data();
  }
  if (obj.keyed && one) return WithUntrackedMutations(KeyOf(obj, name.strs[0], attribute));
  return WithUntrackedMutations(ReadOf(obj, one ? std::string_view(name.strs[0]) : std::string_view()));
}

// One finding per chain (cycler.__init__.__globals__ reaches in once), and
// none for a dangerous name, which has its own.
void Interpreter::ReachInto(const Value& obj, NodeId at) {
  if (obj.reached || In(kDangerousNames, obj.root)) return;
  Emit(Kind::kGlobalsHelper, NameOffset(at), absl::StrCat(ExprText(at), ": reaches into ", EscapeForDisplay(obj.root, 40)));
}

Value Interpreter::Subscript(const Value& obj, const Value& key, NodeId at, NodeId obj_expr) {
  if (IsExactInt(key)) {
    const long long i = static_cast<long long>(key.number);
    if (IsExactStr(obj)) {
      if (i == -1) return MapStrings(obj, [&](const std::string& s) { return Slice(s, i, std::nullopt, std::nullopt); });
      return MapStrings(obj, [&](const std::string& s) { return Slice(s, i, i + 1, std::nullopt); });
    }
    if (obj.items_exact && !obj.items_numbers) {
      const long long n = static_cast<long long>(obj.items.size());
      const long long j = i < 0 ? i + n : i;
      if (j >= 0 && j < n) return WithUntrackedMutations(Str(obj.items[static_cast<size_t>(j)], true));
    }
  }
  // A namespace has no items: getitem falls back to getattr. A dict
  // literal's key is read as by name.
  if (obj.origin == Origin::kRoot && obj.root == "namespace()") return Attribute(obj, key, at, obj_expr, true);
  if (IsDictLiteral(obj)) return Attribute(obj, key, at, obj_expr, /*attribute=*/false);
  // An element of a list of macros (jamba's macros_to_call[i]): a number
  // names no attribute of a macro, and the element is called as a macro
  // value is (CallThroughValue).
  if (obj.origin == Origin::kRoot && obj.root.starts_with("macro:") && key.mask == kNum) return RootValue(obj.root);
  if (obj.origin == Origin::kRoot) {
    CheckName(key, obj, at, false);
    ReachInto(obj, at);
    Value v = RootValue(obj.root);
    v.reached = true;
    return v;
  }
  return Attribute(obj, key, at, obj_expr, /*attribute=*/false);
}

Value Interpreter::EvalConcat(const Expr& e, NodeId id) {
  std::vector<std::string> acc = {""};
  bool exact = true;
  double size = 0;
  Extent extent;  // every part side by side
  extent.bound = 0;
  Value origin = Data(kStr);
  for (uint32_t i = 0; i < e.args_count; ++i) {
    const Value v = Eval(p_.args[e.args_begin + i].value);
    size += v.size;
    extent = SumOf(extent, Printed(v));
    MergeOrigin(&origin, v);
    std::vector<std::string> parts;
    if (!exact || !ExactStrings(v, &parts)) {
      // A literal on either side makes the result template-made: `x ~
      // '_'` was, and `'__cla' ~ x` is now too (the literal prefix folded
      // so far was dropped, and the result read as the request's).
      const bool literal_before = exact && std::any_of(acc.begin(), acc.end(), [](const std::string& a) { return !a.empty(); });
      if (Spelled(v) || v.items_exact || literal_before) MergeOrigin(&origin, Computed());
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
  CheckOutputSize(extent.bound, id);
  if (exact) {
    Value v;
    v.mask = kStr;
    v.exact = true;
    v.built = true;
    v.strs = std::move(acc);
    v.size = size;
    v.extent = std::move(extent);
    return v;
  }
  // Unknown parts from data keep the string data; parts the template
  // knows make it template-made.
  Value v = origin.origin == Origin::kData ? Data(kStr) : Computed(kStr);
  if (origin.origin == Origin::kRoot) v = Computed(kStr);  // a root's repr: a string, not the object
  v.size = size;
  v.extent = std::move(extent);
  return v;
}

Value Interpreter::EvalBinary(const Expr& e, NodeId id) {
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
  const std::string_view op = e.name;
  if (op == "%" && a.mask == kStr && e.b != kNoNode && p_.expr(e.b).kind == ExprKind::kTuple) {
    // '%s %*d' % (x, w, y): each element is an argument of its own, with its
    // own value (a computed width among them).
    const Expr& t = p_.expr(e.b);
    std::vector<Value> args;
    for (uint32_t i = 0; i < t.args_count; ++i) args.push_back(Eval(p_.args[t.args_begin + i].value));
    return Format(a, std::move(args), id, /*percent=*/true);
  }
  const Value b = Eval(e.b);
  if (op == "==" || op == "!=" || op == "<" || op == "<=" || op == ">" || op == ">=" || op == "in" || op == "notin") {
    return Bool(-1);
  }
  if (op == "+") {
    if (IsExactNum(a) && IsExactNum(b)) return Num(a.number + b.number);
    const Extent both = SumOf(a.extent, b.extent);
    if (IsExactStr(a) && IsExactStr(b)) {
      Value v = Str("", true);
      v.strs.clear();
      for (const std::string& x : a.strs) {
        for (const std::string& y : b.strs) {
          if (x.size() + y.size() > kMaxStringBytes || v.strs.size() == kMaxStrings) {
            v = SizedComputed(both.bound, id);
            v.extent = both;
            return v;
          }
          v.strs.push_back(x + y);
        }
      }
      v.size = a.size + b.size;
      v.extent = both;
      return v;
    }
    // A list on either side: concatenation keeps the members of both; a
    // number on either side: a sum (a str and a number do not add).
    const uint8_t mask = a.mask == kNum || b.mask == kNum ? kNum : a.mask | b.mask;
    Value v = a.mask == kOther || b.mask == kOther ? Join(Members(a), Members(b)) : Derived2(a, b, mask);
    v.size = a.size + b.size;
    v.extent = both;
    if (mask != kNum) CheckOutputSize(Bytes(v), id);
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
    // As large as the bounds raise to; a carried base or exponent grows as
    // fast as the power over the base (x ** 2 as x times x's bound).
    Value v = Derived2(a, b, kNum);
    const double mag = b.extent.bound * std::log10(std::max(a.extent.bound, 1.0));
    if (mag > 18) {
      Bomb(id, absl::StrCat("a number of up to 10^", static_cast<int>(std::min(mag, 1e9)), " per unit of request"));
    }
    v.extent.bound = mag > 300 ? kHuge : std::pow(std::max(a.extent.bound, 1.0), b.extent.bound);
    if (!v.extent.copies.empty()) {
      const Extent held = v.extent;
      v.extent.copies.clear();
      v.extent.total = -1;
      AddCopies(&v.extent, held, std::max(1.0, v.extent.bound / std::max(a.extent.bound, 1.0)));
    }
    return v;
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

Value Interpreter::SizedComputed(double size, NodeId id) {
  CheckOutputSize(size, id);
  Value v = Computed(kStr);
  v.size = size;
  v.extent.bound = size;
  return v;
}

Value Interpreter::Multiply(const Value& a, const Value& b, NodeId id) {
  if (IsExactNum(a) && IsExactNum(b)) return Num(a.number * b.number);
  // The count is the side that is a number (exact first): `'-' * width`
  // repeats by as much as width's bound.
  const bool b_counts = IsExactNum(b) || (b.mask == kNum && !IsExactNum(a));
  const Value& count = b_counts ? b : a;
  const Value& seq = b_counts ? a : b;
  if (count.mask != kNum) {  // neither is known to be a number
    Value v = Derived2(a, b);
    v.extent = RepeatedOf(a.extent, b.extent);
    // Text times what may be a number (`'x' * (n|default(10**9))`, the
    // caller's n or the literal) is a repetition on the path where it is.
    const bool text_times_maybe_number = (a.mask == kStr && (b.mask & kNum)) || (b.mask == kStr && (a.mask & kNum));
    if (text_times_maybe_number) CheckOutputSize(v.extent.bound, id);
    return v;
  }
  const Extent repeated = RepeatedOf(seq.extent, count.extent);
  if (seq.mask == kNum) {  // a product of numbers
    Value v = Derived2(a, b, kNum);
    v.extent = repeated;
    return v;
  }
  const double n = IsExactNum(count) ? std::max(count.number, 0.0) : -1;  // -1: not known
  if (seq.mask == kStr) {
    CheckOutputSize(repeated.bound, id);
    if (IsExactStr(seq) && n >= 0) {
      Value v = MapStrings(seq, [&](const std::string& s) {
        std::string out;
        // '' * 10**18 is '': the loop below must not run n times for nothing.
        if (s.empty() || n < 1) return out;
        if (static_cast<double>(s.size()) * n > kMaxStringBytes) return std::string(kMaxStringBytes + 1, ' ');
        for (double i = 0; i < n; ++i) out += s;
        return out;
      });
      if (!v.exact) v.size = std::max(seq.size, 1.0) * n;
      v.extent = repeated;
      return v;
    }
    Value v = Derived2(seq, count, kStr);
    v.size = n >= 0 ? std::max(seq.size, seq.exact ? 0.0 : 1.0) * n : 0;
    v.extent = repeated;
    return v;
  }
  // A list, or something unknown: messages * 10**9 is at least n items.
  CheckCount(repeated.bound, id, "repetition");
  Value v = Derived2(seq, count);
  if (n < 0 || (seq.mask == kAny && seq.size == 0)) v.size = 0;  // not known, or maybe a number
  else v.size = std::max(seq.size, 1.0) * n;
  v.extent = repeated;
  return v;
}

}  // namespace ggufguard::jinja::analysis
