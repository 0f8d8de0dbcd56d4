// A shard judged alone. A file whose split.* keys say it is one shard of
// several is only part of a model: when it is validated without the rest of
// its set (a name that does not parse as a shard name, --no-set, standard
// input, the C API, Python), the other shards were never read, so its
// verdict can be inconclusive at best, never valid with nothing in
// not_checked. And llama.cpp's loader finds a split model's other shards
// from the first one's name only (llama_get_list_splits: llama_split_prefix
// must strip "-00001-of-NNNNN.gguf", NNNNN being split.count as %05d, and
// leave a non-empty prefix; else it throws "invalid split file name"): the
// first shard under any other name cannot be loaded at all, GG9107.
//
// Every route that validates one file calls JudgeLoneShard on its report;
// the split set route (split_set.h) does not, since it reads the set.
#ifndef GGUFGUARD_SPLIT_LONE_SHARD_H_
#define GGUFGUARD_SPLIT_LONE_SHARD_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "ggufguard/findings/policy.h"
#include "ggufguard/format/header.h"
#include "ggufguard/validate.h"

namespace ggufguard {

// What a file's split.* keys say it is: shard `number` (from 1) of `count`,
// count >= 2; nullopt when they describe no part of several (no keys, a
// split.count below 2 or not a u16, a split.no that is missing, not a u16
// or not below split.count: GG4015 says why).
struct SplitPosition {
  uint32_t number = 0;
  uint32_t count = 0;
  uint64_t count_offset = 0;  // split.count's value, where GG9107 points
};
std::optional<SplitPosition> SplitPositionOf(const GgufHeader& header);

// Whether llama.cpp, loading `location` as its model, finds the other
// shards of a set of `count`: it ends in "-00001-of-%05d.gguf" after at
// least one byte (exact bytes: ".GGUF" or "-of-3" do not). For a URL, its
// path's last part (llama.cpp loads what was downloaded under that name).
bool LlamaFindsTheSetFrom(std::string_view location, uint32_t count);

// Why the rest of a set was not read, for not_checked, when the file's
// name parses as a shard name (else the reason is that it does not).
enum class LoneShardReason {
  kNoSet,    // --no-set
  kNoName,   // standard input, a descriptor or a buffer: there is no name
  kOneFile,  // inspect, the C API and Python read one file
};

// When `report` is of one shard of several: its other shards go into
// not_checked (with `reason`), and, for the first shard under a
// `location` llama.cpp cannot find the set from, GG9107 under `policy`.
// `location` is the path or URL as given, nullopt without one. Returns
// whether the report changed: a verdict that then depends on the file's
// name, which a cache keyed by content must not store.
bool JudgeLoneShard(Report& report, const Policy& policy, std::optional<std::string_view> location,
                    LoneShardReason reason);

}  // namespace ggufguard

#endif  // GGUFGUARD_SPLIT_LONE_SHARD_H_
