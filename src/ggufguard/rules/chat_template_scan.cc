// Non-executing Jinja2 lexer for chat templates. See chat_template_scan.h.
//
// The lexer mirrors Jinja's own tokenizer closely enough that it never treats
// as plain text something Jinja would run as code: tags end only when brackets
// are balanced (Jinja's rule too), string literals may span `}}` and newlines,
// and `{% raw %}` bodies are text. Where it guesses, it guesses towards code.
#include "ggufguard/rules/chat_template_scan.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <iterator>
#include <string>
#include <utility>

namespace ggufguard {
namespace {

using Kind = TemplateIssueKind;
constexpr size_t kNpos = std::string_view::npos;

constexpr size_t kMaxDetailChars = 64;
// The block stack never grows past this, whatever max_nesting says; deeper
// blocks are only counted.
constexpr size_t kMaxStackFrames = 1024;
// Macro call graph size: one uint64_t bit row per node.
constexpr size_t kMaxMacroNodes = 64;
// Longest \N{...} Unicode name worth looking for (real names are < 90 chars).
constexpr size_t kMaxUnicodeNameLen = 128;

// Names that only SSTI payloads need: Python/OS access and Flask/Jinja globals.
constexpr std::string_view kDangerousNames[] = {
    "os",         "popen",    "eval",        "exec",     "subprocess",
    "system",     "import",   "open",        "getattr",  "setattr",
    "delattr",    "compile",  "globals",     "locals",   "builtins",
    "request",    "config",   "self",        "include",  "extends",
    "url_for",    "get_flashed_messages",    "func_globals", "f_globals",
    "f_builtins", "f_back",   "gi_frame",    "cr_frame", "tb_frame",
    "breakpoint",
};
// Jinja globals whose __init__/__globals__ lead to Python builtins.
constexpr std::string_view kGlobalsHelpers[] = {
    "lipsum", "cycler", "joiner", "namespace", "range", "dict",
};
// Block statements; each is closed by "end" + name. `set` opens a block only
// without `=`, which is known at the end of the tag.
constexpr std::string_view kBlockOpeners[] = {
    "if", "for", "macro", "call", "filter", "set", "block", "with", "autoescape",
};
constexpr int kMacroBlock = 2;
constexpr int kSetBlock = 5;
static_assert(kBlockOpeners[kMacroBlock] == "macro" && kBlockOpeners[kSetBlock] == "set");

template <size_t N>
bool Contains(const std::string_view (&list)[N], std::string_view s) {
  return std::find(std::begin(list), std::end(list), s) != std::end(list);
}
int OpenerIndex(std::string_view s) {
  const auto* it = std::find(std::begin(kBlockOpeners), std::end(kBlockOpeners), s);
  return it == std::end(kBlockOpeners) ? -1 : static_cast<int>(it - std::begin(kBlockOpeners));
}

bool IsDigit(unsigned char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsIdentStart(unsigned char c) { return IsAlpha(c) || c == '_'; }
bool IsIdentChar(unsigned char c) { return IsIdentStart(c) || IsDigit(c); }
bool IsAsciiSpace(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
// Non-ASCII bytes separate tokens inside code: Jinja accepts Unicode spaces
// there, and splitting Unicode identifiers can only add findings, not hide any.
bool IsCodeSpace(unsigned char c) { return IsAsciiSpace(c) || c >= 0x80; }
int HexValue(unsigned char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsDunder(std::string_view name) {
  return name.size() >= 5 && name.starts_with("__") && name.ends_with("__") &&
         name.find_first_not_of('_') != kNpos;
}

// Escapes to printable ASCII and truncates; cost is bounded by the output cap.
std::string Printable(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    if (out.size() >= kMaxDetailChars) {
      out += "...";
      break;
    }
    if (c == '\\') {
      out += "\\\\";
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// Byte pass: non-printable characters anywhere (text, code and comments).

// Length of the valid UTF-8 sequence at s[i], or 0 when invalid (overlong
// forms, surrogates and code points above U+10FFFF are invalid).
size_t Utf8Length(std::string_view s, size_t i) {
  auto at = [&](size_t k) -> unsigned { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  auto cont = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xbf) { return at(k) >= lo && at(k) <= hi; };
  const unsigned c = at(0);
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c == 0xe0) return cont(1, 0xa0) && cont(2) ? 3 : 0;
  if (c == 0xed) return cont(1, 0x80, 0x9f) && cont(2) ? 3 : 0;
  if (c >= 0xe1 && c <= 0xef) return cont(1) && cont(2) ? 3 : 0;
  if (c == 0xf0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (c >= 0xf1 && c <= 0xf3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (c == 0xf4) return cont(1, 0x80, 0x8f) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

bool IsPrintableAt(std::string_view s, size_t i, size_t* len) {
  const unsigned char c = s[i];
  if (c < 0x80) {
    *len = 1;
    return (c >= 0x20 && c != 0x7f) || c == '\t' || c == '\n' || c == '\r';
  }
  *len = Utf8Length(s, i);
  if (*len == 0) {
    *len = 1;
    return false;
  }
  // C1 controls U+0080..U+009F are encoded as C2 80..C2 9F.
  return !(c == 0xc2 && static_cast<unsigned char>(s[i + 1]) < 0xa0);
}

void ScanBytes(std::string_view s, size_t cap, std::vector<TemplateIssue>* out) {
  size_t i = 0;
  size_t len = 0;
  while (i < s.size() && out->size() < cap) {
    if (IsPrintableAt(s, i, &len)) {
      i += len;
      continue;
    }
    // One issue per run, so a binary blob does not drown everything else.
    const size_t start = i;
    while (i < s.size() && !IsPrintableAt(s, i, &len)) i += len;
    out->push_back({Kind::kNonPrintableByte, start, Printable(s.substr(start, i - start))});
  }
}

// ---------------------------------------------------------------------------
// String literals.

// What matters about a decoded string literal (or a run of concatenated ones)
// is whether it begins or ends like a dunder name, so only its first and last
// three characters are kept, classified; nothing is copied.
class LiteralShape {
 public:
  enum Unit : uint8_t { kUnderscore, kIdent, kOther, kUnknown };

  static Unit Classify(uint32_t cp) {
    if (cp == '_') return kUnderscore;
    return cp < 0x80 && (IsAlpha(static_cast<unsigned char>(cp)) || IsDigit(static_cast<unsigned char>(cp)))
               ? kIdent : kOther;
  }

  void Add(Unit u) {
    if (count_ < 3) head_[count_] = u;
    tail_[0] = tail_[1];
    tail_[1] = tail_[2];
    tail_[2] = u;
    ++count_;
  }

  // "__class__", but also the fragments "__cla" and "ss__" that a
  // concatenation the scanner cannot follow might complete.
  bool LooksDunder() const {
    auto under = [](Unit u) { return u == kUnderscore || u == kUnknown; };
    auto core = [](Unit u) { return u == kIdent || u == kUnknown; };
    if (count_ < 3) return false;
    return (under(head_[0]) && under(head_[1]) && core(head_[2])) ||
           (under(tail_[2]) && under(tail_[1]) && core(tail_[0]));
  }

 private:
  uint64_t count_ = 0;
  std::array<Unit, 3> head_ = {kOther, kOther, kOther};
  std::array<Unit, 3> tail_ = {kOther, kOther, kOther};
};

// Feeds a literal's body into `shape` after the decoding Jinja applies
// (Python "unicode-escape"): '\x5f\x5fclass\x5f\x5f' is "__class__" to Jinja.
void DecodeLiteral(std::string_view body, LiteralShape* shape) {
  using U = LiteralShape;
  size_t i = 0;
  while (i < body.size()) {
    const unsigned char c = body[i];
    if (c != '\\' || i + 1 == body.size()) {
      shape->Add(U::Classify(c));
      ++i;
      continue;
    }
    const unsigned char e = body[i + 1];
    i += 2;
    switch (e) {
      case '\n':  // Line continuation decodes to nothing.
        break;
      case '\r':
        if (i < body.size() && body[i] == '\n') ++i;
        break;
      case 'x':
      case 'u':
      case 'U': {
        const size_t digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        uint32_t cp = 0;
        size_t k = 0;
        for (; k < digits && i + k < body.size() && HexValue(body[i + k]) >= 0; ++k) {
          cp = cp * 16 + static_cast<uint32_t>(HexValue(body[i + k]));
        }
        // A short escape is a decode error in Jinja: the template cannot load.
        shape->Add(k == digits ? U::Classify(cp) : U::kOther);
        i += k;
        break;
      }
      case 'N': {
        // \N{LOW LINE} is "_"; resolving Unicode names is out of scope, so the
        // character is "unknown", which matches both '_' and a name character.
        shape->Add(U::kUnknown);
        if (i < body.size() && body[i] == '{') {
          const size_t close = body.substr(i, kMaxUnicodeNameLen).find('}');
          if (close != kNpos) i += close + 1;
        }
        break;
      }
      default:
        if (e >= '0' && e <= '7') {  // Octal: up to three digits.
          uint32_t cp = e - '0';
          for (int k = 0; k < 2 && i < body.size() && body[i] >= '0' && body[i] <= '7'; ++k, ++i) {
            cp = cp * 8 + static_cast<uint32_t>(body[i] - '0');
          }
          shape->Add(U::Classify(cp));
        } else if (std::strchr("\\'\"abfnrtv", e) != nullptr && e != '\0') {
          shape->Add(U::kOther);
        } else {  // Unknown escapes keep their backslash.
          shape->Add(U::kOther);
          shape->Add(U::Classify(e));
        }
    }
  }
}

// ---------------------------------------------------------------------------
// The lexer.

class Scanner {
 public:
  Scanner(std::string_view t, const TemplateScanOptions& opts)
      : t_(t), opts_(opts), stack_cap_(std::min<size_t>(opts.max_nesting, kMaxStackFrames) + 1) {}

  std::vector<TemplateIssue> Run() && {
    if (ScanTags()) ReportUnclosedBlock();
    ReportMutualRecursion();
    return std::move(issues_);
  }

 private:
  // The previous token, as far as the rules care.
  enum class Tok { kNone, kDot, kPipe, kString, kConcat, kOther };
  enum class Attr { kNone, kAwaitParen, kInArgs };

  // State of one {{ }} or {% %} tag.
  struct Tag {
    uint64_t open = 0;  // Offset of "{{" / "{%".
    bool stmt = false;
    size_t tokens = 0;
    std::string_view keyword;  // First name of a {% %} tag.
    bool saw_assign = false;   // `=` at bracket depth 0: `{% set x = ... %}`.
    bool condition = false;    // `if`, `and`, `or` or `else` anywhere in the tag
    // The first call of the enclosing macro to itself in this tag, judged
    // when the tag ends (a ternary's `if` follows the call it guards).
    ptrdiff_t self_call = -1;
    std::string_view self_name;
    bool self_call_in_block = false;  // under an if/for block inside the macro
    Tok prev = Tok::kNone;
    // The most recent |attr in this tag.
    Attr attr = Attr::kNone;
    uint64_t attr_depth = 0;  // Bracket depth inside its parentheses.
    ptrdiff_t attr_issue = -1;
    bool attr_built = false;
    // The current run of adjacent or ~/+ concatenated string literals.
    LiteralShape shape;
    size_t run_start = 0;
    bool run_flagged = false;
  };

  struct Frame {
    int kind;       // Index in kBlockOpeners.
    int macro;      // Innermost enclosing macro node, or -1.
    uint64_t offset;
  };

  struct MacroNode {
    std::string_view name;
    bool defined = false;
    uint64_t offset = 0;
  };

  bool Full() const { return issues_.size() >= opts_.max_issues; }

  ptrdiff_t Emit(Kind kind, uint64_t offset, std::string detail) {
    if (Full()) return -1;
    issues_.push_back({kind, offset, std::move(detail)});
    return static_cast<ptrdiff_t>(issues_.size()) - 1;
  }

  bool StartsAt(size_t pos, std::string_view lit) const {
    return pos <= t_.size() && t_.substr(pos).starts_with(lit);
  }
  size_t SkipAsciiSpace(size_t p) const {
    while (p < t_.size() && IsAsciiSpace(t_[p])) ++p;
    return p;
  }
  size_t SkipCodeSpace(size_t p) const {
    while (p < t_.size() && IsCodeSpace(t_[p])) ++p;
    return p;
  }
  char PeekChar(size_t p) const {
    p = SkipCodeSpace(p);
    return p < t_.size() ? t_[p] : '\0';
  }

  // Text state: returns false when scanning had to stop early.
  bool ScanTags() {
    size_t pos = 0;
    while (!Full()) {
      const size_t open = FindTagOpen(pos);
      if (open == kNpos) return true;
      const char kind = t_[open + 1];
      size_t p = open + 2;
      if (kind == '#') {
        const size_t close = t_.find("#}", p);
        if (close == kNpos) {
          Emit(Kind::kUnterminated, open, "{#");
          return false;
        }
        pos = close + 2;
        continue;
      }
      if (p < t_.size() && (t_[p] == '-' || t_[p] == '+')) ++p;  // Whitespace control.
      size_t body = 0;
      if (kind == '%' && MatchRawOpen(p, &body)) {
        pos = FindRawEnd(body);
        if (pos == kNpos) {
          Emit(Kind::kUnterminated, open, "{% raw %}");
          return false;
        }
        continue;
      }
      pos = LexTag(open, p, kind == '%');
      if (pos == kNpos) return false;
    }
    return false;
  }

  size_t FindTagOpen(size_t pos) const {
    for (size_t i = t_.find('{', pos); i != kNpos && i + 1 < t_.size(); i = t_.find('{', i + 1)) {
      const char c = t_[i + 1];
      if (c == '{' || c == '%' || c == '#') return i;
    }
    return kNpos;
  }

  // `{% raw %}` (after "{%" and its optional -/+), as Jinja's raw_begin.
  bool MatchRawOpen(size_t p, size_t* body) const {
    p = SkipAsciiSpace(p);
    if (!StartsAt(p, "raw")) return false;
    p = SkipAsciiSpace(p + 3);
    if (p < t_.size() && t_[p] == '-') ++p;
    if (!StartsAt(p, "%}")) return false;
    *body = p + 2;
    return true;
  }

  // Position after the first `{% endraw %}` at or after `from`.
  size_t FindRawEnd(size_t from) const {
    for (size_t i = t_.find("{%", from); i != kNpos; i = t_.find("{%", i + 2)) {
      size_t p = i + 2;
      if (p < t_.size() && (t_[p] == '-' || t_[p] == '+')) ++p;
      p = SkipAsciiSpace(p);
      if (!StartsAt(p, "endraw")) continue;
      p = SkipAsciiSpace(p + 6);
      if (p < t_.size() && (t_[p] == '-' || t_[p] == '+')) ++p;
      if (StartsAt(p, "%}")) return p + 2;
    }
    return kNpos;
  }

  // Code state, from just after the tag opener. Returns the position after the
  // tag, or kNpos when scanning must stop.
  size_t LexTag(size_t open, size_t p, bool stmt) {
    Tag tag;
    tag.open = open;
    tag.stmt = stmt;
    bracket_ = 0;
    const char closer = stmt ? '%' : '}';
    for (;;) {
      p = SkipCodeSpace(p);
      if (p >= t_.size()) {
        Emit(Kind::kUnterminated, open, stmt ? "{%" : "{{");
        return kNpos;
      }
      if (Full()) return kNpos;
      const unsigned char c = t_[p];
      // Like Jinja, a tag only ends outside brackets: `{{ {'a': {}} }}`.
      if (bracket_ == 0 && c == closer && StartsAt(p + 1, "}")) {
        EndTag(tag);
        return p + 2;
      }
      if (IsIdentStart(c)) {
        size_t q = p + 1;
        while (q < t_.size() && IsIdentChar(t_[q])) ++q;
        OnName(tag, p, q);
        p = q;
      } else if (IsDigit(c)) {
        // Digits only: `1__class__` must still show its name to the rules.
        while (p < t_.size() && IsDigit(t_[p])) ++p;
        if (p + 1 < t_.size() && t_[p] == '.' && IsDigit(t_[p + 1])) {
          for (++p; p < t_.size() && IsDigit(t_[p]);) ++p;
        }
        Advance(tag, Tok::kOther);
      } else if (c == '\'' || c == '"') {
        const size_t end = FindStringEnd(p);
        if (end == kNpos) {
          Emit(Kind::kUnterminated, p, "string " + Printable(t_.substr(p, 16)));
          return kNpos;
        }
        OnString(tag, p, end);
        p = end;
      } else {
        p = OnOperator(tag, p);
      }
    }
  }

  size_t FindStringEnd(size_t p) const {
    const char quote = t_[p];
    for (size_t i = p + 1; i < t_.size(); ++i) {
      if (t_[i] == '\\') {
        ++i;
      } else if (t_[i] == quote) {
        return i + 1;
      }
    }
    return kNpos;
  }

  void Advance(Tag& tag, Tok kind) {
    tag.prev = kind;
    ++tag.tokens;
  }

  bool InAttrArgs(const Tag& tag) const { return tag.attr == Attr::kInArgs && bracket_ >= tag.attr_depth; }

  // A single literal names one fixed attribute; anything else computes it.
  void MarkAttrBuilt(Tag& tag) {
    if (tag.attr_built) return;
    tag.attr_built = true;
    if (tag.attr_issue >= 0) issues_[static_cast<size_t>(tag.attr_issue)].detail += " with computed argument";
  }

  void OnName(Tag& tag, size_t p, size_t end) {
    const std::string_view name = t_.substr(p, end - p);
    const bool is_keyword = tag.stmt && tag.tokens == 0;
    const bool after_dot = tag.prev == Tok::kDot;
    const char next = PeekChar(end);
    if (!after_dot && (name == "if" || name == "and" || name == "or" || name == "else")) tag.condition = true;
    if (is_keyword) {
      tag.keyword = name;
      OnKeyword(name, tag.open);
    }

    if (IsDunder(name)) {
      Emit(Kind::kDunderAccess, p, Printable(name));
    } else if (after_dot && name[0] == '_') {
      // The sandbox treats every _-prefixed attribute as internal
      // (e.g. self._TemplateReference__context).
      Emit(Kind::kDunderAccess, p, "." + Printable(name));
    }
    if (Contains(kDangerousNames, name)) Emit(Kind::kDangerousName, p, Printable(name));
    // namespace(...) and range(...) are fine; namespace.__init__ is not.
    if (!after_dot && Contains(kGlobalsHelpers, name) && (next == '.' || next == '[' || next == '|')) {
      Emit(Kind::kGlobalsHelper, p, Printable(name));
    }

    if (InAttrArgs(tag)) MarkAttrBuilt(tag);
    const bool is_filter = tag.prev == Tok::kPipe || (tag.keyword == "filter" && tag.tokens == 1);
    if (is_filter && name == "attr") {
      tag.attr_issue = Emit(Kind::kAttrFilter, p, "|attr");
      tag.attr_built = false;
      tag.attr = next == '(' ? Attr::kAwaitParen : Attr::kNone;
    }

    if (tag.keyword == "macro" && tag.tokens == 1) {
      DefineMacro(name, p);
    } else if (!is_keyword && !after_dot) {
      if (next == '(') {
        OnCall(tag, name, p);
      } else if (name == "caller") {
        // Passing caller on lets a call block re-enter itself: caller(caller).
        Emit(Kind::kRecursiveMacro, p, "caller used as a value");
      } else if (IsDefinedMacro(name)) {
        // f(f) style self-application recurses without a direct call.
        Emit(Kind::kRecursiveMacro, p, Printable(name) + " used as a value");
      }
    }
    Advance(tag, Tok::kOther);
  }

  void OnString(Tag& tag, size_t p, size_t end) {
    // Jinja joins adjacent literals ('__cla' 'ss__'); ~ and + join at runtime.
    if (tag.prev != Tok::kString && tag.prev != Tok::kConcat) {
      tag.shape = LiteralShape();
      tag.run_start = p;
      tag.run_flagged = false;
    }
    DecodeLiteral(t_.substr(p + 1, end - p - 2), &tag.shape);
    if (!tag.run_flagged && tag.shape.LooksDunder()) {
      tag.run_flagged = true;
      Emit(Kind::kDunderAccess, tag.run_start, Printable(t_.substr(tag.run_start, end - tag.run_start)));
    }
    Advance(tag, Tok::kString);
  }

  size_t OnOperator(Tag& tag, size_t p) {
    const char c = t_[p];
    const char next = p + 1 < t_.size() ? t_[p + 1] : '\0';
    Tok kind = Tok::kOther;
    size_t len = 1;
    switch (c) {
      case '(':
      case '[':
      case '{':
        if (c == '(' && tag.attr == Attr::kAwaitParen) {
          tag.attr = Attr::kInArgs;
          tag.attr_depth = bracket_ + 1;
        }
        ++bracket_;
        UpdateNesting(p);
        break;
      case ')':
      case ']':
      case '}':
        if (bracket_ > 0) --bracket_;  // Stray closers are a Jinja syntax error.
        if (tag.attr == Attr::kInArgs && bracket_ < tag.attr_depth) tag.attr = Attr::kNone;
        UpdateNesting(p);
        break;
      case '.':
        kind = Tok::kDot;
        break;
      case '|':
        kind = Tok::kPipe;
        if (InAttrArgs(tag)) MarkAttrBuilt(tag);
        break;
      case '~':
      case '+':
        if (tag.prev == Tok::kString) kind = Tok::kConcat;
        if (InAttrArgs(tag)) MarkAttrBuilt(tag);
        break;
      case '*':
      case '%':
        if (c == '*' && next == '*') len = 2;
        if (InAttrArgs(tag)) MarkAttrBuilt(tag);
        break;
      case '/':
        if (next == '/') len = 2;
        break;
      case '=':
        if (next == '=') {
          len = 2;
        } else if (bracket_ == 0) {
          tag.saw_assign = true;
        }
        break;
      case '!':
      case '<':
      case '>':
        if (next == '=') len = 2;
        break;
      default:
        break;
    }
    if (c != '(' && tag.attr == Attr::kAwaitParen) tag.attr = Attr::kNone;
    Advance(tag, kind);
    return p + len;
  }

  // --- Blocks and nesting ---

  void OnKeyword(std::string_view name, uint64_t offset) {
    if (name == "set") return;  // Block form known only at the end of the tag.
    const int opener = OpenerIndex(name);
    if (opener >= 0) {
      Push(opener, offset);
    } else if (name.starts_with("end") && OpenerIndex(name.substr(3)) >= 0) {
      Pop();
    }
  }

  void EndTag(const Tag& tag) {
    if (tag.self_call >= 0) {
      if (tag.condition || tag.self_call_in_block) {
        Emit(Kind::kRecursiveMacro, static_cast<uint64_t>(tag.self_call), Printable(tag.self_name) + " calls itself");
      } else {
        Emit(Kind::kUnboundedRecursion, static_cast<uint64_t>(tag.self_call),
             Printable(tag.self_name) + " calls itself with no if, for, and, or or else on the way: nothing ends it");
      }
    }
    if (tag.keyword == "set" && !tag.saw_assign) Push(kSetBlock, tag.open);
  }

  int CurrentMacro() const { return frames_.empty() ? -1 : frames_.back().macro; }

  void Push(int kind, uint64_t offset) {
    if (frames_.size() < stack_cap_) {
      frames_.push_back({kind, CurrentMacro(), offset});
    } else {
      ++overflow_;
    }
    UpdateNesting(offset);
  }

  void Pop() {  // Mismatched end tags are a Jinja syntax error; pop anyway.
    if (overflow_ > 0) {
      --overflow_;
    } else if (!frames_.empty()) {
      frames_.pop_back();
    }
    UpdateNesting(0);
  }

  // One issue per excursion above each limit, not one per level.
  void UpdateNesting(uint64_t offset) {
    const uint64_t depth = frames_.size() + overflow_ + bracket_;
    if (depth <= opts_.crash_nesting) over_crash_limit_ = false;
    if (depth <= opts_.max_nesting) {
      over_limit_ = false;
      return;
    }
    if (!over_limit_) {
      over_limit_ = true;
      Emit(Kind::kExcessiveNesting, offset,
           "depth " + std::to_string(depth) + " > " + std::to_string(opts_.max_nesting));
    }
    if (depth > opts_.crash_nesting && !over_crash_limit_) {
      over_crash_limit_ = true;
      Emit(Kind::kDeepNesting, offset,
           "depth " + std::to_string(depth) + " > " + std::to_string(opts_.crash_nesting));
    }
  }

  void ReportUnclosedBlock() {
    if (frames_.empty()) return;
    const Frame& f = frames_.back();
    Emit(Kind::kUnterminated, f.offset, "{% " + std::string(kBlockOpeners[f.kind]) + " %} not closed");
  }

  // --- Macros: a small fixed-size call graph keyed by name ---

  int Intern(std::string_view name) {
    for (size_t i = 0; i < node_count_; ++i) {
      if (nodes_[i].name == name) return static_cast<int>(i);
    }
    if (node_count_ == kMaxMacroNodes) return -1;  // Graph full: stop tracking.
    nodes_[node_count_].name = name;
    return static_cast<int>(node_count_++);
  }

  bool IsDefinedMacro(std::string_view name) const {
    for (size_t i = 0; i < node_count_; ++i) {
      if (nodes_[i].defined && nodes_[i].name == name) return true;
    }
    return false;
  }

  void DefineMacro(std::string_view name, uint64_t offset) {
    const int node = Intern(name);
    if (node < 0) return;
    nodes_[node].defined = true;
    nodes_[node].offset = offset;
    // The {% macro %} frame was pushed by its keyword, unless over capacity.
    if (overflow_ == 0 && !frames_.empty() && frames_.back().kind == kMacroBlock) frames_.back().macro = node;
  }

  // Whether an {% if %} or {% for %} block lies between the innermost frame
  // and the enclosing {% macro %}.
  bool UnderConditionalBlock() const {
    for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
      if (it->kind == kMacroBlock) return false;
      if (kBlockOpeners[it->kind] == "if" || kBlockOpeners[it->kind] == "for") return true;
    }
    return false;
  }

  void OnCall(Tag& tag, std::string_view name, uint64_t offset) {
    const int self = CurrentMacro();
    if (self < 0) return;
    if (nodes_[self].name == name) {
      if (tag.self_call < 0) {  // judged at the end of the tag (EndTag)
        tag.self_call = static_cast<ptrdiff_t>(offset);
        tag.self_name = name;
        tag.self_call_in_block = UnderConditionalBlock() || overflow_ > 0;
      }
      return;  // No self-edge: the graph then only reports longer cycles.
    }
    const int callee = Intern(name);
    if (callee >= 0) edges_[self] |= uint64_t{1} << callee;
  }

  void ReportMutualRecursion() {
    std::array<uint64_t, kMaxMacroNodes> reach = edges_;  // Warshall closure.
    for (size_t k = 0; k < node_count_; ++k) {
      for (size_t i = 0; i < node_count_; ++i) {
        if ((reach[i] >> k) & 1) reach[i] |= reach[k];
      }
    }
    for (size_t i = 0; i < node_count_; ++i) {
      if (nodes_[i].defined && ((reach[i] >> i) & 1)) {
        Emit(Kind::kRecursiveMacro, nodes_[i].offset, Printable(nodes_[i].name) + " is mutually recursive");
      }
    }
  }

  const std::string_view t_;
  const TemplateScanOptions& opts_;
  const size_t stack_cap_;
  std::vector<TemplateIssue> issues_;
  uint64_t bracket_ = 0;  // ( [ { depth inside the current tag.
  std::vector<Frame> frames_;
  uint64_t overflow_ = 0;  // Open blocks beyond stack_cap_.
  bool over_limit_ = false;
  bool over_crash_limit_ = false;
  std::array<MacroNode, kMaxMacroNodes> nodes_{};
  std::array<uint64_t, kMaxMacroNodes> edges_{};  // Bit j of row i: i calls j.
  size_t node_count_ = 0;
};

}  // namespace

std::vector<TemplateIssue> ScanChatTemplate(std::string_view tmpl, const TemplateScanOptions& opts) {
  std::vector<TemplateIssue> issues;
  if (opts.max_issues == 0) return issues;
  if (tmpl.size() > opts.max_bytes) {
    issues.push_back({Kind::kTooLarge, opts.max_bytes,
                      std::to_string(tmpl.size()) + " bytes > " + std::to_string(opts.max_bytes)});
    return issues;
  }
  ScanBytes(tmpl, opts.max_issues, &issues);
  std::vector<TemplateIssue> code = Scanner(tmpl, opts).Run();
  issues.insert(issues.end(), std::make_move_iterator(code.begin()), std::make_move_iterator(code.end()));
  std::stable_sort(issues.begin(), issues.end(),
                   [](const TemplateIssue& a, const TemplateIssue& b) { return a.offset < b.offset; });
  if (issues.size() > opts.max_issues) issues.resize(opts.max_issues);
  return issues;
}

const char* TemplateIssueKindName(TemplateIssueKind kind) {
  switch (kind) {
    case Kind::kNonPrintableByte: return "non-printable-byte";
    case Kind::kDunderAccess: return "dunder-access";
    case Kind::kAttrFilter: return "attr-filter";
    case Kind::kDangerousName: return "dangerous-name";
    case Kind::kGlobalsHelper: return "globals-helper";
    case Kind::kRecursiveMacro: return "recursive-macro";
    case Kind::kUnboundedRecursion: return "unbounded-recursion";
    case Kind::kDeepNesting: return "deep-nesting";
    case Kind::kExcessiveNesting: return "excessive-nesting";
    case Kind::kUnterminated: return "unterminated";
    case Kind::kTooLarge: return "too-large";
  }
  return "unknown";
}

}  // namespace ggufguard
