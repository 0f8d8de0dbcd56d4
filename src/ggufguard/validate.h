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
#include "ggufguard/read/prefix_reader.h"
#include "ggufguard/findings/finding.h"
#include "ggufguard/findings/policy.h"
#include "ggufguard/rules/loader_rules.h"
#include "ggufguard/rules/sampling_rules.h"
#include "ggufguard/rules/template_rules.h"
#include "ggufguard/runtimes/verdicts.h"

namespace ggufguard {

// A finding set aside by a suppression or a baseline (report/triage.h): listed
// apart from the findings, and left out of the verdict.
struct WaivedFinding {
  Finding finding;
  std::string by;      // "suppression" or "baseline"
  std::string reason;  // printable ASCII: the suppression's reason, escaped, or the baseline's name
};

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
  // The chat templates' digests, roots and folded names, computed by the
  // template rules under the policy's limits (renderers only print them).
  TemplateDigests templates;
  // A llamafile (GG9166): where the GGUF member judged as the file starts in
  // the file that carries it. Then file_size, every offset and the header
  // are the member's. Empty for any other file.
  std::optional<uint64_t> member_offset;
  // The general.sampling.* settings and what llama.cpp makes of them
  // (GG9163 judges them; renderers print them): at most twelve entries.
  SamplingSettings sampling;
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
    kStoppedAtBudget, // a byte budget (--max-bytes on a stream) ended reading before the file did
  };
  Coverage coverage = Coverage::kWholeFile;
  uint64_t bytes_read = 0;  // of the file, for a partial report
  // SHA-256 of the whole file, lower-case hex; empty when not computed.
  std::string sha256;
  // --deep: what the check of the tensor data found (deep.ran is false when
  // it was not asked for, or the header did not parse).
  DeepSummary deep;
  // --suppressions, --baseline (report/triage.h): the findings they waived,
  // and why a finding that one of them named still stands (an expired entry).
  std::vector<WaivedFinding> waived;
  std::vector<std::string> triage_notes;
  // What each runtime the policy judges would do with the file
  // (runtimes/verdicts.h), made from the findings and from what the runtime
  // rules found (runtime_issues: kept apart, since a runtime that was not
  // named makes no finding of its refusals).
  std::vector<RuntimeIssue> runtime_issues;
  std::vector<RuntimeVerdict> runtimes;

  // What this report's verdict does not cover, one human-readable item each
  // ("bytes 4096 to 1000000 (padding, tensor data, trailing bytes): --header-only");
  // empty when the whole file (or set) was checked. Filled by whoever stops
  // reading early: --header-only, a budget, a remote read of header and tail,
  // a missing shard of a split set.
  std::vector<std::string> not_checked;

  // Valid: parsed, and no finding of error severity (listed or not). Only
  // then does the header promise that every tensor lies inside the file,
  // aligned, without overlap, with a size free of overflow. It says nothing
  // of the bytes in not_checked: a gatekeeper asks verdict().
  bool valid() const { return header_parsed && !has_errors; }

  // The gatekeeper's answer. Any error makes a file invalid; a file with no
  // error whose check left something out (not_checked) is inconclusive,
  // never valid: no option or policy turns "could not verify" into a pass.
  enum class Verdict { kValid, kInvalid, kInconclusive };
  // A header that a budget stopped before it could be read (a remote
  // transfer budget: ValidatedFile::HeaderNotRead) is inconclusive too: no
  // finding, nothing judged.
  Verdict verdict() const {
    if (has_errors) return Verdict::kInvalid;
    if (!header_parsed) {
      const bool budget_spent = coverage == Coverage::kStoppedAtBudget && !not_checked.empty();
      return budget_spent ? Verdict::kInconclusive : Verdict::kInvalid;
    }
    return not_checked.empty() ? Verdict::kValid : Verdict::kInconclusive;
  }
};

// A finding about a finished report that its caller established outside
// the rules (ValidatedFile::AddFinding says more), under `policy`'s
// severities, disabled rules and per-rule cap, in the report's order.
// CountFindingIn says whether it is to be listed (false: disabled, or past
// the cap and counted); ListFindingIn lists it.
void AddFindingTo(Report& report, const Policy& policy, RuleId rule, uint64_t offset, std::string message);
bool CountFindingIn(Report& report, const Policy& policy, RuleId rule);
void ListFindingIn(Report& report, const Policy& policy, RuleId rule, uint64_t offset, std::string message);

// "valid", "invalid", "inconclusive": the verdict's name in every format.
const char* VerdictName(Report::Verdict verdict);

// Validates a whole file held in memory. The report's views point into
// `file`, which must outlive it.
Report ValidateBytes(absl::Span<const uint8_t> file, const Policy& policy, const DeepOptions& deep = {});


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
  // The stream's budget. A header that does not fit in it is an I/O error;
  // a stream that goes on past it after the header gives an inconclusive
  // report (Coverage::kStoppedAtBudget): the rest was not read.
  uint64_t max_bytes = UINT64_MAX;
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
  Report& mutable_report() { return report_; }  // for ApplyTriage (report/triage.h)
  // The whole file's SHA-256, where the caller read it in a pass of its own.
  void set_sha256(std::string hex) { report_.sha256 = std::move(hex); }
  // A finding about the file that the caller established outside the rules
  // (a remote file's hub metadata against its bytes, an adapter against its
  // base model), under `policy`'s severities, disabled rules and per-rule
  // cap, in the report's order.
  void AddFinding(const Policy& policy, RuleId rule, uint64_t offset, std::string message) {
    if (CountFinding(policy, rule)) ListFinding(policy, rule, offset, std::move(message));
    Rejudge(policy);
  }
  // The same, building the message only for a finding that is listed: a
  // crafted file may make a million findings of one rule.
  template <typename MakeMessage>
  void AddFindingLazy(const Policy& policy, RuleId rule, uint64_t offset, MakeMessage&& make) {
    if (CountFinding(policy, rule)) ListFinding(policy, rule, offset, make());
    Rejudge(policy);
  }
  // A file whose header could not be read within a budget (`spent`, for
  // which IsBudgetSpent holds): no finding, nothing judged, verdict
  // inconclusive with the budget named in not_checked. For a source that
  // spent its budget before a validator could start (a remote file's first
  // read); the validators make the same report when it happens inside them.
  static ValidatedFile HeaderNotRead(const Policy& policy, const absl::Status& spent, uint64_t bytes_read,
                                     std::optional<uint64_t> file_size);
  // The bytes read before the data section (at least the header, unless the
  // file ends first; a stream's may run past it).
  absl::Span<const uint8_t> prefix() const { return {prefix_.data(), prefix_length_}; }

 private:
  friend absl::StatusOr<ValidatedFile> ValidateSource(ByteSource&, const Policy&, const SourceOptions&,
                                                      const DeepOptions&);
  friend absl::StatusOr<ValidatedFile> ValidateStream(ByteStream&, const Policy&, const StreamOptions&,
                                                      const DeepOptions&);

  // Whether a finding of `rule` is to be listed; false when the policy
  // disables it, or when it is past the per-rule cap (then it is counted).
  bool CountFinding(const Policy& policy, RuleId rule);
  void ListFinding(const Policy& policy, RuleId rule, uint64_t offset, std::string message);
  // The runtimes' verdicts again, after a finding added outside the rules.
  void Rejudge(const Policy& policy);

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

// Validates `source` and hashes it in one forward read of every byte
// (ValidateStream over a SourceStream): the report's sha256 is the digest of
// exactly the bytes its verdict was computed from, even if the file changes
// while it is read. Validating, then hashing in a second read (or hashing,
// then validating) could pair the verdict of one content with the digest of
// another, and a scan cache, a baseline or a suppression keyed by that
// digest would then pass the other content. The findings are those
// ValidateSource gives for the same bytes, a llamafile's included: its
// member is validated as a stream within the pass, and the bytes the probe
// for it read are held to the bytes hashed (a file that changes between
// them is a DataLoss error). --deep runs in this thread, in the same pass.
absl::StatusOr<ValidatedFile> ValidateSourceHashed(ByteSource& source, const Policy& policy,
                                                   const DeepOptions& deep = {});

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
