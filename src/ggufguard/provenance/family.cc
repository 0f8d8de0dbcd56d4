#include "ggufguard/provenance/family.h"

#include <array>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ggufguard/base/sv.h"

namespace ggufguard {
namespace {

struct Marker {
  std::string_view spelling;
  std::string_view family;
};

// Most specific first: a Llama 3 template that also writes <|im_start|>
// for a tool result is still llama3's.
constexpr Marker kTemplateMarkers[] = {
    {"<|channel|>", "gpt-oss"},
    {"<|header_start|>", "llama4"},
    {"<|start_header_id|>", "llama3"},
    {"<|im_assistant|>", "kimi"},
    {"<|im_user|>", "kimi"},
    {"<\xef\xbd\x9c" "Assistant\xef\xbd\x9c>", "deepseek"},  // <｜Assistant｜>, fullwidth bars
    {"<\xef\xbd\x9c" "User\xef\xbd\x9c>", "deepseek"},
    {"<|start_of_role|>", "granite"},
    {"<|START_OF_TURN_TOKEN|>", "command-r"},
    {"<start_of_turn>", "gemma"},
    {"[gMASK]", "glm"},
    {"<seed:bos>", "seed-oss"},
    {"<|im_sep|>", "phi4"},
    {"<|im_start|>", "chatml"},
    {"<<SYS>>", "llama2"},
    {"[SYSTEM_PROMPT]", "mistral"},
    {"[AVAILABLE_TOOLS]", "mistral"},
    {"[INST]", "mistral"},
    {"<|end|>", "phi3"},
    {"<|system|>", "zephyr"},
};

// Substrings of a model's names, lower-cased, most specific first.
constexpr Marker kNameMarkers[] = {
    {"kimi", "kimi"},         {"gpt-oss", "gpt-oss"},   {"qwen", "qwen"},         {"llama-4", "llama4"},
    {"llama4", "llama4"},     {"llama-3", "llama3"},    {"llama3", "llama3"},     {"llama 3", "llama3"},
    {"llama-2", "llama2"},    {"llama2", "llama2"},     {"magistral", "mistral"}, {"devstral", "mistral"},
    {"ministral", "mistral"}, {"pixtral", "mistral"},   {"mixtral", "mistral"},   {"mistral", "mistral"},
    {"gemma", "gemma"},       {"phi-4", "phi4"},        {"phi4", "phi4"},         {"phi-3", "phi3"},
    {"phi3", "phi3"},         {"deepseek", "deepseek"}, {"glm", "glm"},           {"granite", "granite"},
    {"command-r", "command-r"}, {"c4ai", "command-r"},  {"smollm", "smollm"},     {"hermes", "hermes"},
    {"nemotron", "nemotron"}, {"seed-oss", "seed-oss"}, {"lfm", "lfm"},           {"olmo", "olmo"},
    {"exaone", "exaone"},     {"internlm", "internlm"}, {"minicpm", "minicpm"},   {"falcon", "falcon"},
};

// general.architecture values, by prefix.
constexpr Marker kArchitectures[] = {
    {"llama4", "llama4"},   {"llama", "llama"},     {"qwen", "qwen"},         {"gemma", "gemma"},
    {"phi3", "phi3"},       {"phi2", "phi"},        {"deepseek", "deepseek"}, {"glm", "glm"},
    {"chatglm", "glm"},     {"gpt-oss", "gpt-oss"}, {"granite", "granite"},   {"command-r", "command-r"},
    {"cohere", "command-r"}, {"smollm", "smollm"},  {"nemotron", "nemotron"}, {"seed_oss", "seed-oss"},
    {"lfm", "lfm"},         {"olmo", "olmo"},       {"exaone", "exaone"},     {"mistral", "mistral"},
    {"internlm", "internlm"}, {"minicpm", "minicpm"}, {"falcon", "falcon"},
};

std::string_view NameFamily(std::string_view name) {
  if (name.empty()) return {};
  // Names are short; a crafted one is cut, not scanned whole.
  const std::string lower = absl::AsciiStrToLower(Sv(name.substr(0, 256)));
  for (const Marker& m : kNameMarkers) {
    if (absl::StrContains(lower, Sv(m.spelling))) return m.family;
  }
  return {};
}

}  // namespace

std::string_view TemplateFamily(std::string_view tmpl) {
  for (const Marker& m : kTemplateMarkers) {
    if (absl::StrContains(Sv(tmpl), Sv(m.spelling))) return m.family;
  }
  return {};
}

std::string ModelFamily(const GgufHeader& header) {
  // One pass over the keys (a header may hold a million): the names that
  // say a family, in the order they are trusted. The first four base
  // models are read; general.base_model.count is not needed for that.
  constexpr std::string_view kKeys[] = {
      "general.base_model.0.name", "general.base_model.0.organization", "general.base_model.0.repo_url",
      "general.base_model.1.name", "general.base_model.1.organization", "general.base_model.1.repo_url",
      "general.base_model.2.name", "general.base_model.2.organization", "general.base_model.2.repo_url",
      "general.base_model.3.name", "general.base_model.3.organization", "general.base_model.3.repo_url",
      "general.name",              "general.basename",                  "general.architecture",
  };
  constexpr size_t kCount = sizeof kKeys / sizeof kKeys[0];
  std::string_view found[kCount] = {};
  for (const KeyValue& kv : header.kvs) {
    const std::string_view key = kv.key();
    if (kv.type() != ValueType::kString || !key.starts_with("general.")) continue;
    for (size_t i = 0; i < kCount; ++i) {
      if (key == kKeys[i] && found[i].empty()) found[i] = kv.value().AsString();
    }
  }
  for (size_t i = 0; i + 1 < kCount; ++i) {
    if (std::string_view f = NameFamily(found[i]); !f.empty()) return std::string(f);
  }
  const std::string arch = absl::AsciiStrToLower(Sv(found[kCount - 1].substr(0, 64)));
  for (const Marker& m : kArchitectures) {
    if (absl::StartsWith(arch, Sv(m.spelling))) return std::string(m.family);
  }
  return {};
}

bool FamiliesAgree(std::string_view model_family, std::string_view tmpl_family) {
  if (model_family.empty() || tmpl_family.empty()) return false;
  if (model_family == tmpl_family) return true;
  static constexpr std::pair<std::string_view, std::string_view> kAgree[] = {
      {"qwen", "chatml"},  {"smollm", "chatml"}, {"hermes", "chatml"}, {"lfm", "chatml"},  {"olmo", "chatml"},
      {"internlm", "chatml"}, {"minicpm", "chatml"}, {"nemotron", "chatml"}, {"phi4", "chatml"},
      {"llama", "llama2"}, {"llama", "llama3"},  {"llama", "chatml"},  {"llama3", "chatml"}, {"kimi", "deepseek"},
  };
  for (const auto& [m, t] : kAgree) {
    if (m == model_family && t == tmpl_family) return true;
  }
  return false;
}

}  // namespace ggufguard
