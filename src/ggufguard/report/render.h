// Renderers: text lines for people and CI logs, one JSON document per run
// for programs (schema in docs/report.schema.json), and the inspect view.
// All output is deterministic and escapes every byte that came from the file.
#ifndef GGUFGUARD_REPORT_RENDER_H_
#define GGUFGUARD_REPORT_RENDER_H_

#include <string>
#include <string_view>
#include <vector>

#include "ggufguard/validate.h"

namespace ggufguard {

inline constexpr int kReportSchemaVersion = 1;
inline constexpr std::string_view kToolVersion = "0.1.0";

// What one input gave: a report, or the reason it could not be read.
struct FileOutcome {
  std::string label;     // path as given, or "-" for standard input
  const Report* report;  // nullptr when io_error is set
  std::string io_error;
};

// `FILE:OFFSET: severity GGnnnn rule-name: message` per finding, then a
// verdict line per file.
std::string RenderText(const std::vector<FileOutcome>& outcomes);
std::string RenderJson(const std::vector<FileOutcome>& outcomes, std::string_view policy_name);
// A gguf-dump-like listing of the header, safe to print on a terminal.
std::string RenderInspect(std::string_view label, const Report& report);

}  // namespace ggufguard

#endif  // GGUFGUARD_REPORT_RENDER_H_
