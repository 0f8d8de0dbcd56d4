// Reading a stream's data section, the part after the header, once and
// forward through one fixed buffer: nothing of it is kept but what the
// layout rules need (the zero map) and what the caller's observer takes
// (the --deep checker, the --hash digest). The validation facade
// (validate.h) runs the file rules on what it leaves.
#ifndef GGUFGUARD_READ_DATA_PASS_H_
#define GGUFGUARD_READ_DATA_PASS_H_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ggufguard/io/source.h"

namespace ggufguard {

struct DataPassOptions {
  size_t chunk = size_t{1} << 20;  // the buffer, allocated once
  // The most bytes the whole stream may have, prefix included: a chunk that
  // would pass it is not read into the map (over_budget).
  uint64_t max_bytes = UINT64_MAX;
  // Stop once the stream passes this position (--fail-fast past the end of
  // the data the header declares: a byte there is already an error).
  std::optional<uint64_t> stop_after;
};

struct DataPassResult {
  bool over_budget = false;  // the stream is longer than max_bytes: its size is unknown
  bool stopped = false;      // stop_after was passed: the size is "at least"
};

// Reads `stream` to its end (or to a stop above), feeding each chunk to
// `zeros`, which starts where the prefix ended, and to `observe` with the
// chunk's position in the file. An error status means the stream could not
// be read.
absl::StatusOr<DataPassResult> ReadDataSection(
    ByteStream& stream, const DataPassOptions& options, StreamZeroMap& zeros,
    absl::FunctionRef<void(uint64_t position, absl::Span<const uint8_t> chunk)> observe);

}  // namespace ggufguard

#endif  // GGUFGUARD_READ_DATA_PASS_H_
