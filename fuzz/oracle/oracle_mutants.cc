// oracle_mutants: a tiny llama model that llama.cpp really loads, and
// structure-aware mutants of it, for the loader oracle (docs/fuzzing.md,
// "The real loader as an oracle").
//
//   oracle_mutants OUT_DIR [FIRST_SEED COUNT]
//
// writes OUT_DIR/base.gguf and, for each seed in [FIRST_SEED, FIRST_SEED +
// COUNT), OUT_DIR/m<seed>.gguf, plus OUT_DIR/mutants.jsonl: one line per file
// with its seed and the mutations applied. Everything is deterministic in the
// seed, so a line of a report is enough to rebuild its file.
//
// The mutations work at the level a model author (or an attacker) works at:
// hyperparameter values and types, per-layer arrays, mixture-of-experts
// counts, tensor shapes, types, names and offsets, the vocabulary arrays,
// special token ids, the architecture. Every mutant is written by the
// project's writer (tests/support/gguf_writer.h), so it stays a well-formed
// GGUF file unless a mutation lies on purpose; a quarter of them then also
// get one pass of the fuzzers' byte-level structure-aware mutator
// (fuzz/gguf_mutator.h), which bends counts, lengths, offsets and type ids.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fuzz/gguf_mutator.h"
#include "tests/support/gguf_writer.h"

namespace ggufguard::oracle {
namespace {

using testing::BuiltFile;
using testing::GgufBuilder;
using testing::GgufValue;
using testing::TensorOptions;
using testing::ValueType;

constexpr uint32_t kF32 = 0, kF16 = 1, kQ8_0 = 8, kBF16 = 30;

// The base model's sizes. Small enough that a file is ~90 KB and loads in a
// few milliseconds, large enough that every dimension is a multiple of the
// 32-element blocks of Q8_0 and head_count / head_count_kv is grouped-query
// attention.
constexpr uint64_t kEmbd = 32, kFf = 64, kHeads = 4, kKvHeads = 2, kLayers = 2;
constexpr uint64_t kHeadDim = kEmbd / kHeads;

struct Tensor {
  std::string name;
  std::vector<uint64_t> dims;  // the shape written and the shape of the data
  uint32_t type;
  TensorOptions lies;  // offset, byte_size, n_dims or written_dims overrides
};

struct Model {
  std::vector<std::pair<std::string, GgufValue>> kvs;
  std::vector<Tensor> tensors;
  std::optional<uint32_t> alignment;  // general.alignment, used for the layout

  GgufValue* Find(std::string_view key) {
    for (auto& kv : kvs) {
      if (kv.first == key) return &kv.second;
    }
    return nullptr;
  }
  void Set(const std::string& key, GgufValue v) {
    if (GgufValue* old = Find(key)) {
      *old = std::move(v);
    } else {
      kvs.emplace_back(key, std::move(v));
    }
  }
  Tensor* FindTensor(std::string_view name) {
    for (Tensor& t : tensors) {
      if (t.name == name) return &t;
    }
    return nullptr;
  }
};

std::vector<std::string> BaseTokens() {
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) tokens.push_back(absl::StrCat("<0x", std::string{kHex[b >> 4], kHex[b & 15]}, ">"));
  for (const char* piece : {"\xE2\x96\x81", "\xE2\x96\x81t", "\xE2\x96\x81" "a", "he", "\xE2\x96\x81the", "ll",
                            "\xE2\x96\x81he", "llo", "\xE2\x96\x81hello", "o", "w", "\xE2\x96\x81w", "or", "ld",
                            "\xE2\x96\x81world", "!"}) {
    tokens.emplace_back(piece);
  }
  return tokens;
}

// llama_token_type: 1 NORMAL, 2 UNKNOWN, 3 CONTROL, 6 BYTE.
std::vector<int32_t> BaseTokenTypes(size_t n) {
  std::vector<int32_t> types(n, 1);
  types[0] = 2;
  types[1] = types[2] = 3;
  for (size_t i = 3; i < 3 + 256 && i < n; ++i) types[i] = 6;
  return types;
}

std::vector<float> BaseScores(size_t n) {
  std::vector<float> scores(n, 0.0f);
  for (size_t i = 3 + 256; i < n; ++i) scores[i] = -static_cast<float>(i - 258);
  return scores;
}

Model BaseModel() {
  Model m;
  const std::vector<std::string> tokens = BaseTokens();
  const uint64_t n_vocab = tokens.size();
  m.kvs = {
      {"general.architecture", GgufValue::Str("llama")},
      {"general.name", GgufValue::Str("ggufguard oracle tiny llama")},
      {"general.file_type", GgufValue::U32(7)},  // MOSTLY_Q8_0
      {"general.quantization_version", GgufValue::U32(2)},
      {"llama.context_length", GgufValue::U32(128)},
      {"llama.embedding_length", GgufValue::U32(kEmbd)},
      {"llama.block_count", GgufValue::U32(kLayers)},
      {"llama.feed_forward_length", GgufValue::U32(kFf)},
      {"llama.attention.head_count", GgufValue::U32(kHeads)},
      {"llama.attention.head_count_kv", GgufValue::U32(kKvHeads)},
      {"llama.attention.layer_norm_rms_epsilon", GgufValue::F32(1e-5f)},
      {"llama.rope.dimension_count", GgufValue::U32(kHeadDim)},
      {"llama.rope.freq_base", GgufValue::F32(10000.0f)},
      {"llama.vocab_size", GgufValue::U32(static_cast<uint32_t>(n_vocab))},
      {"tokenizer.ggml.model", GgufValue::Str("llama")},
      {"tokenizer.ggml.tokens", GgufValue::StrArray(tokens)},
      {"tokenizer.ggml.scores", GgufValue::F32Array(BaseScores(n_vocab))},
      {"tokenizer.ggml.token_type", GgufValue::I32Array(BaseTokenTypes(n_vocab))},
      {"tokenizer.ggml.bos_token_id", GgufValue::U32(1)},
      {"tokenizer.ggml.eos_token_id", GgufValue::U32(2)},
      {"tokenizer.ggml.unknown_token_id", GgufValue::U32(0)},
      {"tokenizer.ggml.add_bos_token", GgufValue::Bool(true)},
      {"tokenizer.ggml.add_eos_token", GgufValue::Bool(false)},
      {"tokenizer.chat_template",
       GgufValue::Str("{% for message in messages %}<|{{ message['role'] }}|>\n{{ message['content'] }}</s>\n"
                      "{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}")},
  };
  m.tensors.push_back({"token_embd.weight", {kEmbd, n_vocab}, kF16, {}});
  for (uint64_t i = 0; i < kLayers; ++i) {
    const std::string blk = absl::StrCat("blk.", i, ".");
    m.tensors.push_back({blk + "attn_norm.weight", {kEmbd}, kF32, {}});
    m.tensors.push_back({blk + "attn_q.weight", {kEmbd, kEmbd}, kF16, {}});
    m.tensors.push_back({blk + "attn_k.weight", {kEmbd, kHeadDim * kKvHeads}, kF16, {}});
    m.tensors.push_back({blk + "attn_v.weight", {kEmbd, kHeadDim * kKvHeads}, kQ8_0, {}});
    m.tensors.push_back({blk + "attn_output.weight", {kEmbd, kEmbd}, kQ8_0, {}});
    m.tensors.push_back({blk + "ffn_norm.weight", {kEmbd}, kF32, {}});
    m.tensors.push_back({blk + "ffn_gate.weight", {kEmbd, kFf}, kQ8_0, {}});
    m.tensors.push_back({blk + "ffn_up.weight", {kEmbd, kFf}, kQ8_0, {}});
    m.tensors.push_back({blk + "ffn_down.weight", {kFf, kEmbd}, kQ8_0, {}});
  }
  m.tensors.push_back({"output_norm.weight", {kEmbd}, kF32, {}});
  m.tensors.push_back({"output.weight", {kEmbd, n_vocab}, kQ8_0, {}});
  return m;
}

// --- Tensor data: real weights, so that a mutant differs from a model only
// where a mutation says. ---

uint16_t ToHalf(float f) {  // round to nearest; the values here are small and normal
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000;
  const int exp = static_cast<int>((x >> 23) & 0xFF) - 127 + 15;
  if (exp <= 0) return static_cast<uint16_t>(sign);
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7C00);
  const uint32_t mant = x & 0x7FFFFF;
  uint32_t h = sign | (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  if (mant & 0x1000) ++h;
  return static_cast<uint16_t>(h);
}

void PutLe(std::vector<uint8_t>& out, uint64_t v, int width) {
  for (int i = 0; i < width; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// Weights in [-0.1, 0.1] from a hash of the tensor's name and the element;
// norm weights are 1 as after training.
float Weight(const std::string& name, uint64_t i) {
  if (name.find("norm") != std::string::npos) return 1.0f;
  uint64_t h = 0xCBF29CE484222325ull;  // FNV-1a of the name: the same weights on every platform
  for (unsigned char c : name) h = (h ^ c) * 0x100000001B3ull;
  h ^= i * 0x9E3779B97F4A7C15ull;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  return (static_cast<float>(h % 2001) - 1000.0f) / 10000.0f;
}

// Elements small enough to materialise: beyond this a shape mutation writes
// its dims as a lie (TensorOptions::written_dims) and keeps the data.
constexpr uint64_t kMaxElements = uint64_t{1} << 22;

std::optional<uint64_t> Elements(const std::vector<uint64_t>& dims) {
  uint64_t n = 1;
  for (uint64_t d : dims) {
    if (d > kMaxElements || (d != 0 && n > kMaxElements / d)) return std::nullopt;
    n *= d;
  }
  return n;
}

// Data for the types whose encoding is simple; other types get the writer's
// fill (any bytes are a valid block to a loader that does not compute).
std::optional<std::vector<uint8_t>> TensorData(const Tensor& t) {
  const std::optional<uint64_t> n = Elements(t.dims);
  if (!n) return std::nullopt;
  std::vector<uint8_t> out;
  switch (t.type) {
    case kF32:
      for (uint64_t i = 0; i < *n; ++i) {
        const float w = Weight(t.name, i);
        uint32_t bits;
        std::memcpy(&bits, &w, 4);
        PutLe(out, bits, 4);
      }
      return out;
    case kF16:
      for (uint64_t i = 0; i < *n; ++i) PutLe(out, ToHalf(Weight(t.name, i)), 2);
      return out;
    case kBF16:
      for (uint64_t i = 0; i < *n; ++i) {
        const float w = Weight(t.name, i);
        uint32_t bits;
        std::memcpy(&bits, &w, 4);
        PutLe(out, bits >> 16, 2);
      }
      return out;
    case kQ8_0: {  // blocks of 32: an f16 scale, then 32 int8 quants
      if (t.dims.empty() || t.dims[0] % 32 != 0) return std::nullopt;
      for (uint64_t b = 0; b < *n / 32; ++b) {
        float amax = 0;
        for (uint64_t k = 0; k < 32; ++k) amax = std::max(amax, std::fabs(Weight(t.name, b * 32 + k)));
        const float d = amax / 127.0f;
        PutLe(out, ToHalf(d), 2);
        for (uint64_t k = 0; k < 32; ++k) {
          const float q = d == 0 ? 0 : std::round(Weight(t.name, b * 32 + k) / d);
          out.push_back(static_cast<uint8_t>(static_cast<int8_t>(q)));
        }
      }
      return out;
    }
    default:
      return std::nullopt;
  }
}

BuiltFile Build(const Model& m) {
  GgufBuilder b;
  for (const auto& [key, value] : m.kvs) b.AddKv(key, value);
  if (m.alignment) b.AddAlignmentKv(*m.alignment);
  for (const Tensor& t : m.tensors) {
    TensorOptions options = t.lies;
    if (!options.byte_size && !options.written_dims) {
      if (std::optional<std::vector<uint8_t>> data = TensorData(t)) options.data = std::move(*data);
    }
    b.AddTensor(t.name, t.dims, t.type, options);
  }
  return b.Build();
}

// --- Mutations. Each returns what it did (for mutants.jsonl), or "" when it
// did not apply to this model. ---

class Mutator {
 public:
  Mutator(Model& m, uint64_t seed) : m_(m), rng_(seed) {}

  std::string MutateOnce() {
    switch (Rand(20)) {
      case 0: case 1: case 2: return HyperparameterValue();
      case 3: return Rand(2) ? FloatHyperparameter() : StringHyperparameter();
      case 4: case 5: return Experts();
      case 6: case 7: return PerLayerArray();
      case 8: return KeyType();
      case 9: return RemoveKv();
      case 10: case 11: return TensorShape();
      case 12: return TensorType();
      case 13: return TensorListChange();
      case 14: return TensorLayoutLie();
      case 15: return VocabArrays();
      case 16: return TokenStrings();
      case 17: return SpecialTokens();
      case 18: return TokenizerModel();
      default: return Rand(2) ? Architecture() : Alignment();
    }
  }

 private:
  uint64_t Rand(uint64_t n) { return n == 0 ? 0 : rng_() % n; }
  template <typename T>
  const T& Pick(const std::vector<T>& v) { return v[Rand(v.size())]; }

  std::string Arch() {
    const GgufValue* a = m_.Find("general.architecture");
    return a != nullptr && a->encoding == GgufValue::Encoding::kString ? a->str : "llama";
  }
  std::string ArchKey(const std::string& suffix) { return absl::StrCat(Arch(), ".", suffix); }

  // The values that break size arithmetic: zero, one, off-by-ones around the
  // current value and the limits loaders use, and the ends of u32/i32.
  uint64_t InterestingCount(uint64_t current) {
    static constexpr uint64_t kValues[] = {0, 1, 2, 3, 7, 31, 33, 255, 256, 257, 511, 512, 513, 4096, 65535, 65536,
                                           0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF};
    switch (Rand(4)) {
      case 0: return current + 1;
      case 1: return current == 0 ? 0 : current - 1;
      case 2: return Rand(2) ? current * 2 : current / 2;
      default: return kValues[Rand(std::size(kValues))];
    }
  }

  std::string HyperparameterValue() {
    static const std::vector<std::string> kKeys = {
        "context_length", "embedding_length", "block_count", "feed_forward_length", "attention.head_count",
        "attention.head_count_kv", "rope.dimension_count", "vocab_size", "attention.key_length",
        "attention.value_length", "attention.sliding_window", "expert_count", "expert_used_count",
        "expert_shared_count", "expert_feed_forward_length", "leading_dense_block_count",
        "rope.scaling.original_context_length", "attention.layer_norm_rms_epsilon", "n_deepstack_layers",
        "nextn_predict_layers", "embedding_length_per_layer_input", "attention.shared_kv_layers",
        "full_attention_interval", "attention.q_lora_rank", "attention.kv_lora_rank"};
    const std::string key = ArchKey(Pick(kKeys));
    const GgufValue* old = m_.Find(key);
    const uint64_t current = old != nullptr && old->encoding == GgufValue::Encoding::kScalar ? old->scalar_bits : 0;
    const uint64_t v = InterestingCount(current);
    m_.Set(key, GgufValue::U32(static_cast<uint32_t>(v)));
    return absl::StrCat(key, "=u32:", static_cast<uint32_t>(v));
  }

  std::string FloatHyperparameter() {
    static const std::vector<std::string> kKeys = {
        "attention.layer_norm_rms_epsilon", "rope.freq_base", "rope.scaling.factor", "attention.scale",
        "logit_scale", "embedding_scale", "residual_scale", "rope.freq_base_swa", "attn_logit_softcapping",
        "final_logit_softcapping", "expert_weights_scale", "attention.clamp_kqv"};
    static const std::vector<float> kValues = {0.0f, -1.0f, 1e-30f, 1e30f, NAN, INFINITY, -INFINITY, 0.5f, 1.0f};
    const std::string key = ArchKey(Pick(kKeys));
    const float v = Pick(kValues);
    m_.Set(key, GgufValue::F32(v));
    return absl::StrCat(key, "=f32:", v);
  }

  // Hyperparameters that name a variant: an unknown name is where loaders
  // fall through to a default, a throw or an assert.
  std::string StringHyperparameter() {
    static const std::vector<std::pair<std::string, std::vector<std::string>>> kKeys = {
        {"rope.scaling.type", {"none", "linear", "yarn", "longrope", "su", "dynamic", "", "YARN", "linear "}},
        {"hidden_activation", {"gelu", "silu", "swiglu", "geglu", "", "unknown"}},
        {"pooling_type", {"mean", "cls", ""}},
    };
    const auto& [suffix, values] = Pick(kKeys);
    const std::string key = ArchKey(suffix);
    const std::string& v = Pick(values);
    m_.Set(key, GgufValue::Str(v));
    return absl::StrCat(key, "='", v, "'");
  }

  // Mixture of experts: counts alone (llama.cpp checks them in load_hparams,
  // before any tensor), or counts with expert tensors of that many experts.
  std::string Experts() {
    static constexpr uint32_t kCounts[] = {0, 1, 2, 4, 8, 16, 64, 256, 257, 512, 0x80000000};
    const uint32_t n = kCounts[Rand(std::size(kCounts))];
    uint32_t used;
    switch (Rand(6)) {
      case 0: used = 0; break;
      case 1: used = 1; break;
      case 2: used = n; break;
      case 3: used = n + 1; break;
      case 4: used = n == 0 ? 2 : n / 2; break;
      default: used = static_cast<uint32_t>(InterestingCount(2)); break;
    }
    std::string what = absl::StrCat("expert_count=", n, ",expert_used_count=", used);
    if (Rand(4) != 0) m_.Set(ArchKey("expert_count"), GgufValue::U32(n));
    else what += "(expert_count absent)";
    if (Rand(6) != 0) m_.Set(ArchKey("expert_used_count"), GgufValue::U32(used));
    else what += "(expert_used_count absent)";
    if (Rand(4) == 0) {  // expert groups (DeepSeek-V3 style routing)
      const uint32_t groups = static_cast<uint32_t>(Rand(2) ? InterestingCount(n / 2) : Rand(5));
      const uint32_t groups_used = static_cast<uint32_t>(Rand(2) ? InterestingCount(groups / 2) : Rand(3));
      m_.Set(ArchKey("expert_group_count"), GgufValue::U32(groups));
      m_.Set(ArchKey("expert_group_used_count"), GgufValue::U32(groups_used));
      absl::StrAppend(&what, ",expert_group_count=", groups, ",expert_group_used_count=", groups_used);
    }
    if (n == 0 || n > 16 || Rand(3) == 0) return what;
    // Replace each layer's FFN by n experts and a router.
    std::vector<Tensor> kept;
    for (Tensor& t : m_.tensors) {
      if (t.name.find(".ffn_gate.") == std::string::npos && t.name.find(".ffn_up.") == std::string::npos &&
          t.name.find(".ffn_down.") == std::string::npos) {
        kept.push_back(std::move(t));
      }
    }
    m_.tensors = std::move(kept);
    for (uint64_t i = 0; i < kLayers; ++i) {
      const std::string blk = absl::StrCat("blk.", i, ".");
      m_.tensors.push_back({blk + "ffn_gate_inp.weight", {kEmbd, n}, kF32, {}});
      m_.tensors.push_back({blk + "ffn_gate_exps.weight", {kEmbd, kFf, n}, kQ8_0, {}});
      m_.tensors.push_back({blk + "ffn_up_exps.weight", {kEmbd, kFf, n}, kQ8_0, {}});
      m_.tensors.push_back({blk + "ffn_down_exps.weight", {kFf, kEmbd, n}, kQ8_0, {}});
    }
    return what + ",expert tensors";
  }

  // A per-layer hyperparameter as an array (llama.cpp's get_key_or_arr):
  // of the right length or not, with one layer's value bent.
  std::string PerLayerArray() {
    static const std::vector<std::pair<std::string, uint32_t>> kKeys = {
        {"attention.head_count_kv", kKvHeads}, {"attention.head_count", kHeads}, {"feed_forward_length", kFf},
        {"attention.sliding_window_pattern", 1}, {"swin_norm", 1}};
    const auto& [suffix, base] = Pick(kKeys);
    uint64_t n = kLayers;
    switch (Rand(6)) {
      case 0: n = 0; break;
      case 1: n = kLayers - 1; break;
      case 2: n = kLayers + 1; break;
      case 3: n = 513; break;
      default: break;
    }
    std::vector<uint64_t> values(n, base);
    if (n > 0 && Rand(4) != 0) values[Rand(n)] = InterestingCount(base);
    const std::string key = ArchKey(suffix);
    std::string elem;
    std::vector<GgufValue> elems;
    ValueType type;
    switch (Rand(6)) {
      case 0: type = ValueType::kInt32; elem = "i32"; break;
      case 1: type = ValueType::kUint64; elem = "u64"; break;
      case 2: type = ValueType::kBool; elem = "bool"; break;
      case 3: type = ValueType::kFloat32; elem = "f32"; break;
      default: type = ValueType::kUint32; elem = "u32"; break;
    }
    for (uint64_t v : values) {
      switch (type) {
        case ValueType::kInt32: elems.push_back(GgufValue::I32(static_cast<int32_t>(v))); break;
        case ValueType::kUint64: elems.push_back(GgufValue::U64(v)); break;
        case ValueType::kBool: elems.push_back(GgufValue::Bool(v != 0)); break;
        case ValueType::kFloat32: elems.push_back(GgufValue::F32(static_cast<float>(v))); break;
        default: elems.push_back(GgufValue::U32(static_cast<uint32_t>(v))); break;
      }
    }
    m_.Set(key, GgufValue::Array(type, std::move(elems)));
    std::string shown;
    for (size_t i = 0; i < values.size() && i < 4; ++i) absl::StrAppend(&shown, i ? "," : "", values[i]);
    return absl::StrCat(key, "=", elem, "[", n, "]{", shown, n > 4 ? ",..." : "", "}");
  }

  // A key's value re-encoded as another type: a count as i32/u64/f32/string,
  // a string as a number, an array with another element type (llama.cpp
  // reads some arrays' data by the element type it expects).
  std::string KeyType() {
    auto& [key, v] = m_.kvs[Rand(m_.kvs.size())];
    std::string what = absl::StrCat(key, ":");
    switch (v.encoding) {
      case GgufValue::Encoding::kScalar: {
        const uint64_t x = v.scalar_bits;
        switch (Rand(9)) {
          case 0: v = GgufValue::I32(static_cast<int32_t>(x)); return what + "i32";
          case 1: v = GgufValue::U64(x); return what + "u64";
          case 2: v = GgufValue::I64(static_cast<int64_t>(x)); return what + "i64";
          case 3: v = GgufValue::U16(static_cast<uint16_t>(x)); return what + "u16";
          case 4: v = GgufValue::U8(static_cast<uint8_t>(x)); return what + "u8";
          case 5: v = GgufValue::F32(static_cast<float>(x)); return what + "f32";
          case 6: v = GgufValue::Bool(x != 0); return what + "bool";
          case 7: v = GgufValue::Str(absl::StrCat(x)); return what + "string";
          default: v = GgufValue::U32Array({static_cast<uint32_t>(x)}); return what + "u32[1]";
        }
      }
      case GgufValue::Encoding::kString:
        switch (Rand(3)) {
          case 0: v = GgufValue::U32(static_cast<uint32_t>(v.str.size())); return what + "u32";
          case 1: v = GgufValue::StrArray({v.str}); return what + "string[1]";
          default: v = GgufValue::Array(ValueType::kUint8, {}); return what + "u8[0]";
        }
      case GgufValue::Encoding::kArray: {
        // Same count, other element type: the narrower-type class of
        // llama.cpp #26690 (scores or token types read as f32/i32).
        static constexpr ValueType kTypes[] = {ValueType::kUint8, ValueType::kInt8, ValueType::kUint16,
                                               ValueType::kInt16, ValueType::kUint32, ValueType::kInt32,
                                               ValueType::kFloat32, ValueType::kFloat64, ValueType::kUint64,
                                               ValueType::kBool, ValueType::kString};
        const ValueType t = kTypes[Rand(std::size(kTypes))];
        std::vector<GgufValue> elems;
        for (size_t i = 0; i < v.elems.size(); ++i) {
          switch (t) {
            case ValueType::kUint8: elems.push_back(GgufValue::U8(static_cast<uint8_t>(i))); break;
            case ValueType::kInt8: elems.push_back(GgufValue::I8(static_cast<int8_t>(i))); break;
            case ValueType::kUint16: elems.push_back(GgufValue::U16(static_cast<uint16_t>(i))); break;
            case ValueType::kInt16: elems.push_back(GgufValue::I16(static_cast<int16_t>(i))); break;
            case ValueType::kUint32: elems.push_back(GgufValue::U32(static_cast<uint32_t>(i))); break;
            case ValueType::kInt32: elems.push_back(GgufValue::I32(static_cast<int32_t>(i % 7))); break;
            case ValueType::kFloat32: elems.push_back(GgufValue::F32(-static_cast<float>(i))); break;
            case ValueType::kFloat64: elems.push_back(GgufValue::F64(-static_cast<double>(i))); break;
            case ValueType::kUint64: elems.push_back(GgufValue::U64(i)); break;
            case ValueType::kBool: elems.push_back(GgufValue::Bool(i % 2 != 0)); break;
            default: elems.push_back(GgufValue::Str(absl::StrCat("t", i))); break;
          }
        }
        const size_t n = elems.size();
        v = GgufValue::Array(t, std::move(elems));
        return absl::StrCat(what, "array of type ", static_cast<uint32_t>(t), "[", n, "]");
      }
      default:
        return "";
    }
  }

  std::string RemoveKv() {
    const size_t i = Rand(m_.kvs.size());
    std::string what = absl::StrCat("remove ", m_.kvs[i].first);
    m_.kvs.erase(m_.kvs.begin() + static_cast<std::ptrdiff_t>(i));
    return what;
  }

  std::string TensorShape() {
    Tensor& t = m_.tensors[Rand(m_.tensors.size())];
    std::vector<uint64_t> dims = t.dims;
    std::string what = absl::StrCat(t.name, " dims");
    switch (Rand(5)) {
      case 0: dims.push_back(Rand(2) ? 1 : 2); break;
      case 1: if (dims.size() > 1) dims.pop_back(); break;
      case 2: if (dims.size() > 1) std::swap(dims[0], dims[1]); break;
      default: {
        static constexpr uint64_t kHuge[] = {uint64_t{1} << 31, uint64_t{1} << 32, (uint64_t{1} << 32) + 32,
                                             uint64_t{1} << 40, uint64_t{1} << 62, 0x7FFFFFFFFFFFFFFF,
                                             0x8000000000000000, 0xFFFFFFFFFFFFFFFF};
        uint64_t& d = dims[Rand(dims.size())];
        d = Rand(3) == 0 ? kHuge[Rand(std::size(kHuge))] : InterestingCount(d);
        break;
      }
    }
    for (uint64_t d : dims) absl::StrAppend(&what, " ", d);
    if (Elements(dims)) {
      t.dims = std::move(dims);
    } else {
      t.lies.written_dims = std::move(dims);  // too big to materialise: the header lies
      what += " (written only)";
    }
    return what;
  }

  std::string TensorType() {
    Tensor& t = m_.tensors[Rand(m_.tensors.size())];
    static constexpr uint32_t kTypes[] = {0, 1, 2, 3, 6, 7, 8, 9, 10, 12, 14, 15, 16, 20, 24, 26, 27, 28, 30,
                                          34, 39, 40, 41, 42, 4, 31, 36, 43, 255, 0x80000000};
    t.type = kTypes[Rand(std::size(kTypes))];
    return absl::StrCat(t.name, " type ", t.type);
  }

  // Tensors dropped, repeated, renamed or added: the loader counts them and
  // looks each one up by name.
  std::string TensorListChange() {
    const size_t i = Rand(m_.tensors.size());
    const std::string name = m_.tensors[i].name;
    switch (Rand(5)) {
      case 0:
        m_.tensors.erase(m_.tensors.begin() + static_cast<std::ptrdiff_t>(i));
        return absl::StrCat("remove tensor ", name);
      case 1:
        m_.tensors.push_back(m_.tensors[i]);
        return absl::StrCat("duplicate tensor ", name);
      case 2: {
        static const std::vector<std::string> kNames = {"blk.2.attn_q.weight", "blk.99.ffn_up.weight",
                                                        "output.weight", "rope_freqs.weight", "", "blk.-1.attn_k.weight",
                                                        "blk.4294967296.attn_norm.weight", "token_embd.weight"};
        m_.tensors[i].name = Pick(kNames);
        return absl::StrCat("rename tensor ", name, " to '", m_.tensors[i].name, "'");
      }
      case 3: {
        static const std::vector<Tensor> kExtra = {
            {"rope_freqs.weight", {kHeadDim / 2}, kF32, {}},
            {"blk.0.attn_q.bias", {kEmbd}, kF32, {}},
            {"blk.1.attn_output.bias", {kEmbd}, kF32, {}},
            {"blk.0.ffn_down.bias", {kEmbd}, kF32, {}},
            {"rope_freqs.weight", {kHeadDim}, kF32, {}},
            {"blk.0.attn_q_norm.weight", {kHeadDim}, kF32, {}},
            {"unknown.weight", {4}, kF32, {}},
        };
        m_.tensors.push_back(Pick(kExtra));
        return absl::StrCat("add tensor ", m_.tensors.back().name);
      }
      default:
        std::swap(m_.tensors[i], m_.tensors[Rand(m_.tensors.size())]);
        return absl::StrCat("reorder tensor ", name);
    }
  }

  // The offset field or the data size lies: tensors overlap, leave gaps,
  // start misaligned or run past the end.
  std::string TensorLayoutLie() {
    Tensor& t = m_.tensors[Rand(m_.tensors.size())];
    static constexpr uint64_t kOffsets[] = {0, 1, 16, 32, 4096, uint64_t{1} << 20, uint64_t{1} << 32,
                                            0xFFFFFFFFFFFFFFE0};
    switch (Rand(3)) {
      case 0:
        t.lies.offset = kOffsets[Rand(std::size(kOffsets))];
        return absl::StrCat(t.name, " offset ", *t.lies.offset);
      case 1:
        t.lies.byte_size = Rand(2) ? 0 : 1 + Rand(64);
        return absl::StrCat(t.name, " data bytes ", *t.lies.byte_size);
      default:
        t.lies.n_dims = static_cast<uint32_t>(Rand(2) ? 0 : 5 + Rand(4));
        return absl::StrCat(t.name, " n_dims ", *t.lies.n_dims);
    }
  }

  // tokens, scores and token_type out of step, and token types outside 1..6.
  std::string VocabArrays() {
    static const std::vector<std::string> kKeys = {"tokenizer.ggml.tokens", "tokenizer.ggml.scores",
                                                   "tokenizer.ggml.token_type"};
    const std::string key = Pick(kKeys);
    GgufValue* v = m_.Find(key);
    if (v == nullptr || v->encoding != GgufValue::Encoding::kArray) return "";
    if (key == "tokenizer.ggml.token_type" && Rand(2) && !v->elems.empty()) {
      static constexpr int32_t kTypes[] = {0, 7, -1, 1 << 20, 6, 3, 4, 5};
      const size_t i = Rand(v->elems.size());
      const int32_t t = kTypes[Rand(std::size(kTypes))];
      v->elems[i] = GgufValue::I32(t);
      return absl::StrCat("token_type[", i, "]=", t);
    }
    const size_t n = v->elems.size();
    size_t to;
    switch (Rand(4)) {
      case 0: to = 0; break;
      case 1: to = n / 2; break;
      case 2: to = n + 1 + Rand(8); break;
      default: to = n - 1; break;
    }
    while (v->elems.size() > to) v->elems.pop_back();
    while (v->elems.size() < to) v->elems.push_back(v->elems.empty() ? GgufValue::U32(0) : v->elems.back());
    return absl::StrCat(key, " length ", to);
  }

  std::string TokenStrings() {
    GgufValue* v = m_.Find("tokenizer.ggml.tokens");
    if (v == nullptr || v->encoding != GgufValue::Encoding::kArray || v->elems.empty()) return "";
    static const std::vector<std::string> kTexts = {
        "", "<0x-1>", "<0xZZ>", "<0x>", "<0x1>", "<0x100>", "<0x0A", "<s>", "<unk>", "\xFF\xFE",
        std::string("a\0b", 3), std::string(1024, 'x'), "\xE2\x96", "<|im_start|>", "<0xFFFFFFFF>"};
    // The byte tokens (3..258) are where the SPM loader parses text.
    const size_t i = Rand(2) ? 3 + Rand(256) : Rand(v->elems.size());
    if (i >= v->elems.size()) return "";
    const std::string& text = Pick(kTexts);
    v->elems[i] = GgufValue::Str(text);
    return absl::StrCat("token[", i, "]='", text.size() > 16 ? absl::StrCat(text.size(), " bytes") : text, "'");
  }

  std::string SpecialTokens() {
    static const std::vector<std::string> kIds = {"bos", "eos", "unknown", "seperator", "padding", "cls",
                                                  "mask", "eot", "eom", "fim_pre", "fim_suf", "fim_mid",
                                                  "fim_pad", "fim_rep", "fim_sep"};
    const std::string key = absl::StrCat("tokenizer.ggml.", Pick(kIds), "_token_id");
    const uint64_t n_vocab = BaseTokens().size();
    static constexpr uint64_t kFixed[] = {0, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF};
    const uint64_t id = Rand(2) ? n_vocab - 1 + Rand(3) : kFixed[Rand(std::size(kFixed))];
    switch (Rand(4)) {
      case 0:
        m_.Set(key, GgufValue::I32(static_cast<int32_t>(id)));
        return absl::StrCat(key, "=i32:", static_cast<int32_t>(id));
      case 1:
        m_.Set(key, GgufValue::U64(id));
        return absl::StrCat(key, "=u64:", id);
      default:
        m_.Set(key, GgufValue::U32(static_cast<uint32_t>(id)));
        return absl::StrCat(key, "=u32:", static_cast<uint32_t>(id));
    }
  }

  // Another tokenizer over the same arrays: each one reads its own keys
  // (merges for BPE, a precompiled charsmap for T5's UGM, and so on).
  std::string TokenizerModel() {
    static const std::vector<std::string> kModels = {"gpt2", "bert", "t5", "rwkv", "plamo2", "none", "no_vocab",
                                                     "", "llama ", "gemma4"};
    const std::string model = Pick(kModels);
    m_.Set("tokenizer.ggml.model", GgufValue::Str(model));
    std::string what = absl::StrCat("tokenizer.ggml.model='", model, "'");
    switch (Rand(4)) {
      case 0: {
        static const std::vector<std::string> kMerges = {"\xE2\x96\x81 t", "h e", "ll o", "a", "", " x", "x y"};
        std::vector<std::string> merges;
        for (uint64_t k = 1 + Rand(3); k > 0; --k) merges.push_back(Pick(kMerges));
        m_.Set("tokenizer.ggml.merges", GgufValue::StrArray(merges));
        return what + ", merges";
      }
      case 1: {
        std::vector<uint8_t> map(Rand(2) ? Rand(16) : 64 + Rand(256));
        for (uint8_t& b : map) b = static_cast<uint8_t>(rng_());
        if (map.size() >= 4 && Rand(2)) {  // a plausible blob size prefix, then too few bytes
          const uint32_t claimed = static_cast<uint32_t>(Rand(2) ? map.size() : 0xFFFFFFF0u);
          std::memcpy(map.data(), &claimed, 4);
        }
        m_.Set("tokenizer.ggml.precompiled_charsmap", GgufValue::U8Array(map));
        return absl::StrCat(what, ", precompiled_charsmap ", map.size(), " bytes");
      }
      case 2: {
        static const std::vector<std::string> kPre = {"default", "llama3", "qwen2", "gpt-4o", "deepseek-llm",
                                                      "no-such-pre", "", "tekken", "smollm"};
        const std::string pre = Pick(kPre);
        m_.Set("tokenizer.ggml.pre", GgufValue::Str(pre));
        return absl::StrCat(what, ", pre='", pre, "'");
      }
      default:
        return what;
    }
  }

  // The same keys under another architecture's prefix: that architecture's
  // hyperparameter loader runs on them before any tensor is looked up.
  std::string Architecture() {
    static const std::vector<std::string> kArchs = {
        "llama4", "deci", "falcon", "grok", "gpt2", "gptneox", "mpt", "baichuan", "starcoder", "bert",
        "nomic-bert", "bloom", "stablelm", "qwen", "qwen2", "qwen2moe", "qwen3", "qwen3moe", "qwen3next",
        "phi2", "phi3", "phimoe", "plamo2", "minicpm", "minicpm3", "gemma", "gemma2", "gemma3", "gemma3n",
        "gemma4", "starcoder2", "mamba", "mamba2", "jamba", "falcon-h1", "command-r", "cohere2", "dbrx",
        "olmo2", "olmoe", "openelm", "arctic", "deepseek", "deepseek2", "chatglm", "glm4", "glm4moe", "bitnet",
        "t5", "t5encoder", "jais", "nemotron", "nemotron_h", "exaone", "exaone4", "rwkv6", "rwkv7", "granite",
        "granitemoe", "granitehybrid", "chameleon", "wavtokenizer-dec", "bailingmoe", "dots1", "arcee",
        "ernie4_5", "ernie4_5-moe", "hunyuan-moe", "smollm3", "gpt-oss", "lfm2", "lfm2moe", "llada",
        "seed_oss", "grovemoe", "apertus", "minimax-m2", "mistral3", "kimi-linear", "clip", "unknown", "LLaMA"};
    const std::string old = Arch();
    const std::string arch = Pick(kArchs);
    for (auto& [key, value] : m_.kvs) {
      if (key.size() > old.size() && key.compare(0, old.size() + 1, old + ".") == 0) {
        key = arch + key.substr(old.size());
      }
    }
    m_.Set("general.architecture", GgufValue::Str(arch));
    return absl::StrCat("architecture ", arch);
  }

  std::string Alignment() {
    static constexpr uint32_t kAlignments[] = {1, 2, 8, 16, 64, 128, 4096, 3, 24, 48};
    m_.alignment = kAlignments[Rand(std::size(kAlignments))];
    return absl::StrCat("general.alignment=", *m_.alignment);
  }

  Model& m_;
  std::mt19937_64 rng_;
};

// JSON string escaping for the descriptions (mutations quote file bytes).
std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

bool WriteBytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

// One mutant: 1 to 3 model-level mutations, then in a quarter of the cases
// one byte-level structure-aware mutation of the written file.
std::vector<uint8_t> MakeMutant(uint64_t seed, std::vector<std::string>& what) {
  Model m = BaseModel();
  Mutator mutator(m, seed);
  std::mt19937_64 rng(seed ^ 0x6f7261636c65ull);  // "oracle"
  const uint64_t r = rng() % 20;
  const int wanted = r < 12 ? 1 : r < 17 ? 2 : 3;
  for (int attempt = 0; attempt < 8 && static_cast<int>(what.size()) < wanted; ++attempt) {
    std::string w = mutator.MutateOnce();
    if (!w.empty()) what.push_back(std::move(w));
  }
  std::vector<uint8_t> bytes = Build(m).bytes;
  if (rng() % 4 == 0) {
    const size_t size = bytes.size();
    bytes.resize(size + 4096);
    const size_t n = fuzz::MutateGguf(bytes.data(), size, bytes.size(), static_cast<unsigned>(rng()));
    bytes.resize(n != 0 ? n : size);
    what.push_back(n != 0 ? "byte-level mutation (fuzz/gguf_mutator)" : "byte-level mutation (none applied)");
  }
  return bytes;
}

int Main(int argc, char** argv) {
  if (argc != 2 && argc != 4) {
    std::fprintf(stderr, "usage: %s OUT_DIR [FIRST_SEED COUNT]\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  uint64_t first = 0, count = 0;
  if (argc == 4) {
    char* end = nullptr;
    first = std::strtoull(argv[2], &end, 10);
    if (*end != '\0') return 2;
    count = std::strtoull(argv[3], &end, 10);
    if (*end != '\0') return 2;
  }
  if (!WriteBytes(dir + "/base.gguf", Build(BaseModel()).bytes)) {
    std::fprintf(stderr, "oracle_mutants: cannot write %s/base.gguf\n", dir.c_str());
    return 3;
  }
  std::ofstream index(dir + "/mutants.jsonl", std::ios::trunc);
  index << "{\"file\":\"base.gguf\",\"mutations\":[]}\n";
  for (uint64_t seed = first; seed < first + count; ++seed) {
    std::vector<std::string> what;
    const std::vector<uint8_t> bytes = MakeMutant(seed, what);
    const std::string name = absl::StrCat("m", seed, ".gguf");
    if (!WriteBytes(dir + "/" + name, bytes)) {
      std::fprintf(stderr, "oracle_mutants: cannot write %s/%s\n", dir.c_str(), name.c_str());
      return 3;
    }
    index << "{\"file\":" << JsonString(name) << ",\"seed\":" << seed << ",\"mutations\":[";
    for (size_t i = 0; i < what.size(); ++i) index << (i ? "," : "") << JsonString(what[i]);
    index << "]}\n";
  }
  return index ? 0 : 3;
}

}  // namespace
}  // namespace ggufguard::oracle

int main(int argc, char** argv) { return ggufguard::oracle::Main(argc, argv); }
