// The interpreter: findings, scopes, statements, macros. See interpreter.h.
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

Interpreter::Interpreter(const Program& p, std::string_view src, const TemplateScanOptions& o, TemplateScan* out)
    : p_(p), src_(src), opts_(o), out_(out) {
  budget_ = static_cast<int64_t>(4 * (p.stmts.size() + p.exprs.size()) + 4096);
  for (size_t i = 0; i < p.stmts.size(); ++i) {
    const Stmt& s = p.stmts[i];
    if (s.kind == StmtKind::kMacro && !macros_.contains(s.name)) macros_[s.name] = static_cast<NodeId>(i);
  }
  std::vector<bool> callee(p.exprs.size(), false);
  for (const Expr& e : p.exprs) {
    if (e.kind == ExprKind::kCall && e.a != kNoNode) callee[static_cast<size_t>(e.a)] = true;
  }
  for (size_t i = 0; i < p.exprs.size(); ++i) {
    const Expr& e = p.exprs[i];
    if (e.kind != ExprKind::kName || callee[i]) continue;
    if (const auto it = macros_.find(e.name); it != macros_.end()) value_macros_.push_back(it->second);
  }
  std::sort(value_macros_.begin(), value_macros_.end());
  value_macros_.erase(std::unique(value_macros_.begin(), value_macros_.end()), value_macros_.end());
}

void Interpreter::Run() {
  Walk(p_.top);
  AnalyseMacrosWithLateGlobals();
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
  FinishBehaviour();
}

std::string Interpreter::ExprText(NodeId id) const {
  if (id == kNoNode) return "?";
  const Expr& e = p_.expr(id);
  return EscapeForDisplay(src_.substr(e.begin, e.end - e.begin), kMaxExprChars);
}

size_t Interpreter::Begin(NodeId id) const { return id == kNoNode ? 0 : p_.expr(id).begin; }

// Where the name of an access is: the attribute after the dot, the
// subscript, the argument of |attr; a finding points at it.
size_t Interpreter::NameOffset(NodeId id) const {
  if (id == kNoNode) return 0;
  const Expr& e = p_.expr(id);
  if (e.kind == ExprKind::kGetAttr) return e.name_at;
  if (e.kind == ExprKind::kGetItem && e.b != kNoNode) return p_.expr(e.b).begin;
  if (e.kind == ExprKind::kFilter && e.args_count > 0 && p_.args[e.args_begin].value != kNoNode) {
    return p_.expr(p_.args[e.args_begin].value).begin;
  }
  return e.begin;
}

void Interpreter::Emit(Kind kind, size_t offset, std::string detail) {
  const uint64_t key = static_cast<uint64_t>(offset) * 32 + static_cast<uint64_t>(kind);
  if (!seen_.insert(key).second) return;
  if (emitted_++ >= opts_.max_issues) return;
  out_->issues.push_back({kind, offset, 0, 0, std::move(detail)});
}

void Interpreter::NoteRoot(std::string_view name) {
  if (out_->roots.size() >= kMaxListed) return;
  if (std::find(out_->roots.begin(), out_->roots.end(), name) == out_->roots.end()) out_->roots.emplace_back(name);
}

void Interpreter::NoteFolded(std::string_view name) {
  std::string e = EscapeForDisplay(name, 64);
  if (out_->folded_names.size() >= kMaxListed) return;
  if (std::find(out_->folded_names.begin(), out_->folded_names.end(), e) == out_->folded_names.end()) {
    out_->folded_names.push_back(std::move(e));
  }
}

// Checks a name used to reach into `obj`. `attribute`: attribute syntax,
// |attr or attribute= (where `_`-prefixed names are internal too).
void Interpreter::CheckName(const Value& name, const Value& obj, NodeId at, bool attribute) {
  if (!(name.mask & kStr)) return;  // numbers index; they never reach attributes
  // A namespace's own `_x` is the template's data (NamespaceOwnsAttribute).
  const bool own_namespace = obj.origin == Origin::kRoot && obj.root == "namespace()";
  for (const std::string& s : name.strs) {
    if (IsDunderLike(s) || (attribute && s.starts_with("_") && !(own_namespace && NamespaceOwnsAttribute(s)))) {
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
  } else if (obj.origin == Origin::kRoot && obj.root != "namespace()" && !IsDictLiteral(obj)) {
    // A namespace holds only what the template set, like chat data, and
    // a name from the request reaches into it as far as into a dict (a
    // dict literal of helpers is one).
    Emit(Kind::kComputedName, NameOffset(at),
         absl::StrCat(ExprText(at), ": a name from the request on ", EscapeForDisplay(obj.root, 40)));
  }
}

// A dotted attribute path (attribute='a.b', selectattr('a.b')).
void Interpreter::CheckAttributePath(const Value& path, const Value& obj, NodeId at) {
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

const Value* Interpreter::Lookup(const std::string& key) const {
  auto it = vars_.find(key);
  return it == vars_.end() ? nullptr : &it->second;
}

void Interpreter::Assign(const std::string& key, Value v, bool shared) {
  auto it = vars_.find(key);
  if (open_marks_ == 0) {
    // No scope or branch holds a journal position: nothing will undo this
    // assignment, so it is not journaled (a top-level run of set statements
    // would otherwise keep a copy of every value it replaced).
    if (it == vars_.end()) {
      vars_.emplace(key, std::move(v));
    } else {
      it->second = std::move(v);
    }
    return;
  }
  if (it == vars_.end()) {
    journal_.push_back({key, false, Value(), shared});
    vars_.emplace(key, std::move(v));
  } else {
    journal_.push_back({key, true, std::move(it->second), shared});
    it->second = std::move(v);
  }
}

void Interpreter::Undo(Entry& e) {
  if (e.had) {
    vars_[e.key] = std::move(e.old);
  } else {
    vars_.erase(e.key);
  }
}

void Interpreter::RollbackAll(size_t pos) {
  while (journal_.size() > pos) {
    Undo(journal_.back());
    journal_.pop_back();
  }
}

// Leaves a scope: its local variables go, namespace attributes stay.
void Interpreter::RollbackLocals(size_t pos) {
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

std::vector<Interpreter::Touched> Interpreter::TouchedSince(size_t pos) const {
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

std::vector<Interpreter::Touched> Interpreter::SharedTouchedSince(size_t pos) const {
  std::vector<Touched> out;
  absl::flat_hash_set<std::string_view> done;
  for (size_t i = pos; i < journal_.size(); ++i) {
    const Entry& e = journal_[i];
    if (!e.shared || !done.insert(e.key).second) continue;
    const Value* v = Lookup(e.key);
    out.push_back({e.key, v != nullptr, v ? *v : Value(), e.had, e.had ? e.old : Value()});
  }
  return out;
}

std::string Interpreter::NsKey(std::string_view var, std::string_view attr) { return absl::StrCat(Sv(var), "\x01", Sv(attr)); }

void Interpreter::Walk(std::span<const NodeId> body) {
  for (NodeId s : body) Statement(s);
}

void Interpreter::Statement(NodeId id) {
  --budget_;
  const Stmt& s = p_.stmt(id);
  switch (s.kind) {
    case StmtKind::kData: {
      Extent text;
      text.bound = static_cast<double>(s.end - s.begin);
      NoteOutput(text, s.begin, kNoNode);
      RecordData(s);
      break;
    }
    case StmtKind::kLoopControl:
      break;
    case StmtKind::kOutput: {
      const Value v = Eval(s.a);
      NoteOutput(Printed(v), Begin(s.a), s.a);
      RecordOutput(s.a, v);
      RecordMutation(s.a);
      break;
    }
    case StmtKind::kDo:
      Eval(s.a);
      RecordMutation(s.a);
      break;
    case StmtKind::kIf: If(s); break;
    case StmtKind::kFor: For(s); break;
    case StmtKind::kMacro: {
      Value m = RootValue(absl::StrCat("macro:", Sv(s.name)));
      m.macro = id;
      Assign(std::string(s.name), std::move(m));
      AnalyseMacroBody(id, nullptr);
      if (current_macro_ == kNoNode) macro_loop_depth_ = std::max(macro_loop_depth_, static_cast<int>(loops_.size()));
      break;
    }
    case StmtKind::kCallBlock: {
      Eval(s.a);
      const JournalMark pos(this);
      BindParams(s, nullptr);
      {
        CondScope c(this, true);  // the body runs only if the callee calls caller()
        Walk(p_.body(s));
      }
      RollbackLocals(pos);
      break;
    }
    case StmtKind::kFilterBlock:
      Walk(p_.body(s));
      if (s.a != kNoNode) Eval(s.a);
      break;
    case StmtKind::kSet: {
      Value v = Eval(s.b);
      v.facts = BindingFacts(s.b);
      FoldLiterals(&v.facts, v);
      RecordMutation(s.b);
      AssignTarget(s.a, std::move(v), s.b);
      NoteLateGlobal(s.a);
      // `{% set b = a %}` makes b the same list as a: a mutation through
      // either changes both (Mutate widens every alias).
      const std::string to = SlotOf(s.a), from = SlotOf(s.b);
      if (!to.empty() && !from.empty() && to != from) Alias(to, from);
      break;
    }
    case StmtKind::kSetBlock: {
      Value v = BodyString(p_.body(s));
      // What the body writes is what x holds: {% set ns.s %}{{ ns.s }}{{ ns.s
      // }}{% endset %} doubles ns.s.
      Extent body{0, 1, {}, -1, 0};
      Extent* const saved = captured_;
      const double saved_passes = capture_passes_;
      captured_ = &body;
      capture_passes_ = Passes();
      rec_.BeginCapture();
      Walk(p_.body(s));
      captured_ = saved;
      capture_passes_ = saved_passes;
      if (body.bound > static_cast<double>(opts_.max_output_bytes)) {
        Emit(Kind::kRenderBomb, s.begin, absl::StrCat("{% set %} block: makes about ", FormatCount(body.bound), " bytes > ",
                                                      opts_.max_output_bytes));
      }
      if (!v.exact) v.extent = body;
      v.extent.copies = body.copies;
      v.extent.total = body.total;
      v.facts.frags = rec_.EndCapture();
      if (s.c != kNoNode) v = Eval(s.c, &v);
      AssignTarget(s.a, std::move(v), kNoNode);
      NoteLateGlobal(s.a);
      break;
    }
    case StmtKind::kWith: {
      std::vector<Value> values;
      for (uint32_t i = 0; i < s.params_count; ++i) {
        values.push_back(Eval(p_.args[s.params_begin + i].value));
        values.back().facts = BindingFacts(p_.args[s.params_begin + i].value);
      }
      const JournalMark pos(this);
      for (uint32_t i = 0; i < s.params_count; ++i) {
        const Arg& a = p_.args[s.params_begin + i];
        if (!a.name.empty()) Assign(std::string(a.name), std::move(values[i]));
      }
      Walk(p_.body(s));
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
      Walk(p_.body(s));
      break;
  }
}

void Interpreter::If(const Stmt& s) {
  const int truth = Truth(Eval(s.a));
  const JournalMark pos(this);
  const uint8_t turn_before = turn_;
  {
    CondScope c(this, truth != 1);
    GateScope g(this, s.a, false);
    Walk(p_.body(s));
  }
  const uint8_t turn_then = turn_;
  turn_ = turn_before;
  auto then_values = TouchedSince(pos);
  RollbackAll(pos);
  {
    CondScope c(this, truth != 0);
    GateScope g(this, s.a, true);
    Walk(p_.orelse(s));
  }
  turn_ = truth == 1 ? turn_then : truth == 0 ? turn_ : static_cast<uint8_t>(turn_ | turn_then);
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
    // (What it was, for a namespace attribute in a loop pass, is that
    // pass's carried state, not the copies it was last set to: CarriedRead.)
    const Value was = now ? (shared ? CarriedRead(t.key, *now) : *now) : Unbound(t.key, shared);
    Assign(t.key, truth != 1 ? Join(t.now, was) : t.now, shared);
  }
}

// What iterating over `v` gives, and whatever a mutation the analysis
// could not pin to a variable may have put there.
Value Interpreter::ElementOf(const Value& v) {
  Value e = WithUntrackedMutations(ElementOfUnmutated(v));
  // A part of it: at most one item's bound, and what it holds of carried state.
  if (!e.exact) e.extent.bound = v.extent.element;
  e.extent.copies = v.extent.copies;
  return e;
}

// `e`, a member read out of a container, or whatever a mutation the
// analysis could not pin to a variable put there: an element, and a
// literal dict's key read by name too (`d.x.update(...)` changes d.x.a).
Value Interpreter::WithUntrackedMutations(Value e) const {
  if (!untracked_mutations_) return e;
  e = WithPossibleStrs(std::move(e), untracked_mutation_.strs);
  MergeOrigin(&e, untracked_mutation_);
  return e;
}

// Is `slot` a parameter of the macro being analysed? It holds the
// caller's value, which a mutation through it changes for the caller too.
bool Interpreter::IsMacroParameter(std::string_view slot) const {
  if (current_macro_ == kNoNode) return false;
  const Stmt& m = p_.stmt(current_macro_);
  for (uint32_t i = 0; i < m.params_count; ++i) {
    if (p_.args[m.params_begin + i].name == slot) return true;
  }
  return slot == "varargs" || slot == "kwargs";
}

Value Interpreter::ElementOfUnmutated(const Value& v) {
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

void Interpreter::BindTarget(NodeId target, const Value& v) {
  if (target == kNoNode) return;
  const Expr& t = p_.expr(target);
  if (t.kind == ExprKind::kName) {
    Value bound = v;
    bound.extent.set_pass = loops_.empty() ? 0 : loops_.back().pass;  // set in this pass (CarriedRead)
    Assign(std::string(t.name), std::move(bound));
  } else if (t.kind == ExprKind::kTuple) {
    Value e = ElementOf(v);
    e.facts = v.facts;
    for (uint32_t i = 0; i < t.args_count; ++i) BindTarget(p_.args[t.args_begin + i].value, e);
  }
}

void Interpreter::For(const Stmt& s) {
  const Value iter = Eval(s.b);
  double count = 0;  // 0: as many as the request has
  if (iter.items_exact || iter.size > 0) count = std::max(iter.size, static_cast<double>(iter.items.size()));
  if (IsExactStr(iter)) count = iter.size;
  // Passes per unit of request: the exact count, or what the iterable's
  // extent bounds (`range(n)` of a computed n, `range(i)` in a loop over i).
  const double passes = std::max({count, iter.extent.bound, 1.0});
  const double outer = loops_.empty() ? 1 : loops_.back().product;
  const double product = SatMul(outer, passes);
  if (passes > 1 && outer <= static_cast<double>(opts_.max_iterations)) CheckCount(product, s.b, "nested loops run");
  cost_->iterations = std::max(cost_->iterations, product);
  Loop frame;
  frame.recursive = s.recursive;
  frame.passes = passes;
  frame.product = product;
  frame.request_data = count == 0 && iter.extent.bound <= 1 && iter.origin == Origin::kData && !Spelled(iter);
  frame.request_sized = count == 0;
  frame.frame = next_frame_++;
  LoopGrowth growth;
  growth.frame = frame.frame;
  growth.at = s.b;
  growth.passes = passes;
  growth.request_sized = count == 0;
  CollectTargetNames(s.a, &frame.targets);
  Value element = ElementOf(iter);
  element.facts = BindingFacts(s.b);
  const bool runs = count > 0;  // a constant, non-empty sequence always runs

  auto pass = [&] {
    const JournalMark local(this);
    frame.pass = next_pass_++;
    loops_.push_back(frame);
    BindTarget(s.a, element);
    Assign("loop", RootValue("loop"));
    {
      CondScope c(this, !runs);
      GateScope g(this, s.b, false);
      GuardByIterable(s.b, s.a);
      if (s.c != kNoNode) Eval(s.c);
      GateScope filter(this, s.c, false);
      Walk(p_.body(s));
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
  uint8_t turn_in = turn_;  // a body may run any number of times: every pass starts from every turn so far
  for (int n = 0; n < kLoopPasses; ++n) {
    const JournalMark start(this);
    turn_ = turn_in;
    pass();
    turn_in |= turn_;
    changed.clear();
    std::vector<Touched> touched = TouchedSince(start);
    RecordPass(&growth, touched);
    for (Touched& t : touched) {
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
  FinishLoop(&growth);
  turn_ = turn_in;
  CondScope c(this, true);
  GateScope g(this, s.b, true);
  Walk(p_.orelse(s));
  turn_ |= turn_in;
}

void Interpreter::CollectTargetNames(NodeId target, std::vector<std::string_view>* out) {
  if (target == kNoNode) return;
  const Expr& t = p_.expr(target);
  if (t.kind == ExprKind::kName) out->push_back(t.name);
  if (t.kind == ExprKind::kTuple) {
    for (uint32_t i = 0; i < t.args_count; ++i) CollectTargetNames(p_.args[t.args_begin + i].value, out);
  }
}

void Interpreter::AssignTarget(NodeId target, Value v, NodeId value_expr) {
  if (target == kNoNode) return;
  const Expr& t = p_.expr(target);
  if (t.kind == ExprKind::kGetAttr && t.a != kNoNode && p_.expr(t.a).kind == ExprKind::kName) {
    const Expr& ns = p_.expr(t.a);
    const Value* nsv = Lookup(std::string(ns.name));
    // {% set ns.x = ... %} writes the namespace's own dict (Jinja2 compiles
    // it to ns['x'] = ...): a `_x` is the template's data, not Python's;
    // only the names that reach Namespace's internals are flagged.
    MacroEscapes(v, value_expr != kNoNode ? value_expr : target, "kept in a namespace attribute");
    if (!NamespaceOwnsAttribute(t.name)) {
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
      it->second.extent = Extent();  // for the name checks: no slot's carried state (bombs.cc)
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
    const std::string key = NsKey(ns.name, t.name);
    v.extent.set_pass = loops_.empty() ? 0 : loops_.back().pass;  // CarriedRead
    setters_[key] = value_expr != kNoNode ? value_expr : target;
    Assign(key, std::move(v), true);
    return;
  }
  if (t.kind == ExprKind::kName && value_expr != kNoNode) {
    // {% set ns = namespace(a=...) %}: the attributes start as given.
    const Expr& call = p_.expr(value_expr);
    if (call.kind == ExprKind::kCall && call.a != kNoNode && p_.expr(call.a).kind == ExprKind::kName &&
        p_.expr(call.a).name == "namespace") {
      for (uint32_t i = 0; i < call.args_count; ++i) {
        const Arg& a = p_.args[call.args_begin + i];
        if (a.name.empty()) continue;
        Value attr = Eval(a.value);
        attr.extent.set_pass = loops_.empty() ? 0 : loops_.back().pass;  // made in this pass: not carried
        attr.facts = BindingFacts(a.value);
        Assign(NsKey(t.name, a.name), std::move(attr), true);
      }
      v.ns_slot = t.name;
    }
  }
  BindTarget(target, v);
}

// The text a {% set x %}...{% endset %} body renders, when it is constant.
// Trimmed variants are kept too: trim_blocks and `-` strip whitespace.
Value Interpreter::BodyString(std::span<const NodeId> body) {
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

void Interpreter::BindParams(const Stmt& s, std::vector<Value>* given) {
  for (uint32_t i = 0; i < s.params_count; ++i) {
    const Arg& a = p_.args[s.params_begin + i];
    Value v = Data();
    if (a.value != kNoNode) {
      Value dflt = Eval(a.value);
      dflt.facts = BindingFacts(a.value);
      v = Join(v, dflt);
    }
    if (given && i < given->size()) v = (*given)[i];
    Assign(std::string(a.name), std::move(v));
  }
  for (std::string_view n : {"varargs", "kwargs"}) Assign(std::string(n), Data());
}

void Interpreter::AnalyseMacroBody(NodeId macro, std::vector<Value>* params) {
  const Stmt& s = p_.stmt(macro);
  const NodeId saved_macro = current_macro_;
  const int saved_cond = cond_depth_;
  auto saved_loops = std::move(loops_);
  loops_.clear();
  // One call of the body is a pass of its own (NoteCallGrowth).
  Loop call;
  call.frame = next_frame_++;
  call.pass = next_pass_++;
  loops_.push_back(call);
  current_macro_ = macro;
  cond_depth_ = 0;
  Cost* const saved_cost = cost_;
  Cost cost;
  cost_ = &cost;
  Extent* const saved_capture = captured_;  // a macro's output is its own, not an enclosing set block's
  captured_ = nullptr;
  const bool outermost = analysing_.insert(macro).second;  // a macro defined in its own body: once
  // Its output goes where it is printed: its own sink, its own gates, its
  // caller's turn.
  const NodeId saved_sink = rec_.sink();
  const uint32_t saved_gate = gate_;
  const uint8_t saved_turn = turn_;
  rec_.SetSink(macro);
  gate_ = 0;
  turn_ = kTurnInherit;
  const JournalMark pos(this);
  BindParams(s, params);
  MarkParameters(macro);
  Assign("caller", RootValue("caller"));
  Walk(p_.body(s));
  NoteCallGrowth(macro, call.frame, pos);
  RollbackLocals(pos);
  captured_ = saved_capture;
  // What a call costs, as the most any analysis of the body found.
  Cost& kept = macro_costs_[macro];
  kept.iterations = std::max(kept.iterations, cost.iterations);
  kept.output = std::max(kept.output, cost.output);
  if (outermost) analysing_.erase(macro);
  cost_ = saved_cost;
  rec_.SetSink(saved_sink);
  gate_ = saved_gate;
  turn_ = saved_turn;
  current_macro_ = saved_macro;
  cond_depth_ = saved_cond;
  loops_ = std::move(saved_loops);
}

// A set outside macros after a macro's definition: the definition-time
// analysis of the body read the name as it was then, but Jinja2 resolves it
// when the macro is called (`{% macro f(m) %}{{ m[k] }}{% endmacro %}{% set
// k = '__class__' %}{{ f(x) }}`). A macro sees the sets of the loop it was
// defined in and of the enclosing ones, not those of a loop inside that
// (Jinja2 renders a top-level macro whose loop sets k). Each value is joined
// in; one entry per set statement at most, each join bounded by the lattice.
void Interpreter::NoteLateGlobal(NodeId target) {
  if (current_macro_ != kNoNode || static_cast<int>(loops_.size()) > macro_loop_depth_) return;
  std::vector<std::string_view> names;
  CollectTargetNames(target, &names);
  for (std::string_view name : names) {
    const std::string key(name);
    const Value* v = Lookup(key);
    if (v == nullptr) continue;
    auto [it, fresh] = late_globals_.try_emplace(key, *v);
    if (!fresh) it->second = Join(it->second, *v);
  }
}

// Once the top level has run, every macro body is analysed once more with
// the late-bound globals holding every value they were set to, when one of
// them may be more than chat data (a literal, a root, a template-made
// value); plain data changes nothing the first analysis did not see.
void Interpreter::AnalyseMacrosWithLateGlobals() {
  const bool any = std::any_of(late_globals_.begin(), late_globals_.end(), [](const auto& g) {
    return Spelled(g.second) || g.second.items_exact || g.second.origin != Origin::kData;
  });
  if (!any) return;
  const JournalMark pos(this);
  for (const auto& [name, v] : late_globals_) Assign(name, v);
  for (size_t i = 0; i < p_.stmts.size() && budget_ > 0; ++i) {
    if (p_.stmts[i].kind != StmtKind::kMacro) continue;
    const NodeId macro = static_cast<NodeId>(i);
    auto it = call_params_.find(macro);
    std::vector<Value> params;
    if (it != call_params_.end()) params = it->second;
    AnalyseMacroBody(macro, it != call_params_.end() ? &params : nullptr);
  }
  RollbackLocals(pos);
}

// Call-site arguments, joined per parameter; a macro gets another look
// when they are more than plain data.
void Interpreter::RecordCall(NodeId macro, const Expr& call, const std::vector<Value>& args) {
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
    // the body only this way; so do text and content for the behaviour
    // analysis.
    if (Spelled(args[i]) || args[i].origin != Origin::kData || !args[i].facts.frags.empty() ||
        (args[i].facts.reads & (kReadTrigger | kReadContent))) {
      interesting = true;
    }
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

// Strongly connected components (Tarjan's algorithm, iterative: the
// graph may be as long as the template).
absl::flat_hash_map<NodeId, int> Interpreter::Components(const std::vector<Edge>& edges, bool conditional_too) {
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
void Interpreter::ReportRecursion() {
  const auto unconditional = Components(edges_, false);
  const auto all = Components(edges_, true);
  auto same = [](const absl::flat_hash_map<NodeId, int>& c, NodeId a, NodeId b) {
    const auto x = c.find(a), y = c.find(b);
    return x != c.end() && y != c.end() && x->second == y->second;
  };
  CheckFanOut(all);
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

}  // namespace ggufguard::jinja::analysis
