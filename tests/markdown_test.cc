// --format markdown: counts first, findings by file, and nothing from a file
// or a path that Markdown could turn into a link, HTML or emphasis.
#include "ggufguard/report/markdown.h"

#include <filesystem>
#include <sstream>
#include <string>

#include "ggufguard/cli/cli.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace ggufguard {
namespace {

TEST(MarkdownTest, CodeSpansOutfenceTheBackticksTheyHold) {
  EXPECT_EQ(MarkdownCode("a.gguf"), "` a.gguf `");
  EXPECT_EQ(MarkdownCode("a`b"), "`` a`b ``");
  EXPECT_EQ(MarkdownCode("``x```"), "```` ``x``` ````");
  EXPECT_EQ(MarkdownCode("line\nbreak"), "` line\\x0abreak `");  // no byte can end the span's line
}

// Issue 38: a finding's message is escaped already (a quote in a key is
// \x27); Markdown escaped it once more, and showed \x5cx27.
TEST(MarkdownTest, AnEscapedMessageIsNotEscapedTwice) {
  EXPECT_EQ(MarkdownCodeOfEscaped("key \\x27a\\x27"), "` key \\x27a\\x27 `");
  EXPECT_EQ(MarkdownCodeOfEscaped("a`b\n"), "`` a`b\\x0a ``");  // a byte that is no printable ASCII still is
  const std::string path = testing::TempPath("md_quote.gguf");
  testing::WriteFileBytes(path, testing::GgufBuilder().AddKv("general.architecture", testing::GgufValue::Str("llama"))
                                    .AddKv("it's.a.key", testing::GgufValue::U32(1))
                                    .Build()
                                    .bytes);
  std::ostringstream json, md, err;
  RunCli({"validate", "--format", "json", path}, json, err);
  ASSERT_NE(json.str().find("it\\\\x27s.a.key"), std::string::npos) << json.str();  // JSON: it\\x27s
  RunCli({"validate", "--format", "markdown", path}, md, err);
  EXPECT_NE(md.str().find("it\\x27s.a.key"), std::string::npos) << md.str();
  EXPECT_EQ(md.str().find("\\x5c"), std::string::npos) << md.str();
}

TEST(MarkdownTest, CountsThenFindingsGroupedByFileWithCraftedNamesInert) {
  const std::string dir = testing::FreshDir("md_dir");
  // A name that would be a link and HTML if it were pasted as Markdown.
  const std::string crafted = dir + "/[x](https:evil.example)<img src=x>`.gguf";
  std::filesystem::copy_file(GGUFGUARD_SOURCE_DIR "/corpus/regressions/report-llamacpp-24263-empty-key.gguf", crafted,
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(GGUFGUARD_SOURCE_DIR "/corpus/valid/alignment-64.gguf", dir + "/ok.gguf",
                             std::filesystem::copy_options::overwrite_existing);
  std::ostringstream out, err;
  EXPECT_EQ(RunCli({"scan", "--format", "markdown", "--jobs", "1", dir}, out, err), kExitInvalid) << err.str();
  const std::string md = out.str();
  EXPECT_EQ(md.find("## ggufguard: **findings to fix**\n\n| files |"), 0u) << md;
  EXPECT_NE(md.find("| 2 | 1 | 1 | 0 | 0 | 7 | 1 | 0 | 0 |"), std::string::npos) << md;
  // The crafted file's heading: its whole path inside one double-backtick span.
  EXPECT_NE(md.find("### `` " + dir + "/[x](https:evil.example)<img src=x>`.gguf ``: **invalid**\n"),
            std::string::npos) << md;
  EXPECT_NE(md.find("- **error** GG3007 empty-key at byte 69: ` empty metadata key `"), std::string::npos) << md;
  EXPECT_NE(md.find("### ` " + dir + "/ok.gguf `: valid\n\n- **warning** GG4016"), std::string::npos) << md;
  // Every '<' and '[' of the output lies inside a code span.
  std::istringstream lines(md);
  for (std::string line; std::getline(lines, line);) {
    bool in_span = false;
    size_t fence = 0;
    for (size_t i = 0; i < line.size();) {
      if (line[i] == '`') {
        size_t n = line.find_first_not_of('`', i);
        n = (n == std::string::npos ? line.size() : n) - i;
        if (!in_span) {
          in_span = true;
          fence = n;
        } else if (n == fence) {
          in_span = false;
        }
        i += n;
        continue;
      }
      EXPECT_TRUE(in_span || (line[i] != '<' && line[i] != '[' && line[i] != '(')) << line;
      ++i;
    }
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ggufguard
