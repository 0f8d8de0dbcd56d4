// 9xxx: resource bombs that pass every structural rule, and the readings of
// colliding keys for the JSON report.
//
// The estimates model what real loaders allocate from the header alone,
// before reading a byte of tensor data; each message gives the estimate so
// that a reviewer can judge it.
#include "ggufguard/rules/loader_rules.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ggufguard/base/checked_math.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/text.h"
#include "ggufguard/rules/rules.h"

namespace ggufguard {
namespace {

// ggml's objects per header item (64-bit): gguf_tensor_info is a ggml_tensor
// (GGML_TENSOR_SIZE 336) plus its offset; gguf_kv holds a std::string key,
// its type and two vectors; each element of a string array becomes a
// std::string (32 bytes before its heap buffer).
constexpr uint64_t kTensorInfoObject = 344;
constexpr uint64_t kKvObject = 88;
constexpr uint64_t kStringObject = 32;
// llama.cpp's vocabulary per token: token_data (std::string, score, attr)
// and a token_to_id hash node holding another std::string, ~128 bytes; per
// merge a bpe_ranks node holding two std::strings, ~128 bytes.
constexpr uint64_t kVocabEntry = 128;
// The KV cache holds F16 K and V.
constexpr uint64_t kKvCacheElement = 2;

// "12345678 bytes (11.8 MiB)"; "more than 2^64 bytes" when saturated.
std::string Bytes(uint64_t n) {
  if (n == UINT64_MAX) return "more than 2^64 bytes";
  constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (n < 1024) return absl::StrCat(n, " bytes");
  double v = static_cast<double>(n);
  int unit = -1;
  while (v >= 1024 && unit < 5) {
    v /= 1024;
    ++unit;
  }
  return absl::StrFormat("%d bytes (%.1f %s)", n, v, kUnits[unit]);
}

// A loader that allocates every tensor before reading it (ggml with
// no_alloc=false, candle, gguf-py's memmap views, custom loaders) reserves
// the declared sizes, whatever the file holds. The layout rules already
// report each tensor out of bounds or overlapping; this gives the total.
}  // namespace

void CheckTensorAllocation(RuleContext& ctx) {
  const uint64_t file_size = ctx.file.size();
  uint64_t total = 0;
  const TensorInfo* crossing = nullptr;  // the tensor that takes the total past the file
  for (const TensorInfo& t : ctx.header.tensors) {
    if (!t.size_known) continue;
    total = SatAdd(total, t.byte_size);
    if (crossing == nullptr && total > file_size) crossing = &t;
  }
  if (crossing == nullptr) return;
  ctx.sink.Add(RuleId::kTensorAllocation, crossing->offset,
               absl::StrCat("the tensors declare ", Bytes(total), " of data in a file of ", Bytes(file_size),
                            " (past the end from tensor '", EscapeForDisplay(crossing->name),
                            "'): a loader that allocates tensors before reading them would reserve that much"));
}

// A per-layer hyperparameter as llama.cpp's get_key_or_arr reads it: a u32
// for every layer, or element `il` of a bool/u32/i32 array exactly n_layer
// long (other shapes are GG4004/GG4010's business: nullopt).
std::optional<uint64_t> PerLayerValue(const KeyValue* kv, uint32_t il, uint32_t n_layer) {
  if (kv == nullptr) return std::nullopt;
  const Value v = kv->value();
  if (v.type == ValueType::kUint32) return v.AsUnsigned();
  if (v.type != ValueType::kArray || v.array.count != n_layer || il >= n_layer) return std::nullopt;
  switch (v.array.element_type) {
    case ValueType::kBool: return v.array.ScalarAt<uint8_t>(il) != 0;
    case ValueType::kUint32:
    case ValueType::kInt32: return v.array.ScalarAt<uint32_t>(il);  // llama.cpp copies i32 bits into u32
    default: return std::nullopt;
  }
}

uint64_t PerLayerOffset(const KeyValue& kv, uint32_t il) {
  const Value v = kv.value();
  if (v.type != ValueType::kArray) return v.offset;
  return v.array.elements_offset + uint64_t{il} * (v.array.element_type == ValueType::kBool ? 1 : 4);
}

LayerHeads HeadsOfLayer(const KeyValue* heads_kv, const KeyValue* kv_heads_kv, uint32_t il, uint32_t n_layer) {
  LayerHeads h;
  h.heads = heads_kv == nullptr ? std::optional<uint64_t>(0) : PerLayerValue(heads_kv, il, n_layer);
  h.kv_heads = kv_heads_kv == nullptr ? h.heads : PerLayerValue(kv_heads_kv, il, n_layer);
  return h;
}

namespace {

// What each architecture's loader does with per-layer head counts: whether
// it shapes K/V per layer (load_tensors: n_embd_k_gqa(i), n_head_kv(i)), and
// whether a 0 there is a layer without attention (load_arch_hparams:
// is_recurrent(il) = n_head_kv(il) == 0, a Mamba, convolution or KDA layer;
// deci: linear attention or none, models/deci.cpp). Their converters write
// such 0s. OpenELM and mimo2/step35 vary the count but have no such layers.
struct PerLayerHeadsArch {
  std::string_view arch;
  bool zero_kv_is_layer_kind;
};
constexpr PerLayerHeadsArch kPerLayerHeadsArchs[] = {
    {"deci", true},         {"granitehybrid", true},  {"jamba", true},   {"kimi-linear", true}, {"lfm2", true},
    {"lfm2moe", true},      {"mimo2", false},         {"nemotron_h", true}, {"nemotron_h_moe", true},
    {"openelm", false},     {"plamo2", true},         {"plamo3", false}, {"step35", false},
};

const PerLayerHeadsArch* FindPerLayerHeadsArch(std::string_view arch) {
  for (const PerLayerHeadsArch& a : kPerLayerHeadsArchs) {
    if (a.arch == arch) return &a;
  }
  return nullptr;
}

}  // namespace

bool KvWidthPerLayer(std::string_view arch) { return FindPerLayerHeadsArch(arch) != nullptr; }

bool ZeroKvHeadsMarkALayerKind(std::string_view arch) {
  const PerLayerHeadsArch* a = FindPerLayerHeadsArch(arch);
  return a != nullptr && a->zero_kv_is_layer_kind;
}

bool IsAdapter(const KeyIndex& keys) {
  const KeyValue* type = keys.Find("general.type");
  return keys.Find("adapter.type") != nullptr ||
         (type != nullptr && type->type() == ValueType::kString && CString(type->value().AsString()) == "adapter");
}

bool ReadsHyperparameters(const GgufHeader& h, const KeyIndex& keys) {
  if (!h.tensors.empty()) return true;
  // split.no and split.count are u16 (GG4004 for another type, GG4015 for
  // values that disagree).
  if (ExactU16(keys.Find("split.count")).value_or(0) > 1 && ExactU16(keys.Find("split.no")).value_or(0) == 0) return true;
  return keys.Find("tokenizer.ggml.model") == nullptr;
}

std::vector<const TensorInfo*> KvTensorsByLayer(const GgufHeader& h, uint32_t n_layer) {
  std::vector<const TensorInfo*> by_layer(n_layer, nullptr);
  for (const TensorInfo& t : h.tensors) {
    std::string_view name = t.name;
    if (name.substr(0, 4) != "blk.") continue;
    name.remove_prefix(4);
    uint64_t il = 0;
    size_t digits = 0;
    while (digits < name.size() && digits < 4 && name[digits] >= '0' && name[digits] <= '9') {
      il = il * 10 + static_cast<uint64_t>(name[digits++] - '0');
    }
    if (digits == 0 || digits == name.size() || name[digits] != '.' || il >= n_layer) continue;
    name.remove_prefix(digits + 1);
    const std::string_view base = name.substr(0, name.find('.'));
    if (base == "attn_k" || base == "attn_v" || base == "attn_qkv" || base == "attn_k_b" || base == "attn_v_b" ||
        base.substr(0, 8) == "attn_kv_") {
      if (by_layer[il] == nullptr) by_layer[il] = &t;
    }
  }
  return by_layer;
}

namespace {

// A full-context KV cache: context_length x (per layer: K + V width) x 2
// bytes, where a layer's width is its head_count_kv heads of embedding_length
// / head_count (or key_length/value_length when given). llama-server with
// n_ctx 0 sizes the cache by the training context, so the file decides it.
// Only for architectures llama.cpp gives a KV cache (ArchInfo::memory):
// hybrids count the layers whose head_count_kv is not 0 (their recurrent
// layers have none); sliding-window layers are counted at full context, an
// upper bound. Recurrent models keep a fixed state per sequence, whatever the
// context: nothing to estimate from the context. Vocab-only files are checked
// too: no real one claims an absurd context.
void CheckKvCache(RuleContext& ctx, const KeyIndex& keys) {
  const ArchInfo* info = keys.arch_info();
  if (info == nullptr || info->kind != ArchKind::kModel ||
      (info->memory != ArchMemory::kKvCache && info->memory != ArchMemory::kHybrid)) {
    return;
  }
  const KeyValue* ctx_kv = keys.FindArch("context_length");
  std::optional<uint32_t> n_ctx = keys.U32(ctx_kv);
  std::optional<uint32_t> n_embd = keys.U32(keys.FindArch("embedding_length"));
  std::optional<uint32_t> n_layer = keys.U32(keys.FindArch("block_count"));
  if (!n_ctx || !n_embd || !n_layer || *n_layer > kLlamaMaxLayers) return;
  const KeyValue* heads_kv = keys.FindArch("attention.head_count");
  const KeyValue* kv_heads_kv = keys.FindArch("attention.head_count_kv");
  std::optional<uint32_t> key_len = keys.U32(keys.FindArch("attention.key_length"));
  std::optional<uint32_t> value_len = keys.U32(keys.FindArch("attention.value_length"));
  uint64_t per_token = 0;  // K + V elements per token, all layers
  for (uint32_t il = 0; il < *n_layer; ++il) {
    const LayerHeads layer = HeadsOfLayer(heads_kv, kv_heads_kv, il, *n_layer);
    const uint64_t heads = layer.heads.value_or(0);
    const uint64_t kv_heads = layer.kv_heads.value_or(heads);
    if (info->memory == ArchMemory::kHybrid && kv_heads == 0) continue;  // a recurrent layer
    auto width = [&](std::optional<uint32_t> head_len) -> uint64_t {
      if (head_len && kv_heads > 0) return SatMul(*head_len, kv_heads);
      if (heads > 0 && kv_heads > 0) return SatMul(*n_embd, kv_heads) / heads;
      return *n_embd;
    };
    per_token = SatAdd(per_token, SatAdd(width(key_len), width(value_len)));
  }
  const uint64_t bytes = SatMul(SatMul(*n_ctx, per_token), kKvCacheElement);
  const uint64_t limit = ctx.policy.limits.max_kv_cache_bytes;
  if (bytes <= limit) return;
  ctx.sink.Add(RuleId::kKvCacheEstimate, ctx_kv->value().offset,
               absl::StrCat("a full-context KV cache needs ", Bytes(bytes), " (context_length ", *n_ctx, " x ",
                            *n_layer, " blocks' K+V width ", per_token,
                            " x 2 bytes), above the policy limit of ", Bytes(limit),
                            ": servers that size the cache by the training context try to allocate it"));
}

void CheckVocabularySize(RuleContext& ctx, const KeyIndex& keys) {
  const uint64_t limit = ctx.policy.limits.max_vocab_size;
  for (std::string_view name : {"tokenizer.ggml.tokens", "tokenizer.ggml.merges"}) {
    const KeyValue* kv = keys.Find(name);
    if (kv == nullptr || kv->type() != ValueType::kArray || kv->value().array.count <= limit) continue;
    const uint64_t n = kv->value().array.count;
    ctx.sink.Add(RuleId::kVocabSizeLimit, kv->value().offset,
                 absl::StrCat("'", Sv(name), "' has ", n, " entries, above the policy limit of ", limit,
                              ": llama.cpp's tables for them take about ", Bytes(SatMul(n, kVocabEntry)),
                              name == "tokenizer.ggml.tokens" ? ", and every output row of logits 4 bytes per token"
                                                              : ""));
  }
}

// ggml's gguf_init_from_file builds one object per tensor info, per KV and
// per string array element, and copies every value: an amplification over
// the header bytes that per-item limits do not bound.
void CheckHeaderMemory(RuleContext& ctx) {
  const GgufHeader& h = ctx.header;
  uint64_t strings = 0;
  for (const KeyValue& kv : h.kvs) {
    if (kv.type() == ValueType::kArray && kv.value().array.element_type == ValueType::kString) {
      strings = SatAdd(strings, kv.value().array.count);
    }
  }
  const uint64_t bytes = SatAdd(SatAdd(SatMul(h.tensors.size(), kTensorInfoObject), SatMul(h.kvs.size(), kKvObject)),
                                SatAdd(SatMul(strings, kStringObject), h.infos_end));
  const uint64_t limit = ctx.policy.limits.max_header_memory_bytes;
  if (bytes <= limit) return;
  ctx.sink.Add(RuleId::kHeaderMemory, 8,
               absl::StrCat("loading the header takes about ", Bytes(bytes), " (", h.tensors.size(), " tensor infos x ",
                            kTensorInfoObject, " + ", h.kvs.size(), " KVs x ", kKvObject, " + ", strings,
                            " strings x ", kStringObject, " + ", h.infos_end,
                            " header bytes), above the policy limit of ", Bytes(limit)));
}

}  // namespace

void CheckResourceUse(RuleContext& ctx, const KeyIndex& keys) {
  CheckKvCache(ctx, keys);
  CheckVocabularySize(ctx, keys);
  CheckHeaderMemory(ctx);
}

std::vector<KeyReadings> FindKeyReadings(const GgufHeader& header, const KeyGroups& groups, size_t max_groups,
                                         size_t max_keys, uint64_t* groups_not_listed) {
  std::vector<KeyReadings> out;
  *groups_not_listed = 0;
  size_t keys_listed = 0;
  std::string scratch;
  if (!groups.AnyShared()) return out;  // no group of two keys or more
  for (size_t first = 0; first < header.kvs.size(); ++first) {
    if (groups.FirstCanonical(first) != first || groups.CanonicalGroupSize(first) < 2) continue;
    if (out.size() == max_groups) {
      ++*groups_not_listed;
      continue;
    }
    KeyReadings g;
    g.name = std::string(CanonicalView(header.kvs[first].key(), &scratch));
    for (uint32_t i : groups.Members(static_cast<uint32_t>(first))) {
      std::string_view key = header.kvs[i].key();
      if (!g.exact && key == g.name) g.exact = i;
      if (!g.c_string && CStringKey(key) == g.name) g.c_string = i;
      g.last_wins = i;
      if (keys_listed < max_keys) {
        g.kvs.push_back(i);
        ++keys_listed;
      } else {
        ++g.keys_suppressed;
      }
    }
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace ggufguard
