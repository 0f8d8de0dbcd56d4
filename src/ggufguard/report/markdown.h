// --format markdown: a summary for a pull-request comment: the counts, then
// the findings grouped by file. Every byte from a file or a path is shown in
// a code span (fenced by more backticks than it holds), where Markdown
// makes no link, no HTML and no emphasis: a crafted name or key cannot
// inject any.
#ifndef GGUFGUARD_REPORT_MARKDOWN_H_
#define GGUFGUARD_REPORT_MARKDOWN_H_

#include <memory>
#include <ostream>
#include <string>
#include <string_view>

#include "ggufguard/report/render.h"

namespace ggufguard {

// `text` (escaped for display first) as an inline code span.
std::string MarkdownCode(std::string_view text);
// Text that is escaped already (a finding's message, a waiver's reason, a
// triage note: printable ASCII in which \xNN stands for a byte) as a code
// span, without escaping it again: a backslash stays one, so a quote in a
// key reads \x27, not \x5cx27. A byte outside printable ASCII (a bug
// upstream) is still escaped.
std::string MarkdownCodeOfEscaped(std::string_view text);

// The counts come first, so the writer keeps each file with something to
// say (findings, waived, an I/O error) until Finish; valid files are only
// counted. Each file lists at most kMarkdownFindingsPerFile findings.
inline constexpr size_t kMarkdownFindingsPerFile = 50;
std::unique_ptr<ReportWriter> MakeMarkdownWriter(std::ostream& out);

}  // namespace ggufguard

#endif  // GGUFGUARD_REPORT_MARKDOWN_H_
