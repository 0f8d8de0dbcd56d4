#include "ggufguard/findings/profile.h"

#include <array>

namespace ggufguard {
namespace {

constexpr std::array<std::string_view, kProfileCount> kNames = {"llama.cpp", "gguf",       "ollama",
                                                                 "vllm",      "mistral.rs", "candle"};

}  // namespace

std::string_view ProfileName(Profile p) { return kNames[static_cast<size_t>(p)]; }

std::optional<Profile> ParseProfile(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (name == kNames[i]) return static_cast<Profile>(i);
  }
  return std::nullopt;
}

std::string_view ProfileNamesForHelp() { return "llama.cpp, gguf, ollama, vllm, mistral.rs, candle or all"; }

bool JudgesLlmSemantics(RuleId id) {
  const auto n = static_cast<uint16_t>(id);
  // 4001-4003 are general.alignment, which ggml itself reads: structural.
  if (n >= 4004 && n <= 4999) return true;  // known keys, hyperparameters, split, quantization
  if (n >= 7000 && n <= 7999) return true;  // the vocabulary
  switch (id) {
    case RuleId::kKvCacheEstimate:   // a KV cache from the hyperparameters
    case RuleId::kVocabSizeLimit:    // the vocabulary's size
    case RuleId::kDrafterTargetLayer:      // 9160-9165 but GG9162 (ggml's own reader's cost):
    case RuleId::kDrafterInputWidth:       // what llama.cpp's model and vocabulary loaders
    case RuleId::kSamplingValue:           // and its sampler make of the metadata
    case RuleId::kPhi3TokenMissing:
    case RuleId::kMissingTokenEmbedding:
      return true;
    default:
      break;
  }
  if (n == 9107) return true;               // a split model's first shard under a name llama.cpp's loader cannot use
  if (n >= 9140 && n <= 9149) return true;  // what llama.cpp's clip loader refuses or crashes on
  if (n >= 9150 && n <= 9159) return true;  // adapters, as llama.cpp loads and applies them
  return n >= 9050 && n <= 9099;  // what llama.cpp's loader aborts on (fuzz/oracle)
}

bool JudgesGenericGgmlReaders(RuleId id) { return id == RuleId::kUnpaddedEnd; }

}  // namespace ggufguard
