// 9050-9099: the files that abort llama.cpp's loader, found by the loader
// oracle (fuzz/oracle). Each rule: the triggering file and its nearest
// neighbour that llama.cpp loads, and the reproducers the oracle found
// (corpus/regressions/oracle-*.gguf).
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ggufguard/parse/parser.h"
#include "ggufguard/rules/known_keys.h"
#include "ggufguard/rules/rules.h"
#include "ggufguard/validate.h"
#include "tests/test_util.h"
#include "tests/tiny_model.h"

namespace ggufguard {
namespace {

using ::ggufguard::testing::BuiltFile;
using ::ggufguard::testing::Check;
using ::ggufguard::testing::CountRule;
using ::ggufguard::testing::Describe;
using ::ggufguard::testing::GgufValue;
using ::ggufguard::testing::HasFinding;
using ::ggufguard::testing::HasRule;
using ::ggufguard::testing::IsValid;
using ::ggufguard::testing::LacksRule;
using ::ggufguard::testing::MakeTinyModel;
using ::ggufguard::testing::TinyModel;

// The file offset of tensor i's offset field: name length, name, n_dims,
// dims, type, then the offset (v3 layout).
uint64_t TensorOffsetField(const TinyModel& m, const BuiltFile& f, size_t i) {
  const TinyModel::Tensor& t = m.tensors.at(i);
  return f.tensor_info_offsets.at(i) + 8 + t.name.size() + 4 + 8 * t.dims.size() + 4;
}

// The tiny model with general.alignment `alignment` and a general.name
// padded so that the data section starts at `data_offset % 32 == want`.
// Every tensor of the tiny model is a multiple of 32 bytes, so all of them
// share that residue unless a test adds or retypes one.
BuiltFile WithDataAt(TinyModel& m, uint32_t alignment, uint64_t want) {
  for (size_t pad = 0; pad < 32; ++pad) {
    m.Set("general.name", GgufValue::Str("tiny" + std::string(pad, '-')));
    BuiltFile f = m.Builder().AddAlignmentKv(alignment).Build();
    if (f.data_offset % 32 == want) return f;
  }
  ADD_FAILURE() << "no name length puts the data section at " << want << " mod 32";
  return {};
}
BuiltFile AlignedTo8(TinyModel& m, uint64_t want) { return WithDataAt(m, 8, want); }

// The message of the first finding of `id`, or "".
std::string MessageOf(const Report& r, RuleId id) {
  for (const Finding& f : r.findings) {
    if (f.rule == id) return f.message;
  }
  return "";
}

TEST(LoaderAssertRulesTest, FirstTensorOffAMultipleOf32UnderASmallAlignment) {
  TinyModel m = MakeTinyModel();
  BuiltFile bad = AlignedTo8(m, 8);
  Report r = Check(bad);
  // Only the first tensor starts the CPU's buffer: one finding, not one per tensor.
  EXPECT_EQ(CountRule(r, RuleId::kTensorDataAlignment), 1u) << testing::Describe(r);
  EXPECT_TRUE(HasFinding(r, RuleId::kTensorDataAlignment, TensorOffsetField(m, bad, 0)));
  EXPECT_NE(MessageOf(r, RuleId::kTensorDataAlignment)
                .find(absl::StrCat("'token_embd.weight' data starts at file offset ", bad.data_offset)),
            std::string::npos)
      << MessageOf(r, RuleId::kTensorDataAlignment);
  EXPECT_TRUE(LacksRule(r, RuleId::kTensorMisaligned));  // consistent with its own alignment
  EXPECT_TRUE(LacksRule(r, RuleId::kTensorDataAlignmentOffload));

  // The neighbour: the same alignment, data section on a multiple of 32.
  BuiltFile good = AlignedTo8(m, 0);
  EXPECT_TRUE(IsValid(Check(good)));
}

// The user's report: the data section and the first tensor on 32, later
// tensors on 8 (rope_freqs.weight, n_rot / 2 = 2 floats, moves them). The
// loader oracle loads such a file (docs/rules/GG9050.md).
TEST(LoaderAssertRulesTest, LaterTensorsNeedOnlyTheirOwnAlignment) {
  for (uint32_t alignment : {8u, 16u}) {
    TinyModel m = MakeTinyModel();
    m.tensors.insert(m.tensors.begin() + 1, {"rope_freqs.weight", {2}, testing::kF32});
    BuiltFile f = WithDataAt(m, alignment, 0);
    ASSERT_EQ(f.tensor_data_offsets.at(2) % 32, alignment) << alignment;  // blk.0.attn_norm.weight
    for (const Policy& policy : {DefaultPolicy(), StrictPolicy()}) {
      Report r = Check(f, policy);
      EXPECT_TRUE(IsValid(r)) << alignment << " " << policy.name;
      EXPECT_TRUE(LacksRule(r, RuleId::kTensorDataAlignment)) << alignment << " " << policy.name;
      EXPECT_TRUE(LacksRule(r, RuleId::kTensorDataAlignmentOffload)) << alignment << " " << policy.name;
    }
    // The neighbour: the same tensors with the data section off 32.
    BuiltFile bad = WithDataAt(m, alignment, alignment);
    Report r = Check(bad);
    EXPECT_EQ(CountRule(r, RuleId::kTensorDataAlignment), 1u) << alignment;
    EXPECT_TRUE(HasFinding(r, RuleId::kTensorDataAlignment, TensorOffsetField(m, bad, 0))) << alignment;
  }
}

// A matrix the CPU's repack or AMX buffer type may take (here F16, which
// AMX takes) leaves the CPU's mapped buffer, which then starts at the next
// tensor: the loader oracle aborts on a Q4_0 matrix first on 32 and
// token_embd.weight at 16 mod 32 (AVX2 repacks it), and loads it when the
// matrix is in a type that no extra buffer type takes.
TEST(LoaderAssertRulesTest, TheBufferStartsAfterMatricesAnExtraBufferTypeTakes) {
  TinyModel m = MakeTinyModel();
  std::rotate(m.tensors.begin(), m.tensors.begin() + m.TensorIndex("output.weight"), m.tensors.end());
  m.TensorNamed("output.weight").type = testing::kF16;  // 8 x 7 x 2 = 112 bytes: what follows is at 16 mod 32
  BuiltFile f = AlignedTo8(m, 0);
  ASSERT_EQ(f.tensor_data_offsets.at(1) % 32, 16u);
  Report r = Check(f);
  EXPECT_EQ(CountRule(r, RuleId::kTensorDataAlignment), 1u) << testing::Describe(r);
  EXPECT_TRUE(HasFinding(r, RuleId::kTensorDataAlignment, TensorOffsetField(m, f, 1)));  // token_embd.weight
  EXPECT_NE(MessageOf(r, RuleId::kTensorDataAlignment).find("('output.weight' at"), std::string::npos)
      << MessageOf(r, RuleId::kTensorDataAlignment);

  // BF16, which no extra buffer type of a default build takes: the CPU-only
  // load starts at output.weight, on 32, but with a GPU every layer except
  // the input layer is offloaded (llama_model_default_params), and
  // token_embd.weight starts the CPU's buffer.
  m.TensorNamed("output.weight").type = 30;  // BF16
  BuiltFile bf16 = AlignedTo8(m, 0);
  r = Check(bf16);
  EXPECT_TRUE(HasFinding(r, RuleId::kTensorDataAlignment, TensorOffsetField(m, bf16, 1))) << testing::Describe(r);
  EXPECT_EQ(MessageOf(r, RuleId::kTensorDataAlignment).find("repack"), std::string::npos);
  EXPECT_NE(MessageOf(r, RuleId::kTensorDataAlignment).find("on a machine with a GPU"), std::string::npos)
      << MessageOf(r, RuleId::kTensorDataAlignment);

  // Either type first and off 32: the first tensor's own offset decides
  // (the F16 one loads only on a CPU that takes it).
  for (uint32_t type : {testing::kF16, 30u}) {
    m.TensorNamed("output.weight").type = type;
    BuiltFile first_off = AlignedTo8(m, 16);
    r = Check(first_off);
    EXPECT_TRUE(HasFinding(r, RuleId::kTensorDataAlignment, TensorOffsetField(m, first_off, 0))) << type;
    EXPECT_EQ(CountRule(r, RuleId::kTensorDataAlignment), 1u) << type;
    EXPECT_EQ(MessageOf(r, RuleId::kTensorDataAlignment).find("unless") != std::string::npos, type == testing::kF16);
  }
}

// A llama of two blocks with `tensors` in this order, general.alignment 8
// and the data section on 32.
BuiltFile TwoBlocksInOrder(const std::vector<TinyModel::Tensor>& tensors) {
  for (size_t pad = 0; pad < 32; ++pad) {
    testing::GgufBuilder b;
    b.AddKv("general.architecture", GgufValue::Str("llama"))
        .AddKv("general.name", GgufValue::Str(std::string(pad, 'a')))
        .AddKv("llama.block_count", GgufValue::U32(2))
        .AddAlignmentKv(8);
    for (const TinyModel::Tensor& t : tensors) b.AddTensor(t.name, t.dims, t.type);
    BuiltFile f = b.Build();
    if (f.data_offset % 32 == 0) return f;
  }
  ADD_FAILURE() << "no name length puts the data section on 32";
  return {};
}

// With a smaller n_gpu_layers the CPU's buffer holds the input layer, the
// first repeating layers and (up to n_gpu_layers = block_count) the output
// layer: a tensor after one that the CPU-only load starts with can still
// start it (GG9060, a warning). The input layer alone stays on the CPU when
// a GPU takes every other layer, llama.cpp's default: its first tensor is
// GG9050's.
TEST(LoaderAssertRulesTest, GpuOffloadMovesTheStartOfTheCpuBuffer) {
  const std::vector<TinyModel::Tensor> tensors = {
      {"blk.1.attn_norm.weight", {2}, testing::kF32},  // 8 bytes: on the CPU unless layer 1 is offloaded
      {"blk.0.attn_norm.weight", {8}, testing::kF32},  // at 8 mod 32: first with layer 1 offloaded
      {"blk.0.ffn_norm.weight", {8}, testing::kF32},   // after a layer-0 tensor that stays: never first
      {"output_norm.weight", {8}, testing::kF32},      // first with both layers offloaded
      {"token_embd.weight", {8, 2}, testing::kF32},    // the input layer's first: first with every layer offloaded
      {"output.weight", {8, 2}, testing::kF32}};       // after the input layer: never first
  BuiltFile f = TwoBlocksInOrder(tensors);
  auto offset_field = [&](size_t i) {
    return f.tensor_info_offsets[i] + 8 + tensors[i].name.size() + 4 + 8 * tensors[i].dims.size() + 4;
  };
  ASSERT_EQ(f.tensor_data_offsets[5] % 32, 8u);  // every tensor but the first at 8 mod 32
  Report r = Check(f);
  EXPECT_EQ(CountRule(r, RuleId::kTensorDataAlignmentOffload), 2u) << testing::Describe(r);
  EXPECT_TRUE(HasFinding(r, RuleId::kTensorDataAlignmentOffload, offset_field(1)));
  EXPECT_TRUE(HasFinding(r, RuleId::kTensorDataAlignmentOffload, offset_field(3)));
  EXPECT_NE(MessageOf(r, RuleId::kTensorDataAlignmentOffload)
                .find(absl::StrCat("'blk.0.attn_norm.weight' data starts at file offset ", f.tensor_data_offsets[1])),
            std::string::npos)
      << MessageOf(r, RuleId::kTensorDataAlignmentOffload);
  EXPECT_NE(MessageOf(r, RuleId::kTensorDataAlignmentOffload)
                .find("the layers after 0 are offloaded to a GPU (n_gpu_layers = 1)"),
            std::string::npos);
  EXPECT_EQ(CountRule(r, RuleId::kTensorDataAlignment), 1u) << testing::Describe(r);
  EXPECT_TRUE(HasFinding(r, RuleId::kTensorDataAlignment, offset_field(4)));

  // The output layer first with all repeating layers on the GPU; the input
  // layer on 32, so the default load of every machine works: a warning,
  // which only the strict policy rejects.
  const std::vector<TinyModel::Tensor> output = {
      {"blk.0.attn_norm.weight", {2}, testing::kF32},  // 8 bytes
      {"output_norm.weight", {8}, testing::kF32},      // at 8 mod 32
      {"output.bias", {6}, testing::kF32},             // 24 bytes
      {"token_embd.weight", {8, 2}, testing::kF32}};   // on 32
  BuiltFile g = TwoBlocksInOrder(output);
  r = Check(g);
  EXPECT_TRUE(LacksRule(r, RuleId::kTensorDataAlignment)) << testing::Describe(r);
  EXPECT_EQ(CountRule(r, RuleId::kTensorDataAlignmentOffload), 1u) << testing::Describe(r);
  EXPECT_NE(MessageOf(r, RuleId::kTensorDataAlignmentOffload).find("'output_norm.weight'"), std::string::npos);
  EXPECT_NE(MessageOf(r, RuleId::kTensorDataAlignmentOffload).find("(n_gpu_layers = block_count)"),
            std::string::npos);
  EXPECT_FALSE(HasRule(ValidateBytes(g.bytes, StrictPolicy()), RuleId::kTensorDataAlignment));
  EXPECT_TRUE(HasRule(ValidateBytes(g.bytes, StrictPolicy()), RuleId::kTensorDataAlignmentOffload));
}

// Only llama_model_load maps a file: LoRA adapters, projectors and control
// vectors are read into buffers of their own (llama-adapter.cpp, clip.cpp).
// An architecture ggufguard does not know may be a newer llama.cpp's.
TEST(LoaderAssertRulesTest, OnlyModelsAreMapped) {
  TinyModel adapter = MakeTinyModel();
  adapter.Set("general.type", GgufValue::Str("adapter")).Set("adapter.type", GgufValue::Str("lora"));
  EXPECT_TRUE(LacksRule(Check(AlignedTo8(adapter, 8)), RuleId::kTensorDataAlignment));
  TinyModel projector = MakeTinyModel();
  projector.Set("general.architecture", GgufValue::Str("clip"));
  EXPECT_TRUE(LacksRule(Check(AlignedTo8(projector, 8)), RuleId::kTensorDataAlignment));
  TinyModel unknown = MakeTinyModel();
  unknown.Set("general.architecture", GgufValue::Str("llama9"));
  EXPECT_TRUE(HasRule(Check(AlignedTo8(unknown, 8)), RuleId::kTensorDataAlignment));
}

TEST(LoaderAssertRulesTest, TensorOffItsOwnAlignmentIsGG6001Only) {
  TinyModel m = MakeTinyModel();
  BuiltFile f = m.Build();
  // Tensor 1's offset one byte on: misaligned for general.alignment 32.
  std::vector<uint8_t> bytes = f.bytes;
  const uint64_t field = TensorOffsetField(m, f, 1);
  testing::PutU64LE(bytes, field, testing::GetU64LE(bytes, field) + 1);
  Report r = ValidateBytes(bytes, DefaultPolicy());
  EXPECT_TRUE(HasFinding(r, RuleId::kTensorMisaligned, field));
  EXPECT_TRUE(LacksRule(r, RuleId::kTensorDataAlignment));
}

TEST(LoaderAssertRulesTest, ByteTokenInAWordPieceVocabulary) {
  TinyModel m = MakeTinyModel();  // token 3 is <0x41>, type BYTE
  m.Set("tokenizer.ggml.model", GgufValue::Str("bert"));
  BuiltFile f = m.Build();
  Report r = Check(f);
  EXPECT_TRUE(HasFinding(r, RuleId::kWordPieceByteToken, m.Kv(f, "tokenizer.ggml.token_type").array_elements() + 4 * 3));
  EXPECT_EQ(CountRule(r, RuleId::kWordPieceByteToken), 1u);

  // Neighbours: the same vocabulary as SentencePiece, and as WordPiece
  // with the byte token typed NORMAL.
  m.Set("tokenizer.ggml.model", GgufValue::Str("llama"));
  EXPECT_TRUE(IsValid(Check(m.Build())));
  m.Set("tokenizer.ggml.model", GgufValue::Str("bert"))
      .Set("tokenizer.ggml.token_type", GgufValue::I32Array({2, 3, 3, 1, 1, 1, 1}));
  EXPECT_TRUE(LacksRule(Check(m.Build()), RuleId::kWordPieceByteToken));
}

TEST(LoaderAssertRulesTest, NextnLayersAboveBlockCount) {
  TinyModel m = MakeTinyModel();  // one block
  m.Set("llama.nextn_predict_layers", GgufValue::U32(2));
  BuiltFile f = m.Build();
  EXPECT_TRUE(HasFinding(Check(f), RuleId::kNextnLayersRange, m.Kv(f, "llama.nextn_predict_layers").payload));
  m.Set("llama.nextn_predict_layers", GgufValue::U32(1));  // all of the one block: allowed
  EXPECT_TRUE(LacksRule(Check(m.Build()), RuleId::kNextnLayersRange));
  m.Set("llama.nextn_predict_layers", GgufValue::I32(2));  // not u32: llama.cpp refuses it, no abort
  EXPECT_TRUE(LacksRule(Check(m.Build()), RuleId::kNextnLayersRange));
}

// glm4 (and 17 other architectures, generated) asserts nextn_predict_layers
// < block_count as it reads it; llama only computes block_count - nextn.
TEST(LoaderAssertRulesTest, NextnLayersWhereTheArchitectureAssertsBelowBlockCount) {
  EXPECT_TRUE(AssertsNextnBelowBlockCount("glm4"));
  EXPECT_TRUE(AssertsNextnBelowBlockCount("deepseek4"));
  EXPECT_FALSE(AssertsNextnBelowBlockCount("llama"));
  auto file = [](uint32_t blocks, uint32_t nextn) {
    testing::GgufBuilder b;
    b.AddKv("general.architecture", GgufValue::Str("glm4"))
        .AddKv("glm4.block_count", GgufValue::U32(blocks))
        .AddKv("glm4.nextn_predict_layers", GgufValue::U32(nextn))
        .AddTensor("output_norm.weight", {8}, 0);
    return b.Build();
  };
  const BuiltFile equal = file(2, 2);
  EXPECT_TRUE(HasFinding(Check(equal), RuleId::kNextnLayersRange, testing::KvAt(equal, 2).payload));
  EXPECT_TRUE(LacksRule(Check(file(2, 1)), RuleId::kNextnLayersRange));
  const BuiltFile above = file(2, 3);
  EXPECT_TRUE(HasFinding(Check(above), RuleId::kNextnLayersRange, testing::KvAt(above, 2).payload));
  // A vocabulary-only file: llama.cpp reads no hyperparameter. Without a
  // vocabulary it is no such file, and a model's load asserts.
  testing::GgufBuilder vocab;
  vocab.AddKv("general.architecture", GgufValue::Str("glm4"))
      .AddKv("glm4.block_count", GgufValue::U32(2))
      .AddKv("glm4.nextn_predict_layers", GgufValue::U32(2));
  const BuiltFile no_vocab = vocab.Build();
  EXPECT_TRUE(HasFinding(Check(no_vocab), RuleId::kNextnLayersRange, testing::KvAt(no_vocab, 2).payload));
  vocab.AddKv("tokenizer.ggml.model", GgufValue::Str("no_vocab"));
  EXPECT_TRUE(LacksRule(Check(vocab.Build()), RuleId::kNextnLayersRange));
  // The first part of a split model, metadata only: the loader reads it.
  vocab.AddKv("split.no", GgufValue::U16(0)).AddKv("split.count", GgufValue::U16(2));
  const BuiltFile first_part = vocab.Build();
  EXPECT_TRUE(HasFinding(Check(first_part), RuleId::kNextnLayersRange, testing::KvAt(first_part, 2).payload));
}

// gemma4-assistant asserts nextn_predict_layers == block_count: anything
// else aborts, the key absent (0) too, in a model with tensors.
TEST(LoaderAssertRulesTest, NextnLayersWhereTheArchitectureAssertsAllOfThem) {
  EXPECT_TRUE(AssertsNextnEqualBlockCount("gemma4-assistant"));
  auto file = [](std::optional<uint32_t> nextn, bool tensors) {
    testing::GgufBuilder b;
    b.AddKv("general.architecture", GgufValue::Str("gemma4-assistant"))
        .AddKv("gemma4-assistant.block_count", GgufValue::U32(4));
    if (nextn) b.AddKv("gemma4-assistant.nextn_predict_layers", GgufValue::U32(*nextn));
    if (tensors) {
      b.AddTensor("output_norm.weight", {8}, 0);
    } else {
      b.AddKv("tokenizer.ggml.model", GgufValue::Str("no_vocab"));  // a vocabulary-only file
    }
    return b.Build();
  };
  const BuiltFile three = file(3, true);
  EXPECT_TRUE(HasFinding(Check(three), RuleId::kNextnLayersRange, testing::KvAt(three, 2).payload));
  const BuiltFile absent = file(std::nullopt, true);
  EXPECT_TRUE(HasFinding(Check(absent), RuleId::kNextnLayersRange, testing::KvAt(absent, 0).string_bytes()));
  EXPECT_TRUE(LacksRule(Check(file(4, true)), RuleId::kNextnLayersRange));
  EXPECT_TRUE(LacksRule(Check(file(std::nullopt, false)), RuleId::kNextnLayersRange));  // vocabulary only
}

// The asserts generated from the architectures' loaders, on values in the
// file, of the type the loader reads; not on absent keys or other types.
TEST(LoaderAssertRulesTest, HyperparameterAssertsOfTheArchitecturesLoader) {
  ASSERT_EQ(ArchAsserts("minimax-m3").size(), 1u);
  EXPECT_TRUE(ArchAsserts("llama").empty());
  auto file = [](const std::string& arch, std::vector<std::pair<std::string, GgufValue>> kvs) {
    testing::GgufBuilder b;
    b.AddKv("general.architecture", GgufValue::Str(arch));
    for (auto& [k, v] : kvs) b.AddKv(arch + "." + k, v);
    b.AddTensor("output_norm.weight", {8}, 0);
    return b.Build();
  };
  const BuiltFile zero = file("minimax-m3", {{"attention.indexer.block_size", GgufValue::U32(0)}});
  EXPECT_TRUE(HasFinding(Check(zero), RuleId::kHyperparameterAssert, testing::KvAt(zero, 1).payload));
  EXPECT_TRUE(LacksRule(Check(file("minimax-m3", {{"attention.indexer.block_size", GgufValue::U32(64)}})),
                        RuleId::kHyperparameterAssert));
  // Another type is refused by get_key (GG4004), not asserted on; absent: the default.
  EXPECT_TRUE(LacksRule(Check(file("minimax-m3", {{"attention.indexer.block_size", GgufValue::I32(0)}})),
                        RuleId::kHyperparameterAssert));
  EXPECT_TRUE(LacksRule(Check(file("minimax-m3", {})), RuleId::kHyperparameterAssert));
  const BuiltFile gate = file("bailingmoe3", {{"kda.safe_gate", GgufValue::Bool(false)},
                                              {"kda.gate_lower_bound", GgufValue::F32(0.0f)}});
  EXPECT_TRUE(HasFinding(Check(gate), RuleId::kHyperparameterAssert, testing::KvAt(gate, 1).payload));
  EXPECT_TRUE(HasFinding(Check(gate), RuleId::kHyperparameterAssert, testing::KvAt(gate, 2).payload));
  EXPECT_TRUE(LacksRule(Check(file("bailingmoe3", {{"kda.safe_gate", GgufValue::Bool(true)},
                                                   {"kda.gate_lower_bound", GgufValue::F32(-5.0f)}})),
                        RuleId::kHyperparameterAssert));
  // wavtokenizer-dec's sub-networks may not have more blocks than the model
  // (the common load_hparams asserts it).
  const BuiltFile posnet = file("wavtokenizer-dec", {{"block_count", GgufValue::U32(2)},
                                                     {"posnet.block_count", GgufValue::U32(3)},
                                                     {"convnext.block_count", GgufValue::U32(2)}});
  EXPECT_TRUE(HasFinding(Check(posnet), RuleId::kHyperparameterAssert, testing::KvAt(posnet, 2).payload));
  EXPECT_EQ(testing::CountRule(Check(posnet), RuleId::kHyperparameterAssert), 1u);
  // Written by hand: a division by zero and asserts of another form.
  const BuiltFile interval = file("qwen35", {{"full_attention_interval", GgufValue::U32(0)}});
  EXPECT_TRUE(HasFinding(Check(interval), RuleId::kHyperparameterAssert, testing::KvAt(interval, 1).payload));
  EXPECT_TRUE(LacksRule(Check(file("qwen35", {{"full_attention_interval", GgufValue::U32(0)},
                                              {"attention.recurrent_layers", GgufValue::BoolArray({true})}})),
                        RuleId::kHyperparameterAssert));
  const BuiltFile loops = file("nanbeige", {{"block_count", GgufValue::U32(64)}, {"num_loops", GgufValue::U32(9)}});
  EXPECT_TRUE(HasFinding(Check(loops), RuleId::kHyperparameterAssert, testing::KvAt(loops, 2).payload));
  EXPECT_TRUE(HasRule(Check(file("nanbeige", {{"num_loops", GgufValue::U32(0)}})), RuleId::kHyperparameterAssert));
  EXPECT_TRUE(LacksRule(Check(file("nanbeige", {{"block_count", GgufValue::U32(64)}, {"num_loops", GgufValue::U32(8)}})),
                        RuleId::kHyperparameterAssert));
  const BuiltFile draft = file("dflash", {{"hyper_connection.count", GgufValue::U32(4)},
                                          {"attention.output_group_count", GgufValue::U32(0)}});
  EXPECT_TRUE(HasFinding(Check(draft), RuleId::kHyperparameterAssert, testing::KvAt(draft, 2).payload));
  EXPECT_TRUE(LacksRule(Check(file("dflash", {{"attention.output_group_count", GgufValue::U32(0)}})),
                        RuleId::kHyperparameterAssert));  // the assert sits under hyper_connection.count > 0
  const BuiltFile dense = file("gemma-embedding", {{"embedding_length", GgufValue::U32(8)},
                                                   {"dense_2_feat_in", GgufValue::U32(16)},
                                                   {"dense_3_feat_out", GgufValue::U32(8)}});
  EXPECT_TRUE(HasFinding(Check(dense), RuleId::kHyperparameterAssert, testing::KvAt(dense, 2).payload));
  EXPECT_EQ(testing::CountRule(Check(dense), RuleId::kHyperparameterAssert), 1u);
  // The same key under an architecture whose loader does not assert on it.
  EXPECT_TRUE(LacksRule(Check(file("llama", {{"attention.indexer.block_size", GgufValue::U32(0)}})),
                        RuleId::kHyperparameterAssert));
}

TEST(LoaderAssertRulesTest, RopeScalingTypeOutsideLlamaCppsTable) {
  TinyModel m = MakeTinyModel();
  for (const char* name : {"dynamic", "YARN", "linear ", "", "su"}) {
    m.Set("llama.rope.scaling.type", GgufValue::Str(name));
    BuiltFile f = m.Build();
    EXPECT_TRUE(HasFinding(Check(f), RuleId::kRopeScalingType,
                           m.Kv(f, "llama.rope.scaling.type").string_bytes()))
        << "'" << name << "'";
  }
  for (const char* name : {"none", "linear", "yarn", "longrope"}) {
    m.Set("llama.rope.scaling.type", GgufValue::Str(name));
    EXPECT_TRUE(LacksRule(Check(m.Build()), RuleId::kRopeScalingType)) << name;
  }
  // A vocabulary-only load never reads it (the oracle's vocab_only load
  // takes this file); without a vocabulary the file is a model's header.
  m.Set("llama.rope.scaling.type", GgufValue::Str("dynamic"));
  m.tensors.clear();
  EXPECT_TRUE(LacksRule(Check(m.Build()), RuleId::kRopeScalingType));
  m.Erase("tokenizer.ggml.model");
  EXPECT_TRUE(testing::HasRule(Check(m.Build()), RuleId::kRopeScalingType));
}

TEST(LoaderAssertRulesTest, TokensThatShareATextAsLlamaCppReadsIt) {
  TinyModel m = MakeTinyModel();  // <unk> <s> </s> <0x41> a b ab
  auto tokens_with = [&](size_t i, std::string text) {
    std::vector<std::string> tokens = testing::TinyTokens();
    tokens[i] = std::move(text);
    m.Set("tokenizer.ggml.tokens", GgufValue::StrArray(tokens));
    return m.Build();
  };
  BuiltFile f = tokens_with(5, "a");  // token 4 again
  Report r = Check(f);
  EXPECT_EQ(CountRule(r, RuleId::kDuplicateToken), 1u) << testing::Describe(r);
  // Token 5's bytes: after the first five strings (length + text each).
  uint64_t at = m.Kv(f, "tokenizer.ggml.tokens").array_elements();
  for (size_t i = 0; i < 5; ++i) at += 8 + testing::TinyTokens()[i].size();
  EXPECT_TRUE(HasFinding(r, RuleId::kDuplicateToken, at + 8));

  // llama.cpp's view: a C string (cut at NUL), an empty text as [EMPTY_<id>].
  EXPECT_TRUE(testing::HasRule(Check(tokens_with(5, std::string("a\0z", 3))), RuleId::kDuplicateToken));
  m.Set("tokenizer.ggml.tokens", GgufValue::StrArray({"<unk>", "<s>", "</s>", "<0x41>", "", "[EMPTY_4]", "ab"}));
  EXPECT_TRUE(testing::HasRule(Check(m.Build()), RuleId::kDuplicateToken));

  // Neighbours: distinct texts (case and length differ), and a vocabulary
  // llama.cpp does not build.
  EXPECT_TRUE(IsValid(Check(tokens_with(5, "A"))));
  EXPECT_TRUE(LacksRule(Check(tokens_with(5, "aa")), RuleId::kDuplicateToken));
  m.Set("tokenizer.ggml.tokens", GgufValue::StrArray({"<unk>", "<s>", "</s>", "<0x41>", "", "[EMPTY_5]", "ab"}));
  EXPECT_TRUE(LacksRule(Check(m.Build()), RuleId::kDuplicateToken));
  tokens_with(5, "a");
  m.Set("tokenizer.ggml.model", GgufValue::Str("none"));
  EXPECT_TRUE(LacksRule(Check(m.Build()), RuleId::kDuplicateToken));
}

// The parser hashes the token array llama.cpp resolves (the first KV whose
// key is tokenizer.ggml.tokens as a C string) in its own walk; GG9054 judges
// that array, whether a shadowing copy comes before or after it, and gives
// the same answer when it hashes the tokens itself (a caller that parsed
// without asking for the hashes).
TEST(LoaderAssertRulesTest, RepeatedTokensInTheArrayLlamaCppReads) {
  std::vector<std::string> distinct = testing::TinyTokens();
  std::vector<std::string> repeated = distinct;
  repeated[5] = repeated[4];
  TinyModel m = MakeTinyModel();
  m.Erase("tokenizer.ggml.tokens");
  auto build = [&](const std::string& first_key, const std::vector<std::string>& first,
                   const std::string& second_key, const std::vector<std::string>& second) {
    testing::GgufBuilder b = m.Builder();
    b.AddKv(first_key, GgufValue::StrArray(first));
    b.AddKv(second_key, GgufValue::StrArray(second));
    return b.Build();
  };
  const std::string tokens = "tokenizer.ggml.tokens";
  const std::string shadow = std::string("tokenizer.ggml.tokens\0x", 23);
  struct Case {
    BuiltFile file;
    bool expect_repeat;
  };
  const std::vector<Case> cases = {
      {build(tokens, repeated, tokens, distinct), true},    // exact duplicate keys: the first is read
      {build(tokens, distinct, tokens, repeated), false},
      {build(shadow, repeated, tokens, distinct), true},    // "k\0x" is read as "k", and comes first
      {build(tokens, distinct, shadow, repeated), false},
  };
  const Policy policy = DefaultPolicy();  // outlives the sinks, which keep a reference
  for (size_t i = 0; i < cases.size(); ++i) {
    const Report r = Check(cases[i].file);
    EXPECT_EQ(CountRule(r, RuleId::kDuplicateToken), cases[i].expect_repeat ? 1u : 0u) << i;
    // The rule family alone over a parse without the parser's hashes.
    FindingSink sink(policy);
    ParseResult parsed = ParseHeader(cases[i].file.bytes, ParseOptions{policy.limits, true}, sink);
    ASSERT_EQ(parsed.status, ParseStatus::kOk);
    FileView view(cases[i].file.bytes, nullptr);
    RuleContext ctx{parsed.header, view, sink, policy};
    CheckTokenizer(ctx, KeyIndex(parsed.header));
    const std::vector<Finding> findings = sink.TakeSorted();
    const size_t repeats = static_cast<size_t>(std::count_if(
        findings.begin(), findings.end(), [](const Finding& f) { return f.rule == RuleId::kDuplicateToken; }));
    EXPECT_EQ(repeats, cases[i].expect_repeat ? 1u : 0u) << i;
  }
}

// The first pass files each token's hash into a partition (base/
// hash_screen.h) as it walks the array: a repeat is found whether the two
// copies are neighbours or far apart, and nothing is found without one.
TEST(LoaderAssertRulesTest, RepeatedTokensAcrossHashBatches) {
  TinyModel m = MakeTinyModel();
  std::vector<std::string> distinct;
  for (int i = 0; i < 200; ++i) distinct.push_back(absl::StrCat("w", i));
  m.Set("tokenizer.ggml.tokens", GgufValue::StrArray(distinct));
  EXPECT_TRUE(LacksRule(Check(m.Build()), RuleId::kDuplicateToken));
  const std::vector<std::pair<int, int>> repeats = {{0, 15}, {14, 16}, {15, 16}, {16, 17}, {3, 47}, {150, 199}};
  for (const auto& [first, again] : repeats) {
    std::vector<std::string> tokens = distinct;
    tokens[again] = tokens[first];
    m.Set("tokenizer.ggml.tokens", GgufValue::StrArray(tokens));
    BuiltFile f = m.Build();
    uint64_t at = m.Kv(f, "tokenizer.ggml.tokens").array_elements();
    for (int i = 0; i < again; ++i) at += 8 + tokens[i].size();
    const Report r = Check(f);
    EXPECT_EQ(CountRule(r, RuleId::kDuplicateToken), 1u) << first << " " << again;
    EXPECT_TRUE(HasFinding(r, RuleId::kDuplicateToken, at + 8)) << first << " " << again;
  }
}

// Tokens are hashed by one of two paths: two masked loads for a token of
// 16 bytes or fewer with 16 readable bytes from its start, a loop otherwise
// (longer tokens, and tokens within 16 bytes of the array's end). A text
// repeated at the start and as the very last token (the copying tail) must
// hash alike whatever its length; NUL-cut texts too.
TEST(LoaderAssertRulesTest, RepeatedTokensOfEveryLengthAcrossHashPaths) {
  TinyModel m = MakeTinyModel();
  for (size_t len = 1; len <= 40; ++len) {
    std::string text;
    for (size_t k = 0; k < len; ++k) text += static_cast<char>('a' + (k * 7 + len) % 26);
    for (const bool nul_cut : {false, true}) {
      std::vector<std::string> tokens = {text, "<s>", "</s>"};
      for (int i = 0; i < 20; ++i) tokens.push_back(absl::StrCat("filler", i));
      tokens.push_back(nul_cut ? text + std::string("\0tail", 5) : text);
      m.Set("tokenizer.ggml.tokens", GgufValue::StrArray(tokens));
      EXPECT_EQ(CountRule(Check(m.Build()), RuleId::kDuplicateToken), 1u) << len << (nul_cut ? " cut" : "");
      tokens.back() = text + "z";
      m.Set("tokenizer.ggml.tokens", GgufValue::StrArray(tokens));
      EXPECT_EQ(CountRule(Check(m.Build()), RuleId::kDuplicateToken), 0u) << len;
    }
  }
}

// load_hparams' expert asserts, each with the file that trips it and the
// neighbour that llama.cpp loads.
TEST(LoaderAssertRulesTest, ExpertCountsThatLlamaCppAssertsOn) {
  struct Counts {
    const char* what;
    std::optional<uint32_t> experts, used, groups, group_used;
    bool aborts;
  };
  const Counts kCases[] = {
      {"no experts", std::nullopt, std::nullopt, std::nullopt, std::nullopt, false},
      {"8 experts, 2 used", 8, 2, std::nullopt, std::nullopt, false},
      {"512 experts (Qwen3-Next)", 512, 10, std::nullopt, std::nullopt, false},
      {"both 0", 0, 0, std::nullopt, std::nullopt, false},
      {"groups of DeepSeek-V3", 256, 8, 8, 4, false},
      {"one group", 8, 2, 1, std::nullopt, false},
      {"1025 experts", 1025, 2, std::nullopt, std::nullopt, true},
      {"896 experts (Kimi K3)", 896, 8, std::nullopt, std::nullopt, false},
      {"more used than experts", 4, 5, std::nullopt, std::nullopt, true},
      {"used without experts", std::nullopt, 1, std::nullopt, std::nullopt, true},
      {"experts, none used", 8, std::nullopt, std::nullopt, std::nullopt, true},
      {"experts, 0 used", 8, 0, std::nullopt, std::nullopt, true},
      {"as many groups as experts", 8, 2, 8, 1, true},
      {"groups do not divide", 8, 2, 3, 1, true},
      {"no group used", 8, 2, 4, 0, true},
      {"every group used", 8, 2, 4, 4, true},
      {"groups without experts", std::nullopt, std::nullopt, 2, 1, true},
  };
  for (const Counts& c : kCases) {
    TinyModel m = MakeTinyModel();
    if (c.experts) m.Set("llama.expert_count", GgufValue::U32(*c.experts));
    if (c.used) m.Set("llama.expert_used_count", GgufValue::U32(*c.used));
    if (c.groups) m.Set("llama.expert_group_count", GgufValue::U32(*c.groups));
    if (c.group_used) m.Set("llama.expert_group_used_count", GgufValue::U32(*c.group_used));
    const Report r = Check(m.Build());
    EXPECT_EQ(HasRule(r, RuleId::kExpertCounts), c.aborts) << c.what << "\n" << Describe(r);
    // A vocabulary-only load stops before the asserts (the oracle's
    // vocab_only load takes 4 experts with 8 used).
    m.tensors.clear();
    EXPECT_TRUE(LacksRule(Check(m.Build()), RuleId::kExpertCounts)) << c.what << " (vocabulary only)";
  }
}

TEST(LoaderAssertRulesTest, ExpertCountsReadPerLayerUsedCountsAndOnlyU32) {
  TinyModel m = MakeTinyModel();  // one block
  m.Set("llama.expert_count", GgufValue::U32(4)).Set("llama.expert_used_count", GgufValue::U32Array({5}));
  EXPECT_TRUE(HasRule(Check(m.Build()), RuleId::kExpertCounts));
  m.Set("llama.expert_used_count", GgufValue::U32Array({2}));
  EXPECT_TRUE(LacksRule(Check(m.Build()), RuleId::kExpertCounts));
  m.Set("llama.expert_used_count", GgufValue::U32Array({2, 2}));  // not one per layer: refused
  EXPECT_TRUE(LacksRule(Check(m.Build()), RuleId::kExpertCounts));
  // Not u32: get_key throws (a refusal, GG4004's business), no assert runs.
  m.Set("llama.expert_used_count", GgufValue::I32(9));
  EXPECT_TRUE(LacksRule(Check(m.Build()), RuleId::kExpertCounts));
  m.Set("llama.expert_used_count", GgufValue::U32(9)).Set("llama.expert_count", GgufValue::U64(4));
  EXPECT_TRUE(LacksRule(Check(m.Build()), RuleId::kExpertCounts));
  // An architecture llama.cpp does not build refuses the file before.
  TinyModel other = MakeTinyModel();
  other.Set("general.architecture", GgufValue::Str("no-such-arch"))
      .Set("no-such-arch.expert_count", GgufValue::U32(4))
      .Set("no-such-arch.expert_used_count", GgufValue::U32(8));
  EXPECT_TRUE(LacksRule(Check(other.Build()), RuleId::kExpertCounts));
}

// The tiny model with `layers` blocks whose K/V projections all have layer
// 0's width (8: 2 heads of 4) and K/V heads per layer `kv` (u32 or i32).
TinyModel PerLayerKv(const std::string& arch, std::vector<uint32_t> kv, bool i32 = false) {
  TinyModel m = MakeTinyModel();
  m.Set("general.architecture", GgufValue::Str(arch));
  for (auto& entry : m.kvs) {
    if (entry.first.rfind("llama.", 0) == 0) entry.first = arch + "." + entry.first.substr(6);
  }
  m.Set(arch + ".block_count", GgufValue::U32(static_cast<uint32_t>(kv.size())));
  if (i32) {
    m.Set(arch + ".attention.head_count_kv", GgufValue::I32Array(std::vector<int32_t>(kv.begin(), kv.end())));
  } else {
    m.Set(arch + ".attention.head_count_kv", GgufValue::U32Array(kv));
  }
  for (size_t il = 0; il < kv.size(); ++il) {
    const std::string blk = "blk." + std::to_string(il) + ".";
    m.tensors.push_back({blk + "attn_k.weight", {8, 8}, 0});
    m.tensors.push_back({blk + "attn_v.weight", {8, 8}, 0});
  }
  return m;
}

uint64_t KvElement(const TinyModel& m, const BuiltFile& f, const std::string& key, uint32_t il) {
  return m.Kv(f, key).array_elements() + 4 * il;
}

// llama and most architectures give every layer's K/V projections layer 0's
// width and size each layer's K/V cache by its own head_count_kv: a count
// that differs on an attention layer aborts creating a context (the oracle:
// llama [2, 1] GGML_ASSERT(a->ne[0] == b->ne[0]), granite [2, 1]
// GGML_ASSERT(ggml_nelements(a) == ne0*ne1*ne2)).
TEST(LoaderAssertRulesTest, KvHeadsThatDifferBetweenAttentionLayers) {
  for (const bool i32 : {false, true}) {
    TinyModel m = PerLayerKv("llama", {2, 2, 1}, i32);
    BuiltFile f = m.Build();
    Report r = Check(f);
    EXPECT_TRUE(HasFinding(r, RuleId::kKvHeadsPerLayer, KvElement(m, f, "llama.attention.head_count_kv", 2)))
        << Describe(r);
    EXPECT_EQ(CountRule(r, RuleId::kKvHeadsPerLayer), 1u);
    EXPECT_TRUE(LacksRule(r, RuleId::kAttentionHeads));  // every pair divides
    EXPECT_FALSE(r.valid());
  }
  // More heads than layer 0 too, and granite, whose graph reshapes per layer.
  EXPECT_TRUE(HasRule(Check(PerLayerKv("llama", {2, 4}).Build()), RuleId::kKvHeadsPerLayer));
  TinyModel granite = PerLayerKv("granite", {2, 1});
  granite.Set("granite.logit_scale", GgufValue::F32(1.0f));
  EXPECT_TRUE(HasRule(Check(granite.Build()), RuleId::kKvHeadsPerLayer));
  // head_count_kv absent: it is head_count, read per layer the same way.
  TinyModel heads = PerLayerKv("llama", {2, 1});
  heads.Erase("llama.attention.head_count_kv").Set("llama.attention.head_count", GgufValue::U32Array({2, 1}));
  BuiltFile h = heads.Build();
  EXPECT_TRUE(HasFinding(Check(h), RuleId::kKvHeadsPerLayer, KvElement(heads, h, "llama.attention.head_count", 1)));
}

TEST(LoaderAssertRulesTest, KvHeadsThatLlamaCppReadsAsTheyAre) {
  // The same count on every layer, as an array or a scalar.
  EXPECT_TRUE(IsValid(Check(PerLayerKv("llama", {2, 2}).Build())));
  TinyModel scalar = PerLayerKv("llama", {2, 2});
  scalar.Set("llama.attention.head_count_kv", GgufValue::U32(2));
  EXPECT_TRUE(IsValid(Check(scalar.Build())));
  // A layer without K/V tensors computes nothing with its count.
  TinyModel idle = PerLayerKv("llama", {2, 1});
  idle.tensors.erase(idle.tensors.end() - 2, idle.tensors.end());
  EXPECT_TRUE(LacksRule(Check(idle.Build()), RuleId::kKvHeadsPerLayer));
  // A 0 on an attention layer is GG4017's.
  const Report zero = Check(PerLayerKv("llama", {2, 0}).Build());
  EXPECT_TRUE(LacksRule(zero, RuleId::kKvHeadsPerLayer));
  EXPECT_TRUE(HasRule(zero, RuleId::kAttentionHeads));
  // Architectures that shape each layer's K/V by its own count (what
  // Nemotron-NAS and OpenELM files write) and the hybrids: refused on shapes
  // when a tensor does not match, never crashed.
  for (const char* arch : {"deci", "openelm", "jamba", "granitehybrid", "lfm2", "nemotron_h", "plamo2"}) {
    EXPECT_TRUE(LacksRule(Check(PerLayerKv(arch, {2, 1}).Build()), RuleId::kKvHeadsPerLayer)) << arch;
  }
  // An adapter names its base model's architecture and holds no model.
  TinyModel adapter = PerLayerKv("llama", {2, 1});
  adapter.Set("general.type", GgufValue::Str("adapter"));
  EXPECT_TRUE(LacksRule(Check(adapter.Build()), RuleId::kKvHeadsPerLayer));
}

// The file offset of tensor i's type field (v3 layout).
uint64_t TensorTypeField(const TinyModel& m, const BuiltFile& f, size_t i) {
  return TensorOffsetField(m, f, i) - 4;
}

// ggml-cpu has no kernel for integer, f64 and the activation block types, and
// multiplies or adds 1-D weights in f32 only: what the oracle saw, decoding
// one token (node-llama-cpp 3.21.1): ffn_down / output I8..I64, F64, Q8_1,
// Q8_K SIGSEGV; token_embd I8, I16, I64, F64 GGML_ABORT in get_rows, I32
// GGML_ASSERT(*cur_backend_id != -1); norms and biases F16, BF16, Q4_0,
// Q5_0, Q8_0, IQ4_NL, MXFP4 ... "binary_op: unsupported types".
TEST(LoaderAssertRulesTest, TensorTypesLlamaCppCannotComputeWith) {
  struct Case {
    const char* tensor;
    std::vector<uint64_t> dims;
    uint32_t type;
  };
  const Case kCases[] = {
      {"output.weight", {8, 7}, 24},           // I8
      {"output.weight", {8, 7}, 25},           // I16
      {"token_embd.weight", {8, 7}, 26},       // I32
      {"output.weight", {8, 7}, 27},           // I64
      {"output.weight", {8, 7}, 28},           // F64
      {"blk.0.attn_norm.weight", {8}, 28},     // F64, 1-D
      {"blk.0.ffn_down.weight", {32, 8}, 9},   // Q8_1
      {"blk.0.ffn_down.weight", {256, 8}, 15}, // Q8_K
      {"blk.0.attn_norm.weight", {8}, 1},      // F16
      {"output_norm.weight", {8}, 30},         // BF16
      {"blk.0.attn_q.bias", {32}, 2},          // Q4_0
      {"rope_freqs.weight", {32}, 8},          // Q8_0
  };
  for (const Case& c : kCases) {
    TinyModel m = MakeTinyModel();
    bool found = false;
    for (TinyModel::Tensor& t : m.tensors) {
      if (t.name == c.tensor) {
        t.dims = c.dims;
        t.type = c.type;
        found = true;
      }
    }
    if (!found) m.tensors.push_back({c.tensor, c.dims, c.type});
    BuiltFile f = m.Build();
    Report r = Check(f);
    const std::string what = std::string(c.tensor) + " type " + std::to_string(c.type);
    EXPECT_TRUE(HasFinding(r, RuleId::kUncomputableTensorType, TensorTypeField(m, f, m.TensorIndex(c.tensor))))
        << what << "\n" << Describe(r);
    EXPECT_EQ(CountRule(r, RuleId::kUncomputableTensorType), 1u) << what;
    EXPECT_FALSE(r.valid()) << what;
  }
}

TEST(LoaderAssertRulesTest, TensorTypesLlamaCppComputesWith) {
  // 2-D weights in the float and block types converters and llama-quantize
  // write (F16, BF16, Q4_0, Q8_0, MXFP4 loaded and decoded in the oracle);
  // 1-D weights in F32.
  for (const uint32_t type : {0u, 1u, 30u, 2u, 8u, 39u}) {
    TinyModel m = MakeTinyModel();
    if (type == 2 || type == 8 || type == 39) {
      m.TensorNamed("output.weight").dims = {32, 7};
      m.Set("general.quantization_version", GgufValue::U32(2));
    }
    m.TensorNamed("output.weight").type = type;
    EXPECT_TRUE(LacksRule(Check(m.Build()), RuleId::kUncomputableTensorType)) << type;
  }
  // A tensor of a name llama.cpp never creates: it refuses the file
  // ("wrong number of tensors") before computing anything.
  TinyModel stray = MakeTinyModel();
  stray.tensors.push_back({"deep.weight", {8}, 1});
  stray.tensors.push_back({"extra.weight", {8, 2}, 26});
  EXPECT_TRUE(LacksRule(Check(stray.Build()), RuleId::kUncomputableTensorType));
  // Files that are not models: an adapter, a projector, an unknown architecture.
  TinyModel adapter = MakeTinyModel();
  adapter.Set("general.type", GgufValue::Str("adapter"));
  adapter.TensorNamed("output_norm.weight").type = 1;
  EXPECT_TRUE(LacksRule(Check(adapter.Build()), RuleId::kUncomputableTensorType));
  for (const char* arch : {"clip", "no-such-arch"}) {
    TinyModel other = MakeTinyModel();
    other.Set("general.architecture", GgufValue::Str(arch));
    other.TensorNamed("output_norm.weight").type = 1;
    other.TensorNamed("output.weight").type = 26;
    EXPECT_TRUE(LacksRule(Check(other.Build()), RuleId::kUncomputableTensorType)) << arch;
  }
}

// ggml_norm / ggml_rms_norm kernels assert eps >= 0: a llama model with
// layer_norm_rms_epsilon -1 or -1e-30 loads, creates its context and aborts
// on the first token (the oracle: ggml-cpu/ops.cpp:3949
// GGML_ASSERT(eps >= 0.0f)); 0 and 2 compute.
TEST(LoaderAssertRulesTest, NegativeNormEpsilon) {
  for (const float eps : {-1.0f, -1e-30f}) {
    TinyModel m = MakeTinyModel();
    m.Set("llama.attention.layer_norm_rms_epsilon", GgufValue::F32(eps));
    BuiltFile f = m.Build();
    Report r = Check(f);
    EXPECT_TRUE(HasFinding(r, RuleId::kNegativeNormEpsilon, m.Kv(f, "llama.attention.layer_norm_rms_epsilon").payload))
        << eps << "\n" << Describe(r);
    EXPECT_FALSE(r.valid()) << eps;
  }
  // A layer norm's epsilon, in an architecture that reads it.
  TinyModel gpt2 = MakeTinyModel();
  gpt2.Set("general.architecture", GgufValue::Str("gpt2"));
  for (auto& kv : gpt2.kvs) {
    if (kv.first.rfind("llama.", 0) == 0) kv.first = "gpt2." + kv.first.substr(6);
  }
  gpt2.Set("gpt2.attention.layer_norm_epsilon", GgufValue::F32(-1e-5f));
  EXPECT_TRUE(HasRule(Check(gpt2.Build()), RuleId::kNegativeNormEpsilon));

  // The neighbours: values that compute (GG4011 warns about 0 and 2), -0.0
  // (eps >= 0.0f holds), NaN (GG3006's), a key the architecture does not
  // read, and a vocabulary-only file, which computes nothing.
  for (const float eps : {0.0f, -0.0f, 2.0f, 1e-5f}) {
    TinyModel m = MakeTinyModel();
    m.Set("llama.attention.layer_norm_rms_epsilon", GgufValue::F32(eps));
    const Report r = Check(m.Build());
    EXPECT_TRUE(LacksRule(r, RuleId::kNegativeNormEpsilon)) << eps;
    EXPECT_TRUE(r.valid()) << eps;
  }
  TinyModel nan = MakeTinyModel();
  nan.Set("llama.attention.layer_norm_rms_epsilon", GgufValue::F32(std::numeric_limits<float>::quiet_NaN()));
  EXPECT_TRUE(LacksRule(Check(nan.Build()), RuleId::kNegativeNormEpsilon));
  TinyModel unread = MakeTinyModel();
  unread.Set("llama.attention.layer_norm_epsilon", GgufValue::F32(-1.0f));
  EXPECT_TRUE(LacksRule(Check(unread.Build()), RuleId::kNegativeNormEpsilon));
  TinyModel vocab = MakeTinyModel();
  vocab.Set("llama.attention.layer_norm_rms_epsilon", GgufValue::F32(-1.0f));
  vocab.tensors.clear();
  EXPECT_TRUE(LacksRule(Check(vocab.Build()), RuleId::kNegativeNormEpsilon));
}

// The files the oracle found, as committed: each is rejected under the
// default policy with its rule (tests/tools/make_corpus.cc writes them).
TEST(LoaderAssertRulesTest, OracleRegressionsAreRejectedWithTheirRule) {
  const struct {
    const char* file;
    RuleId rule;
  } kRegressions[] = {
      {"oracle-alignment-8.gguf", RuleId::kTensorDataAlignment},
      {"oracle-wordpiece-byte-token.gguf", RuleId::kWordPieceByteToken},
      {"oracle-nextn-layers.gguf", RuleId::kNextnLayersRange},
      {"oracle-rope-scaling-type.gguf", RuleId::kRopeScalingType},
      {"oracle-duplicate-token.gguf", RuleId::kDuplicateToken},
      {"oracle-expert-used-count.gguf", RuleId::kExpertCounts},
      {"oracle-kv-heads-per-layer.gguf", RuleId::kKvHeadsPerLayer},
      {"oracle-norm-f16.gguf", RuleId::kUncomputableTensorType},
      {"oracle-weight-i32.gguf", RuleId::kUncomputableTensorType},
      {"oracle-norm-epsilon-negative.gguf", RuleId::kNegativeNormEpsilon},
  };
  const std::filesystem::path dir = std::filesystem::path(GGUFGUARD_SOURCE_DIR) / "corpus" / "regressions";
  for (const auto& [file, rule] : kRegressions) {
    std::ifstream in(dir / file, std::ios::binary);
    ASSERT_TRUE(in) << file;
    const std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    Report r = ValidateBytes(bytes, DefaultPolicy());
    EXPECT_FALSE(r.valid()) << file;
    EXPECT_TRUE(testing::HasRule(r, rule)) << file;
  }
}

// The files ggufguard once rejected and the oracle loads, as committed:
// valid under both policies, without the rule that rejected them.
TEST(LoaderAssertRulesTest, OracleFalsePositivesAreAccepted) {
  const std::filesystem::path dir = std::filesystem::path(GGUFGUARD_SOURCE_DIR) / "corpus" / "regressions";
  for (const char* file : {"fp-alignment-8-first-tensor-aligned.gguf"}) {
    std::ifstream in(dir / file, std::ios::binary);
    ASSERT_TRUE(in) << file;
    const std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    for (const Policy& policy : {DefaultPolicy(), StrictPolicy()}) {
      Report r = ValidateBytes(bytes, policy);
      EXPECT_TRUE(r.valid()) << file << " " << policy.name << testing::Describe(r);
      EXPECT_TRUE(LacksRule(r, RuleId::kTensorDataAlignment)) << file;
      EXPECT_TRUE(LacksRule(r, RuleId::kTensorDataAlignmentOffload)) << file;
    }
  }
}

}  // namespace
}  // namespace ggufguard
