#include "ggufguard/split/shard_name.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ggufguard {
namespace {

constexpr std::string_view kOf = "-of-";
constexpr std::string_view kExtension = ".gguf";
constexpr size_t kDigits = 5;
// "-NNNNN-of-NNNNN.gguf"
constexpr size_t kSuffixLength = 1 + kDigits + kOf.size() + kDigits + kExtension.size();

std::optional<uint32_t> FiveDigits(std::string_view s) {
  if (s.size() != kDigits) return std::nullopt;
  uint32_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint32_t>(c - '0');
  }
  return v;
}

}  // namespace

std::optional<ShardName> ParseShardName(std::string_view location) {
  if (location.size() <= kSuffixLength) return std::nullopt;  // the prefix may not be empty
  const std::string_view suffix = location.substr(location.size() - kSuffixLength);
  if (suffix[0] != '-' || suffix.substr(1 + kDigits, kOf.size()) != kOf ||
      suffix.substr(suffix.size() - kExtension.size()) != kExtension) {
    return std::nullopt;
  }
  const std::optional<uint32_t> number = FiveDigits(suffix.substr(1, kDigits));
  const std::optional<uint32_t> count = FiveDigits(suffix.substr(1 + kDigits + kOf.size(), kDigits));
  if (!number || !count || *number == 0 || *number > *count) return std::nullopt;
  const std::string_view prefix = location.substr(0, location.size() - kSuffixLength);
  if (prefix.back() == '/') return std::nullopt;  // "dir/-00001-of-00002.gguf": no file prefix
  return ShardName{std::string(prefix), *number, *count};
}

std::string ShardLocation(const ShardName& name, uint32_t number) {
  return absl::StrFormat("%s-%05d-of-%05d.gguf", name.prefix, number, name.count);
}

std::string ShardName::SetKey() const { return absl::StrCat(count, ":", prefix); }

std::string ShardName::SetLabel() const { return absl::StrFormat("%s-*-of-%05d.gguf", prefix, count); }

}  // namespace ggufguard
