#include "ggufguard/report/render_set.h"

#include "absl/strings/str_cat.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/text.h"
#include "ggufguard/report/render.h"

namespace ggufguard {
namespace {

using Json = nlohmann::ordered_json;

struct SetCounts {
  uint64_t errors = 0, warnings = 0, infos = 0;
};

SetCounts CountSetFindings(const SetReport& set) {
  SetCounts c;
  for (const SetFinding& f : set.findings) {
    const Severity s = f.finding.severity;
    (s == Severity::kError ? c.errors : s == Severity::kWarning ? c.warnings : c.infos)++;
  }
  return c;
}

}  // namespace

Json SetJson(const SetReport& set) {
  Json j;
  j["set"] = EscapeForDisplay(set.label, kMaxPathBytes);
  j["verdict"] = VerdictName(set.verdict());
  j["shard_count"] = set.shard_count;
  Json shards = Json::array();
  for (const ShardStatus& s : set.shards) {
    shards.push_back({{"file", EscapeForDisplay(s.location, kMaxPathBytes)}, {"verdict", s.verdict}});
  }
  j["shards"] = std::move(shards);
  Json not_checked = Json::array();
  for (const std::string& item : set.not_checked) not_checked.push_back(EscapeForDisplay(item, kMaxPathBytes));
  j["not_checked"] = std::move(not_checked);
  Json findings = Json::array();
  for (const SetFinding& f : set.findings) {
    const RuleInfo* info = FindRule(f.finding.rule);
    findings.push_back({{"file", EscapeForDisplay(f.location, kMaxPathBytes)},
                        {"rule", RuleCode(f.finding.rule)},
                        {"name", info ? info->name : "unknown"},
                        {"severity", SeverityName(f.finding.severity)},
                        {"offset", f.finding.offset},
                        {"message", f.finding.message}});
  }
  j["findings"] = std::move(findings);
  Json suppressed = Json::array();
  for (const auto& [rule, count] : set.suppressed) suppressed.push_back({{"rule", RuleCode(rule)}, {"count", count}});
  j["suppressed"] = std::move(suppressed);
  const SetCounts c = CountSetFindings(set);
  j["summary"] = {{"errors", c.errors}, {"warnings", c.warnings}, {"infos", c.infos}};
  return j;
}

std::string RenderSetText(const SetReport& set) {
  std::string out;
  for (const SetFinding& f : set.findings) {
    const RuleInfo* info = FindRule(f.finding.rule);
    absl::StrAppend(&out, EscapeLabelForText(f.location), ":", f.finding.offset, ": ",
                    Sv(SeverityName(f.finding.severity)), " ", RuleCode(f.finding.rule), " ",
                    Sv(info ? info->name : "unknown"), ": ", f.finding.message, "\n");
  }
  const std::string label = EscapeLabelForText(set.label);
  for (const auto& [rule, count] : set.suppressed) {
    const RuleInfo* info = FindRule(rule);
    absl::StrAppend(&out, label, ": note: ", count, " more ", RuleCode(rule), " ", Sv(info ? info->name : "unknown"),
                    " findings not listed\n");
  }
  uint64_t valid = 0, invalid = 0, other = 0;
  for (const ShardStatus& s : set.shards) (s.verdict == "valid" ? valid : s.verdict == "invalid" ? invalid : other)++;
  const SetCounts c = CountSetFindings(set);
  absl::StrAppend(&out, label, ": ", VerdictName(set.verdict()), " (split set of ", set.shard_count, " shards: ", valid,
                  " valid, ", invalid, " invalid, ", other, " other; set checks: ", c.errors, " errors, ", c.warnings,
                  " warnings, ", c.infos, " notes)");
  if (!set.not_checked.empty()) {
    out += " not checked:";
    for (size_t i = 0; i < set.not_checked.size(); ++i) {
      absl::StrAppend(&out, i ? ";" : "", " ", EscapeForDisplay(set.not_checked[i], kMaxPathBytes));
    }
  }
  out += "\n";
  return out;
}

std::string RenderSetJsonLine(const SetReport& set) {
  Json line;
  line["type"] = "set";
  Json entry = SetJson(set);  // items() views it: it must outlive the loop
  for (auto& [k, v] : entry.items()) line[k] = std::move(v);
  return line.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace ggufguard
