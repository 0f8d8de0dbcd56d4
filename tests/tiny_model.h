// A complete, valid tiny llama model for the semantic rule tests (known keys,
// tokenizer, chat templates, resource estimates): every rule family accepts
// it under the default and strict policies with no finding at all, so each
// test changes one key or tensor and expects exactly the rule it aims at.
//
// Header-only, like test_util.h: tests/CMakeLists.txt builds *_test.cc only.
#ifndef GGUFGUARD_TESTS_TINY_MODEL_H_
#define GGUFGUARD_TESTS_TINY_MODEL_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tests/support/gguf_writer.h"
#include "tests/test_util.h"

namespace ggufguard::testing {

// The vocabulary: <unk>, <s>, </s>, the byte token <0x41>, then "a", "b",
// "ab" (with the merge "a b").
inline std::vector<std::string> TinyTokens() { return {"<unk>", "<s>", "</s>", "<0x41>", "a", "b", "ab"}; }

struct TinyModel {
  struct Tensor {
    std::string name;
    std::vector<uint64_t> dims;
    uint32_t type;
  };
  std::vector<std::pair<std::string, GgufValue>> kvs;
  std::vector<Tensor> tensors;

  // Replaces the value of `key` in place, or appends the key.
  TinyModel& Set(const std::string& key, GgufValue v) {
    for (auto& kv : kvs) {
      if (kv.first == key) {
        kv.second = std::move(v);
        return *this;
      }
    }
    kvs.emplace_back(key, std::move(v));
    return *this;
  }
  TinyModel& Erase(std::string_view key) {
    kvs.erase(std::remove_if(kvs.begin(), kvs.end(), [&](const auto& kv) { return kv.first == key; }), kvs.end());
    return *this;
  }
  size_t IndexOf(std::string_view key) const {
    for (size_t i = 0; i < kvs.size(); ++i) {
      if (kvs[i].first == key) return i;
    }
    ADD_FAILURE() << "no key " << key;
    return 0;
  }
  Tensor& TensorNamed(std::string_view name) {
    for (Tensor& t : tensors) {
      if (t.name == name) return t;
    }
    ADD_FAILURE() << "no tensor " << name;
    return tensors.front();
  }
  size_t TensorIndex(std::string_view name) const {
    for (size_t i = 0; i < tensors.size(); ++i) {
      if (tensors[i].name == name) return i;
    }
    ADD_FAILURE() << "no tensor " << name;
    return 0;
  }
  GgufBuilder Builder() const {
    GgufBuilder b;
    for (const auto& [key, value] : kvs) b.AddKv(key, value);
    for (const Tensor& t : tensors) b.AddTensor(t.name, t.dims, t.type);
    return b;
  }
  BuiltFile Build() const { return Builder().Build(); }
  // The file offsets the rules report for KV `key`.
  KvFields Kv(const BuiltFile& f, std::string_view key) const { return KvAt(f, IndexOf(key)); }
  uint64_t TensorOffset(const BuiltFile& f, std::string_view name) const {
    return f.tensor_info_offsets.at(TensorIndex(name));
  }
};

inline TinyModel MakeTinyModel() {
  TinyModel m;
  const std::vector<std::string> tokens = TinyTokens();
  m.Set("general.architecture", GgufValue::Str("llama"))
      .Set("general.name", GgufValue::Str("tiny"))
      .Set("llama.context_length", GgufValue::U32(64))
      .Set("llama.embedding_length", GgufValue::U32(8))
      .Set("llama.block_count", GgufValue::U32(1))
      .Set("llama.feed_forward_length", GgufValue::U32(16))
      .Set("llama.attention.head_count", GgufValue::U32(2))
      .Set("llama.attention.head_count_kv", GgufValue::U32(2))
      .Set("llama.attention.layer_norm_rms_epsilon", GgufValue::F32(1e-5f))
      .Set("llama.rope.freq_base", GgufValue::F32(10000.0f))
      .Set("general.file_type", GgufValue::U32(0))
      .Set("tokenizer.ggml.model", GgufValue::Str("llama"))
      .Set("tokenizer.ggml.tokens", GgufValue::StrArray(tokens))
      .Set("tokenizer.ggml.scores", GgufValue::F32Array({0, 0, 0, 0, -1, -2, -3}))
      .Set("tokenizer.ggml.token_type", GgufValue::I32Array({2, 3, 3, 6, 1, 1, 1}))
      .Set("tokenizer.ggml.merges", GgufValue::StrArray({"a b"}))
      .Set("tokenizer.ggml.bos_token_id", GgufValue::U32(1))
      .Set("tokenizer.ggml.eos_token_id", GgufValue::U32(2))
      .Set("tokenizer.chat_template",
           GgufValue::Str("{% for message in messages %}<|{{ message['role'] }}|>{{ message['content'] }}"
                          "{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"));
  m.tensors = {{"token_embd.weight", {8, 7}, 0},
               {"blk.0.attn_norm.weight", {8}, 0},
               {"output_norm.weight", {8}, 0},
               {"output.weight", {8, 7}, 0}};
  return m;
}

// A tiny multimodal projector as llama.cpp's convert_hf_to_gguf.py --mmproj
// writes a LLaVA one (general.architecture "clip", projector "mlp"): a
// vision encoder of one block (n_embd 8, 2 heads, n_ff 16, 16x16 images in
// 8x8 patches) and the two-layer mlp projector. Every rule accepts it; the
// clip tests (GG9140-GG9147) change one key each.
inline TinyModel MakeTinyMmproj() {
  TinyModel m;
  m.Set("general.architecture", GgufValue::Str("clip"))
      .Set("general.type", GgufValue::Str("mmproj"))
      .Set("general.name", GgufValue::Str("tiny-mmproj"))
      .Set("general.file_type", GgufValue::U32(0))
      .Set("clip.has_vision_encoder", GgufValue::Bool(true))
      .Set("clip.projector_type", GgufValue::Str("mlp"))
      .Set("clip.use_gelu", GgufValue::Bool(false))
      .Set("clip.vision.image_size", GgufValue::U32(16))
      .Set("clip.vision.patch_size", GgufValue::U32(8))
      .Set("clip.vision.embedding_length", GgufValue::U32(8))
      .Set("clip.vision.feed_forward_length", GgufValue::U32(16))
      .Set("clip.vision.projection_dim", GgufValue::U32(8))
      .Set("clip.vision.block_count", GgufValue::U32(1))
      .Set("clip.vision.attention.head_count", GgufValue::U32(2))
      .Set("clip.vision.attention.layer_norm_epsilon", GgufValue::F32(1e-5f))
      .Set("clip.vision.image_mean", GgufValue::F32Array({0.48145466f, 0.4578275f, 0.40821073f}))
      .Set("clip.vision.image_std", GgufValue::F32Array({0.26862954f, 0.26130258f, 0.27577711f}));
  m.tensors = {{"v.patch_embd.weight", {8, 8, 3, 8}, 0}, {"v.class_embd", {8}, 0},
               {"v.position_embd.weight", {8, 5}, 0},   {"v.pre_ln.weight", {8}, 0},
               {"v.pre_ln.bias", {8}, 0},               {"v.blk.0.attn_q.weight", {8, 8}, 0},
               {"v.blk.0.attn_k.weight", {8, 8}, 0},    {"v.blk.0.attn_v.weight", {8, 8}, 0},
               {"v.blk.0.attn_out.weight", {8, 8}, 0},  {"v.blk.0.ln1.weight", {8}, 0},
               {"v.blk.0.ln2.weight", {8}, 0},          {"v.blk.0.ffn_up.weight", {8, 16}, 0},
               {"v.blk.0.ffn_down.weight", {16, 8}, 0}, {"mm.0.weight", {8, 8}, 0},
               {"mm.0.bias", {8}, 0},                   {"mm.2.weight", {8, 8}, 0},
               {"mm.2.bias", {8}, 0}};
  return m;
}

// The tiny model with clean F32 data (0.25 everywhere) instead of the
// builder's pattern (whose bytes may read as NaN), for the --deep tests;
// with `bad_bits`, output.weight's element `bad_element` holds those bits.
inline BuiltFile TinyModelWithCleanData(std::optional<uint32_t> bad_bits = std::nullopt, size_t bad_element = 5) {
  const TinyModel m = MakeTinyModel();
  GgufBuilder b;
  for (const auto& [key, value] : m.kvs) b.AddKv(key, value);
  for (const TinyModel::Tensor& t : m.tensors) {
    uint64_t n = 1;
    for (uint64_t d : t.dims) n *= d;
    const float clean = 0.25f;
    std::vector<uint8_t> bytes(n * 4);
    for (uint64_t i = 0; i < n; ++i) std::memcpy(bytes.data() + 4 * i, &clean, 4);
    if (bad_bits && t.name == "output.weight") std::memcpy(bytes.data() + 4 * bad_element, &*bad_bits, 4);
    b.AddTensor(t.name, t.dims, t.type, TensorOptions{.data = bytes});
  }
  return b.Build();
}

}  // namespace ggufguard::testing

#endif  // GGUFGUARD_TESTS_TINY_MODEL_H_
