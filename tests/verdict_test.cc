// The inconclusive verdict: a file with no error whose check left part of it
// unread is never a pass, in any format, in the exit code, or through the C,
// C++ and Python APIs. Also the exit code's precedence over several files.
#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "ggufguard/cli/cli.h"
#include "ggufguard/io/source.h"
#include "ggufguard/ggufguard.h"
#include "ggufguard/ggufguard.hpp"
#include "ggufguard/report/sarif.h"
#include "ggufguard/validate.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/gguf_writer.h"
#include "tests/test_util.h"
#include "tests/tiny_model.h"

namespace ggufguard {
namespace {

using Json = nlohmann::json;
using testing::GgufBuilder;
using testing::GgufValue;

struct CliResult {
  int code;
  std::string out;
};

CliResult Cli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = RunCli(args, out, err);
  return CliResult{code, out.str() + err.str()};
}

TEST(ExitCodeTest, PrecedenceIsInternalIoInvalidInconclusiveValid) {
  const std::vector<int> worst_first = {kExitInternal, kExitIo, kExitInvalid, kExitInconclusive, kExitValid};
  for (size_t i = 0; i < worst_first.size(); ++i) {
    for (size_t j = 0; j < worst_first.size(); ++j) {
      const int expected = worst_first[std::min(i, j)];
      EXPECT_EQ(CombineExitCodes(worst_first[i], worst_first[j]), expected) << worst_first[i] << " " << worst_first[j];
    }
  }
  EXPECT_EQ(ExitCodeOf(nullptr), kExitIo);
}

TEST(VerdictTest, OnlyAReportWithNothingUncheckedIsValid) {
  Report r;
  r.header_parsed = true;
  EXPECT_EQ(r.verdict(), Report::Verdict::kValid);
  r.not_checked.push_back("the data");
  EXPECT_TRUE(r.valid());  // no error: a loader may still read the header
  EXPECT_EQ(r.verdict(), Report::Verdict::kInconclusive);
  EXPECT_EQ(ExitCodeOf(&r), kExitInconclusive);
  r.has_errors = true;  // an error wins over what was not checked
  EXPECT_EQ(r.verdict(), Report::Verdict::kInvalid);
  EXPECT_EQ(ExitCodeOf(&r), kExitInvalid);
  EXPECT_STREQ(VerdictName(Report::Verdict::kInconclusive), "inconclusive");
}

// A source or stream that spends a budget of its caller's after `budget`
// bytes (as a remote file's does: BudgetSpentError).
class BudgetedSource final : public ByteSource {
 public:
  BudgetedSource(absl::Span<const uint8_t> bytes, uint64_t budget) : memory_(bytes), budget_(budget) {}
  uint64_t size() const override { return memory_.size(); }
  absl::Status ReadAt(uint64_t offset, absl::Span<uint8_t> out) override {
    if (offset + out.size() > budget_) return BudgetSpentError("budget of the test source");
    return memory_.ReadAt(offset, out);
  }

 private:
  MemorySource memory_;
  uint64_t budget_;
};

class BudgetedStream final : public ByteStream {
 public:
  BudgetedStream(absl::Span<const uint8_t> bytes, uint64_t budget) : bytes_(bytes), budget_(budget) {}
  absl::StatusOr<size_t> Read(absl::Span<uint8_t> out) override {
    const size_t n = std::min<size_t>(out.size(), bytes_.size() - at_);
    if (at_ + n > budget_) return BudgetSpentError("budget of the test stream");
    std::copy_n(bytes_.data() + at_, n, out.data());
    at_ += n;
    return n;
  }

 private:
  absl::Span<const uint8_t> bytes_;
  uint64_t budget_;
  size_t at_ = 0;
};

// A budget spent inside the file keeps what was found and lists the rest; one
// spent before the header is read judges nothing. Neither is a pass or an
// I/O error. Another I/O error stays one.
TEST(VerdictTest, ASpentBudgetIsInconclusiveAndKeepsTheFindings) {
  const testing::BuiltFile good = testing::MakeTinyModel().Build();
  testing::BuiltFile bad_bytes = testing::MakeTinyModel().Build();
  bad_bytes.bytes.push_back(1);  // GG6007: a trailing byte the tail read finds
  const Policy policy = DefaultPolicy();
  for (const bool stream : {false, true}) {
    SCOPED_TRACE(stream ? "stream" : "source");
    auto validate = [&](const testing::BuiltFile& f, uint64_t budget) {
      StreamOptions options;
      options.prefix.first_prefix = f.header_end;  // the header alone, then the data
      options.chunk = 64;
      BudgetedSource source(f.bytes, budget);
      BudgetedStream in(f.bytes, budget);
      return stream ? ValidateStream(in, policy, options) : ValidateSource(source, policy, options.prefix);
    };
    // Spent after the header: its verdict is kept, the rest is not checked.
    absl::StatusOr<ValidatedFile> after = validate(good, good.data_offset + 1);
    ASSERT_TRUE(after.ok()) << after.status();
    EXPECT_TRUE(after->report().header_parsed);
    EXPECT_EQ(after->report().coverage, Report::Coverage::kStoppedAtBudget);
    EXPECT_EQ(after->report().verdict(), Report::Verdict::kInconclusive) << testing::Describe(after->report());
    ASSERT_EQ(after->report().not_checked.size(), 1u);
    EXPECT_NE(after->report().not_checked[0].find("budget of the test"), std::string::npos);
    // Spent inside the header: nothing judged.
    absl::StatusOr<ValidatedFile> before = validate(good, 16);
    ASSERT_TRUE(before.ok()) << before.status();
    EXPECT_FALSE(before->report().header_parsed);
    EXPECT_TRUE(before->report().findings.empty());
    EXPECT_EQ(before->report().verdict(), Report::Verdict::kInconclusive);
    // The whole file within the budget: judged as usual.
    absl::StatusOr<ValidatedFile> whole = validate(bad_bytes, bad_bytes.bytes.size());
    ASSERT_TRUE(whole.ok()) << whole.status();
    EXPECT_EQ(whole->report().verdict(), Report::Verdict::kInvalid);
  }
}

class HeaderOnlyCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    valid_ = testing::TempPath("verdict_valid.gguf");
    invalid_ = testing::TempPath("verdict_invalid.gguf");
    testing::WriteFileBytes(valid_, GgufBuilder()
                                        .AddKv("general.architecture", GgufValue::Str("llama"))
                                        .AddKv("tokenizer.ggml.model", GgufValue::Str("no_vocab"))
                                        .Build()
                                        .bytes);
    testing::WriteFileBytes(invalid_, GgufBuilder()
                                          .AddKv("general.architecture", GgufValue::Str("llama"))
                                          .AddKv("tokenizer.ggml.model", GgufValue::Str("no_vocab"))
                                          .AddKv("general.alignment", GgufValue::U32(3))
                                          .Build()
                                          .bytes);
  }
  void TearDown() override {
    std::filesystem::remove(valid_);
    std::filesystem::remove(invalid_);
  }
  std::string valid_, invalid_;
};

// Every option a gatekeeper might add keeps a header-only check from passing.
TEST_F(HeaderOnlyCliTest, NoOptionTurnsHeaderOnlyIntoAPass) {
  EXPECT_EQ(Cli({"validate", valid_}).code, kExitValid);
  const std::string size = std::to_string(std::filesystem::file_size(valid_));
  for (const std::vector<std::string>& extra : std::vector<std::vector<std::string>>{
           {}, {"--file-size", size}, {"--policy", "strict"}, {"--policy", "default"}, {"--no-hash"},
           {"--fail-fast"}, {"--format", "json"}, {"--format", "sarif"}}) {
    std::vector<std::string> args = {"validate", "--header-only"};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back(valid_);
    const CliResult r = Cli(args);
    EXPECT_EQ(r.code, kExitInconclusive) << ::testing::PrintToString(args) << "\n" << r.out;
  }
}

TEST_F(HeaderOnlyCliTest, SeveralFilesTakeTheWorstVerdict) {
  EXPECT_EQ(Cli({"validate", "--header-only", valid_, invalid_}).code, kExitInvalid);
  EXPECT_EQ(Cli({"validate", "--header-only", invalid_, valid_}).code, kExitInvalid);
  EXPECT_EQ(Cli({"validate", "--header-only", valid_, valid_}).code, kExitInconclusive);
  EXPECT_EQ(Cli({"validate", "--header-only", valid_, "/nonexistent/x.gguf"}).code, kExitIo);
}

TEST_F(HeaderOnlyCliTest, SarifSaysInconclusiveAndWhatWasNotChecked) {
  const CliResult r = Cli({"validate", "--header-only", "--format", "sarif", valid_});
  ASSERT_EQ(r.code, kExitInconclusive);
  const Json doc = Json::parse(r.out);
  const Json& run = doc["runs"][0];
  ASSERT_EQ(run["artifacts"].size(), 1u);
  EXPECT_EQ(run["artifacts"][0]["properties"]["verdict"], "inconclusive");
  ASSERT_EQ(run["artifacts"][0]["properties"]["not_checked"].size(), 1u);
  const Json& invocation = run["invocations"][0];
  EXPECT_EQ(invocation["executionSuccessful"], true);  // every file was read as asked
  ASSERT_EQ(invocation["toolExecutionNotifications"].size(), 1u);
  EXPECT_EQ(invocation["toolExecutionNotifications"][0]["level"], "warning");
  EXPECT_NE(invocation["toolExecutionNotifications"][0]["message"]["text"].get<std::string>().find("inconclusive"),
            std::string::npos);
  // The whole file: valid, nothing listed as unchecked.
  const Json whole = Json::parse(Cli({"validate", "--format", "sarif", valid_}).out);
  EXPECT_EQ(whole["runs"][0]["artifacts"][0]["properties"]["verdict"], "valid");
  EXPECT_TRUE(whole["runs"][0]["artifacts"][0]["properties"]["not_checked"].empty());
}

TEST(VerdictCapiTest, APrefixIsInconclusiveThroughCAndCpp) {
  const testing::BuiltFile f = testing::MakeTinyModel().Build();
  ggufguard_report* whole = nullptr;
  ASSERT_EQ(ggufguard_validate_buffer(f.bytes.data(), f.bytes.size(), nullptr, &whole), GGUFGUARD_OK);
  EXPECT_EQ(ggufguard_report_verdict(whole), GGUFGUARD_VERDICT_VALID);
  EXPECT_EQ(ggufguard_report_not_checked_count(whole), 0u);
  EXPECT_EQ(ggufguard_report_not_checked_at(whole, 0), nullptr);
  ggufguard_report_free(whole);

  ggufguard_report* head = nullptr;
  ASSERT_EQ(ggufguard_validate_prefix(f.bytes.data(), f.data_offset, f.file_size, nullptr, &head), GGUFGUARD_OK);
  EXPECT_EQ(ggufguard_report_valid(head), 1);
  EXPECT_EQ(ggufguard_report_verdict(head), GGUFGUARD_VERDICT_INCONCLUSIVE);
  ASSERT_EQ(ggufguard_report_not_checked_count(head), 1u);
  EXPECT_NE(std::string(ggufguard_report_not_checked_at(head, 0)).find("--header-only"), std::string::npos);
  ggufguard_report_free(head);
  EXPECT_EQ(ggufguard_report_verdict(nullptr), GGUFGUARD_VERDICT_INVALID);

  const api::Report cpp = api::ValidatePrefix(f.bytes.data(), f.data_offset, f.file_size);
  EXPECT_EQ(cpp.verdict(), api::Report::Verdict::kInconclusive);
  EXPECT_EQ(cpp.not_checked().size(), 1u);
  EXPECT_EQ(api::ValidateBuffer(f.bytes.data(), f.bytes.size()).verdict(), api::Report::Verdict::kValid);
}

}  // namespace
}  // namespace ggufguard
