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
#include "ggufguard/rules/key_groups.h"

namespace ggufguard {

// Keys of one header that share a CanonicalKey (equal bytes, or equal once
// cut at NUL, trimmed or case-folded), with the KV each reading picks when a
// program looks up `name`. Indices are into header.kvs.
struct KeyReadings {
  std::string name;          // the canonical key the group shares
  std::vector<size_t> kvs;   // the group's first KVs, in file order (see keys_suppressed)
  uint64_t keys_suppressed = 0;  // KVs of the group not listed in `kvs`
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

// The groups of two or more keys, ordered by their first KV: at most
// `max_groups` of them (the others are counted in *groups_not_listed), and at
// most `max_keys` KVs listed across all groups (each group counts the rest in
// keys_suppressed). The readings always consider every KV of a group. Linear
// in the number of KVs; the report built from it is bounded whatever the file.
std::vector<KeyReadings> FindKeyReadings(const GgufHeader& header, const KeyGroups& groups, size_t max_groups,
                                         size_t max_keys, uint64_t* groups_not_listed);

}  // namespace ggufguard

#endif  // GGUFGUARD_RULES_LOADER_RULES_H_
