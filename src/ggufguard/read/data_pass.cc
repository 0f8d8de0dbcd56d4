#include "ggufguard/read/data_pass.h"

#include <algorithm>
#include <memory>

namespace ggufguard {

absl::StatusOr<DataPassResult> ReadDataSection(
    ByteStream& stream, const DataPassOptions& options, StreamZeroMap& zeros,
    absl::FunctionRef<void(uint64_t position, absl::Span<const uint8_t> chunk)> observe) {
  DataPassResult result;
  const size_t chunk = std::max<size_t>(options.chunk, 1);
  std::unique_ptr<uint8_t[]> storage(new uint8_t[chunk]);
  const absl::Span<uint8_t> buffer(storage.get(), chunk);
  for (;;) {
    absl::StatusOr<size_t> got = stream.Read(buffer);
    if (!got.ok()) return got.status();
    if (*got == 0) return result;
    // position() <= max_bytes always holds here: the prefix was read within
    // the budget, and every chunk fed below kept within it.
    if (*got > options.max_bytes - zeros.position()) {
      result.over_budget = true;
      return result;
    }
    observe(zeros.position(), absl::MakeConstSpan(buffer.data(), *got));
    zeros.Feed(buffer.data(), *got);
    if (options.stop_after && zeros.position() > *options.stop_after) {
      result.stopped = true;
      return result;
    }
  }
}

}  // namespace ggufguard
