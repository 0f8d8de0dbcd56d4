#include "ggufguard/report/markdown.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/text.h"

namespace ggufguard {

namespace {

// Printable ASCII `s` in a code span fenced by more backticks than it holds.
std::string Fenced(const std::string& s) {
  size_t longest = 0, run = 0;
  for (char c : s) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(longest + 1, '`');
  // A space inside each fence keeps a leading or trailing backtick apart
  // from it; CommonMark strips one space on each side.
  return absl::StrCat(fence, " ", s, " ", fence);
}

}  // namespace

std::string MarkdownCode(std::string_view text) {
  // EscapeForDisplay leaves printable ASCII only: no newline can end the span.
  return Fenced(EscapeForDisplay(text, kMaxPathBytes));
}

std::string MarkdownCodeOfEscaped(std::string_view text) {
  std::string s;
  s.reserve(text.size());
  for (char ch : text.substr(0, kMaxPathBytes)) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f) {
      s.push_back(ch);
    } else {
      absl::StrAppendFormat(&s, "\\x%02x", c);
    }
  }
  return Fenced(s);
}

namespace {

class MarkdownWriter final : public ReportWriter {
 public:
  explicit MarkdownWriter(std::ostream& out) : out_(out) {}

  void Add(const FileOutcome& o) override {
    ++files_;
    std::string section;
    if (o.report == nullptr) {
      ++io_errors_;
      sections_.push_back(absl::StrCat("### ", MarkdownCode(o.label), ": I/O error\n\n", MarkdownCode(o.io_error),
                                       "\n"));
      return;
    }
    const Report& r = *o.report;
    const Report::Verdict verdict = r.verdict();
    ++(verdict == Report::Verdict::kValid ? valid_ : verdict == Report::Verdict::kInvalid ? invalid_ : inconclusive_);
    waived_ += r.waived.size();
    if (r.findings.empty() && r.waived.empty() && r.triage_notes.empty() && r.not_checked.empty() &&
        !RuntimesWorthShowing(r)) {
      return;
    }
    absl::StrAppend(&section, "### ", MarkdownCode(o.label), ": ",
                    verdict == Report::Verdict::kValid     ? "valid"
                    : verdict == Report::Verdict::kInvalid ? "**invalid**"
                                                           : "**inconclusive**",
                    "\n\n");
    for (const std::string& item : r.not_checked) absl::StrAppend(&section, "- not checked: ", MarkdownCode(item), "\n");
    size_t listed = 0;
    for (const Finding& f : r.findings) {
      Count(f.severity);
      if (++listed <= kMarkdownFindingsPerFile) absl::StrAppend(&section, "- ", Line(f), "\n");
    }
    if (listed > kMarkdownFindingsPerFile) {
      absl::StrAppend(&section, "- ... and ", listed - kMarkdownFindingsPerFile, " more (see the JSON or SARIF report)\n");
    }
    for (const auto& [rule, count] : r.suppressed) {
      absl::StrAppend(&section, "- ", count, " more ", RuleCode(rule), " findings not listed\n");
    }
    for (const WaivedFinding& w : r.waived) {
      absl::StrAppend(&section, "- waived (", w.by, " ", MarkdownCodeOfEscaped(w.reason), "): ", Line(w.finding), "\n");
    }
    for (const std::string& note : r.triage_notes) {
      absl::StrAppend(&section, "- note: ", MarkdownCodeOfEscaped(note), "\n");
    }
    // The sampler defaults every reply sampled with them uses (GG9163 judges them).
    if (!r.sampling.listed.empty()) {
      absl::StrAppend(&section, "- sampling (as llama.cpp reads the file's defaults): ", MarkdownCode(SamplingLine(r)), "\n");
    }
    // What each runtime would do (docs/runtimes.md), after the findings.
    if (RuntimesWorthShowing(r)) {
      for (const RuntimeVerdict& v : r.runtimes) {
        absl::StrAppend(&section, "- runtime", v.required ? " (required)" : "", ": ",
                        MarkdownCode(RuntimeVerdictText(v, !r.not_checked.empty())), "\n");
      }
    }
    sections_.push_back(std::move(section));
  }

  // A split set: its verdict, the set rules' findings and what it could
  // not check; its shards came through Add().
  void AddSet(const SetReport& set) override {
    const Report::Verdict verdict = set.verdict();
    if (verdict == Report::Verdict::kInvalid) ++invalid_sets_;
    if (verdict == Report::Verdict::kInconclusive) ++inconclusive_sets_;
    std::string section = absl::StrCat("### split set ", MarkdownCode(set.label), ": ",
                                       verdict == Report::Verdict::kValid     ? "valid"
                                       : verdict == Report::Verdict::kInvalid ? "**invalid**"
                                                                              : "**inconclusive**",
                                       "\n\n");
    size_t listed = 0;
    for (const SetFinding& f : set.findings) {
      Count(f.finding.severity);
      if (++listed <= kMarkdownFindingsPerFile) {
        absl::StrAppend(&section, "- ", MarkdownCode(f.location), ": ", Line(f.finding), "\n");
      }
    }
    for (const std::string& item : set.not_checked) absl::StrAppend(&section, "- not checked: ", MarkdownCode(item), "\n");
    sections_.push_back(std::move(section));
  }

  void Finish() override {
    out_ << "## ggufguard: "
         << (invalid_ + io_errors_ + invalid_sets_ > 0       ? "**findings to fix**"
             : inconclusive_ + inconclusive_sets_ > 0 ? "**could not verify every file**"
                                                                                   : "all files valid")
         << "\n\n"
         << "| files | valid | invalid | inconclusive | I/O errors | errors | warnings | notes | waived |\n"
         << "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
         << "| " << files_ << " | " << valid_ << " | " << invalid_ << " | " << inconclusive_ << " | " << io_errors_
         << " | " << errors_
         << " | " << warnings_ << " | " << infos_ << " | " << waived_ << " |\n";
    for (const std::string& s : sections_) out_ << "\n" << s;
    out_ << std::flush;
  }

 private:
  void Count(Severity s) { (s == Severity::kError ? errors_ : s == Severity::kWarning ? warnings_ : infos_)++; }
  static std::string Line(const Finding& f) {
    const RuleInfo* info = FindRule(f.rule);
    return absl::StrCat("**", Sv(SeverityName(f.severity)), "** ", RuleCode(f.rule), " ",
                        Sv(info ? info->name : "unknown"), " at byte ", f.offset, ": ", MarkdownCodeOfEscaped(f.message));
  }

  std::ostream& out_;
  std::vector<std::string> sections_;
  uint64_t invalid_sets_ = 0, inconclusive_sets_ = 0;
  uint64_t files_ = 0, valid_ = 0, invalid_ = 0, inconclusive_ = 0, io_errors_ = 0, errors_ = 0, warnings_ = 0, infos_ = 0, waived_ = 0;
};

}  // namespace

std::unique_ptr<ReportWriter> MakeMarkdownWriter(std::ostream& out) { return std::make_unique<MarkdownWriter>(out); }

}  // namespace ggufguard
