#include "ggufguard/findings/rule_catalog.h"

#include <array>

#include "absl/strings/str_cat.h"
#include "ggufguard/base/sv.h"
#include "absl/strings/str_format.h"

namespace ggufguard {
namespace {

constexpr Severity E = Severity::kError;
constexpr Severity W = Severity::kWarning;
constexpr Severity N = Severity::kInfo;

// The catalog, from rules.def.
constexpr RuleInfo kRules[] = {
#define GGUFGUARD_RULE(id, enumerator, name, default_severity, strict_severity, summary) \
  {RuleId::enumerator, name, default_severity, strict_severity, summary},
#include "ggufguard/findings/rules.def"
#undef GGUFGUARD_RULE
};

static_assert([] {
  for (size_t i = 1; i < sizeof(kRules) / sizeof(kRules[0]); ++i) {
    if (static_cast<int>(kRules[i - 1].id) >= static_cast<int>(kRules[i].id)) return false;
  }
  return true;
}(), "kRules must be sorted by ID without repeats");

}  // namespace

std::string_view SeverityName(Severity s) {
  switch (s) {
    case Severity::kInfo: return "info";
    case Severity::kWarning: return "warning";
    case Severity::kError: return "error";
  }
  return "error";
}

absl::Span<const RuleInfo> AllRules() { return kRules; }

namespace {

// RuleId -> position in kRules + 1 (0: no such rule), so that FindRule, which
// every finding calls, is one load, not a walk of the table.
constexpr size_t kIdSpace = 10000;  // IDs are four digits
static_assert(std::size(kRules) <= kMaxRules);
constexpr std::array<uint8_t, kIdSpace> kPositionOf = [] {
  std::array<uint8_t, kIdSpace> at{};
  for (size_t i = 0; i < std::size(kRules); ++i) at[static_cast<uint16_t>(kRules[i].id)] = static_cast<uint8_t>(i + 1);
  return at;
}();

}  // namespace

int RulePosition(RuleId id) {
  const uint16_t v = static_cast<uint16_t>(id);
  return v < kIdSpace ? static_cast<int>(kPositionOf[v]) - 1 : -1;
}

const RuleInfo* FindRule(RuleId id) {
  const int at = RulePosition(id);
  return at < 0 ? nullptr : &kRules[at];
}

const RuleInfo* FindRuleByCode(std::string_view code_or_name) {
  for (const RuleInfo& r : kRules) {
    if (r.name == code_or_name || RuleCode(r.id) == code_or_name) return &r;
  }
  return nullptr;
}

std::string RuleCode(RuleId id) { return absl::StrFormat("GG%04d", static_cast<int>(id)); }

std::string RuleCatalogVersion() {
  // FNV-1a over each rule's fields, with a separator so that fields cannot
  // run into each other.
  uint32_t h = 2166136261u;
  auto mix = [&h](std::string_view bytes) {
    for (unsigned char c : bytes) h = (h ^ c) * 16777619u;
    h = (h ^ 0xffu) * 16777619u;
  };
  for (const RuleInfo& r : kRules) {
    mix(RuleCode(r.id));
    mix(r.name);
    mix(SeverityName(r.default_severity));
    mix(SeverityName(r.strict_severity));
  }
  return absl::StrFormat("%d-%08x", std::size(kRules), h);
}

}  // namespace ggufguard
