// The interpreter's part of the behaviour analysis (behaviour.h): what each
// expression reads of the request and which text it carries (Facts), the
// gates conditions open, and what each statement sends to the output. The
// record and its judgement are recorder.{h,cc}.
//
// Facts are computed over the syntax tree once per statement visit, next
// to the interpreter's own evaluation of the same expression (FactsOf walks
// the expression, reading the facts of the names it meets from the scope the
// interpreter keeps), so the analysis stays linear in the template.
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "absl/hash/hash.h"
#include "ggufguard/template/interpreter.h"
#include "ggufguard/template/recorder.h"
#include "ggufguard/template/text_kinds.h"

namespace ggufguard::jinja::analysis {
namespace {

constexpr int kMaxFactsDepth = 200;

void AddFrags(Facts* into, const std::vector<uint32_t>& frags) {
  for (uint32_t id : frags) {
    if (into->frags.size() >= kMaxFragments) return;
    if (std::find(into->frags.begin(), into->frags.end(), id) == into->frags.end()) into->frags.push_back(id);
  }
}

// `a` then `b`: every read, the first trigger, the fragments in order.
Facts Then(Facts a, const Facts& b) {
  // Pieces cut at a marker, joined with anything else, are not only those
  // pieces: a slice of them may cut anything (kReadSplitText, which only
  // makes a cut stricter, stays).
  const bool both = (a.reads != 0 || !a.frags.empty()) && (b.reads != 0 || !b.frags.empty());
  a.reads |= b.reads;
  if (both) a.reads &= ~kReadMarkerPieces;
  if (a.trigger == 0) a.trigger = b.trigger;
  AddFrags(&a, b.frags);
  return a;
}

// What a condition or a comparison keeps of its operands: what they read,
// not their text.
Facts ReadsOnly(const Facts& f) {
  Facts out;
  out.reads = f.reads & ~kReadCoversLs;
  out.trigger = f.trigger;
  return out;
}

bool FreeText(const Facts& f) { return (f.reads & (kReadContent | kReadLength)) != 0; }

// Punctuation that says what a person wrote, not how a message is laid out:
// a question, an amount, an address, a link. `'?' in content` picks out
// every question as `'bank' in content` picks out a word. (Not '&', '%',
// '#' or '*': escapes and Markdown.)
bool IsSentencePunctuation(std::string_view s) {
  if (s == "://") return true;
  return !s.empty() && s.find_first_not_of("?!$@") == std::string_view::npos;
}

// A separator with a tag's shape (`</think>`, `<tool_call>`, `[TOOL_RESULTS]`,
// a TAG_WORD, a /think switch): what it separates are parts of a message's
// layout. Bare punctuation ('|', '/', '_') is not: it may be in any sentence.
bool IsTagShaped(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  if (s.size() >= 3 && ((s.front() == '<' && s.back() == '>') || (s.front() == '[' && s.back() == ']'))) return true;
  return IsTagWord(s) || s == "/think" || s == "/no_think";
}

Role RoleOfLiteral(std::string_view s) {
  if (s == "system" || s == "developer") return Role::kSystem;
  if (s == "user" || s == "human") return Role::kUser;
  if (s == "assistant" || s == "model" || s == "bot") return Role::kAssistant;
  if (s == "tool" || s == "ipython" || s == "function" || s == "observation" || s == "tool_response") return Role::kTool;
  return Role::kNone;
}

// Whose content a message of the roles in `mask` holds: one role's, or
// each message's own, less the roles the guards rule out.
uint32_t ContentBits(uint8_t allowed, uint8_t excluded) {
  const std::pair<Role, uint32_t> kOne[] = {{Role::kSystem, kContentSystem}, {Role::kUser, kContentUser},
                                            {Role::kAssistant, kContentAssistant}, {Role::kTool, kContentTool}};
  for (const auto& [role, bit] : kOne) {
    if (allowed == TurnBit(role)) return bit;
  }
  const uint8_t mask = allowed & ~excluded;
  uint32_t bits = kContentOwn;
  if (!(mask & TurnBit(Role::kUser))) bits |= kExcludesUser;
  if (!(mask & TurnBit(Role::kAssistant))) bits |= kExcludesAssistant;
  if (!(mask & TurnBit(Role::kTool))) bits |= kExcludesTool;
  return bits;
}

}  // namespace

bool IsContentField(std::string_view n) {
  static constexpr std::string_view kFields[] = {
      "content",  "text",     "reasoning_content", "reasoning", "thinking", "description", "arguments",
      "title",    "snippet",  "body",              "query",     "summary",  "instructions", "result",   "output",
      "response", "document", "prompt",            "value"};
  return std::find(std::begin(kFields), std::end(kFields), n) != std::end(kFields);
}

bool IsShapeField(std::string_view n) {
  static constexpr std::string_view kFields[] = {"type", "id", "tool_call_id", "call_id", "name", "index", "required", "enum", "items",
                                                 "properties", "nullable", "format", "anyOf", "oneOf", "allOf",
                                                 "additionalProperties", "default", "minimum", "maximum", "strict"};
  return std::find(std::begin(kFields), std::end(kFields), n) != std::end(kFields);
}

// The expression an object is written as, for role guards: spaces out,
// `x['role']` and `x["role"]` read as `x.role`.
std::string Interpreter::GuardKey(NodeId obj) const {
  if (obj == kNoNode) return "";
  const Expr& e = p_.expr(obj);
  std::string_view text = src_.substr(e.begin, e.end - e.begin);
  std::string out;
  for (size_t i = 0; i < text.size() && out.size() < 96; ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n') continue;
    if (c == '[' && i + 1 < text.size() && (text[i + 1] == '\'' || text[i + 1] == '"')) {
      const size_t close = text.find(text[i + 1], i + 2);
      if (close != std::string_view::npos && close + 1 < text.size() && text[close + 1] == ']') {
        out += '.';
        out.append(text.substr(i + 2, close - i - 2));
        i = close + 1;
        continue;
      }
    }
    out += c;
  }
  return out;
}

// The role guard a condition spells when it holds (`negated`: when it does
// not): the roles a message may have here, as a mask of TurnBit(Role), keyed
// by the object as written: X.role == 'lit', != 'lit', in [...] (either
// side); `not`, `and` (intersected) and `or` (united when both sides guard
// the same object) looked into; and whether it says not loop.first.
Interpreter::RoleGuard Interpreter::Guard(NodeId cond, bool negated, int depth) {
  RoleGuard none;
  if (cond == kNoNode || depth > 16) return none;
  const Expr& e = p_.expr(cond);
  if (e.kind == ExprKind::kUnary && e.name == "not") return Guard(e.a, !negated, depth + 1);
  if (e.kind == ExprKind::kBinary && (e.name == "and" || e.name == "or")) {
    const RoleGuard a = Guard(e.a, negated, depth + 1), b = Guard(e.b, negated, depth + 1);
    const bool conjunction = (e.name == "and") != negated;
    RoleGuard out;
    out.not_first = conjunction && (a.not_first || b.not_first);
    if (conjunction) {
      const RoleGuard& g = a.key.empty() ? b : a;
      out = g;
      out.not_first = a.not_first || b.not_first;
      if (!a.key.empty() && a.key == b.key) {
        out.allowed = a.allowed & b.allowed;
        out.excluded = a.excluded | b.excluded;
      }
    } else if (!a.key.empty() && a.key == b.key) {
      out.key = a.key;
      out.allowed = a.allowed | b.allowed;
      out.excluded = a.excluded & b.excluded;
    }
    return out;
  }
  if (e.kind == ExprKind::kGetAttr && e.name == "first" && e.a != kNoNode && p_.expr(e.a).kind == ExprKind::kName &&
      p_.expr(e.a).name == "loop") {
    none.not_first = negated;
    return none;
  }
  if (e.kind != ExprKind::kBinary || e.a == kNoNode || e.b == kNoNode) return none;
  const bool member = e.name == "in" || e.name == "notin";
  if (e.name != "==" && e.name != "!=" && !member) return none;
  const bool positive = (e.name == "==" || e.name == "in") != negated;
  for (auto [field, lit] : {std::pair{e.a, e.b}, std::pair{e.b, e.a}}) {
    if (member && field != e.a) break;  // `X.role in [...]`, not `[...] in X.role`
    const Expr& f = p_.expr(field);
    const Expr& l = p_.expr(lit);
    NodeId obj = kNoNode;
    if (f.kind == ExprKind::kGetAttr && f.name == "role") obj = f.a;
    if (f.kind == ExprKind::kGetItem && f.b != kNoNode && p_.expr(f.b).kind == ExprKind::kString &&
        p_.text(p_.expr(f.b)) == "role") {
      obj = f.a;
    }
    if (obj == kNoNode) continue;
    uint8_t mask = 0;
    auto add = [&](std::string_view text) {
      const Role r = RoleOfLiteral(text);
      if (r != Role::kNone) mask |= TurnBit(r);
      if (r == Role::kSystem) {
        system_handled_ = true;
        if (system_guard_at_ == 0) system_guard_at_ = static_cast<uint32_t>(e.begin) + 1;
      }
      return r != Role::kNone;
    };
    bool known = false;
    if (l.kind == ExprKind::kString) {
      known = add(p_.text(l));
    } else if (member && (l.kind == ExprKind::kList || l.kind == ExprKind::kTuple)) {
      for (uint32_t i = 0; i < l.args_count; ++i) {
        const Expr& item = p_.expr(p_.args[l.args_begin + i].value);
        if (item.kind == ExprKind::kString) known = add(p_.text(item)) || known;
      }
    }
    if (!known) continue;
    // A role a guard rules out is out; the roles it picks are all there is
    // only when it picks them (a chain of elifs rules out user and assistant,
    // and may still be at 'assistant_tool_call', not at a tool's turn).
    RoleGuard g;
    g.key = GuardKey(obj);
    if (positive) g.allowed = mask;
    else g.excluded = mask;
    return g;
  }
  return none;
}

// `for m in messages|rejectattr('role', 'equalto', 'user')` (selectattr,
// rejectattr; equalto, ==, eq, ne, !=, in [...]; chained) guards m in the
// body as `{% if m.role != 'user' %}` would: the gate the loop opened for
// its iterable gets that guard, keyed by the loop's target.
void Interpreter::GuardByIterable(NodeId iterable, NodeId target) {
  if (gate_ == 0 || rec_.gate(gate_).cond != iterable) return;  // the gate table was full: no gate of its own
  Gate& gate = rec_.gate(gate_);
  if (!gate.guard_key.empty() || target == kNoNode || p_.expr(target).kind != ExprKind::kName) return;
  uint8_t allowed = kAllRoles, excluded = 0;
  bool any = false;
  int depth = 0;
  for (NodeId at = iterable; at != kNoNode && depth < 16; at = p_.expr(at).a, ++depth) {
    const Expr& e = p_.expr(at);
    if (e.kind != ExprKind::kFilter) break;
    if ((e.name != "selectattr" && e.name != "rejectattr") || e.args_count < 3) continue;
    const Expr& attr = p_.expr(p_.args[e.args_begin].value);
    const Expr& test = p_.expr(p_.args[e.args_begin + 1].value);
    const Expr& lit = p_.expr(p_.args[e.args_begin + 2].value);
    if (attr.kind != ExprKind::kString || p_.text(attr) != "role" || test.kind != ExprKind::kString) continue;
    const std::string_view t = p_.text(test);
    const bool equal = t == "equalto" || t == "==" || t == "eq" || t == "in";
    if (!equal && t != "ne" && t != "!=") continue;
    uint8_t mask = 0;
    auto add = [&](const Expr& item) {
      if (item.kind != ExprKind::kString) return;
      if (const Role r = RoleOfLiteral(p_.text(item)); r != Role::kNone) mask |= TurnBit(r);
    };
    if (t == "in" && (lit.kind == ExprKind::kList || lit.kind == ExprKind::kTuple)) {
      for (uint32_t i = 0; i < lit.args_count; ++i) add(p_.expr(p_.args[lit.args_begin + i].value));
    } else if (t != "in") {
      add(lit);
    }
    if (mask == 0) continue;
    any = true;
    if (mask & TurnBit(Role::kSystem)) {  // it looks for the system message, as a guard on it does
      system_handled_ = true;
      if (system_guard_at_ == 0) system_guard_at_ = static_cast<uint32_t>(e.begin) + 1;
    }
    if (equal == (e.name == "selectattr")) allowed &= mask;  // the roles it keeps
    else excluded |= mask;                                    // the roles it drops
  }
  if (!any) return;
  gate.guard_key = GuardKey(target);
  gate.guard_allowed = allowed;
  gate.guard_excluded = excluded;
}

uint32_t Interpreter::OpenGate(NodeId cond, bool negated) {
  Facts f = cond == kNoNode ? Facts() : FactsOf(cond, gate_);
  // Text cut at a word of the template's, tested: a condition on the word.
  if ((f.reads & kReadWordCut) && !(f.reads & kReadTrigger)) {
    f.reads |= kReadTrigger | kReadTriggerAny;
    f.trigger = static_cast<uint32_t>(cond) + 1;
  }
  // A macro's output tested (`{% if is_vip(m) %}`) depends on what it compares.
  for (uint32_t id : f.frags) {
    const Fragment& fr = rec_.frag(id);
    if (fr.kind != FragKind::kMacro || f.trigger != 0) continue;
    if (const auto it = macro_trigger_.find(fr.macro); it != macro_trigger_.end() && it->second != 0) {
      f.trigger = it->second;
      f.reads |= kReadTrigger | kReadTriggerAny;
    }
  }
  const uint32_t id = rec_.NewGate(gate_, cond, negated, f.reads, f.trigger);
  Gate& g = rec_.gate(id);
  if (g.guard_key.empty() && !g.not_first) {
    const RoleGuard guard = Guard(cond, negated, 0);
    g.not_first = guard.not_first;
    g.guard_key = guard.key;
    g.guard_allowed = guard.key.empty() ? kAllRoles : guard.allowed;
    g.guard_excluded = guard.key.empty() ? 0 : guard.excluded;
    g.ls_absent = guard.key == "messages[0]" &&
                  (!(guard.allowed & TurnBit(Role::kSystem)) || (guard.excluded & TurnBit(Role::kSystem)));
  }
  return id;
}

// Walks up the gates from `gate`: the roles the message written `key` may
// have there (every guard on it intersected), and whether the leading
// system message cannot be here.
uint8_t Interpreter::GuardedRoles(uint32_t gate, const std::string& key, bool* no_ls, uint8_t* excluded) const {
  uint8_t mask = kAllRoles;
  *excluded = 0;
  for (uint32_t g = gate; g != 0; g = rec_.gate(g).parent) {
    const Gate& x = rec_.gate(g);
    if (x.not_first || x.ls_absent) *no_ls = true;
    if (!x.guard_key.empty() && x.guard_key == key) {
      mask &= x.guard_allowed;
      *excluded |= x.guard_excluded;
    }
  }
  return mask;
}

Facts Interpreter::NameFacts(std::string_view name, uint32_t gate) {
  if (const Value* v = Lookup(std::string(name))) {
    Facts f = v->facts;
    if (name == "loop") f.reads |= kReadLoop;
    return f;
  }
  Facts f;
  if (name == "messages") {
    reads_messages_ = true;
    f.reads = kReadMessages | kReadShape;
    bool no_ls = false;
    uint8_t excluded = 0;
    GuardedRoles(gate, "", &no_ls, &excluded);
    if (!no_ls) f.reads |= kReadCoversLs;
  } else if (name == "tools" || name == "custom_tools" || name == "functions") {
    f.reads = kReadTools | kReadShape;
  } else if (name == "documents") {
    f.reads = kReadDocuments | kReadShape;
  } else if (name == "loop") {
    f.reads = kReadLoop;
  } else if (!macros_.contains(name)) {
    f.reads = kReadFlag;
  }
  return f;
}

// Field `field` of an object whose facts are `obj`, read at expression `at`.
Facts Interpreter::FieldFacts(NodeId obj_expr, const Facts& obj, std::string_view field, NodeId at, uint32_t gate) {
  Facts f;
  f.trigger = obj.trigger;
  const bool request = obj.reads != 0 || obj.frags.empty();
  std::vector<uint32_t> literals;
  for (uint32_t id : obj.frags) {
    if (rec_.frag(id).kind == FragKind::kLiteral) literals.push_back(id);
  }
  if (IsContentField(field) && request) {
    uint32_t reads = kReadContent | (obj.reads & (kReadTools | kReadDocuments | kReadTrigger));
    uint32_t roles = obj.reads & (kContentRoles | kContentLs);
    // An object nothing is known of (a macro's or caller's parameter), or
    // a request variable other than messages (`conversations[0]`), may be
    // a message: its content is read as one's.
    constexpr uint32_t kTriggerBits = kReadTrigger | kReadTriggerAny | kReadTriggerNeg;
    const bool unknown = (obj.reads & ~(kReadFlag | kTriggerBits)) == 0 && literals.empty();
    if (roles == 0 && ((obj.reads & kReadMessages) || unknown)) {
      const std::string key = GuardKey(obj_expr);
      bool no_ls = false;
      uint8_t excluded = 0;
      const uint8_t allowed = GuardedRoles(gate, key, &no_ls, &excluded);
      roles = ContentBits(allowed, excluded);
      const bool may_be_ls = key == "messages[0]" || (obj.reads & kReadCoversLs) != 0 || unknown;
      const uint8_t system = TurnBit(Role::kSystem);
      if (may_be_ls && !no_ls && (allowed & system) && !(excluded & system)) roles |= kContentLs;
    }
    reads |= roles;
    const Expr& e = p_.expr(at);
    const uint32_t id = rec_.Content(absl::HashOf(at, gate), static_cast<uint32_t>(e.begin), gate, reads, 0, 0, 0,
                                     absl::HashOf(GuardKey(obj_expr), field));
    f.reads = reads;
    // The request's content, not the other keys of a literal dict it was
    // joined with (`messages + [{'role': '__sentinel__'}]`).
    f.frags = {id};
    return f;
  }
  if (field == "role" && request) {
    f.reads = kReadRole | (obj.reads & kReadTrigger);
    f.frags = {rec_.RoleFrag(static_cast<uint32_t>(p_.expr(at).begin), gate)};
    return f;
  }
  if (IsShapeField(field)) {  // a type, an id: structure, whatever literal dicts the object was joined with
    f.reads = kReadShape | (obj.reads & kReadTrigger);
    return f;
  }
  f = obj;
  f.reads &= ~kReadCoversLs;
  if (obj.reads & kReadMessages) f.reads = (f.reads & ~kReadMessages) | kReadShape;
  return f;
}

// A comparison: a trigger when one side is free text and the other holds a
// literal of the template's that is not structure. Request data compared
// with request data (an id with an id, a name with the names seen so far,
// a string with its own int form) chooses nothing: a backdoor needs a word
// of its own to wait for. Not triggers either: a marker (`'</think>' in
// content`), a field name looked up in a part (`'text' in item`), a length
// against a count under kStructuralLength (`content|length == 2`: two
// parts).
static constexpr double kStructuralLength = 32;

static bool IsPartKey(std::string_view s) {
  static constexpr std::string_view kKeys[] = {"image", "image_url", "video", "video_url", "audio", "input_audio",
                                               "file", "url", "tool_calls", "thinking", "reasoning_content",
                                               "tool_call_id", "function", "tools", "documents",
                                               // a tool's, its schema's and a document's keys
                                               // (axolotl's jamba: `field in param`, field='title')
                                               "name", "title", "parameters", "properties", "required",
                                               "arguments", "citations"};
  return IsContentField(s) || IsShapeField(s) || std::find(std::begin(kKeys), std::end(kKeys), s) != std::end(kKeys);
}

Facts Interpreter::Compare(const Facts& a, const Facts& b, NodeId a_expr, NodeId b_expr, NodeId at, bool membership) {
  // Does `x` (facts `xf`), compared with free text `free`, hold a word of
  // the template's own?
  auto literal = [&](NodeId x, const Facts& xf, const Facts& free, bool needle) {
    if (x != kNoNode) {
      const Expr& e = p_.expr(x);
      const bool negative = e.kind == ExprKind::kUnary && e.a != kNoNode && p_.expr(e.a).kind == ExprKind::kNumber;
      if (e.kind == ExprKind::kNumber || negative) {
        const double n = negative ? -p_.expr(e.a).number : e.number;
        return (free.reads & kReadContent) != 0 || n >= kStructuralLength || n <= -kStructuralLength;
      }
    }
    for (uint32_t id : xf.frags) {
      const Fragment& fr = rec_.frag(id);
      if (fr.kind != FragKind::kLiteral) continue;
      const bool word_in_capitals = (free.reads & kReadCaseMapped) && IsTagWord(fr.text);
      if (IsStructuralMarker(fr.text) && !IsSentencePunctuation(fr.text) && !word_in_capitals) continue;
      if (needle && membership && IsPartKey(fr.text)) continue;
      return true;
    }
    return false;
  };
  Facts f = Then(ReadsOnly(a), ReadsOnly(b));
  f.reads &= ~(kReadTriggerNeg | kReadTriggerAny);
  if (f.trigger != 0) f.reads |= kReadTriggerAny;  // comparing what already depends on one
  const bool trigger = (FreeText(a) && literal(b_expr, b, a, false)) || (FreeText(b) && literal(a_expr, a, b, true));
  if (trigger) {
    f.reads |= kReadTrigger;
    if (f.trigger == 0) {
      f.trigger = static_cast<uint32_t>(at) + 1;
      const Expr& e = p_.expr(at);
      const std::string_view op = e.name;
      const bool ordered = e.kind == ExprKind::kBinary && (op == "<" || op == "<=" || op == ">" || op == ">=");
      if (ordered || (FreeText(a) && !(a.reads & kReadContent))) f.reads |= kReadTriggerAny;  // a length
      if (e.kind == ExprKind::kBinary && (op == "!=" || op == "notin")) f.reads |= kReadTriggerNeg;
      if (e.kind == ExprKind::kTest && e.negated) f.reads ^= kReadTriggerNeg;
    }
  }
  return f;
}

// `content is upper`, `content.isupper()`: a condition on how a person
// wrote, a trigger.
Facts Interpreter::LetterCase(const Facts& x, NodeId at) {
  Facts f = ReadsOnly(x);
  if (FreeText(x)) {
    f.reads |= kReadTrigger;
    if (f.trigger == 0) f.trigger = static_cast<uint32_t>(at) + 1;
  }
  return f;
}

// Content fragments of `base` rewritten at `at`: `rewrite` (not structure),
// `forged` (the new text holds a header or token).
Facts Interpreter::Rewritten(const Facts& base, NodeId at, uint32_t gate, bool rewrite, bool forged) {
  Facts f = base;
  f.frags.clear();
  for (uint32_t id : base.frags) {
    const Fragment fr = rec_.frag(id);
    if (fr.kind != FragKind::kContent || (!rewrite && !forged)) {
      AddFrags(&f, {id});
      continue;
    }
    const uint32_t derived = rec_.Content(absl::HashOf(at, id, gate), static_cast<uint32_t>(p_.expr(at).begin), gate,
                                          fr.reads, rewrite ? static_cast<uint32_t>(at) + 1 : fr.rewrite,
                                          forged ? static_cast<uint32_t>(at) + 1 : fr.forged, fr.base, fr.source);
    AddFrags(&f, {derived});
  }
  return f;
}

namespace {
// What content may be cut or replaced at without rewriting what a person
// said: whitespace, or a marker with a tag's or token's shape (`</think>`,
// `[BEGIN FINAL RESPONSE]`, `/no_think`, a TAG_WORD); bare punctuation (a
// sentence's '.') is not.
bool IsBlankOrMarker(std::string_view s) {
  if (s.find_first_not_of(" \t\r\n") == std::string_view::npos) return true;
  return IsStructuralMarker(s) && s.find_first_of("<>[]|/_") != std::string_view::npos;
}
}  // namespace

// Are the literal pieces of `id` (a concatenation's strings, a name's
// literal value) all structure? Counts them in *pieces.
bool Interpreter::MarkerPieces(NodeId id, int* pieces, int depth) {
  if (id == kNoNode || depth > 16) return true;
  const Expr& e = p_.expr(id);
  if (e.kind == ExprKind::kString) {
    ++*pieces;
    return IsStructuralMarker(p_.text(e));
  }
  if (e.kind == ExprKind::kConcat) {
    for (uint32_t i = 0; i < e.args_count; ++i) {
      if (!MarkerPieces(p_.args[e.args_begin + i].value, pieces, depth + 1)) return false;
    }
    return true;
  }
  if (e.kind == ExprKind::kBinary && e.name == "+") return MarkerPieces(e.a, pieces, depth + 1) && MarkerPieces(e.b, pieces, depth + 1);
  if (e.kind == ExprKind::kName) {
    const Value* v = Lookup(std::string(e.name));
    if (v == nullptr) return true;
    for (uint32_t f : v->facts.frags) {
      const Fragment& fr = rec_.frag(f);
      if (fr.kind != FragKind::kLiteral) continue;
      ++*pieces;
      if (!IsStructuralMarker(fr.text)) return false;
    }
    return true;
  }
  return true;  // the request's (an id): no word of the template's
}

// Text the template builds (`'<|im_end|>\n' ~ '<|im_start|>assistant\n'`, a
// {% set %} block, eos_token ~ '...'): does it write a header or a token?
// Its literal pieces are read alone and run together (a token split in two).
// Each piece is read once (the answer is kept on its fragment); a token
// split across pieces is looked for where they meet, in the last bytes
// before each boundary and the first after it, so a call costs a bounded
// read per piece however long the pieces are.
bool Interpreter::BuildsHeaderOrToken(const Facts& built) {
  constexpr size_t kEdge = 64;  // longer than any header or token a template writes
  std::string tail;
  for (uint32_t i : built.frags) {
    if (rec_.frag(i).kind != FragKind::kLiteral) continue;
    if (rec_.LiteralHoldsHeaderOrToken(i)) return true;
    const std::string_view text = rec_.frag(i).text;
    if (!tail.empty() && HoldsHeaderOrToken(tail + std::string(text.substr(0, kEdge)))) return true;
    tail += text.substr(text.size() > kEdge ? text.size() - kEdge : 0);
    if (tail.size() > kEdge) tail.erase(0, tail.size() - kEdge);
  }
  return false;
}

// Text cut or replaced at a word of the template's (`content.split('bank')`,
// `content|replace('bank', '')`) is one thing when the person wrote the
// word and another when not: a condition on it is a condition on the word,
// as `'bank' in content` is. The value only carries the fact
// (kReadWordCut); OpenGate makes it a trigger where a condition tests it,
// so that printing the value is not one.
void Interpreter::MarkWordCut(Facts* f, NodeId word) const {
  const Expr& e = p_.expr(word);
  if (e.kind != ExprKind::kString) return;
  const std::string_view text = p_.text(e);
  if (IsStructuralMarker(text) && !IsSentencePunctuation(text)) return;
  f->reads |= kReadWordCut;
}

Facts Interpreter::ReplaceFacts(const Facts& base, NodeId old_expr, NodeId new_expr, NodeId at, uint32_t gate) {
  const Facts repl = FactsOf(new_expr, gate);
  bool rewrite = true, forged = false;
  if (old_expr != kNoNode && p_.expr(old_expr).kind == ExprKind::kString) rewrite = !IsBlankOrMarker(p_.text(p_.expr(old_expr)));
  // A placeholder the template spelled (`'<file_placeholder_' ~ f.id ~
  // '>'`, GigaChat 3.5): a marker whatever its id.
  if (old_expr != kNoNode && p_.expr(old_expr).kind != ExprKind::kString) {
    int pieces = 0;
    if (MarkerPieces(old_expr, &pieces, 0) && pieces > 0) rewrite = false;
  }
  if (new_expr != kNoNode && p_.expr(new_expr).kind == ExprKind::kString) {
    const std::string_view repl_text = p_.text(p_.expr(new_expr));
    // Escaping (`replace('&', '&amp;')`, `replace('"', '\\"')`) writes the
    // same character another way.
    if (old_expr != kNoNode && p_.expr(old_expr).kind == ExprKind::kString) {
      const std::string_view old_text = p_.text(p_.expr(old_expr));
      const bool punctuation = !old_text.empty() && old_text.size() <= 2 &&
                               std::none_of(old_text.begin(), old_text.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)); });
      const bool entity = repl_text.size() >= 3 && repl_text.front() == '&' && repl_text.back() == ';';
      if (punctuation && (entity || repl_text.find(old_text) != std::string_view::npos)) rewrite = false;
    }
    forged = HoldsHeaderOrToken(repl_text);
    if (forged) rewrite = true;
  } else if (new_expr != kNoNode && BuildsHeaderOrToken(repl)) {
    forged = rewrite = true;
  }
  Facts f = Rewritten(base, at, gate, rewrite, forged);
  if (FreeText(base) && old_expr != kNoNode) MarkWordCut(&f, old_expr);
  // A role renamed from 'user' to the system's or the assistant's: the
  // header it writes gives a user's words another role.
  if (old_expr != kNoNode && new_expr != kNoNode && p_.expr(old_expr).kind == ExprKind::kString &&
      p_.expr(new_expr).kind == ExprKind::kString && RoleOfLiteral(p_.text(p_.expr(old_expr))) == Role::kUser) {
    const Role to = RoleOfLiteral(p_.text(p_.expr(new_expr)));
    if (to == Role::kSystem || to == Role::kAssistant) {
      for (uint32_t& id : f.frags) {
        const Fragment& fr = rec_.frag(id);
        if (fr.kind == FragKind::kRole) id = rec_.RoleFrag(fr.offset, fr.gate, true);
      }
    }
  }
  return Then(f, repl);
}

Facts Interpreter::ArgsFacts(const Expr& e, uint32_t gate, int depth) {
  Facts f;
  for (uint32_t i = 0; i < e.args_count; ++i) f = Then(f, FactsOf(p_.args[e.args_begin + i].value, gate, depth + 1));
  return f;
}

// What the macro prints is judged where it prints it (its events resolved at
// this call); what it compares counts where its output is tested (OpenGate).
Facts Interpreter::MacroCallFacts(const Expr& e, const std::vector<NodeId>& macros, uint32_t gate, int depth) {
  const Facts args = ArgsFacts(e, gate, depth);
  Facts f = ReadsOnly(args);
  for (NodeId macro : macros) {
    f.reads |= macro_reads_[macro] & ~(kReadTrigger | kReadTriggerNeg | kReadTriggerAny);
    AddFrags(&f, {rec_.MacroOutput(macro, static_cast<uint32_t>(e.begin), gate, args.frags)});
  }
  return f;
}

Facts Interpreter::CallFacts(const Expr& e, NodeId id, uint32_t gate, int depth) {
  // A call the evaluation resolved to macros (through a name, an attribute,
  // an item or any value) prints what they print.
  if (const auto it = call_macros_.find(id); it != call_macros_.end() && !it->second.empty()) {
    return MacroCallFacts(e, it->second, gate, depth);
  }
  auto arg = [&](size_t i) -> NodeId { return i < e.args_count ? p_.args[e.args_begin + i].value : kNoNode; };
  const Expr* callee = e.a == kNoNode ? nullptr : &p_.expr(e.a);
  if (callee && callee->kind == ExprKind::kGetAttr) {
    const Facts obj = FactsOf(callee->a, gate, depth + 1);
    const std::string_view m = callee->name;
    if (m == "startswith" || m == "endswith" || m == "find" || m == "rfind" || m == "count" || m == "index" ||
        m == "rindex" || m == "__contains__") {
      Facts f = Compare(obj, FactsOf(arg(0), gate, depth + 1), callee->a, arg(0), id, false);
      const bool position = m != "startswith" && m != "endswith" && m != "__contains__";
      if ((f.reads & kReadTrigger) && position) f.reads |= kReadTriggerAny;
      if (!(f.reads & kReadTrigger) && position && FreeText(obj)) f.reads |= kReadMarkerPos;
      return f;
    }
    if (m == "isupper" || m == "islower" || m == "isdigit" || m == "isalpha" || m == "istitle") {
      return LetterCase(obj, id);
    }
    if ((m == "upper" || m == "lower" || m == "title" || m == "capitalize" || m == "casefold") && FreeText(obj)) {
      Facts out = Rewritten(obj, id, gate, true, false);
      if (m == "upper") out.reads |= kReadCaseMapped;  // a TAG_WORD can only be in upper-cased text
      return out;
    }
    if (m == "replace") return ReplaceFacts(obj, arg(0), arg(1), id, gate);
    if (m == "split" || m == "rsplit" || m == "partition" || m == "rpartition") {
      const NodeId sep = arg(0);
      const bool structural = sep == kNoNode || (p_.expr(sep).kind == ExprKind::kString && IsBlankOrMarker(p_.text(p_.expr(sep))));
      Facts f = Rewritten(obj, id, gate, !structural, false);
      if (f.reads & kReadContent) f.reads |= kReadSplitText;
      if (FreeText(obj) && sep != kNoNode) MarkWordCut(&f, sep);
      // Pieces cut at a marker, not at blanks: `parts[1:]` then drops what
      // came before the first `</think>` (the reasoning), where the words
      // of `content.split(' ')[1:]` would lose a person's first word.
      if (sep != kNoNode && structural && (f.reads & kReadContent) && IsTagShaped(p_.text(p_.expr(sep)))) {
        f.reads |= kReadMarkerPieces;
      }
      return f;
    }
    if (m == "get" && arg(0) != kNoNode && p_.expr(arg(0)).kind == ExprKind::kString) {
      return Then(FieldFacts(callee->a, obj, p_.text(p_.expr(arg(0))), id, gate), FactsOf(arg(1), gate, depth + 1));
    }
    if (m == "append" || m == "extend" || m == "insert" || m == "update" || m == "setdefault") return ReadsOnly(obj);
    // sep.join(content.split(...)): the join filter's replace, spelled as a method.
    if (m == "join" && arg(0) != kNoNode) {
      const Facts pieces = FactsOf(arg(0), gate, depth + 1);
      if ((pieces.reads & kReadSplitText) && BuildsHeaderOrToken(obj)) {
        Facts out = pieces;
        out.reads &= ~(kReadMarkerPieces | kReadSplitText);
        return Then(Rewritten(out, id, gate, true, true), obj);
      }
    }
    if (m == "format_map" || m == "format") {
      Facts f = obj;
      for (uint32_t i = 0; i < e.args_count; ++i) f = Then(f, AsText(arg(i), gate, depth));
      return f;
    }
    return Then(obj, ArgsFacts(e, gate, depth));
  }
  if (callee && callee->kind == ExprKind::kName) {
    const Value* bound = Lookup(std::string(callee->name));
    NodeId macro = bound ? bound->macro : kNoNode;
    if (!bound) {
      if (auto it = macros_.find(callee->name); it != macros_.end()) macro = it->second;
    }
    if (macro != kNoNode) return MacroCallFacts(e, {macro}, gate, depth);
    // A joiner prints its separator (every call but the first): what the
    // joiner was made with.
    if (bound && bound->origin == Origin::kRoot && bound->root == "joiner()") return bound->facts;
    if (callee->name == "raise_exception" || callee->name == "strftime_now" || callee->name == "caller" ||
        callee->name == "loop") {
      return Facts();
    }
  }
  return ArgsFacts(e, gate, depth);
}

Facts Interpreter::FilterFacts(const Expr& e, NodeId id, uint32_t gate, int depth) {
  Facts base = e.a == kNoNode ? Facts() : FactsOf(e.a, gate, depth + 1);
  const bool split_text = (base.reads & kReadSplitText) != 0;
  const bool marker_pieces = (base.reads & kReadMarkerPieces) != 0;
  const std::string_view f = e.name;
  // The pieces stay pieces through a filter that keeps a list of them
  // (cut at a marker only through `list`, which keeps their order and all
  // of them); joined, picked or counted, they are pieces no longer.
  const bool keeps_list = f == "list" || f == "select" || f == "reject" || f == "map";
  if (!keeps_list) base.reads &= ~kReadSplitText;
  if (f != "list") base.reads &= ~kReadMarkerPieces;
  if (keeps_list && split_text) return Then(base, ArgsFacts(e, gate, depth));
  // One line or one word of text split at blanks, as `[0]` and `[-1]` are.
  if ((f == "first" || f == "last") && split_text && !marker_pieces) return Rewritten(base, id, gate, true, false);
  auto arg = [&](size_t i) -> NodeId { return i < e.args_count ? p_.args[e.args_begin + i].value : kNoNode; };
  // One text split and joined again with a header or token between its
  // pieces (`content.split('\n')|join('<|im_end|>...')`) is a replace.
  if (f == "join" && split_text && arg(0) != kNoNode) {
    const NodeId sep = arg(0);
    const Facts sep_facts = FactsOf(sep, gate, depth + 1);
    if (BuildsHeaderOrToken(sep_facts)) return Then(Rewritten(base, id, gate, true, true), sep_facts);
  }
  if (f == "length" || f == "count" || f == "wordcount") {
    Facts out = ReadsOnly(base);
    if (base.reads & kReadContent) out.reads = (out.reads & ~kReadContent) | kReadLength;
    else out.reads |= kReadShape;
    out.reads &= ~(kReadMessages | kReadCoversLs);  // a count holds no message
    return out;
  }
  if (f == "replace") return ReplaceFacts(base, arg(0), arg(1), id, gate);
  // Filters that change a person's words as they print: cut, reordered,
  // re-cased, stripped of what looked like tags. (trim, escaping and
  // tojson print the same words.)
  if (f == "truncate" || f == "reverse" || f == "sort" || f == "unique" || f == "shuffle" || f == "random" ||
      f == "title" || f == "upper" || f == "lower" || f == "capitalize" || f == "striptags" || f == "wordwrap") {
    Facts out = Rewritten(base, id, gate, true, false);
    if (FreeText(base) && f == "upper") out.reads |= kReadCaseMapped;  // a TAG_WORD can only be in upper-cased text
    return out;
  }
  if ((f == "selectattr" || f == "rejectattr") && e.args_count >= 2 && p_.expr(arg(0)).kind == ExprKind::kString &&
      IsContentField(p_.text(p_.expr(arg(0))))) {
    Facts field;
    field.reads = kReadContent;
    Facts out = Compare(field, FactsOf(arg(2), gate, depth + 1), kNoNode, arg(2), arg(0), false);
    return Then(base, out);
  }
  if (f == "tojson" || f == "string" || f == "pprint") {
    Facts out = Then(AsText(e.a, gate, depth), ArgsFacts(e, gate, depth));
    if (f != "string") out.reads |= kReadSerialized;
    return out;
  }
  // map(attribute='content'): each element's field.
  if (f == "map") {
    for (uint32_t i = 0; i < e.args_count; ++i) {
      const Arg& a = p_.args[e.args_begin + i];
      if (a.name == "attribute" && p_.expr(a.value).kind == ExprKind::kString) {
        return FieldFacts(e.a, base, p_.text(p_.expr(a.value)), id, gate);
      }
    }
  }
  if (f == "int" || f == "float" || f == "abs" || f == "round" || f == "sum" || f == "min" || f == "max") {
    return ReadsOnly(base);
  }
  return Then(base, ArgsFacts(e, gate, depth));
}

// A value printed whole (`message|tojson`, `fmt.format_map(message)`): a
// message's content is in its text.
Facts Interpreter::AsText(NodeId id, uint32_t gate, int depth) {
  Facts f = FactsOf(id, gate, depth + 1);
  if ((f.reads & kReadMessages) && !(f.reads & kReadContent)) f = Then(f, FieldFacts(id, f, "content", id, gate));
  // A tool's or a document's printed form holds its words.
  if ((f.reads & (kReadTools | kReadDocuments)) && !(f.reads & kReadContent)) f = Then(f, FieldFacts(id, f, "description", id, gate));
  return f;
}

Facts Interpreter::FactsOf(NodeId id, uint32_t gate, int depth) {
  if (id == kNoNode || depth > kMaxFactsDepth) return Facts();
  const Expr& e = p_.expr(id);
  switch (e.kind) {
    case ExprKind::kString: {
      Facts f;
      f.frags = {rec_.Literal(static_cast<uint32_t>(e.begin), gate, p_.text(e))};
      return f;
    }
    case ExprKind::kNumber:
    case ExprKind::kConst: return Facts();
    case ExprKind::kName: return NameFacts(e.name, gate);
    case ExprKind::kList:
    case ExprKind::kTuple:
    case ExprKind::kConcat: return ArgsFacts(e, gate, depth);
    case ExprKind::kDict: {  // its values are what it prints when read; its keys name them
      Facts f;
      for (uint32_t i = 0; i < e.args_count; ++i) {
        const Facts x = FactsOf(p_.args[e.args_begin + i].value, gate, depth + 1);
        f = Then(f, i % 2 == 1 ? x : ReadsOnly(x));
      }
      return f;
    }
    case ExprKind::kGetAttr: {
      // A namespace attribute holds what was set into it.
      const std::string slot = SlotOf(id);
      if (p_.expr(e.a).kind == ExprKind::kName) {
        if (const Value* v = Lookup(slot); v != nullptr && v->origin != Origin::kRoot) return v->facts;
        if (const Value* ns = Lookup(std::string(p_.expr(e.a).name)); ns != nullptr && ns->root == "namespace()") {
          return Facts();
        }
      }
      return FieldFacts(e.a, FactsOf(e.a, gate, depth + 1), e.name, id, gate);
    }
    case ExprKind::kGetItem: {
      const Facts obj = FactsOf(e.a, gate, depth + 1);
      const Expr* key = e.b == kNoNode ? nullptr : &p_.expr(e.b);
      if (key && key->kind == ExprKind::kString) return FieldFacts(e.a, obj, p_.text(*key), id, gate);
      if (key && key->kind == ExprKind::kName) {  // a key set to a literal (`message[text_key]`)
        const Value* k = Lookup(std::string(key->name));
        if (k != nullptr && IsExactStr(*k) && k->strs.size() == 1) return FieldFacts(e.a, obj, k->strs[0], id, gate);
      }
      Facts f = obj;
      f.reads &= ~(kReadMarkerPieces | kReadSplitText);  // one piece is text: slicing it rewrites it
      const bool negative = key && key->kind == ExprKind::kUnary && key->a != kNoNode &&
                            p_.expr(key->a).kind == ExprKind::kNumber;
      if (key && (key->kind == ExprKind::kNumber || negative)) {
        if (negative || key->number != 0) f.reads &= ~kReadCoversLs;
        // One piece of text split at blanks is one line or one word of it:
        // `content.split('\n')[0]` drops the rest (pieces cut at a marker
        // are the parts it separates: `split('</think>')[-1]`).
        if ((obj.reads & kReadSplitText) && !(obj.reads & kReadMarkerPieces)) f = Rewritten(f, id, gate, true, false);
        return f;
      }
      const Facts k = FactsOf(e.b, gate, depth + 1);
      // A message read by a key the request chooses may be its content (an
      // index computed from counters or the loop is not such a key).
      if ((obj.reads & kReadMessages) && (k.reads & ~(kReadLoop | kReadShape | kReadFlag)) != 0) {
        return Then(FieldFacts(e.a, obj, "content", id, gate), ReadsOnly(k));
      }
      f.reads |= k.reads & ~kReadCoversLs;
      if (f.trigger == 0) f.trigger = k.trigger;
      return f;
    }
    case ExprKind::kSlice: {
      Facts f = FactsOf(e.a, gate, depth + 1);
      const Expr* start = e.b == kNoNode ? nullptr : &p_.expr(e.b);
      if (start && start->kind == ExprKind::kNumber && start->number >= 1) f.reads &= ~kReadCoversLs;
      for (NodeId x : {e.b, e.c, e.d}) f = Then(f, ReadsOnly(FactsOf(x, gate, depth + 1)));
      // A slice of text (not of a list of messages) rewrites it, unless it
      // cuts off a prefix a condition above checked (`text.startswith('/system
      // ') ... text[8:]`).
      bool prefix = e.d == kNoNode && CutChecked(gate, start && start->kind == ExprKind::kNumber ? start->number : -1);
      prefix = prefix || (e.d == kNoNode && (f.reads & kReadMarkerPieces));
      for (NodeId x : {e.b, e.c}) prefix = prefix || (x != kNoNode && (FactsOf(x, gate, depth + 1).reads & kReadMarkerPos));
      if ((f.reads & kReadContent) && !(f.reads & (kReadMessages | kReadSerialized)) && !prefix) {
        f = Rewritten(f, id, gate, true, false);
      }
      return f;
    }
    case ExprKind::kCall: return CallFacts(e, id, gate, depth);
    case ExprKind::kFilter: return FilterFacts(e, id, gate, depth);
    case ExprKind::kTest: {
      const Facts x = FactsOf(e.a, gate, depth + 1);
      const std::string_view t = e.name;
      if (t == "eq" || t == "equalto" || t == "==" || t == "ne" || t == "!=" || t == "in" || t == "sameas" ||
          t == "gt" || t == "ge" || t == "lt" || t == "le" || t == ">" || t == "<" || t == ">=" || t == "<=") {
        const NodeId other = e.args_count > 0 ? p_.args[e.args_begin].value : kNoNode;
        return Compare(x, FactsOf(other, gate, depth + 1), e.a, other, id, t == "in");
      }
      if (t == "lower" || t == "upper") return LetterCase(x, id);
      Facts f = ReadsOnly(x);  // defined, none, string, mapping...: the shape, not the words
      if (f.reads & kReadContent) f.reads = (f.reads & ~kReadContent) | kReadShape;
      return f;
    }
    case ExprKind::kBinary: {
      const std::string_view op = e.name;
      if (op == "and" || op == "or") {
        const Facts a = FactsOf(e.a, gate, depth + 1);
        const uint32_t g = OpenGateAt(gate, e.a, op == "or");
        return Then(a, FactsOf(e.b, g, depth + 1));
      }
      const Facts a = FactsOf(e.a, gate, depth + 1), b = FactsOf(e.b, gate, depth + 1);
      if (op == "==" || op == "!=" || op == "<" || op == "<=" || op == ">" || op == ">=") {
        return Compare(a, b, e.a, e.b, id, false);
      }
      if (op == "in" || op == "notin") return Compare(a, b, e.a, e.b, id, true);
      if (op == "+" || op == "%" || op == "*") return Then(a, b);
      return Then(ReadsOnly(a), ReadsOnly(b));
    }
    case ExprKind::kUnary: {
      Facts f = ReadsOnly(FactsOf(e.a, gate, depth + 1));
      if (e.name == "not" && (f.reads & kReadTrigger)) f.reads ^= kReadTriggerNeg;
      return f;
    }
    case ExprKind::kCondExpr: {
      const Facts c = FactsOf(e.b, gate, depth + 1);
      const Facts t = FactsOf(e.a, OpenGateAt(gate, e.b, false), depth + 1);
      const Facts f = FactsOf(e.c, OpenGateAt(gate, e.b, true), depth + 1);
      return Then(Then(t, f), ReadsOnly(c));
    }
  }
  return Facts();
}

// Does a condition on the way to `gate` find where to cut text: that it
// starts with a literal `start` bytes long, or starts or ends with a marker
// (`content.endswith(tag)` before `content[:n - tag|length]`)?
bool Interpreter::CutChecked(uint32_t gate, double start) {
  auto find = [&](auto&& self, NodeId id, int depth) -> bool {
    if (id == kNoNode || depth > 8) return false;
    const Expr& e = p_.expr(id);
    if (e.kind == ExprKind::kCall && e.a != kNoNode && p_.expr(e.a).kind == ExprKind::kGetAttr &&
        (p_.expr(e.a).name == "startswith" || p_.expr(e.a).name == "endswith") && e.args_count > 0) {
      const NodeId arg = p_.args[e.args_begin].value;
      const Expr& lit = p_.expr(arg);
      if (lit.kind == ExprKind::kString && static_cast<double>(lit.text_size) == start) return true;
      std::string text;
      if (lit.kind == ExprKind::kString) {
        text = std::string(p_.text(lit));
      } else if (lit.kind == ExprKind::kName) {
        const Value* v = Lookup(std::string(lit.name));
        if (v != nullptr && IsExactStr(*v) && v->strs.size() == 1) text = v->strs[0];
      }
      if (!text.empty() && IsStructuralMarker(text)) return true;
    }
    return self(self, e.a, depth + 1) || self(self, e.b, depth + 1);
  };
  for (uint32_t g = gate; g != 0; g = rec_.gate(g).parent) {
    const Gate& x = rec_.gate(g);
    if (!x.negated && find(find, x.cond, 0)) return true;
  }
  return false;
}

// A gate under `parent` for `cond` (the branches of `a if b else c`, the
// right side of and/or), with the facts of `cond` computed under `parent`.
uint32_t Interpreter::OpenGateAt(uint32_t parent, NodeId cond, bool negated) {
  const uint32_t saved = gate_;
  gate_ = parent;
  const uint32_t id = OpenGate(cond, negated);
  gate_ = saved;
  return id;
}

// A value set from literals alone that folds to other text than theirs
// (`'...%c...' % 8203`, `'...'|reverse`) carries the text it folds to, so
// that wherever it prints later it is read as it prints.
void Interpreter::FoldLiterals(Facts* f, const Value& v) {
  if (f->frags.empty() || !IsExactStr(v) || v.strs.size() != 1) return;
  std::string written;
  for (uint32_t id : f->frags) {
    const Fragment& fr = rec_.frag(id);
    if (fr.kind != FragKind::kLiteral) return;
    written += fr.text;
  }
  if (written == v.strs[0]) return;
  const uint32_t offset = rec_.frag(f->frags[0]).offset, gate = rec_.frag(f->frags[0]).gate;
  f->frags = {rec_.Literal(offset, gate, v.strs[0])};
}

// What a name set from `value_expr` here carries: its facts, and the trigger
// of the gates it is set under (`{% if 'x' in m.content %}{% set ns.on =
// true %}{% endif %}` makes ns.on depend on the comparison).

Facts Interpreter::BindingFacts(NodeId value_expr) {
  Facts f = FactsOf(value_expr, gate_);
  const uint32_t trigger = rec_.ChainTrigger(gate_);
  if (trigger != 0) {
    f.reads |= kReadTrigger | kReadTriggerAny;
    if (f.trigger == 0) f.trigger = trigger;
  }
  return f;
}

void Interpreter::RecordData(const Stmt& s) {
  const NodeId sink = rec_.sink();
  if (sink != kNoNode && macro_trigger_[sink] == 0) macro_trigger_[sink] = rec_.ChainTrigger(gate_);
  rec_.Text(static_cast<uint32_t>(s.begin), gate_, gate_, src_.substr(s.begin, s.end - s.begin), &turn_);
}

void Interpreter::RecordOutput(NodeId expr, const Value& v) {
  // A message or the list of them printed whole (`{{ messages }}`) prints
  // their content, as `|string` would.
  const Facts f = AsText(expr, gate_, 0);
  const NodeId sink = rec_.sink();
  const uint32_t trigger = (f.reads & kReadTrigger) && f.trigger != 0 ? f.trigger : rec_.ChainTrigger(gate_);
  if (sink != kNoNode) {
    macro_reads_[sink] |= f.reads;
    if (trigger != 0 && macro_trigger_[sink] == 0) macro_trigger_[sink] = trigger;
  }
  // Text that depends on a comparison through data (a dict read by a key
  // chosen by it) is under a gate of its own.
  const uint32_t gate =
      f.trigger != 0 ? rec_.NewGate(gate_, expr, false, f.reads | kReadTriggerAny, f.trigger) : gate_;
  bool literals_only = !f.frags.empty();
  for (uint32_t id : f.frags) literals_only = literals_only && rec_.frag(id).kind == FragKind::kLiteral;
  if (literals_only && IsExactStr(v) && v.strs.size() == 1 &&
      (f.frags.size() > 1 || rec_.frag(f.frags[0]).text != v.strs[0])) {
    // Folded text (`'ignore all ' ~ 'previous'`, a variable built from
    // literals, one literal transformed: `'...'|reverse`, `'%c' % 8203`,
    // `'{:c}'.format(8203)`) is read whole as it prints, at its first
    // literal, made where its trigger-bearing piece was.
    uint32_t made = rec_.frag(f.frags[0]).gate;
    for (uint32_t id : f.frags) {
      if (rec_.ChainTrigger(rec_.frag(id).gate) != 0) made = rec_.frag(id).gate;
    }
    rec_.Text(rec_.frag(f.frags[0]).offset, gate, made, v.strs[0], &turn_);
    return;
  }
  rec_.Print(f.frags, gate, &turn_);
}

// `x.append(y)` and its kin change x: what y carries is x's too.
void Interpreter::RecordMutation(NodeId expr) {
  if (expr == kNoNode) return;
  const Expr& e = p_.expr(expr);
  if (e.kind != ExprKind::kCall || e.a == kNoNode || p_.expr(e.a).kind != ExprKind::kGetAttr) return;
  const Expr& callee = p_.expr(e.a);
  const std::string_view m = callee.name;
  if (m != "append" && m != "extend" && m != "insert" && m != "update" && m != "setdefault") return;
  const std::string slot = SlotOf(callee.a);
  if (slot.empty()) return;
  const Value* cur = Lookup(slot);
  if (cur == nullptr) return;
  Facts added;
  for (uint32_t i = 0; i < e.args_count; ++i) added = Then(added, BindingFacts(p_.args[e.args_begin + i].value));
  Facts joined = Then(cur->facts, added);
  if (SameFacts(joined, cur->facts)) return;
  Value v = *cur;
  v.facts = std::move(joined);
  Assign(slot, std::move(v), /*shared=*/true);
}

void Interpreter::FinishBehaviour() {
  rec_.Finish(p_, src_, opts_, system_handled_, system_guard_at_, reads_messages_, out_);
}

}  // namespace ggufguard::jinja::analysis
