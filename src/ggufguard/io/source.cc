#include "ggufguard/io/source.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/bytes.h"
#include "ggufguard/base/sha256.h"

namespace ggufguard {

namespace {
constexpr char kBudgetSpentPayload[] = "ggufguard/budget-spent";
}  // namespace

absl::Status BudgetSpentError(std::string_view message) {
  absl::Status status = absl::ResourceExhaustedError(absl::string_view(message.data(), message.size()));
  status.SetPayload(kBudgetSpentPayload, absl::Cord("1"));
  return status;
}

bool IsBudgetSpent(const absl::Status& status) {
  return absl::IsResourceExhausted(status) && status.GetPayload(kBudgetSpentPayload).has_value();
}
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

// O_NONBLOCK is what keeps a FIFO from blocking the open; but a regular
// file under another process's write lease (Samba oplocks) then fails with
// EWOULDBLOCK instead of waiting for the lease to break. For that one case
// the name is pinned with O_PATH (which neither reads nor breaks a lease),
// its type checked, and that same inode reopened through /proc/self/fd,
// blocking: the wait a plain open would have made.
int OpenWithoutWaiting(const std::string& path, FinalLink final_link) {
  const int nofollow = final_link == FinalLink::kRefuse ? O_NOFOLLOW : 0;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | nofollow);
  if (fd >= 0 || (errno != EWOULDBLOCK && errno != EAGAIN)) return fd;
  const int pinned = ::open(path.c_str(), O_PATH | O_CLOEXEC | nofollow);
  if (pinned < 0) return -1;
  struct stat st;
  const bool regular = ::fstat(pinned, &st) == 0 && S_ISREG(st.st_mode);
  if (!regular) {  // not the lease case: the open's own answer stands
    ::close(pinned);
    errno = EWOULDBLOCK;
    return -1;
  }
  const int reopened = ::open(absl::StrCat("/proc/self/fd/", pinned).c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  const int saved = errno;
  ::close(pinned);
  errno = saved;
  return reopened;
}

bool WaitUntilReadable(int fd) {
  pollfd ready{fd, POLLIN, 0};
  return ::poll(&ready, 1, -1) >= 0 || errno == EINTR;
}

absl::StatusOr<std::unique_ptr<FileSource>> FileSource::Open(const std::string& path, FinalLink final_link) {
  const int fd = OpenWithoutWaiting(path, final_link);
  if (fd < 0 && errno == ELOOP && final_link == FinalLink::kRefuse) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " is a symbolic link, not followed (or a loop of links in its directories)"));
  }
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
  // Reads of a regular file ignore O_NONBLOCK; cleared all the same, as the
  // descriptor is handed to FdStream for --header-only.
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    absl::Status s = ErrnoStatus(absl::StrCat("cannot set up ", path));
    ::close(fd);
    return s;
  }
  return std::unique_ptr<FileSource>(new FileSource(fd, static_cast<uint64_t>(st.st_size), path));
}

FileSource::~FileSource() { ::close(fd_); }

absl::Status PreadFully(int fd, uint64_t size, uint64_t offset, absl::Span<uint8_t> out, std::string_view name) {
  if (!RangeInside(offset, out.size(), size)) {
    return absl::OutOfRangeError(absl::StrCat("read of ", out.size(), " bytes at ", offset, " is past the end"));
  }
  size_t done = 0;
  while (done < out.size()) {
    ssize_t got = ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(absl::StrCat("cannot read ", Sv(name)));
    }
    if (got == 0) {
      return absl::DataLossError(absl::StrCat(Sv(name), " shrank while it was read (ends at ", offset + done, ")"));
    }
    done += static_cast<size_t>(got);
  }
  return absl::OkStatus();
}

absl::Status FileSource::ReadAt(uint64_t offset, absl::Span<uint8_t> out) {
  return PreadFully(fd_, size_, offset, out, path_);
}

uint64_t FileSource::NextData(uint64_t offset) {
  if (offset >= size_) return size_;
  const off_t next = ::lseek(fd_, static_cast<off_t>(offset), SEEK_DATA);
  // ENXIO: only a hole is left. Any other failure (a file system without
  // SEEK_DATA): assume data, and read.
  if (next < 0) return errno == ENXIO ? size_ : offset;
  return std::min<uint64_t>(static_cast<uint64_t>(next), size_);
}

absl::StatusOr<std::string> HashSource(ByteSource& source) {
  constexpr uint64_t kStep = uint64_t{1} << 20;
  std::vector<uint8_t> buf(static_cast<size_t>(std::min(kStep, source.size())));
  Sha256 hash;
  for (uint64_t at = 0; at < source.size();) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(buf.size(), source.size() - at));
    absl::Status s = source.ReadAt(at, absl::MakeSpan(buf.data(), n));
    if (!s.ok()) return s;
    hash.Update(buf.data(), n);
    at += n;
  }
  return hash.HexDigest();
}

FdStream::FdStream(int fd, std::string name) : fd_(fd), name_(std::move(name)) {
  // A pipe's 64 KiB buffer makes reader and writer take turns every 64 KiB:
  // ask for 1 MiB (the default pipe-max-size), so each read takes more.
  // Refused (an older kernel, a lower limit, not a pipe): nothing changes.
  struct stat st;
  if (::fstat(fd_, &st) == 0 && S_ISFIFO(st.st_mode)) (void)::fcntl(fd_, F_SETPIPE_SZ, 1 << 20);
}

absl::StatusOr<size_t> FdStream::Read(absl::Span<uint8_t> out) {
  for (;;) {
    const ssize_t got = ::read(fd_, out.data(), out.size());
    if (got >= 0) return static_cast<size_t>(got);
    if ((errno == EAGAIN || errno == EWOULDBLOCK) && WaitUntilReadable(fd_)) continue;
    if (errno != EINTR) return ErrnoStatus(absl::StrCat("cannot read ", name_));
  }
}

absl::StatusOr<size_t> SourceStream::Read(absl::Span<uint8_t> out) {
  const size_t n = static_cast<size_t>(std::min<uint64_t>(out.size(), source_.size() - position_));
  if (n == 0) return size_t{0};
  absl::Status s = source_.ReadAt(position_, out.first(n));
  if (!s.ok()) return s;
  position_ += n;
  return n;
}

absl::StatusOr<size_t> MemoryStream::Read(absl::Span<uint8_t> out) {
  const size_t n = std::min({out.size(), max_read_, bytes_.size() - at_});
  if (n > 0) std::memcpy(out.data(), bytes_.data() + at_, n);
  at_ += n;
  return n;
}

StreamZeroMap::StreamZeroMap(uint64_t start, std::vector<uint64_t> boundaries)
    : start_(start), position_(start), cuts_(std::move(boundaries)) {
  cuts_.erase(std::remove_if(cuts_.begin(), cuts_.end(), [&](uint64_t b) { return b <= start_; }), cuts_.end());
  std::sort(cuts_.begin(), cuts_.end());
  cuts_.erase(std::unique(cuts_.begin(), cuts_.end()), cuts_.end());
  first_nonzero_.assign(cuts_.size() + 1, kNone);
}

void StreamZeroMap::Feed(const uint8_t* p, size_t n) {
  while (n > 0) {
    // The bytes of this call that lie in the current segment.
    const uint64_t segment_end = segment_ < cuts_.size() ? cuts_[segment_] : UINT64_MAX;
    const size_t take = static_cast<size_t>(std::min<uint64_t>(n, segment_end - position_));
    if (first_nonzero_[segment_] == kNone) {
      // Only a segment that is zero so far is scanned: the rest of a tensor
      // that has shown a non-zero byte costs nothing.
      const uint64_t i = FirstNonZero(p, take);
      if (i < take) first_nonzero_[segment_] = position_ + i;
    }
    p += take;
    n -= take;
    position_ += take;
    if (position_ == segment_end) ++segment_;
  }
}

absl::StatusOr<bool> StreamZeroMap::AllZero(uint64_t offset, uint64_t n, uint64_t* first_nonzero) const {
  if (offset < start_ || offset > position_ || n > position_ - offset) {
    return absl::InternalError("zero check outside the streamed bytes");
  }
  const uint64_t end = offset + n;
  if (n == 0) return true;
  // Segment k is [k == 0 ? start_ : cuts_[k-1], k < cuts_.size() ? cuts_[k] : end of stream).
  auto is_edge = [&](uint64_t at) {
    return at == start_ || at == position_ || std::binary_search(cuts_.begin(), cuts_.end(), at);
  };
  if (!is_edge(offset) || !is_edge(end)) {
    return absl::InternalError(absl::StrCat("zero check [", offset, ", ", end, ") does not fall on the boundaries "
                                            "the header fixed"));
  }
  for (size_t k = static_cast<size_t>(std::upper_bound(cuts_.begin(), cuts_.end(), offset) - cuts_.begin());
       k < first_nonzero_.size(); ++k) {
    const uint64_t segment_begin = k == 0 ? start_ : cuts_[k - 1];
    if (segment_begin >= end) break;
    if (first_nonzero_[k] != kNone) {
      *first_nonzero = first_nonzero_[k];
      return false;
    }
  }
  return true;
}

absl::StatusOr<bool> FileView::AllZero(uint64_t offset, uint64_t n, uint64_t* first_nonzero) {
  if (!RangeInside(offset, n, size_)) return absl::InternalError("AllZero range outside the file");
  // A read past the prefix takes 64 KiB, so that neighbouring small pads
  // cost one read, or up to 1 MiB for a longer range (1 MiB alignment).
  constexpr uint64_t kMinWindow = uint64_t{64} << 10;
  constexpr uint64_t kMaxWindow = uint64_t{1} << 20;
  // Holes are looked for only across ranges of a few windows or more: below
  // that, an lseek costs more than the read it could save.
  constexpr uint64_t kHoleWorthAsking = 4 * kMinWindow;
  const uint64_t end = offset + n;
  while (offset < end) {
    const uint8_t* p;
    uint64_t avail;
    if (offset < prefix_.size()) {
      p = prefix_.data() + offset;
      avail = prefix_.size() - offset;
    } else if (map_ != nullptr) {
      return map_->AllZero(offset, end - offset, first_nonzero);
    } else if (unread_past_prefix_) {
      break;  // not read: see PrefixOfSize
    } else {
      if (source_ == nullptr) return absl::InternalError("read past the prefix without a source");
      if (offset < window_offset_ || offset >= window_offset_ + window_size_) {
        if (end - offset >= kHoleWorthAsking) {
          offset = std::min(end, std::max(offset, source_->NextData(offset)));
          if (offset == end) break;
        }
        window_offset_ = offset;
        const uint64_t wanted = std::clamp(end - offset, kMinWindow, kMaxWindow);
        const size_t size = static_cast<size_t>(std::min<uint64_t>(wanted, size_ - offset));  // <= 1 MiB
        if (size > window_capacity_) {
          window_.reset(new uint8_t[size]);
          window_capacity_ = size;
        }
        window_size_ = 0;
        absl::Status s = source_->ReadAt(offset, absl::Span<uint8_t>(window_.get(), size));
        if (!s.ok()) return s;
        window_size_ = size;
      }
      p = window_.get() + (offset - window_offset_);
      avail = window_size_ - (offset - window_offset_);
    }
    const uint64_t take = std::min(avail, end - offset);
    const uint64_t i = FirstNonZero(p, take);
    if (i < take) {
      *first_nonzero = offset + i;
      return false;
    }
    offset += take;
  }
  return true;
}

}  // namespace ggufguard
