// Per runtime, what it would do with the file: load it, refuse it (with the
// reason it would give), hang or crash. Computed once per report from its
// findings (through findings/runtime_effects.h) and from what the runtime
// rules found (runtime_rules.h), for the runtimes the policy judges
// (Policy::JudgedRuntimes); renderers only print it.
#ifndef GGUFGUARD_RUNTIMES_VERDICTS_H_
#define GGUFGUARD_RUNTIMES_VERDICTS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "ggufguard/findings/finding.h"
#include "ggufguard/findings/policy.h"
#include "ggufguard/findings/runtime_effects.h"

namespace ggufguard {

// What one runtime rule (GG9200-GG9299) found first, and how often: kept
// whether or not the rule's runtime is judged as required, since an
// unrequired runtime's refusal is no finding but still its verdict.
struct RuntimeIssue {
  RuleId rule;
  uint64_t offset = 0;
  std::string reason;  // printable ASCII, file bytes escaped
  uint64_t count = 0;
};

struct RuntimeVerdict {
  Profile runtime = Profile::kLlamaCpp;
  RuntimeOutcome outcome = RuntimeOutcome::kLoads;
  // The file must load in this runtime (its profile was named): a refusal
  // is then an error finding too.
  bool required = false;
  // The finding or runtime rule the outcome rests on; none when it loads.
  std::optional<RuleId> rule;
  uint64_t offset = 0;
  std::string reason;  // printable ASCII; empty when it loads
  std::string judged_at;  // the runtime's sources: RuntimeJudgedAt
};

// The verdict of each runtime `policy` judges, in Profile order.
std::vector<RuntimeVerdict> JudgeRuntimes(const Policy& policy, absl::Span<const Finding> findings,
                                          const std::map<RuleId, uint64_t>& suppressed,
                                          absl::Span<const RuntimeIssue> issues);

// "loads", "refuses", "hangs", "crashes"; "inconclusive" for a runtime that
// nothing found stops when the report rests on part of the file
// (`partial`: its not_checked is not empty), since it may still refuse it.
std::string_view RuntimeVerdictName(const RuntimeVerdict& v, bool partial);

}  // namespace ggufguard

#endif  // GGUFGUARD_RUNTIMES_VERDICTS_H_
