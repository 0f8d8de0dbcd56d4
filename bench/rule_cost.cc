// What each rule costs: one validation of FILE by path (open, the header's
// read, every rule), under the default policy with the rules named after
// it disabled. bench/rule_costs.sh runs it under callgrind once with no rule
// disabled and once per rule, counting only the instructions of
// MeasuredValidation (--toggle-collect), so that a rule's cost is what
// disabling it saves, deterministically (instructions, not seconds: the
// shared VM's timings move by more than most rules cost).
//
//   build/bench/bench/rule_cost FILE [GGnnnn|name ...]
//
// A rule whose work is shared with others (the parser's checks, the key
// index) costs nothing alone: its share is in the family rows of
// validate_bench (docs/performance.md, "Cost of each rule").
#include <cstdio>
#include <string>

#include "ggufguard/findings/policy.h"
#include "ggufguard/findings/rule_catalog.h"
#include "ggufguard/io/source.h"
#include "ggufguard/validate.h"

namespace {

// Out of line, so that callgrind can count exactly this.
[[gnu::noinline]] bool MeasuredValidation(const char* path, const ggufguard::Policy& policy) {
  absl::StatusOr<std::unique_ptr<ggufguard::FileSource>> source = ggufguard::FileSource::Open(path);
  if (!source.ok()) return false;
  absl::StatusOr<ggufguard::ValidatedFile> r = ggufguard::ValidateSource(**source, policy);
  return r.ok();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: rule_cost FILE [GGnnnn|name ...]\n");
    return 2;
  }
  ggufguard::Policy policy = ggufguard::DefaultPolicy();
  for (int i = 2; i < argc; ++i) {
    const ggufguard::RuleInfo* rule = ggufguard::FindRuleByCode(argv[i]);
    if (rule == nullptr) {
      std::fprintf(stderr, "rule_cost: no rule %s\n", argv[i]);
      return 2;
    }
    policy.disabled[static_cast<uint16_t>(rule->id)] = true;
  }
  if (!MeasuredValidation(argv[1], policy)) {
    std::fprintf(stderr, "rule_cost: cannot validate %s\n", argv[1]);
    return 1;
  }
  return 0;
}
