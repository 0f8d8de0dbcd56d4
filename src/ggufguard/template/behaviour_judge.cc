// The judgement of the behaviour record (Recorder::Finish): every event as
// it reaches the output, read as a reviewer reads a prompt. What each rule
// lets through, and why, is on its page (docs/rules/GG8016.md ...) and in
// docs/template-behaviour.md.
#include <algorithm>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ggufguard/base/text.h"
#include "ggufguard/template/recorder.h"

namespace ggufguard::jinja::analysis {
namespace {

constexpr size_t kQuote = 60;      // bytes of text quoted in a finding
constexpr size_t kCondition = 56;  // bytes of a condition quoted in a finding
constexpr size_t kWhen = 120;      // bytes of the conditions listed for a span

std::string_view Trim(std::string_view s) {
  const size_t a = s.find_first_not_of(" \t\r\n");
  if (a == std::string_view::npos) return {};
  return s.substr(a, s.find_last_not_of(" \t\r\n") - a + 1);
}

struct Judge {
  const Recorder& rec;
  const Program& p;
  std::string_view src;
  const TemplateScanOptions& opts;
  TemplateScan* out;
  absl::flat_hash_set<uint64_t> emitted;
  size_t per_kind[32] = {};

  std::string Expr(NodeId id, size_t max) const {
    if (id == kNoNode) return "?";
    const jinja::Expr& e = p.expr(id);
    return EscapeForDisplay(src.substr(e.begin, e.end - e.begin), max);
  }
  std::string Trigger(uint32_t trigger) const { return trigger == 0 ? "?" : Expr(static_cast<NodeId>(trigger - 1), kCondition); }
  uint64_t TriggerOffset(uint32_t trigger) const {
    return trigger == 0 ? 0 : p.expr(static_cast<NodeId>(trigger - 1)).begin;
  }

  void Issue(TemplateIssueKind kind, uint64_t offset, std::string detail) {
    const size_t k = static_cast<size_t>(kind) % 32;
    if (!emitted.insert(offset * 32 + k).second || per_kind[k] >= opts.max_issues) return;
    ++per_kind[k];
    out->behaviour_issues.push_back({kind, offset, 0, 0, std::move(detail)});
  }

  bool Inserted(uint64_t offset) const {
    for (const TemplateByteRange& r : opts.inserted) {
      if (offset >= r.begin && offset < r.end) return true;
    }
    return false;
  }

  // The role a message is known to have under `gate` (a positive guard).
  Role GuardedRole(uint32_t gate) const {
    for (uint32_t g = gate; g != 0; g = rec.gate(g).parent) {
      if (rec.gate(g).OnlyRole() != Role::kNone) return rec.gate(g).OnlyRole();
    }
    return Role::kNone;
  }

  // Turn bits as words; a message's own turn under a role guard is that role's.
  std::string TurnName(uint8_t turn, uint32_t gate) const {
    std::vector<std::string> names;
    if (turn & kTurnInherit) names.push_back("caller's");
    for (Role r : {Role::kNone, Role::kSystem, Role::kUser, Role::kAssistant, Role::kTool, Role::kOwn}) {
      if (!(turn & TurnBit(r))) continue;
      Role shown = r;
      if (r == Role::kOwn && GuardedRole(gate) != Role::kNone) shown = GuardedRole(gate);
      const std::string n = shown == Role::kNone ? "none" : RoleName(shown);
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    }
    if (names.empty()) return "unknown";
    std::string joined;
    for (size_t i = 0; i < names.size(); ++i) absl::StrAppend(&joined, i ? " or " : "", names[i]);
    return joined;
  }

  // The single role a turn is, or kNone when it may be several.
  Role SingleTurn(uint8_t turn, uint32_t gate) const {
    Role found = Role::kNone;
    int n = 0;
    for (Role r : {Role::kSystem, Role::kUser, Role::kAssistant, Role::kTool, Role::kOwn}) {
      if (!(turn & TurnBit(r))) continue;
      ++n;
      found = r == Role::kOwn ? GuardedRole(gate) : r;
    }
    return n == 1 && !(turn & (TurnBit(Role::kNone) | kTurnInherit)) ? found : Role::kNone;
  }

  // The conditions on the way to `gate`, outermost first.
  std::string When(uint32_t gate) const {
    std::vector<std::string> parts;
    for (uint32_t g = gate; g != 0 && parts.size() < 8; g = rec.gate(g).parent) {
      const Gate& x = rec.gate(g);
      if (x.cond == kNoNode) continue;
      parts.push_back(absl::StrCat(x.negated ? "not (" : "", Expr(x.cond, 48), x.negated ? ")" : ""));
    }
    std::string w;
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) absl::StrAppend(&w, w.empty() ? "" : " and ", *it);
    if (w.size() > kWhen) w = w.substr(0, kWhen - 3) + "...";
    return w;
  }

  static std::string CodePoint(uint32_t cp) { return absl::StrFormat("U+%04X", cp); }

  void JudgeText(const Resolved& r, absl::flat_hash_set<std::string>* tokens) {
    const Event& e = *r.event;
    const TextReading t = ReadText(e.text);
    for (const auto& [at, len] : t.tokens) {
      std::string token = e.text.substr(at, len);
      if (out->behaviour.tokens.size() < opts.max_listed && tokens->insert(token).second) {
        out->behaviour.tokens.push_back({e.offset, std::move(token)});
      }
    }
    const uint16_t interesting = kTextProse | kTextUnexpected | kTextInvisible;
    if (!(t.kinds & interesting)) return;
    // The turn the words fall in: the last header before them in this
    // text, else the turn the text starts in.
    std::string turn = TurnName(e.turn, e.gate);
    for (const RoleHeader& h : t.headers) {
      if (t.prose_at != std::string_view::npos && h.at <= t.prose_at) turn = RoleName(h.role);
    }
    // Words inserted into a run of upstream's text (one more print after
    // its system prompt) are inserted words: each literal of the run is
    // judged by where it is.
    uint64_t inserted_at = e.offset;
    bool inserted = e.pieces.empty() && Inserted(e.offset);
    for (size_t i = 0; i < e.pieces.size() && !inserted; ++i) {
      if (!Inserted(e.pieces[i].second)) continue;
      const size_t end = i + 1 < e.pieces.size() ? e.pieces[i + 1].first : e.text.size();
      const std::string_view piece = std::string_view(e.text).substr(e.pieces[i].first, end - e.pieces[i].first);
      if (ReadText(piece).kinds & interesting) {
        inserted = true;
        inserted_at = e.pieces[i].second;
      }
    }
    const bool gated = r.trigger != 0;
    const std::string quoted = EscapeForDisplay(Trim(e.text), kQuote);
    const std::string where = absl::StrCat("'", quoted, "' (", turn, " turn)");
    if (t.kinds & kTextInvisible) {
      Issue(TemplateIssueKind::kInvisibleText, e.OffsetOf(t.invisible_at),
            absl::StrCat("writes ", CodePoint(t.invisible_code_point),
                         ", a character a reader does not see, in ", where));
    }
    if (gated) {
      Issue(TemplateIssueKind::kContentGatedText, e.offset,
            absl::StrCat(where, " reaches the output only when ", Trigger(r.trigger), " (template byte ",
                         TriggerOffset(r.trigger), "), a condition on what a message, tool or document says"));
    }
    if (t.kinds & kTextUrl) {
      Issue(TemplateIssueKind::kTextUrl, e.OffsetOf(t.url_at),
            absl::StrCat("writes a URL, '", EscapeForDisplay(std::string_view(e.text).substr(t.url_at), 48), "', in ", where));
    }
    if (t.kinds & kTextMarkup) {
      Issue(TemplateIssueKind::kTextMarkup, e.OffsetOf(t.markup_at),
            absl::StrCat("writes ", (t.kinds & kTextScript) ? "script" : "markup", ", '",
                         EscapeForDisplay(std::string_view(e.text).substr(t.markup_at), 48), "', in ", where));
    }
    if (t.kinds & kTextCommand) {
      Issue(TemplateIssueKind::kTextCommand, e.OffsetOf(t.command_at),
            absl::StrCat("writes a shell command, '", EscapeForDisplay(std::string_view(e.text).substr(t.command_at), 48),
                         "', in ", where));
    }
    if (t.kinds & kTextBlob) {
      Issue(TemplateIssueKind::kTextBlob, e.OffsetOf(t.blob_at),
            absl::StrCat("writes an encoded blob, '", EscapeForDisplay(std::string_view(e.text).substr(t.blob_at), 48),
                         "', in ", where));
    }
    std::string when = When(e.gate);
    if (r.outer_gate != 0) {
      const std::string outer = When(r.outer_gate);
      if (!outer.empty()) when = when.empty() ? outer : absl::StrCat(outer, " and ", when);
    }
    if (e.made != e.gate && !When(e.made).empty()) absl::StrAppend(&when, when.empty() ? "" : "; ", "made when ", When(e.made));
    if (when.size() > kWhen) when = when.substr(0, kWhen - 3) + "...";
    if (!gated && (t.kinds & kTextProse)) {
      const std::string detail =
          absl::StrCat("writes ", where, when.empty() ? " in every conversation" : absl::StrCat(" when ", when));
      Issue(inserted ? TemplateIssueKind::kInsertedText : TemplateIssueKind::kOwnText, inserted ? inserted_at : e.offset,
            inserted ? absl::StrCat("not the upstream template's: ", detail) : detail);
    }
    TemplateBehaviour& b = out->behaviour;
    if (b.texts.size() >= opts.max_listed) {
      ++b.texts_not_listed;
      return;
    }
    b.texts.push_back({e.offset, turn, EscapeForDisplay(Trim(e.text), kMaxQuotedText), when, t.kinds, gated, inserted});
  }
};

const char* ContentRoleName(uint32_t reads) {
  if (reads & kContentSystem) return "system";
  if (reads & kContentUser) return "user";
  if (reads & kContentAssistant) return "assistant";
  if (reads & kContentTool) return "tool";
  return "each message's";
}

std::string ReadsText(uint32_t reads) {
  std::vector<std::string_view> parts;
  if (reads & kReadContent) parts.push_back("message content");
  if (reads & kReadLength) parts.push_back("length of content");
  if (reads & kReadTools) parts.push_back("tools");
  if (reads & kReadDocuments) parts.push_back("documents");
  if (reads & kReadRole) parts.push_back("role");
  if (reads & kReadLoop) parts.push_back("loop position");
  if (reads & kReadFlag) parts.push_back("flags");
  if (reads & (kReadShape | kReadMessages)) parts.push_back("structure");
  if (reads & kReadTrigger) parts.push_back("a comparison of content");
  std::string out;
  for (std::string_view s : parts) absl::StrAppend(&out, out.empty() ? "" : ", ", std::string(s));
  return out.empty() ? "constants" : out;
}

}  // namespace

void Recorder::Finish(const Program& p, std::string_view src, const TemplateScanOptions& opts, bool system_handled,
                      uint32_t system_guard_at, bool reads_messages, TemplateScan* out) {
  Flush();
  TemplateBehaviour& b = out->behaviour;
  b.analysed = true;
  std::vector<Resolved> all;
  for (const Event& e : top_) {
    uint32_t trigger = ChainTrigger(e.gate);
    if (trigger == 0) trigger = ChainTrigger(e.made);
    if (e.kind == EventKind::kMacro) {
      std::vector<uint32_t> passed = frags_[e.frag].args;
      for (uint32_t a : frags_[e.frag].args) {
        if (frags_[a].kind == FragKind::kContent) passed.push_back(frags_[a].base);
      }
      Resolve(e, passed, trigger, e.gate, e.turn, 0, &all);
    } else {
      all.push_back({&e, trigger, 0, e.turn});
    }
  }
  Judge j{*this, p, src, opts, out, {}, {}};
  absl::flat_hash_set<std::string> tokens;
  // What becomes of each role's content: where it is printed (turn names),
  // whether the leading system message is.
  bool ls_printed = false;
  std::string replacement, always_system;
  uint64_t replacement_at = 0, always_system_at = 0;
  auto SystemPresent = [&](uint32_t g) {
    for (; g != 0; g = gates_[g].parent) {
      if (gates_[g].OnlyRole() == Role::kSystem) return true;
    }
    return false;
  };
  uint32_t printed = 0;      // kContent* bits
  uint32_t printed_own = 0;  // kExcludes* bits, each set when own content printed may be of that role
  auto own_bit = [](Role r) -> uint32_t {
    return r == Role::kUser ? kExcludesUser : r == Role::kAssistant ? kExcludesAssistant : kExcludesTool;
  };
  struct Fate {
    std::vector<std::string> turns;
    uint64_t offset = 0;
    std::string rewritten;
  };
  Fate fates[5];  // system, user, assistant, tool, each message's own
  auto fate_of = [&](uint32_t bit) -> Fate& {
    const uint32_t bits[] = {kContentSystem, kContentUser, kContentAssistant, kContentTool, kContentOwn};
    for (int i = 0; i < 5; ++i) {
      if (bit & bits[i]) return fates[i];
    }
    return fates[4];
  };
  for (const Resolved& r : all) {
    const Event& e = *r.event;
    if (e.kind == EventKind::kText) {
      j.JudgeText(r, &tokens);
      // Words written where a system message is known to be present.
      if (replacement.empty() && (SystemPresent(e.gate) || SystemPresent(e.made) || SystemPresent(r.outer_gate))) {
        const TextReading t = ReadText(e.text);
        if (t.kinds & kTextProse) {
          replacement = EscapeForDisplay(Trim(e.text), kQuote);
          replacement_at = e.offset;
        }
      }
      // Words of a system turn written in every conversation: they stand
      // where a system message dropped on purpose would have been.
      if (always_system.empty() && e.gate == 0 && r.outer_gate == 0) {
        const TextReading t = ReadText(e.text);
        const bool system_turn = r.turn == TurnBit(Role::kSystem) || (!t.headers.empty() && t.headers.back().role == Role::kSystem);
        if (system_turn && (t.kinds & kTextProse)) {
          always_system = EscapeForDisplay(Trim(e.text), kQuote);
          always_system_at = e.offset;
        }
      }
      continue;
    }
    if (e.kind != EventKind::kContent) continue;
    const Fragment& f = frags_[e.frag];
    const uint32_t roles = f.reads & kContentRoles;
    printed |= roles;
    // Each message's own content printed: which roles its guards left.
    if (roles & kContentOwn) printed_own |= ~f.reads & (kExcludesUser | kExcludesAssistant | kExcludesTool);
    if (f.reads & kContentLs) ls_printed = true;
    if (roles == 0) continue;  // a tool's or a document's words
    const std::string whose = ContentRoleName(roles);
    const std::string turn = j.TurnName(r.turn, e.gate);
    Fate& fate = fate_of(roles);
    if (fate.turns.size() < 4 && std::find(fate.turns.begin(), fate.turns.end(), turn) == fate.turns.end()) {
      fate.turns.push_back(turn);
      if (fate.offset == 0) fate.offset = e.offset;
    }
    if (f.rewrite != 0) {
      const NodeId at = static_cast<NodeId>(f.rewrite - 1);
      j.Issue(TemplateIssueKind::kContentRewritten, p.expr(at).begin,
              absl::StrCat(whose, " content is rewritten by ", j.Expr(at, kCondition), " before it reaches the model"));
      if (fate.rewritten.empty()) fate.rewritten = j.Expr(at, 48);
    }
    if (f.forged != 0 || e.forged_at != 0) {
      const uint64_t at = f.forged != 0 ? p.expr(static_cast<NodeId>(f.forged - 1)).begin : e.forged_at - 1;
      j.Issue(TemplateIssueKind::kForgedTurn, at,
              absl::StrCat("writes a role header or special token inside ", whose,
                           " content: a turn the sender did not write"));
    }
    // A user's words in the system's or the assistant's turn, a tool's in
    // the assistant's (a tool's result in a system turn is Command R's way).
    // The turn may be one of several where a header is written on one
    // branch only; it is moved when it may be the other role's and never
    // its own.
    const Role from = (roles == kContentUser) ? Role::kUser : (roles == kContentTool) ? Role::kTool : Role::kNone;
    Role to = Role::kNone;
    if (from != Role::kNone && !(r.turn & (TurnBit(from) | TurnBit(Role::kOwn) | kTurnInherit))) {
      if (r.turn & TurnBit(Role::kAssistant)) to = Role::kAssistant;
      if (from == Role::kUser && (r.turn & TurnBit(Role::kSystem))) to = Role::kSystem;
    }
    if (to != Role::kNone) {
      j.Issue(TemplateIssueKind::kContentMoved, e.offset,
              absl::StrCat(RoleName(from), " content is printed in the ", RoleName(to),
                           " turn: words from the ", RoleName(from), " reach the model as the ", RoleName(to), "'s"));
    } else if ((r.turn & kTurnRenamedUser) &&
               (roles == kContentUser || ((roles & kContentOwn) && !(f.reads & kExcludesUser)))) {
      j.Issue(TemplateIssueKind::kContentMoved, e.offset,
              absl::StrCat(whose, " content is printed under a header whose role the template renames from user to "
                                  "the system's or the assistant's: words from the user reach the model as another role's"));
    }
  }
  // The leading system message: a template that looks for one, never
  // prints it, and writes words of its own when there is one has replaced
  // the user's system prompt with its own. Dropping it alone (Kimi-Audio,
  // vLLM's GLM-4 tool template) is listed in the summary, not a finding.
  if (replacement.empty() && !always_system.empty()) {
    replacement = std::move(always_system);
    replacement_at = always_system_at;
  }
  if (system_handled && !ls_printed && !replacement.empty()) {
    const uint64_t at = system_guard_at == 0 ? 0 : system_guard_at - 1;
    j.Issue(TemplateIssueKind::kSystemDropped, replacement_at,
            absl::StrCat("when a system message is given (template byte ", at,
                         ") the template never prints it and writes '", replacement, "' instead"));
  }
  // A role whose content never reaches the output though the template
  // reads messages (user) or picks that role out (assistant, tool).
  const struct {
    Role role;
    uint32_t bit;
  } kRoles[] = {{Role::kUser, kContentUser}, {Role::kAssistant, kContentAssistant}, {Role::kTool, kContentTool}};
  for (const auto& [role, bit] : kRoles) {
    uint64_t guard_at = UINT64_MAX;
    for (const Gate& g : gates_) {
      if (g.OnlyRole() == role && g.cond != kNoNode) guard_at = std::min<uint64_t>(guard_at, p.expr(g.cond).begin);
    }
    const bool handled = guard_at != UINT64_MAX || (role == Role::kUser && reads_messages);
    if (!handled || (printed & bit) || (printed_own & own_bit(role))) continue;
    j.Issue(TemplateIssueKind::kContentDropped, guard_at == UINT64_MAX ? 0 : guard_at,
            absl::StrCat(RoleName(role), " messages' content never reaches the output"));
  }
  // The summary: each role's fate, the gates.
  auto add_fate = [&](const char* role, const Fate& f, bool never) {
    std::string fate;
    if (never) {
      fate = "never printed";
    } else if (f.turns.empty()) {
      return;
    } else {
      fate = "printed in the ";
      for (size_t i = 0; i < f.turns.size(); ++i) absl::StrAppend(&fate, i ? " or " : "", f.turns[i]);
      absl::StrAppend(&fate, " turn");
    }
    if (!f.rewritten.empty()) absl::StrAppend(&fate, ", rewritten by ", f.rewritten);
    b.roles.push_back({role, fate, f.offset});
  };
  if (system_handled) add_fate("system", fates[0], !ls_printed);
  add_fate("user", fates[1], false);
  add_fate("assistant", fates[2], false);
  add_fate("tool", fates[3], false);
  add_fate("each message", fates[4], false);
  absl::flat_hash_set<uint64_t> gate_offsets;
  std::vector<const Gate*> listed;
  for (int pass = 0; pass < 2; ++pass) {  // conditions on content first
    for (const Gate& g : gates_) {
      if (g.cond == kNoNode || (pass == 0) != (g.trigger != 0)) continue;
      if (!gate_offsets.insert(p.expr(g.cond).begin).second) continue;
      if (b.gates.size() >= opts.max_listed) {
        ++b.gates_not_listed;
        continue;
      }
      b.gates.push_back({p.expr(g.cond).begin, j.Expr(g.cond, kMaxQuotedText), ReadsText(g.reads), g.trigger != 0});
    }
  }
  // A condition on content in bytes that are not upstream's is a finding
  // whatever it compares with and gates, marker or not: no leniency there.
  for (const Gate& g : gates_) {
    if (g.cond == kNoNode || !(g.trigger != 0 || (g.reads & (kReadContent | kReadLength)))) continue;
    if (!j.Inserted(p.expr(g.cond).begin)) continue;
    j.Issue(TemplateIssueKind::kInsertedText, p.expr(g.cond).begin,
            absl::StrCat("not the upstream template's: a condition on what a message says, ", j.Expr(g.cond, kCondition)));
  }
}

}  // namespace ggufguard::jinja::analysis
