// 9050-9099: files that abort llama.cpp's loader (GGML_ASSERT, GGML_ABORT)
// although every structural and semantic rule above accepts them. Each was
// found by the loader oracle (fuzz/oracle, docs/fuzzing.md) and is checked
// here exactly as the loader's code decides it, so that no file llama.cpp
// loads is rejected.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ggufguard/base/checked_math.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/text.h"
#include "ggufguard/format/ggml_type.h"
#include "ggufguard/rules/rules.h"

namespace ggufguard {
namespace {

// ggml's TENSOR_ALIGNMENT (ggml-impl.h).
constexpr uint64_t kTensorAlignment = 32;

// The layer llama.cpp's load_tensors gives a tensor (llm_tensor_info in
// llama-arch.cpp), which decides where it goes: the input layer always stays
// on the CPU, n_gpu_layers moves the last repeating layers to a GPU and, once
// it exceeds block_count, the output layer too.
struct TensorLayer {
  enum Kind : uint8_t { kInput, kRepeating, kOutput } kind;
  uint64_t layer = 0;  // kRepeating: the block number
};

TensorLayer LayerOfTensor(std::string_view name) {
  for (std::string_view prefix : {"blk.", "enc.blk.", "dec.blk.", "posnet.", "convnext."}) {
    if (name.substr(0, prefix.size()) != prefix) continue;
    uint64_t il = 0;
    size_t i = prefix.size();
    for (; i < name.size() && i < prefix.size() + 6 && name[i] >= '0' && name[i] <= '9'; ++i) {
      il = il * 10 + static_cast<uint64_t>(name[i] - '0');
    }
    if (i > prefix.size() && i < name.size() && name[i] == '.') return {TensorLayer::kRepeating, il};
  }
  const std::string_view base = name.substr(0, name.rfind('.'));
  for (std::string_view input : {"token_embd", "token_embd_norm", "position_embd", "token_types", "conv1d"}) {
    if (base == input) return {TensorLayer::kInput};
  }
  // Created with every layer (TENSOR_DUPLICATED), layer 0 first.
  for (std::string_view per_layer : {"rope_freqs", "rope_factors_long", "rope_factors_short"}) {
    if (base == per_layer) return {TensorLayer::kRepeating, 0};
  }
  return {TensorLayer::kOutput};
}

// Whether a CPU "extra" buffer type of a default llama.cpp build may take
// the tensor out of the CPU's mapped buffer: load_tensors offers them before
// the plain CPU buffer type, and they copy the weights into memory of their
// own. The repack buffer type (ggml-cpu/repack.cpp,
// ggml_repack_get_optimal_repack_type: AVX2, NEON or RVV CPUs) and AMX
// (amx/common.h qtype_has_amx_kernels, and F16) hold only the weights of a
// matrix multiplication (2-D, or 3-D for the experts' MUL_MAT_ID) of these
// types, never a tensor llama.cpp gathers rows from (GET_ROWS: the
// embeddings). Which of them a given CPU takes depends on its features and
// the shape, hence "may".
bool MayLeaveCpuBuffer(const TensorInfo& t, TensorLayer where) {
  if (t.n_dims != 2 && t.n_dims != 3) return false;
  if (where.kind == TensorLayer::kInput) return false;  // embeddings and conv1d: never multiplied
  const std::string_view name = t.name;
  const std::string_view base = name.substr(0, name.rfind('.'));
  if (base == "per_layer_token_embd") return false;
  for (std::string_view gathered : {".attn_rel_b", ".nextn.embed_tokens"}) {
    if (base.size() >= gathered.size() && base.substr(base.size() - gathered.size()) == gathered) return false;
  }
  switch (t.ggml_type) {
    case 1:   // F16 (AMX)
    case 2:   // Q4_0
    case 3:   // Q4_1 (AMX)
    case 8:   // Q8_0
    case 10:  // Q2_K
    case 12:  // Q4_K
    case 13:  // Q5_K
    case 14:  // Q6_K
    case 20:  // IQ4_NL
    case 23:  // IQ4_XS (AMX)
    case 39:  // MXFP4
      return true;
    default:
      return false;
  }
}

// With mmap (llama.cpp's default) tensor data stays where it is in the file.
// load_tensors puts the tensors in one context per buffer type, and for the
// CPU's own buffer type wraps the mapped range from the lowest file offset of
// its tensors to the end of the last (get_mapping_range) in a buffer:
// ggml_backend_cpu_buffer_from_ptr asserts that its start is a multiple of
// 32, and aborts the process otherwise (the mapping itself is page-aligned).
// The other tensors may lie anywhere, so general.alignment 8 or 16, which
// GGUF allows, loads as long as the tensor that starts that buffer is on 32.
//
// Which tensor that is: walking the tensors by offset, the first one that
// stays in the CPU's buffer type. With llama_model_default_params, on a CPU
// only machine, it is the first tensor, or a later one where every tensor
// before it is a matrix the CPU's repack or AMX buffer type takes; with a
// GPU (n_gpu_layers 999), the first tensor of the input layer, all that
// stays on the CPU. Either is an error: the default load of some machine
// aborts. A smaller n_gpu_layers keeps the first repeating layers and
// perhaps the output layer on the CPU too, so that other tensors can start
// the buffer: a warning (GG9060). Tensor overrides (--override-tensor) and
// ops a GPU does not support, which fall back to the CPU, can put any
// tensor first; they are not modelled.
// Adapters, projectors and control vectors are read into buffers of their
// own, not mapped. A tensor off its own alignment is GG6001's.
void CheckTensorDataAlignment(RuleContext& ctx, const KeyIndex& keys) {
  const GgufHeader& h = ctx.header;
  if (!h.data_offset_known || h.alignment % kTensorAlignment == 0) return;
  const ArchInfo* info = keys.arch_info();
  if ((info != nullptr && info->kind != ArchKind::kModel) || IsAdapter(keys)) return;
  struct Placed {
    uint64_t begin;
    uint32_t index;
  };
  std::vector<Placed> by_offset;
  by_offset.reserve(h.tensors.size());
  bool in_order = true;
  for (size_t i = 0; i < h.tensors.size(); ++i) {
    const TensorInfo& t = h.tensors[i];
    uint64_t begin = 0;
    if (t.relative_offset() % h.alignment != 0 || !CheckedAdd(h.data_offset, t.relative_offset(), &begin)) continue;
    in_order = in_order && (by_offset.empty() || by_offset.back().begin <= begin);
    by_offset.push_back({begin, static_cast<uint32_t>(i)});
  }
  // gguf.cpp refuses tensors out of the order of their offsets (GG6005
  // warns); sorted, such a file is judged by its lowest offset all the same.
  if (!in_order) {
    std::sort(by_offset.begin(), by_offset.end(), [](const Placed& a, const Placed& b) {
      return a.begin != b.begin ? a.begin < b.begin : a.index < b.index;
    });
  }
  const std::optional<uint32_t> blocks = keys.U32(keys.FindArch("block_count"));
  RuleReporter error(ctx, RuleId::kTensorDataAlignment);
  RuleReporter offload(ctx, RuleId::kTensorDataAlignmentOffload);
  // What has been seen, by layer, of tensors that surely stay in the CPU's
  // buffer when their layer is on the CPU: once one is, no later tensor of
  // a configuration that keeps that layer on the CPU starts the buffer.
  bool input_stays = false, output_stays = false;
  uint64_t lowest_layer_staying = UINT64_MAX;
  for (const Placed& p : by_offset) {
    if (input_stays) break;  // the input layer is on the CPU in every configuration
    const TensorInfo& t = h.tensors[p.index];
    const TensorLayer layer = LayerOfTensor(t.name);
    const bool in_default_load = !output_stays && lowest_layer_staying == UINT64_MAX;
    // With n_gpu_layers = block_count the CPU keeps the input and output
    // layers; with fewer, the first repeating layers too: the smallest such
    // set that holds this tensor is the one where it can come first.
    const bool under_offload = layer.kind == TensorLayer::kOutput
                                   ? !output_stays
                                   : layer.kind == TensorLayer::kRepeating && !output_stays &&
                                         lowest_layer_staying > layer.layer;
    const bool misaligned = p.begin % kTensorAlignment != 0;
    auto lead = [&] {
      return absl::StrCat("tensor '", EscapeForDisplay(t.name, 96), "' data starts at file offset ", p.begin,
                          ", not a multiple of 32 (general.alignment is ", h.alignment, "): ");
    };
    constexpr std::string_view kAborts =
        ", and ggml_backend_cpu_buffer_from_ptr aborts on a buffer that does not start on a multiple of 32 "
        "(GGML_ASSERT: the process dies)";
    if (misaligned && (in_default_load || layer.kind == TensorLayer::kInput)) {
      error.Add(t.relative_offset_field(), [&] {
        const Placed& first = by_offset.front();
        if (&p == &first) {
          return absl::StrCat(lead(), "it is the file's first tensor, where llama.cpp's default (mmap) load starts the "
                              "buffer of its CPU tensors", Sv(kAborts),
                              MayLeaveCpuBuffer(t, layer)
                                  ? " (unless the CPU's repack or AMX buffer type takes this matrix)"
                                  : "");
        }
        if (in_default_load) {
          return absl::StrCat(lead(), "every tensor before it ('", EscapeForDisplay(h.tensors[first.index].name, 96),
                              "' at ", first.begin, " first) is a matrix that the CPU's repack or AMX buffer type may ",
                              "take, and where it does, llama.cpp's default (mmap) load starts the buffer of its CPU ",
                              "tensors here", Sv(kAborts));
        }
        return absl::StrCat(lead(), "on a machine with a GPU, llama.cpp's default load offloads every layer but the "
                            "input layer (n_gpu_layers 999 in llama_model_default_params), whose first tensor this is: "
                            "the buffer of its CPU tensors starts here", Sv(kAborts));
      });
    } else if (misaligned && under_offload) {
      offload.Add(t.relative_offset_field(), [&] {
        std::string config;
        if (layer.kind == TensorLayer::kOutput) {
          config = "the repeating layers are offloaded to a GPU and the output layer is not "
                   "(n_gpu_layers = block_count)";
        } else {
          const std::string n_gpu_layers = blocks && *blocks > layer.layer
                                               ? absl::StrCat(*blocks - layer.layer - 1)
                                               : absl::StrCat("block_count - ", layer.layer + 1);
          config = absl::StrCat("the layers after ", layer.layer, " are offloaded to a GPU (n_gpu_layers = ",
                                n_gpu_layers, ")");
        }
        return absl::StrCat(lead(), "llama.cpp's default load starts the buffer of its CPU tensors at an earlier "
                            "tensor, but when ", config, ", that buffer starts here", Sv(kAborts));
      });
    }
    if (MayLeaveCpuBuffer(t, layer)) continue;
    switch (layer.kind) {
      case TensorLayer::kInput: input_stays = true; break;
      case TensorLayer::kOutput: output_stays = true; break;
      case TensorLayer::kRepeating: lowest_layer_staying = std::min(lowest_layer_staying, layer.layer); break;
    }
  }
}

// llama.cpp's token-to-piece cache, built while loading the vocabulary,
// turns each BYTE token (token_type 6) into its byte with token_to_byte,
// which has no case for a WordPiece vocabulary (tokenizer.ggml.model
// "bert"): GGML_ABORT("fatal error"). Real BERT vocabularies have no BYTE
// tokens; the types are read as i32 (another element type is GG4004's).
void CheckWordPieceByteTokens(RuleContext& ctx, const KeyIndex& keys) {
  const KeyValue* model = keys.Find("tokenizer.ggml.model");
  if (model == nullptr || model->type() != ValueType::kString || model->value().AsString() != "bert") return;
  const KeyValue* types = keys.Find("tokenizer.ggml.token_type");
  if (types == nullptr || types->type() != ValueType::kArray ||
      types->value().array.element_type != ValueType::kInt32) {
    return;
  }
  const ArrayView a = types->value().array;
  constexpr uint32_t kTokenTypeByte = 6;
  RuleReporter report(ctx, RuleId::kWordPieceByteToken);
  for (uint64_t i = 0; i < a.count; ++i) {
    if (a.ScalarAt<uint32_t>(i) != kTokenTypeByte) continue;
    report.Add(a.elements_offset + 4 * i, [&] {
      return absl::StrCat("token ", i, " has token_type BYTE in a WordPiece ('bert') vocabulary: llama.cpp aborts ",
                          "(GGML_ABORT in token_to_byte) while building its token pieces at load time");
    });
    return;  // one is enough: the loader dies at the first
  }
}

// Most architectures that read {arch}.nextn_predict_layers assert, right
// after, GGML_ASSERT(n_layer_nextn < n_layer_all): a value equal to or above
// block_count aborts the load (generated: AssertsNextnBelowBlockCount). Above
// block_count it is refused for every architecture: the loader oracle's
// llama.cpp (node-llama-cpp 3.21.1) asserts it in load_hparams for all of
// them, and where it is read hparams.n_layer() = block_count - nextn wraps
// in unsigned arithmetic. Both keys are read as exactly u32 (another type is
// refused, not a crash); a vocabulary-only file is not read for them
// (ReadsHyperparameters).
void CheckNextnLayers(RuleContext& ctx, const KeyIndex& keys) {
  const KeyValue* nextn_kv = keys.FindArch("nextn_predict_layers");
  std::optional<uint32_t> nextn = keys.U32(nextn_kv);
  std::optional<uint32_t> blocks = keys.U32(keys.FindArch("block_count"));
  // A vocabulary-only load stops before the hyperparameters.
  if (!blocks || !ReadsHyperparameters(ctx.header, keys)) return;
  // gemma4-assistant is made of next-N layers only and asserts that they are
  // all of them; the key absent reads as 0 there.
  if (AssertsNextnEqualBlockCount(keys.arch()) && (nextn_kv == nullptr || (nextn && *nextn != *blocks))) {
    ctx.sink.Add(RuleId::kNextnLayersRange, nextn_kv ? nextn_kv->value().offset : keys.arch_kv()->value().offset,
                 absl::StrCat("'", EscapeForDisplay(keys.arch()), ".nextn_predict_layers' is ", nextn.value_or(0),
                              nextn_kv ? "" : " (absent)", ", not block_count ", *blocks,
                              ": llama.cpp's loader for this architecture aborts (GGML_ASSERT(n_layer_nextn == ",
                              "n_layer_all))"));
    return;
  }
  if (!nextn) return;
  const bool asserts = AssertsNextnBelowBlockCount(keys.arch());
  if (asserts ? *nextn < *blocks : *nextn <= *blocks) return;
  ctx.sink.Add(RuleId::kNextnLayersRange, nextn_kv->value().offset,
               asserts ? absl::StrCat("'", EscapeForDisplay(nextn_kv->key()), "' is ", *nextn, ", not below block_count ",
                                      *blocks, ": llama.cpp aborts (GGML_ASSERT(n_layer_nextn < n_layer_all)) while ",
                                      "reading the hyperparameters")
                       : absl::StrCat("'", EscapeForDisplay(nextn_kv->key()), "' is ", *nextn, ", above block_count ",
                                      *blocks, ": llama.cpp builds of early 2026 abort on it for every architecture ",
                                      "(GGML_ASSERT in load_hparams), and for one that reads it the layer count ",
                                      "block_count - nextn_predict_layers wraps around"));
}

// load_hparams maps {arch}.rope.scaling.type through a table of four names
// and asserts that it found one: any other string aborts the load.
void CheckRopeScalingType(RuleContext& ctx, const KeyIndex& keys) {
  if (!ReadsHyperparameters(ctx.header, keys)) return;  // a vocabulary-only load stops before it
  const KeyValue* kv = keys.FindArch("rope.scaling.type");
  if (kv == nullptr || kv->type() != ValueType::kString) return;  // absent: "linear"; not a string: refused
  const std::string_view name = kv->value().AsString();
  for (std::string_view known : {"none", "linear", "yarn", "longrope"}) {
    if (name == known) return;
  }
  ctx.sink.Add(RuleId::kRopeScalingType, kv->value().offset,
               absl::StrCat("'", EscapeForDisplay(kv->key()), "' is '", EscapeForDisplay(name, 64),
                            "', not none, linear, yarn or longrope: llama.cpp aborts (GGML_ASSERT(rope_scaling_type_train "
                            "!= LLAMA_ROPE_SCALING_TYPE_UNSPECIFIED)) while reading the hyperparameters"));
}

// load_hparams reads the four expert counts (u32, optional, 0 when absent)
// for every architecture and asserts, before it looks at any tensor:
//   n_expert <= LLAMA_MAX_EXPERTS, n_expert_used <= n_expert, and
//   with experts: n_expert_used > 0, n_expert_groups < n_expert, and with
//   groups (> 1): n_expert % n_expert_groups == 0, 0 < n_group_used <
//   n_expert_groups; without experts: n_expert_used == 0, no groups.
// Later builds take expert_used_count per layer and assert on its maximum,
// so an array of per-layer counts is read that way; a value of another type
// is refused by get_key (an exception, not an abort).
void CheckExpertCounts(RuleContext& ctx, const KeyIndex& keys) {
  const ArchInfo* info = keys.arch_info();
  if (info == nullptr || info->kind != ArchKind::kModel) return;  // llama.cpp refuses the file first
  if (!ReadsHyperparameters(ctx.header, keys)) return;             // a vocabulary-only load stops before them
  const KeyValue* experts_kv = keys.FindArch("expert_count");
  const KeyValue* used_kv = keys.FindArch("expert_used_count");
  const KeyValue* groups_kv = keys.FindArch("expert_group_count");
  const KeyValue* group_used_kv = keys.FindArch("expert_group_used_count");
  if (experts_kv == nullptr && used_kv == nullptr && groups_kv == nullptr && group_used_kv == nullptr) return;
  // A present key of another type: get_key throws, the load is refused.
  for (const KeyValue* kv : {experts_kv, groups_kv, group_used_kv}) {
    if (kv != nullptr && !keys.U32(kv)) return;
  }
  const uint64_t experts = keys.U32(experts_kv).value_or(0);
  uint64_t used = 0;
  if (used_kv != nullptr && used_kv->type() == ValueType::kArray) {
    const std::optional<uint32_t> blocks = keys.U32(keys.FindArch("block_count"));
    if (!blocks || !PerLayerValue(used_kv, 0, *blocks)) return;  // not one per layer: refused
    for (uint32_t il = 0; il < *blocks; ++il) used = std::max(used, *PerLayerValue(used_kv, il, *blocks));
  } else if (used_kv != nullptr) {
    if (!keys.U32(used_kv)) return;
    used = *keys.U32(used_kv);
  }
  const uint64_t groups = keys.U32(groups_kv).value_or(0);
  const uint64_t group_used = keys.U32(group_used_kv).value_or(0);
  const KeyValue* at = experts_kv != nullptr ? experts_kv : used_kv != nullptr ? used_kv : groups_kv;
  std::string problem;
  if (experts > kLlamaMaxExperts) {
    problem = absl::StrCat("expert_count ", experts, " is above LLAMA_MAX_EXPERTS (", kLlamaMaxExperts, ")");
  } else if (used > experts) {
    problem = absl::StrCat("expert_used_count ", used, " is above expert_count ", experts);
    at = used_kv;
  } else if (experts > 0 && used == 0) {
    problem = absl::StrCat("expert_count is ", experts, " but expert_used_count is 0 (or absent)");
  } else if (experts > 0 && groups >= experts) {
    problem = absl::StrCat("expert_group_count ", groups, " is not below expert_count ", experts);
    at = groups_kv;
  } else if (experts > 0 && groups > 1 && experts % groups != 0) {
    problem = absl::StrCat("expert_count ", experts, " is not a multiple of expert_group_count ", groups);
    at = groups_kv;
  } else if (experts > 0 && groups > 1 && (group_used == 0 || group_used >= groups)) {
    problem = absl::StrCat("expert_group_used_count ", group_used, " is not in 1..", groups - 1,
                           " for expert_group_count ", groups);
    at = group_used_kv != nullptr ? group_used_kv : groups_kv;
  } else if (experts == 0 && groups != 0) {
    problem = absl::StrCat("expert_group_count ", groups, " without experts");
    at = groups_kv;
  }
  if (problem.empty()) return;
  ctx.sink.Add(RuleId::kExpertCounts, at->value().offset,
               absl::StrCat(Sv(problem), " ('", EscapeForDisplay(keys.arch()),
                            ".expert_*'): llama.cpp aborts (GGML_ASSERT in load_hparams) before it reads a tensor"));
}

// The other architectures create every layer's attn_k/attn_v with layer 0's
// width (n_embd_k_gqa() = n_embd_head_k * n_head_kv(0)) and build the graph
// with layer 0's n_head_kv, but llama_kv_cache sizes each layer's K/V cache
// with that layer's n_head_kv(il). A per-layer head_count_kv array (or, when
// it is absent, a head_count array, which it defaults to) that gives an
// attention layer another count than the first one therefore loads, and
// creating a context aborts: ggml_set_rows copies K rows of layer 0's width
// into a cache of another (GGML_ASSERT(a->ne[0] == b->ne[0])), or granite's
// per-layer ggml_reshape_3d does not fit (GGML_ASSERT(ggml_nelements(a) ==
// ne0*ne1*ne2)). Layers without K/V tensors and counts of 0 are GG4017's.
void CheckKvHeadsPerLayer(RuleContext& ctx, const KeyIndex& keys) {
  if (!IsTransformerArch(keys.arch()) || IsAdapter(keys) || KvWidthPerLayer(keys.arch())) return;
  const KeyValue* heads_kv = keys.FindArch("attention.head_count");
  const KeyValue* kv_heads_kv = keys.FindArch("attention.head_count_kv");
  const KeyValue* at = kv_heads_kv != nullptr ? kv_heads_kv : heads_kv;
  if (heads_kv == nullptr || at->type() != ValueType::kArray) return;  // one count for every layer
  const std::optional<uint32_t> blocks = keys.U32(keys.FindArch("block_count"));
  if (!blocks || *blocks == 0 || *blocks > kLlamaMaxLayers) return;  // GG4008, GG4011, GG4009
  const uint32_t n_layer = *blocks;
  const std::vector<const TensorInfo*> kv_tensors = KvTensorsByLayer(ctx.header, n_layer);
  std::optional<uint32_t> first;  // the first attention layer with K/V heads
  uint64_t first_count = 0;
  for (uint32_t il = 0; il < n_layer; ++il) {
    if (kv_tensors[il] == nullptr) continue;
    const std::optional<uint64_t> count = HeadsOfLayer(heads_kv, kv_heads_kv, il, n_layer).kv_heads;
    if (!count) return;  // a shape llama.cpp refuses: GG4004, GG4010
    if (*count == 0) continue;
    if (!first) {
      first = il;
      first_count = *count;
      continue;
    }
    if (*count == first_count) continue;
    ctx.sink.Add(RuleId::kKvHeadsPerLayer, PerLayerOffset(*at, il),
                 absl::StrCat("'", EscapeForDisplay(at->key(), 96), "' is ", *count, " for layer ", il, " and ",
                              first_count, " for layer ", *first, ", both with attention K/V tensors ('",
                              EscapeForDisplay(kv_tensors[il]->name, 64), "'): llama.cpp's ",
                              EscapeForDisplay(keys.arch(), 64),
                              " code gives every layer's K/V projections layer 0's width but sizes each layer's K/V "
                              "cache by its own count, and aborts (GGML_ASSERT in ggml_set_rows or ggml_reshape) "
                              "when a context is created"));
    return;  // one is enough: llama.cpp dies at the first
  }
}

// Why ggml's CPU backend cannot compute with a weight of this type, or
// empty. Integer and f64 types have no vec_dot and no conversion to float in
// ggml-cpu's type traits, Q8_1 and Q8_K are the activations' block formats
// (vec_dot_type of other types) with no vec_dot of their own: a matrix
// multiplication calls the missing function (SIGSEGV), get_rows aborts
// (GGML_ABORT in ops.cpp) or the scheduler finds no backend for it
// (GGML_ASSERT(*cur_backend_id != -1)), element-wise ops abort.
std::string_view NoCpuKernel(uint32_t type) {
  switch (type) {
    case 9:   // Q8_1
    case 15:  // Q8_K
      return "an activation block format with no dot product of its own";
    case 24:  // I8
    case 25:  // I16
    case 26:  // I32
    case 27:  // I64
    case 28:  // F64
      return "a type with no dot product and no conversion to float in ggml-cpu";
    default:
      return {};
  }
}

// A name llama.cpp gives the tensors of a model (LLM_TENSOR_NAMES, less the
// ".weight"/".bias" suffix): per layer "blk.N." (T5's "enc.blk.N." and
// "dec.blk.N.", WavTokenizer's "posnet.N." and "convnext.N."), or one of the
// model-wide names. llama.cpp creates no tensor of another name and refuses
// a file that has one ("wrong number of tensors"), before it computes.
bool IsModelTensorName(std::string_view name) {
  for (std::string_view prefix : {"blk.", "enc.blk.", "dec.blk.", "posnet.", "convnext."}) {
    if (name.substr(0, prefix.size()) == prefix) return true;
  }
  const size_t dot = name.rfind('.');
  if (dot == std::string_view::npos) return false;
  const std::string_view base = name.substr(0, dot);
  for (std::string_view known :
       {"altup_proj", "altup_unembd_proj", "cls", "cls.norm", "cls.output", "conv1d", "dec.output_norm", "dense_2",
        "dense_3", "enc.output_norm", "output", "output_norm", "per_layer_model_proj", "per_layer_proj_norm",
        "per_layer_token_embd", "position_embd", "rope_factors_long", "rope_factors_short", "rope_freqs",
        "token_embd", "token_embd_norm", "token_types"}) {
    if (base == known) return true;
  }
  return false;
}

// Every tensor of a model llama.cpp loads is computed with (a tensor the
// architecture does not create makes the load fail first), and ggml-cpu
// has no kernel for some stored types in any op; 1-D tensors (norms,
// biases, scales, rope factors) go into element-wise ops whose CPU kernels
// take an f32 weight with f32 activations only (binary_op: "unsupported
// types", GGML_ABORT; ggml_rope_ext: GGML_ASSERT(c->type == GGML_TYPE_F32)).
// llama.cpp's converters and llama-quantize keep every 1-D tensor in F32
// ("most of the codebase that takes in 1D tensors or norms only handles F32
// tensors", convert_hf_to_gguf.py). Adapters, projectors and other files are
// not models and pass.
void CheckUncomputableTensorTypes(RuleContext& ctx, const KeyIndex& keys) {
  const ArchInfo* info = keys.arch_info();
  if (info == nullptr || info->kind != ArchKind::kModel || IsAdapter(keys)) return;  // refused first, or not a model
  constexpr uint32_t kF32 = 0;
  RuleReporter report(ctx, RuleId::kUncomputableTensorType);
  for (const TensorInfo& t : ctx.header.tensors) {
    const GgmlTypeInfo* type = FindGgmlType(t.ggml_type);
    if (type == nullptr || type->status == GgmlTypeStatus::kRemoved) continue;  // GG5007, GG5008
    if (!IsModelTensorName(t.name)) continue;
    const std::string_view no_kernel = NoCpuKernel(t.ggml_type);
    if (!no_kernel.empty()) {
      report.Add(t.type_offset(), [&] {
        return absl::StrCat("tensor '", EscapeForDisplay(t.name, 64), "' is ", Sv(type->name), ", ", Sv(no_kernel),
                            ": llama.cpp loads the model and its CPU backend dies computing with it (SIGSEGV in a "
                            "matrix multiplication, GGML_ABORT or GGML_ASSERT elsewhere) when a token is decoded or a "
                            "context created");
      });
    } else if (t.n_dims == 1 && t.ggml_type != kF32) {
      report.Add(t.type_offset(), [&] {
        return absl::StrCat("tensor '", EscapeForDisplay(t.name, 64), "' is a 1-D ", Sv(type->name),
                            " weight (a norm, bias, scale or rope factor): llama.cpp's CPU kernels multiply or add "
                            "such weights in f32 only and abort (GGML_ABORT(\"binary_op: unsupported types\") when a "
                            "token is decoded, GGML_ASSERT in ggml_rope_ext while loading); llama.cpp's converters and "
                            "llama-quantize keep every 1-D tensor in F32");
      });
    }
  }
}

// ggml_norm and ggml_rms_norm carry the epsilon as an op parameter, and the
// kernel of every ggml backend asserts that it is not negative (ggml-cpu's
// ops.cpp: GGML_ASSERT(eps >= 0.0f)) when the graph first runs: the first
// decoded token. llama.cpp reads both keys as exactly f32 (another type is
// refused, GG4004) and checks no sign; NaN and infinities are GG3006's, and
// 0 or a huge value, which compute, stay GG4011 warnings.
void CheckNormEpsilon(RuleContext& ctx, const KeyIndex& keys) {
  const ArchInfo* info = keys.arch_info();
  if (info == nullptr || info->kind != ArchKind::kModel || IsAdapter(keys) || ctx.header.tensors.empty()) return;
  for (std::string_view suffix : {"attention.layer_norm_epsilon", "attention.layer_norm_rms_epsilon"}) {
    const KeyValue* kv = keys.FindArch(suffix);
    if (kv == nullptr || kv->type() != ValueType::kFloat32 || !ArchReadsKey(info, suffix)) continue;
    const std::optional<double> eps = kv->value().AsDouble();
    if (!eps || !std::isfinite(*eps) || !(*eps < 0)) continue;
    ctx.sink.Add(RuleId::kNegativeNormEpsilon, kv->value().offset,
                 absl::StrCat("'", EscapeForDisplay(kv->key(), 96), "' is ", *eps,
                              ": llama.cpp passes it to ggml_norm / ggml_rms_norm, whose kernels abort on a negative "
                              "epsilon (GGML_ASSERT(eps >= 0.0f)) when the first token is decoded"));
  }
}

// The simple asserts of an architecture's load_arch_hparams on a value it
// has just read (generated: ArchAsserts). Only a value in the file is judged:
// where the key is absent the loader's default stands, and the generator
// keeps only asserts at the function's top level, which run for every file.
// The value is read as llama.cpp reads it: a key of another type is refused
// (GG4004), not asserted on.
void CheckArchAsserts(RuleContext& ctx, const KeyIndex& keys) {
  const ArchInfo* info = keys.arch_info();
  if (info == nullptr || info->kind != ArchKind::kModel || IsAdapter(keys) || !ReadsHyperparameters(ctx.header, keys)) {
    return;
  }
  for (const ArchAssert& a : ArchAsserts(keys.arch())) {
    const KeyValue* kv = keys.FindArch(a.key);
    if (kv == nullptr) continue;
    std::optional<KeyRule> rule = FindKeyRule(CStringKey(kv->key()), keys.arch(), info);
    if (!rule || !AcceptsValue(*rule, kv->value()) || kv->type() == ValueType::kArray) continue;
    const Value v = kv->value();
    std::optional<double> x;  // what the loader's field holds
    if (v.type == ValueType::kBool) {
      x = v.bytes.empty() ? std::nullopt : std::optional<double>(v.bytes[0] != 0 ? 1 : 0);
    } else if (v.type == ValueType::kFloat32 || v.type == ValueType::kFloat64) {
      x = v.AsDouble();
    } else if (const std::optional<int64_t> i = v.AsSigned()) {
      x = static_cast<double>(*i);
    } else if (const std::optional<uint64_t> u = v.AsUnsigned()) {
      x = static_cast<double>(*u);
    }
    if (!x) continue;
    bool holds = true;
    const char* op = "";
    switch (a.op) {
      case AssertOp::kTrue: holds = *x != 0; op = ""; break;
      case AssertOp::kGreater: holds = *x > a.number; op = " > "; break;
      case AssertOp::kGreaterEqual: holds = *x >= a.number; op = " >= "; break;
      case AssertOp::kLess: holds = *x < a.number; op = " < "; break;
      case AssertOp::kLessEqual: holds = *x <= a.number; op = " <= "; break;
      case AssertOp::kEqual: holds = *x == a.number; op = " == "; break;
      case AssertOp::kNotEqual: holds = *x != a.number; op = " != "; break;
    }
    if (holds) continue;
    ctx.sink.Add(RuleId::kHyperparameterAssert, v.offset,
                 absl::StrCat("'", EscapeForDisplay(kv->key(), 96), "' is ", *x, ": llama.cpp's ",
                              EscapeForDisplay(keys.arch()), " loader asserts it", a.op == AssertOp::kTrue ? " is true" : op,
                              a.op == AssertOp::kTrue ? "" : absl::StrCat(a.number),
                              " as it reads the hyperparameters (GGML_ASSERT: the process aborts)"));
  }
  // Asserts and traps the generator's simple form does not take, written by
  // hand from llama.cpp 3f545becc (src/models/*.cpp load_arch_hparams). Each
  // key is read as exactly u32 there.
  const std::string_view arch = keys.arch();
  auto u32 = [&](std::string_view suffix) { return keys.U32(keys.FindArch(suffix)); };
  auto flag = [&](std::string_view suffix, std::string why) {
    const KeyValue* kv = keys.FindArch(suffix);
    ctx.sink.Add(RuleId::kHyperparameterAssert, kv->value().offset,
                 absl::StrCat("'", EscapeForDisplay(kv->key(), 96), "' ", why));
  };
  // qwen35, qwen35moe, qwen3next, minimax-01: without recurrent_layers the
  // loader marks layers by (i + 1) % full_attn_interval: 0 divides by zero
  // (SIGFPE) when the first layer is marked.
  if ((arch == "qwen35" || arch == "qwen35moe" || arch == "qwen3next" || arch == "minimax-01") &&
      keys.FindArch("attention.recurrent_layers") == nullptr && u32("full_attention_interval") == 0u) {
    flag("full_attention_interval", "is 0 and attention.recurrent_layers is absent: llama.cpp's loader computes "
                                    "(i + 1) % full_attn_interval for every layer, an integer division by zero (SIGFPE)");
  }
  if (arch == "nanbeige") {
    // GGML_ASSERT(n_loops_u >= 1), then n_layer() * n_loops <= LLAMA_MAX_LAYERS.
    const std::optional<uint32_t> loops = u32("num_loops");
    const std::optional<uint32_t> layers = u32("block_count");
    if (loops == 0u) {
      flag("num_loops", "is 0: llama.cpp's nanbeige loader asserts num_loops >= 1 (GGML_ASSERT: the process aborts)");
    } else if (loops && layers && uint64_t{*loops} * *layers > kLlamaMaxLayers) {
      flag("num_loops", absl::StrCat("is ", *loops, " for ", *layers, " blocks: llama.cpp's nanbeige loader asserts ",
                                     "blocks x loops <= ", kLlamaMaxLayers, " (LLAMA_MAX_LAYERS; GGML_ASSERT)"));
    }
  }
  // dflash, when hyper_connection.count > 0 (a DSV4 draft): asserts
  // attention.output_group_count > 0 ("avoid div by zero") and
  // attention.sliding_window > 0, both read as u32 in that branch.
  if (arch == "dflash" && u32("hyper_connection.count").value_or(0) > 0) {
    for (std::string_view suffix : {"attention.output_group_count", "attention.sliding_window"}) {
      if (u32(suffix) == 0u) {
        flag(suffix, "is 0 with hyper_connection.count above 0: llama.cpp's dflash loader asserts it is above 0 "
                     "(GGML_ASSERT: the process aborts)");
      }
    }
  }
  if (arch == "gemma-embedding") {
    // GGML_ASSERT(dense_2_feat_in == 0 || == n_embd), and dense_3_feat_out.
    const std::optional<uint32_t> n_embd = u32("embedding_length");
    for (std::string_view suffix : {"dense_2_feat_in", "dense_3_feat_out"}) {
      const std::optional<uint32_t> v = u32(suffix);
      if (v && n_embd && *v != 0 && *v != *n_embd) {
        flag(suffix, absl::StrCat("is ", *v, ", neither 0 nor embedding_length ", *n_embd,
                                  ": llama.cpp's gemma-embedding loader asserts it (GGML_ASSERT)"));
      }
    }
  }
  // The common part of load_hparams, for wavtokenizer-dec only:
  // GGML_ASSERT(hparams.posnet.n_layer <= hparams.n_layer_all), and the same
  // for convnext (each read as exactly u32, like block_count).
  if (arch != "wavtokenizer-dec") return;
  const std::optional<uint32_t> blocks = u32("block_count");
  for (std::string_view suffix : {"posnet.block_count", "convnext.block_count"}) {
    const std::optional<uint32_t> n = u32(suffix);
    if (!blocks || !n || *n <= *blocks) continue;
    flag(suffix, absl::StrCat("is ", *n, ", above block_count ", *blocks,
                              ": llama.cpp's load_hparams asserts it is not (GGML_ASSERT: the process aborts)"));
  }
}

}  // namespace

void CheckLoaderAsserts(RuleContext& ctx, const KeyIndex& keys) {
  CheckArchAsserts(ctx, keys);
  CheckTensorDataAlignment(ctx, keys);
  CheckWordPieceByteTokens(ctx, keys);
  CheckNextnLayers(ctx, keys);
  CheckRopeScalingType(ctx, keys);
  CheckExpertCounts(ctx, keys);
  CheckKvHeadsPerLayer(ctx, keys);
  CheckUncomputableTensorTypes(ctx, keys);
  CheckNormEpsilon(ctx, keys);
}

}  // namespace ggufguard
