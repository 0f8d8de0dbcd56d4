#include "ggufguard/report/provenance_render.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/text.h"

namespace ggufguard {
namespace {

using Json = nlohmann::ordered_json;

Json NullOr(std::string_view s) { return s.empty() ? Json(nullptr) : Json(std::string(s)); }

Json UpstreamJson(const UpstreamTemplate* row) {
  if (row == nullptr) return nullptr;
  const UpstreamTable& t = KnownUpstreamTemplates();
  return {{"repo", std::string(t.Text(row->repo))},     {"path", std::string(t.Text(row->path))},
          {"commit", std::string(t.Text(row->commit))}, {"date", std::string(t.Text(row->date))},
          {"family", std::string(t.Text(row->family))}, {"segments", row->segment_count}};
}

Json ChangesJson(const TemplateDiff& diff) {
  Json out = Json::array();
  for (const TemplateChange& c : diff.changes) {
    out.push_back({{"offset", c.offset},
                   {"line", c.line},
                   {"column", c.column},
                   {"what", c.what},
                   {"inserted_segments", c.inserted_segments},
                   {"inserted_bytes", c.inserted_bytes},
                   {"inserted", c.inserted},
                   {"removed_segments", c.removed_segments},
                   {"removed_bytes", c.removed_bytes},
                   {"removed_kinds", c.removed_kinds},
                   {"removed", c.removed.empty() ? Json(nullptr) : Json(c.removed)},
                   {"whitespace_only", c.whitespace_only}});
  }
  return out;
}

std::string UpstreamLine(const UpstreamTemplate& row) {
  const UpstreamTable& t = KnownUpstreamTemplates();
  std::string out = absl::StrCat(Sv(t.Text(row.repo)), " ", Sv(t.Text(row.path)));
  if (t.Text(row.commit) != "-") absl::StrAppend(&out, " @", Sv(t.Text(row.commit).substr(0, 12)));
  if (t.Text(row.date) != "-") absl::StrAppend(&out, " (", Sv(t.Text(row.date)), ")");
  if (t.Text(row.family) != "-") absl::StrAppend(&out, ", family ", Sv(t.Text(row.family)));
  return out;
}

void AppendChanges(std::string& out, const TemplateDiff& diff, std::string_view indent) {
  for (const TemplateChange& c : diff.changes) {
    absl::StrAppend(&out, Sv(indent), "byte ", c.offset, " (line ", c.line, ", column ", c.column, "): ", c.what);
    if (!c.inserted.empty()) absl::StrAppend(&out, ": '", c.inserted, "'");
    if (!c.removed.empty()) absl::StrAppend(&out, " (was '", c.removed, "')");
    else if (c.removed_segments > 0) absl::StrAppend(&out, " (", c.removed_bytes, " bytes of upstream)");
    absl::StrAppend(&out, "\n");
  }
  if (diff.changes_not_listed > 0) absl::StrAppend(&out, Sv(indent), "... and ", diff.changes_not_listed, " more\n");
}

}  // namespace

Json ProvenanceJson(const TemplateDigest& d, const TemplateDigests& all) {
  Json j;
  const UpstreamProvenance* p = d.provenance.get();
  j["match"] = p == nullptr ? "not-analysed" : ProvenanceMatchName(p->match);
  j["template_family"] = p == nullptr ? Json(nullptr) : NullOr(p->template_family);
  j["model_family"] = NullOr(all.model_family);
  j["upstream"] = p == nullptr ? Json(nullptr) : UpstreamJson(p->upstream);
  if (p == nullptr) return j;
  j["segments"] = p->match == ProvenanceMatch::kNear || p->match == ProvenanceMatch::kExact ? p->diff.ours_segments : 0;
  j["common_segments"] = p->match == ProvenanceMatch::kNone ? p->nearest_common : p->diff.common_segments;
  j["changes"] = ChangesJson(p->diff);
  j["changes_suppressed"] = p->diff.changes_not_listed;
  Json inserted = Json::array();
  for (const ByteRange& r : p->InsertedRanges()) inserted.push_back({r.begin, r.end});
  j["inserted"] = std::move(inserted);
  j["nearest"] = p->match == ProvenanceMatch::kNone ? UpstreamJson(p->nearest) : Json(nullptr);
  return j;
}

Json SiblingComparisonsJson(const TemplateDigest& d) {
  Json out = Json::array();
  for (const SiblingComparison& c : d.siblings) {
    Json j{{"file", c.file}, {"name", EscapeForDisplay(c.name, 256)}, {"same", c.same}, {"bytes", c.their_bytes}};
    j["changes"] = c.diff ? ChangesJson(*c.diff) : Json::array();
    j["changes_suppressed"] = c.diff ? c.diff->changes_not_listed : 0;
    j["too_different"] = !c.same && !c.diff;
    out.push_back(std::move(j));
  }
  return out;
}

Json SiblingFilesJson(const TemplateDigests& all) {
  Json out = Json::array();
  for (const SiblingFile& f : all.sibling_files) {
    out.push_back({{"file", f.file}, {"state", SiblingStateName(f.state)}, {"bytes", f.bytes},
                   {"reason", f.reason.empty() ? Json(nullptr) : Json(f.reason)}});
  }
  return out;
}

std::string InspectTemplates(const TemplateDigests& all) {
  if (all.listed.empty()) return "";
  std::string out = "chat templates:\n";
  if (!all.model_family.empty()) absl::StrAppend(&out, "  model family: ", all.model_family, "\n");
  for (const TemplateDigest& d : all.listed) {
    absl::StrAppend(&out, "  ", EscapeForDisplay(d.key, 80), " @", d.offset, " (", d.bytes, " bytes) sha256 ",
                    d.sha256, "\n");
    const UpstreamProvenance* p = d.provenance.get();
    if (p == nullptr) {
      absl::StrAppend(&out, "    provenance: not analysed (over the policy's limits)\n");
    } else {
      if (!p->template_family.empty()) absl::StrAppend(&out, "    written for: ", Sv(p->template_family), "\n");
      switch (p->match) {
        case ProvenanceMatch::kExact:
          absl::StrAppend(&out, "    provenance: exact: ", UpstreamLine(*p->upstream), "\n");
          break;
        case ProvenanceMatch::kNear:
          absl::StrAppend(&out, "    provenance: near: ", UpstreamLine(*p->upstream), "; ", p->diff.common_segments,
                          " of its ", p->diff.theirs_segments, " segments kept, ",
                          p->diff.ours_segments - p->diff.common_segments, " of ", p->diff.ours_segments,
                          " here not upstream's\n");
          AppendChanges(out, p->diff, "      ");
          break;
        case ProvenanceMatch::kNone:
          absl::StrAppend(&out, "    provenance: none of ", KnownUpstreamTemplates().rows.size(),
                          " known upstream templates");
          if (p->nearest != nullptr) {
            absl::StrAppend(&out, " (closest: ", UpstreamLine(*p->nearest), ", ", p->nearest_common, " of its ",
                            p->nearest->segment_count, " segments)");
          }
          absl::StrAppend(&out, "\n");
          break;
      }
    }
    for (const SiblingComparison& c : d.siblings) {
      if (c.same) {
        absl::StrAppend(&out, "    beside it: the same as ", c.file, "'s '", EscapeForDisplay(c.name), "'\n");
      } else if (!c.diff) {
        absl::StrAppend(&out, "    beside it: unlike ", c.file, "'s '", EscapeForDisplay(c.name), "' (more than ",
                        kMaxEdits, " segments differ)\n");
      } else {
        absl::StrAppend(&out, "    beside it: differs from ", c.file, "'s '", EscapeForDisplay(c.name), "':\n");
        AppendChanges(out, *c.diff, "      ");
      }
    }
  }
  if (all.not_listed > 0) absl::StrAppend(&out, "  ... and ", all.not_listed, " more template keys\n");
  for (const SiblingFile& f : all.sibling_files) {
    if (f.state == SiblingFile::State::kAbsent) continue;
    absl::StrAppend(&out, "  sibling ", f.file, ": ", SiblingStateName(f.state));
    if (f.state == SiblingFile::State::kRead) absl::StrAppend(&out, " (", f.bytes, " bytes)");
    if (!f.reason.empty()) absl::StrAppend(&out, ": ", f.reason);
    absl::StrAppend(&out, "\n");
  }
  return out;
}

}  // namespace ggufguard
