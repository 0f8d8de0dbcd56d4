// Findings: what the rules say about a file, and the sink that collects them.
#ifndef GGUFGUARD_FINDINGS_FINDING_H_
#define GGUFGUARD_FINDINGS_FINDING_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ggufguard/findings/policy.h"
#include "ggufguard/findings/rule_catalog.h"

namespace ggufguard {

struct Finding {
  RuleId rule;
  Severity severity;
  uint64_t offset;  // byte offset in the file where the problem is
  std::string message;
};

// Collects findings under a policy: drops disabled rules, applies severity
// overrides, and caps how many findings one rule may list (a file with a
// million bad tokens must not make a million-line report; the rest are
// counted in `suppressed`).
class FindingSink {
 public:
  explicit FindingSink(const Policy& policy) : policy_(policy) {}

  // Rules check this before building an expensive message.
  bool Enabled(RuleId id) const { return policy_.Enabled(id); }
  void Add(RuleId id, uint64_t offset, std::string message);

  const Policy& policy() const { return policy_; }
  bool has_errors() const { return errors_ > 0; }
  // Findings sorted by offset, then rule ID, then arrival (deterministic).
  std::vector<Finding> TakeSorted();
  // Rule ID -> findings counted but not listed.
  const std::map<RuleId, uint64_t>& suppressed() const { return suppressed_; }

 private:
  const Policy& policy_;
  std::vector<Finding> findings_;
  std::map<RuleId, uint32_t> listed_;
  std::map<RuleId, uint64_t> suppressed_;
  uint64_t errors_ = 0;
};

}  // namespace ggufguard

#endif  // GGUFGUARD_FINDINGS_FINDING_H_
