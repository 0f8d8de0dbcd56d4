// ggufguard scan: what it finds in a directory tree and a path list, its
// JSON lines (checked against docs/scan.schema.json), exit codes, and
// symbolic links.
#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ggufguard/base/text.h"
#include "ggufguard/cli/cli.h"
#include "ggufguard/cli/scan_walk.h"
#include "ggufguard/io/source.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/gguf_writer.h"
#include "tests/support/json_schema.h"
#include "tests/test_util.h"

namespace ggufguard {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using testing::GgufBuilder;
using testing::GgufValue;

struct ScanResult {
  int code;
  std::string out, err;
  std::vector<Json> lines;  // parsed stdout lines (jsonl)
};

// Runs scan; parses stdout as JSON lines unless another --format is asked for.
ScanResult Scan(std::vector<std::string> args) {
  const bool jsonl = std::find(args.begin(), args.end(), "--format") == args.end();
  args.insert(args.begin(), "scan");
  std::ostringstream out, err;
  ScanResult r{RunCli(args, out, err), out.str(), err.str(), {}};
  std::istringstream in(jsonl ? r.out : "");
  for (std::string line; std::getline(in, line);) {
    Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(j.is_discarded()) << line;
    r.lines.push_back(j);
  }
  return r;
}

// A vocabulary-only file llama.cpp loads (an empty vocabulary: no_vocab),
// and one with a bad bool besides.
std::vector<uint8_t> ValidBytes() {
  return GgufBuilder()
      .AddKv("general.architecture", GgufValue::Str("llama"))
      .AddKv("general.name", GgufValue::Str("tiny"))
      .AddKv("tokenizer.ggml.model", GgufValue::Str("no_vocab"))
      .Build()
      .bytes;
}
std::vector<uint8_t> InvalidBytes() {
  return GgufBuilder()
      .AddKv("general.architecture", GgufValue::Str("llama"))
      .AddKv("tokenizer.ggml.model", GgufValue::Str("no_vocab"))
      .AddKv("x.flag", GgufValue::BoolByte(2))
      .Build()
      .bytes;
}

// Lines of type `type`, by file name (the last path component).
std::map<std::string, Json> ByName(const ScanResult& r, const std::string& type) {
  std::map<std::string, Json> out;
  for (const Json& l : r.lines) {
    if (l["type"] == type) out[fs::path(l["file"].get<std::string>()).filename().string()] = l;
  }
  return out;
}

class ScanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshDir("scan_dir");
    fs::create_directories(dir_ + "/sub/deeper");
    testing::WriteFileBytes(dir_ + "/valid.gguf", ValidBytes());
    testing::WriteFileBytes(dir_ + "/invalid.GGUF", InvalidBytes());
    testing::WriteFileBytes(dir_ + "/notes.txt", std::vector<uint8_t>{'h', 'e', 'l', 'l', 'o', '\n'});
    testing::WriteFileBytes(dir_ + "/sub/nested.gguf", ValidBytes());
    testing::WriteFileBytes(dir_ + "/sub/deeper/deep.gguf", ValidBytes());
    fs::create_symlink("valid.gguf", dir_ + "/link.gguf");
    fs::create_directory_symlink("..", dir_ + "/sub/loop");  // a cycle once links are followed
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Checks every line against the committed schema, and the summary's place.
  void ExpectSchema(const ScanResult& r) {
    testing::SchemaChecker schema(std::string(GGUFGUARD_SOURCE_DIR) + "/docs", "scan.schema.json");
    ASSERT_FALSE(r.lines.empty());
    for (const Json& l : r.lines) {
      const std::vector<std::string> errors = schema.Check(l);
      EXPECT_TRUE(errors.empty()) << l.dump() << "\n" << (errors.empty() ? "" : errors[0]);
    }
    EXPECT_EQ(r.lines.back()["type"], "summary");
    for (size_t i = 0; i + 1 < r.lines.size(); ++i) EXPECT_NE(r.lines[i]["type"], "summary");
  }

  std::string dir_;
};

TEST_F(ScanTest, TopLevelGgufFilesOnlyWithoutRecursive) {
  ScanResult r = Scan({"--jobs", "2", dir_});
  ExpectSchema(r);
  auto files = ByName(r, "file");
  EXPECT_EQ(files.size(), 2u);
  EXPECT_EQ(files["valid.gguf"]["verdict"], "valid");
  EXPECT_EQ(files["valid.gguf"]["size"], ValidBytes().size());
  EXPECT_EQ(files["invalid.GGUF"]["verdict"], "invalid");  // the extension in any case
  EXPECT_GE(files["invalid.GGUF"]["summary"]["errors"], 1);
  auto skipped = ByName(r, "skipped");
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_NE(skipped["link.gguf"]["reason"].get<std::string>().find("symbolic link"), std::string::npos);
  const Json& summary = r.lines.back();
  EXPECT_EQ(summary["files"], 2);
  EXPECT_EQ(summary["valid"], 1);
  EXPECT_EQ(summary["invalid"], 1);
  EXPECT_EQ(summary["skipped"], 1);
  EXPECT_EQ(summary["exit_code"], kExitInvalid);
  EXPECT_EQ(r.code, kExitInvalid);
}

// A directory's models are its GGUF files and its llamafiles (GG9166: an
// executable judged as the GGUF it carries), named in any case; a name that
// is only the extension is a hidden file, not a model.
TEST(HasModelExtensionTest, GgufAndLlamafileNamesInAnyCase) {
  for (const char* name : {"m.gguf", "M.GGUF", "mistral-7b.llamafile", "Model.LlamaFile"}) {
    EXPECT_TRUE(HasModelExtension(name)) << name;
  }
  for (const char* name : {".gguf", ".llamafile", "m.gguf.exe", "m.llamafile.txt", "mgguf", "m.exe", ""}) {
    EXPECT_FALSE(HasModelExtension(name)) << name;
  }
}

TEST_F(ScanTest, RecursiveAllFilesAndFollowedLinks) {
  ScanResult r = Scan({"--recursive", "--jobs", "1", dir_});
  ExpectSchema(r);
  auto files = ByName(r, "file");
  EXPECT_EQ(files.size(), 4u);  // valid, invalid, nested, deep
  EXPECT_EQ(files.count("deep.gguf"), 1u);
  // link.gguf, and sub/loop: a link to a directory, said so that a tree
  // whose models sit behind one does not scan as "nothing here".
  auto skipped = ByName(r, "skipped");
  EXPECT_EQ(skipped.size(), 2u);
  EXPECT_NE(skipped["loop"]["reason"].get<std::string>().find("symbolic link to a directory"), std::string::npos);

  r = Scan({"--recursive", "--all-files", "--jobs", "2", dir_});
  ExpectSchema(r);
  files = ByName(r, "file");
  EXPECT_EQ(files.size(), 5u);
  EXPECT_EQ(files["notes.txt"]["verdict"], "invalid");  // not GGUF: bad magic
  EXPECT_EQ(files["notes.txt"]["findings"][0]["rule"], "GG2001");  // bad-magic

  // Followed links: link.gguf is validated, and sub/loop leads back to the
  // top directory, a cycle that is reported, not walked forever.
  r = Scan({"--recursive", "--follow-symlinks", "--jobs", "2", dir_});
  ExpectSchema(r);
  size_t valid_lines = 0, cycles = 0;
  for (const Json& l : r.lines) {
    valid_lines += l["type"] == "file" && l["verdict"] == "valid";
    cycles += l["type"] == "skipped" && l["reason"].get<std::string>().find("cycle") != std::string::npos;
  }
  EXPECT_EQ(valid_lines, 4u);  // valid, link, nested, deep
  EXPECT_EQ(cycles, 1u);
}

TEST_F(ScanTest, ExitCodes) {
  fs::remove(dir_ + "/invalid.GGUF");
  EXPECT_EQ(Scan({dir_}).code, kExitValid);
  testing::WriteFileBytes(dir_ + "/invalid.gguf", InvalidBytes());
  EXPECT_EQ(Scan({dir_}).code, kExitInvalid);
  // An entry that cannot be read: an I/O error, and the scan goes on.
  ScanResult r = Scan({dir_ + "/missing.gguf", dir_});
  EXPECT_EQ(r.code, kExitIo);
  EXPECT_EQ(ByName(r, "file")["missing.gguf"]["verdict"], "io-error");
  EXPECT_EQ(ByName(r, "file").size(), 3u);
  EXPECT_EQ(r.lines.back()["io_errors"], 1);
  EXPECT_EQ(r.lines.back()["exit_code"], kExitIo);
  // Usage errors.
  EXPECT_EQ(Scan({}).code, kExitUsage);
  EXPECT_EQ(Scan({"--jobs", "0", dir_}).code, kExitUsage);
  EXPECT_EQ(Scan({"--format", "xml", dir_}).code, kExitUsage);
}

TEST_F(ScanTest, UnreadableEntriesAreIoErrors) {
  // A broken link, followed: an I/O error whoever runs the test.
  fs::create_symlink("nowhere.gguf", dir_ + "/broken.gguf");
  ScanResult r = Scan({"--follow-symlinks", dir_});
  EXPECT_EQ(r.code, kExitIo);
  EXPECT_EQ(ByName(r, "file")["broken.gguf"]["verdict"], "io-error");
  EXPECT_EQ(ByName(r, "file")["valid.gguf"]["verdict"], "valid");  // the scan went on
  // A file without read permission: only root reads it anyway.
  if (::geteuid() != 0) {
    testing::WriteFileBytes(dir_ + "/locked.gguf", ValidBytes());
    ::chmod((dir_ + "/locked.gguf").c_str(), 0);
    r = Scan({dir_});
    EXPECT_EQ(ByName(r, "file")["locked.gguf"]["verdict"], "io-error");
    EXPECT_EQ(r.code, kExitIo);
  }
}

TEST_F(ScanTest, FilesFromNulSeparatedListWithANewlineInAName) {
  const std::string odd = dir_ + "/new\nline.gguf";
  testing::WriteFileBytes(odd, ValidBytes());
  const std::string list = dir_ + "/list0";
  {
    std::ofstream out(list, std::ios::binary);
    for (const std::string& p : {dir_ + "/valid.gguf", odd, dir_ + "/invalid.GGUF", dir_ + "/sub"}) {
      out << p << '\0';
    }
  }
  for (std::vector<std::string> args : {std::vector<std::string>{"--files-from", list},
                                        std::vector<std::string>{"--files-from", list, "--null"}}) {
    ScanResult r = Scan(args);
    ExpectSchema(r);
    auto files = ByName(r, "file");
    ASSERT_EQ(files.size(), 4u) << r.out;  // three named files, and sub/'s nested.gguf
    EXPECT_EQ(files["new\\x0aline.gguf"]["verdict"], "valid");
    EXPECT_EQ(files["nested.gguf"]["verdict"], "valid");
    EXPECT_EQ(r.code, kExitInvalid);
  }
  // One path a line.
  {
    std::ofstream out(list, std::ios::binary | std::ios::trunc);
    out << dir_ << "/valid.gguf\n\n" << dir_ << "/sub/nested.gguf\n";
  }
  ScanResult r = Scan({"--files-from", list});
  EXPECT_EQ(ByName(r, "file").size(), 2u);
  EXPECT_EQ(r.code, kExitValid);
  EXPECT_EQ(Scan({"--files-from", dir_ + "/no-such-list"}).code, kExitIo);
  // A list with CRLF line ends: each path keeps its '\r' (a valid byte in a
  // name), and the error says what it probably is.
  {
    std::ofstream out(list, std::ios::binary | std::ios::trunc);
    out << dir_ << "/valid.gguf\r\n";
  }
  r = Scan({"--files-from", list});
  EXPECT_EQ(r.code, kExitIo);
  ASSERT_EQ(r.lines.size(), 2u) << r.out;
  EXPECT_NE(r.lines[0]["error"].get<std::string>().find("CRLF"), std::string::npos) << r.out;
}

// A PATH argument that is a link is followed (the operator named it, as
// `find -H` does); the same link in a --files-from list, or found in a
// directory, only with --follow-symlinks.
TEST_F(ScanTest, LinksNamedOnTheCommandLineAreFollowed) {
  fs::create_directory_symlink("sub", dir_ + "/sublink");
  ScanResult r = Scan({dir_ + "/link.gguf", dir_ + "/sublink"});
  auto files = ByName(r, "file");
  EXPECT_EQ(files.size(), 2u) << r.out;
  EXPECT_EQ(files["link.gguf"]["verdict"], "valid");
  EXPECT_EQ(files["nested.gguf"]["verdict"], "valid");
  EXPECT_EQ(r.code, kExitValid);

  const std::string list = dir_ + "/list";
  {
    std::ofstream out(list, std::ios::binary);
    out << dir_ << "/link.gguf\n";
  }
  r = Scan({"--files-from", list});
  EXPECT_EQ(ByName(r, "file").size(), 0u) << r.out;
  EXPECT_EQ(ByName(r, "skipped").count("link.gguf"), 1u) << r.out;
  EXPECT_NE(r.err.find("no file was validated"), std::string::npos) << r.err;
  r = Scan({"--follow-symlinks", "--files-from", list});
  EXPECT_EQ(ByName(r, "file")["link.gguf"]["verdict"], "valid") << r.out;
}

// A FIFO never answers a read: in a directory it is skipped as a special
// file, named on the command line it is an I/O error, and nothing waits.
TEST_F(ScanTest, FifosAreNeverOpenedForReading) {
  ASSERT_EQ(::mkfifo((dir_ + "/pipe.gguf").c_str(), 0600), 0);
  ScanResult r = Scan({dir_});
  EXPECT_NE(ByName(r, "skipped")["pipe.gguf"]["reason"].get<std::string>().find("not a regular file"),
            std::string::npos)
      << r.out;
  r = Scan({dir_ + "/pipe.gguf", dir_ + "/valid.gguf"});
  EXPECT_EQ(ByName(r, "file")["pipe.gguf"]["verdict"], "io-error") << r.out;
  EXPECT_EQ(ByName(r, "file")["valid.gguf"]["verdict"], "valid");
  EXPECT_EQ(r.code, kExitIo);
}

// What the walk saw as a regular file is opened refusing a link: a name
// swapped for a link (or a FIFO) after the walk looked is not followed.
TEST(ScanOpenTest, AFileTheWalkSawIsOpenedRefusingALink) {
  const std::string dir = testing::FreshDir("scan_open");
  testing::WriteFileBytes(dir + "/real.gguf", ValidBytes());
  fs::create_symlink("real.gguf", dir + "/swapped.gguf");
  absl::StatusOr<std::unique_ptr<FileSource>> refused = FileSource::Open(dir + "/swapped.gguf", FinalLink::kRefuse);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("symbolic link"), std::string::npos) << refused.status();
  EXPECT_TRUE(FileSource::Open(dir + "/swapped.gguf", FinalLink::kFollow).ok());
  EXPECT_TRUE(FileSource::Open(dir + "/real.gguf", FinalLink::kRefuse).ok());
  fs::remove_all(dir);
}

// A list is read as it arrives: the first path is handed out while the
// producer has not written the rest (a bucket listing that streams). A
// NUL-separated list's first path goes at its NUL; a line list's once the
// reader has seen PATH_MAX + 1 bytes without a NUL (the window in which a
// NUL-separated list must show one).
TEST(PathListReaderTest, HandsOutAPathBeforeTheListEnds) {
  std::string lines = "a.gguf\n";
  while (lines.size() <= 4097) lines += "b.gguf\n";
  for (const std::string& bytes : {std::string("a.gguf\0", 7), lines}) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    ASSERT_EQ(::write(fds[1], bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    std::FILE* in = ::fdopen(fds[0], "rb");
    ASSERT_NE(in, nullptr);
    std::atomic<bool> answered{false}, ended{false};
    // Ends the list after five seconds whatever happens, so that a reader
    // that waits for more fails this test instead of hanging it.
    std::thread closer([&] {
      for (int i = 0; i < 200 && !answered; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(25));
      ended = true;
      ::close(fds[1]);
    });
    PathListReader reader(in, std::nullopt);
    const std::optional<std::string> path = reader.Next();
    const bool before_the_end = !ended;
    answered = true;
    closer.join();
    EXPECT_TRUE(before_the_end);
    EXPECT_EQ(path, std::optional<std::string>("a.gguf"));
    EXPECT_FALSE(reader.error());
    std::fclose(in);
  }
}

// A first name with newlines in a NUL-separated list is one path, not
// several (each of which would be validated or walked): the NUL shows
// within the detection window. A NUL after a line list was decided is an
// error, never a guess.
TEST(PathListReaderTest, NewlinesInAFirstNameAreNotPathsAndALateNulIsAnError) {
  const std::string nul_list = std::string("d/a\n/etc\nzzz") + '\0' + "second.gguf" + '\0';
  std::FILE* in = ::fmemopen(const_cast<char*>(nul_list.data()), nul_list.size(), "rb");
  ASSERT_NE(in, nullptr);
  PathListReader reader(in, std::nullopt);
  EXPECT_EQ(reader.Next(), std::optional<std::string>("d/a\n/etc\nzzz"));
  EXPECT_EQ(reader.Next(), std::optional<std::string>("second.gguf"));
  EXPECT_EQ(reader.Next(), std::nullopt);
  EXPECT_FALSE(reader.error());
  std::fclose(in);

  std::string late = "first.gguf\n";
  while (late.size() <= 4097) late += "more.gguf\n";
  late += std::string("x\0y\n", 4);
  in = ::fmemopen(const_cast<char*>(late.data()), late.size(), "rb");
  PathListReader lines(in, std::nullopt);
  EXPECT_EQ(lines.Next(), std::optional<std::string>("first.gguf"));
  std::optional<std::string> p;
  size_t paths = 1;
  while ((p = lines.Next())) ++paths;
  EXPECT_TRUE(lines.error());
  EXPECT_NE(lines.error_message().find("--null"), std::string::npos) << lines.error_message();
  EXPECT_GT(paths, 400u);
  std::fclose(in);
}

TEST_F(ScanTest, OptionsThatWouldBeIgnoredAreUsageErrors) {
  EXPECT_EQ(Scan({"--null", dir_}).code, kExitUsage);  // --null describes a list
  EXPECT_EQ(Scan({"--files-from", "a", "--files-from", "b"}).code, kExitUsage);
}  // --help: CliTest.HelpAndMaxBytesOfAPath

// The real binary with stderr on a pty (so that it draws a progress bar),
// stdout to `results`, run in `cwd`; `list` is written to the FIFO `fifo`,
// or to its standard input when `fifo` is empty. Returns the summary line.
Json ScanOnATerminal(const std::string& cwd, const std::string& list_arg, const std::string& fifo,
                     const std::string& list, const std::string& results) {
  int input[2];
  if (::pipe(input) != 0) return Json();
  int terminal = -1;
  const pid_t child = ::forkpty(&terminal, nullptr, nullptr, nullptr);
  if (child < 0) return Json();
  if (child == 0) {  // stderr stays on the pty; results go to a file
    const int out = ::open(results.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (out < 0 || ::dup2(out, STDOUT_FILENO) < 0 || ::dup2(input[0], STDIN_FILENO) < 0 || ::chdir(cwd.c_str()) != 0) {
      ::_exit(100);
    }
    ::close(input[1]);
    ::execl(GGUFGUARD_CLI_PATH, GGUFGUARD_CLI_PATH, "scan", "--jobs", "2", "--files-from", list_arg.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(101);
  }
  ::close(input[0]);
  // Drains the terminal, or the child blocks once the pty's buffer is full.
  std::thread drain([terminal] {
    char buf[4096];
    while (::read(terminal, buf, sizeof buf) > 0) {
    }
  });
  int status = 0;
  bool reaped = false;
  int to = input[1];
  if (!fifo.empty()) {
    // The FIFO's write end opens once scan has opened its own (ENXIO until
    // then); a scan that ended first fails the test rather than hanging it.
    ::close(input[1]);
    to = -1;
    for (int i = 0; i < 1000 && to < 0; ++i) {
      to = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
      if (to < 0 && (reaped = ::waitpid(child, &status, WNOHANG) == child)) break;
      if (to < 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (to >= 0) ::fcntl(to, F_SETFL, 0);
  }
  if (to >= 0) {
    EXPECT_EQ(::write(to, list.data(), list.size()), static_cast<ssize_t>(list.size()));
    ::close(to);
  } else if (!reaped) {
    ::kill(child, SIGKILL);
  }
  const bool waited = reaped || ::waitpid(child, &status, 0) == child;
  drain.join();  // the terminal's last reader ends with the child (EIO)
  ::close(terminal);
  EXPECT_TRUE(waited && WIFEXITED(status)) << "scan did not run to its end";
  std::ifstream in(results);
  std::string line, last;
  while (std::getline(in, line)) last = line;
  return Json::parse(last, nullptr, false);
}

// With stderr on a terminal, scan draws a progress bar, and once read the
// list a second time to count ahead. From a FIFO (or from standard input
// when a file named '-' stood in the working directory) that second reader
// took paths from the first: 0 files, exit 0.
TEST_F(ScanTest, ProgressBarOnATerminalLosesNoPathOfAFifoList) {
  constexpr int kPaths = 400;
  std::string list;
  for (int i = 0; i < kPaths; ++i) list += dir_ + "/valid.gguf\n";
  const std::string fifo = dir_ + "/list.fifo", results = dir_ + "/results.jsonl";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Json summary = ScanOnATerminal(dir_, fifo, fifo, list, results);
  EXPECT_EQ(summary["files"], kPaths) << summary.dump();
  EXPECT_EQ(summary["exit_code"], kExitValid) << summary.dump();

  testing::WriteFileBytes(dir_ + "/-", std::vector<uint8_t>{'x', '\n'});  // a regular file named '-'
  summary = ScanOnATerminal(dir_, "-", "", list, results);
  EXPECT_EQ(summary["files"], kPaths) << summary.dump();
  EXPECT_EQ(summary["exit_code"], kExitValid) << summary.dump();
}

TEST_F(ScanTest, TextAndSarifFormats) {
  ScanResult r = Scan({"--format", "text", dir_});
  EXPECT_NE(r.out.find("valid.gguf: valid (0 errors"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("link.gguf: skipped: symbolic link"), std::string::npos);
  EXPECT_NE(r.out.find("scan: 2 files (1 valid, 1 invalid, 0 inconclusive, 0 I/O errors), 1 skipped"), std::string::npos);
  r = Scan({"--format", "sarif", dir_});
  Json doc = Json::parse(r.out);
  EXPECT_EQ(doc["runs"][0]["artifacts"].size(), 2u);
  EXPECT_FALSE(doc["runs"][0]["results"].empty());
  EXPECT_EQ(r.code, kExitInvalid);
}

}  // namespace
}  // namespace ggufguard
