// The behaviour record the interpreter keeps while it walks a template
// (behaviour.h says what comes out of it). Three tables:
//   - gates: every condition output may sit under (an if's test or its
//     negation, a loop, a filter of a loop, a branch of `a if b else c`, the
//     right side of and/or), each with its parent, what it reads, the
//     comparison of free text it depends on (a trigger), and the role guard
//     it spells (`message.role == 'user'`);
//   - fragments: pieces a value's text may hold: a literal (where it is
//     written, under which gate), a macro's output, a message's content
//     (whose, and how it was rewritten), a role;
//   - events: what reaches the output, per sink (the top level, each macro
//     body, resolved at its prints): runs of literal text, content, macro
//     prints, each with its gates and the turn it falls in.
// Everything is bounded: gates and fragments are made once per (expression,
// gate) and events are kept once per key, so the record grows with the
// statements the interpreter visits, which its budget bounds.
#ifndef GGUFGUARD_TEMPLATE_RECORDER_H_
#define GGUFGUARD_TEMPLATE_RECORDER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "ggufguard/template/ast.h"
#include "ggufguard/template/scan.h"
#include "ggufguard/template/text_kinds.h"
#include "ggufguard/template/value.h"

namespace ggufguard::jinja::analysis {

// Turns (bits of 1 << Role) and two more: a macro's turn is its caller's;
// a message's own role, but a user's renamed to another's
// (`m.role | replace('user', 'system')`).
inline constexpr uint8_t kTurnInherit = 1u << 7;
inline constexpr uint8_t kTurnRenamedUser = 1u << 6;
inline uint8_t TurnBit(Role r) { return static_cast<uint8_t>(1u << static_cast<int>(r)); }
// system, user, assistant, tool
inline constexpr uint8_t kAllRoles = 0x1e;

// What a value reads of the request (Facts::reads).
enum Reads : uint32_t {
  kReadContent = 1u << 0,      // free text: a message's content, a tool's or document's words, a tool call's arguments
  kReadRole = 1u << 1,
  kReadShape = 1u << 2,        // types, ids, presence, counts
  kReadLoop = 1u << 3,         // loop.index, loop.first...
  kReadFlag = 1u << 4,         // add_generation_prompt, enable_thinking, any other request variable
  kReadTrigger = 1u << 5,      // compares free text with something that is not structure (Facts::trigger says where)
  kReadLength = 1u << 6,       // the length of free text
  kReadCoversLs = 1u << 7,     // a list of messages that may start with the leading system message
  kContentSystem = 1u << 8,    // content of a message known to be the system's
  kContentUser = 1u << 9,
  kContentAssistant = 1u << 10,
  kContentTool = 1u << 11,
  kContentOwn = 1u << 12,      // content of a message of any role, printed as its own
  kContentLs = 1u << 13,       // may be the leading system message's content
  kReadTools = 1u << 14,
  kReadDocuments = 1u << 15,
  kReadMessages = 1u << 16,    // a message or the list of them
  // The polarity of the trigger: the rare case is when the condition is
  // false (`'x' not in content`), or either (a length, a count).
  kReadTriggerNeg = 1u << 17,
  kReadTriggerAny = 1u << 18,
  kReadMarkerPos = 1u << 19,   // where a marker is in free text (`content.find('<<<text>>>')`)
  kReadSerialized = 1u << 20,  // a printed form (`|tojson`): cutting its punctuation rewrites no words
  // kContentOwn of a message whose guards rule a role out.
  kExcludesUser = 1u << 21,
  kExcludesAssistant = 1u << 22,
  kExcludesTool = 1u << 23,
  // Free text split at a tag-shaped marker (`content.split('</think>')`):
  // a slice of these pieces cuts at the marker, as a position does.
  kReadMarkerPieces = 1u << 24,
  // Pieces of one free text (a split at anything): joined again with a
  // header or a token, they forge a turn as a replace does.
  kReadSplitText = 1u << 25,
  // Free text re-cased (`content | upper`): a TAG_WORD compared with it is
  // a word of the person's in capitals, not a marker.
  kReadCaseMapped = 1u << 26,
  // Free text split or replaced at a word of the template's
  // (`content.split('bank')`): a condition on it is a condition on the word
  // (OpenGate makes it a trigger); printed, it is no condition.
  kReadWordCut = 1u << 27,
};
inline constexpr uint32_t kContentRoles = kContentSystem | kContentUser | kContentAssistant | kContentTool | kContentOwn;

enum class FragKind : uint8_t { kLiteral, kMacro, kContent, kRole };

struct Fragment {
  FragKind kind = FragKind::kLiteral;
  uint32_t offset = 0;  // template byte
  uint32_t gate = 0;    // where it was made
  std::string text;     // kLiteral
  NodeId macro = kNoNode;
  uint32_t reads = 0;    // kContent: kReadContent and whose (kContent*)
  uint32_t rewrite = 0;  // kContent: the rewriting expression + 1
  uint32_t forged = 0;   // kContent: an expression + 1 that writes a header or token into it
  uint32_t base = 0;     // kContent: the fragment it was derived from (itself when read directly)
  bool renames_user = false;  // kRole: rewritten so that 'user' reads as another role
  int8_t header_or_token = -1;  // kLiteral: whether text holds a role header or special token (-1: not read yet)
  uint64_t source = 0;   // kContent: the object and field it was read from, as written (one message's content, sliced twice, is one source)
  NodeId sink = kNoNode;  // the macro body it was made in (kNoNode: the top level)
  // kMacro: the fragments its arguments carry at this call (what of a
  // parameter's joined fragments this call passes).
  std::vector<uint32_t> args;
};

struct Gate {
  uint32_t parent = 0;
  NodeId cond = kNoNode;
  bool negated = false;
  uint32_t reads = 0;
  uint32_t trigger = 0;  // a comparison of free text + 1 its condition depends on
  bool trigger_applies = false;  // ... in the rare case: this branch is the one the comparison picks out
  // The roles the gate says a message may have (`X.role == 'user'`, `in
  // ['user', 'system']`) and those it rules out (`!= 'system'`), as
  // TurnBit(Role) bits, keyed by X as written.
  std::string guard_key;
  uint8_t guard_allowed = 0x1e;
  uint8_t guard_excluded = 0;
  // The one role the gate picks, or kNone.
  Role OnlyRole() const {
    for (Role r : {Role::kSystem, Role::kUser, Role::kAssistant, Role::kTool}) {
      if (!guard_key.empty() && guard_allowed == (1u << static_cast<int>(r))) return r;
    }
    return Role::kNone;
  }
  bool not_first = false;   // not loop.first (here or above)
  bool ls_absent = false;   // under `messages[0].role != 'system'` (here or above)
};



enum class EventKind : uint8_t { kText, kContent, kMacro };

struct Event {
  EventKind kind = EventKind::kText;
  uint32_t offset = 0;
  uint32_t gate = 0;  // where it is printed
  uint32_t made = 0;  // where its text was made (a literal set under another gate)
  uint8_t turn = 0;
  std::string text;   // kText
  NodeId macro = kNoNode;
  uint32_t frag = 0;  // kContent: its fragment; kMacro: the call's; kText: a parameter's literal
  uint32_t forged_at = 0;  // kContent: + 1, a header or token printed between it and more of the same content
  // kText: the literals a run was joined from, as (position in text,
  // template byte of the literal), in order, at most kMaxRunPieces: what a
  // finding about one character of the run points at.
  std::vector<std::pair<uint32_t, uint32_t>> pieces;
  // The template byte of the literal that holds text[pos] (offset when
  // the pieces are not known).
  uint32_t OffsetOf(size_t pos) const {
    uint32_t at = offset;
    for (const auto& [start, literal] : pieces) {
      if (start > pos) break;
      at = literal;
    }
    return at;
  }
};
inline constexpr size_t kMaxRunPieces = 64;

// An event as it reaches the output: a macro's events at each print of it.
struct Resolved {
  const Event* event;
  uint32_t trigger;    // the comparison of free text it depends on + 1, or 0
  uint32_t outer_gate; // the gate of the macro print it came through (0 at the top level)
  uint8_t turn;
};

class Recorder {
 public:
  Recorder();

  uint32_t NewGate(uint32_t parent, NodeId cond, bool negated, uint32_t reads, uint32_t trigger);
  Gate& gate(uint32_t id) { return gates_[id]; }
  const Gate& gate(uint32_t id) const { return gates_[id]; }
  size_t gate_count() const { return gates_.size(); }

  // A fragment, made once per (kind, key, gate).
  uint32_t Literal(uint32_t offset, uint32_t gate, std::string_view text);
  uint32_t MacroOutput(NodeId macro, uint32_t offset, uint32_t gate, const std::vector<uint32_t>& args);
  uint32_t Content(uint64_t key, uint32_t offset, uint32_t gate, uint32_t reads, uint32_t rewrite, uint32_t forged,
                   uint32_t base, uint64_t source);
  uint32_t RoleFrag(uint32_t offset, uint32_t gate, bool renames_user = false);
  const Fragment& frag(uint32_t id) const { return frags_[id]; }
  // Whether literal `id` holds a role header or a special token, read once.
  bool LiteralHoldsHeaderOrToken(uint32_t id);

  // The sink events go to: the top level (kNoNode), a macro's body, or a
  // capture ({% set x %}...{% endset %}), whose fragments become x's.
  void SetSink(NodeId macro) { Flush(), sink_ = macro; }
  NodeId sink() const { return sink_; }
  void BeginCapture() { Flush(), captures_.emplace_back(); }
  std::vector<uint32_t> EndCapture();

  // What reaches the output: a literal run, the fragments of a printed
  // value in order, under gate `gate`, in turn `*turn` (updated by headers).
  void Text(uint32_t offset, uint32_t gate, uint32_t made, std::string_view text, uint8_t* turn);
  void Print(const std::vector<uint32_t>& frags, uint32_t gate, uint8_t* turn);
  void Flush();

  // After the walk: macro prints resolved, the issues judged and the
  // summary written, both bounded.
  void Finish(const Program& p, std::string_view src, const TemplateScanOptions& opts, bool system_handled,
              uint32_t system_guard_at, bool reads_messages, TemplateScan* out);

  // The comparison of free text (+ 1) gate `g` or one above it depends on, or 0.
  uint32_t ChainTrigger(uint32_t g) const;

 private:
  struct Run {
    bool open = false;
    uint32_t offset = 0, gate = 0, made = 0;
    uint8_t turn = 0;
    std::string text;
    uint32_t foreign = 0;  // the parameter's literal this run is
    std::vector<std::pair<uint32_t, uint32_t>> pieces;  // Event::pieces
  };
  uint32_t Intern(int kind, uint64_t key, uint32_t gate, Fragment f);
  void Capture(uint32_t id);
  void AddEvent(Event e);
  std::vector<Event>& SinkEvents();
  void Resolve(const Event& call, const std::vector<uint32_t>& allowed, uint32_t trigger, uint32_t outer_gate,
               uint8_t turn, int depth, std::vector<Resolved>* out);
  bool Passed(uint32_t frag, NodeId macro, const std::vector<uint32_t>& allowed) const;

  std::vector<Gate> gates_;
  absl::flat_hash_map<std::tuple<int, uint64_t, uint32_t>, uint32_t> gate_index_;
  std::vector<Fragment> frags_;
  absl::flat_hash_map<std::tuple<int, uint64_t, uint32_t>, uint32_t> frag_index_;
  NodeId sink_ = kNoNode;
  std::vector<std::vector<uint32_t>> captures_;
  std::vector<Event> top_;
  absl::flat_hash_map<NodeId, std::vector<Event>> macro_events_;
  absl::flat_hash_set<std::tuple<NodeId, int, uint32_t, uint32_t, uint32_t, uint8_t, uint64_t, uint32_t>> seen_;
  absl::flat_hash_set<std::tuple<uint32_t, uint64_t, uint32_t, uint8_t>> resolved_;
  Run run_;
  bool pending_header_ = false;  // the last text ended in <|im_start|> and its role is to come
  bool marker_since_content_ = false;  // a header or token printed since the last content of this print
  bool run_blank_ = true;              // the open run holds only whitespace so far
  size_t events_ = 0;
};

// Does a gate whose condition reads `reads` pick out the rare case of its
// trigger (negated: the else branch)?
bool TriggerApplies(uint32_t reads, bool negated);

// Free-text fields (a message's content, a tool's description...) and
// structure fields (role, type, ids) by name, for Facts::reads.
bool IsContentField(std::string_view name);
bool IsShapeField(std::string_view name);

}  // namespace ggufguard::jinja::analysis

#endif  // GGUFGUARD_TEMPLATE_RECORDER_H_
