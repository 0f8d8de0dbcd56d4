#include "ggufguard/rules/known_keys.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "ggufguard/base/sv.h"

namespace ggufguard {
namespace {

constexpr TypeSet kU8 = TypeBit(ValueType::kUint8);
constexpr TypeSet kI8 = TypeBit(ValueType::kInt8);
constexpr TypeSet kU16 = TypeBit(ValueType::kUint16);
constexpr TypeSet kU32 = TypeBit(ValueType::kUint32);
constexpr TypeSet kI32 = TypeBit(ValueType::kInt32);
constexpr TypeSet kF32 = TypeBit(ValueType::kFloat32);
constexpr TypeSet kBool = TypeBit(ValueType::kBool);
constexpr TypeSet kStr = TypeBit(ValueType::kString);
// llama-quantize records its importance matrix's counts through integer
// overrides; their width has changed between versions.
constexpr TypeSet kInt = TypeBit(ValueType::kUint8) | TypeBit(ValueType::kInt8) | TypeBit(ValueType::kUint16) |
                         TypeBit(ValueType::kInt16) | kU32 | kI32 | TypeBit(ValueType::kUint64) |
                         TypeBit(ValueType::kInt64);
// general.sampling.* (recommended sampler settings) mixes ints, floats and a
// string, and gguf-py's types for them have changed: any scalar.
constexpr TypeSet kAnyScalar = static_cast<TypeSet>(((1u << kValueTypeCount) - 1) & ~TypeBit(ValueType::kArray));

// Whole keys, sorted by bytes for binary search. "Required type" is what
// llama.cpp's get_key enforces (exact type; a special token id of another
// type trips GGML_ASSERT in gguf_get_val_u32) or what llama.cpp reads the
// array's data as without checking (scores as float, token_type as int32).
// Generated sorted; the static_assert below keeps it so.
constexpr KnownKey kGeneralKeys[] = {
    {"adapter.lora.alpha", kF32, 0},
    {"adapter.type", kStr, 0},
    {"general.alignment", kU32, 0},
    {"general.architecture", kStr, 0},
    {"general.author", kStr, 0},
    {"general.base_model.count", kU32, 0},
    {"general.basename", kStr, 0},
    {"general.dataset.count", kU32, 0},
    {"general.datasets", 0, kStr},
    {"general.description", kStr, 0},
    {"general.doi", kStr, 0},
    {"general.file_type", kU32, 0},
    {"general.finetune", kStr, 0},
    {"general.languages", 0, kStr},
    {"general.license", kStr, 0},
    {"general.license.link", kStr, 0},
    {"general.license.name", kStr, 0},
    {"general.name", kStr, 0},
    {"general.organization", kStr, 0},
    {"general.quantization_version", kU32, 0},
    {"general.quantized_by", kStr, 0},
    {"general.repo_url", kStr, 0},
    {"general.size_label", kStr, 0},
    {"general.source.doi", kStr, 0},
    {"general.source.huggingface.repository", kStr, 0},
    {"general.source.repo_url", kStr, 0},
    {"general.source.url", kStr, 0},
    {"general.source.uuid", kStr, 0},
    {"general.tags", 0, kStr},
    {"general.type", kStr, 0},
    {"general.url", kStr, 0},
    {"general.uuid", kStr, 0},
    {"general.version", kStr, 0},
    {"quantize.imatrix.chunks_count", kInt, 0},
    {"quantize.imatrix.dataset", kStr, 0},
    {"quantize.imatrix.entries_count", kInt, 0},
    {"quantize.imatrix.file", kStr, 0},
    {"split.count", kU16, 0},
    {"split.no", kU16, 0},
    {"split.tensors.count", kI32, 0},
    {"tokenizer.chat_template", kStr, 0},
    {"tokenizer.chat_templates", 0, kStr},
    {"tokenizer.ggml.add_bos_token", kBool, 0},
    {"tokenizer.ggml.add_eos_token", kBool, 0},
    {"tokenizer.ggml.add_sep_token", kBool, 0},
    {"tokenizer.ggml.add_space_prefix", kBool, 0},
    {"tokenizer.ggml.bos_token_id", kU32, 0},
    {"tokenizer.ggml.cls_token_id", kU32, 0},
    {"tokenizer.ggml.eom_token_id", kU32, 0},
    {"tokenizer.ggml.eos_token_id", kU32, 0},
    {"tokenizer.ggml.eot_token_id", kU32, 0},
    {"tokenizer.ggml.fim_mid_token_id", kU32, 0},
    {"tokenizer.ggml.fim_pad_token_id", kU32, 0},
    {"tokenizer.ggml.fim_pre_token_id", kU32, 0},
    {"tokenizer.ggml.fim_rep_token_id", kU32, 0},
    {"tokenizer.ggml.fim_sep_token_id", kU32, 0},
    {"tokenizer.ggml.fim_suf_token_id", kU32, 0},
    {"tokenizer.ggml.mask_token_id", kU32, 0},
    {"tokenizer.ggml.merges", 0, kStr},
    {"tokenizer.ggml.middle_token_id", kU32, 0},
    {"tokenizer.ggml.model", kStr, 0},
    {"tokenizer.ggml.padding_token_id", kU32, 0},
    {"tokenizer.ggml.pre", kStr, 0},
    {"tokenizer.ggml.precompiled_charsmap", 0, kU8 | kI8},
    {"tokenizer.ggml.prefix_token_id", kU32, 0},
    {"tokenizer.ggml.remove_extra_whitespaces", kBool, 0},
    {"tokenizer.ggml.scores", 0, kF32},
    {"tokenizer.ggml.seperator_token_id", kU32, 0},
    {"tokenizer.ggml.suffix_token_id", kU32, 0},
    {"tokenizer.ggml.token_type", 0, kI32},
    {"tokenizer.ggml.token_type_count", kU32, 0},
    {"tokenizer.ggml.tokens", 0, kStr},
    {"tokenizer.ggml.unknown_token_id", kU32, 0},
    {"tokenizer.huggingface.json", kStr, 0},
    {"tokenizer.rwkv.world", kStr, 0},
};

// Suffixes after "{arch}.", sorted. Per-layer values (feed_forward_length,
// head counts) may be arrays: llama.cpp's get_key_or_arr accepts i32 or u32
// arrays exactly block_count long.
constexpr KnownKey kArchKeys[] = {
    {"attention.causal", kBool, 0},
    {"attention.clamp_kqv", kF32, 0},
    {"attention.group_norm_epsilon", kF32, 0},
    {"attention.group_norm_groups", kU32, 0},
    {"attention.head_count", kU32, kU32 | kI32},
    {"attention.head_count_kv", kU32, kU32 | kI32},
    {"attention.key_length", kU32, 0},
    {"attention.key_length_mla", kU32, 0},
    {"attention.kv_lora_rank", kU32, 0},
    {"attention.layer_norm_epsilon", kF32, 0},
    {"attention.layer_norm_rms_epsilon", kF32, 0},
    {"attention.max_alibi_bias", kF32, 0},
    {"attention.q_lora_rank", kU32, 0},
    {"attention.relative_buckets_count", kU32, 0},
    {"attention.scale", kF32, 0},
    {"attention.sliding_window", kU32, 0},
    {"attention.value_length", kU32, 0},
    {"attention.value_length_mla", kU32, 0},
    {"attn_logit_softcapping", kF32, 0},
    {"block_count", kU32, 0},
    {"context_length", kU32, 0},
    {"decoder_start_token_id", kU32, 0},
    {"embedding_length", kU32, 0},
    {"embedding_scale", kF32, 0},
    {"expert_count", kU32, 0},
    {"expert_feed_forward_length", kU32, 0},
    {"expert_gating_func", kU32, 0},
    {"expert_shared_count", kU32, 0},
    {"expert_shared_feed_forward_length", kU32, 0},
    {"expert_used_count", kU32, 0},
    {"expert_weights_norm", kBool, 0},
    {"expert_weights_scale", kF32, 0},
    {"feed_forward_length", kU32, kU32 | kI32},
    {"final_logit_softcapping", kF32, 0},
    {"interleave_moe_layer_step", kU32, 0},
    {"leading_dense_block_count", kU32, 0},
    {"logit_scale", kF32, 0},
    {"pooling_type", kU32, 0},
    {"rescale_every_n_layers", kU32, 0},
    {"residual_scale", kF32, 0},
    {"rope.dimension_count", kU32, 0},
    {"rope.dimension_sections", 0, kU32 | kI32},
    {"rope.freq_base", kF32, 0},
    {"rope.scale_linear", kF32, 0},
    {"rope.scaling.attn_factor", kF32, 0},
    {"rope.scaling.factor", kF32, 0},
    {"rope.scaling.finetuned", kBool, 0},
    {"rope.scaling.original_context_length", kU32, 0},
    {"rope.scaling.type", kStr, 0},
    {"rope.scaling.yarn_log_multiplier", kF32, 0},
    {"ssm.conv_kernel", kU32, 0},
    {"ssm.dt_b_c_rms", kBool, 0},
    {"ssm.group_count", kU32, 0},
    {"ssm.inner_size", kU32, 0},
    {"ssm.state_size", kU32, 0},
    {"ssm.time_step_rank", kU32, 0},
    {"swin_norm", kBool, 0},
    {"tensor_data_layout", kStr, 0},
    {"time_decay_extra_dim", kU32, 0},
    {"time_mix_extra_dim", kU32, 0},
    {"token_shift_count", kU32, 0},
    {"use_parallel_residual", kBool, 0},
    {"vocab_size", kU32, 0},
    {"wkv.head_size", kU32, 0},
};

// Families of keys with a variable part, matched in order.
constexpr KnownKey kPatternKeys[] = {
    {"general.base_model.{n}.{*}", kStr, 0},
    {"general.dataset.{n}.{*}", kStr, 0},
    {"general.sampling.{*}", kAnyScalar, 0},
    {"tokenizer.chat_template.{*}", kStr, 0},
};

// See IsTransformerArch. Sorted. Names from llama.cpp's LLM_ARCH_NAMES.
constexpr std::string_view kTransformerArchs[] = {
    "arcee",     "baichuan",  "bert",      "bitnet",    "bloom",     "chatglm",   "codeshell", "cohere2",
    "command-r", "dbrx",      "deci",      "deepseek",  "deepseek2", "ernie4_5",  "exaone",    "falcon",
    "gemma",     "gemma2",    "gemma3",    "glm4",      "gpt-oss",   "gpt2",      "gptj",      "gptneox",
    "granite",   "grok",      "internlm2", "jais",      "llama",     "llama4",    "minicpm",   "minicpm3",
    "mpt",       "nemotron",  "nomic-bert", "olmo",     "olmo2",     "orion",     "phi2",      "phi3",
    "plamo",     "qwen",      "qwen2",     "qwen2moe",  "qwen3",     "qwen3moe",  "refact",    "smollm3",
    "stablelm",  "starcoder", "starcoder2", "xverse",
};

template <size_t N>
constexpr bool SortedByName(const KnownKey (&table)[N]) {
  for (size_t i = 1; i < N; ++i) {
    if (!(table[i - 1].name < table[i].name)) return false;
  }
  return true;
}
static_assert(SortedByName(kGeneralKeys) && SortedByName(kArchKeys), "known-key tables must be sorted, no repeats");
static_assert([] {
  for (size_t i = 1; i < std::size(kTransformerArchs); ++i) {
    if (!(kTransformerArchs[i - 1] < kTransformerArchs[i])) return false;
  }
  return true;
}(), "kTransformerArchs must be sorted");

template <size_t N>
const KnownKey* FindIn(const KnownKey (&table)[N], std::string_view name) {
  const KnownKey* it = std::lower_bound(std::begin(table), std::end(table), name,
                                        [](const KnownKey& k, std::string_view n) { return k.name < n; });
  return it != std::end(table) && it->name == name ? it : nullptr;
}

bool IsDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Segment by segment; "{n}" takes one segment of digits, a final "{*}" the
// non-empty rest.
bool MatchPattern(std::string_view pattern, std::string_view key) {
  while (true) {
    size_t pdot = pattern.find('.');
    std::string_view pseg = pattern.substr(0, pdot);
    if (pseg == "{*}") return !key.empty();
    size_t kdot = key.find('.');
    std::string_view kseg = key.substr(0, kdot);
    if (pseg == "{n}" ? !IsDigits(kseg) : pseg != kseg) return false;
    if (pdot == std::string_view::npos || kdot == std::string_view::npos) {
      return pdot == std::string_view::npos && kdot == std::string_view::npos;
    }
    pattern.remove_prefix(pdot + 1);
    key.remove_prefix(kdot + 1);
  }
}

std::string TypeList(TypeSet set) {
  std::string out;
  for (uint32_t t = 0; t < kValueTypeCount; ++t) {
    if (set & (1u << t)) absl::StrAppend(&out, out.empty() ? "" : "/", Sv(ValueTypeName(static_cast<ValueType>(t))));
  }
  return out;
}

}  // namespace

const KnownKey* FindKnownKey(std::string_view key, std::string_view arch) {
  if (const KnownKey* k = FindIn(kGeneralKeys, key)) return k;
  if (!arch.empty() && key.size() > arch.size() + 1 && key.substr(0, arch.size()) == arch &&
      key[arch.size()] == '.') {
    if (const KnownKey* k = FindIn(kArchKeys, key.substr(arch.size() + 1))) return k;
  }
  for (const KnownKey& k : kPatternKeys) {
    if (MatchPattern(k.name, key)) return &k;
  }
  return nullptr;
}

bool AcceptsValue(const KnownKey& k, const Value& v) {
  if (v.type == ValueType::kArray) return (k.elements & TypeBit(v.array.element_type)) != 0;
  return (k.scalar & TypeBit(v.type)) != 0;
}

std::string DescribeTypes(const KnownKey& k) {
  std::string out = TypeList(k.scalar);
  if (k.elements != 0) absl::StrAppend(&out, out.empty() ? "" : " or ", "array of ", TypeList(k.elements));
  return out;
}

bool IsTransformerArch(std::string_view arch) {
  return std::binary_search(std::begin(kTransformerArchs), std::end(kTransformerArchs), arch);
}

KeyIndex::KeyIndex(const GgufHeader& header) {
  first_.reserve(header.kvs.size());
  for (const KeyValue& kv : header.kvs) first_.emplace(CStringKey(kv.key), &kv);
  arch_kv_ = Find("general.architecture");
  if (arch_kv_ != nullptr && arch_kv_->value.type == ValueType::kString) arch_ = arch_kv_->value.AsString();
}

const KeyValue* KeyIndex::Find(std::string_view key) const {
  auto it = first_.find(key);
  return it == first_.end() ? nullptr : it->second;
}

const KeyValue* KeyIndex::FindArch(std::string_view suffix) const {
  // A stack buffer: the rules look up a dozen of these per file.
  std::array<char, 256> buf;
  if (arch_.empty() || arch_.size() + 1 + suffix.size() > buf.size()) return nullptr;
  std::memcpy(buf.data(), arch_.data(), arch_.size());
  buf[arch_.size()] = '.';
  std::memcpy(buf.data() + arch_.size() + 1, suffix.data(), suffix.size());
  return Find(std::string_view(buf.data(), arch_.size() + 1 + suffix.size()));
}

std::optional<uint32_t> KeyIndex::U32(const KeyValue* kv) const {
  if (kv == nullptr || kv->value.type != ValueType::kUint32) return std::nullopt;
  return static_cast<uint32_t>(*kv->value.AsUnsigned());
}

std::optional<uint64_t> VocabularySize(const KeyIndex& keys) {
  const KeyValue* tokens = keys.Find("tokenizer.ggml.tokens");
  if (tokens != nullptr && tokens->value.type == ValueType::kArray) return tokens->value.array.count;
  return keys.U32(keys.FindArch("vocab_size"));
}

}  // namespace ggufguard
