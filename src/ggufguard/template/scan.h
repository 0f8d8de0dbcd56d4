// Static analysis of Jinja2 chat templates (`tokenizer.chat_template*`
// metadata) for sandbox escapes (SSTI) and render-time resource bombs,
// without running them.
//
// The template is tokenized with Jinja2's own rules (lexer.h), parsed into a
// syntax tree (parser.h), and walked by an abstract interpreter (analyser.h)
// that folds the strings a template computes ('_'*2 ~ 'class' ~ '_'*2 is
// "__class__"), follows which values may be Python objects beyond plain chat
// data (lipsum, cycler, raise_exception, loop, macros, and their aliases), and
// bounds the work a render can be made to do. Time and memory are linear in
// the template's size; recursion is bounded by `crash_nesting`.
//
// Tuned for zero findings on real chat templates (Llama 3, ChatML/Qwen,
// Mistral, Gemma, Phi, DeepSeek, tool-use templates with bounded recursion).
// Jinja2 with the default environment is the reference: line statements and
// custom delimiters are not modelled.
#ifndef GGUFGUARD_TEMPLATE_SCAN_H_
#define GGUFGUARD_TEMPLATE_SCAN_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ggufguard/template/behaviour.h"

namespace ggufguard {

enum class TemplateIssueKind {
  // Control bytes other than \t \n \r, DEL, C1 controls, invalid UTF-8.
  kNonPrintableByte,
  // An attribute or subscript name that is, or folds to, a dunder name
  // ("__class__", '_'*2 ~ 'class' ~ '_'*2), or an attribute that begins
  // with `_`, which the Jinja sandbox treats as internal.
  kDunderAccess,
  // The `attr` filter (`|attr(...)`, `map('attr', ...)`).
  kAttrFilter,
  // A free name such as os, eval, self, config, request, getattr: nothing a
  // chat renderer passes, everything an escape reaches for.
  kDangerousName,
  // An attribute, subscript or filter beyond an allow-list on an object that
  // is not chat data: a Jinja global (lipsum, cycler, joiner, namespace, range,
  // dict), a renderer's callable (raise_exception, strftime_now), a macro,
  // caller, loop, self, or an alias of one (set, with, for, macro argument).
  kGlobalsHelper,
  // A macro that may call itself (directly or through others) under a
  // condition: recursion a base case can end, as in tool-use templates.
  kRecursiveMacro,
  // Recursion nothing ends: a cycle of macro calls with no if/for/and/or/else
  // on the way, a macro or caller used as a value (self-application), or a
  // `for ... recursive` loop calling loop() on something other than a part
  // of its item.
  kUnboundedRecursion,
  // Block plus expression nesting deeper than `max_nesting`.
  kExcessiveNesting,
  // Nesting deeper than `crash_nesting` (256): far past any real template
  // and on the way to overflowing a recursive renderer's stack.
  kDeepNesting,
  // Unterminated {{ }}, {% %}, {# #}, {% raw %}, string literal, or a block
  // ({% if %}, {% for %}, ...) never closed.
  kUnterminated,
  // Template larger than `max_bytes`; nothing else is scanned.
  kTooLarge,
  // An attribute or subscript name the analyser cannot fold to a constant and
  // that is not plain chat data (built from a global's repr, a mutated list,
  // a loop-carried variable), or any non-constant name on a dangerous object.
  kComputedName,
  // {% include %}, {% extends %}, {% import %}, {% from ... import %}: they
  // read templates (files) through the renderer's loader.
  kFileAccess,
  // Work or memory beyond the policy's limits: range(10**9), 'a'*10**10,
  // huge powers, widths, lipsum(n=...), format padding, nested loops, a
  // namespace value doubled in a loop.
  kRenderBomb,
  // Jinja2 would not parse the template (the analysis goes on after the tag).
  kParseError,

  // What the template tells the model (behaviour.h, docs/template-behaviour.md).
  // Literal words, a URL, markup or a command reaching the output only
  // under a condition on what a message, tool or document says.
  kContentGatedText,
  // Words the template writes on its own (a default system prompt,
  // instructions), listed for the reviewer.
  kOwnText,
  // A URL, markup or script, a shell command, an encoded blob in text the
  // template writes.
  kTextUrl,
  kTextMarkup,
  kTextCommand,
  kTextBlob,
  // Invisible or bidirectional code points in text the template writes.
  kInvisibleText,
  // The leading system message never reaches the output.
  kSystemDropped,
  // A role's content never reaches the output.
  kContentDropped,
  // Message content rewritten (replace, slicing, truncation) by more than
  // structure.
  kContentRewritten,
  // Content of a user or tool message printed in the system's or the
  // assistant's turn.
  kContentMoved,
  // A role header or special token written inside a message's content.
  kForgedTurn,
  // Text or a content condition in bytes the caller marked as not upstream's.
  kInsertedText,
  // A special token the template writes that the file's vocabulary lacks
  // (judged by the GGUF side, rules/template_rules.cc: the analyser lists
  // the tokens, TemplateBehaviour::tokens).
  kUnknownSpecialToken,
};

struct TemplateIssue {
  TemplateIssueKind kind;
  uint64_t offset;  // byte offset inside the template
  uint32_t line = 0, column = 0;  // 1-based; column counts code points
  // What the issue is about, escaped to printable ASCII once (messages are
  // not escaped again): the expression as written, then what it means,
  // e.g. "x[('_'*2 ~ 'class' ~ '_'*2)] builds '__class__'".
  std::string detail;
};

struct TemplateScanOptions {
  uint64_t max_bytes = 1 << 20;
  uint32_t max_nesting = 32;
  uint32_t crash_nesting = 256;
  size_t max_issues = 64;
  // Render-time limits that real templates never approach: loop iterations
  // (ranges, nested loops, list sizes) and bytes one expression may produce.
  uint64_t max_iterations = 1000000;
  uint64_t max_output_bytes = uint64_t{16} << 20;
  // The behaviour record's lists (TemplateBehaviour): at most this many
  // entries each (the policy's max_list_entries).
  size_t max_listed = 100;
  // Provenance (t37 item 2): the byte ranges known not to be the upstream
  // template's. Text and content conditions inside them are judged without
  // the leniency given to what real templates do (kInsertedText); outside
  // them as usual. Empty: no provenance known, every byte judged as usual.
  std::vector<TemplateByteRange> inserted;
};

struct TemplateScan {
  std::vector<TemplateIssue> issues;  // of the code checks (kNonPrintableByte to kParseError), by offset, at most max_issues
  // Objects beyond chat data the template names (lipsum, loop, raise_exception,
  // macro:NAME, ...), in first-use order, at most 32.
  std::vector<std::string> roots;
  // Dangerous names the template computes rather than spells ("__globals__"
  // from '_'*2 ~ 'globals' ~ '_'*2), at most 32, escaped.
  std::vector<std::string> folded_names;
  // What the template tells the model (behaviour.h).
  TemplateBehaviour behaviour;
  // What the template tells the model, judged (kContentGatedText and
  // after), by offset, at most max_issues of each kind: apart from `issues`,
  // so that notes listing its text never push an escape out of the list.
  std::vector<TemplateIssue> behaviour_issues;
};

TemplateScan AnalyseChatTemplate(std::string_view tmpl, const TemplateScanOptions& opts = {});

// The code checks' issues only (AnalyseChatTemplate(...).issues).
std::vector<TemplateIssue> ScanChatTemplate(std::string_view tmpl, const TemplateScanOptions& opts = {});

// Kebab-case name, e.g. "dunder-access".
const char* TemplateIssueKindName(TemplateIssueKind kind);

}  // namespace ggufguard

#endif  // GGUFGUARD_TEMPLATE_SCAN_H_
