#include "ggufguard/io/source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace ggufguard {
namespace {

absl::Status ErrnoStatus(const std::string& what) {
  return absl::UnavailableError(absl::StrCat(what, ": ", std::strerror(errno)));
}

bool RangeInside(uint64_t offset, uint64_t n, uint64_t size) { return offset <= size && n <= size - offset; }

}  // namespace

absl::Status MemorySource::ReadAt(uint64_t offset, absl::Span<uint8_t> out) {
  if (!RangeInside(offset, out.size(), bytes_.size())) {
    return absl::OutOfRangeError(absl::StrCat("read of ", out.size(), " bytes at ", offset, " is past the end"));
  }
  if (!out.empty()) std::memcpy(out.data(), bytes_.data() + offset, out.size());
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<FileSource>> FileSource::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(absl::StrCat("cannot open ", path));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    absl::Status s = ErrnoStatus(absl::StrCat("cannot stat ", path));
    ::close(fd);
    return s;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::FailedPreconditionError(absl::StrCat(path, " is not a regular file"));
  }
  return std::unique_ptr<FileSource>(new FileSource(fd, static_cast<uint64_t>(st.st_size), path));
}

FileSource::~FileSource() { ::close(fd_); }

absl::Status FileSource::ReadAt(uint64_t offset, absl::Span<uint8_t> out) {
  if (!RangeInside(offset, out.size(), size_)) {
    return absl::OutOfRangeError(absl::StrCat("read of ", out.size(), " bytes at ", offset, " is past the end"));
  }
  size_t done = 0;
  while (done < out.size()) {
    ssize_t got = ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(absl::StrCat("cannot read ", path_));
    }
    if (got == 0) {
      return absl::DataLossError(absl::StrCat(path_, " shrank while it was read (ends at ", offset + done, ")"));
    }
    done += static_cast<size_t>(got);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<uint8_t>> ReadStream(int fd, uint64_t max_bytes) {
  std::vector<uint8_t> bytes;
  constexpr size_t kChunk = 1 << 20;
  for (;;) {
    size_t old = bytes.size();
    // Read at most one byte past the cap, to tell "exactly the cap" from "over".
    // (Compare before adding the one: with no cap, max_bytes = 2^64 - 1, the
    // sum would wrap to 0 and read nothing.)
    uint64_t left = max_bytes - std::min<uint64_t>(old, max_bytes);
    size_t want = left < kChunk ? static_cast<size_t>(left) + 1 : kChunk;
    bytes.resize(old + want);
    ssize_t got = ::read(fd, bytes.data() + old, want);
    if (got < 0) {
      if (errno == EINTR) {
        bytes.resize(old);
        continue;
      }
      return ErrnoStatus("cannot read standard input");
    }
    bytes.resize(old + static_cast<size_t>(got));
    if (got == 0) return bytes;
    if (bytes.size() > max_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("standard input is larger than the limit of ", max_bytes,
                       " bytes held in memory (raise it with --max-stdin-bytes, or pass a path)"));
    }
  }
}

absl::StatusOr<bool> FileView::AllZero(uint64_t offset, uint64_t n, uint64_t* first_nonzero) {
  if (!RangeInside(offset, n, size_)) return absl::InternalError("AllZero range outside the file");
  constexpr uint64_t kWindow = 64 * 1024;
  uint64_t end = offset + n;
  while (offset < end) {
    const uint8_t* p;
    uint64_t avail;
    if (offset < prefix_.size()) {
      p = prefix_.data() + offset;
      avail = prefix_.size() - offset;
    } else {
      if (source_ == nullptr) return absl::InternalError("read past the prefix without a source");
      if (offset < window_offset_ || offset >= window_offset_ + window_.size()) {
        window_offset_ = offset;
        window_.resize(std::min<uint64_t>(kWindow, size_ - offset));
        absl::Status s = source_->ReadAt(offset, absl::MakeSpan(window_));
        if (!s.ok()) {
          window_.clear();
          return s;
        }
      }
      p = window_.data() + (offset - window_offset_);
      avail = window_.size() - (offset - window_offset_);
    }
    uint64_t take = std::min(avail, end - offset);
    for (uint64_t i = 0; i < take; ++i) {
      if (p[i] != 0) {
        *first_nonzero = offset + i;
        return false;
      }
    }
    offset += take;
  }
  return true;
}

}  // namespace ggufguard
