// The JSON pieces that more than one report carries in the same shape: the
// JSON report's `runtimes` and `sampling` (docs/report.schema.json), which
// SARIF repeats in each artifact's properties. One builder each, so the two
// formats cannot drift apart.
#ifndef GGUFGUARD_REPORT_REPORT_JSON_H_
#define GGUFGUARD_REPORT_REPORT_JSON_H_

#include "ggufguard/validate.h"
#include "nlohmann/json.hpp"

namespace ggufguard {

// Each judged runtime's verdict (runtimes/verdicts.h): runtime, verdict,
// required, rule, offset, reason, judged_at.
nlohmann::ordered_json RuntimesJson(const Report& report);
// The general.sampling.* settings and what llama.cpp uses of each (GG9163
// judges them): key, offset, written, llama_cpp.
nlohmann::ordered_json SamplingJson(const Report& report);

}  // namespace ggufguard

#endif  // GGUFGUARD_REPORT_REPORT_JSON_H_
