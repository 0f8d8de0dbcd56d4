#include "ggufguard/report/sarif.h"

#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/text.h"
#include "ggufguard/report/render_set.h"
#include "ggufguard/report/report_json.h"
#include "nlohmann/json.hpp"

namespace ggufguard {
namespace {

using Json = nlohmann::ordered_json;

std::string_view SarifLevel(Severity s) {
  switch (s) {
    case Severity::kError: return "error";
    case Severity::kWarning: return "warning";
    case Severity::kInfo: return "note";
  }
  return "error";
}

// A path as a URI reference: every byte outside RFC 3986's unreserved set
// and '/' percent-encoded, so spaces, '%', '#' and non-ASCII names survive.
std::string PathToUri(std::string_view path) {
  std::string out;
  for (unsigned char c : path) {
    bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
                 c == '.' || c == '_' || c == '~' || c == '/';
    if (plain) {
      out += static_cast<char>(c);
    } else {
      absl::StrAppendFormat(&out, "%%%02X", c);
    }
  }
  return out;
}

Json RulesJson(const Policy& policy) {
  Json rules = Json::array();
  for (const RuleInfo& r : AllRules()) {
    Json config = {{"level", SarifLevel(policy.SeverityOf(r.id))}};
    if (!policy.Enabled(r.id)) config["enabled"] = false;
    rules.push_back({{"id", RuleCode(r.id)},
                     {"name", r.name},
                     {"shortDescription", {{"text", r.summary}}},
                     {"helpUri", RuleHelpUri(r.id)},
                     {"defaultConfiguration", std::move(config)}});
  }
  return rules;
}

size_t RuleIndex(RuleId id) {
  absl::Span<const RuleInfo> all = AllRules();
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].id == id) return i;
  }
  return 0;  // unreachable: every finding names a catalogued rule
}

}  // namespace

std::string RuleHelpUri(RuleId id) { return absl::StrCat(Sv(kInformationUri), "/blob/main/docs/rules/", RuleCode(id), ".md"); }

namespace {

std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

// Results are written as each file comes; what SARIF keeps elsewhere in the
// run (an artifact per file, I/O errors, suppressed counts) is a few hundred
// bytes per file, held until the end: SARIF has one document per run.
// Messages escape file bytes; paths are URIs (percent-encoded) and I/O errors
// are escaped, so the document is ASCII.
class SarifWriter final : public ReportWriter {
 public:
  SarifWriter(std::ostream& out, const Policy& policy) : out_(out), policy_name_(EscapeForDisplay(policy.name, kMaxPathBytes)) {
    Json tool = {{"driver",
                  {{"name", "ggufguard"},
                   {"version", kToolVersion},
                   {"semanticVersion", kToolVersion},
                   {"informationUri", kInformationUri},
                   {"rules", RulesJson(policy)}}}};
    out_ << "{\"$schema\":\"https://json.schemastore.org/sarif-2.1.0.json\",\"version\":\"2.1.0\",\"runs\":[{\"tool\":"
         << Dump(tool) << ",\n\"results\":[";
  }

  void Add(const FileOutcome& o) override {
    const std::string uri = PathToUri(o.label);
    if (o.report == nullptr) {
      notifications_.push_back(
          {{"level", "error"},
           {"message", {{"text", absl::StrCat("I/O error: ", EscapeForDisplay(o.io_error, kMaxPathBytes))}}},
           {"locations", Json::array({Json{{"physicalLocation", {{"artifactLocation", {{"uri", uri}}}}}}})}});
      return;
    }
    const Report& r = *o.report;
    // The verdict per artifact; an inconclusive one lists what was not
    // checked there, and also as a warning notification of the run, so a
    // SARIF viewer that shows only results and notifications still says it.
    std::vector<std::string> items;
    for (const std::string& item : r.not_checked) items.push_back(EscapeForDisplay(item, kMaxPathBytes));
    Json not_checked = items;
    if (r.verdict() == Report::Verdict::kInconclusive) {
      notifications_.push_back(
          {{"level", "warning"},
           {"descriptor", {{"id", "inconclusive"}}},
           {"message", {{"text", absl::StrCat("inconclusive: not checked: ", absl::StrJoin(items, "; "))}}},
           {"locations", Json::array({Json{{"physicalLocation", {{"artifactLocation", {{"uri", uri}}}}}}})}});
    }
    Json properties = {{"verdict", VerdictName(r.verdict())}, {"not_checked", std::move(not_checked)}};
    if (!r.triage_notes.empty()) properties["triage_notes"] = r.triage_notes;  // suppressions not in force
    // What each judged runtime would do with the file, and the sampling
    // settings as llama.cpp uses them, as in the JSON report.
    properties["runtimes"] = RuntimesJson(r);
    properties["sampling"] = SamplingJson(r);
    artifacts_.push_back({{"location", {{"uri", uri}}}, {"length", r.file_size}, {"properties", std::move(properties)}});
    // A waived finding is a result with a suppression (SARIF 3.35): viewers
    // show it as suppressed, with the reason as its justification.
    auto add = [&](const Finding& f, const WaivedFinding* waived) {
      Json result = {
          {"ruleId", RuleCode(f.rule)},
          {"ruleIndex", RuleIndex(f.rule)},
          {"level", SarifLevel(f.severity)},
          {"message", {{"text", f.message}}},
          {"locations", Json::array({Json{{"physicalLocation",
                                           {{"artifactLocation", {{"uri", uri}}},
                                            {"region", {{"byteOffset", f.offset}, {"byteLength", 1}}}}}}})}};
      if (waived != nullptr) {
        result["suppressions"] = Json::array(
            {Json{{"kind", "external"}, {"status", "accepted"}, {"justification", waived->reason},
                  {"properties", {{"by", waived->by}}}}});
      }
      out_ << (first_result_ ? "\n" : ",\n") << Dump(result);
      first_result_ = false;
    };
    for (const Finding& f : r.findings) add(f, nullptr);
    for (const WaivedFinding& w : r.waived) add(w.finding, &w);
    for (const auto& [rule, count] : r.suppressed) {
      suppressed_.push_back({{"uri", uri}, {"ruleId", RuleCode(rule)}, {"count", count}});
    }
    out_ << std::flush;
  }

  // The set rules' findings are results in the shard they concern; the
  // set's verdict is in the run's properties ("sets"), and an inconclusive
  // set is a warning notification, as an inconclusive file is.
  void AddSet(const SetReport& set) override {
    for (const SetFinding& f : set.findings) {
      Json result = {
          {"ruleId", RuleCode(f.finding.rule)},
          {"ruleIndex", RuleIndex(f.finding.rule)},
          {"level", SarifLevel(f.finding.severity)},
          {"message", {{"text", f.finding.message}}},
          {"locations",
           Json::array({Json{{"physicalLocation",
                              {{"artifactLocation", {{"uri", PathToUri(f.location)}}},
                               {"region", {{"byteOffset", f.finding.offset}, {"byteLength", 1}}}}}}})}};
      out_ << (first_result_ ? "\n" : ",\n") << Dump(result);
      first_result_ = false;
    }
    Json entry = SetJson(set);
    if (set.verdict() == Report::Verdict::kInconclusive) {
      std::vector<std::string> items;
      for (const Json& item : entry["not_checked"]) items.push_back(item.get<std::string>());
      notifications_.push_back(
          {{"level", "warning"},
           {"descriptor", {{"id", "inconclusive"}}},
           {"message", {{"text", absl::StrCat("inconclusive split set ", entry["set"].get<std::string>(),
                                              ": not checked: ", absl::StrJoin(items, "; "))}}}});
    }
    sets_.push_back(std::move(entry));
    out_ << std::flush;
  }

  void Finish() override {
    // executionSuccessful: every input was read (I/O errors are error
    // notifications; an inconclusive file's is a warning and does not count).
    bool io_errors = false;
    for (const Json& n : notifications_) io_errors |= n["level"] == "error";
    Json invocation = {{"executionSuccessful", !io_errors}};
    if (!notifications_.empty()) invocation["toolExecutionNotifications"] = std::move(notifications_);
    out_ << "],\n\"invocations\":" << Dump(Json::array({std::move(invocation)})) << ",\n\"artifacts\":"
         << Dump(artifacts_) << ",\n\"properties\":"
         << Dump(RunProperties()) << "}]}\n"
         << std::flush;
  }

 private:
  std::ostream& out_;
  std::string policy_name_;
  bool first_result_ = true;
  Json artifacts_ = Json::array();
  Json notifications_ = Json::array();
  Json suppressed_ = Json::array();
  Json sets_ = Json::array();

  Json RunProperties() {
    Json p = {{"policy", policy_name_}, {"suppressed", std::move(suppressed_)}};
    if (!sets_.empty()) p["sets"] = std::move(sets_);
    return p;
  }
};

}  // namespace

std::unique_ptr<ReportWriter> MakeSarifWriter(std::ostream& out, const Policy& policy) {
  return std::make_unique<SarifWriter>(out, policy);
}

std::string RenderSarif(const std::vector<FileOutcome>& outcomes, const Policy& policy) {
  std::ostringstream out;
  std::unique_ptr<ReportWriter> w = MakeSarifWriter(out, policy);
  for (const FileOutcome& o : outcomes) w->Add(o);
  w->Finish();
  return out.str();
}

}  // namespace ggufguard
