// The shortest edit script between two sequences of 64-bit values (Myers,
// "An O(ND) difference algorithm", 1986), bounded: the common prefix and
// suffix are matched first, then at most `max_edits` insertions and
// deletions are searched for. Past that bound the answer is "too different"
// (nullopt), so time is O((N + M) * max_edits) and memory
// O(max_edits^2) whatever the sequences.
#ifndef GGUFGUARD_BASE_SEQUENCE_DIFF_H_
#define GGUFGUARD_BASE_SEQUENCE_DIFF_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/types/span.h"

namespace ggufguard {

struct DiffRun {
  enum class Op : uint8_t { kEqual, kDelete, kInsert };
  Op op;
  size_t a_begin;  // kEqual, kDelete: where in a; kInsert: the position in a it comes before
  size_t b_begin;  // kEqual, kInsert: where in b; kDelete: the position in b it comes before
  size_t length;
};

// Runs in order, each non-empty, adjacent runs of one op merged; applying
// them to `a` gives `b`, with as few inserted and deleted values as any
// script has.
std::optional<std::vector<DiffRun>> DiffSequences(absl::Span<const uint64_t> a, absl::Span<const uint64_t> b,
                                                  size_t max_edits);

}  // namespace ggufguard

#endif  // GGUFGUARD_BASE_SEQUENCE_DIFF_H_
