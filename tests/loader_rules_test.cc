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


// --- 9140-9147: multimodal projector files (clip_rules.cc) ---

using ::ggufguard::testing::MakeTinyMmproj;

Report CheckMmproj(const TinyModel& m, const Policy& p = DefaultPolicy()) { return Check(m.Build(), p); }

// The projector convert_hf_to_gguf.py would write: no finding at all under
// default or strict, under either profile.
TEST(ClipRulesTest, ConvertedProjectorHasNoFinding) {
  const TinyModel m = MakeTinyMmproj();
  for (Policy p : {DefaultPolicy(), StrictPolicy()}) {
    for (Profile profile : {Profile::kLlamaCpp, Profile::kGguf}) {
      p.profile = profile;
      const Report r = CheckMmproj(m, p);
      EXPECT_TRUE(r.findings.empty()) << p.name << testing::Describe(r);
    }
  }
}

TEST(ClipRulesTest, UnknownProjectorType) {
  TinyModel m = MakeTinyMmproj();
  m.Set("clip.projector_type", GgufValue::Str("mlp2"));
  BuiltFile f = m.Build();
  EXPECT_TRUE(
      HasFinding(Check(f), RuleId::kClipUnknownProjector, m.Kv(f, "clip.projector_type").string_bytes()));
  m.Set("clip.projector_type", GgufValue::Str("gemma3na"));  // named, but load_hparams has no case for it
  EXPECT_TRUE(testing::HasRule(CheckMmproj(m), RuleId::kClipUnknownProjector));
  // Empty: the loader falls back to clip.vision.projector_type.
  m.Set("clip.projector_type", GgufValue::Str(""));
  EXPECT_TRUE(testing::HasRule(CheckMmproj(m), RuleId::kClipUnknownProjector));
  m.Set("clip.vision.projector_type", GgufValue::Str("mlp"));
  EXPECT_TRUE(IsValid(CheckMmproj(m)));
  // Under the gguf profile the file is only a container.
  m.Set("clip.projector_type", GgufValue::Str("mlp2"));
  Policy gguf = DefaultPolicy();
  gguf.profile = Profile::kGguf;
  EXPECT_TRUE(LacksRule(CheckMmproj(m, gguf), RuleId::kClipUnknownProjector));
}

// A key of another type than the loader's getter is GG4004's (the known-key
// table types every clip.* key); the clip rules then leave its value alone.
TEST(ClipRulesTest, KeyOfAnotherTypeIsKnownKeyType) {
  TinyModel m = MakeTinyMmproj();
  m.Set("clip.vision.attention.head_count", GgufValue::I32(0));
  Report r = CheckMmproj(m);
  EXPECT_TRUE(testing::HasRule(r, RuleId::kKnownKeyType));
  EXPECT_TRUE(LacksRule(r, RuleId::kClipHeadCount));
  m = MakeTinyMmproj();
  m.Set("clip.projector_type", GgufValue::U32(1));
  r = CheckMmproj(m);
  EXPECT_TRUE(testing::HasRule(r, RuleId::kKnownKeyType));
  EXPECT_TRUE(LacksRule(r, RuleId::kClipUnknownProjector));
}

TEST(ClipRulesTest, PatchGridTheEncodeLoopsCannotTake) {
  TinyModel m = MakeTinyMmproj();
  m.Set("clip.projector_type", GgufValue::Str("resampler")).Set("clip.vision.image_size", GgufValue::U32(8200));
  BuiltFile f = m.Build();
  EXPECT_TRUE(HasFinding(Check(f), RuleId::kClipPatchGrid, m.Kv(f, "clip.vision.image_size").payload));
  m.Set("clip.vision.image_size", GgufValue::U32(8192));  // 1024 patches a side: the array's length
  EXPECT_TRUE(IsValid(CheckMmproj(m)));
  m = MakeTinyMmproj();
  m.Set("clip.projector_type", GgufValue::Str("youtuvl"))
      .Set("clip.vision.window_size", GgufValue::U32(15))
      .Set("clip.vision.wa_layer_indexes", GgufValue::I32Array({0}));
  EXPECT_TRUE(testing::HasRule(CheckMmproj(m), RuleId::kClipPatchGrid));
  m.Set("clip.vision.window_size", GgufValue::U32(16));
  EXPECT_TRUE(IsValid(CheckMmproj(m)));
  m.Set("clip.vision.window_size", GgufValue::U32(15)).Set("clip.vision.wa_layer_indexes", GgufValue::I32Array({}));
  EXPECT_TRUE(IsValid(CheckMmproj(m)));  // no window attention
}

TEST(ClipRulesTest, RequiredKeyMissing) {
  TinyModel m = MakeTinyMmproj();
  m.Erase("clip.vision.block_count");
  EXPECT_TRUE(testing::HasRule(CheckMmproj(m), RuleId::kClipMissingKey));
  m = MakeTinyMmproj();
  m.Erase("clip.vision.image_mean");  // asserted present
  EXPECT_TRUE(testing::HasRule(CheckMmproj(m), RuleId::kClipMissingKey));
  m = MakeTinyMmproj();
  m.Set("clip.projector_type", GgufValue::Str("dots_ocr"));  // requires the scale factor and pixel limits
  EXPECT_TRUE(testing::HasRule(CheckMmproj(m), RuleId::kClipMissingKey));
  m.Set("clip.vision.projector.scale_factor", GgufValue::U32(2))
      .Set("clip.vision.image_min_pixels", GgufValue::U32(256))
      .Set("clip.vision.image_max_pixels", GgufValue::U32(65536));
  EXPECT_TRUE(IsValid(CheckMmproj(m)));
  m = MakeTinyMmproj();
  m.Erase("clip.use_gelu");  // optional
  EXPECT_TRUE(IsValid(CheckMmproj(m)));
}

TEST(ClipRulesTest, ArraysReadPastTheirEnd) {
  TinyModel m = MakeTinyMmproj();
  m.Set("clip.vision.image_mean", GgufValue::F32Array({0.5f, 0.5f}));
  BuiltFile f = m.Build();
  EXPECT_TRUE(
      HasFinding(Check(f), RuleId::kClipArrayShape, m.Kv(f, "clip.vision.image_mean").array_elements()));
  m.Set("clip.vision.image_mean", GgufValue::U8Array({1, 2, 3}));
  EXPECT_TRUE(testing::HasRule(CheckMmproj(m), RuleId::kClipArrayShape));
  m.Set("clip.vision.image_mean", GgufValue::F32Array({0.5f, 0.5f, 0.5f, 0.5f}));
  EXPECT_TRUE(IsValid(CheckMmproj(m)));
  m.Set("clip.vision.image_grid_pinpoints", GgufValue::I32Array({336, 672, 672}));
  EXPECT_TRUE(testing::HasRule(CheckMmproj(m), RuleId::kClipArrayShape));
  m.Set("clip.vision.image_grid_pinpoints", GgufValue::I32Array({336, 672, 672, 336}));
  EXPECT_TRUE(IsValid(CheckMmproj(m)));
}

TEST(ClipRulesTest, HeadCountZeroOrNotDividingTheWidth) {
  TinyModel m = MakeTinyMmproj();
  m.Set("clip.vision.attention.head_count", GgufValue::U32(0));
  BuiltFile f = m.Build();
  EXPECT_TRUE(HasFinding(Check(f), RuleId::kClipHeadCount, m.Kv(f, "clip.vision.attention.head_count").payload));
  m.Set("clip.vision.attention.head_count", GgufValue::U32(3));
  EXPECT_TRUE(testing::HasRule(CheckMmproj(m), RuleId::kClipHeadCount));
  m.Set("clip.vision.attention.head_count", GgufValue::U32(4));
  EXPECT_TRUE(IsValid(CheckMmproj(m)));
}

TEST(ClipRulesTest, MergeFactorZero) {
  TinyModel m = MakeTinyMmproj();
  m.Set("clip.projector_type", GgufValue::Str("gemma3")).Set("clip.vision.projector.scale_factor", GgufValue::U32(0));
  BuiltFile f = m.Build();
  EXPECT_TRUE(
      HasFinding(Check(f), RuleId::kClipMergeSize, m.Kv(f, "clip.vision.projector.scale_factor").payload));
  m.Set("clip.vision.projector.scale_factor", GgufValue::U32(4));
  EXPECT_TRUE(IsValid(CheckMmproj(m)));
  m.Set("clip.projector_type", GgufValue::Str("qwen2vl_merger")).Set("clip.vision.spatial_merge_size", GgufValue::U32(0));
  EXPECT_TRUE(testing::HasRule(CheckMmproj(m), RuleId::kClipMergeSize));
  m.Set("clip.projector_type", GgufValue::Str("pixtral"));  // guards a 0
  EXPECT_TRUE(IsValid(CheckMmproj(m)));
}

TEST(ClipRulesTest, FeatureLayerBeyondTheEncoder) {
  TinyModel m = MakeTinyMmproj();
  m.Set("clip.vision.feature_layer", GgufValue::I32Array({0, 5}));
  BuiltFile f = m.Build();
  EXPECT_TRUE(
      HasFinding(Check(f), RuleId::kClipFeatureLayer, m.Kv(f, "clip.vision.feature_layer").array_elements()));
  m.Set("clip.vision.feature_layer", GgufValue::I32Array({0, 1}));  // block_count itself: the last layer's output
  EXPECT_TRUE(IsValid(CheckMmproj(m)));
  m.Set("clip.vision.feature_layer", GgufValue::I32Array({5})).Set("clip.projector_type", GgufValue::Str("gemma3"));
  EXPECT_TRUE(LacksRule(CheckMmproj(m), RuleId::kClipFeatureLayer));  // not the llava graph
}

TEST(ClipRulesTest, ValuesTheSanityChecksRefuse) {
  TinyModel m = MakeTinyMmproj();
  m.Set("clip.vision.patch_size", GgufValue::U32(0));
  BuiltFile f = m.Build();
  EXPECT_TRUE(HasFinding(Check(f), RuleId::kClipValueRefused, m.Kv(f, "clip.vision.patch_size").payload));
  m = MakeTinyMmproj();
  m.Set("clip.vision.embedding_length", GgufValue::U32(0));
  Report r = CheckMmproj(m);
  EXPECT_TRUE(testing::HasRule(r, RuleId::kClipValueRefused));
  EXPECT_TRUE(LacksRule(r, RuleId::kClipHeadCount));  // refused before any graph
  m = MakeTinyMmproj();
  m.Set("clip.vision.image_size", GgufValue::U32(0x80000000u));
  EXPECT_TRUE(testing::HasRule(CheckMmproj(m), RuleId::kClipValueRefused));
  m = MakeTinyMmproj();
  m.Set("clip.use_silu", GgufValue::Bool(true)).Set("clip.use_gelu", GgufValue::Bool(true));
  EXPECT_TRUE(testing::HasRule(CheckMmproj(m), RuleId::kClipValueRefused));
  m = MakeTinyMmproj();
  m.Set("clip.projector_type", GgufValue::Str("phi4"))
      .Set("clip.vision.image_min_pixels", GgufValue::U32(4096))
      .Set("clip.vision.image_max_pixels", GgufValue::U32(1024));
  EXPECT_TRUE(testing::HasRule(CheckMmproj(m), RuleId::kClipValueRefused));
  m.Set("clip.vision.image_max_pixels", GgufValue::U32(65536));
  EXPECT_TRUE(IsValid(CheckMmproj(m)));
}

}  // namespace
}  // namespace ggufguard
