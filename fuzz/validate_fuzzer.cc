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
//     back (nlohmann::json) with one entry per finding and the same verdict.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/fuzz_common.h"
#include "ggufguard/report/render.h"
#include "ggufguard/report/sarif.h"
#include "nlohmann/json.hpp"

namespace ggufguard::fuzz {
namespace {

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
  return 0;
}
