// Jinja2's tokenizer rules (jinja2/lexer.py, 3.x), one state machine. See lexer.h.
#include "ggufguard/template/lexer.h"

#include <cctype>
#include <cmath>
#include <cstring>

#include "ggufguard/base/text.h"

namespace ggufguard::jinja {
namespace {

constexpr size_t kNpos = std::string_view::npos;

bool IsAsciiDigit(unsigned char c) { return c >= '0' && c <= '9'; }
bool IsAsciiAlpha(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
int HexValue(unsigned char c) {
  if (IsAsciiDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The code point at s[i] and its length; a byte that starts no valid UTF-8
// sequence stands for itself (Python would not have decoded the template;
// the byte pass in scan.cc reports it).
uint32_t CodePointAt(std::string_view s, size_t i, size_t* len) {
  const Utf8Sequence seq = DecodeUtf8At(s, i);
  if (seq.length == 0) {
    *len = 1;
    return static_cast<unsigned char>(s[i]);
  }
  *len = seq.length;
  return seq.code_point;
}

// \N{NAME} for the characters an ASCII identifier is made of; Python looks
// names up case-insensitively.
uint32_t UnicodeNameToCodePoint(std::string_view name) {
  std::string upper(name);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (upper == "LOW LINE" || upper == "SPACING UNDERSCORE") return '_';
  if (upper == "FULL STOP" || upper == "PERIOD") return '.';
  constexpr std::string_view kSmall = "LATIN SMALL LETTER ", kCapital = "LATIN CAPITAL LETTER ", kDigit = "DIGIT ";
  constexpr std::string_view kDigits[] = {"ZERO", "ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "EIGHT", "NINE"};
  std::string_view u = upper;
  if (u.size() == kSmall.size() + 1 && u.starts_with(kSmall) && IsAsciiAlpha(u.back())) return std::tolower(u.back());
  if (u.size() == kCapital.size() + 1 && u.starts_with(kCapital) && IsAsciiAlpha(u.back())) return u.back();
  if (u.starts_with(kDigit)) {
    for (uint32_t d = 0; d < 10; ++d) {
      if (u.substr(kDigit.size()) == kDigits[d]) return '0' + d;
    }
  }
  return 0xfffd;
}

// Digits with single underscores between them (Python 3.6 literals), as
// Jinja2's integer and float patterns; returns the end, or `p` if none.
size_t ScanDigits(std::string_view s, size_t p, int base) {
  auto ok = [&](unsigned char c) { return HexValue(c) >= 0 && HexValue(c) < base; };
  size_t q = p;
  while (q < s.size()) {
    if (ok(s[q])) {
      ++q;
    } else if (s[q] == '_' && q > p && q + 1 < s.size() && ok(s[q + 1])) {
      q += 2;
    } else {
      break;
    }
  }
  return q;
}

double DigitsValue(std::string_view digits, int base) {
  double v = 0;
  for (unsigned char c : digits) {
    if (c != '_') v = v * base + HexValue(c);
  }
  return v;
}

}  // namespace

bool IsPyWhitespaceAt(std::string_view s, size_t i, size_t* len) {
  const unsigned char c = s[i];
  *len = 1;
  if (c < 0x80) return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
  const uint32_t cp = CodePointAt(s, i, len);
  const bool space = cp == 0x85 || cp == 0xa0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 ||
                     cp == 0x2029 || cp == 0x202f || cp == 0x205f || cp == 0x3000;
  if (!space) *len = 1;
  return space;
}

size_t SkipPyWhitespace(std::string_view s, size_t i) {
  size_t len = 1;
  while (i < s.size() && IsPyWhitespaceAt(s, i, &len)) i += len;
  return i;
}

std::string DecodeStringLiteral(std::string_view body) {
  std::string out;
  out.reserve(body.size());
  size_t i = 0;
  while (i < body.size()) {
    const unsigned char c = body[i];
    if (c == '\r') {  // Jinja2 normalises newlines first.
      out.push_back('\n');
      i += (i + 1 < body.size() && body[i + 1] == '\n') ? 2 : 1;
      continue;
    }
    if (c != '\\' || i + 1 == body.size()) {
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    const unsigned char e = body[i + 1];
    i += 2;
    switch (e) {
      case '\n': break;
      case '\r':
        if (i < body.size() && body[i] == '\n') ++i;
        break;
      case '\\': out.push_back('\\'); break;
      case '\'': out.push_back('\''); break;
      case '"': out.push_back('"'); break;
      case 'a': out.push_back('\a'); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'v': out.push_back('\v'); break;
      case 'x':
      case 'u':
      case 'U': {
        const size_t digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        uint32_t cp = 0;
        size_t k = 0;
        for (; k < digits && i + k < body.size() && HexValue(body[i + k]) >= 0; ++k) {
          cp = cp * 16 + static_cast<uint32_t>(HexValue(body[i + k]));
        }
        // A short escape is a decode error in Jinja2: the template cannot load.
        AppendUtf8(&out, k == digits ? cp : 0xfffd);
        i += k;
        break;
      }
      case 'N': {
        uint32_t cp = 0xfffd;
        if (i < body.size() && body[i] == '{') {
          const size_t close = body.find('}', i);
          if (close != kNpos && close - i <= 128) {
            cp = UnicodeNameToCodePoint(body.substr(i + 1, close - i - 1));
            i = close + 1;
          }
        }
        AppendUtf8(&out, cp);
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          uint32_t cp = e - '0';
          for (int k = 0; k < 2 && i < body.size() && body[i] >= '0' && body[i] <= '7'; ++k, ++i) {
            cp = cp * 8 + static_cast<uint32_t>(body[i] - '0');
          }
          AppendUtf8(&out, cp);
        } else {  // Unknown escapes keep their backslash.
          out.push_back('\\');
          out.push_back(static_cast<char>(e));
        }
    }
  }
  return out;
}

Token Lexer::Make(Tok kind, size_t begin, size_t end) {
  Token t;
  t.kind = kind;
  t.offset = begin;
  t.text = s_.substr(begin, end - begin);
  if (kind == Tok::kError) t.error = error_;
  pos_ = end;
  return t;
}

Token Lexer::Next() {
  error_ = LexError::kNone;
  switch (state_) {
    case State::kText: return LexText();
    case State::kTag: return LexInTag();
    case State::kEnd: break;
  }
  return Make(Tok::kEof, s_.size(), s_.size());
}

Token Lexer::LexText() {
  for (;;) {
    if (pos_ >= s_.size()) {
      state_ = State::kEnd;
      return Make(Tok::kEof, s_.size(), s_.size());
    }
    size_t open = kNpos;
    for (size_t i = s_.find('{', pos_); i != kNpos && i + 1 < s_.size(); i = s_.find('{', i + 1)) {
      const char c = s_[i + 1];
      if (c == '{' || c == '%' || c == '#') {
        open = i;
        break;
      }
    }
    if (open == kNpos) return Make(Tok::kData, pos_, s_.size());
    if (open > pos_) return Make(Tok::kData, pos_, open);  // the tag comes next call

    const char kind = s_[open + 1];
    size_t p = open + 2;
    if (kind == '#') {  // a comment ends at the first #} (or -#})
      const size_t close = s_.find("#}", p);
      if (close == kNpos) {
        state_ = State::kEnd;
        error_ = LexError::kUnterminatedComment;
        return Make(Tok::kError, open, s_.size());
      }
      pos_ = close + 2;
      continue;
    }
    const bool control = p < s_.size() && (s_[p] == '-' || s_[p] == '+');
    if (kind == '%') {
      // raw_begin: {% [-+]? \s* raw \s* (-%} | %})
      size_t q = SkipPyWhitespace(s_, p + (control ? 1 : 0));
      if (s_.substr(q).starts_with("raw")) {
        q = SkipPyWhitespace(s_, q + 3);
        if (s_.substr(q).starts_with("-%}")) q += 3;
        else if (s_.substr(q).starts_with("%}")) q += 2;
        else q = kNpos;
        if (q != kNpos) {
          // raw_end: {% [-+]? \s* endraw \s* (+%} | -%} | %})
          for (size_t e = s_.find("{%", q); e != kNpos; e = s_.find("{%", e + 2)) {
            size_t r = e + 2;
            if (r < s_.size() && (s_[r] == '-' || s_[r] == '+')) ++r;
            r = SkipPyWhitespace(s_, r);
            if (!s_.substr(r).starts_with("endraw")) continue;
            r = SkipPyWhitespace(s_, r + 6);
            if (s_.substr(r).starts_with("+%}") || s_.substr(r).starts_with("-%}")) r += 3;
            else if (s_.substr(r).starts_with("%}")) r += 2;
            else continue;
            Token t = Make(Tok::kData, q, e);
            pos_ = r;
            return t;
          }
          state_ = State::kEnd;
          error_ = LexError::kUnterminatedRaw;
          return Make(Tok::kError, open, s_.size());
        }
      }
    }
    state_ = State::kTag;
    in_block_ = kind == '%';
    brackets_ = 0;
    return Make(in_block_ ? Tok::kBlockBegin : Tok::kVarBegin, open, p + (control ? 1 : 0));
  }
}

size_t Lexer::MatchTagEnd(size_t p) const {
  const std::string_view rest = s_.substr(p);
  if (in_block_) {
    if (rest.starts_with("-%}") || rest.starts_with("+%}")) return p + 3;
    if (rest.starts_with("%}")) return p + 2;
  } else {
    if (rest.starts_with("-}}")) return p + 3;
    if (rest.starts_with("}}")) return p + 2;
  }
  return kNpos;
}

Token Lexer::LexInTag() {
  const size_t p = SkipPyWhitespace(s_, pos_);
  if (p >= s_.size()) {
    state_ = State::kEnd;
    error_ = LexError::kUnterminatedTag;
    return Make(Tok::kError, p, p);
  }
  if (brackets_ == 0) {
    const size_t end = MatchTagEnd(p);
    if (end != kNpos) {
      state_ = State::kText;
      return Make(in_block_ ? Tok::kBlockEnd : Tok::kVarEnd, p, end);
    }
  }
  const unsigned char c = s_[p];
  if (IsAsciiDigit(c)) return LexNumber(p);
  size_t len = 1;
  if (IsAsciiAlpha(c) || c == '_' || c >= 0x80) {
    size_t q = p;
    while (q < s_.size()) {
      const unsigned char d = s_[q];
      if (IsAsciiAlpha(d) || IsAsciiDigit(d) || d == '_') {
        ++q;
      } else if (d >= 0x80 && !IsPyWhitespaceAt(s_, q, &len)) {
        CodePointAt(s_, q, &len);
        q += len;
      } else {
        break;
      }
    }
    return Make(Tok::kName, p, q);
  }
  if (c == '\'' || c == '"') return LexString(p);

  static constexpr std::string_view kTwo[] = {"//", "**", "==", "!=", ">=", "<="};
  for (std::string_view op : kTwo) {
    if (s_.substr(p).starts_with(op)) return Make(Tok::kOperator, p, p + 2);
  }
  if (c != 0 && std::strchr("+-/*%~()[]{}.,:|=<>;", c) != nullptr) {
    if (c == '(' || c == '[' || c == '{') {
      ++brackets_;
    } else if ((c == ')' || c == ']' || c == '}') && brackets_ > 0) {
      --brackets_;
    }
    return Make(Tok::kOperator, p, p + 1);
  }
  error_ = LexError::kBadChar;
  CodePointAt(s_, p, &len);
  return Make(Tok::kError, p, p + len);
}

Token Lexer::LexString(size_t p) {
  const char quote = s_[p];
  for (size_t i = p + 1; i < s_.size(); ++i) {
    if (s_[i] == '\\') {
      ++i;
    } else if (s_[i] == quote) {
      Token t = Make(Tok::kString, p, i + 1);
      t.value = DecodeStringLiteral(s_.substr(p + 1, i - p - 1));
      return t;
    }
  }
  // Jinja2 cannot load the template: nothing after the quote runs.
  error_ = LexError::kUnterminatedString;
  state_ = State::kEnd;
  return Make(Tok::kError, p, s_.size());
}

Token Lexer::LexNumber(size_t p) {
  const bool after_dot = p > 0 && s_[p - 1] == '.';
  // Prefixed integers: 0b, 0o, 0x.
  if (s_[p] == '0' && p + 1 < s_.size()) {
    const char x = static_cast<char>(std::tolower(static_cast<unsigned char>(s_[p + 1])));
    const int base = x == 'b' ? 2 : x == 'o' ? 8 : x == 'x' ? 16 : 0;
    if (base != 0) {
      size_t q = p + 2;
      if (q < s_.size() && s_[q] == '_') ++q;
      const size_t end = ScanDigits(s_, q, base);
      if (end > q) {
        Token t = Make(Tok::kInteger, p, end);
        t.number = DigitsValue(s_.substr(q, end - q), base);
        return t;
      }
    }
  }
  const size_t int_end = ScanDigits(s_, p, 10);
  size_t end = int_end;
  bool is_float = false;
  if (!after_dot) {
    size_t q = int_end;
    if (q + 1 < s_.size() && s_[q] == '.' && IsAsciiDigit(s_[q + 1])) {
      q = ScanDigits(s_, q + 1, 10);
      is_float = true;
      end = q;
    }
    if (q < s_.size() && (s_[q] == 'e' || s_[q] == 'E')) {
      size_t r = q + 1;
      if (r < s_.size() && (s_[r] == '+' || s_[r] == '-')) ++r;
      const size_t exp_end = ScanDigits(s_, r, 10);
      if (exp_end > r) {
        is_float = true;
        end = exp_end;
      }
    }
  }
  Token t = Make(is_float ? Tok::kFloat : Tok::kInteger, p, end);
  if (is_float) {
    std::string digits;
    for (char ch : t.text) {
      if (ch != '_') digits.push_back(ch);
    }
    t.number = std::strtod(digits.c_str(), nullptr);
  } else {
    t.number = DigitsValue(t.text, 10);
  }
  return t;
}

}  // namespace ggufguard::jinja
