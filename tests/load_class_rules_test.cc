// Issue 40's runtime-independent classes: drafter target layers and widths
// (GG9160, GG9161), ggml's quadratic duplicate scan (GG9162), the
// general.sampling.* settings and the report's list of them (GG9163),
// phi-3 vocabularies llama.cpp refuses (GG9164), a model without
// token_embd.weight (GG9165), type ids only forks of ggml know (GG5007,
// GG5008). Each rule: its trigger and the nearest neighbour that passes.
// Llamafiles (GG9166) are in llamafile_test.cc.
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "ggufguard/format/ggml_type.h"
#include "ggufguard/io/source.h"
#include "ggufguard/report/cyclonedx.h"
#include "ggufguard/report/markdown.h"
#include "ggufguard/report/render.h"
#include "ggufguard/report/sarif.h"
#include "ggufguard/validate.h"
#include "tests/test_util.h"
#include "tests/tiny_model.h"

namespace ggufguard {
namespace {

using ::ggufguard::testing::BuiltFile;
using ::ggufguard::testing::Check;
using ::ggufguard::testing::CountRule;
using ::ggufguard::testing::GgufBuilder;
using ::ggufguard::testing::GgufValue;
using ::ggufguard::testing::HasFinding;
using ::ggufguard::testing::HasRule;
using ::ggufguard::testing::IsValid;
using ::ggufguard::testing::KvAt;
using ::ggufguard::testing::LacksRule;
using ::ggufguard::testing::MakeTinyModel;
using ::ggufguard::testing::TinyModel;

std::string MessageOf(const Report& r, RuleId id) {
  for (const Finding& f : r.findings) {
    if (f.rule == id) return f.message;
  }
  return "";
}

// A drafter's header: the architecture, then `kvs` under "{arch}.", and an
// fc.weight tensor (a file with tensors, so it is judged as a model).
BuiltFile Drafter(const std::string& arch, const std::vector<std::pair<std::string, GgufValue>>& kvs,
                  bool tensors = true) {
  GgufBuilder b;
  b.AddKv("general.architecture", GgufValue::Str(arch));
  for (const auto& [k, v] : kvs) b.AddKv(arch + "." + k, v);
  if (tensors) b.AddTensor("output_norm.weight", {8}, 0);
  return b.Build();
}

TEST(DrafterRulesTest, TargetLayerIdsPastLlamaMaxLayers) {
  const BuiltFile bad = Drafter("dflash", {{"embedding_length", GgufValue::U32(8)},
                                           {"target_layers", GgufValue::I32Array({1, 9, 4096})}});
  const Report r = Check(bad);
  EXPECT_TRUE(HasFinding(r, RuleId::kDrafterTargetLayer, KvAt(bad, 2).array_elements() + 8)) << testing::Describe(r);
  EXPECT_EQ(CountRule(r, RuleId::kDrafterTargetLayer), 1u);
  EXPECT_NE(MessageOf(r, RuleId::kDrafterTargetLayer).find("dflash.target_layers[2] is 4096"), std::string::npos)
      << MessageOf(r, RuleId::kDrafterTargetLayer);
  // 511 is the last layer any model llama.cpp loads can have.
  EXPECT_TRUE(LacksRule(Check(Drafter("dflash", {{"embedding_length", GgufValue::U32(8)},
                                                 {"target_layers", GgufValue::I32Array({1, 9, 511})}})),
                        RuleId::kDrafterTargetLayer));
  // Negative as an i32, past the bound as a u32 (the same four bytes).
  EXPECT_TRUE(HasRule(Check(Drafter("dflash", {{"target_layers", GgufValue::I32Array({-1})}})),
                      RuleId::kDrafterTargetLayer));
  EXPECT_TRUE(HasRule(Check(Drafter("dflash", {{"target_layers", GgufValue::U32Array({0xFFFFFFFFu})}})),
                      RuleId::kDrafterTargetLayer));
  // EAGLE3 reads the same key; a file with no tensors is judged the same.
  EXPECT_TRUE(HasRule(Check(Drafter("eagle3", {{"target_layers", GgufValue::I32Array({2, 600, 40})}}, false)),
                      RuleId::kDrafterTargetLayer));
  // Another architecture's key of that name is not a drafter's.
  EXPECT_TRUE(LacksRule(Check(Drafter("llama", {{"target_layers", GgufValue::I32Array({4096})}})),
                        RuleId::kDrafterTargetLayer));
  // Under --profile gguf the model rules do not run.
  Policy gguf = DefaultPolicy();
  gguf.profile = Profile::kGguf;
  EXPECT_TRUE(LacksRule(Check(bad, gguf), RuleId::kDrafterTargetLayer));
}

TEST(DrafterRulesTest, LayerCountTimesWidthWrapsThirtyTwoBits) {
  // 2 x 2^31 = 2^32: llama.cpp's uint32_t n_embd_inp_enc is 0 (PR 29286).
  const BuiltFile zero = Drafter("dflash", {{"embedding_length", GgufValue::U32(0x80000000u)},
                                            {"target_layers", GgufValue::I32Array({1, 2})}},
                                 /*tensors=*/false);
  const Report r = Check(zero);
  EXPECT_TRUE(HasFinding(r, RuleId::kDrafterInputWidth, KvAt(zero, 1).payload)) << testing::Describe(r);
  EXPECT_NE(MessageOf(r, RuleId::kDrafterInputWidth).find("wraps to 0"), std::string::npos)
      << MessageOf(r, RuleId::kDrafterInputWidth);
  // 3 x 2^31 wraps to 2^31.
  EXPECT_NE(MessageOf(Check(Drafter("dflash", {{"embedding_length", GgufValue::U32(0x80000000u)},
                                               {"target_layers", GgufValue::I32Array({1, 2, 3})}})),
                      RuleId::kDrafterInputWidth)
                .find("wraps to 2147483648"),
            std::string::npos);
  // 2 x (2^31 - 1) = 2^32 - 2 still fits.
  EXPECT_TRUE(LacksRule(Check(Drafter("dflash", {{"embedding_length", GgufValue::U32(0x7FFFFFFFu)},
                                                 {"target_layers", GgufValue::I32Array({1, 2})}})),
                        RuleId::kDrafterInputWidth));
  // EAGLE3: three target layers of target_hidden_size.
  EXPECT_TRUE(HasRule(Check(Drafter("eagle3", {{"target_hidden_size", GgufValue::U32(1431655766u)},
                                               {"target_layers", GgufValue::I32Array({2, 20, 40})}})),
                      RuleId::kDrafterInputWidth));
  EXPECT_TRUE(LacksRule(Check(Drafter("eagle3", {{"target_hidden_size", GgufValue::U32(4096)},
                                                 {"target_layers", GgufValue::I32Array({2, 20, 40})}})),
                        RuleId::kDrafterInputWidth));
}

// The tiny model with general.sampling.* keys appended.
BuiltFile WithSampling(const std::vector<std::pair<std::string, GgufValue>>& kvs, TinyModel* out = nullptr) {
  TinyModel m = MakeTinyModel();
  for (const auto& [k, v] : kvs) m.Set("general.sampling." + k, v);
  if (out != nullptr) *out = m;
  return m.Build();
}

const SamplingSetting* SettingOf(const Report& r, std::string_view key) {
  for (const SamplingSetting& s : r.sampling.listed) {
    if (s.key == key) return &s;
  }
  return nullptr;
}

TEST(SamplingRulesTest, WhatGgufPyWritesIsReadAsWrittenAndListed) {
  const BuiltFile f = WithSampling({{"sequence", GgufValue::Str("penalties;temperature;top_k;top_p")},
                                    {"temp", GgufValue::F32(0.6f)},
                                    {"top_k", GgufValue::I32(50)},
                                    {"top_p", GgufValue::F32(0.9f)},
                                    {"min_p", GgufValue::F32(0.0f)},
                                    {"penalty_repeat", GgufValue::F32(1.1f)},
                                    {"penalty_last_n", GgufValue::I32(-1)},
                                    {"mirostat", GgufValue::I32(0)}});
  for (const Policy& p : {DefaultPolicy(), StrictPolicy()}) {
    const Report r = Check(f, p);
    EXPECT_TRUE(IsValid(r)) << p.name;
    EXPECT_TRUE(LacksRule(r, RuleId::kSamplingValue)) << testing::Describe(r);
  }
  const Report r = Check(f);
  ASSERT_EQ(r.sampling.listed.size(), 8u);
  EXPECT_EQ(SettingOf(r, "general.sampling.temp")->llama_cpp, "0.6");
  EXPECT_EQ(SettingOf(r, "general.sampling.temp")->written, "f32 0.6");
  EXPECT_EQ(SettingOf(r, "general.sampling.top_k")->llama_cpp, "50");
  EXPECT_EQ(SettingOf(r, "general.sampling.sequence")->llama_cpp, "penalties;temperature;top_k;top_p");
  // Every report shows them: JSON, text, inspect.
  const FileOutcome o{"f.gguf", &r, ""};
  const std::string json = RenderJson({o}, "default");
  EXPECT_NE(json.find("\"key\": \"general.sampling.temp\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"llama_cpp\": \"0.6\""), std::string::npos);
  EXPECT_NE(RenderTextFile(o).find("sampling (as llama.cpp reads the file's defaults): sequence=penalties;"
                                   "temperature;top_k;top_p top_k=50 top_p=0.9 min_p=0 temp=0.6"),
            std::string::npos)
      << RenderTextFile(o);
  EXPECT_NE(RenderInspect("f.gguf", r).find("general.sampling.top_k = i32 50 -> 50"), std::string::npos)
      << RenderInspect("f.gguf", r);
  // Markdown, SARIF and CycloneDX carry them too (issue 40: they change
  // how every reply is sampled).
  const BuiltFile plain_file = MakeTinyModel().Build();  // the report borrows its bytes
  const Report plain = Check(plain_file);
  auto markdown = [](const FileOutcome& outcome) { return testing::RenderThroughWriter(MakeMarkdownWriter, outcome); };
  auto cyclonedx_sampling = [](const FileOutcome& outcome) {
    return testing::CycloneDxProperties(testing::RenderThroughWriter(MakeCycloneDxWriter, outcome), "ggufguard:sampling:");
  };
  EXPECT_NE(markdown(o).find("- sampling (as llama.cpp reads the file's defaults): ` sequence=penalties;temperature;"
                             "top_k;top_p top_k=50 top_p=0.9 min_p=0 temp=0.6"),
            std::string::npos)
      << markdown(o);
  const nlohmann::json sarif = nlohmann::json::parse(RenderSarif({o}, DefaultPolicy()));
  const nlohmann::json& listed = sarif["runs"][0]["artifacts"][0]["properties"]["sampling"];
  ASSERT_EQ(listed.size(), 8u) << sarif.dump();
  bool saw_temp = false;
  for (const auto& s : listed) {
    if (s["key"] != "general.sampling.temp") continue;
    saw_temp = true;
    EXPECT_EQ(s["written"], "f32 0.6");
    EXPECT_EQ(s["llama_cpp"], "0.6");
    EXPECT_EQ(s["offset"].get<uint64_t>(), SettingOf(r, "general.sampling.temp")->offset);
  }
  EXPECT_TRUE(saw_temp);
  const auto bom = cyclonedx_sampling(o);
  EXPECT_EQ(bom.size(), 8u);
  EXPECT_NE(std::find(bom.begin(), bom.end(), std::pair<std::string, std::string>{"ggufguard:sampling:temp", "0.6 (written: f32 0.6)"}),
            bom.end());
  // A file without them lists none, and prints no sampling line.
  EXPECT_TRUE(plain.sampling.listed.empty());
  const FileOutcome p{"p.gguf", &plain, ""};
  EXPECT_EQ(RenderTextFile(p).find("sampling"), std::string::npos);
  EXPECT_EQ(markdown(p).find("sampling"), std::string::npos);
  EXPECT_TRUE(nlohmann::json::parse(RenderSarif({p}, DefaultPolicy()))["runs"][0]["artifacts"][0]["properties"]["sampling"].empty());
  EXPECT_TRUE(cyclonedx_sampling(p).empty());
}

TEST(SamplingRulesTest, TheIssuesHotTemperatureAndMinusOneTopK) {
  TinyModel m;
  const BuiltFile f = WithSampling({{"temp", GgufValue::Str("hot")}, {"top_k", GgufValue::F32(-1.0f)}}, &m);
  const Report r = Check(f);
  EXPECT_TRUE(HasFinding(r, RuleId::kSamplingValue, m.Kv(f, "general.sampling.temp").string_bytes()))
      << testing::Describe(r);
  EXPECT_TRUE(HasFinding(r, RuleId::kSamplingValue, m.Kv(f, "general.sampling.top_k").payload));
  EXPECT_TRUE(IsValid(r));  // a warning under the default policy: the file loads and runs
  EXPECT_FALSE(Check(f, StrictPolicy()).valid());
  EXPECT_EQ(SettingOf(r, "general.sampling.temp")->llama_cpp, "ignored");
  EXPECT_EQ(SettingOf(r, "general.sampling.top_k")->llama_cpp, "-1");
  EXPECT_NE(MessageOf(r, RuleId::kSamplingValue).find("keeps its own default"), std::string::npos)
      << MessageOf(r, RuleId::kSamplingValue);
}

TEST(SamplingRulesTest, WhatLlamaCppsTextFormDoesToAValue) {
  auto reads = [](const std::string& key, GgufValue v) {
    const Report r = Check(WithSampling({{key, std::move(v)}}));
    const SamplingSetting* s = SettingOf(r, "general.sampling." + key);
    return std::make_pair(s ? s->llama_cpp : std::string("absent"), HasRule(r, RuleId::kSamplingValue));
  };
  using Seen = std::pair<std::string, ::testing::AssertionResult>;
  auto expect = [](const Seen& got, const std::string& value, bool finding) {
    EXPECT_EQ(got.first, value);
    EXPECT_EQ(static_cast<bool>(got.second), finding) << value;
  };
  expect(reads("top_k", GgufValue::U32(0xFFFFFFFFu)), "-1", true);  // strtol, then int32_t
  expect(reads("top_k", GgufValue::F32(40.5f)), "40", true);        // strtol stops at '.'
  expect(reads("top_k", GgufValue::Str("40")), "40", false);         // a number as a string is read as one
  expect(reads("top_k", GgufValue::Str("40 tokens")), "40", true);   // ... but not the rest of it
  expect(reads("min_p", GgufValue::F32(1e-7f)), "0", true);          // std::to_string: six decimals
  expect(reads("min_p", GgufValue::F32(0.05f)), "0.05", false);
  expect(reads("top_p", GgufValue::F32(1.5f)), "1.5", true);         // not a probability
  expect(reads("temp", GgufValue::Bool(true)), "ignored", true);      // "true" is no number
  expect(reads("temp", GgufValue::F32(0.0f)), "0", false);            // greedy
  expect(reads("temp", GgufValue::F32(-0.5f)), "-0.5", true);
  expect(reads("temp", GgufValue::F32Array({0.7f})), "ignored", true);  // arrays are not kept as text
  expect(reads("mirostat", GgufValue::I32(3)), "3", true);
  expect(reads("penalty_last_n", GgufValue::I32(-2)), "-2", true);
  expect(reads("sequence", GgufValue::Str("temperature;warmth")), "temperature", true);
  expect(reads("sequence", GgufValue::U32(5)), "(no sampler)", true);
}

TEST(LoaderCostTest, TensorCountsFarAboveAnyModel) {
  // 30,000 tensors: 4.5e8 pairs of names, about 1.35 s at 3 ns a pair.
  GgufBuilder many;
  for (int i = 0; i < 30000; ++i) many.AddTensor(absl::StrCat("t.", i), {1}, 0);
  const Report r = Check(many.Build());
  EXPECT_TRUE(HasFinding(r, RuleId::kLoaderScanCost, testing::kTensorCountOffset)) << testing::Describe(r);
  EXPECT_NE(MessageOf(r, RuleId::kLoaderScanCost).find("30000 tensors and 0 keys"), std::string::npos)
      << MessageOf(r, RuleId::kLoaderScanCost);
  // The generic reader's cost: judged under --profile gguf too.
  Policy gguf = DefaultPolicy();
  gguf.profile = Profile::kGguf;
  EXPECT_TRUE(HasRule(Check(many.Build(), gguf), RuleId::kLoaderScanCost));
  // 20,000 (0.6 s) is below the default limit, and a model's count far below.
  GgufBuilder fewer;
  for (int i = 0; i < 20000; ++i) fewer.AddTensor(absl::StrCat("t.", i), {1}, 0);
  EXPECT_TRUE(LacksRule(Check(fewer.Build()), RuleId::kLoaderScanCost));
  EXPECT_TRUE(LacksRule(Check(MakeTinyModel().Build()), RuleId::kLoaderScanCost));
}

TEST(LoaderCostTest, KeysOfOneLengthCostTheirBytes) {
  // 1,000 keys: 499,500 pairs. Of one length, 8 KiB each, std::string ==
  // reads them (about 100 ms at 0.025 ns a byte); of 1,000 lengths it reads
  // none of their bytes (2 ms).
  Policy p = DefaultPolicy();
  p.limits.max_loader_scan_ms = 50;
  GgufBuilder equal, unequal;
  for (int i = 0; i < 1000; ++i) {
    const std::string digits = absl::StrCat(i);
    equal.AddKv(std::string(8192 - digits.size(), 'k') + digits, GgufValue::U8(0));
    unequal.AddKv(std::string(7000 + i, 'k'), GgufValue::U8(0));
  }
  const Report r = Check(equal.Build(), p);
  EXPECT_TRUE(HasFinding(r, RuleId::kLoaderScanCost, testing::kKvCountOffset)) << testing::Describe(r);
  EXPECT_TRUE(LacksRule(Check(unequal.Build(), p), RuleId::kLoaderScanCost));
}

// The tiny vocabulary lacks <|endoftext|>: under a phi-3 name llama.cpp's
// loader throws looking it up.
TEST(Phi3VocabularyTest, APhi3NameWithoutTheTokensItLooksUp) {
  TinyModel m = MakeTinyModel();
  m.Set("general.name", GgufValue::Str("Phi-3 mini tiny"));
  const BuiltFile bad = m.Build();
  const Report r = Check(bad);
  EXPECT_TRUE(HasFinding(r, RuleId::kPhi3TokenMissing, m.Kv(bad, "general.name").string_bytes()))
      << testing::Describe(r);
  EXPECT_NE(MessageOf(r, RuleId::kPhi3TokenMissing).find("no token '<|endoftext|>'"), std::string::npos)
      << MessageOf(r, RuleId::kPhi3TokenMissing);
  EXPECT_TRUE(HasRule(Check(m.Set("general.name", GgufValue::Str("PHI3-tiny")).Build()), RuleId::kPhi3TokenMissing));
  // With the four tokens it loads.
  std::vector<std::string> tokens = testing::TinyTokens();
  tokens.push_back("<|endoftext|>");
  m.Set("tokenizer.ggml.tokens", GgufValue::StrArray(tokens))
      .Set("tokenizer.ggml.scores", GgufValue::F32Array({0, 0, 0, 0, -1, -2, -3, 0}))
      .Set("tokenizer.ggml.token_type", GgufValue::I32Array({2, 3, 3, 6, 1, 1, 1, 3}));
  m.TensorNamed("token_embd.weight").dims = {8, 8};  // one row per token
  m.TensorNamed("output.weight").dims = {8, 8};
  EXPECT_TRUE(IsValid(Check(m.Build()))) << testing::Describe(Check(m.Build()));
  // Another name, a name cut at NUL before "phi-3", or the jina branch that
  // comes first: no lookup.
  TinyModel n = MakeTinyModel();
  EXPECT_TRUE(LacksRule(Check(n.Set("general.name", GgufValue::Str("tiny")).Build()), RuleId::kPhi3TokenMissing));
  EXPECT_TRUE(LacksRule(Check(n.Set("general.name", GgufValue::Str(std::string("tiny\0phi-3", 10))).Build()),
                        RuleId::kPhi3TokenMissing));
  n.Set("general.name", GgufValue::Str("phi-3")).Set("tokenizer.ggml.pre", GgufValue::Str("jina-v2-code"));
  EXPECT_TRUE(LacksRule(Check(n.Build()), RuleId::kPhi3TokenMissing));
}

TEST(TokenEmbeddingTest, AModelSlicedWithoutTokenEmbd) {
  TinyModel m = MakeTinyModel();
  m.tensors.erase(m.tensors.begin());  // token_embd.weight
  const BuiltFile bad = m.Build();
  const Report r = Check(bad);
  EXPECT_TRUE(HasFinding(r, RuleId::kMissingTokenEmbedding, bad.tensor_info_offsets.at(0))) << testing::Describe(r);
  EXPECT_FALSE(r.valid());
  EXPECT_TRUE(IsValid(Check(MakeTinyModel().Build())));
  // A shard of a split model may hold it elsewhere; a drafter shares its
  // target's; a vocabulary has no tensor at all.
  m.Set("split.no", GgufValue::U16(0)).Set("split.count", GgufValue::U16(2)).Set("split.tensors.count",
                                                                                   GgufValue::I32(6));
  EXPECT_TRUE(LacksRule(Check(m.Build()), RuleId::kMissingTokenEmbedding));
  EXPECT_TRUE(LacksRule(Check(Drafter("dflash", {{"target_layers", GgufValue::I32Array({1})}})),
                        RuleId::kMissingTokenEmbedding));
  TinyModel vocab = MakeTinyModel();
  vocab.tensors.clear();
  EXPECT_TRUE(LacksRule(Check(vocab.Build()), RuleId::kMissingTokenEmbedding));
}

TEST(ForkTypeIdTest, AnIdOnlyAForkWritesNamesTheForkAndGetsNoSize) {
  GgufBuilder b;
  b.AddKv("general.architecture", GgufValue::Str("llama"));
  b.AddTensor("blk.0.ffn_down.weight", {256, 4}, 46, testing::TensorOptions{.byte_size = 256});
  const BuiltFile f = b.Build();
  const Report r = Check(f);
  EXPECT_TRUE(HasRule(r, RuleId::kUnknownGgmlType)) << testing::Describe(r);
  const std::string message = MessageOf(r, RuleId::kUnknownGgmlType);
  EXPECT_NE(message.find("TurboQuant"), std::string::npos) << message;
  EXPECT_NE(message.find("TQ3_1S"), std::string::npos) << message;
  EXPECT_NE(message.find("no size is assumed"), std::string::npos) << message;
  ASSERT_EQ(r.header.tensors.size(), 1u);
  EXPECT_FALSE(r.header.tensors[0].size_known);  // the layout guessed none
  // --deep plans no read of it.
  const Report deep = ValidateBytes(f.bytes, DefaultPolicy(), DeepOptions{.enabled = true});
  EXPECT_EQ(deep.deep.checked_tensors, 0u);
  // ik_llama.cpp's ids; an id no fork here uses says nothing more.
  EXPECT_NE(FindForkGgmlType(137), nullptr);
  EXPECT_EQ(FindForkGgmlType(137)->name, "IQ2_K");
  EXPECT_EQ(FindForkGgmlType(kFirstUnknownGgmlType + 100), nullptr);
  // Every fork id lies outside upstream's table but ik_llama.cpp's I2_S at
  // upstream's removed 36.
  for (uint32_t id = 0; id < 1024; ++id) {
    const ForkGgmlType* fork = FindForkGgmlType(id);
    if (fork == nullptr) continue;
    const GgmlTypeInfo* upstream = FindGgmlType(id);
    EXPECT_TRUE(upstream == nullptr || upstream->status == GgmlTypeStatus::kRemoved) << id;
  }
  // An adapter, a projector and a header read alone guess no size either.
  GgufBuilder lora;
  lora.AddKv("general.architecture", GgufValue::Str("llama"))
      .AddKv("general.type", GgufValue::Str("adapter"))
      .AddKv("adapter.type", GgufValue::Str("lora"))
      .AddTensor("blk.0.attn_q.weight.lora_a", {32, 4}, 46, testing::TensorOptions{.byte_size = 64})
      .AddTensor("blk.0.attn_q.weight.lora_b", {4, 32}, 46, testing::TensorOptions{.byte_size = 64});
  TinyModel mmproj = testing::MakeTinyMmproj();
  mmproj.tensors.front().type = 45;
  for (const BuiltFile& file : {lora.Build(), mmproj.Build()}) {
    const Report other = Check(file);
    EXPECT_TRUE(HasRule(other, RuleId::kUnknownGgmlType)) << testing::Describe(other);
    for (const TensorInfo& t : other.header.tensors) {
      if (t.ggml_type >= kFirstUnknownGgmlType) {
        EXPECT_FALSE(t.size_known) << t.name;
      }
    }
  }
  MemoryStream head(f.bytes, 64);
  StreamOptions only_header;
  only_header.header_only = true;
  only_header.file_size = f.bytes.size();
  absl::StatusOr<ValidatedFile> streamed = ValidateStream(head, DefaultPolicy(), only_header);
  ASSERT_TRUE(streamed.ok());
  EXPECT_TRUE(HasRule(streamed->report(), RuleId::kUnknownGgmlType));
  EXPECT_FALSE(streamed->report().header.tensors[0].size_known);
  GgufBuilder removed;
  removed.AddTensor("t", {32}, 36, testing::TensorOptions{.byte_size = 32});
  EXPECT_NE(MessageOf(Check(removed.Build()), RuleId::kRemovedGgmlType).find("I2_S"), std::string::npos);
}

}  // namespace
}  // namespace ggufguard
