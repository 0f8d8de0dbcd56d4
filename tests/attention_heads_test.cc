// GG4017 attention-heads and the head-count part of GG4011: every layer's
// head_count / head_count_kv, scalar or per-layer array, against the layer's
// attention K/V tensors, each trigger beside its valid neighbour. What each
// case does to llama.cpp (loaded with the loader oracle's node-llama-cpp
// build, then a context created) is in hyperparameter_rules.cc.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "ggufguard/validate.h"
#include "tests/test_util.h"
#include "tests/tiny_model.h"

namespace ggufguard {
namespace {

using ::ggufguard::testing::BuiltFile;
using ::ggufguard::testing::Check;
using ::ggufguard::testing::CountRule;
using ::ggufguard::testing::GgufValue;
using ::ggufguard::testing::HasFinding;
using ::ggufguard::testing::HasRule;
using ::ggufguard::testing::IsValid;
using ::ggufguard::testing::LacksRule;
using ::ggufguard::testing::MakeTinyModel;
using ::ggufguard::testing::TinyModel;

// The tiny model as architecture `arch` with `layers` blocks, the keys
// renamed to "{arch}." and `extra` added. Its only per-layer tensor is
// blk.0.attn_norm: no layer has K/V tensors until a test adds them.
TinyModel Model(const std::string& arch, uint32_t layers,
                std::vector<std::pair<std::string, GgufValue>> extra = {}) {
  TinyModel m = MakeTinyModel();
  m.Set("general.architecture", GgufValue::Str(arch));
  for (auto& kv : m.kvs) {
    if (kv.first.rfind("llama.", 0) == 0) kv.first = arch + "." + kv.first.substr(6);
  }
  m.Set(arch + ".block_count", GgufValue::U32(layers));
  for (auto& [key, value] : extra) m.Set(arch + "." + key, std::move(value));
  return m;
}

// K and V projections for layer `il`, `width` K/V columns wide.
void AddKv(TinyModel& m, uint32_t il, uint64_t width = 8) {
  const std::string blk = "blk." + std::to_string(il) + ".";
  m.tensors.push_back({blk + "attn_k.weight", {8, width}, 0});
  m.tensors.push_back({blk + "attn_v.weight", {8, width}, 0});
}

uint64_t Element(const TinyModel& m, const BuiltFile& f, const std::string& key, uint32_t il) {
  return m.Kv(f, key).array_elements() + 4 * il;
}

void ExpectAccepted(const BuiltFile& f, const std::string& what) {
  for (const Policy& p : {DefaultPolicy(), StrictPolicy()}) {
    const Report r = Check(f, p);
    EXPECT_TRUE(IsValid(r)) << what;
    EXPECT_TRUE(LacksRule(r, RuleId::kAttentionHeads)) << what;
    EXPECT_TRUE(LacksRule(r, RuleId::kHyperparameterRange)) << what;
  }
}

void ExpectRejectedAt(const BuiltFile& f, uint64_t offset, const std::string& what) {
  for (const Policy& p : {DefaultPolicy(), StrictPolicy()}) {
    const Report r = Check(f, p);
    EXPECT_TRUE(HasFinding(r, RuleId::kAttentionHeads, offset)) << what;
    EXPECT_EQ(CountRule(r, RuleId::kAttentionHeads), 1u) << what;
    EXPECT_FALSE(r.valid()) << what;
  }
}

TEST(AttentionHeadsTest, ZeroKvHeadsOnALayerWithKvTensors) {
  TinyModel m = Model("llama", 2, {{"attention.head_count_kv", GgufValue::U32Array({2, 0})}});
  AddKv(m, 0);
  AddKv(m, 1);
  BuiltFile f = m.Build();
  ExpectRejectedAt(f, Element(m, f, "llama.attention.head_count_kv", 1), "kv [2, 0], layer 1 with K/V");
  for (const Finding& x : Check(f).findings) {
    if (x.rule == RuleId::kAttentionHeads) {
      EXPECT_NE(x.message.find("layer 1"), std::string::npos) << x.message;
      EXPECT_NE(x.message.find("blk.1.attn_k.weight"), std::string::npos) << x.message;
    }
  }
  // i32 elements are read as llama.cpp reads them: the same element offset.
  m.Set("llama.attention.head_count_kv", GgufValue::I32Array({2, 0}));
  BuiltFile i32 = m.Build();
  ExpectRejectedAt(i32, Element(m, i32, "llama.attention.head_count_kv", 1), "i32 kv [2, 0]");
  // A fused QKV projection is a K/V tensor too.
  TinyModel fused = Model("llama", 2, {{"attention.head_count_kv", GgufValue::U32Array({2, 0})}});
  fused.tensors.push_back({"blk.1.attn_qkv.weight", {8, 24}, 0});
  BuiltFile g = fused.Build();
  ExpectRejectedAt(g, Element(fused, g, "llama.attention.head_count_kv", 1), "attn_qkv on layer 1");
  // A scalar 0 with K/V tensors: one finding, not one per layer.
  TinyModel scalar = Model("llama", 2, {{"attention.head_count_kv", GgufValue::U32(0)}});
  AddKv(scalar, 0);
  AddKv(scalar, 1);
  BuiltFile s = scalar.Build();
  ExpectRejectedAt(s, scalar.Kv(s, "llama.attention.head_count_kv").payload, "scalar kv 0");
}

TEST(AttentionHeadsTest, ZeroKvHeadsOnALayerWithoutKvTensorsPasses) {
  // The neighbour: layer 1 has no K/V tensors, so no cache is sized by it.
  TinyModel m = Model("llama", 2, {{"attention.head_count_kv", GgufValue::U32Array({2, 0})}});
  AddKv(m, 0);
  ExpectAccepted(m.Build(), "kv [2, 0], layer 1 without K/V");
  TinyModel good = Model("llama", 2, {{"attention.head_count_kv", GgufValue::U32Array({2, 2})}});
  AddKv(good, 0);
  AddKv(good, 1);
  ExpectAccepted(good.Build(), "kv [2, 2]");
}

// What the converters write for hybrid models: 0 K/V heads (and, for jamba
// and plamo2, 0 query heads) on the recurrent layers, which have no K/V
// tensors, from layer 0 on.
TEST(AttentionHeadsTest, RecurrentLayersOfHybridsPass) {
  TinyModel lfm2 = Model("lfm2", 3, {{"shortconv.l_cache", GgufValue::U32(3)},
                                     {"attention.head_count_kv", GgufValue::U32Array({0, 2, 0})}});
  AddKv(lfm2, 1);
  ExpectAccepted(lfm2.Build(), "lfm2");

  const std::vector<std::pair<std::string, GgufValue>> ssm = {
      {"ssm.conv_kernel", GgufValue::U32(4)},    {"ssm.inner_size", GgufValue::U32(16)},
      {"ssm.state_size", GgufValue::U32(8)},     {"ssm.time_step_rank", GgufValue::U32(2)},
      {"ssm.group_count", GgufValue::U32(1)}};
  auto with = [&](std::vector<std::pair<std::string, GgufValue>> more) {
    std::vector<std::pair<std::string, GgufValue>> all = ssm;
    for (auto& kv : more) all.push_back(std::move(kv));
    return all;
  };
  TinyModel jamba = Model("jamba", 4, with({{"attention.head_count_kv", GgufValue::U32Array({0, 0, 0, 2})}}));
  AddKv(jamba, 3);
  ExpectAccepted(jamba.Build(), "jamba");

  // plamo2: head_count and head_count_kv 0 on its Mamba layers, layer 0 included.
  TinyModel plamo2 = Model("plamo2", 2, with({{"attention.head_count", GgufValue::U32Array({0, 2})},
                                              {"attention.head_count_kv", GgufValue::U32Array({0, 1})}}));
  plamo2.tensors.push_back({"blk.1.attn_qkv.weight", {8, 16}, 0});
  ExpectAccepted(plamo2.Build(), "plamo2");

  TinyModel granite = Model("granitehybrid", 2, with({{"attention.head_count_kv", GgufValue::U32Array({0, 2})},
                                                      {"embedding_scale", GgufValue::F32(12.0f)},
                                                      {"residual_scale", GgufValue::F32(0.22f)},
                                                      {"logit_scale", GgufValue::F32(8.0f)},
                                                      {"attention.scale", GgufValue::F32(0.0078125f)}}));
  AddKv(granite, 1);
  ExpectAccepted(granite.Build(), "granitehybrid");

  // qwen3next picks its attention layers by full_attention_interval, not by
  // the head counts: a 0 on a layer without K/V tensors passes all the same.
  TinyModel next = Model("qwen3next", 2, with({{"full_attention_interval", GgufValue::U32(2)},
                                               {"attention.head_count_kv", GgufValue::U32Array({0, 2})}}));
  AddKv(next, 1);
  ExpectAccepted(next.Build(), "qwen3next");
}

// Architectures whose loader reads 0 K/V heads as a recurrent (or linear
// attention) layer refuse a file with K/V tensors there ("wrong number of
// tensors"); they do not crash, so it is not GG4017's. Others abort.
TEST(AttentionHeadsTest, ZeroKvHeadsAreALayerKindOnlyWhereTheLoaderSaysSo) {
  TinyModel lfm2 = Model("lfm2", 2, {{"shortconv.l_cache", GgufValue::U32(3)},
                                     {"attention.head_count_kv", GgufValue::U32Array({0, 2})}});
  AddKv(lfm2, 0);
  AddKv(lfm2, 1);
  EXPECT_TRUE(LacksRule(Check(lfm2.Build()), RuleId::kAttentionHeads));

  TinyModel qwen2 = Model("qwen2", 2, {{"attention.head_count_kv", GgufValue::U32Array({0, 2})}});
  AddKv(qwen2, 0);
  AddKv(qwen2, 1);
  BuiltFile f = qwen2.Build();
  ExpectRejectedAt(f, Element(qwen2, f, "qwen2.attention.head_count_kv", 0), "qwen2 kv [0, 2]");
}

// Llama-3_1-Nemotron-51B (deci): 0 K/V heads is linear attention (the layer
// keeps attn_output), 0 heads as well an attention-free layer.
TEST(AttentionHeadsTest, DeciLinearAndAttentionFreeLayersPass) {
  TinyModel deci = Model("deci", 3, {{"attention.head_count", GgufValue::U32Array({2, 2, 0})},
                                     {"attention.head_count_kv", GgufValue::U32Array({2, 0, 0})}});
  AddKv(deci, 0);
  deci.tensors.push_back({"blk.1.attn_output.weight", {8, 8}, 0});
  ExpectAccepted(deci.Build(), "deci");
}

TEST(AttentionHeadsTest, ZeroQueryHeadsOnALayerWithKvTensors) {
  TinyModel m = Model("granite", 2, {{"logit_scale", GgufValue::F32(8.0f)},
                                     {"attention.head_count", GgufValue::U32Array({2, 0})}});
  AddKv(m, 0);
  AddKv(m, 1);
  BuiltFile f = m.Build();
  ExpectRejectedAt(f, Element(m, f, "granite.attention.head_count", 1), "granite heads [2, 0]");
  // The neighbour: an attention-free layer 1 (no K/V tensors).
  TinyModel free = Model("granite", 2, {{"logit_scale", GgufValue::F32(8.0f)},
                                        {"attention.head_count", GgufValue::U32Array({2, 0})}});
  AddKv(free, 0);
  ExpectAccepted(free.Build(), "granite heads [2, 0], layer 1 without K/V");
}

TEST(AttentionHeadsTest, ZeroHeadsWhereTheLoaderDividesByThem) {
  // olmo2 and phimoe compute n_embd / n_head while creating tensors: SIGFPE,
  // whether or not the file has K/V tensors.
  for (std::string arch : {"olmo2", "phimoe"}) {
    TinyModel m = Model(arch, 1, {{"attention.head_count", GgufValue::U32(0)}});
    BuiltFile f = m.Build();
    ExpectRejectedAt(f, m.Kv(f, arch + ".attention.head_count").payload, arch);
    TinyModel ok = Model(arch, 1);
    AddKv(ok, 0);
    ExpectAccepted(ok.Build(), arch + " with 2 heads");
  }
  // gemma2 divides only for its 27B type (46 blocks).
  TinyModel big = Model("gemma2", 46, {{"attention.head_count", GgufValue::U32(0)}});
  BuiltFile f = big.Build();
  ExpectRejectedAt(f, big.Kv(f, "gemma2.attention.head_count").payload, "gemma2, 46 blocks");
  TinyModel small = Model("gemma2", 2, {{"attention.head_count", GgufValue::U32(0)}});
  BuiltFile g = small.Build();
  const Report r = Check(g);
  EXPECT_TRUE(LacksRule(r, RuleId::kAttentionHeads));
  // No K/V tensors, no division: the old warning.
  EXPECT_TRUE(HasFinding(r, RuleId::kHyperparameterRange, small.Kv(g, "gemma2.attention.head_count").payload));
  EXPECT_TRUE(r.valid());
}

TEST(AttentionHeadsTest, QueryHeadsNotAMultipleOfKvHeadsPerLayer) {
  TinyModel m = Model("llama", 2, {{"attention.head_count", GgufValue::U32(4)},
                                   {"attention.head_count_kv", GgufValue::U32Array({2, 3})}});
  AddKv(m, 0);
  AddKv(m, 1);
  BuiltFile f = m.Build();
  ExpectRejectedAt(f, Element(m, f, "llama.attention.head_count_kv", 1), "heads 4, kv [2, 3]");
  // Only head_count an array: its element is the one named.
  TinyModel heads = Model("llama", 2, {{"attention.head_count", GgufValue::U32Array({4, 6})},
                                       {"attention.head_count_kv", GgufValue::U32(4)}});
  AddKv(heads, 0);
  AddKv(heads, 1);
  BuiltFile h = heads.Build();
  ExpectRejectedAt(h, Element(heads, h, "llama.attention.head_count", 1), "heads [4, 6], kv 4");

  // The neighbours: multiples (OpenELM's per-layer 12/3, 16/4, in openelm,
  // which shapes each layer's K/V by that layer's counts; as llama, whose K/V
  // tensors all have layer 0's width, 3 then 4 K/V heads abort creating a
  // context: GG9056, not GG4017), and a layer without K/V tensors, where
  // nothing computes with the pair: a warning.
  const std::vector<std::pair<std::string, GgufValue>> openelm_heads = {
      {"attention.head_count", GgufValue::U32Array({12, 16})}, {"attention.head_count_kv", GgufValue::U32Array({3, 4})}};
  TinyModel good = Model("openelm", 2, openelm_heads);
  AddKv(good, 0);
  AddKv(good, 1);
  ExpectAccepted(good.Build(), "openelm heads [12, 16], kv [3, 4]");
  TinyModel as_llama = Model("llama", 2, openelm_heads);
  AddKv(as_llama, 0);
  AddKv(as_llama, 1);
  const Report l = Check(as_llama.Build());
  EXPECT_TRUE(LacksRule(l, RuleId::kAttentionHeads));
  EXPECT_TRUE(HasRule(l, RuleId::kKvHeadsPerLayer));
  TinyModel idle = Model("llama", 2, {{"attention.head_count", GgufValue::U32(4)},
                                      {"attention.head_count_kv", GgufValue::U32Array({2, 3})}});
  AddKv(idle, 0);
  BuiltFile i = idle.Build();
  const Report r = Check(i);
  EXPECT_TRUE(LacksRule(r, RuleId::kAttentionHeads));
  EXPECT_TRUE(HasFinding(r, RuleId::kHyperparameterRange, Element(idle, i, "llama.attention.head_count_kv", 1)));
  EXPECT_TRUE(r.valid());
  EXPECT_FALSE(Check(i, StrictPolicy()).valid());
}

TEST(AttentionHeadsTest, ScalarHeadsNotAMultipleOfKvHeads) {
  // With K/V tensors llama.cpp aborts creating a context (ggml_can_mul_mat):
  // an error, listed once for all layers.
  TinyModel m = Model("llama", 2, {{"attention.head_count", GgufValue::U32(4)},
                                   {"attention.head_count_kv", GgufValue::U32(3)}});
  AddKv(m, 0, 6);
  AddKv(m, 1, 6);
  BuiltFile f = m.Build();
  ExpectRejectedAt(f, m.Kv(f, "llama.attention.head_count_kv").payload, "heads 4, kv 3");
  // Without them nothing computes with the pair: the warning of old.
  TinyModel idle = Model("llama", 2, {{"attention.head_count", GgufValue::U32(4)},
                                      {"attention.head_count_kv", GgufValue::U32(3)}});
  BuiltFile i = idle.Build();
  const Report r = Check(i);
  EXPECT_TRUE(LacksRule(r, RuleId::kAttentionHeads));
  EXPECT_EQ(CountRule(r, RuleId::kHyperparameterRange), 1u);
  EXPECT_TRUE(r.valid());
}

TEST(AttentionHeadsTest, VocabOnlyFilesAndAdaptersAreNotChecked) {
  TinyModel vocab = Model("llama", 2, {{"attention.head_count_kv", GgufValue::U32(3)}});
  vocab.tensors.clear();
  EXPECT_TRUE(LacksRule(Check(vocab.Build()), RuleId::kHyperparameterRange));
  TinyModel lora = Model("llama", 2, {{"attention.head_count_kv", GgufValue::U32Array({2, 0})}});
  lora.Set("general.type", GgufValue::Str("adapter")).Set("adapter.type", GgufValue::Str("lora"));
  lora.tensors.push_back({"blk.1.attn_k.weight.lora_a", {8, 2}, 0});
  EXPECT_TRUE(LacksRule(Check(lora.Build()), RuleId::kAttentionHeads));
}

}  // namespace
}  // namespace ggufguard
