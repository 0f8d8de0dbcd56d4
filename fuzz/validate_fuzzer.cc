// validate_fuzzer: the whole pipeline a gatekeeper runs, under the default
// and the strict policy, then the renderers.
//
// Built twice: `validate_fuzzer` links the structure-aware mutator
// (gguf_mutator.cc, LLVMFuzzerCustomMutator), `validate_fuzzer_plain` does
// not; docs/fuzzing.md compares their coverage.
//
// Checks (fuzz_common.h CheckReport, for both policies):
//   - findings point inside the file, are sorted, carry the policy's
//     severities; an invalid file always says why;
//   - a valid report's tensors are size- and offset-known, aligned, inside the
//     file without overflow, and pairwise disjoint;
// and here:
//   - strict is never more lenient than default;
//   - RenderText (both policies), RenderJson, RenderSarif and RenderInspect
//     (default policy) are printable ASCII; RenderJson and RenderSarif parse
//     back (nlohmann::json) with one entry per finding and the same verdict;
//   - --deep (default policy, with max_deep_findings_per_tensor and
//     max_deep_bytes taken from the input's hash, one job, small chunks):
//     the report keeps every promise above, its findings are the plain
//     report's plus GG6009-GG6011 only, it runs exactly when the header
//     parsed, checks at most max_deep_bytes and never more bytes (checked
//     and unchecked) than the tensors hold, lists at most the cap (plus the
//     "in all" line) per tensor, and its JSON (when it found something)
//     renders and parses back;
//   - the runtime verdicts (runtimes/verdicts.h): unnamed, one per runtime,
//     none required, a reason for each that does not load, no runtime rule
//     finding but GG9212; under --profile all (one input in four), every
//     runtime required, a runtime that does not load making the file
//     invalid, and never more lenient than the default policy;
//   - an adapter (a LoRA adapter or control vector) judged against a fixed
//     base model (--base, adapter/base_model.h): the report keeps every
//     promise above, keeps every finding it had, and adds only GG9153-GG9158,
//     at most the policy's cap each.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fuzz/fuzz_common.h"
#include "ggufguard/adapter/adapter_view.h"
#include "ggufguard/adapter/base_model.h"
#include "ggufguard/rules/known_keys.h"
#include "ggufguard/report/render.h"
#include "ggufguard/report/sarif.h"
#include "nlohmann/json.hpp"

namespace ggufguard::fuzz {
namespace {

void CheckRuntimeVerdicts(const Report& r, bool named) {
  GGUFGUARD_FUZZ_CHECK(r.runtimes.size() == 5, "not one verdict per runtime: " + std::to_string(r.runtimes.size()));
  for (const RuntimeVerdict& v : r.runtimes) {
    const std::string name(ProfileName(v.runtime));
    GGUFGUARD_FUZZ_CHECK(v.required == named, name + ": required " + std::to_string(v.required));
    GGUFGUARD_FUZZ_CHECK((v.outcome == RuntimeOutcome::kLoads) == !v.rule.has_value(), name + ": rule without outcome");
    GGUFGUARD_FUZZ_CHECK(v.outcome == RuntimeOutcome::kLoads || !v.reason.empty(), name + ": no reason");
    CheckPrintable(v.reason, "RuntimeVerdict::reason");
    // A required runtime that would not load the file makes it invalid.
    GGUFGUARD_FUZZ_CHECK(!named || v.outcome == RuntimeOutcome::kLoads || r.has_errors,
                         name + " does not load the file, which is valid under --profile all: " + v.reason);
  }
  if (named) return;
  for (const Finding& f : r.findings) {
    GGUFGUARD_FUZZ_CHECK(!RuntimeOfRule(f.rule) || RuntimeRuleAlwaysReported(f.rule),
                         "a runtime rule's finding with no profile named: " + RuleCode(f.rule));
  }
}

void CheckText(const Report& r) {
  std::vector<FileOutcome> outcomes = {FileOutcome{"fuzz-input", &r, ""}};
  const std::string text = RenderText(outcomes);
  CheckPrintable(text, "RenderText");
  const std::string verdict_line = std::string("fuzz-input: ") + (r.valid() ? "valid" : "invalid") + " (";
  GGUFGUARD_FUZZ_CHECK(text.find(verdict_line) != std::string::npos, "RenderText lacks the verdict line");
}

// Every renderer. Run for one policy only: rendering and parsing JSON costs
// more than validating, and the renderers do not depend on the policy.
// SARIF, which repeats the whole rule table in every document, for one input
// in 32 (by hash, so a crash reproduces): checking it on every input made the
// fuzzer spend half its time there; only its results depend on the input.
void CheckRenderers(const Report& r, const Policy& policy, bool check_sarif) {
  std::vector<FileOutcome> outcomes = {FileOutcome{"fuzz-input", &r, ""}};
  CheckText(r);

  const std::string json_text = RenderJson(outcomes, policy.name);
  CheckPrintable(json_text, "RenderJson");
  nlohmann::json doc = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  GGUFGUARD_FUZZ_CHECK(!doc.is_discarded(), "RenderJson is not JSON:\n" + json_text);
  GGUFGUARD_FUZZ_CHECK(doc.contains("files") && doc["files"].is_array() && doc["files"].size() == 1,
                       "RenderJson: no files array");
  const nlohmann::json& file = doc["files"][0];
  GGUFGUARD_FUZZ_CHECK(file.value("verdict", "") == (r.valid() ? "valid" : "invalid"), "RenderJson: verdict");
  GGUFGUARD_FUZZ_CHECK(file.contains("findings") && file["findings"].is_array() &&
                           file["findings"].size() == r.findings.size(),
                       "RenderJson: findings count");
  for (size_t i = 0; i < r.findings.size(); ++i) {
    const nlohmann::json& f = file["findings"][i];
    GGUFGUARD_FUZZ_CHECK(f.value("rule", "") == RuleCode(r.findings[i].rule) &&
                             f.value("offset", uint64_t{0}) == r.findings[i].offset &&
                             f.value("message", "") == r.findings[i].message,
                         "RenderJson: finding " + std::to_string(i) + " differs");
  }

  const std::string inspect = RenderInspect("fuzz-input", r);
  CheckPrintable(inspect, "RenderInspect");

  if (!check_sarif) return;
  const std::string sarif_text = RenderSarif(outcomes, policy);
  CheckPrintable(sarif_text, "RenderSarif");
  nlohmann::json sarif = nlohmann::json::parse(sarif_text, nullptr, /*allow_exceptions=*/false);
  GGUFGUARD_FUZZ_CHECK(!sarif.is_discarded(), "RenderSarif is not JSON");
  const nlohmann::json* results = nullptr;
  if (sarif.contains("runs") && sarif["runs"].is_array() && sarif["runs"].size() == 1 &&
      sarif["runs"][0].contains("results")) {
    results = &sarif["runs"][0]["results"];
  }
  GGUFGUARD_FUZZ_CHECK(results != nullptr && results->is_array() && results->size() == r.findings.size(),
                       "RenderSarif: one result per finding");
}

bool IsDeepRule(RuleId id) {
  return id == RuleId::kTensorDataNonFinite || id == RuleId::kDeepCheckLimit || id == RuleId::kTensorDataUncheckable;
}

// --deep on the same bytes, under a policy whose deep limits come from the
// input's hash (the cap 0..3 or the default; no byte budget, or a small one).
void CheckDeep(absl::Span<const uint8_t> bytes, const Report& plain, uint64_t hash) {
  Policy policy = DefaultPolicy();
  if (hash & 4) policy.limits.max_deep_findings_per_tensor = static_cast<uint32_t>((hash >> 3) % 4);
  if (hash & 32) policy.limits.max_deep_bytes = (hash >> 6) % 4096;
  const DeepOptions options{.enabled = true, .jobs = 1, .chunk_bytes = 512 + (hash >> 20) % 2048};
  const Report r = ValidateBytes(bytes, policy, options);
  CheckReport(r, bytes, bytes, policy);

  const DeepSummary& d = r.deep;
  GGUFGUARD_FUZZ_CHECK(d.ran == r.header_parsed, "--deep ran " + std::to_string(d.ran) + " with header_parsed " +
                                                     std::to_string(r.header_parsed));
  // Deep only adds its own findings: everything else is the plain report.
  std::vector<Finding> others;
  size_t deep_findings = 0, non_finite = 0;
  for (const Finding& f : r.findings) {
    if (IsDeepRule(f.rule)) {
      ++deep_findings;
      non_finite += f.rule == RuleId::kTensorDataNonFinite;
    } else {
      others.push_back(f);
    }
  }
  bool same = others.size() == plain.findings.size();
  for (size_t i = 0; same && i < others.size(); ++i) {
    const Finding& x = others[i];
    const Finding& y = plain.findings[i];
    same = x.rule == y.rule && x.severity == y.severity && x.offset == y.offset && x.message == y.message;
  }
  GGUFGUARD_FUZZ_CHECK(same, "--deep changed the other findings\n  plain:" + FindingsString(plain.findings) +
                                 "\n  deep:" + FindingsString(r.findings));
  std::map<RuleId, uint64_t> suppressed = r.suppressed;
  for (auto it = suppressed.begin(); it != suppressed.end();) it = IsDeepRule(it->first) ? suppressed.erase(it) : ++it;
  GGUFGUARD_FUZZ_CHECK(suppressed == plain.suppressed, "--deep changed the other rules' suppressed counts");
  GGUFGUARD_FUZZ_CHECK(plain.valid() || !r.valid(), "--deep accepts what the plain check rejects");
  if (!d.ran) {
    GGUFGUARD_FUZZ_CHECK(deep_findings == 0 && d.checked_bytes == 0 && d.tensors.empty(),
                         "deep findings without a deep run:" + FindingsString(r.findings));
    return;
  }

  // Bytes: never more than the tensors hold, never more checked than allowed.
  uint64_t tensor_bytes = 0;
  bool saturated = false;  // the sizes add up past 2^64: nothing to compare
  for (const TensorInfo& t : r.header.tensors) {
    if (t.size_known && __builtin_add_overflow(tensor_bytes, t.byte_size, &tensor_bytes)) saturated = true;
  }
  GGUFGUARD_FUZZ_CHECK(d.checked_bytes <= policy.limits.max_deep_bytes,
                       "checked " + std::to_string(d.checked_bytes) + " bytes past max_deep_bytes " +
                           std::to_string(policy.limits.max_deep_bytes));
  uint64_t seen = 0;
  const bool seen_overflows = __builtin_add_overflow(d.checked_bytes, d.unchecked_bytes, &seen);
  GGUFGUARD_FUZZ_CHECK(saturated || (!seen_overflows && seen <= tensor_bytes),
                       "checked " + std::to_string(d.checked_bytes) + " + unchecked " +
                           std::to_string(d.unchecked_bytes) + " bytes exceed the tensors' " +
                           std::to_string(tensor_bytes));
  GGUFGUARD_FUZZ_CHECK(d.checked_tensors <= r.header.tensors.size(), "more tensors checked than there are");
  // The per-tensor list: bounded, indices valid, counts within the total.
  GGUFGUARD_FUZZ_CHECK(d.tensors.size() <= policy.limits.max_list_entries, "deep tensor list over max_list_entries");
  uint64_t listed_bad = 0, listed_bytes = 0;
  for (const DeepTensorResult& t : d.tensors) {
    GGUFGUARD_FUZZ_CHECK(t.tensor < r.header.tensors.size(), "deep result for tensor " + std::to_string(t.tensor));
    listed_bad += t.bad_values;
    listed_bytes += t.checked_bytes;
  }
  GGUFGUARD_FUZZ_CHECK(listed_bad <= d.bad_values && listed_bytes <= d.checked_bytes,
                       "per-tensor deep results exceed the totals");
  // GG6009: nothing when nothing was bad; otherwise at most the cap plus the
  // "in all" line per tensor, and never more lines than bad values plus one
  // per tensor.
  if (d.bad_values == 0) {
    GGUFGUARD_FUZZ_CHECK(non_finite == 0 && !r.suppressed.count(RuleId::kTensorDataNonFinite),
                         "GG6009 without a bad value:" + FindingsString(r.findings));
  } else {
    const uint64_t per_tensor = uint64_t{policy.limits.max_deep_findings_per_tensor} + 1;
    GGUFGUARD_FUZZ_CHECK(non_finite <= d.checked_tensors * per_tensor && non_finite <= d.bad_values + d.checked_tensors,
                         std::to_string(non_finite) + " GG6009 findings for " + std::to_string(d.bad_values) +
                             " bad values in " + std::to_string(d.checked_tensors) + " tensors");
    GGUFGUARD_FUZZ_CHECK(non_finite > 0 || r.suppressed.count(RuleId::kTensorDataNonFinite),
                         "bad values but no GG6009");
  }
  if (deep_findings > 0) CheckRenderers(r, policy, false);
}

// The minimal llama of corpus/adapters/base-minimal-llama.gguf (32 wide,
// 3 layers), as --base would read it, with one 3-D expert tensor so that
// expert counts are compared too.
const BaseModel& FuzzBase() {
  static const BaseModel* base = [] {
    auto* b = new BaseModel;
    b->label = "fuzz-base";
    b->architecture = "llama";
    b->n_embd = 32;
    b->n_layer = 3;
    b->tensors["token_embd.weight"] = {32, 32, 1, 1};
    b->tensors["output.weight"] = {32, 32, 1, 1};
    for (int il = 0; il < 3; ++il) {
      const std::string blk = "blk." + std::to_string(il) + ".";
      for (const char* proj : {"attn_q", "attn_k", "attn_v", "attn_output"}) {
        b->tensors[blk + proj + ".weight"] = {32, 32, 1, 1};
      }
      b->tensors[blk + "ffn_up.weight"] = {32, 64, 1, 1};
      b->tensors[blk + "ffn_down.weight"] = {64, 32, 1, 1};
      b->tensors[blk + "ffn_up_exps.weight"] = {32, 64, 8, 1};
    }
    return b;
  }();
  return *base;
}

bool IsBaseRule(RuleId id) {
  const auto n = static_cast<uint16_t>(id);
  return n >= 9153 && n <= 9158;
}

void CheckAgainstBase(absl::Span<const uint8_t> bytes, const Report& plain, const Policy& policy) {
  if (!plain.header_parsed) return;
  if (AdapterKindOf(KeyIndex(plain.header)) == AdapterKind::kNone) return;  // --base adds nothing
  MemorySource source(bytes);
  absl::StatusOr<ValidatedFile> file = ValidateSource(source, policy);
  GGUFGUARD_FUZZ_CHECK(file.ok(), "ValidateSource failed on bytes in memory");
  JudgeAgainstBase(*file, FuzzBase(), policy);
  const Report& r = file->report();
  CheckReport(r, bytes, file->prefix(), policy);
  std::vector<Finding> others;
  std::map<RuleId, uint64_t> listed;
  for (const Finding& f : r.findings) {
    if (IsBaseRule(f.rule)) {
      ++listed[f.rule];
    } else {
      others.push_back(f);
    }
  }
  GGUFGUARD_FUZZ_CHECK(others.size() == plain.findings.size(), "--base changed the file's own findings");
  for (const auto& [rule, count] : listed) {
    GGUFGUARD_FUZZ_CHECK(count <= policy.limits.max_findings_per_rule, RuleCode(rule) + " listed past the cap");
  }
  GGUFGUARD_FUZZ_CHECK(plain.valid() || !r.valid(), "--base accepts what the file alone fails");
}

}  // namespace
}  // namespace ggufguard::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ggufguard;
  using namespace ggufguard::fuzz;
  static const Policy default_policy = DefaultPolicy();
  static const Policy strict_policy = StrictPolicy();
  const absl::Span<const uint8_t> bytes(data, size);

  const Report lenient = ValidateBytes(bytes, default_policy);
  CheckReport(lenient, bytes, bytes, default_policy);
  CheckRenderers(lenient, default_policy, InputHash(data, size) % 32 == 0);

  const Report strict = ValidateBytes(bytes, strict_policy);
  CheckReport(strict, bytes, bytes, strict_policy);
  CheckText(strict);

  GGUFGUARD_FUZZ_CHECK(lenient.header_parsed == strict.header_parsed, "policies parse differently");
  GGUFGUARD_FUZZ_CHECK(lenient.valid() || !strict.valid(),
                       "strict accepts what default rejects:" + FindingsString(lenient.findings));

  CheckRuntimeVerdicts(lenient, /*named=*/false);
  if (InputHash(data, size) % 4 == 1) {
    static const Policy all = [] {
      Policy p = DefaultPolicy();
      std::string bad;
      NameProfiles({"all"}, &p, &bad);
      return p;
    }();
    const Report every = ValidateBytes(bytes, all);
    CheckReport(every, bytes, bytes, all);
    CheckRuntimeVerdicts(every, /*named=*/true);
    GGUFGUARD_FUZZ_CHECK(lenient.valid() || !every.valid(),
                         "--profile all accepts what default rejects:" + FindingsString(lenient.findings));
  }

  CheckDeep(bytes, lenient, InputHash(data, size));
  CheckAgainstBase(bytes, lenient, default_policy);
  return 0;
}
