// Where a chat template comes from: the upstream template it is (an exact
// match of normal forms, template/fingerprint.h), the one it was made from
// and how it differs (a near match), or none; and how it differs from
// another template whose text is at hand (a sibling file of its repo).
// docs/provenance.md describes the normal form, the table and what a
// difference reports.
//
// The differences are in a reviewer's terms: which kind of segment (literal
// text, an output expression, a condition, a loop, ...) was inserted,
// removed or changed, at which template byte, the inserted bytes quoted
// (escaped and bounded), the removed ones described by kind and size (or
// quoted, when the other text is known). InsertedRanges() hands the
// behaviour rules the parts of a near match that are not upstream's.
//
// Cost: linear in the template. Normalising is one lexer pass; an exact
// match is one SHA-256 and a binary search; otherwise each segment is hashed
// once, the table's sketches are compared (kSketchSize keys per row), and at
// most kNearCandidates diffs of at most kMaxEdits edits each are run.
#ifndef GGUFGUARD_PROVENANCE_PROVENANCE_H_
#define GGUFGUARD_PROVENANCE_PROVENANCE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ggufguard/provenance/upstream_table.h"

namespace ggufguard {

inline constexpr size_t kNearCandidates = 3;
inline constexpr size_t kMaxEdits = 128;
inline constexpr size_t kQuoteBytes = 160;  // of inserted or removed text per change

struct ByteRange {
  uint64_t begin, end;  // template bytes [begin, end)
  bool operator==(const ByteRange&) const = default;
};

// One contiguous difference: segments of theirs removed, segments of ours
// inserted, or both (a change).
struct TemplateChange {
  uint64_t offset = 0;  // template byte in ours: the first inserted byte, or where the removed part was
  uint32_t line = 0, column = 0;  // 1-based; the column counts bytes
  std::string what;     // "condition changed", "text inserted", "2 segments removed (loop, end)", ...
  uint32_t inserted_segments = 0;
  uint64_t inserted_bytes = 0;
  std::string inserted;  // our inserted bytes, escaped, at most kQuoteBytes of them
  uint32_t removed_segments = 0;
  uint64_t removed_bytes = 0;  // their template bytes (a table segment's size saturates at 65535)
  std::string removed;   // their removed bytes, escaped, when their text is known; else empty
  std::vector<std::string> removed_kinds;  // distinct kinds, in order
  bool whitespace_only = false;  // only whitespace text on both sides
};

struct TemplateDiff {
  uint32_t ours_segments = 0, theirs_segments = 0, common_segments = 0;
  std::vector<TemplateChange> changes;  // in template order, at most the max_changes asked for
  uint64_t changes_not_listed = 0;
  uint64_t whitespace_changes = 0;  // how many of all the changes are whitespace only
  std::vector<ByteRange> inserted;   // every range of ours that is not theirs, merged, in order
};

enum class ProvenanceMatch { kExact, kNear, kNone };
const char* ProvenanceMatchName(ProvenanceMatch match);  // "exact", "near", "none"

struct UpstreamProvenance {
  ProvenanceMatch match = ProvenanceMatch::kNone;
  const UpstreamTemplate* upstream = nullptr;  // kExact, kNear
  TemplateDiff diff;                           // kNear (kExact: no change, every segment common)
  // kNone: the candidate that came closest, when one shared any segment,
  // and how many of its segments were found (0 when too different to diff).
  const UpstreamTemplate* nearest = nullptr;
  uint32_t nearest_common = 0;
  std::string_view template_family;  // TemplateFamily(): from the template's own markers
  uint64_t template_bytes = 0;

  // The parts of the template known not to be upstream's, which the
  // behaviour rules judge without the leniency they give to what real
  // templates do: a near match's inserted and changed segments. None for an
  // exact match, and none for no match either: with no upstream to compare
  // with nothing is known to be inserted, and the whole template is judged
  // as usual (a real template missing from the table must not be judged
  // as an attack's insertion).
  std::vector<ByteRange> InsertedRanges() const;
};

// `model_family` (ModelFamily() of the file) breaks ties between candidates;
// `max_changes` bounds diff.changes (the rest are counted).
UpstreamProvenance FindUpstream(std::string_view tmpl, std::string_view model_family, size_t max_changes,
                                const UpstreamTable& table = KnownUpstreamTemplates());

// How `ours` differs from `theirs`, both texts at hand, under the same
// normal form: nullopt when they differ in more than kMaxEdits segments.
// `their_name` names the other side in `what` ("tokenizer_config.json's").
// Equal forms give a diff with no change.
std::optional<TemplateDiff> CompareTemplates(std::string_view ours, std::string_view theirs, std::string_view their_name,
                                             size_t max_changes);

// The changes of a diff for a finding's message, the ones that are not
// whitespace only first: "3 changes (1 whitespace only): at template byte
// 120 (line 3, column 5): text inserted: '...'; ...", at most `max_listed`
// of them spelled out.
std::string ChangeSummary(const TemplateDiff& diff, size_t max_listed);

// Whether two templates have the same normal form.
bool SameTemplate(std::string_view a, std::string_view b);

}  // namespace ggufguard

#endif  // GGUFGUARD_PROVENANCE_PROVENANCE_H_
