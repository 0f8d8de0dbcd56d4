// Chat templates (tokenizer.chat_template, tokenizer.chat_template.NAME):
// which keys hold them, and their SHA-256 digests for the JSON report, so a
// gatekeeper can allow-list templates it has reviewed. The 8xxx rules that
// scan them are declared in rules.h.
#ifndef GGUFGUARD_RULES_TEMPLATE_RULES_H_
#define GGUFGUARD_RULES_TEMPLATE_RULES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ggufguard/findings/rule_catalog.h"
#include "ggufguard/findings/finding.h"
#include "ggufguard/format/header.h"
#include "ggufguard/provenance/provenance.h"
#include "ggufguard/provenance/siblings.h"
#include "ggufguard/template/scan.h"

namespace ggufguard {

// `key` already in canonical form: tokenizer.chat_template or
// tokenizer.chat_template.NAME.
bool IsChatTemplateKey(std::string_view key);
// Whether any common reader takes `key` (raw bytes) for a template key: C
// code cuts it at NUL ("k\0x" is "k"), gguf-parser-go trims it
// ("tokenizer.chat_template "), case-insensitive readers fold it. Each such
// alias is scanned and hashed like the key it stands for (CanonicalView in
// key_groups.h). `scratch` holds the canonical form when one is built.
bool IsChatTemplateAlias(std::string_view key, std::string* scratch);

// The rule that reports each kind of template issue (one rule per kind).
RuleId RuleForTemplateIssue(TemplateIssueKind kind);

struct TemplateDigest {
  std::string_view key;  // raw key bytes; escape before printing
  uint64_t offset;       // file offset of the template's first byte
  uint64_t bytes;
  std::string sha256;    // lower-case hex
  // What the analyser found the template to use beyond chat data (lipsum,
  // loop, macro:NAME...) and the dangerous names it computes (scan.h).
  std::vector<std::string> roots;
  std::vector<std::string> folded_names;
  std::string_view text;  // the template's bytes, in the header
  // Where it comes from (provenance/provenance.h), computed once per
  // distinct template; null when the policy does not analyse it (larger
  // than max_chat_template_bytes).
  std::shared_ptr<const UpstreamProvenance> provenance;
  // How it compares with its repository's sibling files, when the caller
  // read them (scan, hf://: JudgeAgainstSiblings); empty otherwise.
  std::vector<SiblingComparison> siblings;
  // What the template tells the model (template/behaviour.h), shared by the
  // keys that hold the same template; null when it was not analysed.
  std::shared_ptr<const TemplateBehaviour> behaviour;
};

// The report's list of templates: one digest per string-valued template key,
// in file order, for the first max_list_entries of them; the others are
// counted (a header may hold a million template keys).
struct TemplateDigests {
  std::vector<TemplateDigest> listed;
  uint64_t not_listed = 0;
  // ModelFamily() of the file (provenance/family.h), when it holds a template.
  std::string model_family;
  // The sibling files looked for, when the caller read them (siblings.h).
  std::vector<SiblingFile> sibling_files;
};

class FindingSink;
// GG8030-GG8032: one finding per listed template key saying where it comes
// from (rules/provenance_rules.cc).
void ReportProvenance(FindingSink& sink, std::string_view key, uint64_t template_offset,
                      const UpstreamProvenance& provenance);

}  // namespace ggufguard

#endif  // GGUFGUARD_RULES_TEMPLATE_RULES_H_
