// 9xxx resource estimates, the readings of colliding keys, and the real
// files of ../shared/corpus-real under every semantic rule.
#include "ggufguard/rules/loader_rules.h"

#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ggufguard/report/render.h"
#include "ggufguard/validate.h"
#include "nlohmann/json.hpp"
#include "tests/test_util.h"
#include "tests/tiny_model.h"

namespace ggufguard {
namespace {

using ::ggufguard::testing::BuiltFile;
using ::ggufguard::testing::GgufBuilder;
using ::ggufguard::testing::GgufValue;
using ::ggufguard::testing::HasFinding;
using ::ggufguard::testing::IsValid;
using ::ggufguard::testing::LacksRule;
using ::ggufguard::testing::MakeTinyModel;
using ::ggufguard::testing::TinyModel;

using ::ggufguard::testing::Check;

TEST(LoaderRulesTest, TensorsDeclaringMoreThanTheFileHolds) {
  TinyModel m = MakeTinyModel();
  // 4 MiB declared, 32 bytes written.
  BuiltFile f = m.Builder().AddTensor("blk.0.big.weight", {1024, 1024}, 0, {.byte_size = 32}).Build();
  Report r = Check(f);
  EXPECT_TRUE(HasFinding(r, RuleId::kTensorAllocation, f.tensor_info_offsets.back()));
  EXPECT_TRUE(testing::HasRule(r, RuleId::kTensorOutOfBounds));
  for (const Finding& x : r.findings) {
    if (x.rule == RuleId::kTensorAllocation) {
      EXPECT_NE(x.message.find("4194816 bytes (4.0 MiB)"), std::string::npos) << x.message;
    }
  }
  BuiltFile ok = m.Build();
  EXPECT_TRUE(LacksRule(Check(ok), RuleId::kTensorAllocation));
}

TEST(LoaderRulesTest, KvCacheEstimateAgainstThePolicyLimit) {
  TinyModel m = MakeTinyModel();
  m.Set("llama.attention.head_count_kv", GgufValue::U32(1));
  BuiltFile f = m.Build();
  // 64 positions x 1 block x (4 + 4) K/V width (8 x 1/2 heads) x 2 bytes.
  Policy p = DefaultPolicy();
  p.limits.max_kv_cache_bytes = 1024;
  EXPECT_TRUE(LacksRule(Check(f, p), RuleId::kKvCacheEstimate));
  p.limits.max_kv_cache_bytes = 1023;
  EXPECT_TRUE(HasFinding(Check(f, p), RuleId::kKvCacheEstimate, m.Kv(f, "llama.context_length").payload));

  // Under the default 16 TiB: a 4-billion-token context over 512 wide blocks.
  m.Set("llama.context_length", GgufValue::U32(4294967295u))
      .Set("llama.block_count", GgufValue::U32(512))
      .Set("llama.embedding_length", GgufValue::U32(65536));
  BuiltFile bomb = m.Build();
  Report r = Check(bomb);
  EXPECT_TRUE(HasFinding(r, RuleId::kKvCacheEstimate, m.Kv(bomb, "llama.context_length").payload));
}

TEST(LoaderRulesTest, VocabularySizeLimit) {
  TinyModel m = MakeTinyModel();
  BuiltFile f = m.Build();
  Policy p = DefaultPolicy();
  p.limits.max_vocab_size = 6;
  Report r = Check(f, p);
  EXPECT_TRUE(HasFinding(r, RuleId::kVocabSizeLimit, m.Kv(f, "tokenizer.ggml.tokens").array_elements()));
  EXPECT_EQ(testing::CountRule(r, RuleId::kVocabSizeLimit), 1u);  // one merge is fine
  p.limits.max_vocab_size = 7;
  EXPECT_TRUE(IsValid(Check(f, p)));
}

TEST(LoaderRulesTest, HeaderMemoryEstimate) {
  BuiltFile f = MakeTinyModel().Build();
  Policy p = DefaultPolicy();
  p.limits.max_header_memory_bytes = 1000;
  EXPECT_TRUE(HasFinding(Check(f, p), RuleId::kHeaderMemory, 8));
  EXPECT_TRUE(LacksRule(Check(f), RuleId::kHeaderMemory));
}

TEST(KeyReadingsTest, EachReaderPicksItsValue) {
  BuiltFile f = GgufBuilder()
                    .AddKv(std::string("general.name\0x", 14), GgufValue::Str("shadow"))  // 0
                    .AddKv("general.architecture", GgufValue::Str("llama"))               // 1
                    .AddKv("General.Name", GgufValue::Str("cased"))                       // 2
                    .AddKv("general.name", GgufValue::Str("real"))                        // 3
                    .AddKv(" general.name", GgufValue::Str("spaced"))                     // 4
                    .Build();
  Report r = Check(f);
  EXPECT_TRUE(testing::HasRule(r, RuleId::kKeyCollision));
  const std::vector<KeyReadings>& groups = r.key_collisions;  // FindKeyReadings, at validation
  ASSERT_EQ(groups.size(), 1u);
  const KeyReadings& g = groups[0];
  EXPECT_EQ(g.name, "general.name");
  EXPECT_EQ(g.kvs, (std::vector<size_t>{0, 2, 3, 4}));
  EXPECT_EQ(g.exact, 3u);     // the bytes "general.name"
  EXPECT_EQ(g.c_string, 0u);  // llama.cpp: strcmp stops at the NUL
  EXPECT_EQ(g.last_wins, 4u);

  nlohmann::json doc = nlohmann::json::parse(RenderJson({FileOutcome{"k.gguf", &r, ""}}, "default"));
  const nlohmann::json& c = doc["files"][0]["key_collisions"];
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0]["key"], "general.name");
  EXPECT_EQ(c[0]["keys"].size(), 4u);
  EXPECT_EQ(c[0]["keys"][0]["key"], "general.name\\x00x");
  EXPECT_EQ(c[0]["readings"]["exact"]["value"], "'real'");
  EXPECT_EQ(c[0]["readings"]["exact"]["offset"], f.kv_offsets[3]);
  EXPECT_EQ(c[0]["readings"]["c_string"]["value"], "'shadow'");
  EXPECT_EQ(c[0]["readings"]["last_wins"]["value"], "'spaced'");
}

TEST(KeyReadingsTest, NoExactKeyAndPlainDuplicates) {
  BuiltFile f = GgufBuilder()
                    .AddKv("a.b", GgufValue::U32(1))
                    .AddKv("a.b", GgufValue::U32(2))
                    .AddKv(std::string("c.d\0", 4), GgufValue::U32(3))
                    .AddKv("C.D", GgufValue::U32(4))
                    .AddKv("e.f", GgufValue::U32(5))
                    .Build();
  Report r = Check(f);
  const std::vector<KeyReadings>& groups = r.key_collisions;  // FindKeyReadings, at validation
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].exact, 0u);
  EXPECT_EQ(groups[0].c_string, 0u);
  EXPECT_EQ(groups[0].last_wins, 1u);
  EXPECT_EQ(groups[1].name, "c.d");
  EXPECT_EQ(groups[1].exact, std::nullopt);
  EXPECT_EQ(groups[1].c_string, 2u);
  EXPECT_EQ(groups[1].last_wins, 3u);
  nlohmann::json doc = nlohmann::json::parse(RenderJson({FileOutcome{"k.gguf", &r, ""}}, "default"));
  EXPECT_TRUE(doc["files"][0]["key_collisions"][1]["readings"]["exact"].is_null());
}

// Real files written by gguf-py, ollama and others: every semantic rule
// must accept them (false positives are bugs), under both policies.
TEST(SemanticRulesRealCorpusTest, ValidFilesStayValid) {
  GGUFGUARD_SKIP_WITHOUT_REAL_CORPUS();
  const std::filesystem::path dir = testing::RealCorpusDir();
  size_t files = 0;
  for (const char* sub : {"valid", "bigendian"}) {
    for (const auto& entry : std::filesystem::directory_iterator(dir / sub)) {
      std::optional<std::vector<uint8_t>> bytes = testing::ReadFileBytes(entry.path());
      ASSERT_TRUE(bytes.has_value()) << entry.path();
      for (const Policy& p : {DefaultPolicy(), StrictPolicy()}) {
        Report r = ValidateBytes(*bytes, p);
        EXPECT_TRUE(r.valid()) << entry.path() << " " << p.name << testing::Describe(r);
        for (const Finding& finding : r.findings) {
          EXPECT_LT(static_cast<int>(finding.rule), 4004) << entry.path() << " " << p.name << testing::Describe(r);
        }
      }
      ++files;
    }
  }
  EXPECT_GE(files, 21u);
}

}  // namespace
}  // namespace ggufguard
