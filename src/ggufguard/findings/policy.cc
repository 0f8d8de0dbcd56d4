#include "ggufguard/findings/policy.h"

namespace ggufguard {

Severity Policy::SeverityOf(RuleId id) const {
  const auto& override = severity_override[static_cast<uint16_t>(id)];
  if (override.has_value()) return *override;
  const RuleInfo* info = FindRule(id);
  if (info == nullptr) return Severity::kError;
  return strict_severities ? info->strict_severity : info->default_severity;
}

Policy DefaultPolicy() { return Policy{}; }

Policy StrictPolicy() {
  Policy p;
  p.name = "strict";
  p.strict_key_grammar = true;
  p.strict_severities = true;
  p.check_merges = true;
  p.limits.min_alignment = 8;  // the spec: "must be a multiple of 8"
  return p;
}

}  // namespace ggufguard
