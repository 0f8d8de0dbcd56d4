// The JSON of a split set's verdict, shared by the JSON report, scan's JSON
// lines and the SARIF run properties (report/render.cc, report/sarif.cc).
#ifndef GGUFGUARD_REPORT_RENDER_SET_H_
#define GGUFGUARD_REPORT_RENDER_SET_H_

#include "ggufguard/split/split_set.h"
#include "nlohmann/json.hpp"

namespace ggufguard {

// {"set", "verdict", "shard_count", "shards": [{"file", "verdict"}],
//  "not_checked", "findings": [{"file", "rule", ...}], "suppressed", "summary"};
// every string escaped (docs/report.schema.json, $defs/set).
nlohmann::ordered_json SetJson(const SetReport& set);

}  // namespace ggufguard

#endif  // GGUFGUARD_REPORT_RENDER_SET_H_
