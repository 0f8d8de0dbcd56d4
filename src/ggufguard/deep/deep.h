// `--deep`: every tensor's data checked as ggml_validate_row_data checks it
// (NaN and infinities in float data and in block scales), once the header
// has parsed.
//
// One plan, three ways to run it, one answer. PlanDeepCheck turns the
// header into items (tensor, file offset, whole units to check) sorted by
// offset and disjoint, within the policy's max_deep_bytes. The plan runs on
// a source (workers over chunks of the items, read with large preads or
// straight from memory) or on a stream (DeepStreamChecker, fed the bytes as
// they pass). Each item's findings are the first bad values in unit order
// whatever the chunking, so a file by path, in memory and through a pipe
// gives the same report.
#ifndef GGUFGUARD_DEEP_DEEP_H_
#define GGUFGUARD_DEEP_DEEP_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "ggufguard/deep/data_check.h"
#include "ggufguard/findings/finding.h"
#include "ggufguard/findings/policy.h"
#include "ggufguard/format/header.h"
#include "ggufguard/io/source.h"

namespace ggufguard {

struct DeepOptions {
  bool enabled = false;
  unsigned jobs = 0;                          // worker threads; 0: one per core
  size_t chunk_bytes = size_t{4} << 20;       // one worker's share of the data at a time
  size_t read_bytes = size_t{256} << 10;      // one pread, one worker's buffer (L2-sized)
};

// What the deep check found, per tensor and in all (the JSON report's
// `deep` object).
struct DeepTensorResult {
  uint32_t tensor = 0;         // index into the header's tensors
  uint64_t checked_bytes = 0;  // of its data
  uint64_t bad_values = 0;
};

struct DeepSummary {
  bool ran = false;
  uint64_t checked_tensors = 0;
  uint64_t checked_bytes = 0;
  uint64_t bad_values = 0;
  uint64_t unchecked_bytes = 0;  // past max_deep_bytes, refused types, overlaps, beyond the file
  // Tensors with bad values first, then the others, both in file order;
  // at most the policy's max_list_entries, the rest counted.
  std::vector<DeepTensorResult> tensors;
  uint64_t tensors_suppressed = 0;
};

struct DeepItem {
  uint32_t tensor = 0;
  uint64_t offset = 0;  // file offset of the first unit
  uint64_t units = 0;   // whole units to check
  const DataCheck* check = nullptr;
};

struct DeepPlan {
  ByteOrder order = ByteOrder::kLittle;
  std::vector<DeepItem> items;  // by offset, disjoint
  size_t max_listed = 0;        // bad values listed per tensor
  // Tensors left out, for the report: a type ggml refuses (GG6011), data
  // past max_deep_bytes (GG6010), a range overlapping an earlier tensor's.
  std::vector<uint32_t> refused_type;
  std::vector<uint32_t> overlapping;
  uint64_t unplanned_bytes = 0;  // past max_deep_bytes
  uint64_t limited_tensors = 0;  // tensors cut or left out by max_deep_bytes
};

// Every tensor with a known size and offset, in file order. Tensors that end
// past the file are planned all the same: the source runner leaves them
// undone, a stream never finishes them, and ReportDeep reports neither.
// max_deep_bytes bounds the bytes checked, integer and NVFP4 tensors (with
// nothing to check but their bounds) included, so that checked_bytes never
// exceeds it.
DeepPlan PlanDeepCheck(const GgufHeader& header, const Policy& policy);

// One item's outcome. Produced by either runner; `units_done` < the item's
// units only where the data ended first.
struct DeepItemResult {
  uint64_t units_done = 0;
  uint64_t bad_values = 0;
  std::vector<BadValue> listed;
};

// Runs the plan over a source: from its memory when it has some, else by
// pread in chunk_bytes pieces, on `jobs` threads. Items that end past the
// source's size are left undone. An error only when a read fails.
absl::Status RunDeepOnSource(const DeepPlan& plan, ByteSource& source, const DeepOptions& options,
                             std::vector<DeepItemResult>* results);

// Runs the plan over a stream's bytes as they pass, in one thread, with
// memory bounded by one unit (a block cut by a read is carried over).
class DeepStreamChecker {
 public:
  explicit DeepStreamChecker(const DeepPlan& plan);
  // The stream's bytes [position, position + n); calls come in order, each
  // starting where the previous ended (the first at any position).
  void Feed(uint64_t position, const uint8_t* p, size_t n);
  std::vector<DeepItemResult> TakeResults() { return std::move(results_); }

 private:
  void CheckUnits(size_t item, const uint8_t* p, uint64_t n);
  const DeepPlan& plan_;
  std::vector<DeepItemResult> results_;
  size_t next_ = 0;            // the first item not yet finished
  uint8_t carry_[512];         // a unit cut by a read (units are <= 292 bytes)
  uint32_t carried_ = 0;
};

// Turns the results into findings (GG6009-GG6011) and the summary. A tensor
// whose data the run did not finish (the file ended first) gives none.
// `file_size`: GG6010 points at the data section, or at the end of a file
// that ends before it (every finding points inside the file).
void ReportDeep(const GgufHeader& header, const DeepPlan& plan, const std::vector<DeepItemResult>& results,
                uint64_t file_size, uint32_t max_list_entries, FindingSink& sink, DeepSummary* summary);

}  // namespace ggufguard

#endif  // GGUFGUARD_DEEP_DEEP_H_
