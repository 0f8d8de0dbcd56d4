// Model families, for provenance (docs/provenance.md): which family a chat
// template's own markers say it is written for, and which family a GGUF
// file says its model belongs to. A family is a short lower-case name
// ("llama3", "chatml", "gemma", ...), or empty when nothing says.
//
// The two are reported side by side and never judged against each other: a
// fine-tune that switches its base model's template for ChatML (Hermes and
// Dolphin on Llama, most community merges) is the normal case, so no
// disagreement between them can be told apart from an attack without false
// positives. The file's family only breaks ties between near upstream
// templates.
#ifndef GGUFGUARD_PROVENANCE_FAMILY_H_
#define GGUFGUARD_PROVENANCE_FAMILY_H_

#include <string>
#include <string_view>

#include "ggufguard/format/header.h"

namespace ggufguard {

// From the special-token spellings the template writes (<|start_header_id|>
// is llama3, <|im_start|> chatml, <start_of_turn> gemma, ...), the most
// specific first. One pass per marker over the template's bytes.
std::string_view TemplateFamily(std::string_view tmpl);

// From general.base_model.N.name / .organization / .repo_url, general.name,
// general.basename and general.architecture, the first that names a known
// family (a fine-tune's base model says more than its own name, its name
// more than its architecture: Kimi K2 is a deepseek2 model).
std::string ModelFamily(const GgufHeader& header);

// Whether a template of family `tmpl_family` is what a model of family
// `model_family` is expected to use (chatml for qwen, smollm, hermes, ...).
bool FamiliesAgree(std::string_view model_family, std::string_view tmpl_family);

}  // namespace ggufguard

#endif  // GGUFGUARD_PROVENANCE_FAMILY_H_
