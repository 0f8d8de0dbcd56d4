// Renderers: text lines for people and CI logs, one JSON document per run
// for programs (schema in docs/report.schema.json), and the inspect view.
// All output is deterministic and escapes every byte that came from the file.
#ifndef GGUFGUARD_REPORT_RENDER_H_
#define GGUFGUARD_REPORT_RENDER_H_

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "ggufguard/base/text.h"  // kMaxPathBytes
#include "ggufguard/base/version.h"
#include "ggufguard/remote/transfer_stats.h"
#include "ggufguard/split/split_set.h"
#include "ggufguard/validate.h"

namespace ggufguard {

inline constexpr int kReportSchemaVersion = 1;

// What one input gave: a report, or the reason it could not be read.
struct FileOutcome {
  std::string label;     // path as given, or "-" for standard input
  const Report* report;  // nullptr when io_error is set
  std::string io_error;
  // A remote input's requests and bytes received (with or without a report).
  std::optional<TransferStats> transfer = std::nullopt;
};

// A path that begins a line of text output: EscapeForDisplay, and ':' as
// \x3a too, so that a line's first ':' always ends its path and a name
// such as "a.gguf: valid (0 errors...)" cannot pass for a verdict.
std::string EscapeLabelForText(std::string_view path);

// Whether a report's runtime verdicts (Report::runtimes) are worth a line of
// their own in text and Markdown: a runtime the file must load in, or one
// that would not load it. JSON, SARIF and CycloneDX always carry them.
bool RuntimesWorthShowing(const Report& report);
// "vllm refuses (GG9211 vllm-tensor-type at byte 4711): REASON", "ollama
// loads", "candle inconclusive": one runtime's verdict in words, printable
// ASCII.
std::string RuntimeVerdictText(const RuntimeVerdict& verdict, bool partial);
// "temp=0.7 top_k=ignored": the file's general.sampling.* settings as
// llama.cpp uses them (Report::sampling), printable ASCII; empty when the
// file has none. Text, inspect and Markdown print it; JSON, SARIF and
// CycloneDX carry each setting.
std::string SamplingLine(const Report& report);
// A setting's name without "general.sampling." ("temp").
std::string_view SamplingName(const SamplingSetting& setting);

// `FILE:OFFSET: severity GGnnnn rule-name: message` per finding, then a
// verdict line per file. The path and every byte from the file are escaped
// (EscapeForDisplay): no line of the output can be forged by either.
std::string RenderText(const std::vector<FileOutcome>& outcomes);
std::string RenderTextFile(const FileOutcome& outcome);
std::string RenderJson(const std::vector<FileOutcome>& outcomes, std::string_view policy_name);
// One line of JSON (docs/scan.schema.json): the file's entry of the JSON
// report with "type": "file" and the file's size.
std::string RenderJsonLine(const FileOutcome& outcome);

// Writes a report one input at a time, so that a run over many files keeps
// nothing of a file once its part is written (flushed at once).
class ReportWriter {
 public:
  virtual ~ReportWriter() = default;
  virtual void Add(const FileOutcome& outcome) = 0;
  // A split set's verdict and set findings, after its shards were Add()ed.
  virtual void AddSet(const SetReport& set) = 0;
  virtual void Finish() = 0;  // after the last input
};
std::unique_ptr<ReportWriter> MakeTextWriter(std::ostream& out);
// RenderJson's document, written as it goes.
std::unique_ptr<ReportWriter> MakeJsonWriter(std::ostream& out, std::string_view policy_name);
// A split set in text: each set finding as `SHARD:OFFSET: severity GGnnnn
// name: message`, then the set's verdict line, `PREFIX-*-of-NNNNN.gguf:
// verdict (...)`, with what was not checked.
std::string RenderSetText(const SetReport& set);
// One line of `scan` JSON (docs/scan.schema.json): the set's entry of the
// JSON report's "sets" with "type": "set".
std::string RenderSetJsonLine(const SetReport& set);

// A gguf-dump-like listing of the header, safe to print on a terminal.
std::string RenderInspect(std::string_view label, const Report& report);

}  // namespace ggufguard

#endif  // GGUFGUARD_REPORT_RENDER_H_
