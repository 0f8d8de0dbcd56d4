// A small ZIP writer for the llamafile tests and corpus files (GG9166):
// an executable stub, then an archive of the entries given, laid out as
// PKWARE's APPNOTE says (local headers, the central directory, ZIP64 end
// records when asked, the end record), with the knobs the tests need to
// break it. Header-only, like the other test helpers.
#ifndef GGUFGUARD_TESTS_SUPPORT_ZIP_WRITER_H_
#define GGUFGUARD_TESTS_SUPPORT_ZIP_WRITER_H_

#include <cstdint>
#include <string>
#include <vector>

namespace ggufguard::testing {

struct ZipEntry {
  std::string name;
  std::vector<uint8_t> data;  // written as is, whatever the method says
  uint16_t method = 0;        // 0 stored; 8 (deflated) only labels the bytes
  bool encrypted = false;     // general purpose flag bit 0
  uint32_t align = 0;         // pad the local extra field so the data starts at a multiple of this (llamafile: 4096)
};

struct ZipOptions {
  std::vector<uint8_t> stub;        // the executable before the archive
  bool offsets_from_archive = false;  // offsets count from the archive's start (cat stub zip > file)
  bool zip64 = false;               // ZIP64 end records, and ZIP64 extra fields for every size and offset
  int64_t entries_delta = 0;        // added to the end record's entry counts (a lying directory)
  std::string comment;              // the end record's comment
};

inline uint32_t ZipCrc32(const std::vector<uint8_t>& data) {
  uint32_t crc = 0xFFFFFFFFu;
  for (uint8_t b : data) {
    crc ^= b;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

inline std::vector<uint8_t> BuildZip(const std::vector<ZipEntry>& entries, const ZipOptions& options) {
  std::vector<uint8_t> out = options.stub;
  auto u16 = [&](std::vector<uint8_t>& v, uint64_t x) {
    v.push_back(static_cast<uint8_t>(x));
    v.push_back(static_cast<uint8_t>(x >> 8));
  };
  auto u32 = [&](std::vector<uint8_t>& v, uint64_t x) {
    u16(v, x & 0xFFFF);
    u16(v, (x >> 16) & 0xFFFF);
  };
  auto u64 = [&](std::vector<uint8_t>& v, uint64_t x) {
    u32(v, x & 0xFFFFFFFFu);
    u32(v, x >> 32);
  };
  const uint64_t base = options.offsets_from_archive ? options.stub.size() : 0;
  const uint32_t big = 0xFFFFFFFFu;
  std::vector<uint64_t> locals;
  for (const ZipEntry& e : entries) {
    locals.push_back(out.size() - base);
    std::vector<uint8_t> extra;
    if (options.zip64) {
      u16(extra, 0x0001);
      u16(extra, 16);
      u64(extra, e.data.size());
      u64(extra, e.data.size());
    }
    if (e.align > 1) {
      const uint64_t fixed = out.size() + 30 + e.name.size() + extra.size() + 4;
      const uint64_t pad = (e.align - fixed % e.align) % e.align;
      u16(extra, 0xD935);  // a padding field no reader interprets
      u16(extra, pad);
      extra.insert(extra.end(), pad, 0);
    }
    u32(out, 0x04034b50);
    u16(out, options.zip64 ? 45 : 20);
    u16(out, e.encrypted ? 1 : 0);
    u16(out, e.method);
    u16(out, 0);
    u16(out, 0);
    u32(out, ZipCrc32(e.data));
    u32(out, options.zip64 ? big : e.data.size());
    u32(out, options.zip64 ? big : e.data.size());
    u16(out, e.name.size());
    u16(out, extra.size());
    out.insert(out.end(), e.name.begin(), e.name.end());
    out.insert(out.end(), extra.begin(), extra.end());
    out.insert(out.end(), e.data.begin(), e.data.end());
  }
  const uint64_t directory = out.size() - base;
  for (size_t i = 0; i < entries.size(); ++i) {
    const ZipEntry& e = entries[i];
    std::vector<uint8_t> extra;
    if (options.zip64) {
      u16(extra, 0x0001);
      u16(extra, 24);
      u64(extra, e.data.size());
      u64(extra, e.data.size());
      u64(extra, locals[i]);
    }
    u32(out, 0x02014b50);
    u16(out, options.zip64 ? 45 : 20);
    u16(out, options.zip64 ? 45 : 20);
    u16(out, e.encrypted ? 1 : 0);
    u16(out, e.method);
    u16(out, 0);
    u16(out, 0);
    u32(out, ZipCrc32(e.data));
    u32(out, options.zip64 ? big : e.data.size());
    u32(out, options.zip64 ? big : e.data.size());
    u16(out, e.name.size());
    u16(out, extra.size());
    u16(out, 0);  // comment
    u16(out, 0);  // disk
    u16(out, 0);
    u32(out, 0);
    u32(out, options.zip64 ? big : locals[i]);
    out.insert(out.end(), e.name.begin(), e.name.end());
    out.insert(out.end(), extra.begin(), extra.end());
  }
  const uint64_t directory_size = out.size() - base - directory;
  const uint64_t count = static_cast<uint64_t>(static_cast<int64_t>(entries.size()) + options.entries_delta);
  if (options.zip64) {
    const uint64_t record = out.size() - base;
    u32(out, 0x06064b50);
    u64(out, 44);
    u16(out, 45);
    u16(out, 45);
    u32(out, 0);
    u32(out, 0);
    u64(out, count);
    u64(out, count);
    u64(out, directory_size);
    u64(out, directory);
    u32(out, 0x07064b50);
    u32(out, 0);
    u64(out, record);
    u32(out, 1);
  }
  u32(out, 0x06054b50);
  u16(out, 0);
  u16(out, 0);
  u16(out, options.zip64 ? 0xFFFF : count);
  u16(out, options.zip64 ? 0xFFFF : count);
  u32(out, options.zip64 ? big : directory_size);
  u32(out, options.zip64 ? big : directory);
  u16(out, options.comment.size());
  out.insert(out.end(), options.comment.begin(), options.comment.end());
  return out;
}

// llamafile's own launcher stub starts "MZqFpD" (an Actually Portable
// Executable); these few bytes are only its shape, not a program.
inline std::vector<uint8_t> ApeStub() {
  const std::string s = "MZqFpD='\n\nexec echo not-a-real-llamafile\n";
  std::vector<uint8_t> v(s.begin(), s.end());
  v.resize(512, 0);
  return v;
}

}  // namespace ggufguard::testing

#endif  // GGUFGUARD_TESTS_SUPPORT_ZIP_WRITER_H_
