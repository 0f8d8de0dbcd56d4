// `scan --cache DIR`: a rescan reuses each file's result when nothing that
// decides it changed. An entry is keyed by the file's SHA-256, the tool
// version (with the rule catalog's) and the policy's hash (the policy file's
// bytes, or the built-in name, plus --deep), and is reused only when all
// three match what is stored in it: the entry's name is only where to look.
// A result that is not stored says why in its line ("cache"). A remote
// file is validated through the remote route and never cached: its digest
// is known only once every byte has been read, so no lookup could save
// that read, and its verdict also rests on what the hub said of it.
// An entry that is unreadable, malformed, over kMaxCacheEntryBytes, not a
// regular file, or that a link points at is ignored (the file is validated)
// and rewritten, never trusted. Entries are written to a temporary file and
// renamed into place, so a reader sees a whole entry or none, and a link
// planted under an entry's name is replaced, not followed.
#ifndef GGUFGUARD_CLI_SCAN_CACHE_H_
#define GGUFGUARD_CLI_SCAN_CACHE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "ggufguard/cli/scan_walk.h"
#include "ggufguard/findings/policy.h"
#include "ggufguard/io/source.h"

namespace ggufguard {

inline constexpr size_t kMaxCacheEntryBytes = size_t{1} << 20;

class ResultCache {
 public:
  // Opens (creating, mode 0700) the directory `dir`; refuses a link.
  // `policy_source` is the --policy argument: a built-in name or a file.
  // `profile`: --profile as given (empty: the policy's own), part of the key.
  // `policy_text`: a policy file's bytes as the policy was parsed from them
  // (LoadPolicyForCli); without it the file is read here (bounded).
  static absl::StatusOr<ResultCache> Open(const std::string& dir, const std::string& policy_source, bool deep,
                                          const std::string& profile = "",
                                          const std::string* policy_text = nullptr);
  ResultCache(ResultCache&&) noexcept;
  ~ResultCache();

  // One file's JSON line (docs/scan.schema.json) and exit code
  // (kExitValid, kExitInvalid or kExitIo): from the cache when an entry
  // matches, else validated (and stored when the file could be read).
  struct Result {
    std::string line;
    int code;
    uint64_t size;
    bool hit;
  };
  Result Scan(const WalkEntry& entry, const Policy& policy) const;
  // The same for an opened source named `label`. It is read twice on a
  // miss: once to hash it for the lookup, then once more, validated and
  // hashed in the same pass (ValidateSourceHashed); the entry stored is
  // keyed by that second digest, the one of the bytes its verdict judged.
  Result ScanSource(ByteSource& source, const std::string& label, const Policy& policy) const;

  const std::string& policy_hash() const { return policy_hash_; }

  // `line` (a scan JSON line) with "cache": "not cached: WHY", for a result
  // that is not stored: an I/O error, an inconclusive verdict, a verdict
  // that depends on the file's name, a remote file.
  static std::string NotCached(const std::string& line, std::string_view why);

 private:
  ResultCache(int dir_fd, std::string policy_hash, bool deep) : dir_fd_(dir_fd), policy_hash_(std::move(policy_hash)), deep_(deep) {}
  std::optional<Result> Lookup(const std::string& name, const std::string& sha256, const std::string& label) const;
  std::string EntryName(const std::string& sha256) const;
  void Store(const std::string& name, const std::string& sha256, const std::string& line, int code, uint64_t size) const;

  int dir_fd_ = -1;
  std::string policy_hash_;
  bool deep_ = false;
};

}  // namespace ggufguard

#endif  // GGUFGUARD_CLI_SCAN_CACHE_H_
