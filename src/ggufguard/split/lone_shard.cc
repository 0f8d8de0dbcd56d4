#include "ggufguard/split/lone_shard.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ggufguard/base/text.h"
#include "ggufguard/split/shard_name.h"

namespace ggufguard {
namespace {

// A URL's path without its query or fragment; any other location as it is.
std::string_view FileNamePart(std::string_view location) {
  if (location.find("://") == std::string_view::npos) return location;
  return location.substr(0, location.find_first_of("?#"));
}

std::string ReasonText(std::optional<std::string_view> location, LoneShardReason reason) {
  if (location && !ParseShardName(FileNamePart(*location))) {
    return "its name is not a shard name (PREFIX-NNNNN-of-NNNNN.gguf), so the others cannot be found by name";
  }
  switch (reason) {
    case LoneShardReason::kNoSet:
      return "--no-set";
    case LoneShardReason::kNoName:
      return "it has no file name to find the others by";
    case LoneShardReason::kOneFile:
      return "only this file was read (ggufguard validate SHARD judges the whole set)";
  }
  return "";
}

}  // namespace

std::optional<SplitPosition> SplitPositionOf(const GgufHeader& header) {
  // The first of each, in one pass (a header may hold a million keys).
  const KeyValue* count_kv = nullptr;
  const KeyValue* no_kv = nullptr;
  for (const KeyValue& kv : header.kvs) {
    const std::string_view key = kv.key();
    if (count_kv == nullptr && key == "split.count") count_kv = &kv;
    if (no_kv == nullptr && key == "split.no") no_kv = &kv;
    if (count_kv != nullptr && no_kv != nullptr) break;
  }
  const std::optional<uint64_t> count = ExactU16(count_kv);
  const std::optional<uint64_t> no = ExactU16(no_kv);
  // llama.cpp reads a count below 2 as one file, and refuses a file with a
  // count but no split.no (get_key throws): both are GG4015's to judge.
  if (!count || *count < 2 || !no || *no >= *count) return std::nullopt;
  return SplitPosition{static_cast<uint32_t>(*no + 1), static_cast<uint32_t>(*count), count_kv->value().offset};
}

bool LlamaFindsTheSetFrom(std::string_view location, uint32_t count) {
  const std::string suffix = absl::StrFormat("-00001-of-%05d.gguf", count);
  const std::string_view name = FileNamePart(location);
  return name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
}

bool JudgeLoneShard(Report& report, const Policy& policy, std::optional<std::string_view> location,
                    LoneShardReason reason) {
  if (!report.header_parsed) return false;
  const std::optional<SplitPosition> at = SplitPositionOf(report.header);
  if (!at) return false;
  report.not_checked.push_back(absl::StrCat("the other ", at->count - 1, " shards of the split model its split.* keys "
                                            "make it part of (it is shard ", at->number, " of ", at->count,
                                            "), and the set as a whole: ", ReasonText(location, reason)));
  if (at->number == 1 && location && !LlamaFindsTheSetFrom(*location, at->count)) {
    AddFindingTo(report, policy, RuleId::kSplitNameUnloadable, at->count_offset,
                 absl::StrCat("split.count makes this the first of ", at->count, " shards, but llama.cpp finds the "
                              "others only from a name ending in ",
                              absl::StrFormat("-00001-of-%05d.gguf", at->count), ": loading '",
                              EscapeForDisplay(FileNamePart(*location), 200),
                              "' it throws \"invalid split file name\" (llama_split_prefix)"));
  }
  return true;
}

}  // namespace ggufguard
