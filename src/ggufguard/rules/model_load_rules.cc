// 9160, 9161 and 9165: what llama.cpp's model loader does with a speculative
// drafter's target layers and with a model that lacks its token embedding
// (src/models/dflash.cpp, src/models/eagle3.cpp, llama-graph.cpp; the
// create_tensor of token_embd.weight in each load_arch_tensors).
#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/text.h"
#include "ggufguard/rules/known_keys.h"
#include "ggufguard/rules/rules.h"

namespace ggufguard {
namespace {

// The drafters whose load_arch_hparams read {arch}.target_layers, and the
// key each takes the width of one target layer's hidden state from: dflash
// sets n_embd_inp_enc = (uint32_t) target_layer_ids.size() * n_embd, eagle3
// n_embd_inp = (uint32_t) target_extract_layers.size() * n_embd_tgt.
struct Drafter {
  std::string_view arch;
  std::string_view width_key;  // an "{arch}." suffix, read as a u32
};
constexpr Drafter kDrafters[] = {
    {"dflash", "embedding_length"},
    {"eagle3", "target_hidden_size"},
};

const Drafter* FindDrafter(std::string_view arch) {
  for (const Drafter& d : kDrafters) {
    if (d.arch == arch) return &d;
  }
  return nullptr;
}

// GG9160. llama.cpp asks the target model for the hidden state at each id:
// they are marked in the target context's cparams.embeddings_layer_inp, and
// llm_graph_result::set_outputs reads t_layer_inp[il] for every entry of
// that list. t_layer_inp holds LLAMA_MAX_LAYERS + 1 tensors, so an id of 512
// or more reads past it, and no model llama.cpp loads has such a layer. Nothing checks the ids first: the drafter loads, and the target's
// first decode reads out of bounds. A negative id (an i32 element) names
// no layer either.
void CheckTargetLayers(RuleContext& ctx, const KeyValue& kv) {
  const Value v = kv.value();
  const ArrayView& a = v.array;
  if (a.element_type != ValueType::kInt32 && a.element_type != ValueType::kUint32) return;  // get_arr refuses: GG4004
  RuleReporter report(ctx, RuleId::kDrafterTargetLayer);
  for (uint64_t i = 0; i < a.count && report.enabled(); ++i) {
    const uint32_t raw = a.ScalarAt<uint32_t>(i);
    const int64_t id = a.element_type == ValueType::kInt32 ? int64_t{static_cast<int32_t>(raw)} : int64_t{raw};
    if (id >= 0 && id < kLlamaMaxLayers) continue;
    report.Add(a.elements_offset + 4 * i, [&] {
      return absl::StrCat(EscapeForDisplay(kv.key(), 80), "[", i, "] is ", id,
                          ": a drafter's target layer must be a layer of a model llama.cpp loads, 0 to ",
                          kLlamaMaxLayers - 1, " (LLAMA_MAX_LAYERS); llama.cpp does not check it, and the target's "
                          "capture of that layer reads past its per-layer list of ", kLlamaMaxLayers + 1, " tensors");
    });
  }
}

// GG9161 (llama.cpp PR 29286 adds the check upstream). The width is a
// uint32_t product: past 2^32 it wraps, and the encoder's input and the fc
// projection are shaped by the wrapped value while the target hands over
// count * width floats per token.
void CheckInputWidth(RuleContext& ctx, const KeyIndex& keys, const Drafter& drafter, const KeyValue& layers) {
  const KeyValue* width_kv = keys.FindArch(drafter.width_key);
  const std::optional<uint32_t> width = keys.U32(width_kv);
  if (!width) return;  // absent or another type: GG4008/GG4004
  const uint64_t count = static_cast<uint32_t>(layers.value().array.count);  // (uint32_t) size()
  const uint64_t product = count * *width;  // both below 2^32: no overflow in 64 bits
  if (product <= UINT32_MAX) return;
  ctx.sink.AddLazy(RuleId::kDrafterInputWidth, width_kv->value().offset, [&] {
    return absl::StrCat(count, " target layers x ", EscapeForDisplay(width_kv->key(), 80), " ", *width, " = ",
                        product, " does not fit llama.cpp's 32-bit encoder input width (", Sv(drafter.arch),
                        "'s load_arch_hparams multiplies them as uint32_t): it wraps to ",
                        product & UINT32_MAX, ", and the fusion input is sized by that while the target hands over ",
                        product, " values per token (llama.cpp PR 29286)");
  });
}

// Where the loader creates token_embd.weight with TENSOR_NOT_REQUIRED: the
// drafters share the target model's embedding (dflash.cpp, eagle3.cpp), as
// do the next-token-prediction heads (nemotron_h_mtp.cpp).
bool EmbeddingIsOptional(std::string_view arch) {
  return FindDrafter(arch) != nullptr || arch.find("mtp") != std::string_view::npos;
}

// GG9165. load_arch_tensors creates token_embd.weight {n_embd, n_vocab}
// with flags 0 for the model architectures (the generated table's
// token_embd_by_vocab: every creation in the architecture's loader has that
// shape); create_tensor of a missing required tensor throws ("tensor
// 'token_embd.weight' not found", the loader oracle's llama.cpp says). A
// model sliced or pruned by hand loses it. Split models are left to the set
// (the tensor may be in another shard), and so are adapters and
// projectors, which hold no model.
void CheckTokenEmbedding(RuleContext& ctx, const KeyIndex& keys) {
  const GgufHeader& h = ctx.header;
  const ArchInfo* info = keys.arch_info();
  if (h.tensors.empty() || info == nullptr || !RequiresTokenEmbedding(info->name)) return;
  if (IsAdapter(keys) || ExactU16(keys.Find("split.count")).value_or(1) > 1) return;
  if (!ctx.sink.Enabled(RuleId::kMissingTokenEmbedding)) return;
  for (const TensorInfo& t : h.tensors) {
    if (CString(t.name) == "token_embd.weight") return;  // weights_map is keyed by the C string
  }
  ctx.sink.AddLazy(RuleId::kMissingTokenEmbedding, h.tensors.front().offset, [&] {
    return absl::StrCat("none of the ", h.tensors.size(), " tensors is token_embd.weight, which llama.cpp's ",
                        Sv(info->name), " loader requires (it throws \"tensor 'token_embd.weight' not found\"): a "
                        "model sliced without its token embedding cannot be loaded");
  });
}

}  // namespace

bool RequiresTokenEmbedding(std::string_view arch) {
  const ArchInfo* info = FindArchInfo(arch);
  return info != nullptr && info->kind == ArchKind::kModel && info->token_embd_by_vocab &&
         !EmbeddingIsOptional(info->name);
}

void CheckModelLoad(RuleContext& ctx, const KeyIndex& keys) {
  if (const Drafter* drafter = FindDrafter(CString(keys.arch()))) {
    const KeyValue* layers = keys.FindArch("target_layers");
    if (layers != nullptr && layers->type() == ValueType::kArray) {
      CheckTargetLayers(ctx, *layers);
      CheckInputWidth(ctx, keys, *drafter, *layers);
    }
  }
  CheckTokenEmbedding(ctx, keys);
}

}  // namespace ggufguard
