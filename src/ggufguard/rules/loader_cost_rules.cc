// GG9162: the time ggml's own reader (gguf_init_from_file_impl, the first
// thing llama.cpp's loader and every ggml program call) spends proving the
// header has no duplicate: it compares each key with every key before it
// (std::string ==, which compares the bytes of keys of one length) and each
// tensor name with every name before it (strcmp of the ggml_tensor names).
// Quadratic: 40,000 tensors cost it seconds, 100,000 about twenty, a million
// keys over half an hour, where this validator, whose index is a hash table,
// spends milliseconds.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ggufguard/rules/rules.h"

namespace ggufguard {
namespace {

// Nanoseconds per comparison, measured with bench/measure_loader_cost.sh
// against the libggml-base.so of node-llama-cpp 3.21.1 (fuzz/oracle) on an
// idle 2-core VM (docs/rules/GG9162.md has the table): the low end of what
// was measured, so that the estimate errs short and flags only headers that
// cost at least that much.
constexpr double kNsPerTensorPair = 3.0;      // 3.0-3.8 ns from 5,000 to 40,000 tensors, names of 16 to 63 bytes
constexpr double kNsPerKeyPair = 4.0;         // 3.9-4.3 ns, keys of 16 bytes
constexpr double kNsPerEqualKeyByte = 0.025;  // keys of one length: 27-32 ns a pair at 1 KiB, 490-1100 ns at 16 KiB

double Pairs(uint64_t n) { return static_cast<double>(n) * static_cast<double>(n > 0 ? n - 1 : 0) / 2; }

// The bytes std::string == reads over all pairs of keys of one length, at
// most: a pair of length L compares up to L bytes. Sorting the lengths
// costs n log n, and runs only when the cheap bound already exceeds the
// limit (a header of tens of thousands of keys).
double EqualLengthBytes(const GgufHeader& h) {
  std::vector<uint32_t> lengths;
  lengths.reserve(h.kvs.size());
  for (const KeyValue& kv : h.kvs) lengths.push_back(static_cast<uint32_t>(kv.key().size()));
  std::sort(lengths.begin(), lengths.end());
  double bytes = 0;
  for (size_t i = 0; i < lengths.size();) {
    size_t j = i;
    while (j < lengths.size() && lengths[j] == lengths[i]) ++j;
    bytes += Pairs(j - i) * lengths[i];
    i = j;
  }
  return bytes;
}

}  // namespace

void CheckLoaderCost(RuleContext& ctx) {
  const GgufHeader& h = ctx.header;
  if (!ctx.sink.Enabled(RuleId::kLoaderScanCost)) return;
  const double limit_ns = static_cast<double>(ctx.policy.limits.max_loader_scan_ms) * 1e6;
  const double tensor_ns = Pairs(h.tensors.size()) * kNsPerTensorPair;
  size_t longest_key = 0;
  for (const KeyValue& kv : h.kvs) longest_key = std::max(longest_key, kv.key().size());
  const double key_pairs = Pairs(h.kvs.size());
  // Between two bounds: every pair compared at no byte, and every pair at
  // the longest length. Only a header between them pays for the exact sum.
  double key_ns = key_pairs * kNsPerKeyPair;
  if (tensor_ns + key_ns < limit_ns) {
    if (tensor_ns + key_ns + key_pairs * kNsPerEqualKeyByte * static_cast<double>(longest_key) < limit_ns) return;
    key_ns += EqualLengthBytes(h) * kNsPerEqualKeyByte;
    if (tensor_ns + key_ns < limit_ns) return;
  }
  // The count that costs more is the one to point at (v1 counts are 32 bits).
  const uint64_t at = tensor_ns >= key_ns ? 8 : (h.version == 1 ? 12 : 16);
  ctx.sink.AddLazy(RuleId::kLoaderScanCost, at, [&] {
    return absl::StrFormat(
        "%d tensors and %d keys: ggml's gguf_init, the first step of every llama.cpp load, compares each name with "
        "every one before it to refuse duplicates, at least %.3g seconds here (%.3g for the tensor names, %.3g for the "
        "keys, at the cost measured on a 2-core VM), above the policy's max_loader_scan_ms %d; real models have at "
        "most a few thousand tensors and a hundred keys, which it reads in milliseconds",
        h.tensors.size(), h.kvs.size(), (tensor_ns + key_ns) / 1e9, tensor_ns / 1e9, key_ns / 1e9,
        ctx.policy.limits.max_loader_scan_ms);
  });
}

}  // namespace ggufguard
