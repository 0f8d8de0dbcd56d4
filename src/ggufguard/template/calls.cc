// The interpreter: calls, methods, formatting (% and str.format), filters:
// what each returns, and the names each may reach. See interpreter.h.
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

std::vector<Value> Interpreter::EvalArgs(const Expr& e) {
  std::vector<Value> out;
  for (uint32_t i = 0; i < e.args_count; ++i) out.push_back(Eval(p_.args[e.args_begin + i].value));
  return out;
}

// Positional argument `index`, or keyword `name`.
const Value* Interpreter::ArgValue(const Expr& e, const std::vector<Value>& vals, size_t index, std::string_view name) const {
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

NodeId Interpreter::ArgExpr(const Expr& e, size_t index, std::string_view name) const {
  size_t positional = 0;
  for (uint32_t i = 0; i < e.args_count; ++i) {
    const Arg& a = p_.args[e.args_begin + i];
    if (a.star != 0) continue;
    if ((a.name.empty() && positional++ == index) || (!a.name.empty() && a.name == name)) return a.value;
  }
  return kNoNode;
}

double Interpreter::ExactOr(const Value* v, double dflt) { return v && IsExactNum(*v) ? v->number : dflt; }

Value Interpreter::EvalCall(const Expr& e, NodeId id) {
  const NodeId callee_id = e.a;
  const Expr* callee = callee_id == kNoNode ? nullptr : &p_.expr(callee_id);
  if (callee && callee->kind == ExprKind::kGetAttr) {
    const Value obj = Eval(callee->a);
    const Value name = Str(std::string(callee->name), false);
    const std::vector<Value> args = EvalArgs(e);
    const Value attr = Attribute(obj, name, callee_id, callee->a, /*attribute=*/true);
    // A macro value kept as an attribute (ns.f = f; ns.f()): called as one.
    if (attr.macro != kNoNode || (attr.origin == Origin::kRoot && attr.root.starts_with("macro:"))) {
      return CallThroughValue(e, args, id, attr.macro);
    }
    for (uint32_t i = 0; i < e.args_count; ++i) MacroEscapes(args[i], p_.args[e.args_begin + i].value, "a method's argument");
    return Sized(Method(obj, callee->name, e, args, id, callee->a, attr), obj, callee->name, e, args, id,
                 /*method=*/true);
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
  std::vector<Value> args = EvalArgs(e);
  if (fn.macro != kNoNode) return CallThroughValue(e, std::move(args), id, fn.macro);
  if (fn.origin != Origin::kRoot) return Derived(fn);
  const std::string& r = fn.root;
  if (r.starts_with("macro:")) return CallThroughValue(e, std::move(args), id);
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
    v.extent.bound = static_cast<double>(e.args_count);
    for (const Value& a : args) AddCopies(&v.extent, a.extent, 1);
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
  // raise_exception, strftime_now and the other globals' results. Any other
  // root called (a namespace joined with a macro value keeps the
  // namespace's name) may be one of the macro values.
  if (!In(kGlobals, r) && !value_macros_.empty()) return CallThroughValue(e, std::move(args), id);
  return Data();
}

// A call of macro `known`, or (kNoNode) of a value that may be any macro
// the template names as a value.
Value Interpreter::CallThroughValue(const Expr& e, std::vector<Value> args, NodeId id, NodeId known) {
  for (uint32_t i = 0; i < e.args_count; ++i) args[i].facts = BindingFacts(p_.args[e.args_begin + i].value);
  std::vector<NodeId> callees;
  if (known != kNoNode) {
    callees.push_back(known);
  } else if (value_macros_.size() <= kMaxValueMacros) {
    callees = value_macros_;
  }
  // The analysis follows an argument into a parameter the macro declares;
  // varargs and kwargs start as the request's data.
  for (NodeId macro : callees) {
    const Stmt& m = p_.stmt(macro);
    size_t positional = 0;
    for (uint32_t i = 0; i < e.args_count; ++i) {
      const Arg& a = p_.args[e.args_begin + i];
      bool declared = false;
      if (a.star == 0 && a.name.empty()) {
        declared = positional++ < m.params_count;
      } else if (a.star == 0) {
        for (uint32_t k = 0; k < m.params_count; ++k) declared = declared || p_.args[m.params_begin + k].name == a.name;
      }
      if (!declared) MacroEscapes(args[i], a.value, "passed to varargs or kwargs");
    }
  }
  call_macros_[id] = callees;
  if (callees.empty()) return Computed(kStr);  // none, or more than are followed: ValueUse said so
  Value out;
  bool first = true;
  for (NodeId macro : callees) {
    Value v = MacroCall(macro, e, args, id);
    out = first ? std::move(v) : Join(out, v);
    first = false;
  }
  return out;
}

void Interpreter::MacroEscapes(const Value& v, NodeId at, std::string_view where) {
  // A root keeps the name of the first it was joined with, so any root
  // (a namespace, a list of a namespace and a macro) may hold one.
  if (value_macros_.empty() || (v.macro == kNoNode && v.origin != Origin::kRoot)) return;
  if (v.origin == Origin::kRoot && !v.root.starts_with("macro:") && v.root != "namespace()" && v.macro == kNoNode &&
      In(kGlobals, v.root)) {
    return;  // a global function itself (range, dict): no macro
  }
  Emit(Kind::kUnboundedRecursion, Begin(at),
       absl::StrCat(ExprText(at), " may hold a macro, ", Sv(where),
                    ", where calls through it are not followed: self-application can recurse without end"));
}

// loop(x) in a `for ... recursive` body: bounded when x is a part of the
// item (x.children, x['items'], x|dictsort), since data nests finitely.
Value Interpreter::RecursiveLoopCall(const Expr& e, NodeId id) {
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

Value Interpreter::Range(const Expr& e, const std::vector<Value>& args, NodeId id) {
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
  // At most as many numbers as the bounds' extents span, none larger than
  // they are: range(n) of a computed n, range(i) in a loop over range(1000).
  double span = 0, largest = 0;
  for (size_t i = 0; i < pos.size() && i < 2; ++i) {
    span = SatAdd(span, pos[i]->extent.bound);
    largest = std::max(largest, pos[i]->extent.bound);
  }
  v.extent.bound = pos.size() >= 3 && IsExactNum(*pos[2]) && std::fabs(pos[2]->number) >= 1
                       ? std::ceil(span / std::fabs(pos[2]->number))
                       : span;
  v.extent.element = largest;
  if (!exact || pos.empty() || step == 0) {
    // Unknown bounds: a bound from the request is the request's size; a
    // template-made one may be anything.
    for (const Value* a : pos) MergeOrigin(&v, *a);
    CheckCount(v.extent.bound, id, "a range");
    return v;
  }
  const double n = std::max(0.0, std::ceil((stop - start) / step));
  CheckCount(n, id, "a range");
  v.size = n;
  v.extent.bound = n;
  return v;
}

Value Interpreter::Method(const Value& obj, std::string_view m, const Expr& e, const std::vector<Value>& args,
                          NodeId id, NodeId obj_expr, const Value& attr) {
  const Value* a0 = args.empty() ? nullptr : &args[0];
  const Value* a1 = args.size() > 1 ? &args[1] : nullptr;
  // A root's method gives data; a dict literal holding roots is a dict,
  // whose items() and values() give the roots it holds (Attribute).
  if (obj.origin == Origin::kRoot && !IsDictLiteral(obj)) {
    return attr.origin == Origin::kRoot && attr.root == "loop.cycle" ? EvalRootCall(attr, args) : Data();
  }
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
        if (loops_.empty()) {  // outside loops a mutation adds once: the items' own checks bound it
          // Once widened a list stays so: the next mutation changes nothing.
          if (!SameValue(v, *cur)) Assign(var, std::move(v), /*shared=*/true);
          continue;
        }
        // What it holds now: l.extend(l) doubles a list carried over a loop.
        mutated_.insert(var);
        v.extent = CarriedRead(var, *cur).extent;
        const bool adds_one = m == "append" || m == "insert" || m == "setdefault";
        if (adds_one || m == "extend" || m == "update") {
          const Value& added = args.empty() ? Data() : args.back();
          Extent more = added.extent;
          if (adds_one) more.element = more.bound, more.bound = 1;
          v.extent = SumOf(v.extent, more);
        }
        v.extent.set_pass = loops_.empty() ? 0 : loops_.back().pass;
        setters_[var] = id;
        Assign(var, std::move(v), /*shared=*/true);
      }
    }
    return Data(kOther);
  }
  if (m == "format") return FormatMethod(obj, e, args, id);
  if (m == "format_map") return FormatMap(obj, a0, id);
  if (m == "join" && a0) {
    if (IsExactStr(obj) && a0->items_exact && !a0->items_numbers) {
      return MapStrings(obj, [&](const std::string& sep) { return JoinItems(a0->items, sep, kMaxStringBytes); });
    }
    return Derived2(obj, *a0, kStr);
  }
  if (m == "replace" && a0 && a1 && IsExactStr(*a0) && IsExactStr(*a1) && a0->strs.size() == 1 && a1->strs.size() == 1) {
    const long long count = static_cast<long long>(ExactOr(args.size() > 2 ? &args[2] : nullptr, -1));
    return MapPieces(obj, a1->strs[0],
                     [&](const std::string& s) { return Replace(s, a0->strs[0], a1->strs[0], count, kMaxStringBytes); });
  }
  if (m == "center" || m == "ljust" || m == "rjust" || m == "zfill" || m == "expandtabs") {
    const double w = ExactOr(a0, 0);  // its bound is checked in Sized (bombs.cc)
    if (w > kMaxStringBytes) return Derived(obj, kStr);
    char fill = m == "zfill" ? '0' : ' ';
    if (a1 && IsExactStr(*a1) && a1->strs.size() == 1 && a1->strs[0].size() == 1) fill = a1->strs[0][0];
    if (m == "expandtabs") return Derived(obj, kStr);
    const char align = m == "center" ? '^' : m == "ljust" ? '<' : '>';
    return MapStrings(obj, [&](const std::string& s) { return Pad(s, static_cast<size_t>(std::max(w, 0.0)), fill, align); });
  }
  if (m == "lower") return MapPieces(obj, {}, [](const std::string& s) { return ToLower(s); });
  if (m == "upper") return MapPieces(obj, {}, [](const std::string& s) { return ToUpper(s); });
  if (m == "title") return MapPieces(obj, {}, [](const std::string& s) { return Title(s); });
  if (m == "capitalize") return MapPieces(obj, {}, [](const std::string& s) { return Capitalize(s); });
  if (m == "swapcase") {
    return MapPieces(obj, {}, [](const std::string& s) { return SwapCase(s); });
  }
  if (m == "strip" || m == "lstrip" || m == "rstrip") {
    const std::string chars = a0 && IsExactStr(*a0) && a0->strs.size() == 1 ? a0->strs[0] : "";
    return MapPieces(obj, {}, [&](const std::string& s) { return Strip(s, chars, m != "rstrip", m != "lstrip"); });
  }
  if (m == "split" || m == "splitlines") return PieceOf(obj, kOther);
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

Value Interpreter::EvalRootCall(const Value& fn, const std::vector<Value>& args) {
  Value v = Data(kStr);
  (void)fn;
  for (const Value& a : args) {
    if (IsExactStr(a)) v = Join(v, a);
  }
  return v;
}

// Checks widths/precisions against the output limit; folds when it can.
Value Interpreter::Format(const Value& fmt, std::vector<Value> args, NodeId id, bool percent) {
  if (percent && args.size() == 1 && args[0].items_exact && args[0].mask == kOther) {
    // a tuple of exact values
    std::vector<Value> expanded;
    for (const std::string& s : args[0].items) expanded.push_back(args[0].items_numbers ? Num(std::stod(s)) : Str(s, true));
    args = std::move(expanded);
  }
  if (!IsExactStr(fmt)) {
    Value v = Derived(fmt, kStr);
    for (const Value& a : args) {
      MergeOrigin(&v, a);
      v.extent = SumOf(v.extent, Printed(a));  // each argument once, at most
    }
    return v;
  }
  bool exact = true;
  Extent fields;  // what the fields add, the most over the format's candidates
  fields.bound = 0;
  Value result = MapStrings(fmt, [&](const std::string& f) {
    std::string out;
    size_t next_arg = 0;
    Extent these;
    these.bound = 0;
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
          *out_n = a && IsExactNum(*a) ? a->number : a ? a->extent.bound : 0;  // a computed width: its bound
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
      these.bound = SatAdd(these.bound, std::max({width, precision, a ? Bytes(*a) : 0.0}));
      if (a) AddCopies(&these, a->extent, 1);
      std::string piece;
      std::vector<std::string> s;
      if (!a) {
        exact = false;
      } else if (conv == 'c') {
        if (IsExactInt(*a) && a->number >= 0 && a->number < 0x110000) {
          AppendUtf8(&piece, static_cast<uint32_t>(a->number));  // Python's chr(); base/text.h
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
    fields = EitherOf(fields, these);
    return out;
  });
  Extent extent = SumOf(fmt.extent, fields);
  if (!exact) {
    Value v = Computed(kStr);
    for (const Value& a : args) {
      if (a.origin == Origin::kData && !Spelled(a)) v = Data(kStr);
    }
    v.extent = std::move(extent);
    return v;
  }
  if (!result.exact) result.extent = std::move(extent);
  else result.extent.copies = std::move(extent.copies);
  return result;
}

// str.format: fields {}, {0}, {name}, with .attr / [key] lookups (which
// reach attributes like getattr) and specs whose widths are checked.
Value Interpreter::FormatMethod(const Value& fmt, const Expr& e, const std::vector<Value>& args, NodeId id) {
  std::vector<Value> positional;
  std::vector<std::pair<std::string_view, Value>> named;
  for (uint32_t i = 0; i < e.args_count; ++i) {
    const Arg& a = p_.args[e.args_begin + i];
    if (a.star) continue;
    if (a.name.empty()) positional.push_back(args[i]);
    else named.push_back({a.name, args[i]});
  }
  return FormatFields(fmt, positional, named, args, id);
}

// str.format_map(mapping) is str.format(**mapping): the same fields, walked
// the same way ('{m.__class__}' reaches an attribute), named by a dict
// literal's keys when the mapping is one.
Value Interpreter::FormatMap(const Value& fmt, const Value* mapping, NodeId id) {
  std::vector<std::pair<std::string_view, Value>> named;
  if (mapping && mapping->keyed) {
    for (const Field& f : mapping->fields) named.push_back({f.key, f.value});
  }
  std::vector<Value> args;
  if (mapping) args.push_back(*mapping);
  return FormatFields(fmt, {}, named, args, id);
}

Value Interpreter::FormatFields(const Value& fmt, const std::vector<Value>& positional,
                                const std::vector<std::pair<std::string_view, Value>>& named,
                                const std::vector<Value>& args, NodeId id) {
  if (!IsExactStr(fmt)) {
    if (fmt.origin != Origin::kData) {
      Emit(Kind::kComputedName, Begin(id), absl::StrCat(ExprText(id), ": a format string computed at render time"));
    }
    Value v = Derived(fmt, kStr);
    for (const Value& a : args) v.extent = SumOf(v.extent, Printed(a));
    return v;
  }
  bool exact = true;
  Extent fields;  // what the fields add, the most over the format's candidates
  fields.bound = 0;
  Value result = MapStrings(fmt, [&](const std::string& f) {
    std::string out;
    size_t auto_index = 0;
    Extent these;
    these.bound = 0;
    // The argument a field names: '' (the next one), an index, a keyword.
    auto field_arg = [&](const std::string& arg_name) -> const Value* {
      if (arg_name.empty()) {
        const size_t k = auto_index++;
        return k < positional.size() ? &positional[k] : nullptr;
      }
      if (arg_name.find_first_not_of("0123456789") == std::string::npos) {
        const size_t k = std::stoul(arg_name.substr(0, 6));
        return k < positional.size() ? &positional[k] : nullptr;
      }
      for (auto& [nm, v] : named) {
        if (nm == arg_name) return &v;
      }
      return nullptr;
    };
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
      const Value* a = field_arg(arg_name);
      // A width from an argument ('{:{w}}', '{:>{}}'): as large as its bound.
      for (size_t open = spec.find('{'); open != std::string::npos; open = spec.find('{', open + 1)) {
        const size_t close = spec.find('}', open);
        if (close == std::string::npos) break;
        if (const Value* w = field_arg(spec.substr(open + 1, close - open - 1))) longest = std::max(longest, w->extent.bound);
      }
      CheckOutputSize(longest, id);
      these.bound = SatAdd(these.bound, std::max(longest, a ? Bytes(*a) : 0.0));
      if (a) AddCopies(&these, a->extent, 1);
      if (!a || spec.find('{') != std::string::npos) {
        exact = false;
        continue;
      }
      std::string piece, layout = spec;
      std::vector<std::string> s;
      if (!spec.empty() && spec.back() == 'c' && IsExactInt(*a) && a->number >= 0 && a->number < 0x110000) {
        // '{:c}': the character of that code point, as '%c' (Python's chr()).
        AppendUtf8(&piece, static_cast<uint32_t>(a->number));
        layout.pop_back();
      } else if (ExactStrings(*a, &s) && s.size() == 1) {
        piece = s[0];
      } else {
        exact = false;
        continue;
      }
      // [[fill]align][width]: enough for '{:_^11}'.format('globals').
      if (!layout.empty()) {
        size_t k = 0;
        char fill = ' ', align = a->mask == kNum ? '>' : '<';
        if (layout.size() >= 2 && std::string_view("<>^=").find(layout[1]) != std::string_view::npos) {
          fill = layout[0], align = layout[1], k = 2;
        } else if (std::string_view("<>^=").find(layout[0]) != std::string_view::npos) {
          align = layout[0], k = 1;
        }
        double w = 0;
        while (k < layout.size() && layout[k] >= '0' && layout[k] <= '9') w = w * 10 + (layout[k++] - '0');
        if (w <= kMaxStringBytes) piece = Pad(piece, static_cast<size_t>(w), fill, align == '=' ? '>' : align);
      }
      out += piece;
      if (out.size() > kMaxStringBytes) break;
    }
    fields = EitherOf(fields, these);
    return out;
  });
  Extent extent = SumOf(fmt.extent, fields);
  if (!exact) {
    Value v = Computed(kStr);
    bool data = false;
    for (const Value& a : args) data = data || (a.origin == Origin::kData && !Spelled(a));
    v = data ? Data(kStr) : v;
    v.extent = std::move(extent);
    return v;
  }
  if (!result.exact) result.extent = std::move(extent);
  else result.extent.copies = std::move(extent.copies);
  return result;
}

// What a filter returns: its row in the object model's table (kFilters)
// decides how; name checks on its arguments come first, for every filter.
Value Interpreter::EvalFilter(const Expr& e, NodeId id, const Value& base) {
  const std::vector<Value> args = EvalArgs(e);
  return Sized(FilterValue(e, id, base, args), base, e.name, e, args, id, /*method=*/false);
}

Value Interpreter::FilterValue(const Expr& e, NodeId id, const Value& base, const std::vector<Value>& args) {
  const std::string_view f = e.name;
  const Value* a0 = args.empty() ? nullptr : &args[0];
  auto name_arg = [&](size_t index, std::string_view kw) -> NodeId { return ArgExpr(e, index, kw); };
  const FilterRule* rule = FindFilter(f);
  if (rule && rule->result == FilterResult::kAttribute) {
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
  if (const Value* path = ArgValue(e, args, SIZE_MAX, "attribute")) {
    CheckAttributePath(*path, ElementOf(base), name_arg(SIZE_MAX, "attribute"));
  }
  if (f == "selectattr" || f == "rejectattr" || f == "groupby") {
    if (const Value* path = ArgValue(e, args, 0, "")) CheckAttributePath(*path, ElementOf(base), name_arg(0, ""));
  }
  if (rule == nullptr) return UnmodelledFilter(base);
  switch (rule->result) {
    case FilterResult::kAttribute:  // above
    case FilterResult::kDerived:
      return UnmodelledFilter(base);
    case FilterResult::kPrintedForm: {
      std::vector<std::string> s;
      if (ExactStrings(base, &s)) return MapStrings(base, [](const std::string& x) { return x; });
      if (base.origin == Origin::kRoot) return Computed(kStr);  // an object's repr
      Value v = Derived(base, kStr);
      // A container's repr or JSON: Python spelled its quotes, brackets and
      // layout, so characters picked out of it at computed places are the
      // template's letters, not the request's ('_' of 'tool_calls' found
      // and sliced out to build '__class__').
      if (base.mask & kOther) v.spelled = true;
      return v;
    }
    case FilterResult::kFoldedString:
      return FoldedStringFilter(e, id, base, args);
    case FilterResult::kDerivedString:
      return Derived(base, kStr);
    case FilterResult::kNumber:
      if (f == "length" || f == "count") {
        if (IsExactStr(base) && base.strs.size() == 1) return Num(static_cast<double>(base.strs[0].size()));
        if (base.items_exact) return Num(static_cast<double>(base.items.size()));
      }
      // A literal's digits read as a number ('8203'|int, for a '%c' of it).
      if (f == "int" && IsExactStr(base) && base.strs.size() == 1) {
        const std::string_view d = base.strs[0];
        const bool digits = !d.empty() && d.size() <= 15 &&
                            std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
        if (digits) return Num(std::stod(std::string(d)));
      }
      return Derived(base, kNum);
    case FilterResult::kMembers: {
      // They pick and reorder members; map with a filter name makes new ones.
      const Value* mapped = f == "map" ? ArgValue(e, args, 0, "") : nullptr;
      Value v = mapped ? Derived(base, kOther) : Members(base);
      if (base.items_exact && (f == "unique" || f == "sort")) {
        v = base;
        if (f == "sort") std::sort(v.items.begin(), v.items.end());
      }
      return v;
    }
    case FilterResult::kGroups:
      CheckCount(ExactOr(a0, 0), id, f == "batch" ? "batches" : "slices");
      return Derived(base, kOther);
    case FilterResult::kDefault:
      return a0 ? Join(base, *a0) : base;
  }
  return UnmodelledFilter(base);
}

// A filter this analysis does not model, Jinja2's or not (Jinja2 refuses
// an unknown one when it compiles the template): derived from its input,
// and template-made when the input is a root (it may print the object).
Value Interpreter::UnmodelledFilter(const Value& base) {
  Value v = Derived(base);
  if (base.origin == Origin::kRoot) v = Computed();
  return v;
}

// The string functions of kFoldedString, folded on exact strings.
Value Interpreter::FoldedStringFilter(const Expr& e, NodeId id, const Value& base, const std::vector<Value>& args) {
  const std::string_view f = e.name;
  const Value* a0 = args.empty() ? nullptr : &args[0];
  if (f == "lower") return MapPieces(base, {}, [](const std::string& s) { return ToLower(s); });
  if (f == "upper") return MapPieces(base, {}, [](const std::string& s) { return ToUpper(s); });
  if (f == "title") return MapPieces(base, {}, [](const std::string& s) { return Title(s); });
  if (f == "capitalize") return MapPieces(base, {}, [](const std::string& s) { return Capitalize(s); });
  if (f == "trim") {
    const std::string chars = a0 && IsExactStr(*a0) && a0->strs.size() == 1 ? a0->strs[0] : "";
    return MapPieces(base, {}, [&](const std::string& s) { return Strip(s, chars, true, true); });
  }
  if (f == "reverse") {
    if (base.items_exact) {
      Value v = base;
      std::reverse(v.items.begin(), v.items.end());
      return v;
    }
    return MapStrings(base, [](const std::string& s) { return Reverse(s); });
  }
  if (f == "replace") {
    if (args.size() < 2) return UnmodelledFilter(base);
    if (IsExactStr(args[0]) && IsExactStr(args[1]) && args[0].strs.size() == 1 && args[1].strs.size() == 1) {
      const long long count = static_cast<long long>(ExactOr(args.size() > 2 ? &args[2] : nullptr, -1));
      return MapPieces(base, args[1].strs[0], [&](const std::string& s) {
        return Replace(s, args[0].strs[0], args[1].strs[0], count, kMaxStringBytes);
      });
    }
    return Derived2(base, args[1], kStr);
  }
  if (f == "center" || f == "indent") {
    const double w = ExactOr(a0, f == "center" ? 80 : 4);  // its bound is checked in Sized (bombs.cc)
    if (f == "center" && w <= kMaxStringBytes) {
      return MapStrings(base, [&](const std::string& s) { return Pad(s, static_cast<size_t>(std::max(w, 0.0)), ' ', '^'); });
    }
    return Derived(base, kStr);
  }
  if (f == "format") return Format(base, args, id, /*percent=*/false);
  if (f == "join") {
    const std::string sep = a0 && IsExactStr(*a0) && a0->strs.size() == 1 ? a0->strs[0] : "";
    const bool sep_known = !a0 || (IsExactStr(*a0) && a0->strs.size() == 1) || ArgValue(e, args, SIZE_MAX, "attribute");
    if (base.items_exact && sep_known && !ArgValue(e, args, SIZE_MAX, "attribute")) {
      return Str(JoinItems(base.items, sep, kMaxStringBytes), true);
    }
    if (IsExactStr(base) && sep_known) {
      return MapStrings(base, [&](const std::string& s) {
        std::vector<std::string> chars;
        for (char c : s) chars.emplace_back(1, c);
        return JoinItems(chars, sep, kMaxStringBytes);
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
  return UnmodelledFilter(base);  // a row of kFilters this function does not fold
}

}  // namespace ggufguard::jinja::analysis
