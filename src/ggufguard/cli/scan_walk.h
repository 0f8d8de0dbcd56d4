// What `ggufguard scan` validates: the files under its PATH arguments and in
// a --files-from list, found one at a time (nothing is collected, so memory
// does not grow with the number of files).
#ifndef GGUFGUARD_CLI_SCAN_WALK_H_
#define GGUFGUARD_CLI_SCAN_WALK_H_

#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace ggufguard {

struct WalkOptions {
  bool recursive = false;        // descend into subdirectories
  bool all_files = false;        // every regular file, not only *.gguf
  bool follow_symlinks = false;  // otherwise a symbolic link is reported as skipped
};

struct WalkEntry {
  enum class Kind {
    kFile,     // a regular file to validate
    kSkipped,  // a candidate left alone (a symbolic link, a special file): `reason`
    kError,    // a path or directory that could not be read: `reason`
  };
  Kind kind;
  std::string path;
  std::string reason;
  uint64_t size = 0;  // kFile, when known from the walk (0 otherwise)
};

// True for a name ending in ".gguf", in any case.
bool HasGgufExtension(std::string_view name);

// Visits every entry under `root` in readdir order: a file named explicitly
// is validated whatever its name; inside a directory only *.gguf files (or
// every regular file with all_files) count, and only they are reported as
// skipped when they are links or special files. With follow_symlinks a link
// to a directory is entered unless it leads back to a directory being walked
// (a cycle).
void Walk(const std::string& root, const WalkOptions& options, const std::function<void(WalkEntry)>& visit);

// Reads a --files-from list one path at a time: NUL-separated when `nul` is
// set or, when unset, if a NUL byte appears in the first 64 KiB (a path is at
// most 4096 bytes, so a NUL-separated list shows one there); else one path a
// line. Empty entries are ignored.
class PathListReader {
 public:
  PathListReader(std::FILE* in, std::optional<bool> nul) : in_(in), nul_(nul) {}
  // The next path, or nullopt at the end (or on a read error: see error()).
  std::optional<std::string> Next();
  bool error() const { return error_; }

 private:
  int Get();
  std::FILE* in_;
  std::optional<bool> nul_;
  std::string peeked_;  // bytes read to detect the separator, not yet consumed
  size_t peeked_pos_ = 0;
  bool error_ = false;
};

}  // namespace ggufguard

#endif  // GGUFGUARD_CLI_SCAN_WALK_H_
