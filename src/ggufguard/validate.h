// The public entry points: validate a GGUF file held in memory or read
// through a source, and get a report whose header view a loader can trust.
#ifndef GGUFGUARD_VALIDATE_H_
#define GGUFGUARD_VALIDATE_H_

#include <cstdint>
#include <optional>
#include <map>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ggufguard/base/page_buffer.h"
#include "ggufguard/format/header.h"
#include "ggufguard/deep/deep.h"
#include "ggufguard/io/source.h"
#include "ggufguard/findings/finding.h"
#include "ggufguard/findings/policy.h"
#include "ggufguard/rules/loader_rules.h"

namespace ggufguard {

struct Report {
  std::string policy_name;
  uint64_t file_size = 0;
  // True when the header was parsed to the end of the tensor infos; when
  // false, `header` holds what was read before parsing stopped.
  bool header_parsed = false;
  GgufHeader header;  // views into the validated bytes
  std::vector<Finding> findings;              // by offset, then rule ID
  std::map<RuleId, uint64_t> suppressed;      // findings counted, not listed
  bool has_errors = false;
  // Groups of colliding keys (GG3011/GG3012) with each reader's pick, for the
  // JSON report; bounded by the policy's max_list_entries (FindKeyReadings).
  std::vector<KeyReadings> key_collisions;
  uint64_t key_collisions_suppressed = 0;  // groups not listed
  // The policy's bound on every other list a renderer builds from the header
  // (templates): a report never grows with the number of items in a file.
  uint32_t max_list_entries = 100;

  // How much of the file was read. Only kWholeFile ran the rules that need
  // its size and its data section (tensor bounds, padding, trailing bytes);
  // a kHeaderOnly report that is valid() says only that the header is.
  enum class Coverage {
    kWholeFile,
    kHeaderOnly,      // --header-only: the stream was read up to the end of the header
    kStoppedAtError,  // --fail-fast: reading stopped at the first error
  };
  Coverage coverage = Coverage::kWholeFile;
  uint64_t bytes_read = 0;  // of the file, for a partial report
  // SHA-256 of the whole file, lower-case hex; empty when not computed.
  std::string sha256;
  // --deep: what the check of the tensor data found (deep.ran is false when
  // it was not asked for, or the header did not parse).
  DeepSummary deep;

  // Valid: parsed, and no finding of error severity (listed or not). Only
  // then does the header promise that every tensor lies inside the file,
  // aligned, without overlap, with a size free of overflow.
  bool valid() const { return header_parsed && !has_errors; }
};

// Validates a whole file held in memory. The report's views point into
// `file`, which must outlive it.
Report ValidateBytes(absl::Span<const uint8_t> file, const Policy& policy, const DeepOptions& deep = {});

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

struct StreamOptions {
  SourceOptions prefix;           // how the header is buffered
  bool hash = true;               // SHA-256 of everything read, in the same pass
  bool fail_fast = false;         // stop reading at an error in the header, or past the data's end
  bool header_only = false;       // stop reading at the end of the header
  // With header_only: the whole file's size, when the stream is a prefix of
  // the file (an HTTP range request: --file-size). The rules that need only
  // the size then run too (tensors inside the file, GG9001, the end of the
  // file); the bytes past the prefix are not checked. A stream that ends
  // inside the header, before the file does, is an error naming how many
  // bytes the header needs.
  std::optional<uint64_t> file_size;
  uint64_t max_bytes = UINT64_MAX;  // reading more than this is an I/O error
  size_t chunk = size_t{1} << 20;   // the data section streams through a buffer this big
};

// A report together with the header bytes its views borrow.
class ValidatedFile {
 public:
  ValidatedFile() = default;
  ValidatedFile(ValidatedFile&&) = default;
  ValidatedFile& operator=(ValidatedFile&&) = default;
  ValidatedFile(const ValidatedFile&) = delete;
  ValidatedFile& operator=(const ValidatedFile&) = delete;

  const Report& report() const { return report_; }
  // The whole file's SHA-256, where the caller read it in a pass of its own.
  void set_sha256(std::string hex) { report_.sha256 = std::move(hex); }
  // A finding about the file that the caller established outside the rules
  // (a remote file's hub metadata against its bytes), under `policy`'s
  // severities and disabled rules, in the report's order.
  void AddFinding(const Policy& policy, RuleId rule, uint64_t offset, std::string message);
  // The bytes read before the data section (at least the header, unless the
  // file ends first; a stream's may run past it).
  absl::Span<const uint8_t> prefix() const { return {prefix_.data(), prefix_length_}; }

 private:
  friend absl::StatusOr<ValidatedFile> ValidateSource(ByteSource&, const Policy&, const SourceOptions&,
                                                      const DeepOptions&);
  friend absl::StatusOr<ValidatedFile> ValidateStream(ByteStream&, const Policy&, const StreamOptions&,
                                                      const DeepOptions&);
  friend class PrefixReader;

  // The prefix's memory, left uninitialised (each read overwrites what it
  // fills) and huge-page backed from a few hundred KiB up.
  PageBuffer prefix_;
  size_t prefix_length_ = 0;  // bytes of prefix_ that hold the file
  Report report_;
};

// Reads the header through a growing prefix of `source` (a constant number of
// reads whatever the number of strings) and validates the file. An error
// status means the file could not be read, not that it is invalid.
// With `deep.enabled`, every tensor's data is then checked (deep/deep.h) on
// deep.jobs threads.
absl::StatusOr<ValidatedFile> ValidateSource(ByteSource& source, const Policy& policy,
                                             const SourceOptions& options = {}, const DeepOptions& deep = {});

// Validates a stream read forward once (standard input, a pipe): the header
// is buffered as ValidateSource buffers it, then the data section streams
// through a fixed buffer, its zero checks recorded on the fly
// (StreamZeroMap), so memory is the header plus a constant for a file of any
// size. A whole-file report has the findings ValidateSource gives for the
// same bytes. An error status means the stream could not be read.
// With `deep.enabled`, the data is checked as it passes, in this thread.
absl::StatusOr<ValidatedFile> ValidateStream(ByteStream& stream, const Policy& policy,
                                             const StreamOptions& options = {}, const DeepOptions& deep = {});

}  // namespace ggufguard

#endif  // GGUFGUARD_VALIDATE_H_
