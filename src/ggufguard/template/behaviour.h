// What a chat template tells the model (issue 37): the literal text that
// reaches the output and in whose turn, the conditions that gate it and
// what they read, and what happens to each role's content. The abstract
// interpreter fills it while it follows every branch (recorder.h); the
// behaviour issues (scan.h, GG8016-GG8029) are judged from the same record.
//
// Everything here is bounded (max_listed entries a list, texts escaped and
// cut) and printable ASCII: renderers only format it.
#ifndef GGUFGUARD_TEMPLATE_BEHAVIOUR_H_
#define GGUFGUARD_TEMPLATE_BEHAVIOUR_H_

#include <cstdint>
#include <string>
#include <vector>

namespace ggufguard {

// A span of the template's own text that reaches the output (special
// tokens, tags and role headers alone are not listed).
struct TemplateTextSpan {
  uint64_t offset = 0;  // template byte of the literal
  std::string turn;     // "system", "user", "assistant", "tool", "message's own", "none" (before any header), "unknown"
  std::string text;     // escaped, at most kMaxQuotedText bytes of the text
  std::string when;     // the conditions on the way, escaped and cut; empty: always
  uint16_t kinds = 0;   // jinja::TextKind bits
  bool content_gated = false;  // reaches the output only under a condition on what a message, tool or document says
  bool inserted = false;       // in a range the caller marked as not upstream's (TemplateScanOptions::inserted)
};

// A condition that gates output, and what it reads.
struct TemplateGate {
  uint64_t offset = 0;
  std::string condition;  // the expression as written, escaped and cut
  std::string reads;      // "message content", "role", "loop position", "flags", ...: comma-separated
  bool on_content = false;  // compares what a message, tool or document says (a trigger)
};

// What happens to one role's content.
struct TemplateRoleFate {
  std::string role;  // "system" (the leading system message), "user", "assistant", "tool"
  std::string fate;  // "printed in its own turn", "printed in the user turn", "never printed", "rewritten (...)"
  uint64_t offset = 0;  // where it is printed or rewritten, when there is such a place
};

// A special-token-shaped literal the template writes (<|...|>, <｜...｜>).
struct TemplateTokenUse {
  uint64_t offset = 0;
  std::string token;  // raw bytes, for the vocabulary lookup; escape before printing
};

struct TemplateBehaviour {
  bool analysed = false;
  std::vector<TemplateTextSpan> texts;
  uint64_t texts_not_listed = 0;
  std::vector<TemplateGate> gates;
  uint64_t gates_not_listed = 0;
  std::vector<TemplateRoleFate> roles;
  std::vector<TemplateTokenUse> tokens;  // distinct, at most max_listed
};

// Bytes [begin, end) of a template.
struct TemplateByteRange {
  uint64_t begin = 0, end = 0;
};

inline constexpr size_t kMaxQuotedText = 160;

}  // namespace ggufguard

#endif  // GGUFGUARD_TEMPLATE_BEHAVIOUR_H_
