// Policy files: what they change, and the errors that refuse a bad one.
#include "ggufguard/findings/policy_file.h"

#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ggufguard/cli/cli.h"
#include "tests/test_util.h"

namespace ggufguard {
namespace {

Policy ParseOk(const std::string& json) {
  absl::StatusOr<Policy> p = ParsePolicyJson(json, "p.json");
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *p : Policy{};
}

std::string ParseError(const std::string& json) {
  absl::StatusOr<Policy> p = ParsePolicyJson(json, "p.json");
  EXPECT_FALSE(p.ok()) << json;
  return p.ok() ? "" : std::string(p.status().message());
}

TEST(PolicyFileTest, EmptyObjectIsTheDefaultPolicy) {
  Policy p = ParseOk("{}");
  EXPECT_EQ(p.name, "default+p.json");
  EXPECT_FALSE(p.strict_severities);
  EXPECT_EQ(p.limits.max_tensor_count, DefaultPolicy().limits.max_tensor_count);
}

TEST(PolicyFileTest, BaseLimitsSeveritiesAndDisabledRules) {
  Policy p = ParseOk(R"({
    "base": "strict",
    "name": "gate",
    "description": "what our registry enforces",
    "limits": {"max_tensor_count": 5000, "max_nesting_depth": 2, "max_kv_cache_bytes": 1099511627776},
    "check_merges": false,
    "strict_key_grammar": false,
    "severities": {"GG6004": "info", "unknown-key": "warning"},
    "disable": ["GG3008", "chat-template-dangerous-name"]
  })");
  EXPECT_EQ(p.name, "gate");
  EXPECT_TRUE(p.strict_severities);  // from the base
  EXPECT_EQ(p.limits.min_alignment, 8u);
  EXPECT_EQ(p.limits.max_tensor_count, 5000u);
  EXPECT_EQ(p.limits.max_nesting_depth, 2u);
  EXPECT_EQ(p.limits.max_kv_cache_bytes, uint64_t{1} << 40);
  EXPECT_FALSE(p.check_merges);
  EXPECT_FALSE(p.strict_key_grammar);
  EXPECT_EQ(p.SeverityOf(RuleId::kTensorGap), Severity::kInfo);
  EXPECT_EQ(p.SeverityOf(RuleId::kUnknownKey), Severity::kWarning);
  EXPECT_EQ(p.SeverityOf(RuleId::kTrailingBytes), Severity::kError);
  EXPECT_FALSE(p.Enabled(RuleId::kKeyGrammar));
  EXPECT_FALSE(p.Enabled(RuleId::kChatTemplateDangerousName));
  EXPECT_TRUE(p.Enabled(RuleId::kKeyCollision));
}

// The number of limits in the one table (limits.def).
constexpr size_t kLimitsInTable = 0
#define GGUFGUARD_LIMIT(type, name, default_value) +1
#include "ggufguard/findings/limits.def"
#undef GGUFGUARD_LIMIT
    ;

TEST(PolicyFileTest, EveryLimitCanBeSetByName) {
  const std::vector<std::string_view> names = LimitFieldNames();
  EXPECT_EQ(names.size(), kLimitsInTable);
  for (std::string_view name : names) {
    const uint64_t value = name == "min_alignment" ? 2 : name == "max_nesting_depth" ? 3 : 7;
    absl::StatusOr<Policy> p = ParsePolicyJson("{\"limits\": {\"" + std::string(name) + "\": " + std::to_string(value) + "}}", "p");
    EXPECT_TRUE(p.ok()) << name << ": " << p.status();
  }
  Policy p = ParseOk(R"({"limits": {"max_findings_per_rule": 3, "max_vocab_size": 9, "max_list_entries": 12,
                         "max_header_memory_bytes": 10, "max_chat_template_bytes": 11, "max_deep_bytes": 13,
                         "max_deep_findings_per_tensor": 14}})");
  EXPECT_EQ(p.limits.max_deep_bytes, 13u);
  EXPECT_EQ(p.limits.max_deep_findings_per_tensor, 14u);
  EXPECT_EQ(p.limits.max_findings_per_rule, 3u);
  EXPECT_EQ(p.limits.max_vocab_size, 9u);
  EXPECT_EQ(p.limits.max_header_memory_bytes, 10u);
  EXPECT_EQ(p.limits.max_chat_template_bytes, 11u);
  EXPECT_EQ(p.limits.max_list_entries, 12u);
}

TEST(PolicyFileTest, ErrorsNameTheField) {
  struct Case {
    std::string json;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"", "not valid JSON"},
      {"[1]", "expected a JSON object"},
      {R"({"bsae": "strict"})", "bsae: unknown field"},
      {R"({"base": "lenient"})", "base: expected \"default\" or \"strict\""},
      {R"({"limits": {"max_kv_count": -1}})", "limits.max_kv_count: expected a non-negative integer, got a negative"},
      {R"({"limits": {"max_kv_count": 1.5}})", "limits.max_kv_count: expected a non-negative integer, got a fractional"},
      {R"({"limits": {"max_kv_count": "10"}})", "got a JSON string"},
      {R"({"limits": {"max_kv_cont": 10}})", "limits.max_kv_cont: unknown limit"},
      {R"({"limits": {"max_findings_per_rule": 4294967296}})", "exceeds 2^32 - 1"},
      {R"({"limits": {"max_nesting_depth": 65}})", "exceeds the hard ceiling of 64"},
      {R"({"limits": {"max_header_bytes": 4294967296}})",
       "limits.max_header_bytes: 4294967296 exceeds the hard ceiling of 4294967295"},
      {R"({"limits": {"min_alignment": 64, "max_alignment": 32}})", "limits.min_alignment"},
      {R"({"limits": []})", "limits: expected an object"},
      {R"({"severities": {"GG9999": "error"}})", "severities.GG9999: unknown rule 'GG9999'"},
      {R"({"severities": {"GG3011": "fatal"}})", "severities.GG3011: expected \"error\", \"warning\" or \"info\""},
      {R"({"disable": ["tensor-gap", 7]})", "disable[1]: expected a rule ID or name"},
      {R"({"disable": ["no-such-rule"]})", "disable[0]: unknown rule 'no-such-rule'"},
      {R"({"disable": "GG3008"})", "disable: expected an array"},
      {R"({"check_merges": 1})", "check_merges: expected true or false"},
      {R"({"name": 3})", "name: expected a string"},
      {R"({"limits": {"max_kv_count": 1, "max_kv_count": 2}})", "line 1: the key /limits/max_kv_count is given twice"},
      {"{\"name\": \"a\",\n \"disable\": [],\n \"name\": \"b\"}", "line 3: the key /name is given twice"},
  };
  for (const Case& c : cases) {
    std::string error = ParseError(c.json);
    EXPECT_NE(error.find(c.says), std::string::npos) << c.json << " gave: " << error;
    // The document first, then the line where the parser can name one.
    EXPECT_TRUE(error.rfind("policy p.json: ", 0) == 0 || error.rfind("policy p.json, line ", 0) == 0) << error;
  }
}

TEST(PolicyFileTest, LoadsFromAFileAndTheCliUsesIt) {
  const std::string path = testing::TempPath("policy.json");
  const std::string text = R"({"base": "default", "disable": ["missing-architecture"]})";
  testing::WriteFileBytes(path, absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
  absl::StatusOr<Policy> p = LoadPolicyFile(path);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_FALSE(p->Enabled(RuleId::kMissingArchitecture));

  // A file with tensors and a model's key but no general.architecture:
  // invalid by default, valid once the policy file disables the rule.
  testing::BuiltFile model =
      testing::GgufBuilder().AddKv("llama.context_length", testing::GgufValue::U32(64)).AddTensor("t", {4}, 0).Build();
  const std::string gguf = testing::TempPath("noarch.gguf");
  testing::WriteFileBytes(gguf, model.bytes);
  std::ostringstream out, err;
  EXPECT_EQ(RunCli({"validate", gguf}, out, err), kExitInvalid) << out.str();
  EXPECT_EQ(RunCli({"validate", "--policy", path, gguf}, out, err), kExitValid) << out.str() << err.str();

  const std::string bad = testing::TempPath("bad-policy.json");
  const std::string bad_text = R"({"limits": {"max_kv_count": -5}})";
  testing::WriteFileBytes(bad, absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(bad_text.data()),
                                                         bad_text.size()));
  std::ostringstream out2, err2;
  EXPECT_EQ(RunCli({"validate", "--policy", bad, gguf}, out2, err2), kExitUsage);
  EXPECT_NE(err2.str().find("limits.max_kv_count"), std::string::npos) << err2.str();
  std::ostringstream out3, err3;
  EXPECT_EQ(RunCli({"validate", "--policy", testing::TempPath("missing.json"), gguf}, out3, err3), kExitUsage);
  EXPECT_NE(err3.str().find("cannot open"), std::string::npos) << err3.str();
}

// The size limit is 1 MiB: a file of exactly that many bytes (a policy
// padded with spaces, read in several steps) loads, one byte more does not.
TEST(PolicyFileTest, FileSizeLimitIsOneMebibyteExactly) {
  auto write = [](const std::string& name, size_t size) {
    std::string text = R"({"disable": ["missing-architecture"]})";
    text.append(size - text.size(), ' ');
    const std::string path = testing::TempPath(name);
    testing::WriteFileBytes(path, absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
    return path;
  };
  absl::StatusOr<Policy> at_limit = LoadPolicyFile(write("policy-at-limit.json", size_t{1} << 20));
  ASSERT_TRUE(at_limit.ok()) << at_limit.status();
  EXPECT_FALSE(at_limit->Enabled(RuleId::kMissingArchitecture));
  absl::StatusOr<Policy> over = LoadPolicyFile(write("policy-over-limit.json", (size_t{1} << 20) + 1));
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.status().message().find("larger than 1048576 bytes"), std::string::npos) << over.status();
}

// The example in docs/policy.md is a working policy.
TEST(PolicyFileTest, DocumentedExampleParses) {
  std::optional<std::vector<uint8_t>> doc = testing::ReadFileBytes(GGUFGUARD_SOURCE_DIR "/docs/policy.md");
  ASSERT_TRUE(doc.has_value());
  std::string text(doc->begin(), doc->end());
  const std::string fence = "```json\n";
  size_t begin = text.find(fence);
  ASSERT_NE(begin, std::string::npos);
  begin += fence.size();
  size_t end = text.find("```", begin);
  ASSERT_NE(end, std::string::npos);
  absl::StatusOr<Policy> p = ParsePolicyJson(text.substr(begin, end - begin), "docs/policy.md");
  EXPECT_TRUE(p.ok()) << p.status();
  // And it names every limit.
  for (std::string_view name : LimitFieldNames()) {
    EXPECT_NE(text.find("`" + std::string(name) + "`"), std::string::npos) << name << " undocumented";
  }
}

}  // namespace
}  // namespace ggufguard
