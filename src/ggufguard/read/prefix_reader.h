// Reading a header whose length is learnt by parsing it. The parser says
// how many bytes it needs (kNeedMoreBytes); this reads that many more, in a
// growing prefix, from a positioned source whose size is known (a path,
// memory, a remote file) or from a stream read forward once whose size is
// learnt at its end (standard input). One loop for both, so that both give
// the same findings. The validation facade (validate.h) runs the rules on
// what it leaves.
#ifndef GGUFGUARD_READ_PREFIX_READER_H_
#define GGUFGUARD_READ_PREFIX_READER_H_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "ggufguard/base/page_buffer.h"
#include "ggufguard/findings/finding.h"
#include "ggufguard/findings/policy.h"
#include "ggufguard/io/source.h"
#include "ggufguard/parse/parser.h"

namespace ggufguard {

struct SourceOptions {
  // First read: 2 MiB, one huge page; it holds the header of a ~50k-token
  // vocabulary (SmolLM2, GPT-2: ~1.8 MB). x4 then reaches 8 MiB, 4x that
  // vocabulary, in two reads. Every byte read past the header is copied for
  // nothing: docs/performance.md has the measurements behind these numbers.
  uint64_t first_prefix = uint64_t{2} << 20;
  uint64_t growth = 4;  // then x4 until the header fits
  // The most a growth step reads beyond what the parser asked for: a 130 MB
  // header then costs its size plus this, not x4 (docs/design.md).
  uint64_t max_overshoot = uint64_t{64} << 20;
};

class PrefixReader {
 public:
  // Fills `buffer` (which it may replace with a larger one), keeping the
  // number of bytes it holds in `length`. Exactly one of `source` and
  // `stream` is set. A stream is never buffered past `max_bytes`; with
  // `file_size`, the stream is a prefix of a file that long (--header-only
  // --file-size), so running out of it is not the file's truncation.
  PrefixReader(PageBuffer& buffer, size_t& length, ByteSource* source, ByteStream* stream, uint64_t max_bytes,
               std::optional<uint64_t> file_size = std::nullopt);

  // Reads until the header parses, fails, or exceeds the policy's header
  // limit (finding GG1007), and leaves the parse and the findings it
  // recorded in *parsed and *sink. `screen` (nullable) is handed to the
  // parser. An error status means the input could not be read.
  absl::Status Read(const Policy& policy, const SourceOptions& options, StringArrayScreen* screen, ParseResult* parsed,
                    std::optional<FindingSink>* sink);

  uint64_t length() const { return length_; }
  // The input's size: a source's from the start, a stream's once it ended.
  std::optional<uint64_t> size() const { return size_; }

  // The error for a stream longer than its --max-bytes budget.
  static absl::Status TooLong(uint64_t max_bytes);

 private:
  absl::Status Ensure(uint64_t want);
  void Grow(uint64_t capacity);

  PageBuffer& buffer_;
  size_t& length_;
  ByteSource* source_;
  ByteStream* stream_;
  uint64_t max_bytes_;
  std::optional<uint64_t> file_size_;  // a stream's whole file, when it is a prefix of it
  std::optional<uint64_t> size_;
};

}  // namespace ggufguard

#endif  // GGUFGUARD_READ_PREFIX_READER_H_
