#include "ggufguard/report/cyclonedx.h"

#include <map>
#include <optional>

#include "absl/strings/match.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/text.h"
#include "ggufguard/format/ggml_type.h"
#include "ggufguard/rules/template_rules.h"
#include "nlohmann/json.hpp"

namespace ggufguard {
namespace {

using Json = nlohmann::ordered_json;

constexpr size_t kMaxBomString = 1024;

// The general.* keys, first of each name, indexed once per file: the BOM
// asks for a few per base model, and a header may hold a million keys, so a
// walk of all of them per question would multiply.
using GeneralKeys = absl::flat_hash_map<std::string_view, const KeyValue*>;

GeneralKeys IndexGeneralKeys(const GgufHeader& h) {
  GeneralKeys general;
  for (const KeyValue& kv : h.kvs) {
    if (absl::StartsWith(Sv(kv.key()), "general.")) general.try_emplace(kv.key(), &kv);
  }
  return general;
}

std::optional<std::string> StringValue(const GeneralKeys& general, std::string_view key) {
  auto it = general.find(key);
  if (it == general.end() || it->second->type() != ValueType::kString) return std::nullopt;
  return EscapeForDisplay(it->second->value().AsString(), kMaxBomString);
}

std::optional<uint64_t> UnsignedValue(const GeneralKeys& general, std::string_view key) {
  auto it = general.find(key);
  if (it == general.end()) return std::nullopt;
  return it->second->value().AsUnsigned();
}

std::string_view CdxSeverity(Severity s) {
  switch (s) {
    case Severity::kError: return "high";
    case Severity::kWarning: return "medium";
    case Severity::kInfo: return "info";
  }
  return "high";
}

std::string BaseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

class CycloneDxWriter final : public ReportWriter {
 public:
  explicit CycloneDxWriter(std::ostream& out) : out_(out) {}

  void Add(const FileOutcome& o) override {
    if (o.report == nullptr) return;  // nothing was read: no component to describe
    const Report& r = *o.report;
    const std::string ref = absl::StrCat("model-", ++models_);
    const GgufHeader& h = r.header;
    const GeneralKeys general = IndexGeneralKeys(h);
    Json props = Json::array();
    auto prop = [&](std::string name, std::string value) {
      props.push_back({{"name", std::move(name)}, {"value", std::move(value)}});
    };
    prop("ggufguard:file", EscapeForDisplay(o.label, kMaxPathBytes));
    prop("ggufguard:size", absl::StrCat(r.file_size));
    prop("ggufguard:verdict", VerdictName(r.verdict()));
    prop("gguf:version", absl::StrCat(h.version));
    Json c = {{"type", "machine-learning-model"}, {"bom-ref", ref}};
    c["name"] = StringValue(general, "general.name").value_or(EscapeForDisplay(BaseName(o.label), kMaxBomString));
    if (std::optional<std::string> v = StringValue(general, "general.version")) c["version"] = *v;
    if (std::optional<std::string> org = StringValue(general, "general.organization")) c["manufacturer"] = {{"name", *org}};
    if (!r.sha256.empty()) c["hashes"] = Json::array({{{"alg", "SHA-256"}, {"content", r.sha256}}});
    if (std::optional<std::string> lic = StringValue(general, "general.license")) {
      c["licenses"] = Json::array({{{"license", {{"name", *lic}}}}});
    }
    for (const char* key : {"general.url", "general.repo_url", "general.source.url", "general.source.repo_url",
                            "general.source.huggingface.repository", "general.quantized_by"}) {
      if (std::optional<std::string> v = StringValue(general, key)) prop(absl::StrCat("gguf:", key), *v);
    }
    if (std::optional<uint64_t> ft = UnsignedValue(general, "general.file_type")) prop("gguf:general.file_type", absl::StrCat(*ft));
    if (std::optional<uint64_t> qv = UnsignedValue(general, "general.quantization_version")) {
      prop("gguf:general.quantization_version", absl::StrCat(*qv));
    }
    // Base models (general.base_model.N.*), bounded like every list.
    Json ancestors = Json::array();
    for (const KeyValue& kv : h.kvs) {
      if (ancestors.size() >= r.max_list_entries) break;
      const std::string_view key = kv.key();
      if (!absl::StartsWith(Sv(key), "general.base_model.") || !absl::EndsWith(Sv(key), ".name") ||
          kv.type() != ValueType::kString) {
        continue;
      }
      const std::string prefix(key.substr(0, key.size() - 4));  // "general.base_model.N."
      Json a = {{"type", "machine-learning-model"}, {"name", EscapeForDisplay(kv.value().AsString(), kMaxBomString)}};
      if (std::optional<std::string> org = StringValue(general, prefix + "organization")) a["manufacturer"] = {{"name", *org}};
      Json aprops = Json::array();
      for (const char* field : {"repo_url", "url", "version"}) {
        if (std::optional<std::string> v = StringValue(general, prefix + field)) {
          aprops.push_back({{"name", absl::StrCat("gguf:", field)}, {"value", *v}});
        }
      }
      if (!aprops.empty()) a["properties"] = std::move(aprops);
      ancestors.push_back(std::move(a));
    }
    if (!ancestors.empty()) c["pedigree"] = {{"ancestors", std::move(ancestors)}};
    // Tensor types: how many tensors of each, the quantization as stored.
    std::map<std::string, uint64_t> types;
    for (const TensorInfo& t : h.tensors) {
      const GgmlTypeInfo* type = FindGgmlType(t.ggml_type);
      ++types[type ? std::string(type->name) : absl::StrCat("type#", t.ggml_type)];
    }
    for (const auto& [name, count] : types) prop(absl::StrCat("gguf:tensor_type:", name), absl::StrCat(count));
    // From the rules' one analysis under the policy (Report::templates).
    for (const TemplateDigest& d : r.templates.listed) {
      prop(absl::StrCat("gguf:chat_template_sha256:", EscapeForDisplay(d.key, 256)), d.sha256);
    }
    Json card = {{"bom-ref", ref + "-card"}};
    if (std::optional<std::string> arch = StringValue(general, "general.architecture")) {
      card["modelParameters"] = {{"modelArchitecture", *arch}};
    }
    c["modelCard"] = std::move(card);
    // The sampler defaults, as llama.cpp uses them and as written.
    for (const SamplingSetting& s : r.sampling.listed) {
      prop(absl::StrCat("ggufguard:sampling:", Sv(SamplingName(s))), absl::StrCat(s.llama_cpp, " (written: ", s.written, ")"));
    }
    // What each judged runtime would do with the model (runtimes/verdicts.h).
    for (const RuntimeVerdict& v : r.runtimes) {
      prop(absl::StrCat("ggufguard:runtime:", Sv(ProfileName(v.runtime))),
           RuntimeVerdictText(v, !r.not_checked.empty()));
    }
    c["properties"] = std::move(props);
    components_.push_back(std::move(c));

    auto vuln = [&](const Finding& f, const WaivedFinding* w) {
      const RuleInfo* info = FindRule(f.rule);
      Json v = {{"bom-ref", absl::StrCat(ref, "-finding-", vulnerabilities_.size() + 1)},
                {"id", RuleCode(f.rule)},
                {"source", {{"name", "ggufguard"}}},
                {"ratings", Json::array({{{"severity", CdxSeverity(f.severity)}, {"method", "other"}}})},
                {"description", absl::StrCat(info ? Sv(info->name) : Sv("unknown"), ": ", f.message)},
                {"affects", Json::array({{{"ref", ref}}})},
                {"properties", Json::array({{{"name", "ggufguard:offset"}, {"value", absl::StrCat(f.offset)}}})}};
      if (w != nullptr) v["analysis"] = {{"response", {"will_not_fix"}}, {"detail", absl::StrCat(w->by, ": ", w->reason)}};
      vulnerabilities_.push_back(std::move(v));
    };
    for (const Finding& f : r.findings) vuln(f, nullptr);
    for (const WaivedFinding& w : r.waived) vuln(w.finding, &w);
  }

  // A split set's own findings (its shards came through Add()), each
  // naming the shard it is about; the set's verdict as a property of the BOM.
  void AddSet(const SetReport& set) override {
    for (const SetFinding& f : set.findings) {
      const RuleInfo* info = FindRule(f.finding.rule);
      vulnerabilities_.push_back(
          {{"bom-ref", absl::StrCat("set-finding-", vulnerabilities_.size() + 1)},
           {"id", RuleCode(f.finding.rule)},
           {"source", {{"name", "ggufguard"}}},
           {"ratings", Json::array({{{"severity", CdxSeverity(f.finding.severity)}, {"method", "other"}}})},
           {"description", absl::StrCat(info ? Sv(info->name) : Sv("unknown"), ": ", f.finding.message)},
           {"properties", Json::array({{{"name", "ggufguard:location"}, {"value", EscapeForDisplay(f.location, 4096)}},
                                       {{"name", "ggufguard:offset"}, {"value", absl::StrCat(f.finding.offset)}}})}});
    }
    set_properties_.push_back({{"name", absl::StrCat("ggufguard:split_set:", EscapeForDisplay(set.label, 4096))},
                               {"value", VerdictName(set.verdict())}});
  }

  void Finish() override {
    Json bom = {{"bomFormat", "CycloneDX"},
                {"specVersion", "1.6"},
                {"version", 1},
                {"metadata",
                 {{"tools",
                   {{"components",
                     Json::array({{{"type", "application"}, {"name", "ggufguard"}, {"version", kToolVersion}}})}}},
                  {"properties", std::move(set_properties_)}}},
                {"components", std::move(components_)},
                {"vulnerabilities", std::move(vulnerabilities_)}};
    out_ << bom.dump(2, ' ', false, Json::error_handler_t::replace) << "\n" << std::flush;
  }

 private:
  std::ostream& out_;
  uint64_t models_ = 0;
  Json components_ = Json::array();
  Json vulnerabilities_ = Json::array();
  Json set_properties_ = Json::array();
};

}  // namespace

std::unique_ptr<ReportWriter> MakeCycloneDxWriter(std::ostream& out) { return std::make_unique<CycloneDxWriter>(out); }

}  // namespace ggufguard
