#include "ggufguard/report/sarif.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ggufguard/base/sv.h"
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

std::string RuleHelpUri(RuleId id) { return absl::StrCat(Sv(kInformationUri), "/docs/rules/", RuleCode(id), ".md"); }

std::string RenderSarif(const std::vector<FileOutcome>& outcomes, const Policy& policy) {
  Json results = Json::array();
  Json artifacts = Json::array();
  Json notifications = Json::array();
  Json suppressed = Json::array();
  for (const FileOutcome& o : outcomes) {
    const std::string uri = PathToUri(o.label);
    if (o.report == nullptr) {
      notifications.push_back({{"level", "error"},
                               {"message", {{"text", absl::StrCat("I/O error: ", o.io_error)}}},
                               {"locations", Json::array({Json{{"physicalLocation", {{"artifactLocation", {{"uri", uri}}}}}}})}});
      continue;
    }
    const Report& r = *o.report;
    artifacts.push_back({{"location", {{"uri", uri}}},
                         {"length", r.file_size},
                         {"properties", {{"verdict", r.valid() ? "valid" : "invalid"}}}});
    for (const Finding& f : r.findings) {
      results.push_back(
          {{"ruleId", RuleCode(f.rule)},
           {"ruleIndex", RuleIndex(f.rule)},
           {"level", SarifLevel(f.severity)},
           {"message", {{"text", f.message}}},
           {"locations", Json::array({Json{{"physicalLocation",
                                            {{"artifactLocation", {{"uri", uri}}},
                                             {"region", {{"byteOffset", f.offset}, {"byteLength", 1}}}}}}})}});
    }
    for (const auto& [rule, count] : r.suppressed) {
      suppressed.push_back({{"uri", uri}, {"ruleId", RuleCode(rule)}, {"count", count}});
    }
  }
  Json invocation = {{"executionSuccessful", notifications.empty()}};
  if (!notifications.empty()) invocation["toolExecutionNotifications"] = std::move(notifications);
  Json run = {{"tool",
               {{"driver",
                 {{"name", "ggufguard"},
                  {"version", kToolVersion},
                  {"semanticVersion", kToolVersion},
                  {"informationUri", kInformationUri},
                  {"rules", RulesJson(policy)}}}}},
              {"invocations", Json::array({std::move(invocation)})},
              {"artifacts", std::move(artifacts)},
              {"results", std::move(results)},
              {"properties", {{"policy", policy.name}, {"suppressed", std::move(suppressed)}}}};
  Json doc = {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
              {"version", "2.1.0"},
              {"runs", Json::array({std::move(run)})}};
  // Messages escape file bytes already; `replace` guards the labels.
  return doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace ggufguard
