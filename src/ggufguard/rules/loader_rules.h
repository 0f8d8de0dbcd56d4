// How different loaders read the same metadata. GG3011/GG3012 report keys
// that collide; the JSON report adds, for each collision, which value each
// kind of reader would use, computed here and nowhere else.
#ifndef GGUFGUARD_RULES_LOADER_RULES_H_
#define GGUFGUARD_RULES_LOADER_RULES_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "ggufguard/format/header.h"

namespace ggufguard {

// Keys of one header that share a CanonicalKey (equal bytes, or equal once
// cut at NUL, trimmed or case-folded), with the KV each reading picks when a
// program looks up `name`. Indices are into header.kvs.
struct KeyReadings {
  std::string name;          // the canonical key the group shares
  std::vector<size_t> kvs;   // every KV of the group, in file order
  // A reader that compares key bytes and takes the first match (gguf-py's
  // dict before #19856 raised, gguf-parser-go's Get): the first KV whose key
  // is exactly `name`; none when every key differs from it.
  std::optional<size_t> exact;
  // llama.cpp: gguf_find_key compares with strcmp against c_str(), so the
  // first KV whose key cut at NUL is `name`.
  std::optional<size_t> c_string;
  // Readers that fill a map and let the last insert win (candle's HashMap,
  // huggingface.js): the group's last KV.
  size_t last_wins = 0;
};

// The groups of two or more keys, ordered by their first KV. Linear.
std::vector<KeyReadings> FindKeyReadings(const GgufHeader& header);

}  // namespace ggufguard

#endif  // GGUFGUARD_RULES_LOADER_RULES_H_
