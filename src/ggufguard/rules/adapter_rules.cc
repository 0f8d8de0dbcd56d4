// 9150-9152: what llama.cpp refuses in an adapter file on its own, before
// any base model is read (adapter/adapter_view.h says what the loaders make
// of the tensors). 9153-9158, the adapter against its base model, are
// adapter/base_model.cc's.
#include <algorithm>
#include <climits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "ggufguard/adapter/adapter_view.h"
#include "ggufguard/base/checked_math.h"
#include "ggufguard/base/text.h"
#include "ggufguard/rules/rules.h"

namespace ggufguard {
namespace {


// What get_kv_str reads: "" for an absent key (a key of another type is
// GG4004's business, and aborts in gguf_get_val_str).
std::optional<std::string_view> StringKey(const KeyIndex& keys, std::string_view key, uint64_t* offset) {
  const KeyValue* kv = keys.Find(key);
  if (kv == nullptr) return std::string_view{};
  *offset = kv->offset();
  if (kv->type() != ValueType::kString) return std::nullopt;
  return CString(kv->value().AsString());
}

// llama_adapter_lora_init_impl's checks that need no base model, in its order.
void CheckLoraAdapter(RuleContext& ctx, const KeyIndex& keys) {
  RuleReporter report(ctx, RuleId::kLoraAdapterRefused);
  if (!report.enabled()) return;
  uint64_t offset = 0;
  std::optional<std::string_view> general_type = StringKey(keys, "general.type", &offset);
  if (general_type && *general_type != "adapter") {
    report.Add(offset, [&] {
      return absl::StrCat("a LoRA adapter whose general.type is '", EscapeForDisplay(*general_type),
                          "', not 'adapter': llama.cpp throws");
    });
  }
  offset = 0;
  std::optional<std::string_view> adapter_type = StringKey(keys, "adapter.type", &offset);
  if (adapter_type && *adapter_type != "lora") {
    report.Add(offset, [&] {
      return absl::StrCat("adapter.type is '", EscapeForDisplay(*adapter_type),
                          "', not 'lora': llama.cpp's only adapter loader throws");
    });
  }
  const KeyValue* invocation = keys.Find("adapter.alora.invocation_tokens");
  if (invocation != nullptr &&
      (invocation->type() != ValueType::kArray || invocation->value().array.element_type != ValueType::kUint32)) {
    report.Add(invocation->offset(), [] {
      return std::string("adapter.alora.invocation_tokens is not an array of u32: llama.cpp throws");
    });
  }
  const LoraTensors lora = BundleLoraTensors(ctx.header);
  for (const TensorInfo* t : lora.unexpected) {
    report.Add(t->offset, [&] {
      return absl::StrCat("LoRA tensor '", EscapeForDisplay(CString(t->name)),
                          "' ends in none of .lora_a, .lora_b, _norm.weight: llama.cpp throws");
    });
  }
  for (const LoraPair& pair : lora.pairs) {
    if (pair.a == nullptr || pair.b == nullptr) {
      const TensorInfo* present = pair.a != nullptr ? pair.a : pair.b;
      report.Add(present->offset, [&] {
        return absl::StrCat("LoRA pair for '", EscapeForDisplay(pair.name), "' has no ",
                            pair.a == nullptr ? "lora_a" : "lora_b", ": llama.cpp throws");
      });
      continue;
    }
    // The token embedding's pair is flipped, and checked against the base
    // model only (adapter/base_model.cc).
    if (IsTokenEmbeddingPair(pair.name)) continue;
    if (pair.a->dims()[1] != pair.b->dims()[0]) {
      report.Add(pair.a->offset, [&] {
        return absl::StrCat("LoRA pair for '", EscapeForDisplay(pair.name), "': lora_a ", ShapeText(pair.a->dims()),
                            " and lora_b ", ShapeText(pair.b->dims()),
                            " disagree on the rank (lora_a.ne[1] != lora_b.ne[0]; an adapter from the old "
                            "finetune example): llama.cpp throws");
      });
    }
  }
}

// common_control_vector_load_one's checks: it stops at the first bad tensor
// and skips the whole file, so llama.cpp's --control-vector fails.
void CheckControlVector(RuleContext& ctx) {
  RuleReporter refused(ctx, RuleId::kControlVectorRefused);
  RuleReporter range(ctx, RuleId::kControlVectorLayerRange);
  if (ctx.header.tensors.empty()) {
    refused.Add(8, [] {  // tensor_count
      return std::string("a control vector with no direction tensor: llama.cpp skips the file");
    });
  }
  std::optional<uint64_t> n_embd;  // the first direction's length
  for (const TensorInfo& t : ctx.header.tensors) {
    const std::string name = EscapeForDisplay(CString(t.name));
    const std::optional<int64_t> layer = DirectionLayer(t.name);
    if (!layer || *layer <= 0) {
      refused.Add(t.offset, [&] {
        return absl::StrCat("control vector tensor '", name,
                            "' is not direction.N with a layer N of at least 1: llama.cpp skips the file");
      });
      continue;
    }
    if (t.ggml_type != 0 || GgmlNDims(t) != 1) {
      refused.Add(t.offset, [&] {
        return absl::StrCat("control vector tensor '", name, "' is not a 1-D f32 vector (", ShapeText(t.dims()),
                            ", ggml type ", t.ggml_type, "): llama.cpp skips the file");
      });
      continue;
    }
    const uint64_t length = t.dims()[0];
    if (!n_embd) {
      n_embd = length;
    } else if (length != *n_embd) {
      refused.Add(t.offset, [&] {
        return absl::StrCat("control vector tensor '", name, "' holds ", length, " values, the first direction ",
                            *n_embd, ": llama.cpp skips the file");
      });
      continue;
    }
    // The loader sizes its buffer to n_embd x N floats, in int: a layer no
    // model has (LLAMA_MAX_LAYERS) costs memory for nothing, and past
    // INT_MAX the product is undefined and the resize throws (an abort).
    if (static_cast<uint64_t>(*layer) >= kLlamaMaxLayers) {
      range.Add(t.offset, [&] {
        const uint64_t floats = SatMul(*n_embd, static_cast<uint64_t>(*layer));
        return absl::StrCat("control vector tensor '", name, "' is for layer ", *layer,
                            ", and no llama.cpp model has more than ", kLlamaMaxLayers,
                            " layers; its loader still allocates n_embd x N = ", floats, " floats",
                            floats > static_cast<uint64_t>(INT_MAX) ? ", a product that overflows int (then aborts)"
                                                                    : "");
      });
    }
  }
}

}  // namespace

void CheckAdapter(RuleContext& ctx, const KeyIndex& keys) {
  switch (AdapterKindOf(keys)) {
    case AdapterKind::kLora:
      CheckLoraAdapter(ctx, keys);
      break;
    case AdapterKind::kControlVector:
      CheckControlVector(ctx);
      break;
    case AdapterKind::kNone:
      break;
  }
}

}  // namespace ggufguard
