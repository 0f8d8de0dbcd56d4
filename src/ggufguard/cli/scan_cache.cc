#include "ggufguard/cli/scan_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "ggufguard/base/sha256.h"
#include "ggufguard/base/strict_json.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/text.h"
#include "ggufguard/cli/cli.h"
#include "ggufguard/io/bounded_read.h"
#include "ggufguard/io/source.h"
#include "ggufguard/report/render.h"
#include "ggufguard/split/lone_shard.h"
#include "ggufguard/validate.h"
#include "nlohmann/json.hpp"

namespace ggufguard {
namespace {

using Json = nlohmann::ordered_json;

std::string ToolKey() { return absl::StrCat("ggufguard ", Sv(kToolVersion), " rules ", RuleCatalogVersion()); }

// Reads a whole regular file under `dir_fd` without following a link,
// up to `max` bytes (io/bounded_read.h); nullopt for anything else.
std::optional<std::string> ReadEntry(int dir_fd, const std::string& name, size_t max) {
  const int fd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  struct stat st;
  std::optional<std::string> out;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    absl::StatusOr<std::string> text = ReadBoundedFd(fd, "a cache entry", max);
    if (text.ok()) out = *std::move(text);
  }
  ::close(fd);
  return out;
}

}  // namespace

absl::StatusOr<ResultCache> ResultCache::Open(const std::string& dir, const std::string& policy_source, bool deep,
                                             const std::string& profile, const std::string* policy_text) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::InvalidArgumentError(absl::StrCat("cannot create the cache directory ", dir, ": ", std::strerror(errno)));
  }
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot open the cache directory ", dir, " (a link is refused): ", std::strerror(errno)));
  }
  // The policy's hash: a built-in's name (what it holds changes only with
  // the tool version, also in the key), or a policy file's bytes.
  std::string policy_bytes = absl::StrCat("builtin:", policy_source);
  if (policy_source != "default" && policy_source != "strict") {
    std::string read;
    if (policy_text == nullptr) {
      absl::StatusOr<std::string> text = ReadBoundedFile(policy_source, "the policy file", size_t{1} << 20);
      if (!text.ok()) {
        ::close(fd);
        return text.status();
      }
      read = *std::move(text);
      policy_text = &read;
    }
    policy_bytes = absl::StrCat("file:", *policy_text);
  }
  return ResultCache(fd, Sha256Hex(absl::StrCat(policy_bytes, deep ? "\n--deep" : "", "\n--profile=", profile)), deep);
}

ResultCache::ResultCache(ResultCache&& o) noexcept
    : dir_fd_(std::exchange(o.dir_fd_, -1)), policy_hash_(std::move(o.policy_hash_)), deep_(o.deep_) {}

ResultCache::~ResultCache() {
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

std::optional<ResultCache::Result> ResultCache::Lookup(const std::string& name, const std::string& sha256,
                                                       const std::string& label) const {
  std::optional<std::string> text = ReadEntry(dir_fd_, name, kMaxCacheEntryBytes);
  if (!text) return std::nullopt;
  const Json e = Json::parse(*text, nullptr, false);
  if (e.is_discarded() || !e.is_object()) return std::nullopt;
  // Every part of the key, compared: the name is a digest of it, not proof.
  if (StringOr(e, "sha256") != sha256 || StringOr(e, "tool") != ToolKey() || StringOr(e, "policy") != policy_hash_) {
    return std::nullopt;
  }
  auto line = e.find("line");
  auto code = e.find("code");
  auto size = e.find("size");
  if (line == e.end() || !line->is_object() || code == e.end() || !code->is_number_integer() || size == e.end() ||
      !size->is_number_unsigned()) {
    return std::nullopt;
  }
  const int c = code->get<int>();
  const std::string verdict = StringOr(*line, "verdict");
  if (!((c == kExitValid && verdict == "valid") || (c == kExitInvalid && verdict == "invalid")) ||
      StringOr(*line, "type") != "file" || StringOr(*line, "sha256") != sha256) {
    return std::nullopt;
  }
  Json out = *line;
  out["file"] = EscapeForDisplay(label, kMaxPathBytes);  // the same bytes may be found under another name
  return Result{out.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n", c, size->get<uint64_t>(), true};
}

void ResultCache::Store(const std::string& name, const std::string& sha256, const std::string& line, int code,
                        uint64_t size) const {
  const Json parsed = Json::parse(line, nullptr, false);
  if (parsed.is_discarded()) return;
  const std::string entry = Json{{"sha256", sha256}, {"tool", ToolKey()}, {"policy", policy_hash_},
                                 {"code", code},     {"size", size},      {"line", parsed}}
                                .dump(-1, ' ', false, Json::error_handler_t::replace);
  if (entry.size() > kMaxCacheEntryBytes) return;  // bounded: such a result is recomputed each time
  static std::atomic<uint64_t> counter{0};
  const std::string tmp = absl::StrCat(".tmp.", ::getpid(), ".", counter++);
  const int fd = ::openat(dir_fd_, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return;  // a cache that cannot be written only costs time
  bool ok = true;
  for (size_t done = 0; ok && done < entry.size();) {
    const ssize_t n = ::write(fd, entry.data() + done, entry.size() - done);
    ok = n > 0;
    if (ok) done += static_cast<size_t>(n);
  }
  ok = ::close(fd) == 0 && ok;
  // rename replaces whatever has the entry's name, a planted link included.
  if (!ok || ::renameat(dir_fd_, tmp.c_str(), dir_fd_, name.c_str()) != 0) ::unlinkat(dir_fd_, tmp.c_str(), 0);
}

ResultCache::Result ResultCache::Scan(const WalkEntry& entry, const Policy& policy) const {
  absl::StatusOr<std::unique_ptr<FileSource>> source =
      FileSource::Open(entry.path, entry.through_link ? FinalLink::kFollow : FinalLink::kRefuse);
  if (!source.ok()) {
    return Result{NotCached(RenderJsonLine(FileOutcome{entry.path, nullptr, std::string(source.status().message())}),
                            "an I/O error"),
                  kExitIo, 0, false};
  }
  return ScanSource(**source, entry.path, policy);
}

ResultCache::Result ResultCache::ScanSource(ByteSource& source, const std::string& label, const Policy& policy) const {
  auto io_error = [&](std::string message) {
    return Result{NotCached(RenderJsonLine(FileOutcome{label, nullptr, std::move(message)}), "an I/O error"), kExitIo,
                  0, false};
  };
  // The lookup's key: a digest of the bytes as they are now. A hit is a
  // verdict computed over bytes with this digest, so it is theirs.
  absl::StatusOr<std::string> sha256 = HashSource(source);
  if (!sha256.ok()) return io_error(std::string(sha256.status().message()));
  if (std::optional<Result> hit = Lookup(EntryName(*sha256), *sha256, label)) return *std::move(hit);
  // A miss: the verdict and its digest from one read of every byte, so
  // that what is stored is keyed by the bytes it judged, whatever the file
  // became since the lookup's read (issue 38: a header swapped between two
  // reads stored the clean verdict under the malicious content's digest).
  absl::StatusOr<ValidatedFile> file = ValidateSourceHashed(source, policy, DeepOptions{.enabled = deep_, .jobs = 1});
  if (!file.ok()) return io_error(std::string(file.status().message()));
  // A shard alone (split/lone_shard.h): its verdict depends on its name,
  // which the cache's key does not hold, so it is not stored.
  const bool named = JudgeLoneShard(file->mutable_report(), policy, label, LoneShardReason::kOneFile);
  const Report& r = file->report();
  const FileOutcome outcome{label, &r, ""};
  Result result{RenderJsonLine(outcome), ExitCodeOf(&r), r.file_size, false};
  // Only a whole-file verdict is worth keeping: a cache never turns
  // "could not verify" into an answer for later.
  if (named) {
    result.line = NotCached(result.line, "a shard judged alone, whose verdict depends on its name");
  } else if (result.code != kExitValid && result.code != kExitInvalid) {
    result.line = NotCached(result.line, "the verdict does not cover the whole file");
  } else {
    Store(EntryName(r.sha256), r.sha256, result.line, result.code, result.size);
  }
  return result;
}

std::string ResultCache::NotCached(const std::string& line, std::string_view why) {
  Json j = Json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return line;
  j["cache"] = absl::StrCat("not cached: ", Sv(why));
  return j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string ResultCache::EntryName(const std::string& sha256) const {
  return Sha256Hex(absl::StrCat(sha256, "\n", ToolKey(), "\n", policy_hash_)) + ".json";
}

}  // namespace ggufguard
