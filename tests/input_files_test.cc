// The small files an operator hands the tool (a token, a policy,
// suppressions, a baseline, a --files-from list): each read bounded as it
// comes (io/bounded_read.h), and each JSON one read strictly
// (base/strict_json.h): a key given twice, a blank reason or a day that is
// not in the calendar is a usage error that names the line.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ggufguard/base/sha256.h"
#include "ggufguard/base/strict_json.h"
#include "ggufguard/cli/cli.h"
#include "ggufguard/cli/scan_walk.h"
#include "ggufguard/findings/policy_file.h"
#include "ggufguard/io/bounded_read.h"
#include "ggufguard/report/triage.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace ggufguard {
namespace {

struct CliResult {
  int code;
  std::string out, err;
};

CliResult Cli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = RunCli(args, out, err);
  return {code, out.str(), err.str()};
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// A FIFO that a thread fills with zeros for as long as a reader takes them
// (or until nobody has opened it for 5 s), counting what was written: what a
// reader of /dev/zero would read, measured.
class ZeroFifo {
 public:
  explicit ZeroFifo(const std::string& name) : path_(testing::TempPath(name)) {
    ::signal(SIGPIPE, SIG_IGN);  // a reader that closes ends the writes with EPIPE
    ::unlink(path_.c_str());
    ok_ = ::mkfifo(path_.c_str(), 0600) == 0;
    writer_ = std::thread([this] { Feed(); });
  }
  ~ZeroFifo() {
    if (writer_.joinable()) writer_.join();
    ::unlink(path_.c_str());
  }
  const std::string& path() const { return path_; }
  bool ok() const { return ok_; }
  // Once the reader has closed (the writer then stops).
  uint64_t Written() {
    if (writer_.joinable()) writer_.join();
    return written_;
  }

 private:
  void Feed() {
    if (!ok_) return;
    int fd = -1;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (fd < 0 && std::chrono::steady_clock::now() < give_up) {
      fd = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);  // ENXIO until a reader opens
      if (fd < 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (fd < 0) return;
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    static const char zeros[1 << 16] = {};
    for (;;) {
      const ssize_t n = ::write(fd, zeros, sizeof zeros);
      if (n <= 0) break;
      written_ += static_cast<uint64_t>(n);
    }
    ::close(fd);
  }

  std::string path_;
  bool ok_ = false;
  std::atomic<uint64_t> written_{0};
  std::thread writer_;
};

std::string TinyModelPath() {
  const std::string path = testing::TempPath("input_files_model.gguf");
  std::filesystem::copy_file(GGUFGUARD_SOURCE_DIR "/corpus/valid/minimal-llama.gguf", path,
                             std::filesystem::copy_options::overwrite_existing);
  return path;
}

// --- Bounded reads ---------------------------------------------------------

// Issue 38: `--token-file /dev/zero` read 2.1 GB before its 4096-byte limit
// applied. Now the token file is read bounded as it comes: a few KiB, plus
// what the pipe held.
TEST(InputFilesTest, ATokenFileOfEndlessZerosCostsAFewKilobytes) {
  ZeroFifo zeros("token.fifo");
  ASSERT_TRUE(zeros.ok());
  const CliResult r = Cli({"validate", "--token-file", zeros.path(), TinyModelPath()});
  EXPECT_EQ(r.code, kExitUsage) << r.err;
  EXPECT_NE(r.err.find("cannot read a token"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("larger than 8192 bytes"), std::string::npos) << r.err;
  // 8 KiB read; the pipe's own buffer and one write in flight come on top.
  EXPECT_LT(zeros.Written(), uint64_t{512} << 10);
}

TEST(InputFilesTest, PolicyAndSuppressionsOfEndlessZerosStopPastTheirBound) {
  const std::string model = TinyModelPath();
  {
    ZeroFifo zeros("policy.fifo");
    const CliResult r = Cli({"validate", "--policy", zeros.path(), model});
    EXPECT_EQ(r.code, kExitUsage);
    EXPECT_NE(r.err.find("larger than 1048576 bytes"), std::string::npos) << r.err;
    EXPECT_LT(zeros.Written(), (uint64_t{1} << 20) + (uint64_t{512} << 10));
  }
  // The baseline's reader is the same (LoadBaseline, 64 MiB): one of the
  // two is enough to fill a pipe with 64 MiB of zeros.
  for (const char* flag : {"--suppressions"}) {
    ZeroFifo zeros(std::string(flag + 2) + ".fifo");
    const CliResult r = Cli({"validate", flag, zeros.path(), model});
    EXPECT_EQ(r.code, kExitUsage) << flag;
    EXPECT_NE(r.err.find("larger than 67108864 bytes"), std::string::npos) << flag << ": " << r.err;
    EXPECT_LT(zeros.Written(), (uint64_t{64} << 20) + (uint64_t{512} << 10)) << flag;
  }
}

// A pipe whose writer never writes nor closes: the deadline ends the wait.
TEST(InputFilesTest, APipeThatNeverEndsMeetsTheDeadline) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::string> text = ReadBoundedFd(fds[0], "a silent pipe", 100, 150);
  EXPECT_EQ(text.status().code(), absl::StatusCode::kDeadlineExceeded) << text.status();
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(140));  // a coarse clock
  // A FIFO nobody has opened for writing: open(2) does not wait, the
  // deadline does.
  const std::string fifo = testing::TempPath("silent.fifo");
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  text = ReadBoundedFile(fifo, "the silent FIFO", 100, 150);
  EXPECT_EQ(text.status().code(), absl::StatusCode::kDeadlineExceeded) << text.status();
  // What a pipe held when its writer closed is read whole, up to the bound.
  ASSERT_EQ(::write(fds[1], "token\n", 6), 6);
  ::close(fds[1]);
  text = ReadBoundedFd(fds[0], "a pipe", 100, 1000);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "token\n");
  ::close(fds[0]);
  ::unlink(fifo.c_str());
}

TEST(InputFilesTest, ExactlyTheBoundIsReadOneByteMoreIsNot) {
  const std::string path = testing::TempPath("bound.txt");
  Write(path, std::string(100, 'x'));
  absl::StatusOr<std::string> at = ReadBoundedFile(path, "the file", 100);
  ASSERT_TRUE(at.ok()) << at.status();
  EXPECT_EQ(at->size(), 100u);
  absl::StatusOr<std::string> over = ReadBoundedFile(path, "the file", 99);
  EXPECT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(ReadBoundedFile(testing::TempPath("absent"), "the file", 99).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(ReadBoundedFile(::testing::TempDir(), "the file", 99).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

// --files-from is a stream (find | scan): no deadline, but a byte bound, so
// a list that is /dev/zero (NUL-separated empty entries without end) ends.
TEST(InputFilesTest, APathListEndsAtItsByteBound) {
  std::string zeros(10000, '\0');
  std::FILE* in = ::fmemopen(zeros.data(), zeros.size(), "rb");
  ASSERT_NE(in, nullptr);
  PathListReader reader(in, std::nullopt, 4096);
  EXPECT_EQ(reader.Next(), std::nullopt);
  EXPECT_TRUE(reader.error());
  EXPECT_NE(reader.error_message().find("longer than 4096 bytes"), std::string::npos) << reader.error_message();
  std::fclose(in);
  // A list of exactly the bound is whole.
  std::string list = "a.gguf\nb.gguf\n";
  in = ::fmemopen(list.data(), list.size(), "rb");
  PathListReader exact(in, std::nullopt, list.size());
  EXPECT_EQ(exact.Next(), "a.gguf");
  EXPECT_EQ(exact.Next(), "b.gguf");
  EXPECT_EQ(exact.Next(), std::nullopt);
  EXPECT_FALSE(exact.error()) << exact.error_message();
  std::fclose(in);
}

// --- Strict JSON -----------------------------------------------------------

TEST(StrictJsonTest, RepeatedKeysAtAnyDepthAreRefusedWithTheirLine) {
  EXPECT_TRUE(ParseStrictJson(R"({"a": {"b": 1, "c": [{"b": 2}, {"b": 3}]}})", "doc").ok());
  struct Case {
    std::string text, says;
  };
  for (const Case& c : std::vector<Case>{
           {"{\"a\": 1,\n\"a\": 2}", "doc, line 2: the key /a is given twice"},
           {"{\"x\": {\"y\": [\n{\"k\": 1,\n \"k\": 1}]}}", "doc, line 3: the key /x/y/0/k is given twice"},
           {"{\"a/b\": {}, \"a/b\": {}}", "the key /a~1b is given twice"},
           {"{\n\n  \"a\": tru}", "doc, line 3: column 11: not valid JSON"},
           {"", "doc, line 1: column 1: not valid JSON"},
           // A number past a double's range is refused without a position
           // from the JSON library; the error still names where it stood.
           {"{\"a\": 1,\n \"b\": 1e400}", "doc, line 2: column 12: not valid JSON"},
       }) {
    absl::StatusOr<StrictJson> j = ParseStrictJson(c.text, "doc");
    ASSERT_FALSE(j.ok()) << c.text;
    EXPECT_NE(j.status().message().find(c.says), std::string::npos) << c.text << " gave " << j.status();
  }
  absl::StatusOr<StrictJson> j = ParseStrictJson("{\n \"list\": [\n  {},\n  []\n ]\n}", "doc", 10);
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(j->LineOf(""), 10u);
  EXPECT_EQ(j->LineOf("/list"), 11u);
  EXPECT_EQ(j->LineOf("/list/0"), 12u);
  EXPECT_EQ(j->LineOf("/list/1"), 13u);
  EXPECT_EQ(j->LineOf("/list/2"), 0u);
}

class SuppressionsFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = testing::TempPath("strict_triage_model.gguf");
    // Six GG4008 errors and one GG3007 (as triage_test.cc's).
    std::filesystem::copy_file(GGUFGUARD_SOURCE_DIR "/corpus/regressions/report-llamacpp-24263-empty-key.gguf",
                               model_, std::filesystem::copy_options::overwrite_existing);
    setenv("GGUFGUARD_TODAY", "2026-06-15", 1);
  }
  void TearDown() override { unsetenv("GGUFGUARD_TODAY"); }

  CliResult WithSuppressions(const std::string& text) {
    const std::string path = testing::TempPath("strict_suppressions.json");
    Write(path, text);
    return Cli({"validate", "--suppressions", path, model_});
  }

  std::string model_;
};

// Issue 38: an entry that shows one rule and date first and repeats both
// keys later waived the second rule until 2099, the last value winning
// silently. Now the repeat is a usage error naming its line.
TEST_F(SuppressionsFileTest, ARepeatedFieldIsAUsageErrorNamingTheLine) {
  const CliResult r = WithSuppressions(
      "{\"suppressions\": [\n"
      "  {\"rule\": \"GG4008\", \"expires\": \"2026-01-01\", \"path\": \"*\", \"reason\": \"old\",\n"
      "   \"rule\": \"GG3007\", \"expires\": \"2099-12-31\"}\n"
      "]}\n");
  EXPECT_EQ(r.code, kExitUsage) << r.out;
  EXPECT_NE(r.err.find("line 3: the key /suppressions/0/rule is given twice"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;  // nothing validated under a file that says two things
}

TEST_F(SuppressionsFileTest, ARepeatedTopLevelListIsAUsageError) {
  const CliResult r = WithSuppressions(
      "{\"suppressions\": [],\n"
      " \"suppressions\": [{\"rule\": \"GG4008\", \"path\": \"*\", \"reason\": \"r\", \"expires\": \"2099-01-01\"}]}");
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("line 2: the key /suppressions is given twice"), std::string::npos) << r.err;
}

TEST_F(SuppressionsFileTest, BlankReasonsAndImpossibleDatesAreUsageErrorsNamingTheLine) {
  struct Case {
    std::string entry, says;
  };
  for (const Case& c : std::vector<Case>{
           {R"({"rule": "GG4008", "path": "*", "reason": " ", "expires": "2099-01-01"})", "has no \"reason\""},
           {R"({"rule": "GG4008", "path": "*", "reason": "\t\u0001", "expires": "2099-01-01"})", "has no \"reason\""},
           {R"({"rule": "GG4008", "path": "*", "expires": "2099-01-01"})", "has no \"reason\""},
           {R"({"rule": "GG4008", "path": "*", "reason": "r", "expires": "2026-02-30"})",
            "\"expires\" is not a date of the calendar (YYYY-MM-DD): 2026-02-30"},
           {R"({"rule": "GG4008", "path": "*", "reason": "r", "expires": "2025-02-29"})", "\"expires\" is not a date of the calendar"},
           {R"({"rule": "GG4008", "path": "*", "reason": "r", "expires": "2026-13-01"})", "\"expires\" is not a date of the calendar"},
           {R"({"rule": "GG4008", "path": "*", "reason": "r", "expires": "0000-01-01"})", "\"expires\" is not a date of the calendar"},
           {R"({"rule": "GG4008", "path": "*", "reason": "r"})", "has no \"expires\""},
       }) {
    const CliResult r = WithSuppressions(
        "{\"suppressions\": [\n"
        "  {\"rule\": \"GG3007\", \"path\": \"*\", \"reason\": \"fine\", \"expires\": \"2099-01-01\"},\n  " +
        c.entry + "\n]}");
    EXPECT_EQ(r.code, kExitUsage) << c.entry;
    // The CLI escapes what it prints: a quote is \x22.
    std::string says = c.says;
    for (size_t at = 0; (at = says.find('"', at)) != std::string::npos;) says.replace(at, 1, "\\x22");
    EXPECT_NE(r.err.find("line 3: suppression #2: " + says), std::string::npos) << c.entry << " gave " << r.err;
  }
  // A leap day that exists is a date; an unknown top-level field is not.
  EXPECT_NE(WithSuppressions(R"({"suppressions": [{"rule": "GG3007", "path": "*", "reason": "r",
                                                   "expires": "2028-02-29"}]})")
                .code,
            kExitUsage);
  const CliResult r = WithSuppressions(R"({"suppressions": [], "supressions": []})");
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("unknown field"), std::string::npos) << r.err;
}

TEST(BaselineFileTest, RepeatedKeysAndMalformedEntriesNameTheLine) {
  const std::string sha(64, 'a');
  absl::StatusOr<Baseline> ok = ParseBaseline(
      "{\"type\":\"file\",\"sha256\":\"" + sha + "\",\"findings\":[{\"rule\":\"GG3007\",\"offset\":69}]}\n"
      "{\"type\":\"summary\",\"files\":1}\n",
      "the baseline b", "b");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->findings.size(), 1u);
  struct Case {
    std::string text, says;
  };
  for (const Case& c : std::vector<Case>{
           // A finding whose offset is given twice would name another place.
           {"{\"type\":\"summary\"}\n{\"type\":\"file\",\"sha256\":\"" + sha +
                "\",\"findings\":[{\"rule\":\"GG3007\",\"offset\":69,\"offset\":1}]}\n",
            "the baseline b, line 2: the key /findings/0/offset is given twice"},
           {"{\"files\": [\n {\"sha256\": \"" + sha + "\", \"sha256\": \"" + sha + "\", \"findings\": []}]}",
            "line 2: the key /files/0/sha256 is given twice"},
           {"{\"files\": [\n {\"findings\": []}]}", "line 2: a file without its SHA-256"},
           {"{\"type\":\"file\"}\nnot json\n", "line 2: column 2: not valid JSON"},
       }) {
    absl::StatusOr<Baseline> b = ParseBaseline(c.text, "the baseline b", "b");
    ASSERT_FALSE(b.ok()) << c.text;
    EXPECT_NE(b.status().message().find(c.says), std::string::npos) << c.text << " gave " << b.status();
  }
  // A key of another type than the reader expects is as if absent (before,
  // nlohmann's value() threw and the process ended: the triage fuzzer's
  // fuzz/regressions/triage_fuzzer/baseline-type-not-a-string).
  EXPECT_FALSE(ParseBaseline("{\"type\":23,\"mtype\":\"summary\",\"files\":1}\n", "the baseline b", "b").ok());
  // JSON lines of no file entry: an empty baseline, as for scan's other lines.
  absl::StatusOr<Baseline> none = ParseBaseline("{\"type\":[1]}\n{\"type\":{}}\n", "the baseline b", "b");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->findings.empty());
  absl::StatusOr<Baseline> lines = ParseBaseline(
      "{\"type\":\"summary\"}\n{\"type\":23}\n{\"type\":\"file\",\"sha256\":5,\"findings\":[]}\n", "the baseline b", "b");
  ASSERT_FALSE(lines.ok());
  EXPECT_NE(lines.status().message().find("line 3: a file without its SHA-256"), std::string::npos) << lines.status();
}

}  // namespace
}  // namespace ggufguard
