#include "ggufguard/findings/finding.h"

#include <algorithm>

namespace ggufguard {

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
