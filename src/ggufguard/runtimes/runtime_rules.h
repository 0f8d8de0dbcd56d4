// GG9200-GG9299: what the runtimes other than llama.cpp refuse or crash on
// that no structural rule names, read from the tables generated from their
// sources (runtime_tables.h). Each rule is one runtime's
// (findings/runtime_effects.h, RuntimeOfRule).
//
// Every rule runs on every file that parses: what it finds is kept as a
// RuntimeIssue, from which that runtime's verdict is made. It is also a
// finding (an error) when the runtime must load the file (its profile was
// named: Policy::RequiredRuntimes), and always for GG9212, which is memory
// corruption in vLLM rather than a refusal.
#ifndef GGUFGUARD_RUNTIMES_RUNTIME_RULES_H_
#define GGUFGUARD_RUNTIMES_RUNTIME_RULES_H_

#include <vector>

#include "ggufguard/rules/rules.h"
#include "ggufguard/runtimes/verdicts.h"

namespace ggufguard {

// Appends to `issues` the first finding of each runtime rule that fires, with
// its count.
void CheckRuntimes(RuleContext& ctx, const KeyIndex& keys, std::vector<RuntimeIssue>* issues);

}  // namespace ggufguard

#endif  // GGUFGUARD_RUNTIMES_RUNTIME_RULES_H_
