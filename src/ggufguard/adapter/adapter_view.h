// What llama.cpp makes of an adapter file's tensors, in one place for the
// adapter rules (rules/adapter_rules.cc) and the judge of an adapter
// against its base model (adapter/base_model.h).
//
// Two kinds of adapter:
// - a LoRA adapter (general.type "adapter", adapter.type "lora"), loaded by
//   llama_adapter_lora_init_impl (src/llama-adapter.cpp): each tensor is
//   NAME.lora_a or NAME.lora_b, bundled into a pair for the base model's
//   tensor NAME;
// - a control vector (general.architecture "controlvector", written by
//   llama-cvector-generator and repeng), loaded by
//   common_control_vector_load_one (common/common.cpp): each tensor is
//   direction.N, a 1-D f32 vector for layer N >= 1. That loader reads no
//   metadata at all.
#ifndef GGUFGUARD_ADAPTER_ADAPTER_VIEW_H_
#define GGUFGUARD_ADAPTER_ADAPTER_VIEW_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ggufguard/format/header.h"

namespace ggufguard {

class KeyIndex;

enum class AdapterKind : uint8_t { kNone, kLora, kControlVector };

// A LoRA adapter when it says it is one in either key (IsAdapter), a control
// vector when its architecture is "controlvector".
AdapterKind AdapterKindOf(const KeyIndex& keys);

// One base-model tensor's pair, as the loader bundles them: every ".lora_a"
// in a name ending with it removed gives NAME (replace_all, so
// "x.lora_a.lora_a" bundles under "x"). `a` or `b` is null when the file
// lacks it.
struct LoraPair {
  std::string name;  // the base model's tensor
  const TensorInfo* a = nullptr;
  const TensorInfo* b = nullptr;
};

struct LoraTensors {
  std::vector<LoraPair> pairs;  // by name, as the loader's std::map holds them
  // Tensors ending in none of .lora_a, .lora_b or _norm.weight: the loader
  // throws "has unexpected suffix" on the first.
  std::vector<const TensorInfo*> unexpected;
};
// Memory: one pair per tensor at most, names copied (bounded by the parsed
// header, itself bounded by the policy).
LoraTensors BundleLoraTensors(const GgufHeader& header);

// "token_embd.weight" pairs have B and A flipped (llm_build_inp_embd).
bool IsTokenEmbeddingPair(std::string_view name);

// The layer a control vector's tensor name gives, as the loader reads it:
// std::stoi of what follows "direction." (leading white space, a sign,
// then digits; what follows the digits is ignored). nullopt when stoi
// throws (no digits, out of int's range) or the name does not start with
// "direction.".
std::optional<int64_t> DirectionLayer(std::string_view tensor_name);

// "[ne0, ne1, ne2, ne3]", for messages.
std::string ShapeText(const std::array<uint64_t, kMaxDims>& ne);

// ggml_n_dims: the number of dimensions up to the last one above 1 (at
// least 1): a [4096, 1] tensor is 1-D.
uint32_t GgmlNDims(const TensorInfo& tensor);

}  // namespace ggufguard

#endif  // GGUFGUARD_ADAPTER_ADAPTER_VIEW_H_
