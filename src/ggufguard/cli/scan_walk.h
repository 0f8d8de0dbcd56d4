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
  // Follow the root itself when it is a link (a PATH typed on the command
  // line, as `find -H` does); links below it, and in a --files-from list,
  // only with follow_symlinks.
  bool follow_root_link = false;
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
  // kFile: reached through a symbolic link the walk chose to follow. When
  // false the file is opened refusing a link (FinalLink::kRefuse), so one
  // swapped in after the walk looked is not followed either.
  bool through_link = false;
};

// True for a name ending in ".gguf" or ".llamafile" (an executable that
// carries a GGUF model, GG9166), in any case, with something before it.
bool HasModelExtension(std::string_view name);

// Visits every entry under `root` in readdir order: a file named explicitly
// is validated whatever its name, and a named path that is neither a file
// nor a directory (a FIFO, a device) is an error; inside a directory only
// *.gguf and *.llamafile files (or every regular file with all_files) count,
// and only they are reported as skipped when they are links or special
// files. With follow_symlinks a link to a directory is entered unless it leads back to a directory being walked
// (a cycle); without it, a link to a directory is reported as skipped when
// `recursive` would have entered it.
void Walk(const std::string& root, const WalkOptions& options, const std::function<void(WalkEntry)>& visit);

// Reads a --files-from list one path at a time, as it arrives:
// NUL-separated when `nul` is set or, when unset, if a NUL shows in the
// first PATH_MAX + 1 (4097) bytes, where a NUL-separated list must show
// one; else one path a line. Unset, the first path is handed out once those
// bytes (or the end) have arrived. Empty entries are ignored. A NUL met
// later in a list read one path a line ends it with an error. A
// non-blocking descriptor is waited on, not an error. The list is read as
// it comes, at most `max_bytes` in all: past that (a list that is
// /dev/zero, a runaway producer) it ends with an error, and what came before
// stands. Its time is not bounded: a producer such as find(1) over a large
// tree may take hours, and scan ends when the list does.
inline constexpr uint64_t kMaxPathListBytes = uint64_t{1} << 30;
class PathListReader {
 public:
  PathListReader(std::FILE* in, std::optional<bool> nul, uint64_t max_bytes = kMaxPathListBytes)
      : in_(in), nul_(nul), max_bytes_(max_bytes) {}
  // The next path, or nullopt at the end or on an error (see error()).
  std::optional<std::string> Next();
  bool error() const { return error_; }
  const std::string& error_message() const { return error_message_; }

 private:
  int Get();       // the next byte: peeked ones first
  int ReadByte();  // the next byte from the stream
  void Detect();
  void Fail(std::string message);
  std::FILE* in_;
  std::optional<bool> nul_;
  uint64_t max_bytes_;
  uint64_t bytes_read_ = 0;
  std::string peeked_;  // bytes read by Detect, not yet consumed
  size_t peeked_pos_ = 0;
  bool error_ = false;
  std::string error_message_;
};

}  // namespace ggufguard

#endif  // GGUFGUARD_CLI_SCAN_WALK_H_
