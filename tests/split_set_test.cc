// Split sets judged as one model (src/ggufguard/split/): llama.cpp's shard
// names, the set rules GG9100-GG9106 each triggered by one defect of a
// 3-shard set whose valid neighbour passes, the CLI's set verdict and exit
// codes, and scan's grouping of the shards it finds.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ggufguard/cli/cli.h"
#include "ggufguard/report/render.h"
#include "ggufguard/split/shard_name.h"
#include "ggufguard/split/split_set.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/json_schema.h"
#include "tests/support/split_writer.h"
#include "tests/test_util.h"
#include "tests/tiny_model.h"

namespace ggufguard {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using testing::BuiltFile;
using testing::GgufValue;
using testing::SplitPart;
using testing::SplitTensor;

TEST(ShardNameTest, ParsesLlamaCppNamesOnly) {
  const std::optional<ShardName> n = ParseShardName("models/x-y-00002-of-00003.gguf");
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->prefix, "models/x-y");
  EXPECT_EQ(n->number, 2u);
  EXPECT_EQ(n->count, 3u);
  EXPECT_EQ(ShardLocation(*n, 1), "models/x-y-00001-of-00003.gguf");
  EXPECT_EQ(n->SetLabel(), "models/x-y-*-of-00003.gguf");
  EXPECT_EQ(ParseShardName("https://h/r/resolve/main/m-00001-of-00002.gguf")->prefix, "https://h/r/resolve/main/m");
  for (const char* not_a_shard :
       {"m.gguf", "m-00000-of-00003.gguf", "m-00004-of-00003.gguf", "m-0001-of-00003.gguf", "m-000001-of-00003.gguf",
        "m-00001-of-0000x.gguf", "m-00001-of-00003.GGUF", "-00001-of-00003.gguf", "dir/-00001-of-00003.gguf",
        "m-00001-of-00003.gguf.part", "m_00001-of-00003.gguf", "m-00001-to-00003.gguf"}) {
    EXPECT_FALSE(ParseShardName(not_a_shard).has_value()) << not_a_shard;
  }
  EXPECT_EQ(ParseShardName("a-00001-of-00003.gguf")->SetKey(), ParseShardName("a-00003-of-00003.gguf")->SetKey());
  EXPECT_NE(ParseShardName("a-00001-of-00003.gguf")->SetKey(), ParseShardName("a-00001-of-00004.gguf")->SetKey());
}

// The tiny model split in three as llama-gguf-split writes it: every KV in
// shard 1, the tensors spread over the three.
std::vector<SplitPart> TinySplit() {
  const testing::TinyModel m = testing::MakeTinyModel();
  auto tensor = [&](const std::string& name) {
    for (const auto& t : m.tensors) {
      if (t.name == name) return SplitTensor{t.name, t.dims, t.type};
    }
    ADD_FAILURE() << name;
    return SplitTensor{};
  };
  std::vector<SplitPart> parts(3);
  parts[0].kvs = m.kvs;
  parts[0].tensors = {tensor("token_embd.weight")};
  parts[1].tensors = {tensor("blk.0.attn_norm.weight"), tensor("output_norm.weight")};
  parts[2].tensors = {tensor("output.weight")};
  return parts;
}

struct ToolRun {
  int code;
  std::string out;
  std::string err;
};

ToolRun Tool(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = RunCli(args, out, err);
  return ToolRun{code, out.str(), err.str()};
}

class SplitSetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshDir("split_set");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes the parts as dir/model-0000k-of-0000n.gguf, but those in `skip`
  // (1-based). Returns the first shard's path.
  std::string Write(const std::vector<SplitPart>& parts, std::vector<int> skip = {}) {
    const std::vector<BuiltFile> files = testing::BuildSplitParts(parts);
    for (size_t i = 0; i < files.size(); ++i) {
      if (std::find(skip.begin(), skip.end(), static_cast<int>(i + 1)) != skip.end()) continue;
      testing::WriteFileBytes(Shard(static_cast<int>(i + 1), static_cast<int>(files.size())), files[i].bytes);
    }
    return Shard(1, static_cast<int>(files.size()));
  }
  std::string Shard(int number, int count) const { return testing::SplitFileName(dir_ + "/model", number, count); }

  // The set's report, judged through the library as the CLI does.
  SetReport Judge(const std::string& any_shard, const Policy& policy = DefaultPolicy(), bool shards_valid = true) {
    std::vector<std::string> visited;
    SetReport set = ValidateSplitSet(
        *ParseShardName(any_shard), policy, LocalShardOpener(),
        [&](ByteSource& source, const std::string&) { return ValidateSource(source, policy); },
        [&](const std::string& location, const Report* report, const std::string& error) {
          visited.push_back(location);
          if (report != nullptr) {
            if (shards_valid) {
              EXPECT_TRUE(report->valid()) << location << testing::Describe(*report);
            }
          } else {
            ADD_FAILURE() << location << ": " << error;
          }
        });
    EXPECT_EQ(visited.size(), set.shards.size() - std::count_if(set.shards.begin(), set.shards.end(),
                                                               [](const ShardStatus& s) { return s.verdict == "missing"; }));
    return set;
  }

  static std::string Describe(const SetReport& set) {
    std::string s = std::string(VerdictName(set.verdict()));
    for (const SetFinding& f : set.findings) s += "\n  " + f.location + " " + RuleCode(f.finding.rule) + ": " + f.finding.message;
    for (const std::string& n : set.not_checked) s += "\n  not checked: " + n;
    return s;
  }
  static std::vector<RuleId> Rules(const SetReport& set) {
    std::vector<RuleId> out;
    for (const SetFinding& f : set.findings) out.push_back(f.finding.rule);
    return out;
  }

  std::string dir_;
};

TEST_F(SplitSetTest, AValidSetIsValid) {
  const std::string first = Write(TinySplit());
  const SetReport set = Judge(Shard(2, 3));  // any shard names the set
  EXPECT_EQ(set.verdict(), Report::Verdict::kValid) << Describe(set);
  EXPECT_TRUE(set.findings.empty()) << Describe(set);
  ASSERT_EQ(set.shards.size(), 3u);
  EXPECT_EQ(set.shards[0].location, first);
  EXPECT_EQ(set.label, dir_ + "/model-*-of-00003.gguf");
  // Strict too: no set rule fires on a set gguf-split could have written.
  EXPECT_EQ(Judge(first, StrictPolicy()).verdict(), Report::Verdict::kValid);
  // A shard whose tensors are all elsewhere (--no-tensor-in-metadata) is fine.
  std::vector<SplitPart> parts = TinySplit();
  parts[1].tensors.insert(parts[1].tensors.begin(), parts[0].tensors.begin(), parts[0].tensors.end());
  parts[0].tensors.clear();
  Write(parts);
  EXPECT_EQ(Judge(first).verdict(), Report::Verdict::kValid) << Describe(Judge(first));
}

// GG9165 for a split model: no shard alone is judged for token_embd.weight
// (another may hold it), the set is.
TEST_F(SplitSetTest, ASetWithoutTokenEmbdInAnyShard) {
  std::vector<SplitPart> parts = TinySplit();
  parts[0].tensors.clear();  // token_embd.weight, shard 1's only tensor
  const std::string first = Write(parts);
  const SetReport set = Judge(first);
  EXPECT_EQ(set.verdict(), Report::Verdict::kInvalid) << Describe(set);
  ASSERT_EQ(Rules(set), std::vector<RuleId>{RuleId::kMissingTokenEmbedding}) << Describe(set);
  EXPECT_EQ(set.findings[0].location, first);
  // In any shard it is enough.
  parts = TinySplit();
  parts[2].tensors.push_back(parts[0].tensors.front());
  parts[0].tensors.clear();
  EXPECT_EQ(Judge(Write(parts)).verdict(), Report::Verdict::kValid);
}

TEST_F(SplitSetTest, AMissingShardIsInconclusiveAndNamed) {
  Write(TinySplit(), {3});
  const SetReport set = Judge(Shard(1, 3));
  EXPECT_EQ(set.verdict(), Report::Verdict::kInconclusive) << Describe(set);
  ASSERT_EQ(Rules(set), std::vector<RuleId>{RuleId::kSplitShardMissing}) << Describe(set);
  EXPECT_EQ(set.findings[0].location, Shard(3, 3));
  ASSERT_FALSE(set.not_checked.empty());
  EXPECT_NE(set.not_checked[0].find(Shard(3, 3)), std::string::npos);
  EXPECT_EQ(set.shards[2].verdict, "missing");
}

TEST_F(SplitSetTest, SplitCountThatDisagreesWithTheNames) {
  std::vector<SplitPart> parts = TinySplit();
  parts[1].count = 4;
  Write(parts);
  SetReport set = Judge(Shard(1, 3));
  EXPECT_EQ(set.verdict(), Report::Verdict::kInvalid);
  EXPECT_EQ(Rules(set), std::vector<RuleId>{RuleId::kSplitCountMismatch}) << Describe(set);
  EXPECT_EQ(set.findings[0].location, Shard(2, 3));
  // A shard without any split key is read by llama.cpp as a model alone.
  parts = TinySplit();
  parts[2].split_keys = false;
  Write(parts);
  set = Judge(Shard(1, 3), DefaultPolicy(), /*shards_valid=*/false);  // shard 3 alone lacks an architecture (GG4006)
  EXPECT_EQ(Rules(set), std::vector<RuleId>{RuleId::kSplitCountMismatch}) << Describe(set);
  EXPECT_EQ(set.findings[0].location, Shard(3, 3));
}

TEST_F(SplitSetTest, SplitNoThatDisagreesWithTheName) {
  std::vector<SplitPart> parts = TinySplit();
  parts[2].no = 1;  // shard 3 says it is split.no 1, the second
  Write(parts);
  const SetReport set = Judge(Shard(1, 3));
  EXPECT_EQ(set.verdict(), Report::Verdict::kInvalid);
  EXPECT_EQ(Rules(set), std::vector<RuleId>{RuleId::kSplitNumberMismatch}) << Describe(set);
  EXPECT_EQ(set.findings[0].location, Shard(3, 3));
  EXPECT_NE(set.findings[0].finding.message.find("split.no 2"), std::string::npos) << Describe(set);
}

TEST_F(SplitSetTest, ATensorInTwoShards) {
  std::vector<SplitPart> parts = TinySplit();
  parts[2].tensors.push_back(parts[1].tensors[0]);  // blk.0.attn_norm.weight again, in shard 3
  Write(parts);
  const SetReport set = Judge(Shard(1, 3));
  EXPECT_EQ(set.verdict(), Report::Verdict::kInvalid);
  EXPECT_EQ(Rules(set), std::vector<RuleId>{RuleId::kSplitDuplicateTensor}) << Describe(set);
  EXPECT_EQ(set.findings[0].location, Shard(3, 3));
  EXPECT_NE(set.findings[0].finding.message.find("'blk.0.attn_norm.weight' is also in shard 2"), std::string::npos);
}

TEST_F(SplitSetTest, ATensorTotalThatIsNotTheSum) {
  std::vector<SplitPart> parts = TinySplit();
  for (SplitPart& p : parts) p.tensors_total = 5;  // the shards hold 4
  Write(parts);
  const SetReport set = Judge(Shard(1, 3));
  EXPECT_EQ(set.verdict(), Report::Verdict::kInvalid);
  EXPECT_EQ(Rules(set), std::vector<RuleId>(3, RuleId::kSplitTensorTotal)) << Describe(set);
  // Only the first shard's disagrees: one finding, there.
  parts = TinySplit();
  parts[0].tensors_total = 3;
  Write(parts);
  const SetReport first = Judge(Shard(1, 3));
  EXPECT_EQ(Rules(first), std::vector<RuleId>{RuleId::kSplitTensorTotal}) << Describe(first);
  EXPECT_EQ(first.findings[0].location, Shard(1, 3));
}

TEST_F(SplitSetTest, ModelMetadataOutsideTheFirstShard) {
  std::vector<SplitPart> parts = TinySplit();
  parts[1].kvs = {{"llama.context_length", GgufValue::U32(1 << 20)},
                  {"tokenizer.chat_template", GgufValue::Str("{{ messages }}")},
                  {"general.name", GgufValue::Str("not model metadata")}};
  Write(parts);
  const SetReport set = Judge(Shard(1, 3));
  EXPECT_EQ(Rules(set), std::vector<RuleId>(2, RuleId::kSplitMetadataOutsideFirst)) << Describe(set);
  EXPECT_EQ(set.verdict(), Report::Verdict::kValid);  // a warning by default
  EXPECT_EQ(Judge(Shard(1, 3), StrictPolicy()).verdict(), Report::Verdict::kInvalid);
}

// Shards 2..N hold no general.* keys: their quantized tensors take the
// quantization version from shard 1, so GG4013 is judged for the set.
TEST_F(SplitSetTest, QuantizationVersionIsTheFirstShards) {
  std::vector<SplitPart> parts = TinySplit();
  parts[0].kvs.emplace_back("general.quantization_version", GgufValue::U32(2));
  parts[2].tensors.push_back(SplitTensor{"extra.weight", {32, 2}, 8});  // Q8_0
  Write(parts);
  std::vector<std::string> per_shard;
  const Policy policy = DefaultPolicy();
  auto judge = [&] {
    per_shard.clear();
    return ValidateSplitSet(
        *ParseShardName(Shard(1, 3)), policy, LocalShardOpener(),
        [&](ByteSource& source, const std::string&) { return ValidateSource(source, policy); },
        [&](const std::string&, const Report* report, const std::string&) {
          ASSERT_NE(report, nullptr);
          for (const Finding& f : report->findings) per_shard.push_back(RuleCode(f.rule));
        });
  };
  SetReport set = judge();
  EXPECT_TRUE(set.findings.empty()) << Describe(set);
  EXPECT_EQ(std::count(per_shard.begin(), per_shard.end(), "GG4013"), 0);
  parts[0].kvs.pop_back();
  Write(parts);
  set = judge();
  EXPECT_EQ(Rules(set), std::vector<RuleId>{RuleId::kQuantizationVersion}) << Describe(set);
  EXPECT_EQ(set.findings[0].location, Shard(3, 3));
  EXPECT_EQ(std::count(per_shard.begin(), per_shard.end(), "GG4013"), 0);  // not twice
}

TEST_F(SplitSetTest, MoreShardsThanThePolicyAllowsAreNotRead) {
  Write(TinySplit());
  Policy policy = DefaultPolicy();
  policy.limits.max_split_shards = 2;
  const SetReport set = ValidateSplitSet(
      *ParseShardName(Shard(1, 3)), policy, LocalShardOpener(),
      [&](ByteSource& source, const std::string&) { return ValidateSource(source, policy); },
      [&](const std::string& location, const Report*, const std::string&) { ADD_FAILURE() << "read " << location; });
  EXPECT_EQ(set.verdict(), Report::Verdict::kInvalid);
  EXPECT_EQ(Rules(set), std::vector<RuleId>{RuleId::kSplitShardLimit}) << Describe(set);
  EXPECT_FALSE(set.not_checked.empty());
}

// The opener is the seam for remote sets: every sibling is asked for by its
// location string, and NotFound is a missing shard, any other error an
// unreadable one.
TEST_F(SplitSetTest, SiblingsAreOpenedThroughTheOpenerByLocation) {
  const std::vector<BuiltFile> files = testing::BuildSplitParts(TinySplit());
  std::vector<std::string> asked;
  const ShardOpener memory = [&](const std::string& location) -> absl::StatusOr<std::unique_ptr<ByteSource>> {
    asked.push_back(location);
    if (location == "https://hub.test/m-00002-of-00003.gguf") return absl::UnavailableError("HTTP 503");
    for (int i = 1; i <= 3; ++i) {
      if (location == testing::SplitFileName("https://hub.test/m", i, 3)) {
        return std::unique_ptr<ByteSource>(new MemorySource(files[static_cast<size_t>(i - 1)].bytes));
      }
    }
    return absl::NotFoundError("404");
  };
  const Policy policy = DefaultPolicy();
  int unreadable = 0;
  const SetReport set = ValidateSplitSet(
      *ParseShardName("https://hub.test/m-00003-of-00003.gguf"), policy, memory,
      [&](ByteSource& source, const std::string&) { return ValidateSource(source, policy); },
      [&](const std::string&, const Report* report, const std::string&) { unreadable += report == nullptr; });
  EXPECT_EQ(asked, (std::vector<std::string>{"https://hub.test/m-00001-of-00003.gguf",
                                             "https://hub.test/m-00002-of-00003.gguf",
                                             "https://hub.test/m-00003-of-00003.gguf"}));
  EXPECT_EQ(unreadable, 1);
  EXPECT_EQ(set.verdict(), Report::Verdict::kInconclusive) << Describe(set);
  EXPECT_TRUE(set.findings.empty()) << Describe(set);  // unreadable is not missing
  EXPECT_EQ(set.shards[1].verdict, "io-error");
}

TEST_F(SplitSetTest, CliJudgesTheSetFromAnyShard) {
  Write(TinySplit());
  ToolRun r = Tool({"validate", "--format", "json", Shard(3, 3)});
  EXPECT_EQ(r.code, kExitValid) << r.out << r.err;
  Json doc = Json::parse(r.out);
  EXPECT_EQ(doc["files"].size(), 3u);
  ASSERT_EQ(doc["sets"].size(), 1u);
  EXPECT_EQ(doc["sets"][0]["verdict"], "valid");
  EXPECT_EQ(doc["sets"][0]["shard_count"], 3);
  testing::SchemaChecker schema(std::string(GGUFGUARD_SOURCE_DIR) + "/docs", "report.schema.json");
  std::vector<std::string> errors = schema.Check(doc);
  EXPECT_TRUE(errors.empty()) << errors[0];
  // Named by every shard: judged once.
  r = Tool({"validate", "--format", "json", Shard(1, 3), Shard(2, 3), Shard(3, 3)});
  EXPECT_EQ(Json::parse(r.out)["sets"].size(), 1u);
  // --no-set: the shard alone, inconclusive (split/lone_shard.h): the rest
  // of its set was not read.
  r = Tool({"validate", "--no-set", "--format", "json", Shard(2, 3)});
  EXPECT_EQ(r.code, kExitInconclusive);
  doc = Json::parse(r.out);
  EXPECT_EQ(doc["files"].size(), 1u);
  EXPECT_FALSE(doc.contains("sets"));
  // Text: the set's verdict line.
  r = Tool({"validate", Shard(1, 3)});
  EXPECT_NE(r.out.find("model-*-of-00003.gguf: valid (split set of 3 shards: 3 valid"), std::string::npos) << r.out;
  // --header-only: each shard's data unread, so the set is inconclusive.
  r = Tool({"validate", "--header-only", Shard(1, 3)});
  EXPECT_EQ(r.code, kExitInconclusive) << r.out;
  EXPECT_NE(r.out.find("model-*-of-00003.gguf: inconclusive"), std::string::npos) << r.out;
}

TEST_F(SplitSetTest, CliExitCodesOfDefectiveSets) {
  std::vector<SplitPart> parts = TinySplit();
  Write(parts, {2});
  ToolRun r = Tool({"validate", Shard(1, 3)});
  EXPECT_EQ(r.code, kExitInconclusive) << r.out;
  EXPECT_NE(r.out.find(EscapeLabelForText(Shard(2, 3)) + ":0: warning GG9100 split-shard-missing"),
            std::string::npos)
      << r.out;
  parts[1].no = 0;
  Write(parts);
  r = Tool({"validate", "--format", "sarif", Shard(1, 3)});
  EXPECT_EQ(r.code, kExitInvalid) << r.out;
  const Json sarif = Json::parse(r.out);
  bool found = false;
  for (const Json& result : sarif["runs"][0]["results"]) {
    found |= result["ruleId"] == "GG9102" &&
             result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].get<std::string>().find(
                 "model-00002-of-00003.gguf") != std::string::npos;
  }
  EXPECT_TRUE(found) << r.out;
  EXPECT_EQ(sarif["runs"][0]["properties"]["sets"][0]["verdict"], "invalid");
  // An invalid set and an inconclusive file: invalid wins.
  const std::string lone = dir_ + "/lone.gguf";
  testing::WriteFileBytes(lone, testing::MakeTinyModel().Build().bytes);
  EXPECT_EQ(Tool({"validate", "--header-only", lone, Shard(1, 3)}).code, kExitInvalid);
}

// A shard's suppressions apply before the set is judged, in validate and in
// scan: a waived finding in shard 2 no longer fails the set, and one that is
// not waived still does.
TEST_F(SplitSetTest, SuppressionsApplyToEachShardBeforeTheSet) {
  Write(TinySplit());
  {
    std::ofstream shard(Shard(2, 3), std::ios::binary | std::ios::app);
    shard.put('\x01');  // GG6007 trailing-bytes, an error
  }
  const std::string waive = dir_ + "/suppressions.json";
  std::ofstream(waive) << R"({"suppressions": [{"rule": "GG6007", "path": "*model-00002-of-00003.gguf",)"
                       << R"( "reason": "reviewed trailer", "expires": "2099-01-01"}]})";
  EXPECT_EQ(Tool({"validate", Shard(1, 3)}).code, kExitInvalid);
  ToolRun r = Tool({"validate", "--format", "json", "--suppressions", waive, Shard(1, 3)});
  EXPECT_EQ(r.code, kExitValid) << r.out << r.err;
  const Json doc = Json::parse(r.out);
  EXPECT_EQ(doc["sets"][0]["verdict"], "valid") << r.out;
  EXPECT_EQ(doc["files"][1]["waived"][0]["reason"], "reviewed trailer") << r.out;
  r = Tool({"scan", "--jobs", "1", "--suppressions", waive, dir_});
  EXPECT_EQ(r.code, kExitValid) << r.out << r.err;
  EXPECT_EQ(Tool({"scan", "--jobs", "1", dir_}).code, kExitInvalid);
}

TEST_F(SplitSetTest, ScanGroupsShardsIntoSets) {
  Write(TinySplit());
  testing::WriteFileBytes(dir_ + "/lone.gguf", testing::MakeTinyModel().Build().bytes);
  ToolRun r = Tool({"scan", "--jobs", "2", dir_});
  EXPECT_EQ(r.code, kExitValid) << r.out << r.err;
  testing::SchemaChecker schema(std::string(GGUFGUARD_SOURCE_DIR) + "/docs", "scan.schema.json");
  int files = 0, sets = 0;
  Json summary;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    const Json j = Json::parse(line);
    const std::vector<std::string> errors = schema.Check(j);
    EXPECT_TRUE(errors.empty()) << line << "\n" << (errors.empty() ? "" : errors[0]);
    if (j["type"] == "file") ++files;
    if (j["type"] == "set") {
      ++sets;
      EXPECT_EQ(j["verdict"], "valid") << line;
      EXPECT_EQ(j["shards"].size(), 3u);
    }
    if (j["type"] == "summary") summary = j;
  }
  EXPECT_EQ(files, 4);
  EXPECT_EQ(sets, 1);
  EXPECT_EQ(summary["sets"]["valid"], 1) << summary.dump();
  // A shard gone: the set is inconclusive, and so is the scan.
  fs::remove(Shard(3, 3));
  r = Tool({"scan", "--format", "text", dir_});
  EXPECT_EQ(r.code, kExitInconclusive) << r.out;
  EXPECT_NE(r.out.find("1 inconclusive)"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace ggufguard
