// provenance_fuzzer: where a chat template comes from, and sibling files
// (provenance/provenance.h, provenance/siblings.h, docs/provenance.md).
//
// Input: bytes read as a template, and as a sibling file of each kind. Checks,
// beyond no crash, no hang and bounded memory: the upstream match is
// deterministic; its changes are at most what was asked, in template order,
// inside the template, their quotes bounded and printable; the inserted
// ranges are sorted, disjoint and inside the template, and there are some
// only for a near match; a template compared with itself has no
// change; a sibling file parses to a state, with a printable reason when it
// is invalid and templates only when it was read.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "ggufguard/provenance/provenance.h"
#include "ggufguard/provenance/siblings.h"

namespace {

using namespace ggufguard;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "ggufguard invariant broken: %s\n", what);
    std::abort();
  }
}

bool Printable(std::string_view s) {
  for (unsigned char c : s) {
    if (c < 0x20 || c >= 0x7f) return false;
  }
  return true;
}

void CheckDiff(const TemplateDiff& d, std::string_view ours, size_t max_changes) {
  Check(d.changes.size() <= max_changes, "at most max_changes changes");
  Check(d.common_segments <= d.ours_segments && d.common_segments <= d.theirs_segments, "common within both");
  uint64_t last = 0;
  for (const TemplateChange& c : d.changes) {
    Check(c.offset >= last && c.offset <= ours.size(), "changes in order, inside the template");
    last = c.offset;
    // kQuoteBytes of the text, each byte at most 4 characters escaped (\xNN), and "...".
    Check(c.inserted.size() <= 4 * kQuoteBytes + 3 && c.removed.size() <= 4 * kQuoteBytes + 3, "quotes bounded");
    Check(Printable(c.inserted) && Printable(c.removed) && Printable(c.what), "quotes printable");
    Check(c.inserted_segments > 0 || c.removed_segments > 0, "a change changes something");
  }
  uint64_t end = 0;
  for (const ByteRange& r : d.inserted) {
    Check(r.begin >= end && r.begin < r.end && r.end <= ours.size(), "ranges sorted, disjoint, inside");
    end = r.end;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const UpstreamProvenance p = FindUpstream(bytes, "chatml", 8);
  const UpstreamProvenance again = FindUpstream(bytes, "chatml", 8);
  Check(p.match == again.match && p.upstream == again.upstream && p.diff.changes.size() == again.diff.changes.size(),
        "deterministic");
  CheckDiff(p.diff, bytes, 8);
  const std::vector<ByteRange> inserted = p.InsertedRanges();
  if (p.match != ProvenanceMatch::kNear) Check(inserted.empty(), "only a near match has inserted ranges");
  if (p.match != ProvenanceMatch::kNone) Check(p.upstream != nullptr, "a match names its upstream");

  const size_t half = size / 2;
  if (const std::optional<TemplateDiff> d = CompareTemplates(bytes.substr(0, half), bytes.substr(half), "x's", 8)) {
    CheckDiff(*d, bytes.substr(0, half), 8);
  }
  const std::optional<TemplateDiff> self = CompareTemplates(bytes, bytes, "x's", 8);
  Check(self.has_value() && self->changes.empty() && self->inserted.empty(), "a template is the same as itself");

  for (std::string_view file : kSiblingFiles) {
    SiblingFile status;
    std::vector<SiblingTemplate> templates;
    ParseSiblingFile(file, bytes, &status, &templates);
    Check(status.state == SiblingFile::State::kRead || status.state == SiblingFile::State::kInvalid,
          "a parsed sibling is read or invalid");
    Check(Printable(status.reason), "reason printable");
    Check(status.state == SiblingFile::State::kInvalid ? !status.reason.empty() : status.reason.empty(),
          "an invalid sibling says why");
    uint64_t kept = 0;
    for (const SiblingTemplate& t : templates) kept += t.text.size() + t.name.size();
    Check(kept <= 2 * size + 64, "templates kept are from the file");
  }
  return 0;
}
