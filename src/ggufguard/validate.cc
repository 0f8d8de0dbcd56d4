#include "ggufguard/validate.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "ggufguard/base/checked_math.h"
#include "ggufguard/base/sha256.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/parse/parser.h"
#include "ggufguard/read/data_pass.h"
#include "ggufguard/read/llamafile.h"
#include "ggufguard/rules/rules.h"
#include "ggufguard/runtimes/runtime_rules.h"

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

// The parser screens the token array for GG9054 (StringArrayScreen), only
// when the policy runs that rule.
StringArrayScreen* TokenScreenWanted(const Policy& policy, StringArrayScreen& screen) {
  return policy.Enabled(RuleId::kDuplicateToken) ? &screen : nullptr;
}

// Phase 1: every rule that reads only the header. CheckAlignment and
// CheckTensorInfos fix the data offset and the tensors' sizes that later
// rules, and DataLayoutBoundaries, read.
void RunHeaderRules(Report& report, FileView& file, FindingSink& sink, const Policy& policy,
                    const StringArrayScreen& token_screen) {
  GgufHeader& header = report.header;
  RuleContext ctx{header, file, sink, policy, &token_screen};
  const KeyIndex keys(header);  // the metadata as llama.cpp resolves it
  CheckMetadataEncoding(ctx, keys);
  CheckAlignment(ctx);
  CheckTensorInfos(ctx);
  CheckKnownKeys(ctx, keys);
  CheckTokenizer(ctx, keys);
  CheckChatTemplates(ctx, report.templates);
  CheckResourceUse(ctx, keys);
  CheckLoaderAsserts(ctx, keys);
  CheckAdapter(ctx, keys);
  CheckClipProjector(ctx, keys);
  CheckModelLoad(ctx, keys);
  CheckLoaderCost(ctx);
  CheckSamplingSettings(ctx, keys, &report.sampling);
  CheckRuntimes(ctx, keys, &report.runtime_issues);
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

// A budget spent while reading (IsBudgetSpent, io/source.h): the findings
// so far stand, the rest of the file is listed as not checked, and the
// verdict is at best inconclusive.
void StopAtBudget(Report& report, const absl::Status& spent, std::string_view what_was_left) {
  report.coverage = Report::Coverage::kStoppedAtBudget;
  report.not_checked.push_back(absl::StrCat(Sv(what_was_left), ": ", spent.message()));
}

// What each judged runtime would do, from everything the report holds.
void JudgeReportRuntimes(Report& report, const Policy& policy) {
  report.runtimes = JudgeRuntimes(policy, report.findings, report.suppressed, report.runtime_issues);
}

void CloseReport(Report& report, FindingSink& sink) {
  report.has_errors = sink.has_errors();
  report.suppressed = sink.suppressed();
  report.findings = sink.TakeSorted();
  JudgeReportRuntimes(report, sink.policy());
}

// --deep runs whenever the header parsed, even with findings: the plan
// takes only tensors whose type, size and offset were computed without
// overflow, disjoint and (on a source) inside the file, so no data read can
// leave the file, and a data problem is reported next to a header problem.
// The same test on every route, so that a stream's verdict equals the file's.
bool DeepWanted(const Report& report, const DeepOptions& deep) { return deep.enabled && report.header_parsed; }

// The whole file's report: both phases, then the data when asked.
absl::StatusOr<Report> WholeFileReport(ParseResult parsed, const StringArrayScreen& token_screen, FileView& file,
                                       ByteSource& source, FindingSink& sink, const Policy& policy,
                                       const DeepOptions& deep) {
  Report report = StartReport(std::move(parsed), policy);
  report.file_size = file.size();
  report.bytes_read = file.size();
  if (report.header_parsed) {
    RunHeaderRules(report, file, sink, policy, token_screen);
    absl::Status s = RunFileRules(report, file, sink, policy);
    if (IsBudgetSpent(s)) {
      StopAtBudget(report, s, "the padding and trailing bytes not yet read, and any tensor data (--deep)");
    } else if (!s.ok()) {
      return s;
    } else if (DeepWanted(report, deep)) {
      const DeepPlan plan = PlanDeepCheck(report.header, policy);
      std::vector<DeepItemResult> results;
      s = RunDeepOnSource(plan, source, deep, &results);
      if (IsBudgetSpent(s)) {
        StopAtBudget(report, s, "the tensor data (--deep)");
      } else if (!s.ok()) {
        return s;
      } else {
        ReportDeep(report.header, plan, results, file.size(), policy.limits.max_list_entries, sink, &report.deep);
      }
    }
  }
  CloseReport(report, sink);
  return report;
}

}  // namespace

// A finding established outside the rules, added to a closed report under
// the policy's severities, disabled rules and per-rule cap, in the report's
// order: whether it is listed (the rest are counted as suppressed).
bool CountFindingIn(Report& report, const Policy& policy, RuleId rule) {
  if (!policy.Enabled(rule)) return false;
  if (policy.SeverityOf(rule) == Severity::kError) report.has_errors = true;
  // The policy's per-rule cap, as FindingSink keeps it: once a rule has
  // findings counted rather than listed, every later one is counted. The
  // count below runs at most max_findings_per_rule + 1 times a rule.
  auto counted = report.suppressed.find(rule);
  if (counted == report.suppressed.end()) {
    const auto listed = std::count_if(report.findings.begin(), report.findings.end(),
                                      [&](const Finding& f) { return f.rule == rule; });
    if (static_cast<uint64_t>(listed) < policy.limits.max_findings_per_rule) return true;
    counted = report.suppressed.emplace(rule, 0).first;
  }
  ++counted->second;
  return false;
}

void ListFindingIn(Report& report, const Policy& policy, RuleId rule, uint64_t offset, std::string message) {
  Finding finding{rule, policy.SeverityOf(rule), offset, std::move(message)};
  auto at = std::upper_bound(report.findings.begin(), report.findings.end(), finding, [](const Finding& a, const Finding& b) {
    return a.offset != b.offset ? a.offset < b.offset : static_cast<int>(a.rule) < static_cast<int>(b.rule);
  });
  report.findings.insert(at, std::move(finding));
}

void AddFindingTo(Report& report, const Policy& policy, RuleId rule, uint64_t offset, std::string message) {
  if (CountFindingIn(report, policy, rule)) ListFindingIn(report, policy, rule, offset, std::move(message));
}

namespace {

// GG9166 and what a llamafile's probe leaves unjudged, on the report of
// the member it judged (or of the file itself, when none was judged).
void AddLlamafileFindings(Report& report, const Policy& policy, const LlamafileProbe& probe) {
  if (probe.judged) report.member_offset = probe.offset;
  if (CountFindingIn(report, policy, RuleId::kLlamafile)) {
    ListFindingIn(report, policy, RuleId::kLlamafile, 0, LlamafileMessage(probe));
  }
  if (const std::string more = LlamafileNotChecked(probe); !more.empty()) report.not_checked.push_back(more);
}

Report ValidateGgufBytes(absl::Span<const uint8_t> file, const Policy& policy, const DeepOptions& deep) {
  FindingSink sink(policy);
  StringArrayScreen token_screen(kTokenArrayKey);
  ParseOptions options{policy.limits, /*complete=*/true, TokenScreenWanted(policy, token_screen)};
  ParseResult parsed = ParseHeader(file, options, sink);
  FileView view(file, nullptr);
  MemorySource memory(file);
  // A view over memory cannot fail to read.
  return *WholeFileReport(std::move(parsed), token_screen, view, memory, sink, policy, deep);
}

}  // namespace

Report ValidateBytes(absl::Span<const uint8_t> file, const Policy& policy, const DeepOptions& deep) {
  if (!StartsWithGgufMagic(file)) {
    // A llamafile: the member it carries is judged as the file (a memory
    // source cannot fail to read).
    MemorySource memory(file);
    const LlamafileProbe probe = *ProbeLlamafile(memory);
    if (probe.is_archive) {
      Report report = ValidateGgufBytes(probe.judged ? file.subspan(probe.offset, probe.size) : file, policy, deep);
      AddLlamafileFindings(report, policy, probe);
      return report;
    }
  }
  return ValidateGgufBytes(file, policy, deep);
}

bool ValidatedFile::CountFinding(const Policy& policy, RuleId rule) { return CountFindingIn(report_, policy, rule); }
void ValidatedFile::Rejudge(const Policy& policy) { JudgeReportRuntimes(report_, policy); }

void ValidatedFile::ListFinding(const Policy& policy, RuleId rule, uint64_t offset, std::string message) {
  ListFindingIn(report_, policy, rule, offset, std::move(message));
}

namespace {

// The report of a header that could not be read within a budget: nothing
// was judged.
Report HeaderNotRead(const Policy& policy, const absl::Status& spent, uint64_t bytes_read,
                     std::optional<uint64_t> file_size) {
  Report report = StartReport(ParseResult{}, policy);
  report.file_size = file_size.value_or(bytes_read);
  report.bytes_read = bytes_read;
  StopAtBudget(report, spent, "the whole file (its header could not be read)");
  FindingSink sink(policy);
  CloseReport(report, sink);
  return report;
}

}  // namespace

ValidatedFile ValidatedFile::HeaderNotRead(const Policy& policy, const absl::Status& spent, uint64_t bytes_read,
                                           std::optional<uint64_t> file_size) {
  ValidatedFile out;
  out.report_ = ggufguard::HeaderNotRead(policy, spent, bytes_read, file_size);
  return out;
}

absl::StatusOr<ValidatedFile> ValidateSource(ByteSource& source, const Policy& policy, const SourceOptions& options,
                                             const DeepOptions& deep) {
  ValidatedFile out;
  PrefixReader reader(out.prefix_, out.prefix_length_, &source, nullptr, UINT64_MAX);
  ParseResult parsed;
  std::optional<FindingSink> sink;
  StringArrayScreen token_screen(kTokenArrayKey);
  absl::Status read = reader.Read(policy, options, TokenScreenWanted(policy, token_screen), &parsed, &sink);
  if (IsBudgetSpent(read)) {
    out.report_ = HeaderNotRead(policy, read, out.prefix().size(), source.size());
    return out;
  }
  if (!read.ok()) return read;
  std::optional<LlamafileProbe> llamafile;
  absl::Status probe_spent;
  if (!StartsWithGgufMagic(out.prefix())) {
    absl::StatusOr<LlamafileProbe> probe = ProbeLlamafile(source);
    if (IsBudgetSpent(probe.status())) {
      probe_spent = probe.status();  // the file's bad magic stands; whether it is a llamafile was not read
    } else if (!probe.ok()) {
      return probe.status();
    } else if (probe->is_archive && probe->judged) {
      // The member is a GGUF file (the probe checked its magic), so this
      // call does not probe again.
      SubrangeSource member(source, probe->offset, probe->size);
      absl::StatusOr<ValidatedFile> inner = ValidateSource(member, policy, options, deep);
      if (inner.ok()) AddLlamafileFindings(inner->mutable_report(), policy, *probe);
      return inner;
    } else if (probe->is_archive) {
      llamafile = std::move(*probe);
    }
  }
  FileView view(out.prefix(), &source);
  absl::StatusOr<Report> report =
      WholeFileReport(std::move(parsed), token_screen, view, source, *sink, policy, deep);
  if (!report.ok()) return report.status();
  out.report_ = std::move(*report);
  if (llamafile) AddLlamafileFindings(out.report_, policy, *llamafile);
  if (!probe_spent.ok()) StopAtBudget(out.report_, probe_spent, "the end of the file (a llamafile's ZIP)");
  return out;
}

absl::StatusOr<ValidatedFile> ValidateStream(ByteStream& stream, const Policy& policy, const StreamOptions& options,
                                             const DeepOptions& deep_options) {
  ValidatedFile out;
  const std::optional<uint64_t> file_size = options.header_only ? options.file_size : std::nullopt;
  PrefixReader reader(out.prefix_, out.prefix_length_, nullptr, &stream, options.max_bytes, file_size);
  ParseResult parsed;
  std::optional<FindingSink> sink;
  StringArrayScreen token_screen(kTokenArrayKey);
  absl::Status read = reader.Read(policy, options.prefix, TokenScreenWanted(policy, token_screen), &parsed, &sink);
  if (IsBudgetSpent(read)) {
    out.report_ = HeaderNotRead(policy, read, out.prefix().size(), file_size);
    return out;
  }
  if (!read.ok()) return read;
  const absl::Span<const uint8_t> prefix = out.prefix();

  Report report = StartReport(std::move(parsed), policy);
  FileView header_view(prefix, nullptr);  // phase 1 reads no file bytes
  if (report.header_parsed) RunHeaderRules(report, header_view, *sink, policy, token_screen);
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

  // The data section, read once (read/data_pass.h): what the layout rules
  // need of it goes into the zero map, every byte to --deep and the hash.
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
  DataPassResult pass;
  if (!reader.size()) {  // a stream that ended within the prefix has no more bytes
    DataPassOptions pass_options{options.chunk, options.max_bytes, stop_after};
    absl::StatusOr<DataPassResult> read_data =
        ReadDataSection(stream, pass_options, zeros, [&](uint64_t position, absl::Span<const uint8_t> chunk) {
          if (deep) deep->Feed(position, chunk.data(), chunk.size());
          if (options.hash) hash.Update(chunk.data(), chunk.size());
        });
    if (IsBudgetSpent(read_data.status())) {
      // The source's own budget (a remote transfer's), not --max-bytes.
      StopAtBudget(report, read_data.status(),
                   absl::StrCat("everything after byte ", zeros.position(),
                                " (tensor bounds, padding, tensor data, trailing bytes)"));
      report.file_size = report.bytes_read = zeros.position();
      CloseReport(report, *sink);
      out.report_ = std::move(report);
      return out;
    }
    if (!read_data.ok()) return read_data.status();
    pass = *read_data;
  }
  const uint64_t size = zeros.position();
  if (pass.over_budget) {
    // The budget ended reading inside the data: the header's verdict
    // stands, the rest of the file was not seen (inconclusive). The file's
    // size is unknown: the rules that need it (or its data) would take the
    // budget's end for the file's, so they do not run.
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
  if (pass.stopped) {
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

absl::StatusOr<ValidatedFile> ValidateSourceHashed(ByteSource& source, const Policy& policy, const DeepOptions& deep) {
  // The first bytes say whether the file may be a llamafile. A GGUF file is
  // streamed and hashed as it is; should its first bytes change before the
  // pass, the pass judges what it reads, as a file of whatever kind.
  RecordingSource recorded(source);
  uint8_t head[4] = {};
  const size_t head_size = static_cast<size_t>(std::min<uint64_t>(sizeof(head), source.size()));
  if (absl::Status s = recorded.ReadAt(0, absl::MakeSpan(head, head_size)); !s.ok()) return s;
  if (StartsWithGgufMagic(absl::MakeConstSpan(head, head_size))) {
    SourceStream stream(source);
    StreamOptions options;
    options.hash = true;
    return ValidateStream(stream, policy, options, deep);
  }
  // Anything else is probed before the pass, and the probe's reads are
  // held to the bytes the pass hashes (CheckedWindowStream): a llamafile's
  // member is validated as a stream inside that pass, so the verdict, the
  // member's place and the digest are all of the same bytes, and the report
  // is the one the file gets where it is read in place (ValidateSource).
  absl::StatusOr<LlamafileProbe> probe = ProbeLlamafile(recorded);
  absl::Status probe_spent;
  if (IsBudgetSpent(probe.status())) {
    probe_spent = probe.status();  // the bad magic stands; whether it is a llamafile was not read
  } else if (!probe.ok()) {
    return probe.status();
  }
  const bool member = probe.ok() && probe->is_archive && probe->judged;
  CheckedWindowStream window(source, member ? probe->offset : 0, member ? probe->offset + probe->size : source.size(),
                             recorded.reads());
  StreamOptions options;
  options.hash = false;  // the window hashes the whole file, not only what it yields
  absl::StatusOr<ValidatedFile> out = ValidateStream(window, policy, options, deep);
  if (!out.ok()) return out;
  Report& report = out->mutable_report();
  // A digest only where the verdict covers every byte (as ValidateStream
  // gives one). A budget that ended the pass leaves the report inconclusive
  // and the rest unread: no digest, and the probe's tail is not held to
  // bytes that were never hashed, which is no pass either way.
  if (window.read_whole_window() && report.coverage == Report::Coverage::kWholeFile) {
    absl::StatusOr<std::string> digest = window.Finish();
    if (!digest.ok()) return digest.status();
    report.sha256 = *std::move(digest);
  }
  if (probe.ok() && probe->is_archive) AddLlamafileFindings(report, policy, *probe);
  if (!probe_spent.ok()) StopAtBudget(report, probe_spent, "the end of the file (a llamafile's ZIP)");
  return out;
}

}  // namespace ggufguard
