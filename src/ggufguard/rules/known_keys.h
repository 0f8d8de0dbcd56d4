// The standard GGUF metadata keys and the value types loaders demand of them
// (GGUF-FACTS D.4: llama.cpp's exact-type `get_key`, gguf-py's writer), and
// the index through which the semantic rules read metadata the way llama.cpp
// does.
#ifndef GGUFGUARD_RULES_KNOWN_KEYS_H_
#define GGUFGUARD_RULES_KNOWN_KEYS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "ggufguard/format/header.h"
#include "ggufguard/format/value_type.h"

namespace ggufguard {

// Reports print it: the table grows as llama.cpp adds keys.
inline constexpr std::string_view kKnownKeysVersion = "llama.cpp gguf constants 2026-07 (GGUF-FACTS D.4)";

// A set of value types, one bit per ValueType id.
using TypeSet = uint16_t;
constexpr TypeSet TypeBit(ValueType t) { return static_cast<TypeSet>(1u << static_cast<uint32_t>(t)); }

struct KnownKey {
  // The full key, or for architecture keys what follows "{arch}.". "{n}"
  // stands for one segment of digits, a final "{*}" for one or more segments.
  std::string_view name;
  TypeSet scalar;    // scalar types accepted
  TypeSet elements;  // element types accepted in an array; 0: no array
};

// The entry for `key` (already cut at NUL, see CStringKey), or nullptr. Keys
// "{arch}.suffix" are known only for the file's own architecture `arch`
// (empty when the file names none).
const KnownKey* FindKnownKey(std::string_view key, std::string_view arch);
bool AcceptsValue(const KnownKey& k, const Value& v);
// "u32", "u32 or array of i32/u32", ... for messages.
std::string DescribeTypes(const KnownKey& k);

// Architectures llama.cpp loads as transformers: with tensors, its loader
// demands context_length, embedding_length, block_count and
// attention.head_count, and shapes token_embd/output as {n_embd, n_vocab}.
// Other architectures (clip, mamba, rwkv, diffusion models) are left alone.
bool IsTransformerArch(std::string_view arch);

// A key as C code sees it: cut at the first NUL.
inline std::string_view CStringKey(std::string_view key) { return key.substr(0, key.find('\0')); }

// The metadata as llama.cpp resolves it: gguf_find_key compares with strcmp
// against the stored key's c_str(), so a lookup answers the first key equal
// as a C string ("k\0x" answers "k"). The semantic rules read values through
// this index so that they check what the loader will use. Built once per
// validation; borrows the header.
class KeyIndex {
 public:
  explicit KeyIndex(const GgufHeader& header);

  const KeyValue* Find(std::string_view key) const;
  // "{arch}.suffix" for the file's architecture; nullptr without one.
  const KeyValue* FindArch(std::string_view suffix) const;
  // The value when the key holds exactly a u32 (the type loaders demand;
  // other types are GG4004's business).
  std::optional<uint32_t> U32(const KeyValue* kv) const;
  std::string_view arch() const { return arch_; }
  const KeyValue* arch_kv() const { return arch_kv_; }

 private:
  absl::flat_hash_map<std::string_view, const KeyValue*> first_;
  const KeyValue* arch_kv_ = nullptr;
  std::string_view arch_;
};

// The number of tokens llama.cpp builds the vocabulary from: the length of
// tokenizer.ggml.tokens, else {arch}.vocab_size; nullopt when neither is there.
std::optional<uint64_t> VocabularySize(const KeyIndex& keys);

}  // namespace ggufguard

#endif  // GGUFGUARD_RULES_KNOWN_KEYS_H_
