#include "ggufguard/format/zip.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "ggufguard/base/checked_math.h"
#include "ggufguard/io/byte_reader.h"

namespace ggufguard {
namespace {

constexpr uint32_t kEndSignature = 0x06054b50;           // PK\5\6
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;  // PK\6\7
constexpr uint32_t kZip64EndSignature = 0x06064b50;      // PK\6\6
constexpr uint32_t kCentralSignature = 0x02014b50;       // PK\1\2
constexpr uint32_t kLocalSignature = 0x04034b50;         // PK\3\4
constexpr uint64_t kEndSize = 22;
constexpr uint64_t kZip64LocatorSize = 20;
constexpr uint64_t kZip64EndSize = 56;
constexpr uint64_t kCentralSize = 46;
constexpr uint64_t kLocalSize = 30;
constexpr uint64_t kMaxComment = 65535;
// Members whose local headers are read and kept; the rest are only counted.
constexpr size_t kMaxMembersKept = 64;

absl::StatusOr<std::vector<uint8_t>> ReadRange(ByteSource& source, uint64_t offset, uint64_t length) {
  std::vector<uint8_t> out(length);  // callers bound `length`: at most 65,557 or kMaxCentralDirectoryBytes
  absl::Status s = source.ReadAt(offset, absl::MakeSpan(out));
  if (!s.ok()) return s;
  return out;
}

bool EndsWithGguf(std::string_view name) {
  if (name.size() < 5) return false;
  std::string tail(name.substr(name.size() - 5));
  for (char& c : tail) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  return tail == ".gguf";
}

// The end-of-central-directory fields, widened to ZIP64's.
struct End {
  uint64_t position = 0;       // of the record that ends the central directory (ZIP64's when there is one)
  uint32_t disk = 0, directory_disk = 0;
  uint64_t entries_on_disk = 0, entries = 0, directory_size = 0, directory_offset = 0;
};

// Finds the classic record: the last "PK\5\6" whose comment runs exactly to
// the end of the file.
std::optional<End> FindEnd(absl::Span<const uint8_t> tail, uint64_t tail_start) {
  if (tail.size() < kEndSize) return std::nullopt;
  for (uint64_t i = tail.size() - kEndSize + 1; i-- > 0;) {
    ByteReader r(tail.subspan(i), ByteOrder::kLittle);
    uint32_t sig = 0;
    uint16_t disk = 0, directory_disk = 0, on_disk = 0, entries = 0, comment = 0;
    uint32_t size = 0, offset = 0;
    if (!r.ReadU32(&sig) || sig != kEndSignature) continue;
    if (!r.ReadU16(&disk) || !r.ReadU16(&directory_disk) || !r.ReadU16(&on_disk) || !r.ReadU16(&entries) ||
        !r.ReadU32(&size) || !r.ReadU32(&offset) || !r.ReadU16(&comment)) {
      continue;
    }
    if (kEndSize + comment != tail.size() - i) continue;  // a signature inside the comment, or garbage after it
    End e;
    e.position = tail_start + i;
    e.disk = disk, e.directory_disk = directory_disk, e.entries_on_disk = on_disk, e.entries = entries;
    e.directory_size = size, e.directory_offset = offset;
    return e;
  }
  return std::nullopt;
}

bool NeedsZip64(const End& e) {
  return e.disk == 0xFFFF || e.directory_disk == 0xFFFF || e.entries_on_disk == 0xFFFF || e.entries == 0xFFFF ||
         e.directory_size == 0xFFFFFFFF || e.directory_offset == 0xFFFFFFFF;
}

// Replaces `e` by the ZIP64 record's fields; a problem string when the
// locator or record is not where the classic record says.
absl::StatusOr<std::string> ReadZip64End(ByteSource& source, End& e) {
  if (e.position < kZip64LocatorSize + kZip64EndSize) return std::string("its ZIP64 end record cannot fit before the end record");
  absl::StatusOr<std::vector<uint8_t>> locator = ReadRange(source, e.position - kZip64LocatorSize, kZip64LocatorSize);
  if (!locator.ok()) return locator.status();
  ByteReader lr(*locator, ByteOrder::kLittle);
  uint32_t sig = 0, disk = 0, disks = 0;
  uint64_t record = 0;
  if (!lr.ReadU32(&sig) || sig != kZip64LocatorSignature || !lr.ReadU32(&disk) || !lr.ReadU64(&record) ||
      !lr.ReadU32(&disks)) {
    return std::string("its end record asks for ZIP64, but no ZIP64 locator precedes it");
  }
  if (disk != 0 || disks > 1) return std::string("it spans several disks");
  // Where the record is when the archive's offsets count from the file's
  // first byte, else where it must be when bytes were prepended (it ends
  // where the locator starts; no extensible data sector).
  const uint64_t expected = e.position - kZip64LocatorSize - kZip64EndSize;
  for (const uint64_t at : {record, expected}) {
    uint64_t end = 0;
    if (!CheckedAdd(at, kZip64EndSize, &end) || end > e.position - kZip64LocatorSize) continue;
    absl::StatusOr<std::vector<uint8_t>> bytes = ReadRange(source, at, kZip64EndSize);
    if (!bytes.ok()) return bytes.status();
    ByteReader r(*bytes, ByteOrder::kLittle);
    uint64_t record_size = 0;
    uint16_t made = 0, needed = 0;
    End z;
    if (!r.ReadU32(&sig) || sig != kZip64EndSignature || !r.ReadU64(&record_size) || !r.ReadU16(&made) ||
        !r.ReadU16(&needed) || !r.ReadU32(&z.disk) || !r.ReadU32(&z.directory_disk) || !r.ReadU64(&z.entries_on_disk) ||
        !r.ReadU64(&z.entries) || !r.ReadU64(&z.directory_size) || !r.ReadU64(&z.directory_offset)) {
      continue;
    }
    z.position = at;
    e = z;
    return std::string();
  }
  return std::string("its ZIP64 end record is not where its locator says");
}

// One central directory header; false when it does not parse.
bool ReadEntry(ByteReader& r, ZipMember* m, uint16_t* flags) {
  uint32_t sig = 0, crc = 0, compressed = 0, size = 0, external = 0, local = 0;
  uint16_t made = 0, needed = 0, method = 0, time = 0, date = 0, name_len = 0, extra_len = 0, comment_len = 0;
  uint16_t disk = 0, internal = 0;
  if (!r.ReadU32(&sig) || sig != kCentralSignature || !r.ReadU16(&made) || !r.ReadU16(&needed) ||
      !r.ReadU16(flags) || !r.ReadU16(&method) || !r.ReadU16(&time) || !r.ReadU16(&date) || !r.ReadU32(&crc) ||
      !r.ReadU32(&compressed) || !r.ReadU32(&size) || !r.ReadU16(&name_len) || !r.ReadU16(&extra_len) ||
      !r.ReadU16(&comment_len) || !r.ReadU16(&disk) || !r.ReadU16(&internal) || !r.ReadU32(&external) ||
      !r.ReadU32(&local)) {
    return false;
  }
  absl::Span<const uint8_t> name, extra, comment;
  if (!r.ReadBytes(name_len, &name) || !r.ReadBytes(extra_len, &extra) || !r.ReadBytes(comment_len, &comment)) {
    return false;
  }
  m->name.assign(reinterpret_cast<const char*>(name.data()), name.size());
  m->method = method;
  m->encrypted = (*flags & 1) != 0;
  m->compressed_size = compressed;
  m->size = size;
  m->local_header = local;
  // The ZIP64 extended information (header 0x0001) holds, in this order,
  // each field the header set to all ones.
  ByteReader x(extra, ByteOrder::kLittle);
  while (x.remaining() >= 4) {
    uint16_t id = 0, len = 0;
    absl::Span<const uint8_t> body;
    if (!x.ReadU16(&id) || !x.ReadU16(&len) || !x.ReadBytes(len, &body)) return false;
    if (id != 0x0001) continue;
    ByteReader b(body, ByteOrder::kLittle);
    if (size == 0xFFFFFFFF && !b.ReadU64(&m->size)) return false;
    if (compressed == 0xFFFFFFFF && !b.ReadU64(&m->compressed_size)) return false;
    if (local == 0xFFFFFFFF && !b.ReadU64(&m->local_header)) return false;
  }
  return disk == 0 || disk == 0xFFFF;
}

// Reads member m's local header: where its data starts, and that it agrees
// with the directory. A problem string, empty when it does.
absl::StatusOr<std::string> ReadLocal(ByteSource& source, ZipMember& m, uint64_t directory_start) {
  uint64_t header_end = 0;
  if (!CheckedAdd(m.local_header, kLocalSize, &header_end) || header_end > directory_start) {
    return absl::StrCat("its local header at ", m.local_header, " is not before the central directory");
  }
  absl::StatusOr<std::vector<uint8_t>> bytes = ReadRange(source, m.local_header, kLocalSize);
  if (!bytes.ok()) return bytes.status();
  ByteReader r(*bytes, ByteOrder::kLittle);
  uint32_t sig = 0, crc = 0, compressed = 0, size = 0;
  uint16_t needed = 0, flags = 0, method = 0, time = 0, date = 0, name_len = 0, extra_len = 0;
  if (!r.ReadU32(&sig) || sig != kLocalSignature || !r.ReadU16(&needed) || !r.ReadU16(&flags) ||
      !r.ReadU16(&method) || !r.ReadU16(&time) || !r.ReadU16(&date) || !r.ReadU32(&crc) || !r.ReadU32(&compressed) ||
      !r.ReadU32(&size) || !r.ReadU16(&name_len) || !r.ReadU16(&extra_len)) {
    return absl::StrCat("no local header at ", m.local_header);
  }
  if (method != m.method) return absl::StrCat("its local header says method ", method, ", the directory ", m.method);
  uint64_t data = 0, data_end = 0;
  if (!CheckedAdd(header_end, uint64_t{name_len} + extra_len, &data) || !CheckedAdd(data, m.compressed_size, &data_end) ||
      data_end > directory_start) {
    return absl::StrCat("its data runs past the start of the central directory at ", directory_start);
  }
  if (name_len != m.name.size()) return std::string("its local header names another file than the directory");
  absl::StatusOr<std::vector<uint8_t>> name = ReadRange(source, header_end, name_len);
  if (!name.ok()) return name.status();
  if (!std::equal(name->begin(), name->end(), m.name.begin())) {
    return std::string("its local header names another file than the directory");
  }
  m.data_offset = data;
  m.data_known = true;
  return std::string();
}

}  // namespace

absl::StatusOr<ZipDirectory> ReadZipDirectory(ByteSource& source) {
  ZipDirectory dir;
  const uint64_t file_size = source.size();
  const uint64_t tail_length = std::min(file_size, kEndSize + kMaxComment);
  absl::StatusOr<std::vector<uint8_t>> tail = ReadRange(source, file_size - tail_length, tail_length);
  if (!tail.ok()) return tail.status();
  std::optional<End> end = FindEnd(*tail, file_size - tail_length);
  if (!end) return dir;
  dir.found = true;
  auto fail = [&](std::string why) {
    dir.problem = std::move(why);
    dir.members.clear();
    dir.gguf_members = 0;
    return dir;
  };
  if (NeedsZip64(*end)) {
    absl::StatusOr<std::string> why = ReadZip64End(source, *end);
    if (!why.ok()) return why.status();
    if (!why->empty()) return fail(*why);
    dir.zip64 = true;
  }
  if (end->disk != 0 || end->directory_disk != 0 || end->entries_on_disk != end->entries) {
    return fail("it spans several disks");
  }
  // The directory ends where the end record starts; its offset field counts
  // from the archive's first byte, which is the file's unless bytes were
  // prepended without adjusting the offsets.
  if (end->directory_size > end->position) return fail("its central directory is larger than what precedes its end");
  const uint64_t start = end->position - end->directory_size;
  if (end->directory_offset > start) return fail("its central directory offset is past where the directory ends");
  dir.prepended = start - end->directory_offset;
  dir.directory_offset = start;
  if (end->directory_size > kMaxCentralDirectoryBytes) {
    return fail(absl::StrCat("its central directory is ", end->directory_size, " bytes, more than the ",
                             kMaxCentralDirectoryBytes, " read"));
  }
  absl::StatusOr<std::vector<uint8_t>> directory = ReadRange(source, start, end->directory_size);
  if (!directory.ok()) return directory.status();
  ByteReader r(*directory, ByteOrder::kLittle);
  uint64_t gguf = 0;
  while (r.remaining() > 0) {
    ZipMember m;
    uint16_t flags = 0;
    if (!ReadEntry(r, &m, &flags)) return fail(absl::StrCat("its central directory entry ", dir.entries, " does not parse"));
    ++dir.entries;
    if (!EndsWithGguf(m.name)) continue;
    if (!CheckedAdd(m.local_header, dir.prepended, &m.local_header)) return fail("a local header offset overflows");
    if (gguf++ < kMaxMembersKept) dir.members.push_back(std::move(m));
  }
  dir.gguf_members = gguf;
  if (dir.entries != end->entries) {
    return fail(absl::StrCat("its central directory holds ", dir.entries, " entries, its end record says ",
                             end->entries));
  }
  if (!dir.members.empty()) {
    absl::StatusOr<std::string> why = ReadLocal(source, dir.members.front(), start);
    if (!why.ok()) return why.status();
    if (!why->empty()) {
      return fail(absl::StrCat("its member '", dir.members.front().name.substr(0, 200), "': ", *why));
    }
  }
  return dir;
}

}  // namespace ggufguard
