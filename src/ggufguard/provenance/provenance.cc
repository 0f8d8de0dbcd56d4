// Provenance (provenance.h): the exact match by digest, the near match by
// sketch then bounded diff, and the diff described in a reviewer's terms.
#include "ggufguard/provenance/provenance.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ggufguard/base/sequence_diff.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/text.h"
#include "ggufguard/provenance/family.h"
#include "ggufguard/template/fingerprint.h"

namespace ggufguard {
namespace {

// A near match keeps at least half of the upstream's segments, and they are
// at least 30 % of ours: most of upstream is there, and it is not a few
// common ChatML lines inside an unrelated template.
bool CloseEnough(uint32_t common, uint32_t theirs, uint32_t ours) {
  return uint64_t{common} * 2 >= theirs && uint64_t{common} * 10 >= uint64_t{ours} * 3 && common > 0;
}

// One side of a diff: its segments' hashes, kind bytes and sizes, and its
// text where it is at hand (ours always; theirs for a sibling file).
struct Side {
  std::vector<uint64_t> hashes;
  std::vector<uint8_t> kinds;
  std::vector<uint64_t> offsets;  // only with text
  std::vector<uint64_t> bytes;
  std::string_view text;          // empty: not at hand

  static Side Of(std::string_view tmpl, const NormalForm& form) {
    Side s;
    s.text = tmpl;
    s.hashes = form.SegmentHashes();
    for (const TemplateSegment& seg : form.segments) {
      s.kinds.push_back(SegmentKindByte(tmpl, seg));
      s.offsets.push_back(seg.offset);
      s.bytes.push_back(seg.length);
    }
    return s;
  }
  static Side Of(const UpstreamTable& table, const UpstreamTemplate& row) {
    Side s;
    for (uint16_t i : table.SequenceOf(row)) {
      s.hashes.push_back(table.segment_hashes[i]);
      s.kinds.push_back(table.segment_kinds[i]);
      s.bytes.push_back(table.segment_bytes[i]);
    }
    return s;
  }
};

SegmentKind KindOf(uint8_t byte) { return static_cast<SegmentKind>(byte & ~kWhitespaceOnlyBit); }
bool Blank(uint8_t byte) { return (byte & kWhitespaceOnlyBit) != 0; }

std::vector<std::string> DistinctKinds(const Side& side, size_t begin, size_t end) {
  std::vector<std::string> out;
  for (size_t i = begin; i < end; ++i) {
    std::string name = SegmentKindName(KindOf(side.kinds[i]));
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
  }
  return out;
}

std::string Quote(const Side& side, size_t begin, size_t end) {
  if (side.text.empty() || begin >= end) return "";
  const uint64_t from = side.offsets[begin], to = side.offsets[end - 1] + side.bytes[end - 1];
  return EscapeForDisplay(side.text.substr(from, to - from), kQuoteBytes);
}

// "condition changed", "text inserted", "2 upstream's segments removed (loop, end)", ...
std::string What(const Side& ours, size_t b0, size_t b1, const Side& theirs, size_t a0, size_t a1,
                 std::string_view their_name) {
  const size_t inserted = b1 - b0, removed = a1 - a0;
  auto kinds = [](const Side& s, size_t x, size_t y) { return absl::StrJoin(DistinctKinds(s, x, y), ", "); };
  if (removed == 0) {
    if (inserted == 1) return absl::StrCat(SegmentKindName(KindOf(ours.kinds[b0])), " inserted");
    return absl::StrCat(inserted, " segments inserted (", kinds(ours, b0, b1), ")");
  }
  if (inserted == 0) {
    if (removed == 1) return absl::StrCat(Sv(their_name), " ", SegmentKindName(KindOf(theirs.kinds[a0])), " removed");
    return absl::StrCat(removed, " of ", Sv(their_name), " segments removed (", kinds(theirs, a0, a1), ")");
  }
  if (inserted == 1 && removed == 1 && KindOf(ours.kinds[b0]) == KindOf(theirs.kinds[a0])) {
    return absl::StrCat(SegmentKindName(KindOf(ours.kinds[b0])), " changed");
  }
  return absl::StrCat(removed, " of ", Sv(their_name), " segments (", kinds(theirs, a0, a1), ") replaced by ", inserted,
                      " (", kinds(ours, b0, b1), ")");
}

// Line and column of template byte `offset`, counting on from the last one
// asked (offsets come in order, so all of them cost one pass).
class LineCounter {
 public:
  explicit LineCounter(std::string_view text) : text_(text) {}
  std::pair<uint32_t, uint32_t> At(uint64_t offset) {
    offset = std::min<uint64_t>(offset, text_.size());
    if (offset < at_) {  // out of order: count again from the start
      at_ = line_start_ = 0;
      line_ = 1;
    }
    for (; at_ < offset; ++at_) {
      if (text_[at_] == '\n') {
        ++line_;
        line_start_ = at_ + 1;
      }
    }
    return {line_, static_cast<uint32_t>(offset - line_start_ + 1)};
  }

 private:
  std::string_view text_;
  uint64_t at_ = 0, line_start_ = 0;
  uint32_t line_ = 1;
};

// The diff of theirs (a) against ours (b) in a reviewer's terms.
std::optional<TemplateDiff> Describe(const Side& ours, const Side& theirs, std::string_view their_name,
                                     size_t max_changes) {
  std::optional<std::vector<DiffRun>> runs = DiffSequences(theirs.hashes, ours.hashes, kMaxEdits);
  if (!runs) return std::nullopt;
  TemplateDiff diff;
  diff.ours_segments = static_cast<uint32_t>(ours.hashes.size());
  diff.theirs_segments = static_cast<uint32_t>(theirs.hashes.size());
  LineCounter lines(ours.text);
  const uint64_t ours_end = ours.offsets.empty() ? 0 : ours.offsets.back() + ours.bytes.back();
  auto flush = [&](size_t a0, size_t a1, size_t b0, size_t b1) {
    if (a0 == a1 && b0 == b1) return;
    bool blank = true;
    for (size_t i = a0; i < a1; ++i) blank = blank && Blank(theirs.kinds[i]);
    for (size_t i = b0; i < b1; ++i) blank = blank && Blank(ours.kinds[i]);
    if (blank) ++diff.whitespace_changes;
    if (b1 > b0) {
      const ByteRange r{ours.offsets[b0], ours.offsets[b1 - 1] + ours.bytes[b1 - 1]};
      if (!diff.inserted.empty() && diff.inserted.back().end == r.begin) {
        diff.inserted.back().end = r.end;
      } else {
        diff.inserted.push_back(r);
      }
    }
    if (diff.changes.size() >= max_changes) {
      ++diff.changes_not_listed;
      return;
    }
    TemplateChange c;
    c.offset = b0 < ours.offsets.size() ? ours.offsets[b0] : ours_end;
    std::tie(c.line, c.column) = lines.At(c.offset);
    c.what = What(ours, b0, b1, theirs, a0, a1, their_name);
    c.inserted_segments = static_cast<uint32_t>(b1 - b0);
    for (size_t i = b0; i < b1; ++i) c.inserted_bytes += ours.bytes[i];
    c.inserted = Quote(ours, b0, b1);
    c.removed_segments = static_cast<uint32_t>(a1 - a0);
    for (size_t i = a0; i < a1; ++i) c.removed_bytes += theirs.bytes[i];
    c.removed = Quote(theirs, a0, a1);
    c.removed_kinds = DistinctKinds(theirs, a0, a1);
    c.whitespace_only = blank;
    diff.changes.push_back(std::move(c));
  };
  // A change is every delete and insert between two equal runs.
  size_t a0 = 0, b0 = 0, a1 = 0, b1 = 0;
  bool open = false;
  for (const DiffRun& r : *runs) {
    if (r.op == DiffRun::Op::kEqual) {
      if (open) flush(a0, a1, b0, b1);
      open = false;
      diff.common_segments += static_cast<uint32_t>(r.length);
      continue;
    }
    if (!open) {
      a0 = a1 = r.a_begin;
      b0 = b1 = r.b_begin;
      open = true;
    }
    if (r.op == DiffRun::Op::kDelete) {
      a1 = r.a_begin + r.length;
    } else {
      b1 = r.b_begin + r.length;
    }
  }
  if (open) flush(a0, a1, b0, b1);
  return diff;
}

struct Candidate {
  const UpstreamTemplate* row;
  double score;
  bool family_agrees;
};

}  // namespace

const char* ProvenanceMatchName(ProvenanceMatch match) {
  switch (match) {
    case ProvenanceMatch::kExact: return "exact";
    case ProvenanceMatch::kNear: return "near";
    case ProvenanceMatch::kNone: return "none";
  }
  return "none";
}

std::vector<ByteRange> UpstreamProvenance::InsertedRanges() const {
  return match == ProvenanceMatch::kNear ? diff.inserted : std::vector<ByteRange>{};
}

UpstreamProvenance FindUpstream(std::string_view tmpl, std::string_view model_family, size_t max_changes,
                                const UpstreamTable& table) {
  UpstreamProvenance out;
  out.template_family = TemplateFamily(tmpl);
  out.template_bytes = tmpl.size();
  const NormalForm form = NormalizeTemplate(tmpl);
  if (const UpstreamTemplate* row = table.FindByDigest(form.Digest())) {
    out.match = ProvenanceMatch::kExact;
    out.upstream = row;
    out.diff.ours_segments = out.diff.theirs_segments = out.diff.common_segments =
        static_cast<uint32_t>(form.segments.size());
    return out;
  }
  // A near match keeps at least 30 % of the template's segments, and none
  // keeps more than the largest row has: past that size no row can be near,
  // and the segments are not hashed at all (a crafted template of a million
  // tiny tags costs its lexing and one SHA-256, as an exact lookup does).
  if (uint64_t{form.segments.size()} * 3 > uint64_t{table.max_segment_count} * 10) return out;
  const Side ours = Side::Of(tmpl, form);
  const std::vector<uint32_t> sketch = SegmentSketch(ours.hashes);
  // The best few by sketch overlap; the file's family, then the closer
  // size, break ties.
  std::vector<Candidate> best;
  for (const UpstreamTemplate& row : table.rows) {
    const SketchOverlap o = CompareSketches(sketch, absl::MakeConstSpan(row.sketch.data(), row.sketch_size));
    if (o.shared == 0) continue;
    Candidate c{&row, static_cast<double>(o.shared) / o.of, FamiliesAgree(model_family, table.Text(row.family))};
    auto better = [&](const Candidate& x, const Candidate& y) {
      if (x.score != y.score) return x.score > y.score;
      if (x.family_agrees != y.family_agrees) return x.family_agrees;
      auto gap = [&](const Candidate& z) {
        const int64_t d = int64_t{z.row->segment_count} - static_cast<int64_t>(ours.hashes.size());
        return d < 0 ? -d : d;
      };
      return gap(x) < gap(y);
    };
    best.insert(std::upper_bound(best.begin(), best.end(), c, better), c);
    if (best.size() > kNearCandidates) best.pop_back();
  }
  std::optional<TemplateDiff> chosen;
  for (const Candidate& c : best) {
    std::optional<TemplateDiff> d = Describe(ours, Side::Of(table, *c.row), "upstream's", max_changes);
    if (!d) continue;
    if (out.nearest == nullptr || d->common_segments > out.nearest_common) {
      out.nearest = c.row;
      out.nearest_common = d->common_segments;
    }
    if (!CloseEnough(d->common_segments, d->theirs_segments, d->ours_segments)) continue;
    if (!chosen || d->common_segments > chosen->common_segments) {
      chosen = std::move(d);
      out.upstream = c.row;
    }
  }
  if (out.nearest == nullptr && !best.empty()) out.nearest = best.front().row;
  if (chosen) {
    out.match = ProvenanceMatch::kNear;
    out.diff = *std::move(chosen);
    out.nearest = nullptr;
    out.nearest_common = 0;
  }
  return out;
}

std::optional<TemplateDiff> CompareTemplates(std::string_view ours, std::string_view theirs, std::string_view their_name,
                                             size_t max_changes) {
  const NormalForm a = NormalizeTemplate(ours), b = NormalizeTemplate(theirs);
  if (a.form == b.form) {
    TemplateDiff same;
    same.ours_segments = same.theirs_segments = same.common_segments = static_cast<uint32_t>(a.segments.size());
    return same;
  }
  return Describe(Side::Of(ours, a), Side::Of(theirs, b), their_name, max_changes);
}

std::string ChangeSummary(const TemplateDiff& diff, size_t max_listed) {
  const uint64_t total = diff.changes.size() + diff.changes_not_listed;
  std::string out = absl::StrCat(total, total == 1 ? " change" : " changes");
  if (diff.whitespace_changes > 0) absl::StrAppend(&out, " (", diff.whitespace_changes, " whitespace only)");
  size_t listed = 0;
  for (bool blank : {false, true}) {
    for (const TemplateChange& c : diff.changes) {
      if (c.whitespace_only != blank || listed == max_listed) continue;
      absl::StrAppend(&out, listed == 0 ? ": " : "; ", "at template byte ", c.offset, " (line ", c.line, ", column ",
                      c.column, "): ", c.what);
      if (!c.inserted.empty()) absl::StrAppend(&out, ": '", c.inserted, "'");
      if (!c.removed.empty()) {
        absl::StrAppend(&out, c.inserted_segments > 0 ? " (in place of '" : ": '", c.removed, c.inserted_segments > 0 ? "')" : "'");
      } else if (c.removed_segments > 0) {
        absl::StrAppend(&out, c.inserted_segments > 0 ? " (in place of " : " (", c.removed_bytes, " bytes)");
      }
      ++listed;
    }
  }
  if (total > listed) absl::StrAppend(&out, "; and ", total - listed, " more");
  return out;
}

bool SameTemplate(std::string_view a, std::string_view b) {
  return NormalizeTemplate(a).form == NormalizeTemplate(b).form;
}

}  // namespace ggufguard
