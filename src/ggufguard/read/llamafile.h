// A llamafile (github.com/mozilla-ai/llamafile): an executable whose ZIP,
// appended to it, holds the GGUF model stored uncompressed. The validators
// judge such a file as the GGUF it carries (GG9166 says what carries it);
// this module finds the member and gives the byte range to judge.
#ifndef GGUFGUARD_READ_LLAMAFILE_H_
#define GGUFGUARD_READ_LLAMAFILE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
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

}  // namespace ggufguard

#endif  // GGUFGUARD_READ_LLAMAFILE_H_
