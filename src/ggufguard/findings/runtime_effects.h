// What a finding means for each runtime: whether the runtime loads the file
// anyway, refuses it, hangs or crashes on it.
//
// Most rules are ggufguard's own judgement (a key that is not UTF-8 is unsafe
// to show whatever loads it); some are exactly what a runtime's reader or
// loader refuses. This table says which, per runtime, so that a report can say
// "llama.cpp refuses, vLLM loads" and a profile named on the command line can
// make its runtime's refusals errors (Policy::SeverityOf). It is written by
// hand from the runtimes' sources at the commits runtimes/runtime_tables.h
// records (docs/runtimes.md gives the code each row stands for); the runtime
// rules (GG9200-GG9299) each belong to one runtime and are in it too.
#ifndef GGUFGUARD_FINDINGS_RUNTIME_EFFECTS_H_
#define GGUFGUARD_FINDINGS_RUNTIME_EFFECTS_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "ggufguard/findings/profile.h"
#include "ggufguard/findings/rule_catalog.h"

namespace ggufguard {

// Ordered by how bad it is for whoever loads the file: a verdict is the worst
// outcome of its findings.
enum class RuntimeOutcome : uint8_t { kLoads = 0, kRefuses = 1, kHangs = 2, kCrashes = 3 };
std::string_view RuntimeOutcomeName(RuntimeOutcome o);  // "loads", "refuses", "hangs", "crashes"

struct RuleEffect {
  RuntimeOutcome outcome = RuntimeOutcome::kLoads;
  // What the runtime says (its error message, or what happens), for a report;
  // empty where the finding's own message says it (llama.cpp's rules).
  std::string_view says;
};

// What a finding of rule `id` means for `runtime` (any profile but gguf,
// which is no runtime: kLoads for it).
RuleEffect EffectOn(Profile runtime, RuleId id);

// The runtimes a finding of `id` stops (refuses, hangs, crashes).
ProfileSet RuntimesStoppedBy(RuleId id);

// The one runtime a runtime rule (GG9200-GG9299) belongs to; nullopt for
// every other rule.
std::optional<Profile> RuntimeOfRule(RuleId id);

// Whether a runtime rule is a finding whatever the profiles: GG9212, memory
// corruption in vLLM rather than a refusal. The others are findings only when
// their runtime is required (runtimes/runtime_rules.h).
inline bool RuntimeRuleAlwaysReported(RuleId id) { return id == RuleId::kVllmDimensionInt32; }

}  // namespace ggufguard

#endif  // GGUFGUARD_FINDINGS_RUNTIME_EFFECTS_H_
