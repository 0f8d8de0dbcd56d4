#include "ggufguard/findings/finding.h"

#include <algorithm>

namespace ggufguard {

bool FindingSink::Count(RuleId id) {
  const int at = RulePosition(id);
  Judged judged = at < 0 ? kNotJudged : judged_[static_cast<size_t>(at)];
  if (judged == kNotJudged) {
    judged = !policy_.Enabled(id) ? kOff : policy_.SeverityOf(id) == Severity::kError ? kCountsAsError : kCounts;
    if (at >= 0) judged_[static_cast<size_t>(at)] = judged;
  }
  if (judged == kOff) return false;
  if (judged == kCountsAsError) ++errors_;
  const size_t slot = at < 0 ? kMaxRules : static_cast<size_t>(at);
  if (listed_[slot] < policy_.limits.max_findings_per_rule) {
    ++listed_[slot];
    return true;
  }
  ++suppressed_[slot];
  if (at < 0) ++unknown_suppressed_[id];
  return false;
}

void FindingSink::List(RuleId id, uint64_t offset, std::string message) {
  findings_.push_back(Finding{id, policy_.SeverityOf(id), offset, std::move(message)});
}

std::map<RuleId, uint64_t> FindingSink::suppressed() const {
  std::map<RuleId, uint64_t> out = unknown_suppressed_;
  const absl::Span<const RuleInfo> rules = AllRules();
  for (size_t i = 0; i < rules.size(); ++i) {
    if (suppressed_[i] != 0) out[rules[i].id] = suppressed_[i];
  }
  return out;
}

std::vector<Finding> FindingSink::TakeSorted() {
  std::stable_sort(findings_.begin(), findings_.end(), [](const Finding& a, const Finding& b) {
    if (a.offset != b.offset) return a.offset < b.offset;
    return a.rule < b.rule;
  });
  return std::move(findings_);
}

}  // namespace ggufguard
