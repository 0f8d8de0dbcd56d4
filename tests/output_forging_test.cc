// A file name can hold any byte but '/' and NUL. Printed raw, a name with a
// newline and an ANSI escape forges a line of the report: here a file whose
// name carries "\nok.gguf: valid (0 errors, 0 warnings, 0 notes)" and an
// escape that erases the line before it. In every format, and on stderr,
// the output must stay printable ASCII one record a line, and no line may
// say a file is valid unless that file is.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ggufguard/cli/cli.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/gguf_writer.h"
#include "tests/test_util.h"

namespace ggufguard {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr char kForged[] = "ok.gguf: valid (0 errors, 0 warnings, 0 notes)";

struct CliResult {
  int code;
  std::string out, err;
};
CliResult Cli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  int code = RunCli(args, out, err);
  return CliResult{code, out.str(), err.str()};
}

// Every byte printable ASCII or a newline: no control byte, no escape, no
// invalid UTF-8 can reach a terminal or a log.
::testing::AssertionResult PrintableLines(const std::string& s) {
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c != '\n' && (c < 0x20 || c > 0x7E)) {
      return ::testing::AssertionFailure() << "byte 0x" << std::hex << int{c} << " at " << std::dec << i << " in:\n"
                                           << s;
    }
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult NoForgedLine(const std::string& s) {
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("ok.gguf", 0) == 0) return ::testing::AssertionFailure() << "forged line: " << line;
  }
  return ::testing::AssertionSuccess();
}

class OutputForgingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshDir("forging");
    evil_ = dir_ + "/x\n" + kForged + "\x1b[1A\x1b[2K\xff\xfe.gguf";
    // Not a GGUF file: invalid.
    testing::WriteFileBytes(evil_, std::vector<uint8_t>{'n', 'o', 'p', 'e', 0, 0, 0, 0});
    missing_ = dir_ + "/gone\n" + kForged + "\x1b]0;title\x07.gguf";
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_, evil_, missing_;
};

TEST_F(OutputForgingTest, ValidateText) {
  CliResult r = Cli({"validate", evil_, missing_});
  EXPECT_EQ(r.code, kExitIo);
  EXPECT_TRUE(PrintableLines(r.out));
  EXPECT_TRUE(PrintableLines(r.err));
  EXPECT_TRUE(NoForgedLine(r.out));
  // Every line names its file in full, escaped up to its first ':': the
  // name's newline is "\x0a", its ':' "\x3a", so the forged verdict inside
  // the name cannot be taken for the line's own.
  const std::string evil = dir_ + "/x\\x0aok.gguf\\x3a valid (0 errors, 0 warnings, 0 notes)\\x1b[1A\\x1b[2K\\xff\\xfe.gguf";
  const std::string missing = dir_ + "/gone\\x0aok.gguf\\x3a valid (0 errors, 0 warnings, 0 notes)\\x1b]0;title\\x07.gguf";
  ASSERT_EQ(dir_.find(':'), std::string::npos);
  std::istringstream in(r.out);
  size_t lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    const std::string path = line.substr(0, line.find(':'));
    EXPECT_TRUE(path == evil || path == missing) << line;
  }
  EXPECT_GE(lines, 3u);  // a finding and a verdict for the first file, an I/O error for the second
}

TEST_F(OutputForgingTest, ValidateJsonAndSarif) {
  CliResult r = Cli({"validate", "--format", "json", evil_, missing_});
  EXPECT_TRUE(PrintableLines(r.out));
  Json doc = Json::parse(r.out);
  ASSERT_EQ(doc["files"].size(), 2u);
  EXPECT_EQ(doc["files"][0]["verdict"], "invalid");
  EXPECT_EQ(doc["files"][0]["file"], dir_ + "/x\\x0a" + kForged + "\\x1b[1A\\x1b[2K\\xff\\xfe.gguf");
  EXPECT_EQ(doc["files"][1]["verdict"], "io-error");
  EXPECT_EQ(doc["files"][1]["error"].get<std::string>().find('\n'), std::string::npos);

  r = Cli({"validate", "--format", "sarif", evil_, missing_});
  EXPECT_TRUE(PrintableLines(r.out));
  doc = Json::parse(r.out);
  const std::string uri = doc["runs"][0]["artifacts"][0]["location"]["uri"];
  EXPECT_NE(uri.find("x%0Aok.gguf%3A%20valid"), std::string::npos) << uri;
  EXPECT_NE(uri.find("%1B%5B1A"), std::string::npos) << uri;
}

TEST_F(OutputForgingTest, InspectAndStderr) {
  CliResult r = Cli({"inspect", evil_, missing_});
  EXPECT_TRUE(PrintableLines(r.out));
  EXPECT_TRUE(PrintableLines(r.err));
  EXPECT_TRUE(NoForgedLine(r.out));
  EXPECT_TRUE(NoForgedLine(r.err));
  // Usage errors echo what was given, escaped.
  r = Cli({"validate", std::string("--\x1b[2Jx\n") + kForged});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_TRUE(PrintableLines(r.err));
  EXPECT_TRUE(NoForgedLine(r.err));
  r = Cli({"validate", "--policy", missing_, evil_});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_TRUE(PrintableLines(r.err));
  EXPECT_TRUE(NoForgedLine(r.err));
}

TEST_F(OutputForgingTest, ScanEveryFormat) {
  fs::create_symlink("target", dir_ + "/link\n" + kForged + ".gguf");  // reported as skipped
  for (const char* format : {"jsonl", "text", "sarif"}) {
    CliResult r = Cli({"scan", "--format", format, dir_, missing_});
    EXPECT_EQ(r.code, kExitIo) << format;
    EXPECT_TRUE(PrintableLines(r.out)) << format;
    EXPECT_TRUE(PrintableLines(r.err)) << format;
    EXPECT_TRUE(NoForgedLine(r.out)) << format;
    EXPECT_TRUE(NoForgedLine(r.err)) << format;
    if (std::string(format) == "jsonl") {
      std::istringstream in(r.out);
      size_t lines = 0;
      for (std::string line; std::getline(in, line); ++lines) {
        EXPECT_FALSE(Json::parse(line, nullptr, false).is_discarded()) << line;
      }
      EXPECT_EQ(lines, 4u);  // the file, the link, the missing path, the summary
    }
  }
}

// Printable JSON can still decode to an escape ("\u001b"): the strings a
// reader gets back must be printable too. The policy's name is the policy
// file's path (or its "name" field), as hostile as any other path.
TEST_F(OutputForgingTest, PolicyNameIsEscapedInJsonAndSarif) {
  const std::string policy = dir_ + "/pol\x1b[31m\n" + kForged + "\xff.json";
  {
    std::ofstream out(policy, std::ios::binary);
    out << R"({"base": "default"})";
  }
  const std::string named = dir_ + "/named.json";
  {
    std::ofstream out(named, std::ios::binary);
    out << R"({"name": "x\u001b[2K\ny"})";
  }
  for (const std::string& p : {policy, named}) {
    CliResult r = Cli({"validate", "--format", "json", "--policy", p, evil_});
    ASSERT_EQ(r.code, kExitInvalid) << r.err;
    EXPECT_TRUE(PrintableLines(Json::parse(r.out)["policy"].get<std::string>())) << p;
    r = Cli({"validate", "--format", "sarif", "--policy", p, evil_});
    ASSERT_EQ(r.code, kExitInvalid) << r.err;
    EXPECT_TRUE(PrintableLines(Json::parse(r.out)["runs"][0]["properties"]["policy"].get<std::string>())) << r.out;
  }
}

}  // namespace
}  // namespace ggufguard
