// What a piece of literal text a chat template writes is, as a reviewer
// reads it: structure the model was trained on (special tokens, tags, role
// headers, punctuation) or words addressed to the model, and among those
// the kinds nobody expects in a prompt: URLs, markup, script, shell
// commands, encoded blobs, invisible or bidirectional code points.
//
// Pure text: no template, no GGUF. The behaviour analysis (behaviour.h)
// reads every literal that reaches the output through ReadText.
#ifndef GGUFGUARD_TEMPLATE_TEXT_KINDS_H_
#define GGUFGUARD_TEMPLATE_TEXT_KINDS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ggufguard::jinja {

// Whose turn a piece of output is in. kOwn: the turn of the message being
// printed, named by its own role (`'<|im_start|>' + message.role`).
enum class Role : uint8_t { kNone, kSystem, kUser, kAssistant, kTool, kOwn };
const char* RoleName(Role role);

enum TextKind : uint16_t {
  kTextProse = 1,          // two or more words addressed to the model
  kTextUrl = 2,            // http(s)://, www., a bare domain, data:/javascript: URIs
  kTextMarkup = 4,         // an HTML tag with attributes or of an element that loads or runs something
  kTextScript = 8,         // <script, javascript:, an on...= handler
  kTextCommand = 16,       // a shell command line (download and run, rm -rf, sh -c...)
  kTextBlob = 32,          // a base64- or hex-looking run
  kTextInvisible = 64,     // zero-width, bidi, tag or variation-selector code points
  kTextSpecialToken = 128, // <|...|> or <｜...｜>
  kTextRoleHeader = 256,   // a role header (see RoleHeader)
};

// The kinds a reviewer is warned of (kTextInvisible is worse: an error).
inline constexpr uint16_t kTextUnexpected = kTextUrl | kTextMarkup | kTextScript | kTextCommand | kTextBlob;

struct RoleHeader {
  size_t at = 0;  // byte offset in the text
  Role role = Role::kNone;
};

struct TextReading {
  uint16_t kinds = 0;
  // Where the first of each unexpected kind starts (for quoting), or npos.
  size_t url_at = std::string_view::npos, markup_at = std::string_view::npos, command_at = std::string_view::npos,
         blob_at = std::string_view::npos, invisible_at = std::string_view::npos, prose_at = std::string_view::npos;
  uint32_t invisible_code_point = 0;  // the first one
  size_t words = 0;                   // words left once structure is taken out
  size_t loose = 0;                   // letters and digits left once structure is taken out
  // Role headers in order (at most kMaxHeaders), and whether the text ends
  // in a header's opening token with its role still to come
  // (`<|im_start|>`, then `message.role`).
  std::vector<RoleHeader> headers;
  bool open_header = false;
  // Where the last end-of-turn token is (<|im_end|>, <|eot_id|>,
  // <end_of_turn>, </s>...), or npos: text after it is in no turn until the
  // next header.
  size_t turn_end = std::string_view::npos;
  // Special-token-shaped spans (offset, length), at most kMaxTokens.
  std::vector<std::pair<size_t, size_t>> tokens;
};

inline constexpr size_t kMaxHeaders = 8;
inline constexpr size_t kMaxTokens = 16;

TextReading ReadText(std::string_view text);

// The names of the kinds in `kinds` ("prose", "url", "markup", "script",
// "command", "blob", "invisible", "special-token", "role-header"), in that order.
std::vector<const char*> TextKindNames(uint16_t kinds);

// A literal a condition compares message content with that names the
// model's own structure rather than what a person says: a special token, a
// tag (`</think>`, `<tool_call>`), a bracketed marker (`[TOOL_RESULTS]`), a
// role header, whitespace, or a reasoning switch (`/think`, `/no_think`,
// `/nothink`, `/system_override`). See docs/rules/GG8016.md.
bool IsStructuralMarker(std::string_view text);
// A TAG_WORD: upper case and digits with an underscore (CONTINUE_FINAL_MESSAGE_TAG).
bool IsTagWord(std::string_view text);
// Whether text writes a role header or a special token.
bool HoldsHeaderOrToken(std::string_view text);

// Is code point `cp` a letter of a script written without spaces (CJK,
// kana, Hangul)? Two of them count as a word.
bool IsWideLetter(uint32_t cp);

// Is code point `cp` invisible or a bidirectional control?
bool IsInvisibleCodePoint(uint32_t cp);

}  // namespace ggufguard::jinja

#endif  // GGUFGUARD_TEMPLATE_TEXT_KINDS_H_
