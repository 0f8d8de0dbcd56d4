// Myers' greedy forward search with its trace kept, then a walk back through
// the trace (sequence_diff.h).
#include "ggufguard/base/sequence_diff.h"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace ggufguard {
namespace {

// One edit of the script and the equal values that follow it.
struct Step {
  DiffRun::Op op;
  size_t a, b;  // where the edit is in a and in b (as DiffRun's a_begin and b_begin)
  size_t snake_a, snake_b, snake_length;
};

void Push(std::vector<DiffRun>& runs, DiffRun::Op op, size_t a, size_t b, size_t n) {
  if (n == 0) return;
  if (!runs.empty()) {
    DiffRun& last = runs.back();
    const bool follows = last.op == op && (op == DiffRun::Op::kInsert ? last.b_begin + last.length == b && last.a_begin == a
                                           : op == DiffRun::Op::kDelete ? last.a_begin + last.length == a && last.b_begin == b
                                                                        : last.a_begin + last.length == a);
    if (follows) {
      last.length += n;
      return;
    }
  }
  runs.push_back({op, a, b, n});
}

}  // namespace

std::optional<std::vector<DiffRun>> DiffSequences(absl::Span<const uint64_t> a, absl::Span<const uint64_t> b,
                                                  size_t max_edits) {
  size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) ++prefix;
  size_t suffix = 0;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
         a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix]) {
    ++suffix;
  }
  const absl::Span<const uint64_t> x_seq = a.subspan(prefix, a.size() - prefix - suffix);
  const absl::Span<const uint64_t> y_seq = b.subspan(prefix, b.size() - prefix - suffix);
  constexpr size_t kMax = std::numeric_limits<int32_t>::max() / 4;
  if (x_seq.size() > kMax || y_seq.size() > kMax) return std::nullopt;
  const int32_t n = static_cast<int32_t>(x_seq.size()), m = static_cast<int32_t>(y_seq.size());
  const size_t least = static_cast<size_t>(n > m ? n - m : m - n);
  if (least > max_edits) return std::nullopt;
  const int32_t max_d = static_cast<int32_t>(std::min<size_t>(max_edits, static_cast<size_t>(n) + m));

  // v[k + max_d + 1]: the furthest x reached on diagonal k; trace[d] holds
  // v for k in [-d, d] after step d.
  std::vector<int32_t> v(2 * static_cast<size_t>(max_d) + 3, 0);
  const int32_t off = max_d + 1;
  std::vector<std::vector<int32_t>> trace;
  int32_t found = -1;
  for (int32_t d = 0; d <= max_d && found < 0; ++d) {
    for (int32_t k = -d; k <= d; k += 2) {
      int32_t x = (k == -d || (k != d && v[off + k - 1] < v[off + k + 1])) ? v[off + k + 1] : v[off + k - 1] + 1;
      int32_t y = x - k;
      while (x < n && y < m && x_seq[x] == y_seq[y]) {
        ++x;
        ++y;
      }
      v[off + k] = x;
      if (x >= n && y >= m) found = d;
    }
    trace.emplace_back(v.begin() + (off - d), v.begin() + (off + d + 1));
  }
  if (found < 0) return std::nullopt;

  // Back from (n, m): each step d came from diagonal k+1 (an insertion) or
  // k-1 (a deletion) of step d-1, then followed equal values (its snake).
  std::vector<Step> steps;  // edits with the snake after each, last first
  int32_t x = n, y = m;
  for (int32_t d = found; d > 0; --d) {
    const std::vector<int32_t>& prev = trace[d - 1];  // k in [-(d-1), d-1] at index k + d - 1
    auto at = [&](int32_t k) { return prev[k + d - 1]; };
    const int32_t k = x - y;
    const bool down = k == -d || (k != d && at(k - 1) < at(k + 1));
    const int32_t prev_k = down ? k + 1 : k - 1;
    const int32_t prev_x = at(prev_k), prev_y = prev_x - prev_k;
    const int32_t mid_x = down ? prev_x : prev_x + 1, mid_y = down ? prev_y + 1 : prev_y;
    steps.push_back({down ? DiffRun::Op::kInsert : DiffRun::Op::kDelete, static_cast<size_t>(prev_x),
                     static_cast<size_t>(prev_y), static_cast<size_t>(mid_x), static_cast<size_t>(mid_y),
                     static_cast<size_t>(x - mid_x)});
    x = prev_x;
    y = prev_y;
  }
  std::vector<DiffRun> runs;
  Push(runs, DiffRun::Op::kEqual, 0, 0, prefix + static_cast<size_t>(x));  // the prefix, then step 0's snake
  for (size_t i = steps.size(); i-- > 0;) {
    const Step& s = steps[i];
    Push(runs, s.op, prefix + s.a, prefix + s.b, 1);
    Push(runs, DiffRun::Op::kEqual, prefix + s.snake_a, prefix + s.snake_b, s.snake_length);
  }
  Push(runs, DiffRun::Op::kEqual, a.size() - suffix, b.size() - suffix, suffix);
  return runs;
}

}  // namespace ggufguard
