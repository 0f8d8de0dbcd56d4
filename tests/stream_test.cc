// Streaming validation (ValidateStream, `ggufguard validate -`): the findings
// a path gives for the same bytes, read forward once, in memory bounded by
// the header whatever the size of the file; and the zero checks of the data
// section, recorded on the fly (StreamZeroMap) and skipped over holes.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/io/source.h"
#include "ggufguard/rules/rules.h"
#include "ggufguard/validate.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/gguf_writer.h"
#include "tests/test_util.h"

namespace ggufguard {
namespace {

namespace fs = std::filesystem;
using testing::BuiltFile;
using testing::DataFill;
using testing::Describe;
using testing::GgufBuilder;
using testing::GgufValue;
using testing::kF32;

// Every finding with its message: equal reports are equal in all of it.
std::vector<std::string> Lines(const Report& r) {
  std::vector<std::string> out;
  for (const Finding& f : r.findings) {
    out.push_back(absl::StrCat(RuleCode(f.rule), "@", f.offset, " ", Sv(SeverityName(f.severity)), " ", f.message));
  }
  for (const auto& [rule, n] : r.suppressed) out.push_back(absl::StrCat(RuleCode(rule), " suppressed ", n));
  return out;
}

void ExpectSameReport(const Report& path, const Report& stream, const std::string& what) {
  EXPECT_EQ(Lines(path), Lines(stream)) << what;
  EXPECT_EQ(path.valid(), stream.valid()) << what;
  EXPECT_EQ(path.header_parsed, stream.header_parsed) << what;
  EXPECT_EQ(path.file_size, stream.file_size) << what;
  EXPECT_EQ(stream.coverage, Report::Coverage::kWholeFile) << what;
}

absl::StatusOr<ValidatedFile> Stream(absl::Span<const uint8_t> bytes, const Policy& policy, size_t max_read,
                                     StreamOptions options = {}) {
  MemoryStream in(bytes, max_read);
  return ValidateStream(in, policy, options);
}

std::vector<fs::path> GgufFilesUnder(const fs::path& root) {
  std::vector<fs::path> out;
  if (!fs::is_directory(root)) return out;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(root)) {
    if (e.is_regular_file() && e.path().extension() == ".gguf") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// corpus/ (one reproducer per rule, regressions, valid files) and the real
// files of ../shared, under both built-in policies, read in large and in odd
// small pieces from a small first prefix, so that the header is parsed again
// from growing prefixes and the data section arrives cut everywhere.
TEST(StreamTest, SameFindingsAsAPathOnEveryCorpusFile) {
  std::vector<fs::path> files = GgufFilesUnder(fs::path(GGUFGUARD_SOURCE_DIR) / "corpus");
  ASSERT_GT(files.size(), 50u) << "corpus/ not generated?";
  const std::vector<fs::path> real = GgufFilesUnder(testing::SharedDir() / "corpus-real");
  if (real.empty()) std::cerr << "note: ../shared/corpus-real not found; only corpus/ is compared\n";
  files.insert(files.end(), real.begin(), real.end());
  for (const fs::path& path : files) {
    const std::optional<std::vector<uint8_t>> bytes = testing::ReadFileBytes(path);
    ASSERT_TRUE(bytes.has_value()) << path;
    absl::StatusOr<std::unique_ptr<FileSource>> source = FileSource::Open(path.string());
    ASSERT_TRUE(source.ok()) << source.status();
    const absl::StatusOr<std::string> digest = HashSource(**source);
    ASSERT_TRUE(digest.ok()) << digest.status();
    for (const Policy& policy : {DefaultPolicy(), StrictPolicy()}) {
      absl::StatusOr<ValidatedFile> by_path = ValidateSource(**source, policy);
      ASSERT_TRUE(by_path.ok()) << by_path.status();
      // A llamafile's member is judged only where the end of the file can
      // be read (GG9166): a stream of one is the executable it starts with.
      const std::vector<Finding>& found = by_path->report().findings;
      if (std::any_of(found.begin(), found.end(), [](const Finding& f) { return f.rule == RuleId::kLlamafile; })) continue;
      for (const size_t max_read : {size_t{1} << 20, size_t{4093}}) {
        StreamOptions options;
        if (max_read != size_t{1} << 20) options.prefix.first_prefix = 100;
        options.chunk = 3000;
        const std::string what = absl::StrCat(path.string(), " policy ", policy.name, " reads of ", max_read);
        absl::StatusOr<ValidatedFile> streamed = Stream(*bytes, policy, max_read, options);
        ASSERT_TRUE(streamed.ok()) << what << ": " << streamed.status();
        ExpectSameReport(by_path->report(), streamed->report(), what);
        EXPECT_EQ(streamed->report().sha256, *digest) << what;
      }
    }
  }
}

// A small model cut at every length: tensors out of bounds, padding cut
// short, the end of the data section anywhere in a read.
TEST(StreamTest, SameFindingsAsAPathAtEveryCut) {
  const BuiltFile f = GgufBuilder()
                          .AddKv("general.architecture", GgufValue::Str("llama"))
                          .AddTensor("a", {5}, kF32)
                          .AddTensor("b", {3, 2}, kF32, {.fill = DataFill::kZeros})
                          .AddTensor("c", {7}, kF32)
                          .set_trailing_bytes({0, 0, 1})
                          .Build();
  const Policy policy = DefaultPolicy();
  for (size_t cut = 0; cut <= f.bytes.size(); ++cut) {
    const absl::Span<const uint8_t> part(f.bytes.data(), cut);
    MemorySource source(part);
    absl::StatusOr<ValidatedFile> by_path = ValidateSource(source, policy);
    ASSERT_TRUE(by_path.ok());
    for (const size_t max_read : {size_t{1}, size_t{13}, size_t{1} << 20}) {
      absl::StatusOr<ValidatedFile> streamed = Stream(part, policy, max_read);
      ASSERT_TRUE(streamed.ok()) << streamed.status();
      ExpectSameReport(by_path->report(), streamed->report(), absl::StrCat("cut at ", cut, ", reads of ", max_read));
    }
  }
}

TEST(StreamTest, NonZeroBytesInEachPadPastTheBufferedHeaderAreFound) {
  // The header is buffered first; every pad lies past it, so each zero
  // check is answered from the zero map, at its first and last byte.
  GgufBuilder builder;
  builder.AddAlignmentKv(64).AddTensor("a", {3}, kF32).AddTensor("b", {5}, kF32);
  const BuiltFile clean = builder.Build();
  std::vector<uint64_t> pad_bytes;
  for (uint64_t at = clean.header_end; at < clean.data_offset; ++at) pad_bytes.push_back(at);
  for (uint64_t at = clean.tensor_data_offsets[0] + clean.tensor_sizes[0]; at < clean.tensor_data_offsets[1]; ++at) {
    pad_bytes.push_back(at);
  }
  for (uint64_t at = clean.tensor_data_offsets[1] + clean.tensor_sizes[1]; at < clean.file_size; ++at) {
    pad_bytes.push_back(at);
  }
  ASSERT_GT(pad_bytes.size(), 60u);
  const Policy policy = testing::StructuralPolicy();
  ASSERT_TRUE(testing::IsValid(ValidateBytes(clean.bytes, policy)));
  StreamOptions options;
  options.prefix.first_prefix = clean.header_end;  // exactly the header: every pad is streamed
  for (const uint64_t at : pad_bytes) {
    std::vector<uint8_t> bytes = clean.bytes;
    bytes[at] = 0x5a;
    const Report by_bytes = ValidateBytes(bytes, policy);
    ASSERT_TRUE(testing::HasFinding(by_bytes, RuleId::kNonZeroPadding, at)) << Describe(by_bytes);
    absl::StatusOr<ValidatedFile> streamed = Stream(bytes, policy, 7, options);
    ASSERT_TRUE(streamed.ok()) << streamed.status();
    EXPECT_EQ(Lines(by_bytes), Lines(streamed->report())) << "non-zero byte at " << at;
  }
}

TEST(StreamZeroMapTest, AnswersOnBoundariesAndRefusesAnythingElse) {
  // Segments [10, 20) [20, 40) [40, end=50); a non-zero byte at 25 only.
  StreamZeroMap map(10, {40, 20, 20, 5, 10});
  std::vector<uint8_t> bytes(40, 0);
  bytes[25 - 10] = 1;
  map.Feed(bytes.data(), 7);
  map.Feed(bytes.data() + 7, bytes.size() - 7);
  ASSERT_EQ(map.position(), 50u);
  uint64_t first = 0;
  EXPECT_TRUE(*map.AllZero(10, 10, &first));
  EXPECT_TRUE(*map.AllZero(40, 10, &first));
  EXPECT_FALSE(*map.AllZero(20, 20, &first));
  EXPECT_EQ(first, 25u);
  EXPECT_FALSE(*map.AllZero(10, 40, &first));
  EXPECT_EQ(first, 25u);
  EXPECT_TRUE(*map.AllZero(20, 0, &first));
  // A range that does not start or end on a boundary cannot be answered
  // exactly from the map: an internal error, never a guess.
  EXPECT_EQ(map.AllZero(21, 19, &first).status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(map.AllZero(20, 5, &first).status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(map.AllZero(5, 5, &first).status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(map.AllZero(40, 11, &first).status().code(), absl::StatusCode::kInternal);
}

TEST(StreamTest, HeaderOnlyStopsAtTheEndOfTheHeader) {
  const BuiltFile f = GgufBuilder().AddKv("general.name", GgufValue::Str("x")).AddTensor("a", {1000}, kF32).Build();
  const Policy policy = testing::StructuralPolicy();
  StreamOptions options;
  options.header_only = true;
  options.prefix.first_prefix = 64;
  // What an HTTP range request of the header gives: the first N bytes.
  for (const uint64_t n : {f.header_end, f.data_offset, f.file_size}) {
    MemoryStream in(absl::MakeConstSpan(f.bytes).first(n), 16);
    absl::StatusOr<ValidatedFile> v = ValidateStream(in, policy, options);
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_TRUE(testing::IsValid(v->report())) << n;
    EXPECT_EQ(v->report().coverage, Report::Coverage::kHeaderOnly);
    EXPECT_TRUE(v->report().sha256.empty()) << "no digest of a part of the file";
  }
  // A range that ends inside the header says so.
  MemoryStream cut(absl::MakeConstSpan(f.bytes).first(f.header_end - 3));
  absl::StatusOr<ValidatedFile> v = ValidateStream(cut, policy, options);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_TRUE(testing::HasRule(v->report(), RuleId::kTruncated)) << Describe(v->report());
}

// --header-only --file-size: a prefix of a file whose size is known (from an
// HTTP HEAD, or fstat for a path). The rules that need only the size give
// what the whole file gives: tensors past the end, bytes after the data.
TEST(StreamTest, HeaderOnlyWithTheFileSizeChecksWhatTheSizeDecides) {
  const Policy policy = testing::StructuralPolicy();
  StreamOptions options;
  options.header_only = true;
  options.prefix.first_prefix = 64;
  auto header_only = [&](const BuiltFile& f, uint64_t prefix, std::optional<uint64_t> size) {
    options.file_size = size;
    MemoryStream in(absl::MakeConstSpan(f.bytes).first(prefix), 16);
    return ValidateStream(in, policy, options);
  };
  const BuiltFile whole = GgufBuilder().AddKv("general.name", GgufValue::Str("x")).AddTensor("a", {1000}, kF32).Build();
  const BuiltFile cut = GgufBuilder()
                            .AddKv("general.name", GgufValue::Str("x"))
                            .AddTensor("a", {1000}, kF32)
                            .set_truncate_to(whole.file_size - 100)
                            .Build();
  const BuiltFile trailing = GgufBuilder()
                                 .AddKv("general.name", GgufValue::Str("x"))
                                 .AddTensor("a", {1000}, kF32)
                                 .set_trailing_bytes({1, 2, 3})
                                 .Build();
  for (const BuiltFile* f : {&whole, &cut, &trailing}) {
    const Report by_path = ValidateBytes(f->bytes, policy);
    for (const uint64_t prefix : {f->header_end, f->data_offset}) {
      absl::StatusOr<ValidatedFile> v = header_only(*f, prefix, f->file_size);
      ASSERT_TRUE(v.ok()) << v.status();
      EXPECT_EQ(Lines(v->report()), Lines(by_path)) << prefix;
      EXPECT_EQ(v->report().file_size, f->file_size);
      EXPECT_EQ(v->report().bytes_read, prefix);
      EXPECT_EQ(v->report().coverage, Report::Coverage::kHeaderOnly);
    }
  }
  EXPECT_TRUE(testing::HasRule(ValidateBytes(cut.bytes, policy), RuleId::kTensorOutOfBounds));
  EXPECT_TRUE(testing::HasRule(ValidateBytes(trailing.bytes, policy), RuleId::kTrailingBytes));
  // Without the size, neither is seen.
  absl::StatusOr<ValidatedFile> blind = header_only(cut, cut.header_end, std::nullopt);
  ASSERT_TRUE(blind.ok());
  EXPECT_TRUE(testing::IsValid(blind->report()));

  // A prefix that ends inside the header of a longer file is not the file's
  // truncation: an error that says how many bytes the header needs.
  absl::StatusOr<ValidatedFile> short_range = header_only(whole, whole.header_end - 3, whole.file_size);
  ASSERT_FALSE(short_range.ok());
  EXPECT_EQ(short_range.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(short_range.status().message().find(absl::StrCat("needs at least ", whole.header_end)), std::string::npos)
      << short_range.status();
  // The whole file, cut inside the header, declared at its own size: a
  // truncation finding, as by path.
  absl::StatusOr<ValidatedFile> truncated = header_only(whole, whole.header_end - 3, whole.header_end - 3);
  ASSERT_TRUE(truncated.ok()) << truncated.status();
  EXPECT_TRUE(testing::HasRule(truncated->report(), RuleId::kTruncated));
  // A stream longer than the size it is said to have.
  absl::StatusOr<ValidatedFile> longer = header_only(whole, whole.file_size, whole.header_end);
  ASSERT_FALSE(longer.ok());
  EXPECT_EQ(longer.status().code(), absl::StatusCode::kInvalidArgument) << longer.status();
}

TEST(StreamTest, FailFastStopsReadingAtAHeaderError) {
  const BuiltFile f = GgufBuilder()
                          .AddKv("general.architecture", GgufValue::Str("llama"))
                          .AddKv("general.alignment", GgufValue::U32(3))  // not a power of two: an error
                          .AddTensor("a", {1 << 20}, kF32)
                          .Build();
  ASSERT_FALSE(ValidateBytes(f.bytes, DefaultPolicy()).valid());
  StreamOptions options;
  options.fail_fast = true;
  options.prefix.first_prefix = 4096;
  MemoryStream in(f.bytes, 4096);
  absl::StatusOr<ValidatedFile> v = ValidateStream(in, DefaultPolicy(), options);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_FALSE(v->report().valid());
  EXPECT_EQ(v->report().coverage, Report::Coverage::kStoppedAtError);
  EXPECT_LT(in.consumed(), f.bytes.size() / 100) << "read on after the error";
  EXPECT_EQ(v->report().bytes_read, in.consumed());
  // Without --fail-fast the same stream is read to its end.
  MemoryStream all(f.bytes, 4096);
  ASSERT_TRUE(ValidateStream(all, DefaultPolicy()).ok());
  EXPECT_EQ(all.consumed(), f.bytes.size());
}

TEST(StreamTest, FailFastStopsReadingPastTheEndOfTheData) {
  // A valid header and data, then 4 MiB appended (a second file): the
  // stream is cut soon after the data's end, with GG6007.
  GgufBuilder b;
  b.AddTensor("a", {1000}, kF32).set_trailing_bytes(std::vector<uint8_t>(4 << 20, 0x50));
  const BuiltFile f = b.Build();
  StreamOptions options;
  options.fail_fast = true;
  options.prefix.first_prefix = 4096;
  options.chunk = 64 << 10;
  MemoryStream in(f.bytes, 64 << 10);
  absl::StatusOr<ValidatedFile> v = ValidateStream(in, testing::StructuralPolicy(), options);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_TRUE(testing::HasRule(v->report(), RuleId::kTrailingBytes)) << Describe(v->report());
  EXPECT_EQ(v->report().coverage, Report::Coverage::kStoppedAtError);
  EXPECT_LT(in.consumed(), f.bytes.size() / 10);
  // The same file without the trailing bytes is read to its end and valid.
  const BuiltFile clean = GgufBuilder().AddTensor("a", {1000}, kF32).Build();
  MemoryStream whole(clean.bytes, 64 << 10);
  v = ValidateStream(whole, testing::StructuralPolicy(), options);
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(testing::IsValid(v->report()));
  EXPECT_EQ(v->report().coverage, Report::Coverage::kWholeFile);
}

TEST(StreamTest, MaxBytesIsEnforcedExactly) {
  const BuiltFile f = GgufBuilder().AddTensor("a", {300}, kF32).Build();
  for (const size_t first_prefix : {size_t{32}, size_t{1} << 20}) {
    StreamOptions options;
    options.prefix.first_prefix = first_prefix;
    options.max_bytes = f.bytes.size();
    EXPECT_TRUE(Stream(f.bytes, DefaultPolicy(), 100, options).ok());
    options.max_bytes = f.bytes.size() - 1;
    // The header fits, the data does not: the header's verdict with the
    // rest not checked, never a pass.
    absl::StatusOr<ValidatedFile> over = Stream(f.bytes, testing::StructuralPolicy(), 100, options);
    ASSERT_TRUE(over.ok()) << over.status();
    EXPECT_EQ(over->report().coverage, Report::Coverage::kStoppedAtBudget);
    EXPECT_EQ(over->report().verdict(), Report::Verdict::kInconclusive) << testing::Describe(over->report());
    ASSERT_EQ(over->report().not_checked.size(), 1u);
    EXPECT_NE(over->report().not_checked[0].find("--max-bytes"), std::string::npos);
    EXPECT_LE(over->report().bytes_read, options.max_bytes);
    // A budget the header does not fit in: nothing can be judged.
    options.max_bytes = f.header_end - 1;
    absl::StatusOr<ValidatedFile> short_budget = Stream(f.bytes, DefaultPolicy(), 100, options);
    ASSERT_FALSE(short_budget.ok());
    EXPECT_EQ(short_budget.status().code(), absl::StatusCode::kResourceExhausted);
  }
}

// An error found before the budget ends keeps the file invalid: the budget
// makes a clean header inconclusive, never a bad one.
TEST(StreamTest, AnErrorBeforeTheBudgetStaysInvalid) {
  const BuiltFile f = GgufBuilder().AddKv("general.alignment", GgufValue::U32(3)).AddTensor("a", {300}, kF32).Build();
  StreamOptions options;
  options.max_bytes = f.bytes.size() - 1;
  absl::StatusOr<ValidatedFile> over = Stream(f.bytes, DefaultPolicy(), 100, options);
  ASSERT_TRUE(over.ok()) << over.status();
  EXPECT_EQ(over->report().verdict(), Report::Verdict::kInvalid);
  EXPECT_FALSE(over->report().not_checked.empty());
}

TEST(StreamTest, AHeaderPastTheLimitIsAFindingNotAnAllocation) {
  // A 40-byte stream whose first key claims 2^40 bytes, and one that really
  // holds more than the (small) header limit: both are refused with the
  // findings a path gives, having buffered no more than the bytes received.
  Policy policy = DefaultPolicy();
  policy.limits.max_header_bytes = 4096;
  BuiltFile f = GgufBuilder().AddKvWithKeyLength("k", uint64_t{1} << 40, GgufValue::U8(1)).Build();
  std::vector<uint8_t> long_file = f.bytes;
  long_file.resize(10000, 0x41);
  for (const std::vector<uint8_t>* bytes : {&f.bytes, &long_file}) {
    MemorySource source(*bytes);
    absl::StatusOr<ValidatedFile> by_path = ValidateSource(source, policy);
    ASSERT_TRUE(by_path.ok());
    EXPECT_FALSE(by_path->report().valid());
    StreamOptions options;
    options.prefix.first_prefix = 256;  // below the limit, so the limit is what bounds the buffer
    absl::StatusOr<ValidatedFile> streamed = Stream(*bytes, policy, 1000, options);
    ASSERT_TRUE(streamed.ok()) << streamed.status();
    ExpectSameReport(by_path->report(), streamed->report(), absl::StrCat(bytes->size(), " bytes"));
    EXPECT_LE(streamed->prefix().size(), policy.limits.max_header_bytes + 1);
  }
}

// --- Files on disk: holes, and a pipe larger than any in-memory cap ---

// Whether the file system of `path` reports holes (tmpfs and ext4 do).
bool ReportsHoles(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const off_t hole = ::lseek(fd, 0, SEEK_HOLE);
  const off_t end = ::lseek(fd, 0, SEEK_END);
  ::close(fd);
  return hole >= 0 && hole < end;
}

TEST(HoleTest, PaddingInAHoleIsNotRead) {
  // 1 MiB alignment, tiny all-zero tensors: ~1 MiB of padding after each,
  // all of it (and the tensors) a hole in the sparse file.
  GgufBuilder builder;
  builder.AddAlignmentKv(1u << 20);
  for (int i = 0; i < 24; ++i) builder.AddTensor(absl::StrCat("t", i), {16}, kF32, {.fill = DataFill::kZeros});
  const std::string path = testing::TempPath("holes.gguf");
  ASSERT_TRUE(builder.WriteToFile(path, /*sparse_data=*/true).ok());
  if (!ReportsHoles(path)) GTEST_SKIP() << "the temp file system reports no holes";
  absl::StatusOr<std::unique_ptr<FileSource>> file = FileSource::Open(path);
  ASSERT_TRUE(file.ok());
  ASSERT_GT((*file)->size(), uint64_t{23} << 20);
  CountingSource counted(**file);
  const Policy policy = testing::StructuralPolicy();
  absl::StatusOr<ValidatedFile> v = ValidateSource(counted, policy);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_TRUE(testing::IsValid(v->report()));
  // The first read (2 MiB) and nothing of the ~22 MiB of padding past it.
  EXPECT_LE(counted.bytes_read(), SourceOptions{}.first_prefix + (uint64_t{64} << 10));
  // And a non-zero byte in a pad past a hole is still found.
  const BuiltFile layout = builder.Layout();
  const uint64_t at = layout.tensor_data_offsets[20] + layout.tensor_sizes[20] + 1000;
  {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    const uint8_t x = 7;
    ASSERT_EQ(::pwrite(fd, &x, 1, static_cast<off_t>(at)), 1);
    ::close(fd);
  }
  file = FileSource::Open(path);
  ASSERT_TRUE(file.ok());
  v = ValidateSource(**file, policy);
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(testing::HasFinding(v->report(), RuleId::kNonZeroPadding, at)) << Describe(v->report());
  fs::remove(path);
}

// The CLI through a shell pipe: peak memory of the shell and everything it
// waited for (cat and ggufguard), from wait4.
struct PipeRun {
  int exit_code = -1;
  uint64_t max_rss_bytes = 0;
  std::string out;
};

PipeRun RunPipe(const std::string& command) {
  PipeRun r;
  const std::string out_path = testing::TempPath("pipe_out.json");
  const pid_t pid = ::fork();
  if (pid == 0) {
    const std::string full = command + " > '" + out_path + "'";
    ::execl("/bin/sh", "sh", "-c", full.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  struct rusage ru {};
  if (pid < 0 || ::wait4(pid, &status, 0, &ru) != pid) return r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.max_rss_bytes = static_cast<uint64_t>(ru.ru_maxrss) * 1024;
  if (auto bytes = testing::ReadFileBytes(out_path)) r.out.assign(bytes->begin(), bytes->end());
  fs::remove(out_path);
  return r;
}

TEST(PipeTest, AFileLargerThanMemoryCapsStreamsInBoundedMemory) {
  // 1.25 GiB, past the 1 GiB that standard input was once buffered to, and
  // sparse, so it costs no disk: one F32 tensor of zeros and a small header.
  const uint64_t elements = (uint64_t{5} << 30) / 16;
  GgufBuilder builder;
  builder.AddKv("general.architecture", GgufValue::Str("llama"))
      .AddTensor("big", {elements}, kF32, {.fill = DataFill::kZeros});
  const std::string path = testing::TempPath("big_pipe.gguf");
  ASSERT_TRUE(builder.WriteToFile(path, /*sparse_data=*/true).ok());
  const uint64_t size = fs::file_size(path);
  ASSERT_GT(size, uint64_t{5} << 28);
  const std::string cli = GGUFGUARD_CLI_PATH;
  const PipeRun r = RunPipe("cat '" + path + "' | '" + cli + "' validate --no-hash --format json -");
  const PipeRun by_path = RunPipe("'" + cli + "' validate --format json '" + path + "'");
  fs::remove(path);
  ASSERT_NE(r.exit_code, 3) << "an I/O error: " << r.out;
  EXPECT_EQ(r.exit_code, by_path.exit_code);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const nlohmann::json p = nlohmann::json::parse(by_path.out);
  EXPECT_EQ(j["files"][0]["verdict"], p["files"][0]["verdict"]);
  EXPECT_EQ(j["files"][0]["findings"], p["files"][0]["findings"]);
  EXPECT_EQ(j["files"][0]["header"]["file_size"], size);
  EXPECT_EQ(j["files"][0]["coverage"], "whole-file");
  // No data-section finding: the zero tensor and its padding streamed clean.
  for (const auto& f : j["files"][0]["findings"]) EXPECT_NE(f["rule"].get<std::string>().substr(0, 3), "GG6") << f;
  // Bounded by the header plus a constant, not by the file: the sanitizer
  // runtime of the test build alone takes tens of MiB, hence the margin.
  EXPECT_LT(r.max_rss_bytes, uint64_t{256} << 20) << "peak RSS of the pipe";
}

TEST(PipeTest, StandardInputHasTheDigestOfTheWholeFile) {
  const BuiltFile f = GgufBuilder().AddKv("general.name", GgufValue::Str("x")).AddTensor("a", {100000}, kF32).Build();
  const std::string path = testing::TempPath("digest.gguf");
  testing::WriteFileBytes(path, f.bytes);
  absl::StatusOr<std::unique_ptr<FileSource>> source = FileSource::Open(path);
  ASSERT_TRUE(source.ok());
  const std::string digest = *HashSource(**source);
  const std::string cli = GGUFGUARD_CLI_PATH;
  const PipeRun piped = RunPipe("cat '" + path + "' | '" + cli + "' validate --format json -");
  ASSERT_TRUE(piped.exit_code == 0 || piped.exit_code == 1) << piped.out;
  EXPECT_EQ(nlohmann::json::parse(piped.out)["files"][0]["sha256"], digest);
  const PipeRun by_path = RunPipe("'" + cli + "' validate --hash --format json '" + path + "'");
  ASSERT_EQ(by_path.exit_code, piped.exit_code) << by_path.out;
  EXPECT_EQ(nlohmann::json::parse(by_path.out)["files"][0]["sha256"], digest);
  // Header only, as `curl -r 0-N URL | ggufguard validate --header-only -`.
  const PipeRun head = RunPipe("head -c " + std::to_string(f.data_offset) + " '" + path + "' | '" + cli +
                               "' validate --header-only --format json -");
  // No error in the header: inconclusive (5), since the data was not read.
  ASSERT_EQ(head.exit_code, piped.exit_code == 0 ? 5 : piped.exit_code) << head.out;
  EXPECT_EQ(nlohmann::json::parse(head.out)["files"][0]["coverage"], "header-only");
  fs::remove(path);
}

}  // namespace
}  // namespace ggufguard
