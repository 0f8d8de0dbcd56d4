// The public entry points: validate a GGUF file held in memory or read
// through a source, and get a report whose header view a loader can trust.
#ifndef GGUFGUARD_VALIDATE_H_
#define GGUFGUARD_VALIDATE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ggufguard/format/header.h"
#include "ggufguard/io/source.h"
#include "ggufguard/rules/finding.h"
#include "ggufguard/rules/policy.h"

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

  // Valid: parsed, and no finding of error severity (listed or not). Only
  // then does the header promise that every tensor lies inside the file,
  // aligned, without overlap, with a size free of overflow.
  bool valid() const { return header_parsed && !has_errors; }
};

// Validates a whole file held in memory. The report's views point into
// `file`, which must outlive it.
Report ValidateBytes(absl::Span<const uint8_t> file, const Policy& policy);

struct SourceOptions {
  uint64_t first_prefix = uint64_t{4} << 20;  // first read: 4 MiB
  uint64_t growth = 4;                        // then x4 until the header fits
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
  absl::Span<const uint8_t> prefix() const { return prefix_; }

 private:
  friend absl::StatusOr<ValidatedFile> ValidateSource(ByteSource&, const Policy&, const SourceOptions&);
  std::vector<uint8_t> prefix_;  // moving a vector keeps its buffer, so views stay valid
  Report report_;
};

// Reads the header through a growing prefix of `source` (a constant number of
// reads whatever the number of strings) and validates the file. An error
// status means the file could not be read, not that it is invalid.
absl::StatusOr<ValidatedFile> ValidateSource(ByteSource& source, const Policy& policy,
                                             const SourceOptions& options = {});

}  // namespace ggufguard

#endif  // GGUFGUARD_VALIDATE_H_
