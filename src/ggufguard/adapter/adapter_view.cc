#include "ggufguard/base/text.h"
#include "ggufguard/adapter/adapter_view.h"

#include <algorithm>
#include <climits>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "ggufguard/rules/known_keys.h"
#include "ggufguard/rules/rules.h"

namespace ggufguard {
namespace {

// Names as the loaders see them: C strings (gguf_get_tensor_name).

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string RemoveAll(std::string_view s, std::string_view what) {
  std::string out;
  out.reserve(s.size());
  for (size_t at = 0; at < s.size();) {
    if (s.substr(at, what.size()) == what) {
      at += what.size();
    } else {
      out.push_back(s[at++]);
    }
  }
  return out;
}

}  // namespace

AdapterKind AdapterKindOf(const KeyIndex& keys) {
  if (IsAdapter(keys)) return AdapterKind::kLora;
  if (CString(keys.arch()) == "controlvector") return AdapterKind::kControlVector;
  return AdapterKind::kNone;
}

LoraTensors BundleLoraTensors(const GgufHeader& header) {
  LoraTensors out;
  absl::flat_hash_map<std::string, size_t> by_name;  // into out.pairs
  for (const TensorInfo& t : header.tensors) {
    const std::string_view name = CString(t.name);
    const bool is_a = EndsWith(name, ".lora_a");
    if (!is_a && !EndsWith(name, ".lora_b")) {
      if (!EndsWith(name, "_norm.weight")) out.unexpected.push_back(&t);
      continue;
    }
    std::string base = RemoveAll(name, is_a ? ".lora_a" : ".lora_b");
    auto [it, inserted] = by_name.try_emplace(base, out.pairs.size());
    if (inserted) out.pairs.push_back(LoraPair{std::move(base)});
    LoraPair& pair = out.pairs[it->second];
    // A second tensor for the same side replaces the first, as the map's
    // assignment does (ggml refuses duplicate names before this, GG5004).
    (is_a ? pair.a : pair.b) = &t;
  }
  std::sort(out.pairs.begin(), out.pairs.end(), [](const LoraPair& x, const LoraPair& y) { return x.name < y.name; });
  return out;
}

bool IsTokenEmbeddingPair(std::string_view name) { return EndsWith(name, "token_embd.weight"); }

std::optional<int64_t> DirectionLayer(std::string_view tensor_name) {
  const std::string_view name = CString(tensor_name);
  const size_t dot = name.find('.');
  if (dot == std::string_view::npos || name.substr(0, dot) != "direction") return std::nullopt;
  std::string_view rest = name.substr(dot + 1);
  // strtol in the C locale: white space, a sign, decimal digits.
  size_t at = 0;
  while (at < rest.size() && (rest[at] == ' ' || (rest[at] >= '\t' && rest[at] <= '\r'))) ++at;
  bool negative = false;
  if (at < rest.size() && (rest[at] == '+' || rest[at] == '-')) negative = rest[at++] == '-';
  const size_t first_digit = at;
  int64_t magnitude = 0;
  for (; at < rest.size() && rest[at] >= '0' && rest[at] <= '9'; ++at) {
    magnitude = magnitude * 10 + (rest[at] - '0');
    if (magnitude > int64_t{INT_MAX} + 1) return std::nullopt;  // stoi: out_of_range
  }
  if (at == first_digit) return std::nullopt;  // stoi: invalid_argument
  const int64_t value = negative ? -magnitude : magnitude;
  if (value > INT_MAX || value < INT_MIN) return std::nullopt;
  return value;
}

std::string ShapeText(const std::array<uint64_t, kMaxDims>& ne) {
  return absl::StrCat("[", ne[0], ", ", ne[1], ", ", ne[2], ", ", ne[3], "]");
}

uint32_t GgmlNDims(const TensorInfo& tensor) {
  const std::array<uint64_t, kMaxDims> ne = tensor.dims();
  for (uint32_t i = kMaxDims; i > 1; --i) {
    if (ne[i - 1] > 1) return i;
  }
  return 1;
}

}  // namespace ggufguard
