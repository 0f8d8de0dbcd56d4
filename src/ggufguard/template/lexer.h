// Jinja2's tokenizer, for analysis: the same tokens Jinja2 3.x makes from a
// template with the default environment (delimiters {{ }} {% %} {# #}, no
// line statements), so that nothing Jinja2 runs as code is seen as text.
//
// Where Jinja2 uses Python's `\s` (whitespace in tags, around `raw` and
// `endraw`, after `-%}`), Unicode whitespace counts, as in Python's
// str.isspace(): `{%\u00a0endraw\u00a0%}` ends a raw block here as in Jinja2.
// String literals are decoded as Jinja2 decodes them (Python's
// "unicode-escape"). The lexer pulls one token at a time: it allocates only
// the decoded text of the current string literal.
#ifndef GGUFGUARD_TEMPLATE_LEXER_H_
#define GGUFGUARD_TEMPLATE_LEXER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ggufguard::jinja {

enum class Tok : uint8_t {
  kData,        // text between tags (and the body of a raw block)
  kVarBegin,    // {{
  kVarEnd,      // }}
  kBlockBegin,  // {%
  kBlockEnd,    // %}
  kName,
  kString,      // `value` holds the decoded text
  kInteger,     // `number`
  kFloat,       // `number`
  kOperator,    // `text` is the operator: + - * / // % ** ~ ( ) [ ] { } . , : | = == != < <= > >=
  kError,       // a character Jinja2 rejects, or an unterminated string/tag/comment/raw
  kEof,
};

// What a kError token is about.
enum class LexError : uint8_t { kNone, kBadChar, kUnterminatedString, kUnterminatedTag, kUnterminatedComment, kUnterminatedRaw };

struct Token {
  Tok kind = Tok::kEof;
  size_t offset = 0;       // first byte in the template
  std::string_view text;   // the bytes as written
  std::string value;       // kString: decoded
  double number = 0;       // kInteger, kFloat (integers above 2^53 are rounded)
  LexError error = LexError::kNone;  // kError: why
};

class Lexer {
 public:
  explicit Lexer(std::string_view source) : s_(source) {}

  // The next token; kEof forever at the end. After an unterminated tag,
  // comment, raw block or string the next token is kEof: Jinja2 reads no
  // further.
  Token Next();

  // Bracket depth inside the current tag, for nesting limits.
  uint32_t bracket_depth() const { return brackets_; }

 private:
  enum class State : uint8_t { kText, kTag, kEnd };
  Token Make(Tok kind, size_t begin, size_t end);
  Token LexText();
  Token LexInTag();
  Token LexString(size_t p);
  Token LexNumber(size_t p);
  // Position after a tag closer (`}}`/`-}}` or `%}`/`-%}`/`+%}`) at `p`, or npos.
  size_t MatchTagEnd(size_t p) const;

  std::string_view s_;
  size_t pos_ = 0;
  State state_ = State::kText;
  bool in_block_ = false;   // the open tag is {% %} (else {{ }})
  uint32_t brackets_ = 0;
  LexError error_ = LexError::kNone;  // for the token being made
};

// Python's str.isspace() for the code point encoded at s[i]; `*len` gets the
// encoding's length (1 when not whitespace).
bool IsPyWhitespaceAt(std::string_view s, size_t i, size_t* len);
size_t SkipPyWhitespace(std::string_view s, size_t i);

// Python's "unicode-escape" decoding of a literal's body, as Jinja2 applies it.
// \N{...} names are resolved for LOW LINE, digits and Latin letters (all an
// ASCII identifier can be built from); any other name decodes to U+FFFD,
// which no Python attribute name contains.
std::string DecodeStringLiteral(std::string_view body);

}  // namespace ggufguard::jinja

#endif  // GGUFGUARD_TEMPLATE_LEXER_H_
