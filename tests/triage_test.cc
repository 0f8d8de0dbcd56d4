// --suppressions and --baseline end to end through RunCli: an entry in force
// waives (and the reports keep the finding as waived, with its reason); an
// expired one fails closed; a baseline fails only on what is new.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ggufguard/base/sha256.h"
#include "ggufguard/cli/cli.h"
#include "ggufguard/report/triage.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/test_util.h"

namespace ggufguard {
namespace {

using Json = nlohmann::json;

struct CliResult {
  int code;
  std::string out, err;
};

CliResult Cli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = RunCli(args, out, err);
  return {code, out.str(), err.str()};
}

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A file from the corpus with six GG4008 errors at offset 64 and one GG3007
// at 69, copied so that its path is ours.
class TriageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = testing::TempPath("triage_model.gguf");
    std::filesystem::copy_file(GGUFGUARD_SOURCE_DIR "/corpus/regressions/report-llamacpp-24263-empty-key.gguf",
                               model_, std::filesystem::copy_options::overwrite_existing);
    sha_ = Sha256Hex(ReadAll(model_));
    setenv("GGUFGUARD_TODAY", "2026-06-15", 1);
  }
  void TearDown() override { unsetenv("GGUFGUARD_TODAY"); }

  std::string Suppressions(const Json& entries) {
    const std::string path = testing::TempPath("triage_suppressions.json");
    Write(path, Json{{"suppressions", entries}}.dump());
    return path;
  }
  Json Entry(const std::string& rule, const std::string& expires, const std::string& reason = "reviewed") {
    Json e = {{"rule", rule}, {"sha256", sha_}, {"expires", expires}};
    if (!reason.empty()) e["reason"] = reason;
    return e;
  }

  std::string model_, sha_;
};

TEST_F(TriageTest, AnEntryInForceWaivesAndTheReportKeepsTheReason) {
  const std::string s = Suppressions({Entry("GG4008", "2026-06-15"), Entry("empty-key", "2030-01-01", "<b>ok</b>")});
  CliResult r = Cli({"validate", "--format", "json", "--suppressions", s, model_});
  EXPECT_EQ(r.code, kExitValid) << r.out << r.err;
  const Json f = Json::parse(r.out)["files"][0];
  EXPECT_EQ(f["verdict"], "valid");
  EXPECT_TRUE(f["findings"].empty());
  ASSERT_EQ(f["waived"].size(), 7u);
  EXPECT_EQ(f["waived"][6]["rule"], "GG3007");
  EXPECT_EQ(f["waived"][6]["by"], "suppression");
  EXPECT_EQ(f["waived"][6]["reason"], "<b>ok</b>");

  r = Cli({"validate", "--format", "sarif", "--suppressions", s, model_});
  EXPECT_EQ(r.code, kExitValid);
  const Json results = Json::parse(r.out)["runs"][0]["results"];
  ASSERT_EQ(results.size(), 7u);
  for (const Json& result : results) {
    ASSERT_EQ(result["suppressions"].size(), 1u);
    EXPECT_EQ(result["suppressions"][0]["kind"], "external");
  }
  r = Cli({"validate", "--suppressions", s, model_});
  EXPECT_NE(r.out.find(":69: waived error GG3007 empty-key: "), std::string::npos) << r.out;
}

TEST_F(TriageTest, AnExpiredEntryFailsClosed) {
  const std::string s = Suppressions({Entry("GG4008", "2026-06-14"), Entry("GG3007", "2030-01-01")});
  CliResult r = Cli({"validate", "--format", "json", "--suppressions", s, model_});
  EXPECT_EQ(r.code, kExitInvalid);
  const Json f = Json::parse(r.out)["files"][0];
  EXPECT_EQ(f["findings"].size(), 6u);
  ASSERT_EQ(f["waived"].size(), 1u);  // GG3007's entry is in force
  ASSERT_EQ(f["triage_notes"].size(), 6u);
  EXPECT_NE(f["triage_notes"][0].get<std::string>().find("expired on 2026-06-14"), std::string::npos);
  EXPECT_NE(r.err.find("suppression #1 (GG4008) waives nothing: it expired on 2026-06-14"), std::string::npos);
  r = Cli({"validate", "--format", "sarif", "--suppressions", s, model_});
  const Json run = Json::parse(r.out)["runs"][0];
  EXPECT_EQ(run["results"].size(), 7u);
  EXPECT_FALSE(run["results"][0].contains("suppressions"));
  EXPECT_EQ(run["artifacts"][0]["properties"]["triage_notes"].size(), 6u);
}

TEST_F(TriageTest, PathPatternsHashesAndNamesMustAllMatch) {
  Json by_path = {{"rule", "GG3007"}, {"path", "*_triage_model.gguf"}, {"reason", "r"}, {"expires", "2030-01-01"}};
  Json other_hash = Entry("GG3007", "2030-01-01");
  other_hash["sha256"] = std::string(64, '0');
  Json other_key = Entry("GG3007", "2030-01-01");
  other_key["key"] = "general.name";
  CliResult r = Cli({"validate", "--format", "json", "--suppressions", Suppressions(Json::array({other_hash, other_key})), model_});
  ASSERT_EQ(r.code, kExitInvalid) << r.err;
  EXPECT_EQ(Json::parse(r.out)["files"][0]["findings"].size(), 7u);
  r = Cli({"validate", "--format", "json", "--suppressions", Suppressions(Json::array({by_path})), model_});
  EXPECT_EQ(Json::parse(r.out)["files"][0]["waived"].size(), 1u);
  EXPECT_EQ(r.code, kExitInvalid);  // the GG4008 errors stand
}

TEST_F(TriageTest, AMalformedSuppressionsFileIsAUsageError) {
  for (const Json& entries : {Json::array({{{"rule", "GG9999"}, {"path", "*"}}}),
                              Json::array({{{"rule", "GG3007"}, {"reason", "no file named"}}}),
                              Json::array({{{"rule", "GG3007"}, {"path", "*"}, {"reson", "typo"}}})}) {
    CliResult r = Cli({"validate", "--suppressions", Suppressions(entries), model_});
    EXPECT_EQ(r.code, kExitUsage) << entries.dump();
    EXPECT_NE(r.err.find("suppression #1"), std::string::npos) << r.err;
  }
}

TEST_F(TriageTest, ABaselineWithOneNewFindingFailsOnItAlone) {
  CliResult r = Cli({"validate", "--format", "json", "--hash", model_});
  Json baseline = Json::parse(r.out);
  Json& findings = baseline["files"][0]["findings"];
  ASSERT_EQ(findings.size(), 7u);
  findings.erase(findings.size() - 1);  // GG3007: new since the baseline
  const std::string path = testing::TempPath("triage_baseline.json");
  Write(path, baseline.dump());

  r = Cli({"validate", "--format", "json", "--baseline", path, model_});
  EXPECT_EQ(r.code, kExitInvalid);
  Json f = Json::parse(r.out)["files"][0];
  ASSERT_EQ(f["findings"].size(), 1u);
  EXPECT_EQ(f["findings"][0]["rule"], "GG3007");
  EXPECT_EQ(f["waived"].size(), 6u);
  EXPECT_EQ(f["waived"][0]["by"], "baseline");

  // scan's JSON lines serve as a baseline too, and with every finding in it
  // nothing fails.
  r = Cli({"scan", "--hash", "--jobs", "1", model_});
  Write(path, r.out);
  r = Cli({"scan", "--jobs", "1", "--baseline", path, model_});
  EXPECT_EQ(r.code, kExitValid) << r.out << r.err;

  // A baseline made without --hash cannot pin its findings.
  r = Cli({"validate", "--format", "json", model_});
  Write(path, r.out);
  EXPECT_EQ(Cli({"validate", "--baseline", path, model_}).code, kExitUsage);
}

TEST(SubjectAtTest, NamesTheKeyAnOffsetLiesIn) {
  const std::string bytes = ReadAll(GGUFGUARD_SOURCE_DIR "/corpus/valid/" +
                                    std::filesystem::directory_iterator(GGUFGUARD_SOURCE_DIR "/corpus/valid")
                                        ->path()
                                        .filename()
                                        .string());
  const Report r = ValidateBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, DefaultPolicy());
  ASSERT_FALSE(r.header.kvs.empty());
  const KeyValue& kv = r.header.kvs.back();
  EXPECT_EQ(SubjectAt(r.header, kv.offset()), kv.key());
  EXPECT_EQ(SubjectAt(r.header, kv.key_offset() + 1), kv.key());
  EXPECT_EQ(SubjectAt(r.header, 0), "");  // the fixed header
}

}  // namespace
}  // namespace ggufguard
