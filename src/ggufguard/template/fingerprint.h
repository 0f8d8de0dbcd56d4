// A chat template's normal form, for telling whether two templates are the
// same one and, when they are not, where they differ (provenance against the
// upstream template, sibling files: docs/provenance.md).
//
// The template is cut into segments as Jinja2's lexer (lexer.h) reads it:
// one per line of literal text, one per {{ }} and {% %} tag, one per comment
// and raw-block marker. Each segment's form is what decides its output in
// every renderer, and only that:
//   - literal text byte for byte, except that \r\n and \r are \n (Jinja2
//     normalises newlines) and the template's one trailing newline is gone
//     (keep_trailing_newline is off in Jinja2, transformers and llama.cpp);
//   - a tag as its tokens' exact spellings (quotes and escapes included),
//     whitespace-control marks included; ASCII whitespace between tokens is
//     dropped, any other byte there is kept;
//   - a comment as its whitespace-control marks only (its text is never
//     output);
//   - after a lexer error, the rest of the template byte for byte.
// The form is a sequence of self-delimiting records, so two templates have
// the same form exactly when they have the same segments. Its SHA-256
// (NormalForm::Digest) identifies the template; each segment's own SHA-256
// (SegmentHash, 64 bits of it) lets a bounded diff align two templates
// without either's text (provenance/upstream_table.h stores no text).
// Hashes are SHA-256 because a match is a claim about provenance: a crafted
// segment must not pass for an upstream one.
#ifndef GGUFGUARD_TEMPLATE_FINGERPRINT_H_
#define GGUFGUARD_TEMPLATE_FINGERPRINT_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ggufguard {

// Bumped whenever the form changes: the generated upstream table records the
// version it was made with, and a test compares the two.
inline constexpr uint32_t kTemplateFormVersion = 1;

enum class SegmentKind : uint8_t {
  kText,       // one line of literal text (its \n included), all of a run of whitespace, or a raw block's body
  kOutput,     // {{ ... }}
  kCondition,  // {% if %}, {% elif %}
  kElse,       // {% else %}
  kLoop,       // {% for %}
  kSet,        // {% set %}
  kMacro,      // {% macro %}, {% call %}
  kEnd,        // {% endif %}, {% endfor %}, {% endset %}, ...
  kStatement,  // any other tag: filter, with, break, continue, do, generation, ...
  kComment,    // {# ... #}
  kRaw,        // {% raw %} or {% endraw %}
  kUnlexed,    // what follows a lexer error
};
inline constexpr int kSegmentKindCount = 12;

// "text", "output", "condition", ...: the names the report uses.
const char* SegmentKindName(SegmentKind kind);

struct TemplateSegment {
  SegmentKind kind;
  uint64_t offset;      // first byte in the template
  uint64_t length;      // bytes in the template
  uint64_t form_begin;  // its record in NormalForm::form
  uint64_t form_length;
};

struct NormalForm {
  std::string form;
  std::vector<TemplateSegment> segments;

  // The first 16 bytes of SHA-256(form).
  std::array<uint8_t, 16> Digest() const;
  // The first 8 bytes of SHA-256 of segment i's record, little-endian.
  uint64_t SegmentHash(size_t i) const;
  // Every segment's hash, in order.
  std::vector<uint64_t> SegmentHashes() const;
};

// Time and memory linear in the template.
NormalForm NormalizeTemplate(std::string_view tmpl);

// A segment's kind as one byte: the SegmentKind, with kWhitespaceOnlyBit set
// for text that is only spaces, tabs and newlines (a change to it is
// reported apart). The upstream table stores these bytes.
inline constexpr uint8_t kWhitespaceOnlyBit = 0x80;
uint8_t SegmentKindByte(std::string_view tmpl, const TemplateSegment& segment);

// The smallest distinct 32-bit keys (the hash's high half) of a template's
// segments, ascending: a bottom-k sketch whose overlap estimates how many
// segments two templates share (provenance/upstream_table.h).
inline constexpr size_t kSketchSize = 16;
std::vector<uint32_t> SegmentSketch(const std::vector<uint64_t>& hashes);

}  // namespace ggufguard

#endif  // GGUFGUARD_TEMPLATE_FINGERPRINT_H_
