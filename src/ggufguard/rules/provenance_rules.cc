// GG8030-GG8032: where each chat template comes from (provenance/provenance.h,
// docs/provenance.md). Notes under both policies: a template that differs
// from upstream is common (converters fix templates, fine-tunes change
// them); what the changes tell the model is judged by the behaviour rules on
// InsertedRanges(), and the rest of the 8xxx rules judge the whole.
#include "absl/strings/str_cat.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/text.h"
#include "ggufguard/findings/finding.h"
#include "ggufguard/rules/template_rules.h"

namespace ggufguard {
namespace {

// "the upstream template REPO PATH (commit C, DATE), family F", or the
// project's own corpus template.
std::string UpstreamName(const UpstreamTable& table, const UpstreamTemplate& row) {
  const std::string_view repo = table.Text(row.repo), path = table.Text(row.path), commit = table.Text(row.commit),
                         date = table.Text(row.date), family = table.Text(row.family);
  std::string out = repo == "ggufguard" ? absl::StrCat("ggufguard's own corpus template ", Sv(path))
                                        : absl::StrCat("the upstream template ", Sv(repo), " ", Sv(path));
  if (commit != "-") absl::StrAppend(&out, " (commit ", Sv(commit.substr(0, 12)), date != "-" ? ", " : "", date != "-" ? Sv(date) : "", ")");
  if (family != "-") absl::StrAppend(&out, ", family ", Sv(family));
  return out;
}

}  // namespace

void ReportProvenance(FindingSink& sink, std::string_view key, uint64_t template_offset,
                      const UpstreamProvenance& p) {
  const UpstreamTable& table = KnownUpstreamTemplates();
  switch (p.match) {
    case ProvenanceMatch::kExact:
      sink.AddLazy(RuleId::kChatTemplateUpstreamExact, template_offset, [&] {
        return absl::StrCat("'", EscapeForDisplay(key), "' is ", UpstreamName(table, *p.upstream),
                            ": the same normal form");
      });
      return;
    case ProvenanceMatch::kNear: {
      const uint64_t at = p.diff.changes.empty() ? 0 : p.diff.changes.front().offset;
      sink.AddLazy(RuleId::kChatTemplateUpstreamModified, template_offset + at, [&] {
        return absl::StrCat("'", EscapeForDisplay(key), "' is ", UpstreamName(table, *p.upstream), ", changed (",
                            p.diff.common_segments, " of its ", p.diff.theirs_segments, " segments kept, ",
                            p.diff.ours_segments - p.diff.common_segments, " of this one's ", p.diff.ours_segments,
                            " not upstream's): ", ChangeSummary(p.diff, 4));
      });
      return;
    }
    case ProvenanceMatch::kNone:
      sink.AddLazy(RuleId::kChatTemplateNoUpstream, template_offset, [&] {
        std::string out = absl::StrCat("'", EscapeForDisplay(key), "' matches none of the ", table.rows.size(),
                                       " known upstream templates");
        if (p.nearest != nullptr) {
          absl::StrAppend(&out, "; the closest, ", UpstreamName(table, *p.nearest), ", shares ", p.nearest_common,
                          " of its ", p.nearest->segment_count, " segments");
        }
        return out;
      });
      return;
  }
}

}  // namespace ggufguard
