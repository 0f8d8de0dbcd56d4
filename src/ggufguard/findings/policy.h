// What a validation enforces: limits, severities, disabled rules.
//
// `default` protects today's loaders (llama.cpp, ollama, candle, gguf-py);
// `strict` enforces the spec's letter and turns warnings into errors. A policy
// file (JSON, see docs/policy.md) starts from one of them and changes limits,
// severities and disabled rules.
#ifndef GGUFGUARD_FINDINGS_POLICY_H_
#define GGUFGUARD_FINDINGS_POLICY_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/types/span.h"

#include "ggufguard/findings/profile.h"
#include "ggufguard/findings/rule_catalog.h"

namespace ggufguard {

struct Limits {
#define GGUFGUARD_LIMIT(type, name, default_value) type name = default_value;
#include "ggufguard/findings/limits.def"
#undef GGUFGUARD_LIMIT
};

// The hard ceiling on nesting depth whatever a policy file says: the parser
// recurses once per level.
inline constexpr uint32_t kHardMaxNestingDepth = 64;
// The hard ceiling on max_header_bytes: the parsed view keeps 32-bit
// positions for its KVs (format/header.h, KeyValue). Real headers are
// megabytes; ggml reads no header this large into memory either.
inline constexpr uint64_t kHardMaxHeaderBytes = UINT32_MAX;

struct Policy {
  std::string name = "default";
  Limits limits;
  bool strict_key_grammar = false;  // spec grammar instead of the lenient one
  bool strict_severities = false;   // use RuleInfo::strict_severity
  // Check that every BPE merge is a pair of tokens (GG7004). Off by default:
  // it builds a hash set of the vocabulary, which costs more than the rest of
  // a validation together.
  bool check_merges = false;
  // Per-rule overrides, indexed by rule ID (IDs are < 10000).
  std::array<std::optional<Severity>, 10000> severity_override{};
  std::array<bool, 10000> disabled{};
  // What the file is judged as (profile.h): orthogonal to the severities, so
  // `--policy strict --profile gguf` is the spec's letter for a container.
  // `profile` is the first profile; `more_profiles` the others named with it
  // (--profile given again, --profile all). A rule runs when any of them runs
  // it.
  Profile profile = Profile::kLlamaCpp;
  ProfileSet more_profiles;
  // The profiles were named by the user (--profile, a policy file's
  // "profile"): each runtime among them must load the file, so what it
  // refuses, hangs or crashes on is an error (SeverityOf), and the report
  // judges those runtimes only. Unnamed, the report says what every runtime
  // would do and the severities are the catalog's.
  bool profiles_named = false;

  ProfileSet profiles() const {
    ProfileSet s(profile);
    s.Add(more_profiles);
    return s;
  }
  // The runtimes the file must load in; empty when no profile was named.
  ProfileSet RequiredRuntimes() const {
    return profiles_named ? profiles().Intersect(ProfileSet::Runtimes()) : ProfileSet();
  }
  // The runtimes the report gives a verdict for: the required ones when
  // profiles were named, every runtime otherwise.
  ProfileSet JudgedRuntimes() const { return profiles_named ? RequiredRuntimes() : ProfileSet::Runtimes(); }
  bool Runs(RuleId id) const;
  bool Enabled(RuleId id) const { return !disabled[static_cast<uint16_t>(id)] && Runs(id); }
  Severity SeverityOf(RuleId id) const;
};

Policy DefaultPolicy();
Policy StrictPolicy();

// Makes `names` (profile names, or "all": every runtime) the policy's
// profiles, as named by the user: the first is `profile`, the others
// `more_profiles`, and profiles_named is set. False, with the first name that
// is neither in *bad, for an unknown name or an empty list.
bool NameProfiles(absl::Span<const std::string> names, Policy* policy, std::string* bad);

}  // namespace ggufguard

#endif  // GGUFGUARD_FINDINGS_POLICY_H_
