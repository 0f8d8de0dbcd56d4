// A llamafile (github.com/mozilla-ai/llamafile): an executable whose ZIP,
// appended to it, holds the GGUF model stored uncompressed. The validators
// judge such a file as the GGUF it carries (GG9166 says what carries it);
// this module finds the member and gives the byte range to judge.
#ifndef GGUFGUARD_READ_LLAMAFILE_H_
#define GGUFGUARD_READ_LLAMAFILE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ggufguard/base/sha256.h"
#include "ggufguard/format/zip.h"
#include "ggufguard/io/source.h"

namespace ggufguard {

struct LlamafileProbe {
  bool is_archive = false;   // a ZIP ends the file: GG9166 applies
  std::string container;     // "an APE executable (a shell script, a Windows PE and an ELF program)", ...
  // The member judged as the file, when there is one stored uncompressed.
  bool judged = false;
  std::string member_name;   // printable ASCII
  uint64_t offset = 0;       // of its first byte in the file
  uint64_t size = 0;
  uint64_t other_members = 0;  // further .gguf members, not judged
  // Why no member is judged (deflated, encrypted, no .gguf member, an
  // archive that does not parse), printable ASCII.
  std::string problem;
};

// Whether `head` (the file's first bytes) starts with the GGUF magic; a
// file that does is never probed.
bool StartsWithGgufMagic(absl::Span<const uint8_t> head);

// Reads the ZIP at the end of `source` (format/zip.h), and the file's
// first bytes to name the container. is_archive is false for any file that
// does not end with a ZIP end record. Errors are I/O errors.
absl::StatusOr<LlamafileProbe> ProbeLlamafile(ByteSource& source);

// GG9166's message for a probe that found an archive.
std::string LlamafileMessage(const LlamafileProbe& probe);

// What the report's not_checked says of the members not judged; empty when
// there are none.
std::string LlamafileNotChecked(const LlamafileProbe& probe);

// `size` bytes of another source from `offset` on, as a source of its own:
// the member a llamafile carries, read in place.
class SubrangeSource final : public ByteSource {
 public:
  // The caller has proven [offset, offset + size) inside `inner`.
  SubrangeSource(ByteSource& inner, uint64_t offset, uint64_t size) : inner_(inner), offset_(offset), size_(size) {}
  uint64_t size() const override { return size_; }
  absl::Status ReadAt(uint64_t offset, absl::Span<uint8_t> out) override;
  uint64_t NextData(uint64_t offset) override;
  absl::Span<const uint8_t> Memory() const override;

 private:
  ByteSource& inner_;
  uint64_t offset_;
  uint64_t size_;
};

// What another source's reads returned, kept so that a later read of the
// same bytes can be held to them. A hashing route (ValidateSourceHashed)
// probes for a llamafile before the one pass that hashes the file and
// validates its member; the probe's answer (where the member is, that it is
// stored, that it is a GGUF) stands only if that pass meets the very bytes
// the probe read (CheckedWindowStream). The probe reads the file's first
// bytes, its ZIP's tail, directory and local headers and the member's
// magic, which format/zip.h bounds; a read past kMaxRecordedBytes in all is
// refused (an internal error: no probe reads that much).
class RecordingSource final : public ByteSource {
 public:
  struct Read {
    uint64_t offset;
    std::vector<uint8_t> bytes;
  };
  static constexpr uint64_t kMaxRecordedBytes = kMaxCentralDirectoryBytes + (uint64_t{1} << 20);

  explicit RecordingSource(ByteSource& inner) : inner_(inner) {}
  uint64_t size() const override { return inner_.size(); }
  absl::Status ReadAt(uint64_t offset, absl::Span<uint8_t> out) override;
  uint64_t NextData(uint64_t offset) override { return inner_.NextData(offset); }
  const std::vector<Read>& reads() const { return reads_; }

 private:
  ByteSource& inner_;
  std::vector<Read> reads_;
  uint64_t recorded_ = 0;
};

// Bytes [begin, end) of a source as a stream read forward once, while every
// byte of the whole source goes through one SHA-256 and is compared with
// `expected` wherever one of its reads covers it: the member of a llamafile
// validated in the pass that hashes the file. The bytes before `begin` are
// read at the first Read, those from `end` on by Finish. A byte that differs
// from what `expected` holds is a DataLoss error: the file changed between
// the two reads, and no verdict may be given for either state.
class CheckedWindowStream final : public ByteStream {
 public:
  // The caller has proven begin <= end <= source.size(); `expected` must
  // outlive the stream.
  CheckedWindowStream(ByteSource& source, uint64_t begin, uint64_t end,
                      const std::vector<RecordingSource::Read>& expected)
      : source_(source), size_(source.size()), begin_(begin), end_(end), expected_(expected) {}
  absl::StatusOr<size_t> Read(absl::Span<uint8_t> out) override;
  // Reads the rest of the source; then the digest of all its bytes.
  absl::StatusOr<std::string> Finish();
  // Whether every byte of the window has been read.
  bool read_whole_window() const { return position_ >= end_; }

 private:
  // Hashes and checks the next bytes of the source, which are at position_.
  absl::Status Pass(absl::Span<const uint8_t> bytes);
  // Reads (hashes, checks) everything from position_ up to `to`.
  absl::Status ReadUpTo(uint64_t to);

  ByteSource& source_;
  const uint64_t size_;  // taken once, as SourceStream does
  const uint64_t begin_;
  const uint64_t end_;
  const std::vector<RecordingSource::Read>& expected_;
  uint64_t position_ = 0;
  Sha256 hash_;
  std::vector<uint8_t> scratch_;  // for the bytes outside the window
};

}  // namespace ggufguard

#endif  // GGUFGUARD_READ_LLAMAFILE_H_
