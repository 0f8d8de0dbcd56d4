#include "ggufguard/validate.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "absl/strings/str_cat.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/parse/parser.h"
#include "ggufguard/rules/rules.h"

namespace ggufguard {
namespace {

// Runs the rule families over a parsed header. The order matters: alignment
// fixes the data offset and the tensor rules fix sizes before the layout
// and resource rules read them.
absl::Status RunRules(Report& report, FileView& file, FindingSink& sink, const Policy& policy) {
  GgufHeader& header = report.header;
  RuleContext ctx{header, file, sink, policy};
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
  return CheckDataLayout(ctx);
}

absl::StatusOr<Report> Finish(ParseResult parsed, FileView& file, FindingSink& sink, const Policy& policy) {
  Report report;
  report.policy_name = policy.name;
  report.file_size = file.size();
  report.max_list_entries = policy.limits.max_list_entries;
  report.header_parsed = parsed.status == ParseStatus::kOk;
  report.header = std::move(parsed.header);
  if (report.header_parsed) {
    absl::Status s = RunRules(report, file, sink, policy);
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

// Transparent huge pages make a multi-MiB prefix one page fault per 2 MiB
// instead of one per 4 KiB. On the 2-core VM of docs/performance.md a fault
// costs microseconds, and 4 KiB pages made reading a 1.8 MB header cost more
// than validating it. From 1 MiB up the buffer is rounded up to whole huge
// pages (untouched address space costs nothing; a touched huge page is
// zeroed once by the kernel); smaller ones take plain malloc, where a few
// 4 KiB faults are cheaper than zeroing 2 MiB. Where huge pages are off or
// unavailable, madvise fails or is ignored and the buffer is ordinary
// memory: only the speed differs.
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kHugePageFrom = size_t{1} << 20;

ValidatedFile::Buffer::Buffer(size_t size) : size_(size) {
  if (size == 0) return;
  void* p = nullptr;
  if (size >= kHugePageFrom) {
    const size_t rounded = (size + kHugePage - 1) & ~(kHugePage - 1);
    p = std::aligned_alloc(kHugePage, rounded);
#ifdef MADV_HUGEPAGE
    if (p != nullptr) (void)::madvise(p, rounded, MADV_HUGEPAGE);
#endif
  } else {
    p = std::malloc(size);
  }
  if (p == nullptr) throw std::bad_alloc();
  data_ = static_cast<uint8_t*>(p);
}

ValidatedFile::Buffer& ValidatedFile::Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    std::free(data_);
    data_ = other.data_;
    size_ = other.size_;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

ValidatedFile::Buffer::~Buffer() { std::free(data_); }

absl::StatusOr<ValidatedFile> ValidateSource(ByteSource& source, const Policy& policy, const SourceOptions& options) {
  const uint64_t size = source.size();
  const uint64_t max_header = policy.limits.max_header_bytes;
  ValidatedFile out;
  uint64_t want = std::min(size, std::max<uint64_t>(options.first_prefix, 1));
  for (;;) {
    // Grow the prefix: keep the bytes already read, read only the new ones.
    const uint64_t have = out.prefix_.size();
    ValidatedFile::Buffer grown(want);
    if (have > 0) std::memcpy(grown.data(), out.prefix_.data(), have);
    out.prefix_ = std::move(grown);
    absl::Status read = source.ReadAt(have, absl::MakeSpan(out.prefix_.data() + have, want - have));
    if (!read.ok()) return read;
    const absl::Span<const uint8_t> prefix(out.prefix_.data(), out.prefix_.size());

    FindingSink sink(policy);
    ParseOptions parse_options{policy.limits, /*complete=*/want == size};
    ParseResult parsed = ParseHeader(prefix, parse_options, sink);
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
        uint64_t grown_size = want > UINT64_MAX / options.growth ? UINT64_MAX : want * options.growth;
        want = std::min({size, std::max(grown_size, needed), std::max(max_header, needed)});
        continue;
      }
    }
    FileView view(prefix, &source);
    absl::StatusOr<Report> report = Finish(std::move(parsed), view, sink, policy);
    if (!report.ok()) return report.status();
    out.report_ = std::move(*report);
    return out;
  }
}

}  // namespace ggufguard
