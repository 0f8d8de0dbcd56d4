// The abstract interpreter over a parsed template (see scan.h for what it
// looks for). Each statement is visited a bounded number of times (a loop's
// body twice while a namespace value carried across iterations changes, a
// macro's body once more per round of call-site arguments), within a budget
// proportional to the template's size; past the budget, values are widened
// to "unknown", which can only add findings.
#ifndef GGUFGUARD_TEMPLATE_ANALYSER_H_
#define GGUFGUARD_TEMPLATE_ANALYSER_H_

#include <string_view>

#include "ggufguard/template/ast.h"
#include "ggufguard/template/scan.h"

namespace ggufguard::jinja {

// Appends to out->issues (unsorted, deduplicated), out->roots and
// out->folded_names.
void Analyse(const Program& program, std::string_view source, const TemplateScanOptions& options,
             TemplateScan* out);

}  // namespace ggufguard::jinja

#endif  // GGUFGUARD_TEMPLATE_ANALYSER_H_
