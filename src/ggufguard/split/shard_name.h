// llama.cpp's names for the shards of a split model, on location strings (a
// path, or a URL whose last component is the file name): shard k of n is
// PREFIX-%05d-of-%05d.gguf with k counted from 1 (llama_split_path), while
// the split.no key inside it counts from 0.
#ifndef GGUFGUARD_SPLIT_SHARD_NAME_H_
#define GGUFGUARD_SPLIT_SHARD_NAME_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ggufguard {

struct ShardName {
  std::string prefix;  // everything before "-NNNNN-of-NNNNN.gguf"
  uint32_t number = 0;  // 1-based, as in the name
  uint32_t count = 0;   // at least 1 and at least `number`

  // The set's identity: two shards with the same key belong to one set.
  std::string SetKey() const;
  // "PREFIX-*-of-NNNNN.gguf": how reports name the set.
  std::string SetLabel() const;
};

// The shard name of `location`, or nullopt when it does not end in
// "-NNNNN-of-NNNNN.gguf" (exactly five digits each, as llama.cpp writes them
// for every count a u16 split.count can hold), with 1 <= number <= count
// and a non-empty prefix.
std::optional<ShardName> ParseShardName(std::string_view location);

// The location of shard `number` (1-based) of the set `name` belongs to.
std::string ShardLocation(const ShardName& name, uint32_t number);

}  // namespace ggufguard

#endif  // GGUFGUARD_SPLIT_SHARD_NAME_H_
