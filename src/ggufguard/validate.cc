#include "ggufguard/validate.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "ggufguard/base/checked_math.h"
#include "ggufguard/base/sha256.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/parse/parser.h"
#include "ggufguard/rules/rules.h"

namespace ggufguard {

const char* VerdictName(Report::Verdict verdict) {
  switch (verdict) {
    case Report::Verdict::kValid: return "valid";
    case Report::Verdict::kInvalid: return "invalid";
    case Report::Verdict::kInconclusive: return "inconclusive";
  }
  return "invalid";  // unreachable: every value is listed
}
namespace {

// The parser hashes the token array for GG9054 (StringArrayHashes), only
// when the policy runs that rule.
StringArrayHashes* TokenHashesWanted(const Policy& policy, StringArrayHashes& hashes) {
  return policy.Enabled(RuleId::kDuplicateToken) ? &hashes : nullptr;
}

// Phase 1: every rule that reads only the header. CheckAlignment and
// CheckTensorInfos fix the data offset and the tensors' sizes that later
// rules, and DataLayoutBoundaries, read.
void RunHeaderRules(Report& report, FileView& file, FindingSink& sink, const Policy& policy,
                    const StringArrayHashes& token_hashes) {
  GgufHeader& header = report.header;
  RuleContext ctx{header, file, sink, policy, &token_hashes};
  const KeyIndex keys(header);  // the metadata as llama.cpp resolves it
  CheckMetadataEncoding(ctx, keys);
  CheckAlignment(ctx);
  CheckTensorInfos(ctx);
  CheckKnownKeys(ctx, keys);
  CheckTokenizer(ctx, keys);
  CheckChatTemplates(ctx);
  CheckResourceUse(ctx, keys);
  CheckLoaderAsserts(ctx, keys);
  const size_t max_list = policy.limits.max_list_entries;
  report.key_collisions =
      FindKeyReadings(header, keys.groups(), max_list, max_list, &report.key_collisions_suppressed);
}

// Phase 2: the rules that need the file's size and the bytes no tensor owns.
absl::Status RunFileRules(Report& report, FileView& file, FindingSink& sink, const Policy& policy) {
  RuleContext ctx{report.header, file, sink, policy};
  CheckTensorAllocation(ctx);
  return CheckDataLayout(ctx);
}

Report StartReport(ParseResult parsed, const Policy& policy) {
  Report report;
  report.policy_name = policy.name;
  report.max_list_entries = policy.limits.max_list_entries;
  report.header_parsed = parsed.status == ParseStatus::kOk;
  report.header = std::move(parsed.header);
  return report;
}

void CloseReport(Report& report, FindingSink& sink) {
  report.has_errors = sink.has_errors();
  report.suppressed = sink.suppressed();
  report.findings = sink.TakeSorted();
}

// --deep runs whenever the header parsed, even with findings: the plan
// takes only tensors whose type, size and offset were computed without
// overflow, disjoint and (on a source) inside the file, so no data read can
// leave the file, and a data problem is reported next to a header problem.
// The same test on every route, so that a stream's verdict equals the file's.
bool DeepWanted(const Report& report, const DeepOptions& deep) { return deep.enabled && report.header_parsed; }

// The whole file's report: both phases, then the data when asked.
absl::StatusOr<Report> WholeFileReport(ParseResult parsed, const StringArrayHashes& token_hashes, FileView& file,
                                       ByteSource& source, FindingSink& sink, const Policy& policy,
                                       const DeepOptions& deep) {
  Report report = StartReport(std::move(parsed), policy);
  report.file_size = file.size();
  report.bytes_read = file.size();
  if (report.header_parsed) {
    RunHeaderRules(report, file, sink, policy, token_hashes);
    absl::Status s = RunFileRules(report, file, sink, policy);
    if (!s.ok()) return s;
    if (DeepWanted(report, deep)) {
      const DeepPlan plan = PlanDeepCheck(report.header, policy);
      std::vector<DeepItemResult> results;
      s = RunDeepOnSource(plan, source, deep, &results);
      if (!s.ok()) return s;
      ReportDeep(report.header, plan, results, file.size(), policy.limits.max_list_entries, sink, &report.deep);
    }
  }
  CloseReport(report, sink);
  return report;
}

}  // namespace

Report ValidateBytes(absl::Span<const uint8_t> file, const Policy& policy, const DeepOptions& deep) {
  FindingSink sink(policy);
  StringArrayHashes token_hashes(kTokenArrayKey);
  ParseOptions options{policy.limits, /*complete=*/true, TokenHashesWanted(policy, token_hashes)};
  ParseResult parsed = ParseHeader(file, options, sink);
  FileView view(file, nullptr);
  MemorySource memory(file);
  // A view over memory cannot fail to read.
  return *WholeFileReport(std::move(parsed), token_hashes, view, memory, sink, policy, deep);
}

// Reads the header into a ValidatedFile's prefix and parses it, from a
// positioned source whose size is known or from a stream whose size is
// learnt at its end: one loop for both, so that both give the same findings.
class PrefixReader {
 public:
  PrefixReader(ValidatedFile& out, ByteSource* source, ByteStream* stream, uint64_t max_bytes,
               std::optional<uint64_t> file_size = std::nullopt)
      : out_(out), source_(source), stream_(stream), max_bytes_(max_bytes), file_size_(file_size) {
    if (source_ != nullptr) size_ = source_->size();
  }

  // Leaves the parse and the findings it recorded in *parsed and *sink. An
  // error status means the input could not be read.
  absl::Status Read(const Policy& policy, const SourceOptions& options, StringArrayHashes* hashes, ParseResult* parsed,
                    std::optional<FindingSink>* sink) {
    const uint64_t max_header = policy.limits.max_header_bytes;
    uint64_t want = std::max<uint64_t>(options.first_prefix, 1);
    for (;;) {
      // The last prefix's parse is dropped first: its view (a record per
      // tensor info and KV) points into the buffer that Ensure may replace,
      // and must not be alive beside the old buffer, the new one and the
      // new parse.
      *parsed = ParseResult{};
      absl::Status read = Ensure(want);
      if (!read.ok()) return read;
      sink->emplace(policy);
      // A stream that is a prefix of a larger file (file_size_) is never
      // the whole file: running out of it is not the file's truncation.
      const bool complete = size_.has_value() && length() == *size_ && (!file_size_ || *file_size_ == *size_);
      *parsed = ParseHeader(out_.prefix(), ParseOptions{policy.limits, complete, TokenHashesWanted(policy, *hashes)},
                            **sink);
      if (parsed->status != ParseStatus::kNeedMoreBytes) return absl::OkStatus();
      const uint64_t needed = parsed->bytes_needed;
      if (stream_ != nullptr && file_size_ && size_.has_value() && !complete) {
        return absl::OutOfRangeError(absl::StrCat("the stream ended after ", *size_,
                                                  " bytes, inside the header, which needs at least ", needed,
                                                  " (the file has ", *file_size_, " by --file-size): read a longer prefix"));
      }
      if (size_.has_value() && needed > *size_) {
        // The file is too short: parse it whole for the truncation finding,
        // as long as holding it whole stays within the header limit.
        if (*size_ <= max_header) {
          want = *size_;
          continue;
        }
      } else if (needed <= max_header) {
        // Grow x`growth`, or to where the parser expects the header to end
        // when that is further, by at most max_overshoot past what was
        // asked for.
        const uint64_t grown = std::min(std::max(SatMul(want, std::max<uint64_t>(options.growth, 2)),
                                                 parsed->bytes_expected),
                                        SatAdd(needed, options.max_overshoot));
        want = std::min(std::max(needed, grown), max_header);
        continue;
      } else if (!size_.has_value() && length() <= max_header) {
        // A stream's size is unknown: read on, up to the limit, to tell a
        // header beyond the limit from a file that ends first (which a
        // path's size tells at once).
        want = SatAdd(max_header, 1);
        continue;
      }
      (*sink)->Add(RuleId::kHeaderSizeLimit, 0,
                   absl::StrCat("header of at least ", needed, " bytes exceeds the limit of ", max_header));
      parsed->status = ParseStatus::kFailed;
      return absl::OkStatus();
    }
  }

  uint64_t length() const { return out_.prefix_length_; }
  // The input's size: a source's from the start, a stream's once it ended.
  std::optional<uint64_t> size() const { return size_; }

 private:
  // Makes the prefix hold the input's first `want` bytes, or all of them
  // when it is shorter. A stream's buffer grows at most x2 past the bytes it
  // has received: no count from the file sizes an allocation before the
  // bytes are there.
  absl::Status Ensure(uint64_t want) {
    if (source_ != nullptr) {
      const uint64_t target = std::min(want, *size_);
      if (target <= length()) return absl::OkStatus();
      Grow(target);
      absl::Status s = source_->ReadAt(length(), absl::MakeSpan(out_.prefix_.data() + length(), target - length()));
      if (!s.ok()) return s;
      out_.prefix_length_ = target;
      return absl::OkStatus();
    }
    constexpr uint64_t kFirstStreamBuffer = uint64_t{64} << 10;
    // A stream is never buffered past its budget (--max-bytes): a header
    // that needs more cannot be judged (an I/O error); one that fits is,
    // and the data's reader finds out whether the stream goes on.
    if (want > length() && length() >= max_bytes_ && !size_.has_value()) return TooLong(max_bytes_);
    want = std::min(want, max_bytes_);
    while (length() < want && !size_.has_value()) {
      if (length() == out_.prefix_.size()) Grow(std::min(want, std::max(SatMul(length(), 2), kFirstStreamBuffer)));
      const size_t room = static_cast<size_t>(std::min<uint64_t>(want, out_.prefix_.size()) - length());
      absl::StatusOr<size_t> got = stream_->Read(absl::MakeSpan(out_.prefix_.data() + length(), room));
      if (!got.ok()) return got.status();
      if (*got == 0) {
        size_ = length();
        break;
      }
      out_.prefix_length_ += *got;
      if (file_size_ && length() > *file_size_) {
        return absl::InvalidArgumentError(
            absl::StrCat("the stream holds more than the ", *file_size_, " bytes that --file-size gives the file"));
      }
    }
    return absl::OkStatus();
  }

  void Grow(uint64_t capacity) {
    PageBuffer grown = PageBuffer::Uninitialised(static_cast<size_t>(capacity));
    if (length() > 0) std::memcpy(grown.data(), out_.prefix_.data(), length());
    out_.prefix_ = std::move(grown);
  }

 public:
  static absl::Status TooLong(uint64_t max_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the stream is longer than the limit of ", max_bytes, " bytes (--max-bytes)"));
  }

 private:
  ValidatedFile& out_;
  ByteSource* source_;
  ByteStream* stream_;
  uint64_t max_bytes_;
  std::optional<uint64_t> file_size_;  // a stream's whole file, when it is a prefix of it
  std::optional<uint64_t> size_;
};

absl::StatusOr<ValidatedFile> ValidateSource(ByteSource& source, const Policy& policy, const SourceOptions& options,
                                             const DeepOptions& deep) {
  ValidatedFile out;
  PrefixReader reader(out, &source, nullptr, UINT64_MAX);
  ParseResult parsed;
  std::optional<FindingSink> sink;
  StringArrayHashes token_hashes(kTokenArrayKey);
  absl::Status read = reader.Read(policy, options, &token_hashes, &parsed, &sink);
  if (!read.ok()) return read;
  FileView view(out.prefix(), &source);
  absl::StatusOr<Report> report =
      WholeFileReport(std::move(parsed), token_hashes, view, source, *sink, policy, deep);
  if (!report.ok()) return report.status();
  out.report_ = std::move(*report);
  return out;
}

absl::StatusOr<ValidatedFile> ValidateStream(ByteStream& stream, const Policy& policy, const StreamOptions& options,
                                             const DeepOptions& deep_options) {
  ValidatedFile out;
  const std::optional<uint64_t> file_size = options.header_only ? options.file_size : std::nullopt;
  PrefixReader reader(out, nullptr, &stream, options.max_bytes, file_size);
  ParseResult parsed;
  std::optional<FindingSink> sink;
  StringArrayHashes token_hashes(kTokenArrayKey);
  absl::Status read = reader.Read(policy, options.prefix, &token_hashes, &parsed, &sink);
  if (!read.ok()) return read;
  const absl::Span<const uint8_t> prefix = out.prefix();

  Report report = StartReport(std::move(parsed), policy);
  FileView header_view(prefix, nullptr);  // phase 1 reads no file bytes
  if (report.header_parsed) RunHeaderRules(report, header_view, *sink, policy, token_hashes);
  std::optional<DeepPlan> deep_plan;
  std::optional<DeepStreamChecker> deep;
  if (!options.header_only && DeepWanted(report, deep_options)) {
    deep_plan.emplace(PlanDeepCheck(report.header, policy));
    deep.emplace(*deep_plan);
    deep->Feed(0, prefix.data(), prefix.size());
  }
  // Stop here when asked to: the rest of the stream is never read. A
  // stream that has already ended has nothing left to skip.
  const bool stop = options.header_only || (options.fail_fast && sink->has_errors() && !reader.size());
  if (stop) {
    report.coverage = options.header_only ? Report::Coverage::kHeaderOnly : Report::Coverage::kStoppedAtError;
    report.bytes_read = prefix.size();
    report.file_size = prefix.size();
    if (file_size && report.header_parsed) {
      // The file's size is known: check what needs only the size.
      FileView sized = FileView::PrefixOfSize(prefix, *file_size);
      absl::Status s = RunFileRules(report, sized, *sink, policy);
      if (!s.ok()) return s;
      report.file_size = *file_size;
    }
    if (options.header_only) {
      // What follows the tensor infos is never checked, even where the
      // prefix happened to read it.
      const uint64_t header_end = report.header_parsed ? report.header.infos_end : prefix.size();
      report.not_checked.push_back(
          file_size ? absl::StrCat("bytes ", header_end, " to ", *file_size,
                                   " (padding, tensor data and the content of any trailing bytes): --header-only "
                                   "checks only the header")
                    : absl::StrCat("everything after byte ", header_end,
                                   " (the file's size, tensor bounds, padding, tensor data, trailing bytes): "
                                   "--header-only without --file-size"));
    } else {
      report.not_checked.push_back(
          absl::StrCat("everything after byte ", prefix.size(), ": --fail-fast stopped at the first error"));
    }
    CloseReport(report, *sink);
    out.report_ = std::move(report);
    return out;
  }

  // The data section, through a fixed buffer: what the layout rules need of
  // it goes into the zero map, every byte into the hash.
  StreamZeroMap zeros(prefix.size(),
                      report.header_parsed ? DataLayoutBoundaries(report.header) : std::vector<uint64_t>{});
  Sha256 hash;
  if (options.hash) hash.Update(prefix.data(), prefix.size());
  // --fail-fast in the data section: a byte past the end the header fixes is
  // GG6007, an error unless the policy says otherwise, whatever follows.
  std::optional<uint64_t> stop_after;
  if (options.fail_fast && report.header_parsed &&
      sink->policy().SeverityOf(RuleId::kTrailingBytes) == Severity::kError && sink->Enabled(RuleId::kTrailingBytes)) {
    stop_after = DataSectionEnd(report.header);
  }
  bool stopped = false;
  bool over_budget = false;
  if (!reader.size()) {
    std::unique_ptr<uint8_t[]> chunk(new uint8_t[std::max<size_t>(options.chunk, 1)]);
    const absl::Span<uint8_t> buffer(chunk.get(), std::max<size_t>(options.chunk, 1));
    for (;;) {
      absl::StatusOr<size_t> got = stream.Read(buffer);
      if (!got.ok()) return got.status();
      if (*got == 0) break;
      if (*got > options.max_bytes - zeros.position()) {
        // The budget ends reading inside the data: the header's verdict
        // stands, the rest of the file was not seen (inconclusive, below).
        over_budget = true;
        break;
      }
      if (deep) deep->Feed(zeros.position(), buffer.data(), *got);
      zeros.Feed(buffer.data(), *got);
      if (options.hash) hash.Update(buffer.data(), *got);
      if (stop_after && zeros.position() > *stop_after) {
        stopped = true;
        break;
      }
    }
  }
  const uint64_t size = zeros.position();
  if (over_budget) {
    // The file's size is unknown: the rules that need it (or its data)
    // would take the budget's end for the file's, so they do not run.
    report.coverage = Report::Coverage::kStoppedAtBudget;
    report.file_size = size;
    report.bytes_read = size;
    report.not_checked.push_back(absl::StrCat("everything after byte ", size,
                                              " (tensor bounds, padding, tensor data, trailing bytes): the stream "
                                              "is longer than --max-bytes ", options.max_bytes));
    CloseReport(report, *sink);
    out.report_ = std::move(report);
    return out;
  }
  FileView view(prefix, &zeros, size);
  report.file_size = size;
  report.bytes_read = size;
  if (report.header_parsed) {
    absl::Status s = RunFileRules(report, view, *sink, policy);
    if (!s.ok()) return s;
  }
  if (deep) {
    ReportDeep(report.header, *deep_plan, deep->TakeResults(), size, policy.limits.max_list_entries, *sink,
               &report.deep);
  }
  if (stopped) {
    report.coverage = Report::Coverage::kStoppedAtError;  // the size is "at least"
    report.not_checked.push_back(
        absl::StrCat("everything after byte ", size, ": --fail-fast stopped past the end of the data"));
  } else if (options.hash) {
    report.sha256 = hash.HexDigest();
  }
  CloseReport(report, *sink);
  out.report_ = std::move(report);
  return out;
}

}  // namespace ggufguard
