#include "ggufguard/adapter/base_model.h"

#include "absl/strings/str_cat.h"
#include "ggufguard/adapter/adapter_view.h"
#include "ggufguard/base/text.h"
#include "ggufguard/findings/profile.h"
#include "ggufguard/rules/known_keys.h"

namespace ggufguard {
namespace {

// What llama_adapter_lora_init_impl checks against the loaded model, and
// what it did not check before llama.cpp #29128 (the expert count).
void JudgeLora(ValidatedFile& adapter, const KeyIndex& keys, const BaseModel& base, const Policy& policy) {
  const std::string base_label = EscapeForDisplay(base.label, kMaxPathBytes);
  const std::string_view arch = CString(keys.arch());
  if (arch != base.architecture) {
    const uint64_t at = keys.arch_kv() != nullptr ? keys.arch_kv()->offset() : 0;
    adapter.AddFindingLazy(policy, RuleId::kAdapterBaseArchitecture, at, [&] {
      return absl::StrCat("the LoRA adapter is for architecture '", EscapeForDisplay(arch),
                                    "' and its base model ", base_label, " is '",
                                    EscapeForDisplay(base.architecture),
                                    "': llama.cpp throws (model arch and LoRA arch mismatch)");
    });
  }
  const LoraTensors lora = BundleLoraTensors(adapter.report().header);
  for (const LoraPair& pair : lora.pairs) {
    if (pair.a == nullptr || pair.b == nullptr) continue;  // GG9150
    auto found = base.tensors.find(pair.name);
    if (found == base.tensors.end()) {
      adapter.AddFindingLazy(policy, RuleId::kAdapterBaseTensorMissing, pair.a->offset, [&] {
        return absl::StrCat("LoRA pair for '", EscapeForDisplay(pair.name), "', a tensor base model ", base_label,
                            " does not have: llama.cpp throws");
      });
      continue;
    }
    const std::array<uint64_t, kMaxDims>& model = found->second;
    const std::array<uint64_t, kMaxDims> a = pair.a->dims(), b = pair.b->dims();
    // The token embedding's pair is flipped (llm_build_inp_embd).
    const bool fits = IsTokenEmbeddingPair(pair.name) ? model[0] == b[1] && model[1] == a[1]
                                                      : model[0] == a[0] && model[1] == b[1];
    if (!fits) {
      adapter.AddFindingLazy(policy, RuleId::kAdapterBaseShape, pair.a->offset, [&] {
        return absl::StrCat("LoRA pair for '", EscapeForDisplay(pair.name), "' (lora_a ", ShapeText(a), ", lora_b ",
                            ShapeText(b), ") does not fit its base tensor ", ShapeText(model), " in ", base_label,
                            ": llama.cpp throws (incorrect shape)");
      });
      continue;
    }
    if (a[2] != model[2] || b[2] != model[2]) {
      adapter.AddFindingLazy(policy, RuleId::kAdapterBaseExpertCount, pair.a->offset, [&] {
        return absl::StrCat("LoRA pair for '", EscapeForDisplay(pair.name), "' holds ", a[2], " and ", b[2],
                            " experts (ne[2] of lora_a, lora_b) where base tensor ", ShapeText(model), " in ",
                            base_label, " holds ", model[2],
                            ": llama.cpp before the fix of #29128 loads it, and its CPU MUL_MAT_ID then writes out "
                            "of bounds");
      });
    }
  }
}

// What llama_adapter_cvec::apply checks, and what it silently ignores.
void JudgeControlVector(ValidatedFile& adapter, const BaseModel& base, const Policy& policy) {
  const std::string base_label = EscapeForDisplay(base.label, kMaxPathBytes);
  bool length_judged = false;
  for (const TensorInfo& t : adapter.report().header.tensors) {
    const std::optional<int64_t> layer = DirectionLayer(t.name);
    if (!layer || *layer <= 0 || t.ggml_type != 0 || GgmlNDims(t) != 1) continue;  // GG9151
    const uint64_t length = t.dims()[0];
    if (!length_judged) {
      // The loader takes the first direction's length as the vector's
      // n_embd (a direction of another length is GG9151).
      length_judged = true;
      if (length != base.n_embd) {
        adapter.AddFinding(policy, RuleId::kControlVectorBaseEmbedding, t.offset,
                           absl::StrCat("control vector directions hold ", length, " values and base model ",
                                        base_label, " has embedding_length ", *base.n_embd,
                                        ": llama.cpp refuses to apply it (n_embd does not match)"));  // once
      }
    }
    if (static_cast<uint64_t>(*layer) >= *base.n_layer) {
      adapter.AddFindingLazy(policy, RuleId::kControlVectorUnusedLayer, t.offset, [&] {
        return absl::StrCat("control vector tensor '", EscapeForDisplay(CString(t.name)), "' is for layer ", *layer,
                            " and base model ", base_label, " has ", *base.n_layer,
                            " layers: llama.cpp never applies it");
      });
    }
  }
}

}  // namespace

void AddBaseShard(BaseModel& base, const Report& report, uint32_t shard, uint32_t shards_read) {
  const std::string where = shards_read > 1 ? absl::StrCat("shard ", shard, " of ") : std::string();
  if (!report.header_parsed) {
    base.incomplete.push_back(absl::StrCat("the header of ", where, "the base model did not parse"));
    return;
  }
  const KeyIndex keys(report.header);
  if (shard == 1) {
    base.architecture = std::string(CString(keys.arch()));
    base.n_embd = keys.U32(keys.FindArch("embedding_length"));
    base.n_layer = keys.U32(keys.FindArch("block_count"));
    const std::optional<uint64_t> split_count = ExactU16(keys.Find("split.count"));
    if (split_count.value_or(1) > shards_read) {
      base.incomplete.push_back(absl::StrCat("the base model is shard 1 of ", *split_count,
                                             "; name a shard as its PREFIX-NNNNN-of-NNNNN.gguf file so that "
                                             "every shard is read"));
    }
  }
  for (const TensorInfo& t : report.header.tensors) base.tensors.try_emplace(std::string(CString(t.name)), t.dims());
}

void JudgeAgainstBase(ValidatedFile& adapter, const BaseModel& base, const Policy& policy) {
  if (!adapter.report().header_parsed || !ProfileRuns(policy.profile, RuleId::kAdapterBaseArchitecture)) return;
  const KeyIndex keys(adapter.report().header);
  const AdapterKind kind = AdapterKindOf(keys);
  if (kind == AdapterKind::kNone) return;
  std::vector<std::string> missing = base.incomplete;
  if (base.architecture.empty()) missing.push_back("the base model names no general.architecture");
  if (kind == AdapterKind::kControlVector) {
    if (!base.n_embd) missing.push_back("the base model has no u32 {arch}.embedding_length");
    if (!base.n_layer) missing.push_back("the base model has no u32 {arch}.block_count");
  }
  if (!missing.empty()) {
    for (const std::string& why : missing) {
      adapter.mutable_report().not_checked.push_back(
          absl::StrCat("the adapter against its base model ", EscapeForDisplay(base.label, kMaxPathBytes), ": ", why));
    }
    return;
  }
  if (kind == AdapterKind::kLora) {
    JudgeLora(adapter, keys, base, policy);
  } else {
    JudgeControlVector(adapter, base, policy);
  }
}

}  // namespace ggufguard
