#include "ggufguard/provenance/upstream_table.h"

#include <algorithm>
#include <cstring>

namespace ggufguard {
namespace upstream_table_data {
#include "ggufguard/provenance/upstream_templates.inc"
}  // namespace upstream_table_data

namespace {

bool DigestLess(const std::array<uint8_t, 16>& a, const std::array<uint8_t, 16>& b) {
  return std::memcmp(a.data(), b.data(), a.size()) < 0;
}

// Checked once at compile time: the generator sorts the rows and keeps every
// segment range inside the arrays.
constexpr bool RowsAreSortedAndInside() {
  using namespace upstream_table_data;
  const size_t n = sizeof kRows / sizeof kRows[0];
  for (size_t i = 0; i < n; ++i) {
    const UpstreamTemplate& r = kRows[i];
    if (uint64_t{r.first_segment} + r.segment_count > sizeof kSequence / sizeof kSequence[0]) return false;
    if (r.sketch_size > kSketchSize) return false;
    const uint32_t strings = sizeof kStrings;
    if (r.repo >= strings || r.path >= strings || r.commit >= strings || r.date >= strings || r.family >= strings) {
      return false;
    }
    if (i > 0) {
      bool less = false;
      for (size_t k = 0; k < 16; ++k) {
        if (kRows[i - 1].digest[k] != r.digest[k]) {
          less = kRows[i - 1].digest[k] < r.digest[k];
          break;
        }
      }
      if (!less) return false;
    }
  }
  const size_t distinct = sizeof kSegmentHashes / sizeof kSegmentHashes[0];
  for (uint16_t index : kSequence) {
    if (index >= distinct) return false;
  }
  return distinct == sizeof kSegmentBytes / sizeof kSegmentBytes[0] &&
         distinct == sizeof kSegmentKinds / sizeof kSegmentKinds[0];
}
static_assert(RowsAreSortedAndInside(), "upstream_templates.inc is malformed: regenerate it (docs/provenance.md)");

}  // namespace

std::string_view UpstreamTable::Text(uint32_t offset) const {
  if (offset >= strings.size()) return {};
  const std::string_view rest = strings.substr(offset);
  return rest.substr(0, rest.find('\0'));
}

const UpstreamTemplate* UpstreamTable::FindByDigest(const std::array<uint8_t, 16>& digest) const {
  auto it = std::lower_bound(rows.begin(), rows.end(), digest,
                             [](const UpstreamTemplate& r, const std::array<uint8_t, 16>& d) { return DigestLess(r.digest, d); });
  if (it == rows.end() || it->digest != digest) return nullptr;
  return &*it;
}

const UpstreamTable& KnownUpstreamTemplates() {
  using namespace upstream_table_data;
  static const UpstreamTable table = [] {
    UpstreamTable t{
      kFormVersion,
      std::string_view(kSources, sizeof kSources - 1),
      absl::MakeConstSpan(kRows),
      absl::MakeConstSpan(kSequence),
      absl::MakeConstSpan(kSegmentHashes),
      absl::MakeConstSpan(kSegmentBytes),
      absl::MakeConstSpan(kSegmentKinds),
      std::string_view(kStrings, sizeof kStrings - 1),
    };
    for (const UpstreamTemplate& r : t.rows) t.max_segment_count = std::max(t.max_segment_count, r.segment_count);
    return t;
  }();
  return table;
}

SketchOverlap CompareSketches(absl::Span<const uint32_t> a, absl::Span<const uint32_t> b) {
  SketchOverlap out;
  size_t i = 0, j = 0;
  while (out.of < kSketchSize && (i < a.size() || j < b.size())) {
    if (j == b.size() || (i < a.size() && a[i] < b[j])) {
      ++i;
    } else if (i == a.size() || b[j] < a[i]) {
      ++j;
    } else {
      ++out.shared;
      ++i;
      ++j;
    }
    ++out.of;
  }
  return out;
}

}  // namespace ggufguard
