// `--deep` at the command line: the flag and its usage errors, the finding
// a planted NaN gives and where, the verdict with and without the flag, the
// JSON `deep` object against the committed schema, a policy that lowers the
// rule to a warning, and `scan --deep`.
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ggufguard/cli/cli.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/gguf_writer.h"
#include "tests/support/json_schema.h"
#include "tests/test_util.h"
#include "tests/tiny_model.h"

namespace ggufguard {
namespace {

using testing::BuiltFile;
using testing::GgufBuilder;
using testing::TensorOptions;

struct CliRun {
  int code;
  std::string out;
  std::string err;
};

CliRun RunTool(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = RunCli(args, out, err);
  return CliRun{code, out.str(), err.str()};
}

class DeepCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    clean_ = testing::TempPath("deep_cli_clean.gguf");
    bad_ = testing::TempPath("deep_cli_nan.gguf");
    testing::WriteFileBytes(clean_, testing::TinyModelWithCleanData().bytes);
    bad_file_ = testing::TinyModelWithCleanData(0x7fc00001u);
    testing::WriteFileBytes(bad_, bad_file_.bytes);
  }
  void TearDown() override {
    std::filesystem::remove(clean_);
    std::filesystem::remove(bad_);
  }
  uint64_t BadOffset() const { return bad_file_.tensor_data_offsets.at(3) + 4 * 5; }

  std::string clean_, bad_;
  BuiltFile bad_file_;
};

TEST_F(DeepCliTest, CleanDataPassesAndSaysWhatWasChecked) {
  const CliRun r = RunTool({"validate", "--deep", clean_});
  EXPECT_EQ(r.code, kExitValid) << r.out << r.err;
  EXPECT_NE(r.out.find(": deep: 4 tensors, " + std::to_string((56 + 8 + 8 + 56) * 4) + " bytes checked, 0 non-finite"),
            std::string::npos)
      << r.out;
}

TEST_F(DeepCliTest, NanIsAnErrorAtItsOffsetOnlyWithDeep) {
  const CliRun plain = RunTool({"validate", bad_});
  EXPECT_EQ(plain.code, kExitValid) << plain.out;  // the header is sound; the data is not read
  EXPECT_EQ(plain.out.find("GG6009"), std::string::npos);
  for (const char* jobs : {"1", "2", "5"}) {
    const CliRun r = RunTool({"validate", "--deep", "--jobs", jobs, bad_});
    EXPECT_EQ(r.code, kExitInvalid) << r.out;
    const std::string line = absl::StrCat(bad_, ":", BadOffset(),
                                          ": error GG6009 tensor-data-non-finite: tensor 'output.weight' (F32) "
                                          "element 5 is NaN (0x7fc00001)");
    EXPECT_NE(r.out.find(line + "\n"), std::string::npos) << "jobs " << jobs << ":\n" << r.out;
  }
}

TEST_F(DeepCliTest, JsonHasTheDeepObjectAndMatchesTheSchema) {
  const CliRun r = RunTool({"validate", "--deep", "--format", "json", bad_});
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  testing::SchemaChecker schema(std::string(GGUFGUARD_SOURCE_DIR) + "/docs", "report.schema.json");
  const std::vector<std::string> errors = schema.Check(doc);
  EXPECT_TRUE(errors.empty()) << errors.front();
  const nlohmann::json& deep = doc.at("files").at(0).at("deep");
  EXPECT_EQ(deep.at("checked_tensors"), 4);
  EXPECT_EQ(deep.at("bad_values"), 1);
  EXPECT_EQ(deep.at("tensors").at(0).at("name"), "output.weight");  // the bad tensor first
  EXPECT_EQ(deep.at("tensors").at(0).at("bad_values"), 1);
  EXPECT_EQ(deep.at("tensors").size(), 4u);
  // Without --deep there is no such object.
  const nlohmann::json plain = nlohmann::json::parse(RunTool({"validate", "--format", "json", bad_}).out);
  EXPECT_FALSE(plain.at("files").at(0).contains("deep"));
}

TEST_F(DeepCliTest, SarifHasTheFinding) {
  const CliRun r = RunTool({"validate", "--deep", "--format", "sarif", bad_});
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_NE(r.out.find("GG6009"), std::string::npos);
  EXPECT_NE(r.out.find("element 5 is NaN"), std::string::npos);
}

TEST_F(DeepCliTest, APolicyCanMakeItAWarning) {
  const std::string policy = testing::TempPath("deep_cli_policy.json");
  std::string text = R"({"base": "default", "severities": {"GG6009": "warning"}})";
  testing::WriteFileBytes(policy, absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
  const CliRun r = RunTool({"validate", "--deep", "--policy", policy, bad_});
  EXPECT_EQ(r.code, kExitValid) << r.out << r.err;
  EXPECT_NE(r.out.find("warning GG6009"), std::string::npos) << r.out;
  std::filesystem::remove(policy);
}

TEST_F(DeepCliTest, JobsMustBeAPositiveNumber) {
  for (const char* bad : {"0", "-1", "x", "1025", ""}) {
    const CliRun r = RunTool({"validate", "--deep", "--jobs", bad, clean_});
    EXPECT_EQ(r.code, kExitUsage) << "--jobs '" << bad << "'";
    EXPECT_NE(r.err.find("--jobs"), std::string::npos) << r.err;
  }
  EXPECT_EQ(RunTool({"validate", "--deep", "--jobs"}).code, kExitUsage);
}

TEST_F(DeepCliTest, ScanDeepChecksEveryFile) {
  const std::filesystem::path dir = testing::FreshDir("deep_cli_scan");
  std::filesystem::copy_file(clean_, dir / "clean.gguf");
  std::filesystem::copy_file(bad_, dir / "bad.gguf");
  const CliRun plain = RunTool({"scan", "--jobs", "2", dir.string()});
  EXPECT_EQ(plain.code, kExitValid) << plain.out;
  const CliRun r = RunTool({"scan", "--deep", "--jobs", "2", dir.string()});
  EXPECT_EQ(r.code, kExitInvalid) << r.out;
  testing::SchemaChecker schema(std::string(GGUFGUARD_SOURCE_DIR) + "/docs", "scan.schema.json");
  size_t with_deep = 0;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    const nlohmann::json j = nlohmann::json::parse(line);
    const std::vector<std::string> errors = schema.Check(j);
    EXPECT_TRUE(errors.empty()) << errors.front() << "\n" << line;
    if (!j.contains("deep")) continue;
    ++with_deep;
    const bool is_bad = j.at("file").get<std::string>().find("bad.gguf") != std::string::npos;
    EXPECT_EQ(j.at("deep").at("bad_values"), is_bad ? 1 : 0) << line;
    EXPECT_EQ(j.at("verdict"), is_bad ? "invalid" : "valid") << line;
  }
  EXPECT_EQ(with_deep, 2u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ggufguard
