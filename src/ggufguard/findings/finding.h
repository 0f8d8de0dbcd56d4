// Findings: what the rules say about a file, and the sink that collects them.
#ifndef GGUFGUARD_FINDINGS_FINDING_H_
#define GGUFGUARD_FINDINGS_FINDING_H_

#include <array>
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
  void Add(RuleId id, uint64_t offset, std::string message) {
    if (Count(id)) List(id, offset, std::move(message));
  }
  // Add, building the message only when the finding will be listed: a rule
  // that fires a million times builds max_findings_per_rule messages.
  template <typename MakeMessage>
  void AddLazy(RuleId id, uint64_t offset, MakeMessage&& make) {
    if (Count(id)) List(id, offset, make());
  }

  const Policy& policy() const { return policy_; }
  bool has_errors() const { return errors_ > 0; }
  // Findings sorted by offset, then rule ID, then arrival (deterministic).
  std::vector<Finding> TakeSorted();
  // Rule ID -> findings counted but not listed.
  std::map<RuleId, uint64_t> suppressed() const;

 private:
  // Counts a finding of `id`; true when it is to be listed.
  bool Count(RuleId id);
  void List(RuleId id, uint64_t offset, std::string message);

  const Policy& policy_;
  std::vector<Finding> findings_;
  // Per rule, by RulePosition (constant time: a rule may fire once per KV of
  // a million); the last slot counts IDs outside the catalog, which only a
  // bug would use, by ID in `unknown_suppressed_`.
  std::array<uint32_t, kMaxRules + 1> listed_{};
  std::array<uint64_t, kMaxRules + 1> suppressed_{};
  // Per rule, what the policy makes of it (kNotJudged until its first
  // finding): the policy is fixed for the sink's life, and a lookup of its
  // switch and severity per finding was a tenth of a million-key header.
  enum Judged : uint8_t { kNotJudged, kOff, kCounts, kCountsAsError };
  std::array<Judged, kMaxRules> judged_{};
  std::map<RuleId, uint64_t> unknown_suppressed_;
  uint64_t errors_ = 0;
};

}  // namespace ggufguard

#endif  // GGUFGUARD_FINDINGS_FINDING_H_
