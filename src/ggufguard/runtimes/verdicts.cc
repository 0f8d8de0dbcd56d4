#include "ggufguard/runtimes/verdicts.h"

#include "absl/strings/str_cat.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/runtimes/runtime_tables.h"

namespace ggufguard {
namespace {

// One reason a runtime would not load the file.
struct Candidate {
  RuntimeOutcome outcome = RuntimeOutcome::kLoads;
  RuleId rule{};
  uint64_t offset = 0;
  std::string reason;
};

// Worse outcome first, then the earliest byte: what the runtime meets first
// of its worst.
bool Worse(const Candidate& a, const Candidate& b) {
  if (a.outcome != b.outcome) return a.outcome > b.outcome;
  return a.offset < b.offset;
}

std::string ReasonFromFinding(Profile runtime, const RuleEffect& effect, const Finding& f) {
  const RuleInfo* info = FindRule(f.rule);
  const std::string_view name = info ? info->name : "unknown";
  if (runtime == Profile::kOllama) {
    // ollama's own reader lets it through; llama-server, which ollama runs
    // the model in, is what stops.
    return absl::StrCat("llama-server (llama.cpp ", Sv(runtime_tables::kOllamaLlamaCppBuild), "): ", f.message);
  }
  if (effect.says.empty()) return f.message;
  return absl::StrCat(Sv(effect.says), " (", RuleCode(f.rule), " ", Sv(name), ": ", f.message, ")");
}

}  // namespace

std::vector<RuntimeVerdict> JudgeRuntimes(const Policy& policy, absl::Span<const Finding> findings,
                                          const std::map<RuleId, uint64_t>& suppressed,
                                          absl::Span<const RuntimeIssue> issues) {
  std::vector<RuntimeVerdict> out;
  const ProfileSet required = policy.RequiredRuntimes();
  policy.JudgedRuntimes().ForEach([&](Profile runtime) {
    std::optional<Candidate> worst;
    auto consider = [&](Candidate c) {
      if (!worst || Worse(c, *worst)) worst = std::move(c);
    };
    for (const Finding& f : findings) {
      const RuleEffect effect = EffectOn(runtime, f.rule);
      if (effect.outcome == RuntimeOutcome::kLoads) continue;
      // A runtime rule's own finding is also one of `issues`, with the same
      // reason: either gives the same candidate.
      consider(Candidate{effect.outcome, f.rule, f.offset, ReasonFromFinding(runtime, effect, f)});
    }
    // A rule whose findings were all counted rather than listed (a policy's
    // max_findings_per_rule of 0) still stops the runtime.
    for (const auto& [rule, count] : suppressed) {
      const RuleEffect effect = EffectOn(runtime, rule);
      if (effect.outcome == RuntimeOutcome::kLoads) continue;
      const RuleInfo* info = FindRule(rule);
      consider(Candidate{effect.outcome, rule, UINT64_MAX,
                         absl::StrCat(count, " findings of ", RuleCode(rule), " ", Sv(info ? info->name : "unknown"),
                                      " (not listed)")});
    }
    for (const RuntimeIssue& issue : issues) {
      if (RuntimeOfRule(issue.rule) != runtime) continue;
      consider(Candidate{EffectOn(runtime, issue.rule).outcome, issue.rule, issue.offset, issue.reason});
    }
    RuntimeVerdict v;
    v.runtime = runtime;
    v.required = required.Has(runtime);
    v.judged_at = RuntimeJudgedAt(runtime);
    if (worst) {
      v.outcome = worst->outcome;
      v.rule = worst->rule;
      v.offset = worst->offset == UINT64_MAX ? 0 : worst->offset;
      v.reason = std::move(worst->reason);
    }
    out.push_back(std::move(v));
  });
  return out;
}

std::string_view RuntimeVerdictName(const RuntimeVerdict& v, bool partial) {
  if (v.outcome == RuntimeOutcome::kLoads && partial) return "inconclusive";
  return RuntimeOutcomeName(v.outcome);
}

}  // namespace ggufguard
