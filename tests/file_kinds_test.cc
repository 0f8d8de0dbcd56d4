// The GGUF files llama.cpp's own tools write that are not one whole model,
// built as those tools build them (the key names, types and tensor names of
// gguf-split, tools/imatrix, convert_lora_to_gguf.py, cvector-generator,
// convert_hf_to_gguf.py's MmprojModel and llama_model_saver; docs/policy.md,
// "Kinds of file"): each is accepted under the default and the strict
// policy, and the neighbour that no tool writes is still refused.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ggufguard/validate.h"
#include "tests/test_util.h"
#include "tests/tiny_model.h"

namespace ggufguard {
namespace {

using testing::BuiltFile;
using testing::Describe;
using testing::GgufBuilder;
using testing::GgufValue;
using testing::HasRule;
using testing::IsValid;
using testing::MakeTinyModel;
using testing::TinyModel;
using testing::kF16;
using testing::kF32;

void ExpectAcceptedByBothPolicies(const BuiltFile& f, const std::string& what) {
  EXPECT_TRUE(IsValid(ValidateBytes(f.bytes, DefaultPolicy()))) << what << " (default)";
  EXPECT_TRUE(IsValid(ValidateBytes(f.bytes, StrictPolicy()))) << what << " (strict)";
}

// --- Vocabulary-only files (convert_hf_to_gguf.py --vocab-only, llama.cpp's models/ggml-vocab-*.gguf) ---

TEST(FileKindsTest, VocabularyOnlyFilesAreAccepted) {
  // As the converter writes them: every key of the model, no tensors.
  TinyModel m = MakeTinyModel();
  m.tensors.clear();
  ExpectAcceptedByBothPolicies(m.Build(), "a vocabulary-only file");
  // A vocabulary alone, no {arch}.* key: vocab_only loads stop load_hparams
  // after general.name.
  TinyModel bare = m;
  bare.kvs.erase(std::remove_if(bare.kvs.begin(), bare.kvs.end(),
                                [](const auto& kv) { return kv.first.rfind("llama.", 0) == 0; }),
                 bare.kvs.end());
  ExpectAcceptedByBothPolicies(bare.Build(), "a vocabulary without hyperparameters");
  // Without tokenizer.ggml.model it is no vocabulary: every load refuses it.
  bare.Erase("tokenizer.ggml.model");
  EXPECT_TRUE(HasRule(ValidateBytes(bare.Build().bytes, DefaultPolicy()), RuleId::kMissingHyperparameter));
}

// --- Split models (llama-gguf-split, gguf-py's split writer, quantize --keep-split) ---

// split.no u16, split.count u16, split.tensors.count i32: all three in every
// shard, after everything else the first shard has.
GgufBuilder& AddSplitKeys(GgufBuilder& b, uint16_t no, uint16_t count, int32_t tensors) {
  return b.AddKv("split.no", GgufValue::U16(no))
      .AddKv("split.count", GgufValue::U16(count))
      .AddKv("split.tensors.count", GgufValue::I32(tensors));
}

TEST(FileKindsTest, SplitShardsAreAccepted) {
  const TinyModel m = MakeTinyModel();  // 4 tensors: 2 in the first shard, 1 in each other one
  GgufBuilder first;
  for (const auto& [key, value] : m.kvs) first.AddKv(key, value);
  AddSplitKeys(first, 0, 3, 4);
  first.AddTensor(m.tensors[0].name, m.tensors[0].dims, m.tensors[0].type);
  first.AddTensor(m.tensors[1].name, m.tensors[1].dims, m.tensors[1].type);
  ExpectAcceptedByBothPolicies(first.Build(), "shard 1 of 3");
  for (uint16_t no : {1, 2}) {
    // Shards 2..N: only the three split keys, then their tensors.
    GgufBuilder shard;
    AddSplitKeys(shard, no, 3, 4);
    const auto& t = m.tensors[1 + no];
    shard.AddTensor(t.name, t.dims, t.type);
    ExpectAcceptedByBothPolicies(shard.Build(), "shard " + std::to_string(no + 1) + " of 3");
  }
  // --no-tensor-first-split: a first shard with the metadata and no tensor.
  GgufBuilder metadata_only;
  for (const auto& [key, value] : m.kvs) metadata_only.AddKv(key, value);
  AddSplitKeys(metadata_only, 0, 2, 4);
  ExpectAcceptedByBothPolicies(metadata_only.Build(), "a first shard with no tensors");
  // llama-gguf-split --merge keeps the keys with split.count = 0.
  GgufBuilder merged;
  for (const auto& [key, value] : m.kvs) merged.AddKv(key, value);
  AddSplitKeys(merged, 0, 0, 4);
  for (const auto& t : m.tensors) merged.AddTensor(t.name, t.dims, t.type);
  ExpectAcceptedByBothPolicies(merged.Build(), "a merged file");
}

TEST(FileKindsTest, WhatNoSplitWriterWritesIsStillRefused) {
  const TinyModel m = MakeTinyModel();
  // Tensors without an architecture and without the split keys: no loader
  // knows what the file is.
  GgufBuilder bare;
  bare.AddKv("general.name", GgufValue::Str("x")).AddTensor("blk.0.ffn_down.weight", {8, 16}, kF32);
  EXPECT_TRUE(HasRule(ValidateBytes(bare.Build().bytes, DefaultPolicy()), RuleId::kMissingArchitecture));
  // split.no 1 says "not the first shard": the loader only opens shard 1 for
  // metadata, so a later shard needs none, but shard 1 does.
  GgufBuilder first_without_arch;
  AddSplitKeys(first_without_arch, 0, 2, 2).AddTensor("blk.0.ffn_down.weight", {8, 16}, kF32);
  EXPECT_TRUE(HasRule(ValidateBytes(first_without_arch.Build().bytes, DefaultPolicy()), RuleId::kMissingArchitecture));
  // split.count 0 is only what --merge leaves: all tensors in this file.
  GgufBuilder merged_short;
  for (const auto& [key, value] : m.kvs) merged_short.AddKv(key, value);
  AddSplitKeys(merged_short, 0, 0, 5);
  for (const auto& t : m.tensors) merged_short.AddTensor(t.name, t.dims, t.type);
  EXPECT_TRUE(HasRule(ValidateBytes(merged_short.Build().bytes, DefaultPolicy()), RuleId::kSplitKeys));
  GgufBuilder shard_no_beyond;
  AddSplitKeys(shard_no_beyond, 3, 3, 4).AddTensor("blk.0.ffn_down.weight", {8, 16}, kF32);
  EXPECT_TRUE(HasRule(ValidateBytes(shard_no_beyond.Build().bytes, DefaultPolicy()), RuleId::kSplitKeys));
}

// --- imatrix (tools/imatrix: general.type "imatrix", no architecture) ---

BuiltFile Imatrix(std::vector<std::string> datasets) {
  GgufBuilder b;
  b.AddKv("general.type", GgufValue::Str("imatrix"))
      .AddKv("imatrix.datasets", GgufValue::StrArray(datasets))
      .AddKv("imatrix.chunk_count", GgufValue::U32(100))
      .AddKv("imatrix.chunk_size", GgufValue::U32(512));
  // Per weight matrix: the sums of squared activations [n/nmat, nmat] and
  // the counts [1, nmat] (nmat: experts, 1 for a dense matrix); sorted.
  b.AddTensor("blk.0.attn_k.weight.counts", {1, 1}, kF32)
      .AddTensor("blk.0.attn_k.weight.in_sum2", {64, 1}, kF32)
      .AddTensor("blk.0.ffn_up_exps.weight.counts", {1, 8}, kF32)
      .AddTensor("blk.0.ffn_up_exps.weight.in_sum2", {64, 8}, kF32);
  return b.Build();
}

TEST(FileKindsTest, ImatrixFilesAreAccepted) {
  ExpectAcceptedByBothPolicies(Imatrix({"wiki.train.raw"}), "an imatrix");
  ExpectAcceptedByBothPolicies(Imatrix({}), "an imatrix with no dataset (an empty string array)");
}

// --- Adapters: LoRA (convert_lora_to_gguf.py) and control vectors ---

TEST(FileKindsTest, LoraAdaptersAreAccepted) {
  GgufBuilder b;
  b.AddKv("general.architecture", GgufValue::Str("llama"))
      .AddKv("general.type", GgufValue::Str("adapter"))
      .AddKv("general.name", GgufValue::Str("tiny lora"))
      .AddKv("adapter.type", GgufValue::Str("lora"))
      .AddKv("adapter.lora.alpha", GgufValue::F32(16.0f))
      .AddKv("general.quantization_version", GgufValue::U32(2))
      .AddTensor("blk.0.attn_q.weight.lora_a", {64, 8}, kF32)
      .AddTensor("blk.0.attn_q.weight.lora_b", {8, 64}, kF32);
  ExpectAcceptedByBothPolicies(b.Build(), "a LoRA adapter");
  // aLoRA: the invocation tokens, a u32 array.
  b.AddKv("adapter.alora.invocation_tokens", GgufValue::U32Array({1, 2, 3}));
  ExpectAcceptedByBothPolicies(b.Build(), "an aLoRA adapter");
}

TEST(FileKindsTest, ControlVectorsAreAccepted) {
  GgufBuilder b;
  b.AddKv("general.architecture", GgufValue::Str("controlvector"))
      .AddKv("controlvector.model_hint", GgufValue::Str("llama"))
      .AddKv("controlvector.layer_count", GgufValue::I32(2))
      .AddTensor("direction.1", {64}, kF32)
      .AddTensor("direction.2", {64}, kF32);
  ExpectAcceptedByBothPolicies(b.Build(), "a control vector");
}

// --- Multimodal projectors (mmproj: general.architecture "clip") ---

TEST(FileKindsTest, VisionProjectorsAreAccepted) {
  GgufBuilder b;
  b.AddKv("general.architecture", GgufValue::Str("clip"))
      .AddKv("general.type", GgufValue::Str("mmproj"))
      .AddKv("general.name", GgufValue::Str("tiny mmproj"))
      .AddKv("general.file_type", GgufValue::U32(1))
      .AddKv("general.quantization_version", GgufValue::U32(2))
      .AddKv("clip.has_vision_encoder", GgufValue::Bool(true))
      .AddKv("clip.projector_type", GgufValue::Str("mlp"))
      .AddKv("clip.use_gelu", GgufValue::Bool(true))
      .AddKv("clip.vision.image_size", GgufValue::U32(224))
      .AddKv("clip.vision.patch_size", GgufValue::U32(14))
      .AddKv("clip.vision.embedding_length", GgufValue::U32(64))
      .AddKv("clip.vision.feed_forward_length", GgufValue::U32(128))
      .AddKv("clip.vision.block_count", GgufValue::U32(1))
      .AddKv("clip.vision.attention.head_count", GgufValue::U32(4))
      .AddKv("clip.vision.projection_dim", GgufValue::U32(64))
      .AddKv("clip.vision.attention.layer_norm_epsilon", GgufValue::F32(1e-6f))
      .AddKv("clip.vision.image_mean", GgufValue::F32Array({0.48f, 0.46f, 0.41f}))
      .AddKv("clip.vision.image_std", GgufValue::F32Array({0.27f, 0.26f, 0.28f}))
      .AddTensor("v.patch_embd.weight", {14, 14, 3, 64}, kF16)
      .AddTensor("v.position_embd.weight", {64, 257}, kF16)
      .AddTensor("v.blk.0.attn_qkv.weight", {64, 192}, kF16)
      .AddTensor("v.blk.0.attn_out.weight", {64, 64}, kF16)
      .AddTensor("v.blk.0.ffn_up.weight", {64, 128}, kF16)
      .AddTensor("v.blk.0.ffn_down.weight", {128, 64}, kF16)
      .AddTensor("v.blk.0.ln1.weight", {64}, kF32)
      .AddTensor("mm.0.weight", {64, 64}, kF16)
      .AddTensor("mm.2.weight", {64, 64}, kF16);
  ExpectAcceptedByBothPolicies(b.Build(), "a vision projector");
}

// --- llama_model_saver (llama_model_save_to_file, used by fine-tuning) ---

TEST(FileKindsTest, LlamaCppSaverOutputIsAccepted) {
  // What the saver writes besides the model: every {arch}.* key whatever
  // the architecture uses (zeros for what it does not), the decoder start
  // token as i32 -1, unset special tokens as u32 0xFFFFFFFF, the SwiGLU
  // clamps as 512 floats, rope sections as 4 i32, no general.file_type.
  TinyModel m = MakeTinyModel();
  m.Erase("general.file_type");
  m.Set("llama.vocab_size", GgufValue::U32(7))
      .Set("llama.leading_dense_block_count", GgufValue::U32(0))
      .Set("llama.expert_feed_forward_length", GgufValue::U32(0))
      .Set("llama.expert_shared_feed_forward_length", GgufValue::U32(0))
      .Set("llama.swiglu_clamp_exp", GgufValue::F32Array(std::vector<float>(512, 0.0f)))
      .Set("llama.swiglu_clamp_shexp", GgufValue::F32Array(std::vector<float>(512, 0.0f)))
      .Set("llama.use_parallel_residual", GgufValue::Bool(false))
      .Set("llama.expert_count", GgufValue::U32(0))
      .Set("llama.expert_used_count", GgufValue::U32(0))
      .Set("llama.expert_shared_count", GgufValue::U32(0))
      .Set("llama.expert_group_count", GgufValue::U32(0))
      .Set("llama.expert_group_used_count", GgufValue::U32(0))
      .Set("llama.expert_weights_scale", GgufValue::F32(0.0f))
      .Set("llama.expert_weights_norm", GgufValue::Bool(false))
      .Set("llama.expert_gating_func", GgufValue::U32(0))
      .Set("llama.nextn_predict_layers", GgufValue::U32(0))
      .Set("llama.pooling_type", GgufValue::U32(0))
      .Set("llama.logit_scale", GgufValue::F32(0.0f))
      .Set("llama.decoder_start_token_id", GgufValue::I32(-1))
      .Set("llama.decoder_block_count", GgufValue::U32(0))
      .Set("llama.attn_logit_softcapping", GgufValue::F32(50.0f))
      .Set("llama.router_logit_softcapping", GgufValue::F32(30.0f))
      .Set("llama.final_logit_softcapping", GgufValue::F32(30.0f))
      .Set("llama.swin_norm", GgufValue::Bool(false))
      .Set("llama.rescale_every_n_layers", GgufValue::U32(0))
      .Set("llama.residual_scale", GgufValue::F32(0.0f))
      .Set("llama.embedding_scale", GgufValue::F32(0.0f))
      .Set("llama.token_shift_count", GgufValue::U32(2))
      .Set("llama.attention.max_alibi_bias", GgufValue::F32(0.0f))
      .Set("llama.attention.clamp_kqv", GgufValue::F32(0.0f))
      .Set("llama.attention.key_length", GgufValue::U32(4))
      .Set("llama.attention.value_length", GgufValue::U32(4))
      .Set("llama.attention.layer_norm_epsilon", GgufValue::F32(0.0f))
      .Set("llama.attention.group_norm_epsilon", GgufValue::F32(0.0f))
      .Set("llama.attention.group_norm_groups", GgufValue::U32(0))
      .Set("llama.attention.causal", GgufValue::Bool(true))
      .Set("llama.attention.q_lora_rank", GgufValue::U32(0))
      .Set("llama.attention.kv_lora_rank", GgufValue::U32(0))
      .Set("llama.attention.sliding_window", GgufValue::U32(0))
      .Set("llama.attention.scale", GgufValue::F32(0.0f))
      .Set("llama.rope.dimension_count", GgufValue::U32(4))
      .Set("llama.rope.dimension_sections", GgufValue::I32Array({0, 0, 0, 0}))
      .Set("llama.rope.freq_base_swa", GgufValue::F32(10000.0f))
      .Set("llama.rope.scaling.type", GgufValue::Str("none"))
      .Set("llama.rope.scaling.factor", GgufValue::F32(0.0f))
      .Set("llama.rope.scaling.attn_factor", GgufValue::F32(1.0f))
      .Set("llama.rope.scaling.original_context_length", GgufValue::U32(0))
      .Set("llama.rope.scaling.finetuned", GgufValue::Bool(false))
      .Set("llama.rope.scaling.yarn_log_multiplier", GgufValue::F32(0.0f))
      .Set("llama.ssm.inner_size", GgufValue::U32(0))
      .Set("llama.ssm.conv_kernel", GgufValue::U32(0))
      .Set("llama.ssm.state_size", GgufValue::U32(0))
      .Set("llama.ssm.time_step_rank", GgufValue::U32(0))
      .Set("llama.ssm.group_count", GgufValue::U32(0))
      .Set("llama.ssm.dt_b_c_rms", GgufValue::Bool(false))
      .Set("llama.wkv.head_size", GgufValue::U32(0))
      .Set("tokenizer.ggml.pre", GgufValue::Str("default"))
      .Set("tokenizer.ggml.token_type_count", GgufValue::U32(1))
      .Set("tokenizer.ggml.eot_token_id", GgufValue::U32(0xFFFFFFFFu))
      .Set("tokenizer.ggml.eom_token_id", GgufValue::U32(0xFFFFFFFFu))
      .Set("tokenizer.ggml.unknown_token_id", GgufValue::U32(0))
      .Set("tokenizer.ggml.seperator_token_id", GgufValue::U32(0xFFFFFFFFu))
      .Set("tokenizer.ggml.padding_token_id", GgufValue::U32(0xFFFFFFFFu))
      .Set("tokenizer.ggml.fim_pre_token_id", GgufValue::U32(0xFFFFFFFFu));
  ExpectAcceptedByBothPolicies(m.Build(), "llama_model_saver output");
  // An empty merges list: the saver writes the vector whatever its size.
  m.Set("tokenizer.ggml.merges", GgufValue::StrArray({}));
  ExpectAcceptedByBothPolicies(m.Build(), "llama_model_saver output with no merges");
}

TEST(FileKindsTest, ASpecialTokenPastTheVocabularyIsStillFlaggedWhenItIsNotTheUnsetValue) {
  // llama.cpp keeps its default for any id past the vocabulary, with a log
  // line; other loaders index with it. 0xFFFFFFFF is the saver's "unset".
  TinyModel m = MakeTinyModel();
  m.Set("tokenizer.ggml.eot_token_id", GgufValue::U32(7));
  EXPECT_TRUE(HasRule(ValidateBytes(m.Build().bytes, DefaultPolicy()), RuleId::kSpecialTokenId));
}

}  // namespace
}  // namespace ggufguard
