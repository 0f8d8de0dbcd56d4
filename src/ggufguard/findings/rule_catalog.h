// Every rule ggufguard knows: stable ID, kebab-case name, default severity.
//
// IDs are grouped by thousands and never reused once retired:
//   1xxx limits and truncation     2xxx file header
//   3xxx metadata encoding         4xxx known keys and hyperparameters
//   5xxx tensor infos              6xxx data layout
//   7xxx tokenizer                 8xxx chat templates
//   9xxx loader confusion and resource bombs
// docs/rules.md explains each one; a test keeps the two in step.
#ifndef GGUFGUARD_FINDINGS_RULE_CATALOG_H_
#define GGUFGUARD_FINDINGS_RULE_CATALOG_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/types/span.h"

namespace ggufguard {

enum class Severity : uint8_t { kInfo = 0, kWarning = 1, kError = 2 };
std::string_view SeverityName(Severity s);  // "info", "warning", "error"

enum class RuleId : uint16_t {
#define GGUFGUARD_RULE(id, enumerator, name, default_severity, strict_severity, summary) enumerator = id,
#include "ggufguard/findings/rules.def"
#undef GGUFGUARD_RULE
};

struct RuleInfo {
  RuleId id;
  std::string_view name;      // kebab-case, stable
  Severity default_severity;  // under the default policy
  Severity strict_severity;   // under the strict policy
  std::string_view summary;   // one line: what it catches
};

absl::Span<const RuleInfo> AllRules();      // in ID order
const RuleInfo* FindRule(RuleId id);        // nullptr only for a bug
// The rule's position in AllRules() (0 .. kMaxRules - 1), or -1 for an ID no
// rule has (a bug). Constant time: sinks index per-rule counters with it.
inline constexpr size_t kMaxRules = 255;
int RulePosition(RuleId id);
const RuleInfo* FindRuleByCode(std::string_view code_or_name);  // "GG3011" or "duplicate-key"
std::string RuleCode(RuleId id);            // "GG3011"
// "<rule count>-<8 hex digits>": a hash of every rule's ID, name and
// severities, so that the version changes with the catalog without anyone
// having to remember to bump it. Compare it for equality only.
std::string RuleCatalogVersion();

}  // namespace ggufguard

#endif  // GGUFGUARD_FINDINGS_RULE_CATALOG_H_
