#include "ggufguard/findings/policy.h"

#include "ggufguard/findings/runtime_effects.h"

namespace ggufguard {

bool Policy::Runs(RuleId id) const {
  if (more_profiles.empty()) return ProfileRuns(profile, id);
  bool runs = false;
  profiles().ForEach([&](Profile p) { runs = runs || ProfileRuns(p, id); });
  return runs;
}

Severity Policy::SeverityOf(RuleId id) const {
  const auto& override = severity_override[static_cast<uint16_t>(id)];
  if (override.has_value()) return *override;
  // A runtime named on the command line must load the file: what it
  // refuses, hangs or crashes on is an error, whatever the catalog says.
  if (profiles_named && !RuntimesStoppedBy(id).Intersect(RequiredRuntimes()).empty()) return Severity::kError;
  const RuleInfo* info = FindRule(id);
  if (info == nullptr) return Severity::kError;
  return strict_severities ? info->strict_severity : info->default_severity;
}

Policy DefaultPolicy() { return Policy{}; }

bool NameProfiles(absl::Span<const std::string> names, Policy* policy, std::string* bad) {
  ProfileSet named;
  std::optional<Profile> first;
  for (const std::string& name : names) {
    if (name == "all") {
      if (!first) first = Profile::kLlamaCpp;
      named.Add(ProfileSet::Runtimes());
      continue;
    }
    const std::optional<Profile> p = ParseProfile(name);
    if (!p) {
      *bad = name;
      return false;
    }
    if (!first) first = *p;
    named.Add(*p);
  }
  if (!first) {
    bad->clear();
    return false;
  }
  policy->profile = *first;
  policy->more_profiles = named;
  policy->profiles_named = true;
  return true;
}

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
