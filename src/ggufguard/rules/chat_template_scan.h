// Static, non-executing scan of Jinja2 chat templates
// (`tokenizer.chat_template*` metadata) for constructs used in sandbox
// escapes (SSTI) and resource abuse.
//
// The scanner only lexes; it never evaluates or parses into a tree. It runs in
// time linear in the template size, never recurses on input, and allocates only
// for the issues it reports plus a block stack bounded by `max_nesting`.
// It is a gatekeeper heuristic tuned for zero findings on mainstream chat
// templates (Llama 3, ChatML/Qwen, Mistral, Gemma, Phi-3, DeepSeek, SmolLM2),
// not a proof of safety: names computed at render time from non-literal parts
// cannot be seen statically.
#ifndef GGUFGUARD_RULES_CHAT_TEMPLATE_SCAN_H_
#define GGUFGUARD_RULES_CHAT_TEMPLATE_SCAN_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ggufguard {

enum class TemplateIssueKind {
  // Control bytes other than \t \n \r, DEL, C1 controls, invalid UTF-8.
  kNonPrintableByte,
  // Identifier or (decoded, possibly concatenated) string literal that is or
  // looks like a dunder name ("__class__", "__cla" ~ "ss__"), or an
  // underscore-prefixed attribute (`x._private`), which the Jinja sandbox
  // treats as internal.
  kDunderAccess,
  // The `attr` filter (`|attr(...)`, `{% filter attr(...) %}`); the detail says
  // when its argument is computed rather than a single literal.
  kAttrFilter,
  // Identifiers such as os, popen, eval, exec, system, getattr, self, config,
  // request, import, include (code only; string literals never count).
  kDangerousName,
  // lipsum / cycler / joiner / namespace / range / dict used as an object
  // (followed by `.`, `[` or `|`) instead of being called.
  kGlobalsHelper,
  // Macro calling itself, macros calling each other in a cycle, `caller` or a
  // macro passed around as a value (self-application recursion).
  kRecursiveMacro,
  // A macro that calls itself with no condition between the call and the
  // macro: no {% if %} or {% for %} block around the call, no `if`, `and`,
  // `or` or `else` in the tag that calls. Nothing can stop it: rendering
  // recurses until the engine's stack runs out (llama.cpp's Jinja engine
  // has no depth limit). Bounded recursion over data, as in real tool-use
  // templates, always sits under such a condition.
  kUnboundedRecursion,
  // Block plus bracket nesting deeper than `max_nesting`.
  kExcessiveNesting,
  // Nesting deeper than `crash_nesting` (256): far past any real template
  // (a few levels) and on the way to overflowing a recursive-descent
  // renderer's stack (llama.cpp's Jinja parser and walker recurse per level).
  kDeepNesting,
  // Unterminated {{ }}, {% %}, {# #}, {% raw %}, string literal, or a block
  // ({% if %}, {% for %}, ...) never closed.
  kUnterminated,
  // Template larger than `max_bytes`; nothing else is scanned.
  kTooLarge,
};

struct TemplateIssue {
  TemplateIssueKind kind;
  uint64_t offset;     // Byte offset inside the template.
  std::string detail;  // Offending token, escaped to printable ASCII, ~64 chars.
};

struct TemplateScanOptions {
  uint64_t max_bytes = 1 << 20;
  uint32_t max_nesting = 32;
  uint32_t crash_nesting = 256;
  size_t max_issues = 64;
};

// Returns the issues sorted by offset, at most `opts.max_issues` of them.
std::vector<TemplateIssue> ScanChatTemplate(std::string_view tmpl,
                                            const TemplateScanOptions& opts = {});

// Kebab-case name, e.g. "dunder-access".
const char* TemplateIssueKindName(TemplateIssueKind kind);

}  // namespace ggufguard

#endif  // GGUFGUARD_RULES_CHAT_TEMPLATE_SCAN_H_
