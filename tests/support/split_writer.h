// Split sets as llama-gguf-split writes them, for tests and the corpus: each
// part's own KVs, then split.no (from 0), split.count and split.tensors.count
// (the total over every part), then its tensors. Every split key can be
// bent, or left out, to write the defects the set rules look for.
//
// Header-only over gguf_writer.h, so the test binary and make_corpus share it.
#ifndef GGUFGUARD_TESTS_SUPPORT_SPLIT_WRITER_H_
#define GGUFGUARD_TESTS_SUPPORT_SPLIT_WRITER_H_

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/gguf_writer.h"

namespace ggufguard::testing {

struct SplitTensor {
  std::string name;
  std::vector<uint64_t> dims;
  uint32_t ggml_type;
  std::vector<uint8_t> data = {};  // empty: the builder's fill
};

struct SplitPart {
  std::vector<std::pair<std::string, GgufValue>> kvs;
  std::vector<SplitTensor> tensors;
  // The split keys' values written instead of the true ones.
  std::optional<uint16_t> no;
  std::optional<uint16_t> count;
  std::optional<int32_t> tensors_total;
  bool split_keys = true;  // false: no split.* key at all
};

inline std::vector<BuiltFile> BuildSplitParts(const std::vector<SplitPart>& parts) {
  int32_t total = 0;
  for (const SplitPart& p : parts) total += static_cast<int32_t>(p.tensors.size());
  std::vector<BuiltFile> out;
  for (size_t i = 0; i < parts.size(); ++i) {
    const SplitPart& p = parts[i];
    GgufBuilder b;
    for (const auto& [key, value] : p.kvs) b.AddKv(key, value);
    if (p.split_keys) {
      b.AddKv("split.no", GgufValue::U16(p.no.value_or(static_cast<uint16_t>(i))));
      b.AddKv("split.count", GgufValue::U16(p.count.value_or(static_cast<uint16_t>(parts.size()))));
      b.AddKv("split.tensors.count", GgufValue::I32(p.tensors_total.value_or(total)));
    }
    for (const SplitTensor& t : p.tensors) {
      TensorOptions options;
      if (!t.data.empty()) options.data = t.data;
      b.AddTensor(t.name, t.dims, t.ggml_type, options);
    }
    out.push_back(b.Build());
  }
  return out;
}

// llama.cpp's name of part `number` (from 1) of `count`: llama_split_path.
inline std::string SplitFileName(const std::string& prefix, int number, int count) {
  char suffix[32];
  std::snprintf(suffix, sizeof(suffix), "-%05d-of-%05d.gguf", number, count);
  return prefix + suffix;
}

}  // namespace ggufguard::testing

#endif  // GGUFGUARD_TESTS_SUPPORT_SPLIT_WRITER_H_
