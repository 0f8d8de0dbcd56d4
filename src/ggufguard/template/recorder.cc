// The behaviour record and its judgement (recorder.h). The judgement reads
// every event as it reaches the output (a macro's at each of its prints),
// and says, bounded: the text the template writes and in whose turn, what
// gates it, what becomes of each role's content. docs/template-behaviour.md
// gives the reasoning behind each rule.
#include "ggufguard/template/recorder.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ggufguard/base/text.h"

namespace ggufguard::jinja::analysis {
namespace {

constexpr size_t kMaxGates = size_t{1} << 18;
constexpr size_t kMaxFrags = size_t{1} << 18;
constexpr size_t kMaxEvents = size_t{1} << 16;
constexpr size_t kMaxRunBytes = 8192;
constexpr size_t kMaxQuote = 72;      // characters of text quoted in a finding
constexpr size_t kMaxCondition = 60;  // of a condition

std::string_view Trimmed(std::string_view s) {
  const size_t a = s.find_first_not_of(" \t\r\n");
  if (a == std::string_view::npos) return {};
  const size_t b = s.find_last_not_of(" \t\r\n");
  return s.substr(a, b - a + 1);
}

}  // namespace

Recorder::Recorder() {
  gates_.emplace_back();   // 0: no condition
  frags_.emplace_back();   // 0: nothing (what a full table hands out)
}

uint32_t Recorder::NewGate(uint32_t parent, NodeId cond, bool negated, uint32_t reads, uint32_t trigger) {
  const auto key = std::make_tuple(static_cast<int>(negated), static_cast<uint64_t>(static_cast<uint32_t>(cond)), parent);
  if (auto it = gate_index_.find(key); it != gate_index_.end()) {
    Gate& g = gates_[it->second];
    g.reads |= reads;
    if (g.trigger == 0) g.trigger = trigger;
    g.trigger_applies = g.trigger != 0 && TriggerApplies(g.reads, negated);
    return it->second;
  }
  if (gates_.size() >= kMaxGates) return parent;
  Gate g;
  g.parent = parent;
  g.cond = cond;
  g.negated = negated;
  g.reads = reads;
  g.trigger = trigger;
  g.trigger_applies = trigger != 0 && TriggerApplies(reads, negated);
  gates_.push_back(std::move(g));
  const uint32_t id = static_cast<uint32_t>(gates_.size() - 1);
  gate_index_.emplace(key, id);
  return id;
}

// A comparison picks out the branch where it holds (`'x' in content`), or
// where it does not (`'x' not in content`), or either (`content|length >
// 500`); the other branch is every other conversation's.
bool TriggerApplies(uint32_t reads, bool negated) {
  if (reads & kReadTriggerAny) return true;
  return negated == ((reads & kReadTriggerNeg) != 0);
}

uint32_t Recorder::ChainTrigger(uint32_t g) const {
  for (; g != 0; g = gates_[g].parent) {
    if (gates_[g].trigger_applies) return gates_[g].trigger;
  }
  return 0;
}

uint32_t Recorder::Intern(int kind, uint64_t key, uint32_t gate, Fragment f) {
  const auto k = std::make_tuple(kind, key, gate);
  if (auto it = frag_index_.find(k); it != frag_index_.end()) {
    Fragment& old = frags_[it->second];
    for (uint32_t a : f.args) {  // a call visited again may pass more
      if (old.args.size() < 4 * kMaxFragments && std::find(old.args.begin(), old.args.end(), a) == old.args.end()) {
        old.args.push_back(a);
      }
    }
    return it->second;
  }
  if (frags_.size() >= kMaxFrags) return 0;
  f.sink = sink_;
  frags_.push_back(std::move(f));
  const uint32_t id = static_cast<uint32_t>(frags_.size() - 1);
  if (frags_[id].kind == FragKind::kContent && frags_[id].base == 0) frags_[id].base = id;
  frag_index_.emplace(k, id);
  return id;
}

uint32_t Recorder::Literal(uint32_t offset, uint32_t gate, std::string_view text) {
  Fragment f;
  f.offset = offset;
  f.gate = gate;
  f.text = std::string(text.substr(0, kMaxRunBytes));
  return Intern(0, absl::HashOf(offset, text), gate, std::move(f));
}

uint32_t Recorder::MacroOutput(NodeId macro, uint32_t offset, uint32_t gate, const std::vector<uint32_t>& args) {
  Fragment f;
  f.kind = FragKind::kMacro;
  f.offset = offset;
  f.gate = gate;
  f.macro = macro;
  f.args = args;
  return Intern(1, absl::HashOf(macro, offset), gate, std::move(f));
}

uint32_t Recorder::Content(uint64_t key, uint32_t offset, uint32_t gate, uint32_t reads, uint32_t rewrite,
                           uint32_t forged, uint32_t base, uint64_t source) {
  Fragment f;
  f.source = source;
  f.kind = FragKind::kContent;
  f.offset = offset;
  f.gate = gate;
  f.reads = reads;
  f.rewrite = rewrite;
  f.forged = forged;
  f.base = base;
  return Intern(2, key, gate, std::move(f));
}

bool Recorder::LiteralHoldsHeaderOrToken(uint32_t id) {
  Fragment& f = frags_[id];
  if (f.header_or_token < 0) {
    f.header_or_token = HoldsHeaderOrToken(f.text) ? 1 : 0;
  }
  return f.header_or_token == 1;
}

uint32_t Recorder::RoleFrag(uint32_t offset, uint32_t gate, bool renames_user) {
  Fragment f;
  f.kind = FragKind::kRole;
  f.offset = offset;
  f.gate = gate;
  f.renames_user = renames_user;
  return Intern(3, (uint64_t{renames_user} << 32) | offset, gate, std::move(f));
}

std::vector<uint32_t> Recorder::EndCapture() {
  std::vector<uint32_t> out = std::move(captures_.back());
  captures_.pop_back();
  return out;
}

// A captured piece: adjacent literals under one gate are one fragment, and
// past kMaxFragments a literal joins the last one, so no text is lost.
void Recorder::Capture(uint32_t id) {
  if (id == 0) return;
  std::vector<uint32_t>& c = captures_.back();
  const Fragment& f = frags_[id];
  if (!c.empty() && f.kind == FragKind::kLiteral && frags_[c.back()].kind == FragKind::kLiteral &&
      (frags_[c.back()].gate == f.gate || c.size() >= kMaxFragments)) {
    const Fragment& last = frags_[c.back()];
    const std::string joined = last.text + f.text;
    c.back() = Literal(last.offset, last.gate, joined);
    return;
  }
  if (c.size() < kMaxFragments && std::find(c.begin(), c.end(), id) == c.end()) c.push_back(id);
}

void Recorder::Text(uint32_t offset, uint32_t gate, uint32_t made, std::string_view text, uint8_t* turn) {
  if (!captures_.empty()) {
    Capture(Literal(offset, made, text));
    return;
  }
  if (!(run_.open && run_.gate == gate && run_.made == made && run_.text.size() < kMaxRunBytes)) {
    Flush();
    run_.open = true;
    run_.offset = offset;
    run_.gate = gate;
    run_.made = made;
    run_.turn = *turn;
    run_.text.clear();
    run_.pieces.clear();
    run_blank_ = true;
  }
  // The run is where its first words are, not the whitespace before them.
  if (run_blank_ && !Trimmed(text).empty()) {
    run_.offset = offset;
    run_blank_ = false;
  }
  if (run_.pieces.size() < kMaxRunPieces && !text.empty() && run_.text.size() < kMaxRunBytes) {
    run_.pieces.emplace_back(static_cast<uint32_t>(run_.text.size()), offset);
  }
  run_.text.append(text.substr(0, kMaxRunBytes - run_.text.size()));
  const TextReading r = ReadText(text);
  const bool ended = r.turn_end != std::string_view::npos && (r.headers.empty() || r.headers.back().at < r.turn_end);
  if (ended) {
    *turn = TurnBit(Role::kNone);
  } else if (!r.headers.empty()) {
    *turn = TurnBit(r.headers.back().role);
  }
  if (r.open_header) pending_header_ = true;
  else if (!Trimmed(text).empty()) pending_header_ = false;
  if (r.kinds & (kTextSpecialToken | kTextRoleHeader)) marker_since_content_ = true;
}

void Recorder::Print(const std::vector<uint32_t>& frags, uint32_t gate, uint8_t* turn) {
  if (!captures_.empty()) {
    for (uint32_t id : frags) Capture(id);
    return;
  }
  uint64_t last_source = 0;
  marker_since_content_ = false;
  for (uint32_t id : frags) {
    const Fragment& f = frags_[id];
    // A content or macro fragment's event: where it is printed, under which
    // gates, in which turn.
    auto event_of = [&](EventKind kind) {
      Event e;
      e.kind = kind;
      e.offset = f.offset;
      e.gate = gate;
      e.made = f.gate;
      e.turn = *turn;
      e.frag = id;
      return e;
    };
    switch (f.kind) {
      case FragKind::kLiteral: {
        if (id == 0) break;
        if (f.sink == sink_) {
          Text(f.offset, gate, f.gate, f.text, turn);
          break;
        }
        // A parameter's literal: an event of its own, printed only at the
        // calls that pass it.
        Flush();
        Text(f.offset, gate, f.gate, f.text, turn);
        run_.foreign = id;
        Flush();
        break;
      }
      case FragKind::kRole:
        Flush();
        if (pending_header_) *turn = static_cast<uint8_t>(TurnBit(Role::kOwn) | (f.renames_user ? kTurnRenamedUser : 0));
        pending_header_ = false;
        break;
      case FragKind::kContent: {
        Flush();
        Event e = event_of(EventKind::kContent);
        // A header or token between two pieces of one message's content
        // (`c[:n] ~ '<|im_start|>system...' ~ c[n:]`) forges a turn in it.
        if (last_source == f.source && marker_since_content_) e.forged_at = f.offset + 1;
        last_source = f.source;
        marker_since_content_ = false;
        AddEvent(std::move(e));
        break;
      }
      case FragKind::kMacro: {
        Flush();
        Event e = event_of(EventKind::kMacro);
        e.macro = f.macro;
        AddEvent(std::move(e));
        break;
      }
    }
  }
  // The run stays open: text the next statement prints under this gate
  // joins it (`{{ 'ignore' }}{{ ' previous' }}` is read as one).
}

void Recorder::Flush() {
  if (!run_.open) return;
  run_.open = false;
  if (run_.text.empty()) return;
  Event e;
  e.kind = EventKind::kText;
  e.frag = run_.foreign;
  run_.foreign = 0;
  e.offset = run_.offset;
  e.gate = run_.gate;
  e.made = run_.made;
  e.turn = run_.turn;
  e.text = std::move(run_.text);
  e.pieces = std::move(run_.pieces);
  run_.text.clear();
  run_.pieces.clear();
  AddEvent(std::move(e));
}

std::vector<Event>& Recorder::SinkEvents() { return sink_ == kNoNode ? top_ : macro_events_[sink_]; }

void Recorder::AddEvent(Event e) {
  if (events_ >= kMaxEvents) return;
  const uint64_t what = e.kind == EventKind::kText ? absl::HashOf(e.text)
                        : e.kind == EventKind::kMacro ? static_cast<uint64_t>(static_cast<uint32_t>(e.macro))
                                                      : e.frag;
  if (!seen_.insert(std::make_tuple(sink_, static_cast<int>(e.kind), e.offset, e.gate, e.made, e.turn, what, e.forged_at))
           .second) {
    return;
  }
  ++events_;
  SinkEvents().push_back(std::move(e));
}

namespace {
uint8_t InheritTurn(uint8_t inner, uint8_t outer) {
  return static_cast<uint8_t>((inner & ~kTurnInherit) | ((inner & kTurnInherit) ? outer : 0));
}
}  // namespace

// Was fragment `frag`, printed in `macro`'s body, passed to this call of
// it? One made in the body always is; a parameter's is when the call's
// arguments carry it (or what it was derived from): a macro given a user's
// content at one call and the system's at another prints each at its own.
bool Recorder::Passed(uint32_t frag, NodeId macro, const std::vector<uint32_t>& allowed) const {
  const Fragment& f = frags_[frag];
  const uint32_t base = f.kind == FragKind::kContent ? f.base : frag;
  if (frags_[base].sink == macro) return true;
  return std::find(allowed.begin(), allowed.end(), base) != allowed.end() ||
         std::find(allowed.begin(), allowed.end(), frag) != allowed.end();
}

void Recorder::Resolve(const Event& call, const std::vector<uint32_t>& allowed, uint32_t trigger, uint32_t outer_gate,
                       uint8_t turn, int depth, std::vector<Resolved>* out) {
  if (depth > 16 || out->size() >= kMaxEvents) return;
  const NodeId macro = call.macro;
  std::vector<uint32_t> sorted = allowed;
  std::sort(sorted.begin(), sorted.end());
  if (!resolved_.insert(std::make_tuple(call.frag, absl::HashOf(sorted), trigger, turn)).second) return;
  const auto it = macro_events_.find(macro);
  if (it == macro_events_.end()) return;
  for (const Event& e : it->second) {
    if ((e.kind == EventKind::kContent || (e.kind == EventKind::kText && e.frag != 0)) && !Passed(e.frag, macro, allowed)) {
      continue;
    }
    const uint8_t t = InheritTurn(e.turn, turn);
    uint32_t tr = trigger;
    if (tr == 0) tr = ChainTrigger(e.gate);
    if (tr == 0) tr = ChainTrigger(e.made);
    if (e.kind == EventKind::kMacro) {
      // What this inner call passes: its arguments' fragments that are the
      // body's own or came in with this call.
      std::vector<uint32_t> inner;
      for (uint32_t a : frags_[e.frag].args) {
        if (Passed(a, macro, allowed)) inner.push_back(a);
        if (frags_[a].kind == FragKind::kContent) inner.push_back(frags_[a].base);
      }
      Resolve(e, inner, tr, outer_gate, t, depth + 1, out);
    } else {
      out->push_back({&e, tr, outer_gate, t});
    }
  }
}

}  // namespace ggufguard::jinja::analysis
