// What llama.cpp knows about architectures and keys, generated from its
// sources (llama_tables.inc, scripts/gen_llama_tables.py, docs/knowledge.md):
// the value types its loader demands (exact-type `get_key`), which keys each
// architecture requires, its memory and embedding shapes; and the index
// through which the semantic rules read metadata the way llama.cpp does.
#ifndef GGUFGUARD_RULES_KNOWN_KEYS_H_
#define GGUFGUARD_RULES_KNOWN_KEYS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/types/span.h"
#include "ggufguard/format/header.h"
#include "ggufguard/format/value_type.h"
#include "ggufguard/rules/key_groups.h"

namespace ggufguard {

// The upstream llama.cpp commit the generated tables were extracted from
// (scripts/gen_llama_tables.py, docs/knowledge.md). Reports print it.
std::string_view LlamaCppCommit();

// A set of value types, one bit per ValueType id.
using TypeSet = uint16_t;
constexpr TypeSet TypeBit(ValueType t) { return static_cast<TypeSet>(1u << static_cast<uint32_t>(t)); }

// KnownKey::array_length: any length, exactly {arch}.block_count
// (get_key_or_arr with hparams.n_layer_all, or n_layer() before the
// architecture read nextn_predict_layers), or block_count minus
// {arch}.nextn_predict_layers (n_layer() after it: the layers without the
// multi-token-prediction ones); any other value is an exact count.
inline constexpr uint16_t kAnyLength = 0;
inline constexpr uint16_t kPerLayerLength = 0xFFFF;
inline constexpr uint16_t kPerLayerMinusNextnLength = 0xFFFE;

struct KnownKey {
  // The full key, or for architecture keys what follows "{arch}.". "{n}"
  // stands for one segment of digits, a final "{*}" for one or more segments.
  // In per-architecture read lists a whole key name is written "=name".
  std::string_view name;
  TypeSet scalar;     // scalar types accepted
  TypeSet elements;   // element types accepted in an array; 0: no array
  uint16_t array_length;
  bool required;      // per-architecture lists only: the loader throws without it
};

// What llama.cpp does with a general.architecture value.
enum class ArchKind : uint8_t {
  kModel,      // llama_model_mapping builds a model for it
  kOtherFile,  // another kind of file read by other code (clip projector, control vector)
  kNameOnly,   // in LLM_ARCH_NAMES, but llama.cpp builds no model for it
};
// The per-sequence memory llama.cpp allocates for a model (create_memory).
enum class ArchMemory : uint8_t {
  kNone,       // encoders, diffusion models, codecs: no cache
  kKvCache,    // a K/V cache over the context, every attention layer
  kHybrid,     // K/V cache for the attention layers plus recurrent state
  kRecurrent,  // fixed-size recurrent state per sequence (mamba, rwkv)
};

struct ArchInfo {
  std::string_view name;
  ArchKind kind;
  ArchMemory memory;
  bool attention;            // its tensors include attention projections
  bool token_embd_by_vocab;  // token_embd.weight is {n_embd, n_vocab}
  bool output_by_vocab;      // output.weight is {n_embd, n_vocab}
  std::string_view n_embd_key;  // the "{arch}." key llama.cpp takes n_embd from
  uint16_t reads_begin;      // into the architecture's read list
  uint16_t reads_count;
};

// The architecture named `arch`, or nullptr when llama.cpp does not know it.
const ArchInfo* FindArchInfo(std::string_view arch);
// Every architecture of the table, sorted by name.
absl::Span<const ArchInfo> AllArchInfos();

// The keys every loadable architecture reads (llama_model_base::load_hparams,
// the vocabulary) and those `arch` reads itself. A key in both must satisfy
// both; FindKeyRule combines them.
absl::Span<const KnownKey> CommonReads();
absl::Span<const KnownKey> ArchReads(const ArchInfo& arch);

// Whether a model of architecture `info` reads "{arch}.suffix" at all (its
// own read list or the common one). True when `info` is nullptr or not a
// model: nothing then says which keys count. Checks of a value's range or
// length apply only to keys that are read; llama.cpp's saver writes every
// {arch}.* key for every architecture, with zeros where unused.
bool ArchReadsKey(const ArchInfo* info, std::string_view suffix);

// Whether `key` (cut at NUL) is an architecture's own key that the file's
// architecture does not read: an "{arch}." key outside its read lists, or a
// whole key only some architectures read (xielu.*, apertus') that it does
// not. llama_model_saver writes every such key of its hyperparameter struct
// for every model: per-layer arrays LLAMA_MAX_LAYERS long, NaN for floats no
// loader set. Checks of a value (length, NaN, range) skip them. False when
// the file's architecture is unknown or not a model (nothing says then).
class KeyIndex;
bool IsUnreadArchKey(const KeyIndex& keys, std::string_view key);

// True when llama.cpp's loader for `arch` asserts nextn_predict_layers <
// block_count as it reads it (GGML_ASSERT: an abort, GG9052); the others
// only need n_layer() = block_count - nextn not to wrap.
bool AssertsNextnBelowBlockCount(std::string_view arch);
// True when it asserts nextn_predict_layers == block_count (gemma4-assistant,
// a model of next-N layers only; the key absent reads as 0).
bool AssertsNextnEqualBlockCount(std::string_view arch);

// GGML_ASSERT(hparams.F OP number), or GGML_ASSERT(hparams.F) (kTrue), at the
// top level of an architecture's load_arch_hparams, F read from `key` (an
// "{arch}." suffix) in the same function: a value that breaks it aborts the
// load (GG9059). Generated (scripts/gen_llama_tables.py).
enum class AssertOp : uint8_t { kTrue, kGreater, kGreaterEqual, kLess, kLessEqual, kEqual, kNotEqual };
struct ArchAssert {
  std::string_view arch;
  std::string_view key;
  AssertOp op;
  double number;
};
// The asserts of `arch`'s loader (none for an architecture without).
absl::Span<const ArchAssert> ArchAsserts(std::string_view arch);

// Calls f with each key llama.cpp refuses to load a model of `arch` without
// ("context_length", "attention.layer_norm_rms_epsilon", or "=xielu.eps" for
// a whole name), each once. Empty for other kinds than kModel.
void ForEachRequiredKey(const ArchInfo& arch, absl::FunctionRef<void(std::string_view)> f);

// What a key's value must be.
struct KeyRule {
  TypeSet scalar;
  TypeSet elements;
  uint16_t array_length;
};

// The rule for `key` (already cut at NUL, see CStringKey) in a file of
// architecture `arch` (empty when the file names none; `info` its entry or
// nullptr), or nullopt for a key outside the tables. Keys "{arch}.suffix"
// are known only for the file's own architecture. Where the architecture's
// loader reads the key, its exact types; elsewhere the types any loader
// branch reads it as, or that llama.cpp's saver or gguf-py write.
std::optional<KeyRule> FindKeyRule(std::string_view key, std::string_view arch, const ArchInfo* info);
bool AcceptsValue(const KeyRule& k, const Value& v);
// "u32", "u32 or array of i32/u32", ... for messages.
std::string DescribeTypes(const KeyRule& k);

// Architectures with attention heads: llama.cpp's loader computes the head
// size as embedding_length / head_count for them. Others (mamba, rwkv,
// clip, unknown names) are left alone.
bool IsTransformerArch(std::string_view arch);

// A key as C code sees it: cut at the first NUL. Short keys are scanned
// here: a call to memchr per key was 5% of validating a million keys.
inline std::string_view CStringKey(std::string_view key) {
  if (key.size() <= 32) {
    for (size_t i = 0; i < key.size(); ++i) {
      if (key[i] == '\0') return key.substr(0, i);
    }
    return key;
  }
  return key.substr(0, key.find('\0'));
}

// The metadata as llama.cpp resolves it: gguf_find_key compares with strcmp
// against the stored key's c_str(), so a lookup answers the first key equal
// as a C string ("k\0x" answers "k"). The semantic rules read values through
// this index so that they check what the loader will use. Built once per
// validation; borrows the header. Its KeyGroups also serve the duplicate and
// collision rules.
class KeyIndex {
 public:
  explicit KeyIndex(const GgufHeader& header);
  KeyIndex(const KeyIndex&) = delete;
  KeyIndex& operator=(const KeyIndex&) = delete;

  const KeyValue* Find(std::string_view key) const;
  // "{arch}.suffix" for the file's architecture; nullptr without one.
  const KeyValue* FindArch(std::string_view suffix) const;
  // The value when the key holds exactly a u32 (the type loaders demand;
  // other types are GG4004's business).
  std::optional<uint32_t> U32(const KeyValue* kv) const;
  std::string_view arch() const { return arch_; }
  // The architecture's table entry; nullptr for a name llama.cpp does not know.
  const ArchInfo* arch_info() const { return arch_info_; }
  const KeyValue* arch_kv() const { return arch_kv_; }
  const KeyGroups& groups() const { return groups_; }

 private:
  const GgufHeader& header_;
  KeyGroups groups_;
  const KeyValue* arch_kv_ = nullptr;
  std::string_view arch_;
  const ArchInfo* arch_info_ = nullptr;
};

// The number of tokens llama.cpp builds the vocabulary from: the length of
// tokenizer.ggml.tokens, else {arch}.vocab_size; nullopt when neither is there.
std::optional<uint64_t> VocabularySize(const KeyIndex& keys);

}  // namespace ggufguard

#endif  // GGUFGUARD_RULES_KNOWN_KEYS_H_
