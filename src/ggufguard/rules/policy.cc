#include <algorithm>

#include "ggufguard/rules/finding.h"
#include "ggufguard/rules/policy.h"

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

void FindingSink::Add(RuleId id, uint64_t offset, std::string message) {
  if (!policy_.Enabled(id)) return;
  Severity severity = policy_.SeverityOf(id);
  if (severity == Severity::kError) ++errors_;
  uint32_t& listed = listed_[id];
  if (listed >= policy_.limits.max_findings_per_rule) {
    ++suppressed_[id];
    return;
  }
  ++listed;
  findings_.push_back(Finding{id, severity, offset, std::move(message)});
}

std::vector<Finding> FindingSink::TakeSorted() {
  std::stable_sort(findings_.begin(), findings_.end(), [](const Finding& a, const Finding& b) {
    if (a.offset != b.offset) return a.offset < b.offset;
    return a.rule < b.rule;
  });
  return std::move(findings_);
}

}  // namespace ggufguard
