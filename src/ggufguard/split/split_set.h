// A split model (llama.cpp's PREFIX-00001-of-00003.gguf ...) judged as one
// model: each shard is validated on its own, then the set (GG9100-GG9106):
// every shard present, split.count and split.no agree with the names, tensor
// names unique across shards, split.tensors.count the sum of the shards'
// tensors, the model's metadata in shard 1 (where llama.cpp reads it).
//
// Shards are named by location strings and opened through a ShardOpener, so
// the same code finds the siblings of a local path (LocalShardOpener) or of
// a URL (an opener that returns an HTTP source). Memory: one shard's
// validation at a time, plus the set's facts (tensor names, counts), bounded
// by the policy's max_split_shards and max_tensor_count.
#ifndef GGUFGUARD_SPLIT_SPLIT_SET_H_
#define GGUFGUARD_SPLIT_SPLIT_SET_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "ggufguard/findings/finding.h"
#include "ggufguard/findings/policy.h"
#include "ggufguard/io/source.h"
#include "ggufguard/split/shard_name.h"
#include "ggufguard/validate.h"

namespace ggufguard {

// A finding of the set rules, placed in the shard it concerns (a missing
// shard's is placed at offset 0 of the file that is not there).
struct SetFinding {
  std::string location;
  Finding finding;
};

// What one shard gave, as the set's report lists it.
struct ShardStatus {
  std::string location;
  // "valid", "invalid", "inconclusive", "io-error" or "missing".
  std::string verdict;
};

struct SetReport {
  std::string label;         // "PREFIX-*-of-NNNNN.gguf"
  uint32_t shard_count = 0;  // from the names
  std::vector<ShardStatus> shards;  // in shard order; none past max_split_shards
  std::vector<SetFinding> findings;  // the set rules', by shard, then offset
  std::map<RuleId, uint64_t> suppressed;  // set findings counted, not listed
  bool has_set_errors = false;    // an error among the set rules' findings (listed or not)
  bool has_shard_errors = false;  // a shard that is invalid on its own
  // What the set's verdict does not cover: missing or unreadable shards,
  // what each shard's own report did not check ("shard 2: ...").
  std::vector<std::string> not_checked;

  // Invalid when any shard or set rule has an error; else inconclusive when
  // anything was not checked; else valid.
  Report::Verdict verdict() const;
};

// Collects the set's facts one shard at a time and judges the set.
class SplitSetJudge {
 public:
  SplitSetJudge(const Policy& policy, const ShardName& name);

  // Shard `number` (1-based) validated; its report may be partial (then
  // what it did not check is the set's too).
  void AddShard(uint32_t number, const std::string& location, const Report& report);
  // Shard `number` does not exist (GG9100).
  void AddMissing(uint32_t number, const std::string& location);
  // Shard `number` exists but could not be read or validated.
  void AddUnreadable(uint32_t number, const std::string& location, const std::string& error);
  // A set with more shards than the policy allows (GG9106): nothing read.
  void RefuseTooMany();

  SetReport Finish();

 private:
  void Add(RuleId id, const std::string& location, uint64_t offset, std::string message);
  void CheckSplitKeys(uint32_t number, const std::string& location, const Report& report);
  void CollectTensorNames(uint32_t number, const std::string& location, const Report& report);
  void CheckMetadataPlace(uint32_t number, const std::string& location, const Report& report);
  void CheckQuantizationVersion(uint32_t number, const std::string& location, const Report& report);

  const Policy& policy_;
  ShardName name_;
  SetReport out_;
  std::map<RuleId, uint32_t> listed_;
  // Tensor name -> the shard (1-based) it was first seen in; at most
  // max_tensor_count names over the whole set.
  absl::flat_hash_map<std::string, uint32_t> tensor_shard_;
  bool names_capped_ = false;
  uint64_t tensors_seen_ = 0;   // over every shard that parsed
  bool every_shard_parsed_ = true;
  // split.tensors.count of each shard that has one: (location, offset, value).
  struct TotalClaim {
    std::string location;
    uint64_t offset;
    int64_t value;
  };
  std::vector<TotalClaim> total_claims_;
  std::string architecture_;  // shard 1's general.architecture, when a string
  std::string first_location_;  // shard 1's, once read
  bool first_read_ = false;                      // shard 1's header parsed
  bool first_has_quantization_version_ = false;  // shard 1 has general.quantization_version
  bool first_has_quantized_tensor_ = false;      // then its own GG4013 speaks for the set
  bool quantization_checked_ = false;            // GG4013 for the set said once
};

// Opens a location into a source; absl::NotFoundError when nothing is there
// (the set's GG9100), any other error when it exists but cannot be read.
using ShardOpener = std::function<absl::StatusOr<std::unique_ptr<ByteSource>>(const std::string& location)>;
// Validates an opened shard (the caller's options: header only, hash, deep).
using ShardValidator = std::function<absl::StatusOr<ValidatedFile>(ByteSource& source, const std::string& location)>;
// Sees each shard's outcome, while its report is alive (to write it out).
// `report` is nullptr when the shard could not be read; then `error` says why.
using ShardVisitor =
    std::function<void(const std::string& location, const Report* report, const std::string& error)>;

// Local files: FileSource::Open (final_link as there), NotFound for a name
// that does not exist.
ShardOpener LocalShardOpener(FinalLink final_link = FinalLink::kFollow);

// Opens, validates and visits each shard of the set `name` belongs to, in
// order, one at a time, then judges the set. A missing shard is not visited
// (it is the set's GG9100).
SetReport ValidateSplitSet(const ShardName& name, const Policy& policy, const ShardOpener& open,
                           const ShardValidator& validate, const ShardVisitor& visit);

}  // namespace ggufguard

#endif  // GGUFGUARD_SPLIT_SPLIT_SET_H_
