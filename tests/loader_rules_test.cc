// 9xxx resource estimates, the readings of colliding keys, and the real
// files of ../shared/corpus-real under every semantic rule.
#include "ggufguard/rules/loader_rules.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ggufguard/adapter/adapter_view.h"
#include "ggufguard/adapter/base_model.h"
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
using ::ggufguard::testing::Describe;
using ::ggufguard::testing::HasFinding;
using ::ggufguard::testing::HasRule;
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
        for (const Finding& finding : testing::FindingsBesidesProvenance(r)) {
          EXPECT_LT(static_cast<int>(finding.rule), 4004) << entry.path() << " " << p.name << testing::Describe(r);
        }
      }
      ++files;
    }
  }
  EXPECT_GE(files, 21u);
}

// --- adapters (GG9150-GG9158, docs/adapters.md) -------------------------

// A LoRA adapter as convert_lora_to_gguf.py writes one, for base tensors of
// 32 x 32: each pair NAME.lora_a [32, rank], NAME.lora_b [rank, 32].
GgufBuilder LoraBuilder() {
  GgufBuilder b;
  b.AddKv("general.architecture", GgufValue::Str("llama"))
      .AddKv("general.type", GgufValue::Str("adapter"))
      .AddKv("adapter.type", GgufValue::Str("lora"))
      .AddKv("adapter.lora.alpha", GgufValue::F32(8.0f));
  return b;
}

GgufBuilder& AddPair(GgufBuilder& b, const std::string& name, uint64_t rank_a = 4, uint64_t rank_b = 4) {
  return b.AddTensor(name + ".lora_a", {32, rank_a}, 0).AddTensor(name + ".lora_b", {rank_b, 32}, 0);
}

GgufBuilder ControlVectorBuilder() {
  GgufBuilder b;
  b.AddKv("general.architecture", GgufValue::Str("controlvector"))
      .AddKv("controlvector.model_hint", GgufValue::Str("llama"));
  return b;
}

TEST(LoaderRulesTest, AdapterLoraRefusedOnItsOwn) {
  GgufBuilder ok = LoraBuilder();
  AddPair(ok, "blk.0.attn_q.weight").AddTensor("blk.0.attn_norm.weight", {32}, 0);  // _norm.weight: skipped
  BuiltFile good = ok.Build();
  EXPECT_TRUE(IsValid(Check(good)));
  EXPECT_TRUE(IsValid(Check(good, StrictPolicy())));

  GgufBuilder ranks = LoraBuilder();
  BuiltFile f = AddPair(ranks, "blk.0.attn_q.weight", 8, 4).Build();
  EXPECT_TRUE(HasFinding(Check(f), RuleId::kLoraAdapterRefused, f.tensor_info_offsets[0]));
  // The token embedding's pair is flipped: its ranks are judged against a base.
  GgufBuilder embd = LoraBuilder();
  EXPECT_TRUE(LacksRule(Check(AddPair(embd, "token_embd.weight", 8, 4).Build()), RuleId::kLoraAdapterRefused));

  GgufBuilder half = LoraBuilder();
  f = half.AddTensor("blk.0.attn_q.weight.lora_b", {4, 32}, 0).Build();
  EXPECT_TRUE(HasFinding(Check(f), RuleId::kLoraAdapterRefused, f.tensor_info_offsets[0]));

  GgufBuilder suffix = LoraBuilder();
  f = AddPair(suffix, "blk.0.attn_q.weight").AddTensor("blk.0.attn_q.weight.lora_c", {4}, 0).Build();
  EXPECT_TRUE(HasFinding(Check(f), RuleId::kLoraAdapterRefused, f.tensor_info_offsets[2]));

  for (const auto& [key, value] : {std::pair<std::string, std::string>{"general.type", "model"},
                                   std::pair<std::string, std::string>{"adapter.type", "ia3"}}) {
    GgufBuilder typed;
    typed.AddKv("general.architecture", GgufValue::Str("llama"))
        .AddKv("general.type", GgufValue::Str(key == "general.type" ? value : "adapter"))
        .AddKv("adapter.type", GgufValue::Str(key == "adapter.type" ? value : "lora"));
    f = AddPair(typed, "blk.0.attn_q.weight").Build();
    EXPECT_TRUE(HasRule(Check(f), RuleId::kLoraAdapterRefused)) << key;
  }
  // general.type "adapter" alone makes a LoRA adapter, and adapter.type is
  // then read as "": refused.
  GgufBuilder untyped;
  untyped.AddKv("general.architecture", GgufValue::Str("llama")).AddKv("general.type", GgufValue::Str("adapter"));
  EXPECT_TRUE(HasRule(Check(AddPair(untyped, "blk.0.attn_q.weight").Build()), RuleId::kLoraAdapterRefused));
  // Not judged as a container.
  Policy gguf = DefaultPolicy();
  gguf.profile = Profile::kGguf;
  EXPECT_TRUE(LacksRule(Check(AddPair(ranks, "blk.1.attn_q.weight", 8, 4).Build(), gguf), RuleId::kLoraAdapterRefused));
}

TEST(LoaderRulesTest, AdapterDirectionLayerReadsAsStoi) {
  EXPECT_EQ(DirectionLayer("direction.5"), 5);
  EXPECT_EQ(DirectionLayer("direction.5x"), 5);  // stoi stops at the first non-digit
  EXPECT_EQ(DirectionLayer("direction. \t+7"), 7);
  EXPECT_EQ(DirectionLayer("direction.-1"), -1);
  EXPECT_EQ(DirectionLayer("direction.2147483647"), 2147483647);
  EXPECT_EQ(DirectionLayer("direction.-2147483648"), -2147483648LL);
  EXPECT_EQ(DirectionLayer("direction.2147483648"), std::nullopt);  // out_of_range
  EXPECT_EQ(DirectionLayer("direction.99999999999999999999999"), std::nullopt);
  EXPECT_EQ(DirectionLayer("direction.x"), std::nullopt);  // invalid_argument
  EXPECT_EQ(DirectionLayer("direction."), std::nullopt);
  EXPECT_EQ(DirectionLayer("direction..5"), std::nullopt);
  EXPECT_EQ(DirectionLayer("direction"), std::nullopt);
  EXPECT_EQ(DirectionLayer("steer.1"), std::nullopt);
  EXPECT_EQ(DirectionLayer(std::string_view("direction.3\0" "9", 13)), 3);  // a C string
}

TEST(LoaderRulesTest, AdapterControlVectorRefusedOnItsOwn) {
  BuiltFile good = ControlVectorBuilder()
                       .AddTensor("direction.1", {32}, 0)
                       .AddTensor("direction.2", {32, 1}, 0)  // ggml_n_dims 1
                       .AddTensor("direction.511", {32}, 0)
                       .Build();
  EXPECT_TRUE(IsValid(Check(good)));
  EXPECT_TRUE(IsValid(Check(good, StrictPolicy())));

  struct Case {
    const char* what;
    std::string name;
    std::vector<uint64_t> dims;
    uint32_t type;
  };
  for (const Case& c : {Case{"layer 0", "direction.0", {32}, 0}, Case{"negative", "direction.-3", {32}, 0},
                        Case{"no number", "direction.x", {32}, 0}, Case{"other name", "steer.1", {32}, 0},
                        Case{"f16", "direction.2", {32}, 1}, Case{"2-D", "direction.2", {32, 2}, 0},
                        Case{"other length", "direction.2", {16}, 0}}) {
    BuiltFile f = ControlVectorBuilder().AddTensor("direction.1", {32}, 0).AddTensor(c.name, c.dims, c.type).Build();
    const Report r = Check(f);
    EXPECT_TRUE(HasFinding(r, RuleId::kControlVectorRefused, f.tensor_info_offsets[1])) << c.what;
    EXPECT_TRUE(LacksRule(r, RuleId::kControlVectorLayerRange)) << c.what;
  }
  EXPECT_TRUE(HasFinding(Check(ControlVectorBuilder().Build()), RuleId::kControlVectorRefused, 8));
  // Cut inside its last padding: the loader reads the data whole
  // (no_alloc=false). Under the gguf profile that is GG6012's.
  BuiltFile unpadded = ControlVectorBuilder().AddTensor("direction.1", {5}, 0).set_pad_end(false).Build();
  EXPECT_TRUE(HasFinding(Check(unpadded), RuleId::kControlVectorRefused, unpadded.bytes.size()));
  Policy gguf = DefaultPolicy();
  gguf.profile = Profile::kGguf;
  const Report as_container = Check(unpadded, gguf);
  EXPECT_TRUE(HasRule(as_container, RuleId::kUnpaddedEnd));
  EXPECT_TRUE(LacksRule(as_container, RuleId::kControlVectorRefused));
  EXPECT_TRUE(IsValid(Check(ControlVectorBuilder().AddTensor("direction.1", {5}, 0).Build())));

  BuiltFile high = ControlVectorBuilder().AddTensor("direction.512", {32}, 0).Build();
  EXPECT_TRUE(HasFinding(Check(high), RuleId::kControlVectorLayerRange, high.tensor_info_offsets[0]));
  BuiltFile wraps = ControlVectorBuilder().AddTensor("direction.2000000000", {32}, 0).Build();
  const Report r = Check(wraps);
  ASSERT_TRUE(HasRule(r, RuleId::kControlVectorLayerRange));
  for (const Finding& x : r.findings) {
    if (x.rule == RuleId::kControlVectorLayerRange) {
      EXPECT_NE(x.message.find("overflows int"), std::string::npos) << x.message;
    }
  }
}

// The base model of corpus/adapters/ (make_corpus), read as --base reads it.
BaseModel CorpusBase(const std::vector<uint8_t>& bytes) {
  BaseModel base;
  base.label = "base-minimal-llama.gguf";
  AddBaseShard(base, ValidateBytes(bytes, DefaultPolicy()), 1, 1);
  return base;
}

std::vector<uint8_t> ReadCorpusAdapter(const std::string& name) {
  const std::filesystem::path path = std::filesystem::path(GGUFGUARD_SOURCE_DIR) / "corpus" / "adapters" / name;
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

ValidatedFile JudgedAgainst(const std::vector<uint8_t>& adapter, const BaseModel& base, const Policy& policy) {
  MemorySource source(adapter);
  absl::StatusOr<ValidatedFile> file = ValidateSource(source, policy);
  EXPECT_TRUE(file.ok());
  JudgeAgainstBase(*file, base, policy);
  return *std::move(file);
}

TEST(LoaderRulesTest, AdapterAgainstItsBaseModel) {
  const std::vector<uint8_t> base_bytes = ReadCorpusAdapter("base-minimal-llama.gguf");
  ASSERT_FALSE(base_bytes.empty()) << "corpus/adapters/ is missing: run make_corpus";
  const BaseModel base = CorpusBase(base_bytes);
  EXPECT_EQ(base.architecture, "llama");
  EXPECT_EQ(base.n_embd, 32u);
  EXPECT_EQ(base.n_layer, 3u);
  EXPECT_TRUE(base.incomplete.empty());
  // What each adapter of the corpus was written to break (make_corpus's
  // AdapterPairs); the valid ones stay valid under both policies.
  const std::vector<std::pair<std::string, std::optional<RuleId>>> pairs = {
      {"lora.gguf", std::nullopt},
      {"control-vector.gguf", std::nullopt},
      {"lora-architecture.gguf", RuleId::kAdapterBaseArchitecture},
      {"lora-tensor-missing.gguf", RuleId::kAdapterBaseTensorMissing},
      {"lora-shape.gguf", RuleId::kAdapterBaseShape},
      {"lora-expert-count.gguf", RuleId::kAdapterBaseExpertCount},
      {"control-vector-embedding.gguf", RuleId::kControlVectorBaseEmbedding},
      {"control-vector-unused-layer.gguf", RuleId::kControlVectorUnusedLayer},
  };
  for (const auto& [name, rule] : pairs) {
    const std::vector<uint8_t> bytes = ReadCorpusAdapter(name);
    ASSERT_FALSE(bytes.empty()) << name;
    for (const Policy& policy : {DefaultPolicy(), StrictPolicy()}) {
      EXPECT_TRUE(IsValid(ValidateBytes(bytes, policy))) << name << " on its own";
      ValidatedFile judged = JudgedAgainst(bytes, base, policy);
      if (!rule) {
        EXPECT_EQ(judged.report().verdict(), Report::Verdict::kValid) << name << Describe(judged.report());
        continue;
      }
      EXPECT_TRUE(HasRule(judged.report(), *rule)) << name;
      // One rule per file: each reproducer breaks one thing.
      for (const Finding& f : judged.report().findings) EXPECT_EQ(f.rule, *rule) << name << ": " << f.message;
    }
    Policy gguf = DefaultPolicy();
    gguf.profile = Profile::kGguf;
    EXPECT_TRUE(JudgedAgainst(bytes, base, gguf).report().findings.empty()) << name;
  }
  // The unused layer is a warning by default: the vector loads, in part.
  const ValidatedFile unused = JudgedAgainst(ReadCorpusAdapter("control-vector-unused-layer.gguf"), base, DefaultPolicy());
  EXPECT_EQ(unused.report().verdict(), Report::Verdict::kValid);
  // A model is not an adapter: --base adds nothing to it.
  EXPECT_TRUE(JudgedAgainst(base_bytes, base, StrictPolicy()).report().findings.empty());
}

TEST(LoaderRulesTest, AdapterAgainstABaseThatCannotBeJudgedIsInconclusive) {
  const std::vector<uint8_t> lora = ReadCorpusAdapter("lora.gguf");
  ASSERT_FALSE(lora.empty());
  BaseModel no_arch;
  no_arch.label = "weights.gguf";
  const BuiltFile weights = GgufBuilder().AddTensor("blk.0.attn_q.weight", {32, 32}, 0).Build();
  AddBaseShard(no_arch, ValidateBytes(weights.bytes, DefaultPolicy()), 1, 1);
  ValidatedFile judged = JudgedAgainst(lora, no_arch, DefaultPolicy());
  EXPECT_EQ(judged.report().verdict(), Report::Verdict::kInconclusive);
  ASSERT_EQ(judged.report().not_checked.size(), 1u);
  EXPECT_NE(judged.report().not_checked[0].find("names no general.architecture"), std::string::npos);

  // One shard of several, read alone: its tensors are not the model's.
  BaseModel shard;
  shard.label = "model-00001-of-00003.gguf";
  const BuiltFile first = GgufBuilder()
                              .AddKv("general.architecture", GgufValue::Str("llama"))
                              .AddKv("split.no", GgufValue::U16(0))
                              .AddKv("split.count", GgufValue::U16(3))
                              .Build();
  AddBaseShard(shard, ValidateBytes(first.bytes, DefaultPolicy()), 1, 1);
  EXPECT_EQ(JudgedAgainst(lora, shard, DefaultPolicy()).report().verdict(), Report::Verdict::kInconclusive);

  BaseModel unparsed;
  unparsed.label = "cut.gguf";
  const std::vector<uint8_t> cut(lora.begin(), lora.begin() + 20);
  AddBaseShard(unparsed, ValidateBytes(cut, DefaultPolicy()), 1, 1);
  EXPECT_EQ(JudgedAgainst(lora, unparsed, DefaultPolicy()).report().verdict(), Report::Verdict::kInconclusive);
  // An error still makes the adapter invalid, whatever the base.
  GgufBuilder ranks = LoraBuilder();
  const BuiltFile bad = AddPair(ranks, "blk.0.attn_q.weight", 8, 4).Build();
  EXPECT_EQ(JudgedAgainst(bad.bytes, unparsed, DefaultPolicy()).report().verdict(), Report::Verdict::kInvalid);
}

TEST(LoaderRulesTest, AdapterAgainstItsBaseListsAtMostThePolicysCap) {
  BaseModel base;
  base.label = "base";
  base.architecture = "llama";
  GgufBuilder b = LoraBuilder();
  for (int i = 0; i < 150; ++i) AddPair(b, "blk." + std::to_string(i) + ".attn_q.weight");
  const BuiltFile f = b.Build();
  Policy policy = DefaultPolicy();
  policy.limits.max_findings_per_rule = 20;
  const ValidatedFile judged = JudgedAgainst(f.bytes, base, policy);
  EXPECT_EQ(judged.report().findings.size(), 20u);
  ASSERT_EQ(judged.report().suppressed.count(RuleId::kAdapterBaseTensorMissing), 1u);
  EXPECT_EQ(judged.report().suppressed.at(RuleId::kAdapterBaseTensorMissing), 130u);
  EXPECT_EQ(judged.report().verdict(), Report::Verdict::kInvalid);
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
  // An audio encoder's stack factor: the stacking divides by it.
  for (const char* proj : {"ultravox", "voxtral", "meralion", "glma"}) {
    TinyModel audio = MakeTinyMmproj();
    audio.Erase("clip.projector_type");  // read before the per-modality keys
    audio.Set("clip.vision.projector_type", GgufValue::Str("mlp"))
        .Set("clip.has_audio_encoder", GgufValue::Bool(true))
        .Set("clip.audio.projector_type", GgufValue::Str(proj))
        .Set("clip.audio.embedding_length", GgufValue::U32(32))
        .Set("clip.audio.attention.head_count", GgufValue::U32(4))
        .Set("clip.audio.feed_forward_length", GgufValue::U32(64))
        .Set("clip.audio.block_count", GgufValue::U32(1))
        .Set("clip.audio.projection_dim", GgufValue::U32(32))
        .Set("clip.audio.attention.layer_norm_epsilon", GgufValue::F32(1e-5f))
        .Set("clip.audio.num_mel_bins", GgufValue::U32(128))
        .Set("clip.audio.projector.stack_factor", GgufValue::U32(0));
    BuiltFile g = audio.Build();
    EXPECT_TRUE(HasFinding(Check(g), RuleId::kClipMergeSize, audio.Kv(g, "clip.audio.projector.stack_factor").payload))
        << proj;
    audio.Set("clip.audio.projector.stack_factor", GgufValue::U32(8));
    EXPECT_TRUE(LacksRule(CheckMmproj(audio), RuleId::kClipMergeSize)) << proj;
  }
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
