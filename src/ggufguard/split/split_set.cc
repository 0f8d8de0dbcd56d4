#include "ggufguard/split/split_set.h"

#include <sys/stat.h>

#include <cerrno>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ggufguard/base/text.h"
#include "ggufguard/format/ggml_type.h"
#include "ggufguard/rules/rules.h"

namespace ggufguard {
namespace {

// Keys llama.cpp reads from a split model's first shard only.
bool IsModelMetadata(std::string_view key, std::string_view architecture) {
  if (key == "general.architecture" || key.starts_with("tokenizer.")) return true;
  return !architecture.empty() && key.size() > architecture.size() && key.starts_with(architecture) &&
         key[architecture.size()] == '.';
}

std::string Quoted(std::string_view text) { return absl::StrCat("'", EscapeForDisplay(text, 128), "'"); }

}  // namespace

Report::Verdict SetReport::verdict() const {
  if (has_set_errors || has_shard_errors) return Report::Verdict::kInvalid;
  return not_checked.empty() ? Report::Verdict::kValid : Report::Verdict::kInconclusive;
}

SplitSetJudge::SplitSetJudge(const Policy& policy, const ShardName& name) : policy_(policy), name_(name) {
  out_.label = name.SetLabel();
  out_.shard_count = name.count;
}

void SplitSetJudge::Add(RuleId id, const std::string& location, uint64_t offset, std::string message) {
  if (!policy_.Enabled(id)) return;
  const Severity severity = policy_.SeverityOf(id);
  if (severity == Severity::kError) out_.has_set_errors = true;
  uint32_t& listed = listed_[id];
  if (listed >= policy_.limits.max_findings_per_rule) {
    ++out_.suppressed[id];
    return;
  }
  ++listed;
  out_.findings.push_back(SetFinding{location, Finding{id, severity, offset, std::move(message)}});
}

void SplitSetJudge::AddShard(uint32_t number, const std::string& location, const Report& report) {
  out_.shards.push_back(ShardStatus{location, VerdictName(report.verdict())});
  if (!report.valid()) out_.has_shard_errors = true;
  for (const std::string& item : report.not_checked) out_.not_checked.push_back(absl::StrCat(location, ": ", item));
  if (!report.header_parsed) {
    // Its own findings say why; the set's counts cannot include it.
    every_shard_parsed_ = false;
    return;
  }
  CheckSplitKeys(number, location, report);
  CollectTensorNames(number, location, report);
  CheckMetadataPlace(number, location, report);
  CheckQuantizationVersion(number, location, report);
}

void SplitSetJudge::AddMissing(uint32_t number, const std::string& location) {
  out_.shards.push_back(ShardStatus{location, "missing"});
  every_shard_parsed_ = false;
  Add(RuleId::kSplitShardMissing, location, 0,
      absl::StrCat("shard ", number, " of ", name_.count, " is missing: llama.cpp cannot load the set without it, "
                   "and what it holds was not checked"));
  out_.not_checked.push_back(absl::StrCat(location, ": shard ", number, " of ", name_.count,
                                          " is missing (its tensors, and the set's tensor count and names)"));
}

void SplitSetJudge::AddUnreadable(uint32_t number, const std::string& location, const std::string& error) {
  out_.shards.push_back(ShardStatus{location, "io-error"});
  every_shard_parsed_ = false;
  out_.not_checked.push_back(absl::StrCat(location, ": shard ", number, " of ", name_.count,
                                          " could not be read: ", error));
}

void SplitSetJudge::RefuseTooMany() {
  every_shard_parsed_ = false;
  Add(RuleId::kSplitShardLimit, out_.label, 0,
      absl::StrCat("the names give a set of ", name_.count, " shards, more than the policy's max_split_shards ",
                   policy_.limits.max_split_shards));
  out_.not_checked.push_back(absl::StrCat("all ", name_.count, " shards: more than max_split_shards ",
                                          policy_.limits.max_split_shards, ", none was read"));
}

// gguf-split writes split.no (from 0), split.count and split.tensors.count
// into every shard. What one file can get wrong alone is GG4015's; here,
// what disagrees with the names and the other shards.
void SplitSetJudge::CheckSplitKeys(uint32_t number, const std::string& location, const Report& report) {
  const GgufHeader& h = report.header;
  const KeyValue* count_kv = h.Find("split.count");
  const KeyValue* no_kv = h.Find("split.no");
  const KeyValue* total_kv = h.Find("split.tensors.count");
  if (count_kv == nullptr && no_kv == nullptr && total_kv == nullptr) {
    if (name_.count > 1) {
      Add(RuleId::kSplitCountMismatch, location, 0,
          absl::StrCat("no split.* keys, although the name makes it shard ", number, " of ", name_.count,
                       ": llama.cpp reads it as a model of its own, not as part of the set"));
    }
    return;
  }
  const std::optional<uint64_t> count = ExactU16(count_kv), no = ExactU16(no_kv);
  // split.count 0 is GG4015's (or a merged file's); a missing one too.
  if (count && *count != 0 && *count != name_.count) {
    Add(RuleId::kSplitCountMismatch, location, count_kv->value().offset,
        absl::StrCat("split.count is ", *count, ", but the set's names give ", name_.count, " shards"));
  }
  // split.no not below this file's own split.count is GG4015's.
  const bool own_range_error = no && count && *count != 0 && *no >= *count;
  if (no && !own_range_error && *no != number - 1) {
    Add(RuleId::kSplitNumberMismatch, location, no_kv->value().offset,
        absl::StrCat("split.no is ", *no, ", but the name makes this shard ", number, " of ", name_.count,
                     " (split.no ", number - 1, ": names count from 1, split.no from 0); llama.cpp refuses the set"));
  }
  if (total_kv != nullptr && total_kv->type() == ValueType::kInt32) {
    const std::optional<int64_t> total = total_kv->value().AsSigned();
    // Negative, or below this shard's own tensors: GG4015's.
    if (total && *total >= 0 && static_cast<uint64_t>(*total) >= h.tensors.size()) {
      total_claims_.push_back(TotalClaim{location, total_kv->value().offset, *total});
    }
  }
}

void SplitSetJudge::CollectTensorNames(uint32_t number, const std::string& location, const Report& report) {
  tensors_seen_ += report.header.tensors.size();
  for (const TensorInfo& t : report.header.tensors) {
    auto it = tensor_shard_.find(absl::string_view(t.name.data(), t.name.size()));
    if (it == tensor_shard_.end()) {
      if (tensor_shard_.size() >= policy_.limits.max_tensor_count) {
        names_capped_ = true;  // said in not_checked by Finish
        continue;
      }
      tensor_shard_.emplace(std::string(t.name), number);
      continue;
    }
    if (it->second == number) continue;  // twice in one file: GG5 duplicate-tensor-name
    Add(RuleId::kSplitDuplicateTensor, location, t.offset,
        absl::StrCat("tensor ", Quoted(t.name), " is also in shard ", it->second, " of ", name_.count,
                     ": llama.cpp refuses the model (\"tensor is duplicated\"), and another reader may take either"));
  }
}

void SplitSetJudge::CheckMetadataPlace(uint32_t number, const std::string& location, const Report& report) {
  const KeyValue* arch = report.header.Find("general.architecture");
  const std::string_view own_arch =
      arch != nullptr && arch->type() == ValueType::kString ? arch->value().AsString() : std::string_view();
  if (number == 1) {
    architecture_ = std::string(own_arch);
    first_location_ = location;
    return;
  }
  // Shard 1 absent or without an architecture: this shard's own names it.
  const std::string_view architecture = architecture_.empty() ? own_arch : std::string_view(architecture_);
  for (const KeyValue& kv : report.header.kvs) {
    if (!IsModelMetadata(kv.key(), architecture)) continue;
    Add(RuleId::kSplitMetadataOutsideFirst, location, kv.offset(),
        absl::StrCat(Quoted(kv.key()), " in shard ", number, " of ", name_.count,
                     ": llama.cpp reads a split model's metadata from shard 1 only, so this value is ignored "
                     "there and may differ from what another reader uses"));
  }
}

// GG4013 for a set: a later shard's quantized tensors rely on shard 1's
// general.quantization_version (the per-file rule skips shards 2..N). Said
// once, at the first such tensor, unless shard 1's own check already did.
void SplitSetJudge::CheckQuantizationVersion(uint32_t number, const std::string& location, const Report& report) {
  const TensorInfo* quantized = nullptr;
  for (const TensorInfo& t : report.header.tensors) {
    const GgmlTypeInfo* type = FindGgmlType(t.ggml_type);
    if (type != nullptr && type->status != GgmlTypeStatus::kRemoved && type->quantized) {
      quantized = &t;
      break;
    }
  }
  if (number == 1) {
    first_read_ = true;
    first_has_quantization_version_ = report.header.Find("general.quantization_version") != nullptr;
    first_has_quantized_tensor_ = quantized != nullptr;
    return;
  }
  // Shard 1 unread: the set is not checked already, and nothing is known.
  if (quantized == nullptr || !first_read_ || quantization_checked_ || first_has_quantization_version_ ||
      first_has_quantized_tensor_) {
    return;
  }
  quantization_checked_ = true;
  Add(RuleId::kQuantizationVersion, location, quantized->type_offset(),
      absl::StrCat("tensor ", Quoted(quantized->name), " is quantized, but the set's shard 1 has no "
                   "general.quantization_version; the spec requires it with quantized tensors"));
}

SetReport SplitSetJudge::Finish() {
  // The total can be compared only with every shard counted; llama.cpp reads
  // shard 1's ("N tensors expected but M found"), the others should agree.
  // A set of one shard is GG4015's (a one-part file's total is its own).
  if (every_shard_parsed_ && name_.count > 1) {
    for (const TotalClaim& claim : total_claims_) {
      if (static_cast<uint64_t>(claim.value) == tensors_seen_) continue;
      Add(RuleId::kSplitTensorTotal, claim.location, claim.offset,
          absl::StrCat("split.tensors.count is ", claim.value, ", but the ", name_.count, " shards hold ",
                       tensors_seen_, " tensors: llama.cpp refuses the model"));
    }
  }
  // GG9165 for a split model: no shard holds token_embd.weight (each
  // shard alone is not judged for it).
  if (every_shard_parsed_ && !names_capped_ && name_.count > 1 && tensors_seen_ > 0 &&
      RequiresTokenEmbedding(CString(architecture_)) && !tensor_shard_.contains("token_embd.weight")) {
    Add(RuleId::kMissingTokenEmbedding, first_location_, 0,
        absl::StrCat("none of the ", name_.count, " shards holds token_embd.weight, which llama.cpp's ",
                     EscapeForDisplay(architecture_, 64),
                     " loader requires (it throws \"tensor 'token_embd.weight' not found\")"));
  }
  if (names_capped_) {
    out_.not_checked.push_back(absl::StrCat("tensor names past the set's first ", policy_.limits.max_tensor_count,
                                            " (max_tensor_count) were not compared across shards"));
  }
  return std::move(out_);
}

ShardOpener LocalShardOpener(FinalLink final_link) {
  return [final_link](const std::string& location) -> absl::StatusOr<std::unique_ptr<ByteSource>> {
    struct stat st;
    if (::lstat(location.c_str(), &st) != 0 && errno == ENOENT) {
      return absl::NotFoundError(absl::StrCat(location, ": no such file"));
    }
    absl::StatusOr<std::unique_ptr<FileSource>> file = FileSource::Open(location, final_link);
    if (!file.ok()) return file.status();
    return std::unique_ptr<ByteSource>(std::move(*file));
  };
}

SetReport ValidateSplitSet(const ShardName& name, const Policy& policy, const ShardOpener& open,
                           const ShardValidator& validate, const ShardVisitor& visit) {
  SplitSetJudge judge(policy, name);
  if (name.count > policy.limits.max_split_shards) {
    judge.RefuseTooMany();
    return judge.Finish();
  }
  for (uint32_t number = 1; number <= name.count; ++number) {
    const std::string location = ShardLocation(name, number);
    absl::StatusOr<std::unique_ptr<ByteSource>> source = open(location);
    if (!source.ok() && absl::IsNotFound(source.status())) {
      judge.AddMissing(number, location);
      continue;
    }
    absl::StatusOr<ValidatedFile> file =
        source.ok() ? validate(**source, location) : absl::StatusOr<ValidatedFile>(source.status());
    if (!file.ok()) {
      const std::string error(file.status().message());
      visit(location, nullptr, error);
      judge.AddUnreadable(number, location, error);
      continue;
    }
    judge.AddShard(number, location, file->report());
    visit(location, &file->report(), "");
  }
  return judge.Finish();
}

}  // namespace ggufguard
