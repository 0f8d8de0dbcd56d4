// The one ZIP structure ggufguard reads: the central directory of an archive
// appended to an executable (a llamafile: github.com/mozilla-ai/llamafile),
// to find the GGUF member it carries (GG9166). PKWARE APPNOTE 6.3.10: the
// end-of-central-directory record (4.3.16), its ZIP64 locator and record
// (4.3.14-15), central directory headers (4.3.12) and their ZIP64 extra
// field (4.5.3), local file headers (4.3.7).
//
// Every length and offset comes from the file: each is checked against the
// bytes read before it is used, every sum goes through checked arithmetic,
// and nothing is allocated from a count: the directory is read whole only
// when it is at most kMaxCentralDirectoryBytes, and entries are walked in
// it. Only what a llamafile needs is supported: one disk, no encryption.
#ifndef GGUFGUARD_FORMAT_ZIP_H_
#define GGUFGUARD_FORMAT_ZIP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ggufguard/io/source.h"

namespace ggufguard {

// A central directory larger than this is not read (llamafile's holds a few
// dozen entries, a few KiB; 16 MiB is over 300,000 entries of short names).
inline constexpr uint64_t kMaxCentralDirectoryBytes = uint64_t{16} << 20;

struct ZipMember {
  std::string name;        // raw bytes; escape before printing
  uint16_t method = 0;     // 0 stored, 8 deflated, ...
  bool encrypted = false;  // general purpose flag bit 0
  uint64_t compressed_size = 0;
  uint64_t size = 0;        // uncompressed
  uint64_t local_header = 0;  // file offset of its local file header (prepended bytes accounted for)
  uint64_t data_offset = 0;   // file offset of its first byte; valid only when data_known
  bool data_known = false;    // the local header was read, agrees, and the data lies inside the file
};

struct ZipDirectory {
  bool found = false;          // an end-of-central-directory record ends the file
  std::string problem;         // when found but unusable: why, for the report
  uint64_t directory_offset = 0;  // where the central directory starts in the file
  uint64_t prepended = 0;      // bytes before the archive its offsets do not count (cat stub zip > file)
  bool zip64 = false;
  // Entries whose name ends in ".gguf" (any case), in directory order: the
  // first 64 (only the first one's local header is read), and how many
  // there are.
  std::vector<ZipMember> members;
  uint64_t gguf_members = 0;
  uint64_t entries = 0;        // all entries of the directory
};

// Reads the archive at the end of `source`, if any: found is false when no
// end-of-central-directory record ends it (the common case for a file that
// is no ZIP at all, at the cost of one read of at most 65,557 bytes).
// `problem` says what made an archive unusable (several disks, a directory
// past the file or too large, an entry that does not parse). Errors are I/O
// errors of the source only.
absl::StatusOr<ZipDirectory> ReadZipDirectory(ByteSource& source);

}  // namespace ggufguard

#endif  // GGUFGUARD_FORMAT_ZIP_H_
