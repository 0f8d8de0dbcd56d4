// template_fuzzer: the chat-template analyser alone (template/scan.h).
//
// Input: template bytes. Each input is analysed twice: with the default
// options, and with small nesting limits so that short inputs reach the
// deep-nesting and flattening paths. Checks, beyond no crash, no hang (the
// 1 s timeout of template_fuzzer.options) and bounded memory (its malloc
// limit): issues sorted by offset, each inside the template, with a line and
// column, a printable detail of bounded length, at most max_issues of them;
// at most 32 roots and folded names; the same result twice (no hidden state).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "ggufguard/template/scan.h"

namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "ggufguard invariant broken: %s\n", what);
    std::abort();
  }
}

void CheckScan(std::string_view tmpl, const ggufguard::TemplateScanOptions& opts) {
  const ggufguard::TemplateScan scan = ggufguard::AnalyseChatTemplate(tmpl, opts);
  Check(scan.issues.size() <= opts.max_issues, "at most max_issues issues");
  Check(scan.roots.size() <= 32 && scan.folded_names.size() <= 32, "at most 32 roots and folded names");
  uint64_t last = 0;
  for (const ggufguard::TemplateIssue& issue : scan.issues) {
    Check(issue.offset >= last, "issues sorted by offset");
    last = issue.offset;
    if (issue.kind != ggufguard::TemplateIssueKind::kTooLarge) {
      Check(issue.offset < tmpl.size() || tmpl.empty(), "issue inside the template");
      Check(issue.line >= 1 && issue.column >= 1, "issue has a line and a column");
    }
    Check(issue.detail.size() <= 160, "detail bounded");
    for (unsigned char c : issue.detail) Check(c >= 0x20 && c < 0x7f, "detail printable");
    Check(std::string_view(ggufguard::TemplateIssueKindName(issue.kind)) != "unknown", "kind has a name");
  }
  const ggufguard::TemplateScan again = ggufguard::AnalyseChatTemplate(tmpl, opts);
  Check(again.issues.size() == scan.issues.size() && again.roots == scan.roots &&
            again.folded_names == scan.folded_names,
        "deterministic");
  for (size_t i = 0; i < scan.issues.size(); ++i) {
    Check(again.issues[i].offset == scan.issues[i].offset && again.issues[i].kind == scan.issues[i].kind &&
              again.issues[i].detail == scan.issues[i].detail,
          "deterministic issues");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view tmpl(reinterpret_cast<const char*>(data), size);
  CheckScan(tmpl, {});
  ggufguard::TemplateScanOptions small;
  small.max_nesting = 3;
  small.crash_nesting = 8;
  small.max_issues = 5;
  small.max_iterations = 100;
  small.max_output_bytes = 100;
  CheckScan(tmpl, small);
  return 0;
}
