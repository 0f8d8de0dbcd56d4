#include "ggufguard/validate.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/parse/parser.h"
#include "ggufguard/rules/rules.h"

namespace ggufguard {
namespace {

// Runs the rule families over a parsed header. The order matters: alignment
// fixes the data offset and the tensor rules fix sizes before the layout
// rules read them.
absl::Status RunRules(GgufHeader& header, FileView& file, FindingSink& sink, const Policy& policy) {
  RuleContext ctx{header, file, sink, policy};
  CheckMetadataEncoding(ctx);
  CheckAlignment(ctx);
  CheckTensorInfos(ctx);
  return CheckDataLayout(ctx);
}

absl::StatusOr<Report> Finish(ParseResult parsed, FileView& file, FindingSink& sink, const Policy& policy) {
  Report report;
  report.policy_name = policy.name;
  report.file_size = file.size();
  report.header_parsed = parsed.status == ParseStatus::kOk;
  report.header = std::move(parsed.header);
  if (report.header_parsed) {
    absl::Status s = RunRules(report.header, file, sink, policy);
    if (!s.ok()) return s;
  }
  report.has_errors = sink.has_errors();
  report.suppressed = sink.suppressed();
  report.findings = sink.TakeSorted();
  return report;
}

}  // namespace

Report ValidateBytes(absl::Span<const uint8_t> file, const Policy& policy) {
  FindingSink sink(policy);
  ParseOptions options{policy.limits, /*complete=*/true};
  ParseResult parsed = ParseHeader(file, options, sink);
  FileView view(file, nullptr);
  // A view over memory cannot fail to read.
  return *Finish(std::move(parsed), view, sink, policy);
}

absl::StatusOr<ValidatedFile> ValidateSource(ByteSource& source, const Policy& policy, const SourceOptions& options) {
  const uint64_t size = source.size();
  const uint64_t max_header = policy.limits.max_header_bytes;
  ValidatedFile out;
  uint64_t want = std::min(size, std::max<uint64_t>(options.first_prefix, 1));
  for (;;) {
    const uint64_t have = out.prefix_.size();
    out.prefix_.resize(want);
    absl::Status read = source.ReadAt(have, absl::MakeSpan(out.prefix_).subspan(have));
    if (!read.ok()) return read;

    FindingSink sink(policy);
    ParseOptions parse_options{policy.limits, /*complete=*/want == size};
    ParseResult parsed = ParseHeader(out.prefix_, parse_options, sink);
    if (parsed.status == ParseStatus::kNeedMoreBytes) {
      const uint64_t needed = parsed.bytes_needed;
      if (needed > size) {
        want = size;  // the file is too short: parse it whole for the finding
        continue;
      }
      if (needed > max_header) {
        sink.Add(RuleId::kHeaderSizeLimit, 0,
                 absl::StrCat("header of at least ", needed, " bytes exceeds the limit of ", max_header));
        parsed.status = ParseStatus::kFailed;
      } else {
        uint64_t grown = want > UINT64_MAX / options.growth ? UINT64_MAX : want * options.growth;
        want = std::min({size, std::max(grown, needed), std::max(max_header, needed)});
        continue;
      }
    }
    FileView view(out.prefix_, &source);
    absl::StatusOr<Report> report = Finish(std::move(parsed), view, sink, policy);
    if (!report.ok()) return report.status();
    out.report_ = std::move(*report);
    return out;
  }
}

}  // namespace ggufguard
