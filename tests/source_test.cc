// Sources: the header is read through a growing prefix, so the number of
// reads does not grow with the number of strings; what the source path
// finds is what the in-memory path finds; streams are held under a cap;
// files that cannot be read are errors, not reports.
#include "ggufguard/io/source.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ggufguard/validate.h"
#include "gtest/gtest.h"
#include "tests/support/gguf_writer.h"
#include "tests/test_util.h"

namespace ggufguard {
namespace {

using testing::BuiltFile;
using testing::Describe;
using testing::GgufBuilder;
using testing::GgufValue;
using testing::HasFinding;
using testing::kF32;
using testing::KvAt;
using testing::RulesAt;

// A vocabulary header with `n` short strings, two tensors whose data goes
// past the default first read (a few MiB), and findings both inside the header (a
// bad token near the end) and past the first read (a non-zero pad byte).
struct VocabFile {
  BuiltFile file;
  uint64_t bad_token_at;
  uint64_t bad_pad_at;
};

VocabFile MakeVocabFile(int n) {
  std::vector<std::string> tokens;
  tokens.reserve(n);
  for (int i = 0; i < n; ++i) tokens.push_back(std::to_string(i % 1000));
  tokens[n - 3] = "bad\xff";
  // 2^20 + 1 floats: 4 MiB + 4 bytes each, so a 28-byte pad follows each.
  constexpr uint64_t kElems = (uint64_t{1} << 20) + 1;
  BuiltFile f = GgufBuilder()
                    .AddKv("general.architecture", GgufValue::Str("llama"))
                    .AddKv("tokenizer.ggml.tokens", GgufValue::StrArray(tokens))
                    .AddTensor("a", {kElems}, kF32, {.fill = testing::DataFill::kZeros})
                    .AddTensor("b", {kElems}, kF32, {.fill = testing::DataFill::kZeros})
                    .Build();
  VocabFile v{std::move(f), 0, 0};
  v.bad_token_at = testing::StringArrayElement(KvAt(v.file, 1), tokens, n - 3) + 3;
  v.bad_pad_at = v.file.file_size - 5;  // in the final padding, past the first read
  testing::PutU8(v.file.bytes, v.bad_pad_at, 0x5A);
  return v;
}

struct Counted {
  uint64_t reads;
  uint64_t bytes_read;
  std::vector<testing::RuleAt> findings;
};

Counted ValidateCounted(const BuiltFile& f, const SourceOptions& options) {
  MemorySource memory(f.bytes);
  CountingSource counting(memory);
  absl::StatusOr<ValidatedFile> v = ValidateSource(counting, testing::StructuralPolicy(), options);
  EXPECT_TRUE(v.ok()) << v.status();
  if (!v.ok()) return {};
  return Counted{counting.reads(), counting.bytes_read(), RulesAt(v->report())};
}

TEST(GrowingPrefixTest, ReadsDoNotGrowWithTheNumberOfStrings) {
  const VocabFile small = MakeVocabFile(20000);
  const VocabFile large = MakeVocabFile(80000);
  ASSERT_GT(small.file.header_end, 90u * 1024);
  ASSERT_GT(large.file.header_end, 3 * small.file.header_end);
  ASSERT_GT(small.file.file_size, 2 * SourceOptions{}.first_prefix);

  const Counted s = ValidateCounted(small.file, SourceOptions{});
  const Counted l = ValidateCounted(large.file, SourceOptions{});
  EXPECT_LE(s.reads, 3u);
  EXPECT_EQ(s.reads, l.reads);
  // Only the header and a window for the padding are read, not the data.
  EXPECT_LT(l.bytes_read, SourceOptions{}.first_prefix + (uint64_t{1} << 20));

  for (const VocabFile* v : {&small, &large}) {
    const Report bytes = testing::Validate(v->file);
    EXPECT_TRUE(HasFinding(bytes, RuleId::kInvalidUtf8, v->bad_token_at));
    EXPECT_TRUE(HasFinding(bytes, RuleId::kNonZeroPadding, v->bad_pad_at));
    EXPECT_EQ((v == &small ? s : l).findings, RulesAt(bytes)) << Describe(bytes);
  }
}

TEST(GrowingPrefixTest, SmallFirstReadGrowsGeometrically) {
  const SourceOptions tiny{.first_prefix = 64, .growth = 4};
  for (int n : {20000, 80000}) {
    const VocabFile v = MakeVocabFile(n);
    const Counted c = ValidateCounted(v.file, tiny);
    // 64 * 4^k reaches the header in about log4(header / 64) steps, plus the
    // padding windows.
    EXPECT_LE(c.reads, 12u) << n << " strings";
    EXPECT_GE(c.reads, 4u) << n << " strings";
    const Report bytes = testing::Validate(v.file);
    EXPECT_EQ(c.findings, RulesAt(bytes)) << Describe(bytes);
  }
}

TEST(GrowingPrefixTest, TruncatedFileGivesTheSameFinding) {
  const BuiltFile f = GgufBuilder()
                          .AddKv("general.architecture", GgufValue::Str("llama"))
                          .AddKv("tokenizer.ggml.tokens", GgufValue::StrArray(std::vector<std::string>(5000, "tok")))
                          .AddTensor("t", {16}, kF32)
                          .Build();
  const testing::KvFields tokens = KvAt(f, 1);
  for (uint64_t cut :
       {tokens.array_elements() + 1000, tokens.array_elements() + 50000, f.header_end - 3, f.data_offset + 10}) {
    const std::vector<uint8_t> bytes(f.bytes.begin(), f.bytes.begin() + static_cast<std::ptrdiff_t>(cut));
    const Report in_memory = ValidateBytes(bytes, testing::StructuralPolicy());
    EXPECT_FALSE(in_memory.valid());
    for (SourceOptions options : {SourceOptions{}, SourceOptions{.first_prefix = 64, .growth = 4},
                                  SourceOptions{.first_prefix = 1, .growth = 2}}) {
      MemorySource source(bytes);
      absl::StatusOr<ValidatedFile> v = ValidateSource(source, testing::StructuralPolicy(), options);
      ASSERT_TRUE(v.ok()) << v.status();
      EXPECT_EQ(RulesAt(v->report()), RulesAt(in_memory)) << "cut " << cut << "\n" << Describe(in_memory);
      EXPECT_FALSE(v->report().valid());
    }
  }
  // Cuts inside the token array (5000 strings of 8 + 3 bytes). With fewer
  // than 8 bytes per declared string left, the count itself is the lie;
  // past that, the length field of the string that runs past the end.
  auto cut_at = [&](uint64_t cut) {
    return std::vector<uint8_t>(f.bytes.begin(), f.bytes.begin() + static_cast<std::ptrdiff_t>(cut));
  };
  const std::vector<uint8_t> early = cut_at(tokens.array_elements() + 1000);
  EXPECT_TRUE(testing::FindingsAre(ValidateBytes(early, testing::StructuralPolicy()),
                                   {{RuleId::kTruncated, tokens.array_count()}}));
  const std::vector<uint8_t> late = cut_at(tokens.array_elements() + 50000);
  EXPECT_TRUE(testing::FindingsAre(ValidateBytes(late, testing::StructuralPolicy()),
                                   {{RuleId::kTruncated, tokens.array_elements() + 50000 / 11 * 11}}));
}

// The prefix and the views into it survive moving the result.
TEST(GrowingPrefixTest, ViewsPointIntoThePrefix) {
  const BuiltFile f = GgufBuilder().AddKv("general.name", GgufValue::Str("kept")).AddTensor("t", {4}, kF32).Build();
  MemorySource source(f.bytes);
  absl::StatusOr<ValidatedFile> v =
      ValidateSource(source, testing::StructuralPolicy(), {.first_prefix = 16, .growth = 2});
  ASSERT_TRUE(v.ok());
  ValidatedFile moved = std::move(*v);
  ASSERT_TRUE(moved.report().valid()) << Describe(moved.report());
  const std::string_view name = moved.report().header.kvs[0].value().AsString();
  EXPECT_EQ(name, "kept");
  const auto prefix = moved.prefix();
  EXPECT_GE(reinterpret_cast<const uint8_t*>(name.data()), prefix.data());
  EXPECT_LE(reinterpret_cast<const uint8_t*>(name.data() + name.size()), prefix.data() + prefix.size());
}

TEST(GrowingPrefixTest, EmptyAndTinySources) {
  for (uint64_t size : {0, 1, 23}) {
    std::vector<uint8_t> bytes(GgufBuilder().Build().bytes);
    bytes.resize(size);
    MemorySource source(bytes);
    absl::StatusOr<ValidatedFile> v = ValidateSource(source, testing::StructuralPolicy());
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(RulesAt(v->report()), RulesAt(ValidateBytes(bytes, testing::StructuralPolicy())));
    EXPECT_EQ(testing::CountRule(v->report(), RuleId::kTruncated), 1u);
  }
}

// A header past the policy's limit is refused without reading all of it.
TEST(GrowingPrefixTest, HeaderLimitStopsTheReads) {
  const VocabFile v = MakeVocabFile(80000);
  Policy p = testing::StructuralPolicy();
  p.limits.max_header_bytes = 64 * 1024;
  MemorySource memory(v.file.bytes);
  CountingSource counting(memory);
  absl::StatusOr<ValidatedFile> r = ValidateSource(counting, p, {.first_prefix = 4096, .growth = 4});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(HasFinding(r->report(), RuleId::kHeaderSizeLimit, 0)) << Describe(r->report());
  EXPECT_FALSE(r->report().valid());
  EXPECT_LE(counting.bytes_read(), 64u * 1024);
  EXPECT_TRUE(HasFinding(ValidateBytes(v.file.bytes, p), RuleId::kHeaderSizeLimit, 0));
}

// A source whose reads fail after a while: an error status, not a report.
class FailingSource final : public ByteSource {
 public:
  FailingSource(ByteSource& inner, int good_reads) : inner_(inner), good_reads_(good_reads) {}
  uint64_t size() const override { return inner_.size(); }
  absl::Status ReadAt(uint64_t offset, absl::Span<uint8_t> out) override {
    if (good_reads_-- <= 0) return absl::DataLossError("disk on fire");
    return inner_.ReadAt(offset, out);
  }

 private:
  ByteSource& inner_;
  int good_reads_;
};

TEST(GrowingPrefixTest, ReadErrorsAreStatusesNotFindings) {
  const VocabFile v = MakeVocabFile(20000);
  MemorySource memory(v.file.bytes);
  for (int good_reads : {0, 1, 2}) {
    FailingSource failing(memory, good_reads);
    absl::StatusOr<ValidatedFile> r =
        ValidateSource(failing, testing::StructuralPolicy(), {.first_prefix = 64 * 1024, .growth = 4});
    EXPECT_FALSE(r.ok()) << good_reads;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  }
}

TEST(MemorySourceTest, ReadsInsideOnly) {
  const std::vector<uint8_t> bytes = {1, 2, 3, 4};
  MemorySource s(bytes);
  std::vector<uint8_t> out(2);
  ASSERT_TRUE(s.ReadAt(2, absl::MakeSpan(out)).ok());
  EXPECT_EQ(out, (std::vector<uint8_t>{3, 4}));
  EXPECT_FALSE(s.ReadAt(3, absl::MakeSpan(out)).ok());
  EXPECT_FALSE(s.ReadAt(UINT64_MAX, absl::MakeSpan(out)).ok());
  EXPECT_TRUE(s.ReadAt(4, absl::Span<uint8_t>()).ok());
}

// --- Streams ---

// A pipe fed by a thread, so that data larger than the pipe buffer works.
class Pipe {
 public:
  explicit Pipe(std::vector<uint8_t> data) {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    read_fd_ = fds[0];
    writer_ = std::thread([fd = fds[1], data = std::move(data)] {
      size_t done = 0;
      while (done < data.size()) {
        ssize_t w = ::write(fd, data.data() + done, data.size() - done);
        if (w <= 0) break;  // the reader gave up (EPIPE): fine
        done += static_cast<size_t>(w);
      }
      ::close(fd);
    });
  }
  ~Pipe() {
    ::close(read_fd_);  // unblocks a writer whose reader stopped early
    writer_.join();
  }
  int fd() const { return read_fd_; }

 private:
  int read_fd_ = -1;
  std::thread writer_;
};

std::vector<uint8_t> Data(size_t n) {
  std::vector<uint8_t> d(n);
  for (size_t i = 0; i < n; ++i) d[i] = static_cast<uint8_t>(i * 31 + 7);
  return d;
}

TEST(FdStreamTest, ReadsAPipeToItsEnd) {
  std::signal(SIGPIPE, SIG_IGN);  // the writer may outlive a reader that stopped
  for (size_t n : {size_t{0}, size_t{1000}, size_t{3} << 20}) {
    SCOPED_TRACE(n);
    Pipe p(Data(n));
    FdStream in(p.fd(), "the pipe");
    std::vector<uint8_t> got;
    std::vector<uint8_t> buf(70000);
    for (;;) {
      absl::StatusOr<size_t> r = in.Read(absl::MakeSpan(buf));
      ASSERT_TRUE(r.ok()) << r.status();
      if (*r == 0) break;
      got.insert(got.end(), buf.begin(), buf.begin() + static_cast<long>(*r));
    }
    EXPECT_EQ(got, Data(n));
  }
}

// A parent may hand over a non-blocking stdin: an empty pipe then says
// EAGAIN, which is "not yet", not an I/O error.
TEST(FdStreamTest, ANonBlockingDescriptorWaitsForBytes) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_EQ(::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK), 0);
  std::thread writer([fd = fds[1]] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_EQ(::write(fd, "abc", 3), 3);
    ::close(fd);
  });
  FdStream in(fds[0], "the pipe");
  uint8_t buf[8];
  absl::StatusOr<size_t> first = in.Read(absl::MakeSpan(buf));  // before the writer wrote: EAGAIN inside
  writer.join();
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(*first, 3u);
  absl::StatusOr<size_t> end = in.Read(absl::MakeSpan(buf));
  ASSERT_TRUE(end.ok()) << end.status();
  EXPECT_EQ(*end, 0u);
  ::close(fds[0]);
}

TEST(FdStreamTest, BadDescriptorIsAnErrorThatNamesTheStream) {
  FdStream in(-1, "standard input");
  uint8_t b[4];
  absl::StatusOr<size_t> r = in.Read(absl::MakeSpan(b));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("standard input"), std::string_view::npos) << r.status();
}

// --- Files ---

TEST(FileSourceTest, MissingPathAndDirectoryAreErrors) {
  absl::StatusOr<std::unique_ptr<FileSource>> missing = FileSource::Open(testing::TempPath("does-not-exist.gguf"));
  EXPECT_FALSE(missing.ok());
  absl::StatusOr<std::unique_ptr<FileSource>> dir = FileSource::Open(::testing::TempDir());
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.status().code(), absl::StatusCode::kFailedPrecondition);
}

// A write lease (Samba's oplocks are leases) makes a non-blocking open fail
// with EWOULDBLOCK. Open must wait for the lease to break, as a plain open
// does, not report an I/O error. A child holds the lease and lets it go
// when the kernel tells it (SIGIO) that someone opened the file.
volatile sig_atomic_t lease_fd = -1;
void ReleaseLease(int) { ::fcntl(lease_fd, F_SETLEASE, F_UNLCK); }

TEST(FileSourceTest, WaitsForAWriteLeaseToBreak) {
  const std::string path = testing::TempPath("leased.gguf");
  testing::WriteFileBytes(path, std::vector<uint8_t>{'G', 'G', 'U', 'F'});
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    struct sigaction on_break = {};
    on_break.sa_handler = ReleaseLease;
    ::sigaction(SIGIO, &on_break, nullptr);
    ::alarm(20);  // never outlives a test that went wrong
    lease_fd = ::open(path.c_str(), O_RDONLY);
    const char answer = lease_fd >= 0 && ::fcntl(lease_fd, F_SETLEASE, F_WRLCK) == 0 ? 'y' : 'n';
    if (::write(ready[1], &answer, 1) != 1 || answer != 'y') ::_exit(1);
    for (;;) ::pause();
  }
  ::close(ready[1]);
  char answer = 0;
  ASSERT_EQ(::read(ready[0], &answer, 1), 1);
  ::close(ready[0]);
  if (answer != 'y') {
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    GTEST_SKIP() << "no write lease on this file system";
  }
  absl::StatusOr<std::unique_ptr<FileSource>> s = FileSource::Open(path);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)->size(), 4u);
  std::vector<uint8_t> magic(4);
  EXPECT_TRUE((*s)->ReadAt(0, absl::MakeSpan(magic)).ok());
  EXPECT_EQ(magic, (std::vector<uint8_t>{'G', 'G', 'U', 'F'}));
}

TEST(FileSourceTest, ReadsAndValidatesLikeMemory) {
  const BuiltFile f = GgufBuilder()
                          .AddKv("general.name", GgufValue::Str(std::string("nul\0inside", 10)))
                          .AddTensor("t", {100}, kF32)
                          .set_trailing_bytes({9, 9})
                          .Build();
  const std::string path = testing::TempPath("source_test.gguf");
  testing::WriteFileBytes(path, f.bytes);
  absl::StatusOr<std::unique_ptr<FileSource>> s = FileSource::Open(path);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)->size(), f.file_size);
  std::vector<uint8_t> head(4);
  ASSERT_TRUE((*s)->ReadAt(0, absl::MakeSpan(head)).ok());
  EXPECT_EQ(std::string(head.begin(), head.end()), "GGUF");
  EXPECT_FALSE((*s)->ReadAt(f.file_size - 2, absl::MakeSpan(head)).ok());

  absl::StatusOr<ValidatedFile> v = ValidateSource(**s, testing::StructuralPolicy(), {.first_prefix = 32, .growth = 2});
  ASSERT_TRUE(v.ok()) << v.status();
  const Report mem = testing::Validate(f);
  EXPECT_EQ(RulesAt(v->report()), RulesAt(mem));
  EXPECT_TRUE(HasFinding(mem, RuleId::kTrailingBytes, f.file_size - 2));
  EXPECT_TRUE(HasFinding(mem, RuleId::kNulInString, KvAt(f, 0).string_bytes() + 3));
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace ggufguard
