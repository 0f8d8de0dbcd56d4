// SARIF 2.1.0 output: it parses back, has the structure code-scanning tools
// read, and says what the text and JSON reports say.
#include "ggufguard/report/sarif.h"

#include <algorithm>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "ggufguard/cli/cli.h"
#include "ggufguard/validate.h"
#include "nlohmann/json.hpp"
#include "tests/test_util.h"
#include "tests/tiny_model.h"

namespace ggufguard {
namespace {

using Json = nlohmann::json;
using ::ggufguard::testing::BuiltFile;
using ::ggufguard::testing::GgufValue;
using ::ggufguard::testing::MakeTinyModel;
using ::ggufguard::testing::TinyModel;

size_t RuleIndexForTest(RuleId id) {
  for (size_t i = 0; i < AllRules().size(); ++i) {
    if (AllRules()[i].id == id) return i;
  }
  ADD_FAILURE() << RuleCode(id);
  return 0;
}

TEST(SarifTest, StructureOfADocument) {
  TinyModel m = MakeTinyModel();
  m.Set("tokenizer.chat_template", GgufValue::Str("{{ x.__class__ }}"));
  m.Set("llama.extra", GgufValue::U32(1));  // an unknown key: a note
  BuiltFile f = m.Build();
  Policy policy = DefaultPolicy();
  policy.disabled[static_cast<uint16_t>(RuleId::kTensorGap)] = true;
  Report r = ValidateBytes(f.bytes, policy);
  Json doc = Json::parse(RenderSarif({FileOutcome{"models/a b%.gguf", &r, ""}}, policy));

  EXPECT_EQ(doc["version"], "2.1.0");
  EXPECT_NE(doc["$schema"].get<std::string>().find("sarif-2.1.0"), std::string::npos);
  ASSERT_EQ(doc["runs"].size(), 1u);
  const Json& run = doc["runs"][0];
  const Json& driver = run["tool"]["driver"];
  EXPECT_EQ(driver["name"], "ggufguard");
  EXPECT_EQ(driver["version"], std::string(kToolVersion));
  EXPECT_EQ(driver["informationUri"], std::string(kInformationUri));

  const Json& rules = driver["rules"];
  ASSERT_EQ(rules.size(), AllRules().size());
  for (size_t i = 0; i < rules.size(); ++i) {
    const RuleInfo& info = AllRules()[i];
    const std::string id = rules[i]["id"];
    EXPECT_TRUE(id.size() == 6 && id.rfind("GG", 0) == 0 &&
                std::all_of(id.begin() + 2, id.end(), [](char c) { return c >= '0' && c <= '9'; }))
        << id;
    EXPECT_EQ(id, RuleCode(info.id));
    EXPECT_EQ(rules[i]["name"], std::string(info.name));
    EXPECT_EQ(rules[i]["shortDescription"]["text"], std::string(info.summary));
    const std::string help = rules[i]["helpUri"];
    EXPECT_EQ(help.substr(help.size() - id.size() - 14), "docs/rules/" + id + ".md") << help;
    const std::string level = rules[i]["defaultConfiguration"]["level"];
    EXPECT_TRUE(level == "error" || level == "warning" || level == "note") << level;
  }
  const Json& gap = rules[RuleIndexForTest(RuleId::kTensorGap)];
  EXPECT_EQ(gap["defaultConfiguration"]["enabled"], false);
  EXPECT_EQ(rules[RuleIndexForTest(RuleId::kUnknownKey)]["defaultConfiguration"]["level"], "note");

  const Json& results = run["results"];
  ASSERT_EQ(results.size(), r.findings.size());
  for (size_t i = 0; i < results.size(); ++i) {
    const Finding& finding = r.findings[i];
    const Json& res = results[i];
    EXPECT_EQ(res["ruleId"], RuleCode(finding.rule));
    EXPECT_EQ(rules[res["ruleIndex"].get<size_t>()]["id"], res["ruleId"]);
    EXPECT_EQ(res["level"], finding.severity == Severity::kError     ? "error"
                            : finding.severity == Severity::kWarning ? "warning"
                                                                     : "note");
    EXPECT_EQ(res["message"]["text"], finding.message);
    const Json& loc = res["locations"][0]["physicalLocation"];
    EXPECT_EQ(loc["artifactLocation"]["uri"], "models/a%20b%25.gguf");
    EXPECT_EQ(loc["region"]["byteOffset"], finding.offset);
    EXPECT_EQ(loc["region"]["byteLength"], 1);
  }
  EXPECT_TRUE(std::any_of(results.begin(), results.end(), [](const Json& x) { return x["level"] == "note"; }));
  EXPECT_TRUE(std::any_of(results.begin(), results.end(), [](const Json& x) { return x["level"] == "error"; }));
  EXPECT_EQ(run["invocations"][0]["executionSuccessful"], true);
  EXPECT_EQ(run["artifacts"][0]["properties"]["verdict"], "invalid");
  EXPECT_EQ(run["properties"]["policy"], "default");
}

TEST(SarifTest, CliWritesSarifAndReportsIoErrors) {
  BuiltFile f = MakeTinyModel().Build();
  const std::string path = testing::TempPath("sarif.gguf");
  testing::WriteFileBytes(path, f.bytes);
  const std::string missing = testing::TempPath("no-such.gguf");
  std::ostringstream out, err;
  EXPECT_EQ(RunCli({"validate", "--format", "sarif", path, missing}, out, err), kExitIo);
  Json doc = Json::parse(out.str());
  const Json& run = doc["runs"][0];
  for (const Json& result : run["results"]) {  // only the template's provenance note
    EXPECT_EQ(result["level"], "note") << result;
    EXPECT_EQ(result["ruleId"].get<std::string>().substr(0, 5), "GG803") << result;
  }
  EXPECT_EQ(run["artifacts"][0]["properties"]["verdict"], "valid");
  EXPECT_EQ(run["invocations"][0]["executionSuccessful"], false);
  EXPECT_EQ(run["invocations"][0]["toolExecutionNotifications"][0]["level"], "error");
}

}  // namespace
}  // namespace ggufguard
