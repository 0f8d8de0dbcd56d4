// The interpreter: what a render costs (GG8014). The policy's limits, the
// bytes output statements write over their loops' passes, the state loop
// passes carry (and whether it grows geometrically), what a macro call costs,
// and recursion that fans out or grows what it passes down. The size model
// itself (Extent, Growth) is extent.h. See interpreter.h.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/text.h"
#include "ggufguard/template/interpreter.h"

namespace ggufguard::jinja::analysis {
namespace {

constexpr uint32_t kNoSlot = UINT32_MAX;
// A macro's parameters are carried state of a frame of their own.
constexpr uint32_t kParameterFrame = 0x80000000u;
// States one Growth follows; a loop that carries more follows the first
// (real loops carry a handful; each state costs a row and a column of the
// matrix the loop's passes raise, O(states^3) a squaring).
constexpr size_t kMaxStates = 16;
// How deep a Jinja2 macro recursion gets before Python's default recursion
// limit (1000) ends it with RecursionError: 150 levels render, 200 do not
// (Jinja2 3.1, ImmutableSandboxedEnvironment). A fan-out recursion whose
// depth is not a countdown from a known value is taken to reach it.
constexpr double kMaxRecursionDepth = 150;

std::string Count(double n) {
  if (n < 1e15) return std::to_string(static_cast<long long>(n));
  return absl::StrCat("10^", static_cast<int>(std::min(std::log10(n), 300.0)));
}

}  // namespace

void Interpreter::Bomb(NodeId at, std::string what) {
  Emit(Kind::kRenderBomb, Begin(at), absl::StrCat(ExprText(at), ": ", what));
}

void Interpreter::CheckOutputSize(double size, NodeId at) {
  if (size > static_cast<double>(opts_.max_output_bytes)) {
    Bomb(at, absl::StrCat("makes about ", FormatCount(size), " bytes > ", opts_.max_output_bytes));
  }
}

void Interpreter::CheckCount(double count, NodeId at, std::string_view what) {
  if (count > static_cast<double>(opts_.max_iterations)) {
    Bomb(at, absl::StrCat(Sv(what), " of about ", FormatCount(count), " > ", opts_.max_iterations));
  }
}

std::string Interpreter::FormatCount(double n) { return Count(n); }

double Interpreter::Bytes(const Value& v) {
  const Extent& e = v.extent;
  if (v.mask == kStr) return e.bound;
  if (v.mask == kNum) return std::log10(std::max(e.bound, 1.0)) + 2;  // its digits
  // A container's items, each with quotes and a separator, or a string.
  return std::max(e.bound, SatAdd(SatMul(e.bound, SatAdd(ItemBytes(v), 4)), 2));
}

double Interpreter::ItemBytes(const Value& container) {
  const double e = container.extent.element;
  return container.items_numbers ? std::log10(std::max(e, 1.0)) + 2 : e;  // a range's: digits
}

Extent Interpreter::Printed(const Value& v) {
  Extent e = v.extent;
  e.bound = Bytes(v);
  e.element = 1;
  e.set_pass = 0;
  return e;
}

double Interpreter::Passes() const { return loops_.empty() ? 1 : loops_.back().product; }

void Interpreter::NoteOutput(const Extent& printed, size_t offset, NodeId expr) {
  const double passes = Passes();
  if (captured_ != nullptr) {  // a {% set x %} block's body: what x holds
    *captured_ = SumOf(*captured_, Scaled(printed, passes / capture_passes_));
    return;
  }
  const double bytes = printed.bound;
  const double total = SatMul(bytes, passes);
  cost_->output = SatAdd(cost_->output, total);
  // One pass's bytes are the expression's own check (Multiply, Concat...),
  // and loops past the iteration limit are reported as such.
  if (passes > 1 && passes <= static_cast<double>(opts_.max_iterations) &&
      total > static_cast<double>(opts_.max_output_bytes)) {
    Emit(Kind::kRenderBomb, offset,
         absl::StrCat(expr == kNoNode ? std::string("text") : ExprText(expr), ": writes about ", Count(bytes), " bytes in each of ", Count(passes),
                      " passes of its loops: about ", Count(total), " bytes > ", opts_.max_output_bytes));
  }
}

uint32_t Interpreter::SlotFor(uint32_t frame, const std::string& key) {
  auto& ids = slot_ids_[frame];
  if (auto it = ids.find(key); it != ids.end()) return it->second;
  if (slots_.size() >= kMaxSlots) return kNoSlot;  // past the bound, what is carried is not followed
  const auto slot = static_cast<uint32_t>(slots_.size());
  // `key` may be a slot's own name (slots_[i].second), which the push_back
  // may move: the map takes the copy now in slots_.
  slots_.push_back({frame, key});
  ids.emplace(slots_.back().second, slot);
  return slot;
}

std::string Interpreter::SlotName(uint32_t slot) const {
  if (slot >= slots_.size()) return "?";
  std::string name = slots_[slot].second;
  std::replace(name.begin(), name.end(), '\x01', '.');  // NsKey's separator
  return EscapeForDisplay(name, 40);
}

Value Interpreter::CarriedRead(const std::string& key, Value v) {
  if (loops_.empty()) return v;
  const Loop& l = loops_.back();
  if (v.extent.set_pass == l.pass) return v;  // set in this pass: its copies are this pass's
  const uint32_t slot = SlotFor(l.frame, key);
  v.extent.copies.clear();
  v.extent.total = -1;
  if (slot != kNoSlot) v.extent.copies.push_back({slot, 1});
  return v;
}

void Interpreter::MarkParameters(NodeId macro) {
  const Stmt& m = p_.stmt(macro);
  for (uint32_t i = 0; i < m.params_count; ++i) {
    const std::string name(p_.args[m.params_begin + i].name);
    const Value* cur = Lookup(name);
    const uint32_t slot = SlotFor(kParameterFrame | static_cast<uint32_t>(macro), name);
    if (cur == nullptr || slot == kNoSlot) continue;
    Value v = *cur;
    v.extent.copies = {{slot, 1}};
    v.extent.total = -1;
    Assign(name, std::move(v));
  }
}

// One pass has run: what each namespace attribute it set holds of the
// state the pass began with (a row of the loop's Growth), and what it adds
// beyond those copies.
void Interpreter::RecordPass(LoopGrowth* g, const std::vector<Touched>& touched) {
  absl::flat_hash_map<std::string_view, const Value*> before;
  for (const Touched& t : touched) {
    if (t.had_before) before.emplace(t.key, &t.before);
  }
  auto start_bound = [&](uint32_t slot) {
    const std::string key = slots_[slot].second;
    if (auto it = before.find(key); it != before.end()) return it->second->extent.bound;
    const Value* v = Lookup(key);
    return v ? v->extent.bound : 1.0;
  };
  for (const Touched& t : touched) {
    const bool carried_state = t.key.find('\x01') != std::string::npos || mutated_.contains(t.key);
    if (!t.set_now || !carried_state || t.key == kAnyNamespaceAttribute) continue;
    const uint32_t slot = SlotFor(g->frame, t.key);
    if (slot == kNoSlot) continue;
    if (g->entry.try_emplace(slot, t.had_before ? t.before : Data()).second) g->set.push_back(slot);
    LoopGrowth::Way way{{}, PathTotal(t.now.extent)};
    Extent& outer = g->outer[slot];
    outer = Extent{0, 1, {}, -1, 0};
    double carried = 0;
    for (const Copies& c : t.now.extent.copies) {
      if (c.slot < slots_.size() && slots_[c.slot].first == g->frame) {
        way.copies.push_back(c);
        carried = SatAdd(carried, SatMul(c.n, start_bound(c.slot)));
      } else {
        outer.copies.push_back(c);  // another frame's state (an enclosing loop's, a parameter): passed on
      }
    }
    outer.total = std::min(PathTotal(outer), way.total);
    g->rows[slot].push_back(std::move(way));  // each pass's is one way of setting it
    // What a pass adds beyond its copies, from the first pass that set it:
    // it began from what the loop began with, where later passes begin from
    // the joins of earlier ones and would count their growth again.
    g->constant.try_emplace(slot, std::max(0.0, t.now.extent.bound - carried));
  }
}

// The loop's passes have run: the affine map of one pass, raised to the
// number of passes, bounds what the loop leaves in each attribute it sets;
// geometric growth over a loop the request sizes, or a bound past the
// limit, is a bomb. What it leaves is then said in the enclosing pass's
// terms, so that an enclosing loop composes it with its own passes.
Growth Interpreter::PassGrowth(LoopGrowth* g, std::vector<uint32_t>* states, size_t* set_count,
                               std::vector<double>* start) {
  absl::flat_hash_map<uint32_t, size_t> index;
  auto add = [&](uint32_t slot) {
    if (index.contains(slot) || states->size() >= kMaxStates) return;
    index.emplace(slot, states->size());
    states->push_back(slot);
  };
  for (uint32_t slot : g->set) add(slot);
  *set_count = states->size();
  for (uint32_t slot : g->set) {
    for (const LoopGrowth::Way& way : g->rows[slot]) {
      for (const Copies& c : way.copies) add(c.slot);
    }
  }
  Growth m(states->size());
  start->assign(states->size(), 1);
  for (size_t i = 0; i < states->size(); ++i) {
    const uint32_t slot = (*states)[i];
    if (i >= *set_count) {  // read, never set: the same in every pass
      m.Keep(i);
      const Value* v = Lookup(slots_[slot].second);
      (*start)[i] = v ? v->extent.bound : 1;
      continue;
    }
    for (const LoopGrowth::Way& way : g->rows[slot]) {
      std::vector<std::pair<size_t, double>> copies;
      for (const Copies& c : way.copies) {
        if (auto it = index.find(c.slot); it != index.end()) copies.push_back({it->second, c.n});
      }
      m.AddWay(i, copies, way.total);
    }
    m.RaiseConstant(i, std::max(0.0, g->constant[slot]));
    (*start)[i] = g->entry[slot].extent.bound;
  }
  return m;
}

void Interpreter::FinishLoop(LoopGrowth* g) {
  if (g->set.empty()) return;
  std::vector<uint32_t> states;
  size_t set_count = 0;
  std::vector<double> start;
  const Growth m = PassGrowth(g, &states, &set_count, &start);
  const int grows = m.GeometricState();
  const double passes = g->request_sized ? 1 : g->passes;
  // Over a loop the request sizes: one pass for the bounds, two for what it
  // multiplies (below); over a constant one, all of its passes.
  const Growth::Raised raised = m.Raise(passes);
  const std::vector<double> bounds = raised.After(start);
  size_t worst = 0;
  for (size_t i = 1; i < set_count; ++i) {
    if (bounds[i] > bounds[worst]) worst = i;
  }
  const size_t reported = grows >= 0 ? static_cast<size_t>(grows) : worst;
  const std::string key = slots_[states[reported]].second;
  const NodeId at = setters_.contains(key) ? setters_.at(key) : g->at;
  const std::string name = SlotName(states[reported]);
  const double factor = m.m(reported, reported);
  const std::string how = grows >= 0 && factor >= 1e15 ? absl::StrCat("multiplies ", name, " by itself")
                          : grows >= 0 && factor > 1   ? absl::StrCat("multiplies ", name, " by ", Count(std::ceil(factor)))
                          : grows >= 0                 ? absl::StrCat("makes ", name, " grow geometrically")
                                                       : absl::StrCat("grows ", name);
  if (grows >= 0 && g->request_sized) {
    Bomb(at, absl::StrCat(how, " in every iteration of a loop over request data"));
  } else if (!g->request_sized && bounds[reported] > static_cast<double>(opts_.max_output_bytes)) {
    Bomb(at, absl::StrCat(how, " in each of ", Count(passes), " iterations: about ", Count(bounds[reported]),
                          " bytes > ", opts_.max_output_bytes));
  }
  // What each attribute holds of the enclosing pass's state: M^passes of
  // what the states held as the loop began (over a loop the request sizes,
  // two passes: enough to show what one pass multiplies).
  const Growth::Raised power = g->request_sized ? m.Raise(2) : raised;
  const Loop* enclosing = loops_.empty() ? nullptr : &loops_.back();
  auto entry_copies = [&](size_t j) -> Extent {
    const uint32_t slot = states[j];
    const std::string k = slots_[slot].second;
    const Value* v = j < set_count ? &g->entry[slot] : Lookup(k);
    Extent e{0, 1, {}, -1, 0};
    if (v == nullptr) return e;
    if (enclosing && v->extent.set_pass != enclosing->pass) {
      const uint32_t outer_slot = SlotFor(enclosing->frame, k);
      if (outer_slot != kNoSlot) e.copies.push_back({outer_slot, 1});
      return e;
    }
    e.copies = v->extent.copies;
    e.total = v->extent.total;
    return e;
  };
  std::vector<Extent> entries(states.size());
  for (size_t j = 0; j < states.size(); ++j) entries[j] = entry_copies(j);
  for (size_t i = 0; i < set_count; ++i) {
    const std::string k = slots_[states[i]].second;
    const Value* cur = Lookup(k);
    if (cur == nullptr) continue;
    Value v = *cur;
    v.extent.bound = bounds[i];
    v.extent.copies = g->outer[states[i]].copies;
    v.extent.total = g->outer[states[i]].total;
    for (size_t j = 0; j < states.size(); ++j) AddCopies(&v.extent, entries[j], power.Copies(i, j));
    v.extent.set_pass = enclosing ? enclosing->pass : 0;
    Assign(k, std::move(v), /*shared=*/true);
  }
}

namespace {

// The shortest of `v`'s exact strings, when it is exact.
std::optional<size_t> ShortestLength(const Value* v) {
  if (v == nullptr || !IsExactStr(*v) || v->strs.empty()) return std::nullopt;
  size_t shortest = v->strs[0].size();
  for (const std::string& s : v->strs) shortest = std::min(shortest, s.size());
  return shortest;
}

// What replacing `old` by `with` in `base` can make: every occurrence
// (every gap, for '') becomes `with`. The copies of carried state multiply
// only when `with` brings more of `old` back than it replaced; otherwise a
// pass adds at most what the first one did, to as many occurrences.
Extent ReplacedExtent(const Extent& base, const Value* old, const Value* with) {
  const Extent none{0, 1, {}, 0};
  const Extent& w = with ? with->extent : none;
  const double l = static_cast<double>(ShortestLength(old).value_or(1));
  const double factor = l == 0 ? SatAdd(1, w.bound) : std::max(1.0, w.bound / l);
  Extent out;
  out.bound = SatAdd(SatMul(base.bound, factor), l == 0 ? w.bound : 0);
  out.element = base.element;
  // A replacement holding `old` once (`"` by `\\"`) leaves as many to
  // replace next time; twice, it doubles them, and so does '' (a gap between
  // every two characters). A longer `old` may also form again across a
  // replacement's edges: any of its characters in `with` counts. Only
  // literals are followed: a replacement computed from the request (a
  // placeholder by a file's text) is taken not to compound.
  bool compounds = false;
  if (old && with && IsExactStr(*old) && IsExactStr(*with)) {
    for (const std::string& o : old->strs) {
      for (const std::string& x : with->strs) {
        size_t count = 0;
        if (!o.empty()) {
          for (size_t at = x.find(o); at != std::string::npos; at = x.find(o, at + o.size())) ++count;
        }
        compounds = compounds || (o.empty() && !x.empty()) || count >= 2 ||
                    (o.size() > 1 && x.find_first_of(o) != std::string::npos);
      }
    }
  }
  AddCopies(&out, base, compounds ? factor : 1);
  // Carried state in `with` is inserted at every occurrence (x|replace('a',
  // x) of a carried x grows as x times its own bound).
  AddCopies(&out, w, SatAdd(base.bound / std::max(l, 1.0), 1));
  return out;
}

}  // namespace

Value Interpreter::Sized(Value r, const Value& base, std::string_view name, const Expr& e,
                         const std::vector<Value>& args, NodeId id, bool method) {
  const Value* a0 = ArgValue(e, args, 0, "");
  auto arg = [&](size_t index, std::string_view keyword) { return ArgValue(e, args, index, keyword); };
  auto bound = [](const Value* v, double dflt) { return v ? v->extent.bound : dflt; };
  const bool exact = r.exact && r.mask == kStr;
  auto set = [&](Extent x) {
    if (exact) x.bound = r.extent.bound;  // folded: its real length
    r.extent = std::move(x);
  };
  auto pass_through = [&] {  // no larger than its input, holding what it holds
    if (!r.exact) r.extent = base.extent;
  };
  if (name == "join") {
    // list|join(sep), sep.join(list)
    const Value& list = method ? (a0 ? *a0 : base) : base;
    const Value* sep = method ? &base : arg(0, "d");
    const bool chars = IsExactStr(list) || list.mask == kStr;
    const double items = list.extent.bound, element = chars ? 1 : ItemBytes(list);
    Extent x;
    x.bound = SatAdd(SatMul(items, element), SatMul(std::max(items - 1, 0.0), bound(sep, 0)));
    x.copies = list.extent.copies;
    x.total = list.extent.total;
    if (sep) AddCopies(&x, sep->extent, items);
    CheckOutputSize(x.bound, id);
    set(std::move(x));
  } else if (name == "replace") {
    Extent x = ReplacedExtent(base.extent, arg(0, "old"), arg(1, "new"));
    CheckOutputSize(x.bound, id);
    set(std::move(x));
  } else if (name == "center" || name == "ljust" || name == "rjust" || name == "zfill") {
    const double width = bound(arg(0, "width"), name == "center" && !method ? 80 : 0);
    CheckOutputSize(width, id);
    Extent x = base.extent;
    x.bound = std::max(x.bound, width);
    set(std::move(x));
  } else if (name == "expandtabs" || name == "indent") {
    // Each tab, or each line, gains up to `width` spaces; a pass over its
    // own output adds no tabs or lines, so copies stay as they were.
    const double width = bound(arg(0, name == "indent" ? "width" : "tabsize"), name == "indent" ? 4 : 8);
    double lines = base.extent.bound;
    if (IsExactStr(base)) {
      lines = 0;
      for (const std::string& t : base.strs) lines = std::max(lines, static_cast<double>(std::count(t.begin(), t.end(), name == "indent" ? '\n' : '\t')) + 1);
    }
    Extent x = base.extent;
    x.bound = SatAdd(base.extent.bound, SatMul(lines, width));
    CheckOutputSize(x.bound, id);
    set(std::move(x));
  } else if (name == "wordwrap") {
    const double wrap = bound(arg(2, "wrapstring"), 1);  // a wrap string after every character, at worst
    Extent x = base.extent;
    x.bound = SatMul(base.extent.bound, SatAdd(1, wrap));
    CheckOutputSize(x.bound, id);
    set(std::move(x));
  } else if (name == "truncate") {
    const Value* length = arg(0, "length");
    Extent x = base.extent;
    x.bound = std::min(x.bound, SatAdd(bound(length, 255), SatAdd(bound(arg(2, "end"), 3), 5)));
    if (!length || IsExactNum(*length)) x.copies.clear();  // capped by a literal
    set(std::move(x));
  } else if (!method && (name == "tojson" || name == "pprint" || name == "e" || name == "escape" ||
                         name == "forceescape" || name == "urlencode" || name == "xmlattr" || name == "urlize")) {
    // Escapes make a character up to six bytes (JSON's u-escapes, &#34;); JSON's indent
    // adds up to its width per item. JSON and repr escape their own quotes
    // and backslashes again when applied twice: two copies per pass.
    Extent x;
    const double indent = bound(arg(SIZE_MAX, "indent"), 0);
    x.bound = SatAdd(SatMul(Bytes(base), SatAdd(6, indent)), 2);
    x.element = base.extent.element;
    AddCopies(&x, base.extent, name == "tojson" || name == "pprint" ? 2 : 1);
    CheckOutputSize(x.bound, id);
    set(std::move(x));
  } else if (!method && name == "string") {
    Extent x = base.extent;
    x.bound = Bytes(base);
    set(std::move(x));
  } else if (!method && (name == "int" || name == "float")) {
    // A number read from text: up to ten to the power of its digits; or the
    // number it already was (`n|default(64)|int` is 64, or the request's n).
    if (base.mask != kNum && !r.exact) {
      const double digits = TextBound(base);
      r.extent.bound = std::max(base.extent.bound, digits >= 300 ? kHuge : std::pow(10, digits));
    }
  } else if (!method && name == "sum") {
    if (!r.exact) r.extent.bound = SatMul(base.extent.bound, base.extent.element);
  } else if (!method && (name == "first" || name == "last" || name == "random")) {
    if (!r.exact) {
      r.extent = base.extent;
      r.extent.bound = base.mask == kStr ? 1 : base.extent.element;
    }
  } else if (!method && name == "list") {
    if (!r.items_exact) {
      r.extent = base.extent;
      if (base.mask == kStr) r.extent.element = 1;
    }
  } else if (method && (name == "split" || name == "splitlines" || name == "partition" || name == "rpartition")) {
    r.extent = base.extent;
    r.extent.element = base.extent.bound;
  } else if (name == "lower" || name == "upper" || name == "title" || name == "capitalize" || name == "swapcase" ||
             name == "trim" || name == "strip" || name == "lstrip" || name == "rstrip" || name == "reverse" ||
             name == "casefold" || name == "items" || name == "keys" || name == "values" || name == "copy" ||
             name == "sort" || name == "unique" || name == "dictsort" || name == "select" || name == "reject" ||
             name == "selectattr" || name == "rejectattr" || name == "map" || name == "batch" || name == "slice" ||
             name == "groupby" || name == "safe") {
    // Case maps change a character's bytes once, not again on their own
    // output; the rest pick, order or group what they are given.
    pass_through();
  }
  return r;
}

void Interpreter::NoteCallGrowth(NodeId macro, uint32_t frame, size_t journal_pos) {
  LoopGrowth g;
  g.frame = frame;
  RecordPass(&g, SharedTouchedSince(journal_pos));
  if (g.set.empty()) return;
  std::vector<uint32_t> states;
  size_t set_count = 0;
  std::vector<double> start;
  Growth m = PassGrowth(&g, &states, &set_count, &start);
  const int grows = m.GeometricState();
  if (grows < 0) return;
  call_growth_.insert_or_assign(macro, std::make_pair(std::move(m), SlotName(states[static_cast<size_t>(grows)])));
}

// Does `arg` pass a part of what the caller holds from the request (an
// attribute, item or slice of a parameter, or an element of a loop over
// the request's data)? Recursion on such parts ends where the data does.
bool Interpreter::DescendsIntoData(NodeId arg) const {
  bool wrapped = false;
  for (int steps = 0; arg != kNoNode && steps < 300; ++steps) {
    const Expr& x = p_.expr(arg);
    if (x.kind == ExprKind::kGetAttr || x.kind == ExprKind::kGetItem || x.kind == ExprKind::kSlice ||
        x.kind == ExprKind::kFilter) {
      wrapped = true;
      arg = x.a;
      continue;
    }
    if (x.kind == ExprKind::kCall && x.a != kNoNode && p_.expr(x.a).kind == ExprKind::kGetAttr) {
      wrapped = true;  // a method of a part: p.items(), p.get('x')
      arg = p_.expr(x.a).a;
      continue;
    }
    if (x.kind == ExprKind::kCondExpr) return DescendsIntoData(x.a) || DescendsIntoData(x.c);
    if (x.kind == ExprKind::kDict || x.kind == ExprKind::kList || x.kind == ExprKind::kTuple) {
      for (uint32_t i = 0; i < x.args_count; ++i) {
        if (DescendsIntoData(p_.args[x.args_begin + i].value)) return true;  // {'type': u} of a part u
      }
      return false;
    }
    if (x.kind != ExprKind::kName) return false;
    for (const Loop& l : loops_) {
      if (!l.request_data) continue;
      for (std::string_view t : l.targets) {
        if (t == x.name) return true;
      }
    }
    return wrapped && IsMacroParameter(x.name);
  }
  return false;
}

Value Interpreter::MacroCall(NodeId macro, const Expr& call, const std::vector<Value>& args, NodeId id) {
  const Stmt& m = p_.stmt(macro);
  const double passes = Passes();
  if (current_macro_ != kNoNode) {
    Edge edge;
    edge.from = current_macro_, edge.to = macro, edge.conditional = cond_depth_ > 0, edge.offset = call.begin;
    edge.times = passes;
    size_t positional = 0;
    for (uint32_t i = 0; i < call.args_count; ++i) {
      const Arg& a = p_.args[call.args_begin + i];
      if (a.star != 0) continue;
      edge.descends = edge.descends || DescendsIntoData(a.value);
      size_t param = SIZE_MAX;
      if (a.name.empty()) {
        param = positional++;
      } else {
        for (uint32_t k = 0; k < m.params_count; ++k) {
          if (p_.args[m.params_begin + k].name == a.name) param = k;
        }
      }
      if (param >= m.params_count) continue;
      Extent held{0, 1, {}, args[i].extent.total, 0};
      for (const Copies& c : args[i].extent.copies) {
        if (c.slot < slots_.size() && slots_[c.slot].first == (kParameterFrame | static_cast<uint32_t>(current_macro_))) {
          held.copies.push_back(c);
        }
      }
      if (!held.copies.empty()) edge.growth.push_back({static_cast<uint32_t>(param), std::move(held)});
      // f(n - 1) in f: a countdown of its parameter n.
      const Expr& x = p_.expr(a.value);
      if (macro == current_macro_ && edge.countdown < 0 && x.kind == ExprKind::kBinary && x.name == "-" &&
          x.a != kNoNode && x.b != kNoNode && p_.expr(x.a).kind == ExprKind::kName &&
          p_.expr(x.a).name == p_.args[m.params_begin + param].name && p_.expr(x.b).kind == ExprKind::kNumber &&
          p_.expr(x.b).number >= 1) {
        edge.countdown = static_cast<int>(param);
        edge.step = p_.expr(x.b).number;
      }
    }
    edges_.push_back(std::move(edge));
  }
  RecordCall(macro, call, args);
  NoteRoot(absl::StrCat("macro:", Sv(m.name)));
  // A macro that grows what it reads geometrically at every call, called in
  // the passes of a loop: the loop compounds it.
  if (const auto it = call_growth_.find(macro); it != call_growth_.end() && !loops_.empty()) {
    const bool request = std::any_of(loops_.begin(), loops_.end(), [](const Loop& l) { return l.request_sized; });
    const Growth& growth = it->second.first;
    double most = 0;
    for (double b : growth.After(passes, std::vector<double>(growth.size(), 1))) most = std::max(most, b);
    if (request || most > static_cast<double>(opts_.max_output_bytes)) {
      Bomb(id, absl::StrCat(EscapeForDisplay(m.name, 40), "() makes ", it->second.second, " grow geometrically at every call, ",
                            request ? std::string("in every iteration of a loop over request data")
                                    : absl::StrCat("in each of ", Count(passes), " passes of its loops: about ", Count(most),
                                                   " bytes > ", opts_.max_output_bytes)));
    }
  }
  Value out = Computed(kStr);  // a macro's output
  if (auto it = macro_costs_.find(macro); it != macro_costs_.end() && !analysing_.contains(macro)) {
    const Cost& c = it->second;
    const double iterations = SatMul(c.iterations, passes);
    if (passes > 1 && iterations > static_cast<double>(opts_.max_iterations)) {
      Bomb(id, absl::StrCat(EscapeForDisplay(m.name, 40), "() runs ", Count(c.iterations), " loop passes, in each of ",
                            Count(passes), " passes of the loops around the call: about ", Count(iterations), " > ",
                            opts_.max_iterations));
    }
    cost_->iterations = std::max(cost_->iterations, iterations);
    out.extent.bound = std::max(1.0, c.output);
  }
  return out;
}

// Recursion within each group of macros that call one another: the calls
// per level (fan-out) to the power of the depth, and what the arguments
// hold of the parameters at each level (a string doubled on the way down).
void Interpreter::CheckFanOut(const absl::flat_hash_map<NodeId, int>& components) {
  auto component = [&](NodeId n) {
    const auto it = components.find(n);
    return it == components.end() ? -1 : it->second;
  };
  // One edge per call site: a body analysed again records its calls again.
  absl::flat_hash_map<int, std::vector<const Edge*>> within;
  absl::flat_hash_map<std::pair<NodeId, size_t>, const Edge*> sites;
  for (const Edge& e : edges_) {
    const int c = component(e.from);
    if (c < 0 || c != component(e.to)) continue;
    auto [it, fresh] = sites.try_emplace({e.from, e.offset}, &e);
    if (fresh) {
      within[c].push_back(&e);
    } else if (e.times > it->second->times || e.growth.size() > it->second->growth.size()) {
      std::replace(within[c].begin(), within[c].end(), it->second, &e);
      it->second = &e;
    }
  }
  std::vector<int> order;
  for (const auto& [c, unused] : within) order.push_back(c);
  std::sort(order.begin(), order.end());  // a fixed order of findings
  for (int c : order) {
    std::vector<const Edge*>& calls = within[c];
    std::sort(calls.begin(), calls.end(), [](const Edge* a, const Edge* b) { return a->offset < b->offset; });
    // Fan-out: the calls per level of a macro that counts a parameter down
    // from a number the template gives it (f(n - 1) from f(40)), to the
    // power of the levels that count takes. A recursion on the request's
    // data (a part of a parameter, an element of a loop over the request)
    // ends where the data does, and each call takes another part.
    double fan = 0, countdown_depth = 0;
    const Edge* counted = nullptr;
    for (const Edge* e : calls) {
      if (e->from != e->to || e->descends || e->countdown < 0) continue;
      const auto it = call_params_.find(e->to);
      if (it == call_params_.end() || static_cast<size_t>(e->countdown) >= it->second.size()) continue;
      const Value& start = it->second[static_cast<size_t>(e->countdown)];
      if (start.mask != kNum || !Spelled(start)) continue;  // a count the request gives
      counted = counted ? counted : e;
      fan = SatAdd(fan, e->times);
      countdown_depth = std::max(countdown_depth, std::ceil(start.extent.bound / e->step) + 1);
    }
    const double depth = counted ? std::min(countdown_depth, kMaxRecursionDepth) : kMaxRecursionDepth;
    if (counted && fan >= 2) {
      const double calls_made = std::pow(fan, depth);  // inf past double's range: kHuge below
      if (calls_made > static_cast<double>(opts_.max_iterations)) {
        Emit(Kind::kRenderBomb, counted->offset,
             absl::StrCat(EscapeForDisplay(p_.stmt(counted->to).name, 40), "() calls itself ", Count(fan),
                          " times per level, counting down ", Count(depth), " levels: about ",
                          Count(std::min(calls_made, kHuge)), " calls > ", opts_.max_iterations));
      }
    }
    const Edge* first = calls.front();
    const std::string name = EscapeForDisplay(p_.stmt(first->to).name, 40);
    // The parameters each level passes down, as copies of the caller's.
    std::vector<uint32_t> states;
    absl::flat_hash_map<uint32_t, size_t> index;
    auto state = [&](uint32_t slot) {
      auto [it, fresh] = index.try_emplace(slot, states.size());
      if (fresh) states.push_back(slot);
      return it->second;
    };
    // Each call site is one way of setting the callee's parameters.
    std::vector<std::tuple<size_t, std::vector<std::pair<size_t, double>>, double>> ways;
    for (const Edge* e : calls) {
      const Stmt& callee = p_.stmt(e->to);
      for (const auto& [param, held] : e->growth) {
        if (states.size() >= kMaxStates) break;
        const uint32_t to =
            SlotFor(kParameterFrame | static_cast<uint32_t>(e->to), std::string(p_.args[callee.params_begin + param].name));
        if (to == kNoSlot) continue;
        std::vector<std::pair<size_t, double>> copies;
        for (const Copies& h : held.copies) copies.push_back({state(h.slot), h.n});
        ways.emplace_back(state(to), std::move(copies), PathTotal(held));
      }
    }
    if (states.empty()) continue;
    Growth m(states.size());
    for (const auto& [i, copies, total] : ways) m.AddWay(i, copies, total);
    const int grows = m.GeometricState();
    if (grows < 0) continue;
    const double size = m.After(depth, std::vector<double>(states.size(), 1))[static_cast<size_t>(grows)];
    if (size > static_cast<double>(opts_.max_output_bytes)) {
      Emit(Kind::kRenderBomb, first->offset,
           absl::StrCat(name, "() passes ", SlotName(states[static_cast<size_t>(grows)]),
                        " down grown at every level of its recursion: about ", Count(size), " bytes at a depth of ",
                        Count(depth), " > ", opts_.max_output_bytes));
    }
  }
}

}  // namespace ggufguard::jinja::analysis
