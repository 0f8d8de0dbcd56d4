// An adapter judged against the base model it is meant for (--base FILE):
// what llama.cpp checks, or fails to check, when it applies a LoRA adapter
// or a control vector to a loaded model (GG9153-GG9158).
//
// Only the base model's header is read. Its facts are copied out of it
// (names and shapes of its tensors, three hyperparameters), bounded by
// what its parse was allowed (the policy's tensor count and header size),
// so that the base's bytes can be dropped before any adapter is read. A
// split base model gives its facts shard by shard (AddBaseShard).
#ifndef GGUFGUARD_ADAPTER_BASE_MODEL_H_
#define GGUFGUARD_ADAPTER_BASE_MODEL_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "ggufguard/findings/policy.h"
#include "ggufguard/format/header.h"
#include "ggufguard/validate.h"

namespace ggufguard {

struct BaseModel {
  std::string label;         // as the user named it, for messages
  std::string architecture;  // general.architecture as a C string; empty when absent or not a string
  std::optional<uint64_t> n_embd;   // {arch}.embedding_length, when a u32
  std::optional<uint64_t> n_layer;  // {arch}.block_count, when a u32
  // Every tensor's dimensions by name (unused dimensions are 1).
  absl::flat_hash_map<std::string, std::array<uint64_t, kMaxDims>> tensors;
  // Why the facts are not the whole model's (a header that did not parse, a
  // shard read alone, a shard missing): an adapter is then not judged.
  std::vector<std::string> incomplete;
};

// Adds one header's facts: a whole model's, or shard `shard` (1-based) of a
// split one, whose first shard holds the metadata. `report` may be a
// --header-only report. `shards_read` says how many shards the caller read
// (1 for a lone file): a shard whose split.count says more makes the facts
// incomplete.
void AddBaseShard(BaseModel& base, const Report& report, uint32_t shard, uint32_t shards_read);

// Adds to `adapter` the findings of GG9153-GG9158 against `base`, under
// `policy` (none under the gguf profile). A file that is no adapter gets
// none. A base model whose facts are incomplete, or that names no
// architecture, cannot be judged against: the adapter's report lists it in
// not_checked instead (inconclusive at best).
void JudgeAgainstBase(ValidatedFile& adapter, const BaseModel& base, const Policy& policy);

}  // namespace ggufguard

#endif  // GGUFGUARD_ADAPTER_BASE_MODEL_H_
