// 4004-4017: known keys and their types, general.architecture, the
// hyperparameters llama.cpp demands, the embedding shapes they imply, and the
// quantization, file-type and split metadata. What llama.cpp knows per
// architecture comes from the generated tables behind known_keys.h.
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/text.h"
#include "ggufguard/format/ggml_type.h"
#include "ggufguard/rules/rules.h"

namespace ggufguard {
namespace {

// ggml's GGML_QNT_VERSION: the block layout every quantized type uses today.
constexpr uint64_t kQuantVersion = 2;

std::string KeyName(const KeyValue& kv) { return EscapeForDisplay(kv.key(), 96); }

std::string DescribeValueType(const Value& v) {
  if (v.type != ValueType::kArray) return std::string(ValueTypeName(v.type));
  return absl::StrCat("array of ", Sv(ValueTypeName(v.array.element_type)));
}

void CheckKeyTypes(RuleContext& ctx, const KeyIndex& keys) {
  RuleReporter unknown(ctx, RuleId::kUnknownKey);
  RuleReporter wrong_type(ctx, RuleId::kKnownKeyType);
  for (const KeyValue& kv : ctx.header.kvs) {
    std::string_view key = CStringKey(kv.key());
    if (key.empty()) continue;  // GG3007 or GG3009 already say why
    std::optional<KeyRule> known = FindKeyRule(key, keys.arch(), keys.arch_info());
    if (!known) {
      unknown.Add(kv.offset(), [&] {
        return absl::StrCat("'", KeyName(kv), "' is not a standard key (llama.cpp ", Sv(LlamaCppCommit().substr(0, 12)),
                            "); loaders ignore it");
      });
      continue;
    }
    if (key == "general.alignment") continue;  // GG4001 reports its type
    if (!AcceptsValue(*known, kv.value())) {
      wrong_type.Add(kv.type_offset(), [&] {
        return absl::StrCat("'", KeyName(kv), "' is ", DescribeValueType(kv.value()), "; loaders require ",
                            DescribeTypes(*known));
      });
    }
  }
}

bool IsArchChar(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'; }

// llama-gguf-split and gguf-py write shards 2..N with only the split.*
// keys (the loader reads metadata from shard 1 alone), and tools/imatrix
// writes general.type "imatrix" with no architecture: both are files
// llama.cpp writes and reads without general.architecture.
bool IsLaterShard(const KeyIndex& keys) {
  const KeyValue* no = keys.Find("split.no");
  return ExactU16(no).value_or(0) > 0u;
}

bool NeedsNoArchitecture(const KeyIndex& keys) {
  if (IsLaterShard(keys)) return true;
  const KeyValue* type = keys.Find("general.type");
  return type != nullptr && type->type() == ValueType::kString && type->value().AsString() == "imatrix";
}

// A file no LLM loader is meant for: it names no architecture and has
// neither a vocabulary key nor a key of any architecture llama.cpp knows
// ("llama.context_length"), and no tensor named as llama.cpp names a
// model's ("blk.N.*", "token_embd.*", "output*"). stable-diffusion.cpp's
// converted weights (no metadata) and ggml's examples/gguf output
// ("some.parameter.*", "tensor_N") are such.
bool ClearlyNotAnLlm(const GgufHeader& h) {
  for (const TensorInfo& t : h.tensors) {
    const std::string_view name = t.name;
    if (name.rfind("blk.", 0) == 0 || name.rfind("token_embd.", 0) == 0 || name.rfind("output", 0) == 0) {
      return false;
    }
  }
  // Keys come grouped by their first segment ("k.0000000", "k.0000001"...):
  // one that was just looked up and is no architecture is not looked up
  // again (a million keys cost a million table searches before).
  std::string_view not_an_arch;
  for (const KeyValue& kv : h.kvs) {
    const std::string_view key = CStringKey(kv.key());
    const std::string_view first = key.substr(0, key.find('.'));
    if (first == "tokenizer" || first == "adapter" || first == "split" || first == "imatrix") return false;
    if (first.size() == key.size() || first == not_an_arch) continue;
    if (FindArchInfo(first) != nullptr) return false;
    not_an_arch = first;
  }
  return true;
}

void CheckArchitecture(RuleContext& ctx, const KeyIndex& keys) {
  const GgufHeader& h = ctx.header;
  const KeyValue* kv = keys.arch_kv();
  if (kv == nullptr) {
    // The 24-byte empty file is a valid GGUF; anything with content is a
    // model, adapter or vocabulary, and every loader dispatches on this key.
    if ((!h.kvs.empty() || !h.tensors.empty()) && !NeedsNoArchitecture(keys)) {
      if (ClearlyNotAnLlm(h)) {
        ctx.sink.Add(RuleId::kNotALlamaModel, h.kvs.empty() ? h.tensors[0].offset : h.kvs[0].offset(),
                     "no general.architecture, no tokenizer.* key and no key of an architecture llama.cpp knows: "
                     "not an LLM (stable-diffusion.cpp weights, a ggml example's output?); llama.cpp cannot load "
                     "it, the program that wrote it may; judge it as a GGUF container with --profile gguf");
        return;
      }
      ctx.sink.Add(RuleId::kMissingArchitecture, h.kvs.empty() ? h.tensors[0].offset : h.kvs[0].offset(),
                   "general.architecture is missing: llama.cpp, ollama and candle choose the model code by it "
                   "and refuse the file");
    }
    return;
  }
  if (kv->type() != ValueType::kString) return;  // GG4004
  std::string_view arch = kv->value().AsString();
  if (arch.empty()) {
    ctx.sink.Add(RuleId::kArchitectureName, kv->value().offset, "general.architecture is empty");
    return;
  }
  for (size_t i = 0; i < arch.size(); ++i) {
    if (!IsArchChar(arch[i])) {
      ctx.sink.Add(RuleId::kArchitectureName, kv->value().offset + i,
                   absl::StrCat("general.architecture '", EscapeForDisplay(arch), "' has '",
                                EscapeForDisplay(arch.substr(i, 1)), "' at ", i,
                                ": architecture names are [a-z0-9_-], and keys are built from them"));
      return;
    }
  }
}

struct FloatRange {
  std::string_view suffix;
  double min;
  bool min_inclusive;
  double max;  // exclusive
  std::string_view why;
  bool zero_is_unset = false;  // llama.cpp reads 0 as "not set" (and the saver writes it so)
};

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr FloatRange kFloatRanges[] = {
    {"attention.layer_norm_epsilon", 0, false, 1, "a norm divides by sqrt(var + eps)"},
    {"attention.layer_norm_rms_epsilon", 0, false, 1, "RMS norm divides by sqrt(mean + eps)"},
    {"attention.group_norm_epsilon", 0, false, 1, "a norm divides by sqrt(var + eps)"},
    {"rope.freq_base", 0, false, kInf, "RoPE raises it to fractional powers"},
    {"rope.scaling.factor", 0, false, kInf, "RoPE divides positions by it", true},
    {"rope.scale_linear", 0, false, kInf, "RoPE divides positions by it", true},
    {"attention.clamp_kqv", 0, false, kInf, "activations are clamped to [-x, x]", true},
    {"attention.max_alibi_bias", 0, true, kInf, "ALiBi slopes are 2^(-bias/n)"},
    {"attn_logit_softcapping", 0, false, kInf, "logits are divided by it"},
    {"final_logit_softcapping", 0, false, kInf, "logits are divided by it"},
};

void CheckRanges(RuleContext& ctx, const KeyIndex& keys, bool has_tensors) {
  for (const FloatRange& r : kFloatRanges) {
    const KeyValue* kv = keys.FindArch(r.suffix);
    std::optional<double> x = kv ? kv->value().AsDouble() : std::nullopt;
    if (!x || !std::isfinite(*x)) continue;  // wrong type: GG4004; NaN/inf: GG3006
    if ((r.zero_is_unset && *x == 0) || !ArchReadsKey(keys.arch_info(), r.suffix)) continue;
    bool ok = (r.min_inclusive ? *x >= r.min : *x > r.min) && *x < r.max;
    if (!ok) {
      ctx.sink.Add(RuleId::kHyperparameterRange, kv->value().offset,
                   absl::StrCat("'", KeyName(*kv), "' is ", *x, ", outside ", r.min_inclusive ? "[" : "(", r.min,
                                ", ", r.max == kInf ? "inf" : absl::StrCat(r.max), "): ", Sv(r.why)));
    }
  }
  // Sizes only matter to a loader that builds the model (vocab-only files
  // stop before them).
  if (!has_tensors) return;
  for (std::string_view suffix : {"context_length", "embedding_length", "block_count"}) {
    const KeyValue* kv = keys.FindArch(suffix);
    if (keys.U32(kv) == 0u) {
      ctx.sink.Add(RuleId::kHyperparameterRange, kv->value().offset,
                   absl::StrCat("'", KeyName(*kv), "' is 0 in a file with tensors"));
    }
  }
}

// Where llama.cpp divides by layer 0's head count without testing it for 0
// (load_hparams itself only divides when n_head() > 0): the division, or
// empty. SIGFPE, the process dies.
std::string_view DivisionByHeadCount(std::string_view arch, uint32_t n_layer) {
  if (arch == "olmo2" || arch == "phimoe") return "load_arch_tensors' n_embd / n_head, while loading";
  // f_attention_scale of the 27B types (block_count 46 and 62)
  if ((arch == "gemma2" && n_layer == 46) || (arch == "gemma3" && n_layer == 62)) {
    return "the 27B attention scale n_embd / n_head(0) in load_arch_hparams, while loading";
  }
  if (arch == "deepseek2-ocr") return "the graph's n_embd / n_head(), when a context is created";
  return {};
}

// GG4017 (errors: llama.cpp aborts or refuses) and GG4011 (warnings:
// inconsistent, but nothing computes with the value) on every layer's head
// counts, read as the loader reads them (HeadsOfLayer), scalar or per-layer
// array. What aborts, checked against llama.cpp's CPU build (the loader
// oracle's node-llama-cpp), loading the model and creating a context:
//   - a layer with K/V tensors and 0 K/V heads: its K/V cache and views
//     have 0 heads, and the copy of K into the cache asserts
//     (ggml_set_rows: a->ne[0] == b->ne[0]) or ggml_reshape does;
//   - a layer with K/V tensors and 0 query heads, in architectures that read
//     head counts per layer (granite: ggml_reshape asserts);
//   - query heads not a multiple of K/V heads on a layer with K/V tensors:
//     grouped-query attention broadcasts K over Q, and ggml_mul_mat /
//     ggml_flash_attn_ext assert ggml_can_mul_mat;
//   - layer 0's head count 0 where DivisionByHeadCount names a division.
// Architectures that read one head count for all layers (llama) ignore a
// per-layer head_count array past layer 0; no converter writes one for them,
// and it is read here as the per-layer architectures read it. A 0 on a layer
// without K/V tensors is a recurrent or attention-free layer (jamba, plamo2,
// deci, lfm2, granitehybrid write them) and passes.
void CheckAttentionHeads(RuleContext& ctx, const KeyIndex& keys, std::optional<uint32_t> blocks) {
  if (!IsTransformerArch(keys.arch()) || IsAdapter(keys)) return;
  if (!blocks || *blocks == 0 || *blocks > kLlamaMaxLayers) return;  // GG4008, GG4011, GG4009
  const uint32_t n_layer = *blocks;
  const KeyValue* heads_kv = keys.FindArch("attention.head_count");
  const KeyValue* kv_heads_kv = keys.FindArch("attention.head_count_kv");
  if (heads_kv == nullptr) return;  // GG4008 for a model with tensors
  const std::vector<const TensorInfo*> kv_tensors = KvTensorsByLayer(ctx.header, n_layer);
  // A value given as a scalar holds for every layer: it is judged once, on
  // the first layer with K/V tensors (else layer 0).
  uint32_t first_attention = 0;
  while (first_attention < n_layer && kv_tensors[first_attention] == nullptr) ++first_attention;
  const uint32_t judged = first_attention < n_layer ? first_attention : 0;
  const bool heads_scalar = heads_kv->type() != ValueType::kArray;
  const KeyValue* kv_at = kv_heads_kv != nullptr ? kv_heads_kv : heads_kv;  // head_count_kv defaults to head_count
  const bool kv_scalar = kv_at->type() != ValueType::kArray;
  const bool pair_scalar = heads_scalar && kv_scalar;
  const std::string_view division = DivisionByHeadCount(keys.arch(), n_layer);
  RuleReporter error(ctx, RuleId::kAttentionHeads);
  RuleReporter warning(ctx, RuleId::kHyperparameterRange);
  const std::string arch = EscapeForDisplay(keys.arch(), 64);
  auto layer = [](uint32_t il, bool scalar) {
    return scalar ? absl::StrCat("layer ", il, " (one value for every layer)") : absl::StrCat("layer ", il);
  };
  auto tensor = [&](uint32_t il) { return EscapeForDisplay(kv_tensors[il]->name, 64); };
  for (uint32_t il = 0; il < n_layer; ++il) {
    const LayerHeads h = HeadsOfLayer(heads_kv, kv_heads_kv, il, n_layer);
    if (!h.heads || !h.kv_heads) return;  // a shape llama.cpp refuses: GG4004, GG4010
    const uint64_t heads = *h.heads, kv_heads = *h.kv_heads;
    const bool attention = kv_tensors[il] != nullptr;
    if (heads == 0) {
      if (il == 0 && !division.empty()) {
        error.Add(PerLayerOffset(*heads_kv, il), [&] {
          return absl::StrCat("'", KeyName(*heads_kv), "' is 0 for layer 0: llama.cpp's ", arch,
                              " code divides by it (", Sv(division), ") and dies of SIGFPE");
        });
      } else if ((heads_scalar && (il != judged || !division.empty())) || (!attention && !heads_scalar)) {
        // judged once, or a recurrent / attention-free layer (jamba, plamo2, deci write them)
      } else if (attention) {
        error.Add(PerLayerOffset(*heads_kv, il), [&] {
          return absl::StrCat("'", KeyName(*heads_kv), "' is 0 for ", layer(il, heads_scalar),
                              ", which has attention K/V tensors ('", tensor(il),
                              "'): llama.cpp shapes that layer's queries with 0 heads and refuses the tensors, or "
                              "aborts (GGML_ASSERT in ggml_reshape) when a context is created");
        });
      } else {
        warning.Add(heads_kv->value().offset, [&] {
          return absl::StrCat("'", KeyName(*heads_kv), "' is 0 in a transformer: llama.cpp leaves the head size ",
                              "(embedding_length / head_count) at 0. No layer has attention K/V tensors, so nothing ",
                              "aborts, but attention tensors would be refused");
        });
      }
      continue;
    }
    if (kv_heads == 0) {
      if (attention && (!kv_scalar || il == judged) && !ZeroKvHeadsMarkALayerKind(keys.arch())) {
        error.Add(PerLayerOffset(*kv_at, il), [&] {
          return absl::StrCat("'", KeyName(*kv_at), "' is 0 for ", layer(il, kv_scalar),
                              ", which has attention K/V tensors ('", tensor(il), "'): llama.cpp sizes that ",
                              "layer's K/V cache and views with 0 heads and aborts (GGML_ASSERT in ggml_set_rows or ",
                              "ggml_reshape) when a context is created, or refuses the tensors' shapes; ", arch,
                              " has no layer kind without K/V heads");
        });
      }
      continue;
    }
    if (heads % kv_heads == 0 || (pair_scalar && il != judged)) continue;
    // The element that makes this layer's pair wrong: the K/V count's,
    // unless only head_count is an array.
    const KeyValue& at = !kv_scalar || heads_scalar ? *kv_at : *heads_kv;
    const std::string pair = absl::StrCat(layer(il, pair_scalar), ": head_count ", heads,
                                          " is not a multiple of head_count_kv ", kv_heads);
    if (attention) {
      error.Add(PerLayerOffset(at, il), [&] {
        return absl::StrCat(pair, ", and the layer has attention K/V tensors ('", tensor(il),
                            "'): grouped-query attention broadcasts K/V heads over query heads, and llama.cpp aborts ",
                            "(GGML_ASSERT(ggml_can_mul_mat) in ggml_mul_mat or ggml_flash_attn_ext) when a context ",
                            "is created");
      });
    } else {
      warning.Add(PerLayerOffset(at, il), [&] {
        return absl::StrCat(pair, ". The layer has no attention K/V tensors, so nothing computes with the pair; with ",
                            "them llama.cpp aborts (GG4017)");
      });
    }
  }
}

// A key llama.cpp's table names as "suffix" (of "{arch}.") or "=whole.name".
const KeyValue* FindTableKey(const KeyIndex& keys, std::string_view name) {
  return name.substr(0, 1) == "=" ? keys.Find(name.substr(1)) : keys.FindArch(name);
}

std::string TableKeyName(const KeyIndex& keys, std::string_view name) {
  if (name.substr(0, 1) == "=") return std::string(name.substr(1));
  return absl::StrCat(EscapeForDisplay(keys.arch()), ".", Sv(name));
}

// llama.cpp refuses an architecture it does not know ("unknown model
// architecture") and one it names but builds no model for. The table is a
// snapshot (LlamaCppCommit): names added upstream since are real files, hence
// a warning under default. Other kinds of file (clip, controlvector) pass.
void CheckArchitectureKnown(RuleContext& ctx, const KeyIndex& keys) {
  if (keys.arch().empty()) return;
  const ArchInfo* info = keys.arch_info();
  if (info != nullptr && info->kind != ArchKind::kNameOnly) return;
  if (IsAdapter(keys)) return;  // an adapter names the base model's architecture
  std::string arch = EscapeForDisplay(keys.arch(), 64);
  ctx.sink.Add(RuleId::kUnknownArchitecture, keys.arch_kv()->value().offset,
               info == nullptr
                   ? absl::StrCat("architecture '", arch, "' is unknown to llama.cpp ",
                                  Sv(LlamaCppCommit().substr(0, 12)),
                                  ", which refuses the file; no architecture-specific check ran")
                   : absl::StrCat("llama.cpp ", Sv(LlamaCppCommit().substr(0, 12)), " names architecture '", arch,
                                  "' but builds no model for it and refuses the file"));
}

// The arrays whose length llama.cpp checks: per-layer values (get_key_or_arr
// with n_layer) and fixed-length ones (rope.dimension_sections, 4).
void CheckArrayLengths(RuleContext& ctx, const KeyIndex& keys, std::optional<uint32_t> blocks) {
  for (const KeyValue& kv : ctx.header.kvs) {
    if (kv.type() != ValueType::kArray) continue;
    const std::string_view key = CStringKey(kv.key());
    std::optional<KeyRule> rule = FindKeyRule(key, keys.arch(), keys.arch_info());
    if (!rule || rule->array_length == kAnyLength || !AcceptsValue(*rule, kv.value())) continue;
    // Only the keys the architecture reads: llama.cpp's saver writes, e.g.,
    // swiglu_clamp_exp and the unprefixed xielu.* as 512 floats for every
    // model, and only step35 and apertus read them.
    if (IsUnreadArchKey(keys, key)) continue;
    if (rule->array_length == kPerLayerLength) {
      if (!blocks || kv.value().array.count == *blocks) continue;
      ctx.sink.Add(RuleId::kPerLayerArrayLength, kv.value().offset,
                   absl::StrCat("'", KeyName(kv), "' has ", kv.value().array.count, " elements for ", *blocks,
                                " blocks: llama.cpp reads one per layer and rejects any other length"));
    } else if (rule->array_length == kPerLayerMinusNextnLength) {
      // hparams.n_layer() once the architecture has read nextn_predict_layers
      // (0 when it is absent): the layers without the multi-token-prediction
      // ones. A nextn of another type is refused, one above block_count is
      // GG9052: no length to expect then.
      const KeyValue* nextn_kv = keys.FindArch("nextn_predict_layers");
      const std::optional<uint32_t> nextn = nextn_kv == nullptr ? std::optional<uint32_t>(0) : keys.U32(nextn_kv);
      if (!blocks || !nextn || *nextn > *blocks) continue;
      const uint64_t layers = *blocks - *nextn;
      if (kv.value().array.count == layers) continue;
      ctx.sink.Add(RuleId::kPerLayerArrayLength, kv.value().offset,
                   absl::StrCat("'", KeyName(kv), "' has ", kv.value().array.count, " elements for ", *blocks,
                                " blocks less ", *nextn, " next-token-prediction layers: llama.cpp reads one per ",
                                "layer (", layers, ") and rejects any other length"));
    } else if (kv.value().array.count != rule->array_length) {
      ctx.sink.Add(RuleId::kPerLayerArrayLength, kv.value().offset,
                   absl::StrCat("'", KeyName(kv), "' has ", kv.value().array.count, " elements: llama.cpp reads ",
                                "exactly ", rule->array_length, " and rejects any other length"));
    }
  }
}

void CheckHyperparameters(RuleContext& ctx, const KeyIndex& keys) {
  const bool has_tensors = !ctx.header.tensors.empty();
  if (keys.arch().empty()) return;
  CheckArchitectureKnown(ctx, keys);
  // A vocabulary-only load requires only what the vocabulary loader does
  // (tokenizer.ggml.model), which such a file has by definition.
  const bool model = ReadsHyperparameters(ctx.header, keys);
  if (model && keys.arch_info() != nullptr && !IsAdapter(keys)) {
    // Why a file without tensors is held to a model's keys.
    const std::string_view why =
        has_tensors ? ""
        : keys.Find("tokenizer.ggml.model") == nullptr
            ? "; a file without tensors is loaded for its vocabulary alone only when it names one "
              "(tokenizer.ggml.model), and this one does not"
            : "; this first part of a split model holds the metadata the loader reads";
    const std::string arch = EscapeForDisplay(keys.arch());
    ForEachRequiredKey(*keys.arch_info(), [&](std::string_view name) {
      if (FindTableKey(keys, name) != nullptr) return;
      // The vocabulary loader's keys (tokenizer.*) are read by every load.
      ctx.sink.Add(RuleId::kMissingHyperparameter, keys.arch_kv()->value().offset,
                   name.substr(0, 11) == "=tokenizer."
                       ? absl::StrCat("'", TableKeyName(keys, name), "' is missing: llama.cpp's vocabulary loader ",
                                      "requires it, and refuses a ", arch, " model or its vocabulary alone without it")
                       : absl::StrCat("'", TableKeyName(keys, name), "' is missing: llama.cpp refuses to load a ",
                                      arch, " model without it", Sv(why)));
    });
  }
  const KeyValue* blocks_kv = keys.FindArch("block_count");
  std::optional<uint32_t> blocks = keys.U32(blocks_kv);
  if (blocks && *blocks > kLlamaMaxLayers) {
    ctx.sink.Add(RuleId::kBlockCountLimit, blocks_kv->value().offset,
                 absl::StrCat("'", KeyName(*blocks_kv), "' is ", *blocks, "; llama.cpp allows at most ", kLlamaMaxLayers,
                              " (LLAMA_MAX_LAYERS) and sizes per-layer arrays by it"));
  }
  // load_hparams: GGML_ASSERT(hparams.n_layer_all > 0 && ...) since 2026-08
  // (an abort; before, 0 layers loaded). Only a model's load reads it.
  const ArchInfo* info = keys.arch_info();
  if (blocks && *blocks == 0 && model && info != nullptr && info->kind == ArchKind::kModel && !IsAdapter(keys)) {
    ctx.sink.Add(RuleId::kBlockCountLimit, blocks_kv->value().offset,
                 absl::StrCat("'", KeyName(*blocks_kv), "' is 0 in a model: llama.cpp aborts as it reads the ",
                              "hyperparameters (GGML_ASSERT(hparams.n_layer_all > 0 && hparams.n_layer_all <= ",
                              "LLAMA_MAX_LAYERS))"));
  }
  CheckArrayLengths(ctx, keys, blocks);
  CheckRanges(ctx, keys, has_tensors);
  // Head counts matter to a loader that builds the model (vocab-only files
  // stop before them).
  if (has_tensors) CheckAttentionHeads(ctx, keys, blocks);
}

std::string Shape(const TensorInfo& t) {
  std::string s = "[";
  const std::array<uint64_t, kMaxDims> dims = t.dims();
  for (uint32_t d = 0; d < t.n_dims; ++d) absl::StrAppend(&s, d ? ", " : "", dims[d]);
  return s + "]";
}

// Only for architectures whose loader creates token_embd/output as
// {n_embd, n_vocab} (the generated table says which).
void CheckEmbeddingShapes(RuleContext& ctx, const KeyIndex& keys) {
  const ArchInfo* info = keys.arch_info();
  if (info == nullptr || info->kind != ArchKind::kModel || ctx.header.tensors.empty()) return;
  const uint64_t n_vocab = VocabularySize(keys).value_or(0);
  const uint64_t n_embd = keys.U32(keys.FindArch(info->n_embd_key)).value_or(0);
  for (const TensorInfo& t : ctx.header.tensors) {
    if (!(t.name == "token_embd.weight" && info->token_embd_by_vocab) &&
        !(t.name == "output.weight" && info->output_by_vocab)) {
      continue;
    }
    // Unused dims are 1, so a 1-D tensor fails the vocabulary test.
    const std::array<uint64_t, kMaxDims> dims = t.dims();
    bool rows_ok = n_vocab == 0 || dims[1] == n_vocab;
    bool cols_ok = n_embd == 0 || dims[0] == n_embd;
    bool rank_ok = dims[2] == 1 && dims[3] == 1;
    if (rows_ok && cols_ok && rank_ok) continue;
    ctx.sink.Add(RuleId::kEmbeddingShape, t.offset,
                 absl::StrCat("tensor '", EscapeForDisplay(t.name), "' is ", Shape(t), ", expected [",
                              n_embd ? absl::StrCat(n_embd) : "n_embd", ", ",
                              n_vocab ? absl::StrCat(n_vocab) : "n_vocab", "] (embedding_length, vocabulary size)",
                              !rows_ok && dims[1] < n_vocab ? ": token ids past its rows read out of bounds" : ""));
  }
}

const TensorInfo* FirstTensor(const GgufHeader& h, bool (*pred)(const GgmlTypeInfo&)) {
  for (const TensorInfo& t : h.tensors) {
    const GgmlTypeInfo* type = FindGgmlType(t.ggml_type);
    if (type != nullptr && type->status != GgmlTypeStatus::kRemoved && pred(*type)) return &t;
  }
  return nullptr;
}
bool IsQuantized(const GgmlTypeInfo& t) { return t.quantized; }
bool IsNotF32(const GgmlTypeInfo& t) { return t.id != 0; }

std::string TensorTypeName(const TensorInfo& t) {
  const GgmlTypeInfo* type = FindGgmlType(t.ggml_type);
  return type ? std::string(type->name) : absl::StrCat("type#", t.ggml_type);
}

// "Present when quantized tensors exist". The converse is not checked:
// gguf-py's converters write general.quantization_version into every file,
// F16 and vocab-only ones included (llamacpp_vocab-phi-3 in corpus-real).
void CheckQuantizationVersion(RuleContext& ctx, const KeyIndex& keys) {
  const TensorInfo* quantized = FirstTensor(ctx.header, IsQuantized);
  // Shards 2..N of a split model hold no metadata but split.*: the loader
  // reads it from shard 1 (as GG4006 knows).
  if (quantized == nullptr || IsLaterShard(keys)) return;
  const KeyValue* kv = keys.Find("general.quantization_version");
  if (kv == nullptr) {
    ctx.sink.Add(RuleId::kQuantizationVersion, quantized->type_offset(),
                 absl::StrCat("tensor '", EscapeForDisplay(quantized->name), "' is ", TensorTypeName(*quantized),
                              " but general.quantization_version is missing; the spec requires it with quantized "
                              "tensors (GGML_QNT_VERSION ", kQuantVersion, ")"));
    return;
  }
  std::optional<uint32_t> v = keys.U32(kv);
  if (v && *v != kQuantVersion) {
    ctx.sink.Add(RuleId::kQuantizationVersion, kv->value().offset,
                 absl::StrCat("general.quantization_version is ", *v, "; today's quantized block layouts are version ",
                              kQuantVersion, ", an older file's blocks decode as garbage"));
  }
}

// llama_ftype: 0 ALL_F32, 1 MOSTLY_F16, 32 MOSTLY_BF16, every other value a
// quantization (new ones keep being added, so any other value just needs a
// quantized tensor; mixes such as Q4_K_M fall back to other quantized types
// for rows that do not fit, so no particular type is demanded). 1024 is
// LLAMA_FTYPE_GUESSED.
void CheckFileType(RuleContext& ctx, const KeyIndex& keys) {
  const KeyValue* kv = keys.Find("general.file_type");
  std::optional<uint32_t> ftype = keys.U32(kv);
  if (!ftype || ctx.header.tensors.empty()) return;
  const uint32_t f = *ftype & ~1024u;
  std::string problem;
  if (f == 0) {
    if (const TensorInfo* t = FirstTensor(ctx.header, IsNotF32)) {
      problem = absl::StrCat("ALL_F32 but tensor '", EscapeForDisplay(t->name), "' is ", TensorTypeName(*t));
    }
  } else if (f == 1 || f == 32) {
    if (const TensorInfo* t = FirstTensor(ctx.header, IsQuantized)) {
      problem = absl::StrCat(f == 1 ? "MOSTLY_F16" : "MOSTLY_BF16", " but tensor '", EscapeForDisplay(t->name),
                             "' is ", TensorTypeName(*t));
    }
  } else if (FirstTensor(ctx.header, IsQuantized) == nullptr) {
    problem = "a quantized type but no tensor is quantized";
  }
  if (!problem.empty()) {
    ctx.sink.Add(RuleId::kFileTypeMismatch, kv->value().offset,
                 absl::StrCat("general.file_type ", *ftype, " says ", problem,
                              "; tools size downloads and memory by it"));
  }
}

// gguf-split writes split.no (u16, from 0), split.count (u16) and
// split.tensors.count (i32, the total over all parts) into every part.
void CheckSplit(RuleContext& ctx, const KeyIndex& keys) {
  const KeyValue* no_kv = keys.Find("split.no");
  const KeyValue* count_kv = keys.Find("split.count");
  const KeyValue* tensors_kv = keys.Find("split.tensors.count");
  if (no_kv == nullptr && count_kv == nullptr && tensors_kv == nullptr) return;
  std::optional<uint64_t> no = ExactU16(no_kv), count = ExactU16(count_kv);
  if (count_kv == nullptr || no_kv == nullptr) {
    const KeyValue* present = count_kv ? count_kv : no_kv ? no_kv : tensors_kv;
    ctx.sink.Add(RuleId::kSplitKeys, present->offset(),
                 absl::StrCat(count_kv ? "split.no" : "split.count",
                              " is missing while other split.* keys are present: loaders cannot tell which part "
                              "this is"));
  }
  // llama-gguf-split --merge writes split.count 0 into the merged file (one
  // file holding every tensor); the loader treats any count below 2 as one file.
  const bool merged = count == 0u && no == 0u;
  if (count == 0u && !merged) {
    ctx.sink.Add(RuleId::kSplitKeys, count_kv->value().offset, "split.count is 0 in a part other than the first");
  } else if (no && count && !merged && *no >= *count) {
    ctx.sink.Add(RuleId::kSplitKeys, no_kv->value().offset,
                 absl::StrCat("split.no ", *no, " is not below split.count ", *count, " (parts count from 0)"));
  }
  if (tensors_kv != nullptr && tensors_kv->type() == ValueType::kInt32) {
    const int64_t total = *tensors_kv->value().AsSigned();
    const uint64_t here = ctx.header.tensors.size();
    const bool one_file = count == 1u || merged;
    if (total < 0 || static_cast<uint64_t>(total) < here || (one_file && static_cast<uint64_t>(total) != here)) {
      ctx.sink.Add(RuleId::kSplitKeys, tensors_kv->value().offset,
                   absl::StrCat("split.tensors.count ", total, " does not fit this part's ", here, " tensors",
                                one_file ? " in a file of one part" : ""));
    }
  }
}

}  // namespace

void CheckKnownKeys(RuleContext& ctx, const KeyIndex& keys) {
  CheckKeyTypes(ctx, keys);
  CheckArchitecture(ctx, keys);
  CheckHyperparameters(ctx, keys);
  CheckEmbeddingShapes(ctx, keys);
  CheckQuantizationVersion(ctx, keys);
  CheckFileType(ctx, keys);
  CheckSplit(ctx, keys);
}

}  // namespace ggufguard
