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
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace ggufguard {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual uint64_t size() const = 0;
  // Fills `out` with the bytes at [offset, offset + out.size()); an error if
  // that range is not inside the source or the read fails.
  virtual absl::Status ReadAt(uint64_t offset, absl::Span<uint8_t> out) = 0;
};

class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(absl::Span<const uint8_t> bytes) : bytes_(bytes) {}
  uint64_t size() const override { return bytes_.size(); }
  absl::Status ReadAt(uint64_t offset, absl::Span<uint8_t> out) override;

 private:
  absl::Span<const uint8_t> bytes_;
};

// A regular file read with pread(2). The size is taken once, at open.
class FileSource final : public ByteSource {
 public:
  static absl::StatusOr<std::unique_ptr<FileSource>> Open(const std::string& path);
  ~FileSource() override;
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;

  uint64_t size() const override { return size_; }
  absl::Status ReadAt(uint64_t offset, absl::Span<uint8_t> out) override;

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
  uint64_t reads() const { return reads_; }
  uint64_t bytes_read() const { return bytes_read_; }

 private:
  ByteSource& inner_;
  uint64_t reads_ = 0;
  uint64_t bytes_read_ = 0;
};

// Reads a whole stream (standard input) into memory, refusing to hold more
// than `max_bytes`: a clear error instead of an out-of-memory kill.
absl::StatusOr<std::vector<uint8_t>> ReadStream(int fd, uint64_t max_bytes);

// The file as the rules see it: the prefix that holds the header, plus the
// source for the few reads past it (padding between tensors).
class FileView {
 public:
  FileView(absl::Span<const uint8_t> prefix, ByteSource* source)
      : prefix_(prefix), source_(source), size_(source ? source->size() : prefix.size()) {}

  uint64_t size() const { return size_; }
  absl::Span<const uint8_t> prefix() const { return prefix_; }

  // True when every byte of [offset, offset + n) is zero; the first non-zero
  // byte's offset goes to *first_nonzero. The range must lie inside the file.
  // Reads past the prefix go through a 64 KiB window, so neighbouring pads
  // cost one read.
  absl::StatusOr<bool> AllZero(uint64_t offset, uint64_t n, uint64_t* first_nonzero);

 private:
  absl::Span<const uint8_t> prefix_;
  ByteSource* source_;
  uint64_t size_;
  std::vector<uint8_t> window_;
  uint64_t window_offset_ = 0;
};

}  // namespace ggufguard

#endif  // GGUFGUARD_IO_SOURCE_H_
