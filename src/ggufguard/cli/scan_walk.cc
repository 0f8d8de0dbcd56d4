#include "ggufguard/cli/scan_walk.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ggufguard/io/source.h"

namespace ggufguard {
namespace {

std::string Errno(const char* what) { return absl::StrCat(what, ": ", std::strerror(errno)); }

class Walker {
 public:
  Walker(const WalkOptions& options, const std::function<void(WalkEntry)>& visit) : o_(options), visit_(visit) {}

  void Root(const std::string& path) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) {
      const bool missing = errno == ENOENT;
      std::string reason = Errno("cannot stat");
      if (missing && path == "-") reason += " (a list on standard input is --files-from -)";
      if (missing && path.ends_with('\r')) reason += " (the path ends in a carriage return: a CRLF list?)";
      return Error(path, std::move(reason));
    }
    const bool link = S_ISLNK(st.st_mode);
    if (link) {
      if (!o_.follow_symlinks && !o_.follow_root_link) {
        return Skip(path, "symbolic link, not followed without --follow-symlinks");
      }
      if (::stat(path.c_str(), &st) != 0) return Error(path, Errno("cannot follow symbolic link"));
    }
    if (S_ISDIR(st.st_mode)) return Directory(path, st);
    if (S_ISREG(st.st_mode)) return File(path, st, link);
    // Named by the operator, so not passed over in silence (as `validate`).
    Error(path, "not a regular file");
  }

 private:
  void Error(const std::string& path, std::string reason) {
    visit_(WalkEntry{WalkEntry::Kind::kError, path, std::move(reason), 0});
  }
  void Skip(const std::string& path, std::string reason) {
    visit_(WalkEntry{WalkEntry::Kind::kSkipped, path, std::move(reason), 0});
  }
  void File(const std::string& path, const struct stat& st, bool through_link) {
    visit_(WalkEntry{WalkEntry::Kind::kFile, path, "", static_cast<uint64_t>(st.st_size), through_link});
  }
  bool Wanted(std::string_view name) const { return o_.all_files || HasModelExtension(name); }

  void Directory(const std::string& path, const struct stat& st) {
    for (const auto& [dev, ino] : ancestors_) {
      if (dev == st.st_dev && ino == st.st_ino) return Skip(path, "directory cycle through a symbolic link");
    }
    DIR* dir = ::opendir(path.c_str());
    if (dir == nullptr) return Error(path, Errno("cannot open directory"));
    ancestors_.emplace_back(st.st_dev, st.st_ino);
    const std::string prefix = path.ends_with('/') ? path : path + "/";
    for (;;) {
      errno = 0;
      const dirent* d = ::readdir(dir);
      if (d == nullptr) {
        if (errno != 0) Error(path, Errno("cannot read directory"));
        break;
      }
      const std::string_view name = d->d_name;
      if (name == "." || name == "..") continue;
      Child(dir, prefix + std::string(name), name);
    }
    ancestors_.pop_back();
    ::closedir(dir);
  }

  void Child(DIR* dir, const std::string& path, std::string_view name) {
    struct stat st;
    if (::fstatat(::dirfd(dir), std::string(name).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (Wanted(name)) Error(path, Errno("cannot stat"));
      return;
    }
    const bool link = S_ISLNK(st.st_mode);
    if (link) {
      if (!o_.follow_symlinks) {
        // Else the target's type is looked up (not its bytes; no automount)
        // to say when a directory was passed over.
        if (Wanted(name)) {
          Skip(path, "symbolic link, not followed without --follow-symlinks");
        } else if (o_.recursive &&
                   ::fstatat(::dirfd(dir), std::string(name).c_str(), &st, AT_NO_AUTOMOUNT) == 0 &&
                   S_ISDIR(st.st_mode)) {
          // Said, so that a tree whose models sit behind a linked directory
          // does not scan as "nothing found".
          Skip(path, "symbolic link to a directory, not followed without --follow-symlinks");
        }
        return;
      }
      if (::fstatat(::dirfd(dir), std::string(name).c_str(), &st, 0) != 0) {
        if (Wanted(name)) Error(path, Errno("cannot follow symbolic link"));
        return;
      }
    }
    if (S_ISDIR(st.st_mode)) {
      if (o_.recursive) Directory(path, st);
      return;
    }
    if (!Wanted(name)) return;
    if (S_ISREG(st.st_mode)) return File(path, st, link);
    Skip(path, "not a regular file");
  }

  const WalkOptions& o_;
  const std::function<void(WalkEntry)>& visit_;
  // The directories being walked, to stop a cycle of symbolic links: memory
  // grows with the depth of the tree, not its size.
  std::vector<std::pair<dev_t, ino_t>> ancestors_;
};

}  // namespace

bool HasModelExtension(std::string_view name) {
  // ASCII case folding only: the extensions are ASCII. (Debian's Abseil has
  // its own string_view, so absl::EndsWithIgnoreCase does not take ours.)
  auto ends_with = [name](std::string_view ext) {
    if (name.size() <= ext.size()) return false;
    const std::string_view tail = name.substr(name.size() - ext.size());
    for (size_t i = 0; i < ext.size(); ++i) {
      char c = tail[i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (c != ext[i]) return false;
    }
    return true;
  };
  return ends_with(".gguf") || ends_with(".llamafile");
}

void Walk(const std::string& root, const WalkOptions& options, const std::function<void(WalkEntry)>& visit) {
  Walker(options, visit).Root(root);
}

constexpr size_t kMaxListedPath = 4096;

int PathListReader::Get() {
  if (peeked_pos_ < peeked_.size()) return static_cast<unsigned char>(peeked_[peeked_pos_++]);
  return ReadByte();
}

int PathListReader::ReadByte() {
  if (bytes_read_ >= max_bytes_) {
    // One byte more would pass the bound: the list ends here, said.
    if (std::fgetc(in_) == EOF) return EOF;
    Fail(absl::StrCat("the list is longer than ", max_bytes_, " bytes; the rest was not read"));
    return EOF;
  }
  for (;;) {
    const int c = std::fgetc(in_);
    if (c != EOF) ++bytes_read_;
    if (c != EOF || !std::ferror(in_)) return c;
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      Fail(std::strerror(errno));
      return EOF;
    }
    // A non-blocking descriptor (a parent's shared stdin): wait, read again.
    const bool interrupted = errno == EINTR;
    std::clearerr(in_);
    if (!interrupted && !WaitUntilReadable(::fileno(in_))) {
      Fail(std::strerror(errno));
      return EOF;
    }
  }
}

void PathListReader::Fail(std::string message) {
  if (!error_) error_message_ = std::move(message);
  error_ = true;
}

void PathListReader::Detect() {
  // A NUL-separated list shows its first NUL within PATH_MAX + 1 bytes (a
  // path is at most kMaxListedPath). Until one shows, or that many bytes or
  // the end arrive, nothing is handed out: deciding at the first separator
  // instead let a first name with newlines in a NUL-separated list become
  // several paths, each validated (or walked) before the NUL was seen.
  for (;;) {
    const int c = ReadByte();
    if (c == EOF) break;
    peeked_.push_back(static_cast<char>(c));
    if (c == '\0') break;
    if (peeked_.size() > kMaxListedPath) break;
  }
  nul_ = peeked_.find('\0') != std::string::npos;
}

std::optional<std::string> PathListReader::Next() {
  if (!nul_) Detect();
  const int separator = *nul_ ? '\0' : '\n';
  std::string path;
  while (!error_) {
    const int c = Get();
    if (c == EOF) break;
    if (c == separator) {
      if (path.empty()) continue;
      return path;
    }
    if (c == '\0') {
      // A NUL in a list read one path a line: no path holds one, so the
      // list is not what it seemed. Stop rather than guess (an I/O error
      // for the list, never a silent skip).
      Fail("a NUL byte in a list read one path a line (for a NUL-separated list, give --null)");
      break;
    }
    // Longer than PATH_MAX: kept only that far (stat then fails with
    // ENAMETOOLONG), so a list without separators costs no memory.
    if (path.size() <= kMaxListedPath) path.push_back(static_cast<char>(c));
  }
  if (path.empty() || error_) return std::nullopt;
  return path;
}

}  // namespace ggufguard
