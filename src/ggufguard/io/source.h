// Where file bytes come from: memory, a path, standard input.
//
// A source answers positioned reads of a length known in advance. The
// validator reads the header through a growing prefix (2 MiB, then x4 until
// the header fits or the file ends), so the number of reads for a header
// depends only on its size in bytes, never on the number of strings in it;
// see docs/performance.md.
#ifndef GGUFGUARD_IO_SOURCE_H_
#define GGUFGUARD_IO_SOURCE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace ggufguard {

// The error a source or stream returns when reading on would pass a byte
// budget its caller set (a remote transfer budget, max_remote_bytes): the
// file is not at fault, it was only not read to the end. The validators turn
// it into an inconclusive report that keeps what was checked, never into a
// pass and never into an I/O error that drops the header's findings.
absl::Status BudgetSpentError(std::string_view message);
bool IsBudgetSpent(const absl::Status& status);

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual uint64_t size() const = 0;
  // Fills `out` with the bytes at [offset, offset + out.size()); an error if
  // that range is not inside the source or the read fails.
  virtual absl::Status ReadAt(uint64_t offset, absl::Span<uint8_t> out) = 0;
  // The first offset >= `offset` that may hold a non-zero byte: a file
  // system hole before it reads as zeros. `offset` itself unless the source
  // knows better; size() when only a hole is left.
  virtual uint64_t NextData(uint64_t offset) { return offset; }
  // The whole source as memory, when it is memory already (empty otherwise):
  // the deep check reads it in place instead of copying.
  virtual absl::Span<const uint8_t> Memory() const { return {}; }
};

class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(absl::Span<const uint8_t> bytes) : bytes_(bytes) {}
  uint64_t size() const override { return bytes_.size(); }
  absl::Status ReadAt(uint64_t offset, absl::Span<uint8_t> out) override;
  absl::Span<const uint8_t> Memory() const override { return bytes_; }

 private:
  absl::Span<const uint8_t> bytes_;
};

// Fills `out` from descriptor `fd` at `offset` with pread(2), retrying on
// EINTR and short reads; an error if the range is not inside [0, size), if
// a read fails, or if the file ends first (it shrank). `name` is for messages.
absl::Status PreadFully(int fd, uint64_t size, uint64_t offset, absl::Span<uint8_t> out, std::string_view name);

// Whether FileSource::Open follows a symbolic link in the last component.
enum class FinalLink { kFollow, kRefuse };

// A descriptor for reading `path` (O_CLOEXEC, O_NOCTTY) whose open never
// waits on a FIFO or a device, or -1 with errno set; the caller checks the
// type with fstat. A regular file under another process's write lease is
// waited for, as a plain open would. Every open of a path by name goes
// through here (FileSource::Open, ggufguard_map_path).
int OpenWithoutWaiting(const std::string& path, FinalLink final_link);

// Waits until descriptor `fd` has bytes to read or has ended, for readers
// of a descriptor left non-blocking by whoever passed it (a parent's shared
// stdin). False, with errno set, when poll(2) fails but for EINTR.
bool WaitUntilReadable(int fd);

// A regular file read with pread(2). The size is taken once, at open.
class FileSource final : public ByteSource {
 public:
  // Opens without blocking (a FIFO or a device answers at once, and is then
  // refused as not a regular file) and checks the type of what was opened,
  // not of what a name meant a moment before: a walk that saw a regular file
  // cannot be sent to a FIFO (a reader that never returns) or, with
  // FinalLink::kRefuse, through a link swapped in after it looked.
  static absl::StatusOr<std::unique_ptr<FileSource>> Open(const std::string& path,
                                                          FinalLink final_link = FinalLink::kFollow);
  ~FileSource() override;
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;

  uint64_t size() const override { return size_; }
  absl::Status ReadAt(uint64_t offset, absl::Span<uint8_t> out) override;
  // lseek(SEEK_DATA): one system call that skips a hole of any size.
  uint64_t NextData(uint64_t offset) override;
  int fd() const { return fd_; }

 private:
  FileSource(int fd, uint64_t size, std::string path) : fd_(fd), size_(size), path_(std::move(path)) {}
  int fd_;
  uint64_t size_;
  std::string path_;
};

// Counts the reads another source serves: the test that the number of reads
// for a header does not grow with the number of strings uses it.
class CountingSource final : public ByteSource {
 public:
  explicit CountingSource(ByteSource& inner) : inner_(inner) {}
  uint64_t size() const override { return inner_.size(); }
  absl::Status ReadAt(uint64_t offset, absl::Span<uint8_t> out) override {
    ++reads_;
    bytes_read_ += out.size();
    return inner_.ReadAt(offset, out);
  }
  uint64_t NextData(uint64_t offset) override { return inner_.NextData(offset); }
  uint64_t reads() const { return reads_; }
  uint64_t bytes_read() const { return bytes_read_; }

 private:
  ByteSource& inner_;
  uint64_t reads_ = 0;
  uint64_t bytes_read_ = 0;
};

// SHA-256 of the whole source, read in 1 MiB steps; lower-case hex.
absl::StatusOr<std::string> HashSource(ByteSource& source);

// A stream read forward once: standard input, a pipe, a socket.
class ByteStream {
 public:
  virtual ~ByteStream() = default;
  // Reads up to out.size() bytes into `out`; 0 only at the end of the stream.
  virtual absl::StatusOr<size_t> Read(absl::Span<uint8_t> out) = 0;
};

// read(2) on a descriptor the caller owns.
class FdStream final : public ByteStream {
 public:
  FdStream(int fd, std::string name);
  absl::StatusOr<size_t> Read(absl::Span<uint8_t> out) override;

 private:
  int fd_;
  std::string name_;
};

// A source read forward from its start as a stream: --header-only on a
// path stops where a pipe would, and a path validated with its hash is read
// once, every byte going to the rules and the digest alike
// (ValidateSourceHashed). The source's size, taken once, is where it ends.
class SourceStream final : public ByteStream {
 public:
  explicit SourceStream(ByteSource& source) : source_(source) {}
  absl::StatusOr<size_t> Read(absl::Span<uint8_t> out) override;

 private:
  ByteSource& source_;
  uint64_t position_ = 0;
};

// Bytes in memory served in reads of at most `max_read` bytes: the tests and
// the prefix fuzzer cut a file at every kind of place this way.
class MemoryStream final : public ByteStream {
 public:
  explicit MemoryStream(absl::Span<const uint8_t> bytes, size_t max_read = SIZE_MAX)
      : bytes_(bytes), max_read_(max_read == 0 ? 1 : max_read) {}
  absl::StatusOr<size_t> Read(absl::Span<uint8_t> out) override;
  size_t consumed() const { return at_; }

 private:
  absl::Span<const uint8_t> bytes_;
  size_t max_read_;
  size_t at_ = 0;
};

// What a stream's data section held, for the layout rules' zero checks,
// recorded in its one forward pass without keeping its bytes. The header
// fixes, before the data is read, every offset at which a zero check may
// start or end (DataLayoutBoundaries in rules/rules.h); the map keeps, for
// each segment between two consecutive such offsets, the offset of its
// first non-zero byte. Its size is bounded by the header's tensor count.
class StreamZeroMap {
 public:
  // Covers the stream from `start` on; `boundaries` in any order, with
  // duplicates and offsets before `start` allowed.
  StreamZeroMap(uint64_t start, std::vector<uint64_t> boundaries);
  // The next bytes of the stream, which are at position().
  void Feed(const uint8_t* p, size_t n);
  uint64_t position() const { return position_; }
  uint64_t start() const { return start_; }
  // Once the stream has ended: whether [offset, offset + n) is all zero,
  // with the first non-zero byte's offset in *first_nonzero. Both ends must
  // be boundaries, start() or the end of the stream: anything else is an
  // internal error (a zero check the boundaries did not foresee).
  absl::StatusOr<bool> AllZero(uint64_t offset, uint64_t n, uint64_t* first_nonzero) const;

 private:
  static constexpr uint64_t kNone = UINT64_MAX;
  uint64_t start_;
  uint64_t position_;
  std::vector<uint64_t> cuts_;            // sorted, unique, all > start_
  std::vector<uint64_t> first_nonzero_;  // per segment: [start_ or cut k-1, cut k), last one open-ended
  size_t segment_ = 0;                    // the segment position_ is in
};

// The file as the rules see it: the prefix that holds the header, plus the
// source for the few reads past it (padding between tensors), or, for a
// stream, the zero map recorded while it was read.
class FileView {
 public:
  FileView(absl::Span<const uint8_t> prefix, ByteSource* source)
      : prefix_(prefix), source_(source), size_(source ? source->size() : prefix.size()) {}
  FileView(absl::Span<const uint8_t> prefix, const StreamZeroMap* map, uint64_t size)
      : prefix_(prefix), source_(nullptr), map_(map), size_(size) {}
  // A file of `size` bytes of which only the prefix was read (--header-only
  // --file-size): zero checks see the prefix, and pass over the rest,
  // which the report's coverage says was not read.
  static FileView PrefixOfSize(absl::Span<const uint8_t> prefix, uint64_t size) {
    FileView view(prefix, nullptr);
    view.size_ = size;
    view.unread_past_prefix_ = true;
    return view;
  }

  uint64_t size() const { return size_; }
  absl::Span<const uint8_t> prefix() const { return prefix_; }

  // True when every byte of [offset, offset + n) is zero; the first non-zero
  // byte's offset goes to *first_nonzero. The range must lie inside the file.
  // Reads past the prefix go through a 64 KiB to 1 MiB window, so neighbouring pads
  // cost one read, and skip file system holes (a hole reads as zeros).
  absl::StatusOr<bool> AllZero(uint64_t offset, uint64_t n, uint64_t* first_nonzero);

 private:
  absl::Span<const uint8_t> prefix_;
  ByteSource* source_;
  const StreamZeroMap* map_ = nullptr;
  uint64_t size_;
  bool unread_past_prefix_ = false;
  // Not a std::vector: resizing one zero-fills up to 1 MiB before each read
  // that overwrites it anyway. Grown, never shrunk; left uninitialised.
  std::unique_ptr<uint8_t[]> window_;
  size_t window_capacity_ = 0;
  size_t window_size_ = 0;  // bytes of window_ that hold the file from window_offset_
  uint64_t window_offset_ = 0;
};

}  // namespace ggufguard

#endif  // GGUFGUARD_IO_SOURCE_H_
