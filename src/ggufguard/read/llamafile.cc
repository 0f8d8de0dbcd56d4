#include "ggufguard/read/llamafile.h"

#include <algorithm>
#include <cstring>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "ggufguard/base/checked_math.h"
#include "ggufguard/base/text.h"
#include "ggufguard/format/zip.h"

namespace ggufguard {
namespace {

bool StartsWith(absl::Span<const uint8_t> head, std::string_view prefix) {
  return head.size() >= prefix.size() && std::memcmp(head.data(), prefix.data(), prefix.size()) == 0;
}

// What the bytes before the archive are, by their magic.
std::string Container(absl::Span<const uint8_t> head) {
  if (StartsWith(head, "MZqFpD")) {
    return "an Actually Portable Executable (one file that runs as a shell script, a Windows program and an ELF "
           "program)";
  }
  if (StartsWith(head, "MZ")) return "a Windows executable";
  if (StartsWith(head, "\x7f" "ELF")) return "an ELF executable";
  if (StartsWith(head, "\xcf\xfa\xed\xfe") || StartsWith(head, "\xce\xfa\xed\xfe")) return "a Mach-O executable";
  if (StartsWith(head, "#!")) return "a script";
  if (StartsWith(head, "PK\x03\x04")) return "a ZIP archive";
  return "a file of unknown kind";
}

}  // namespace

bool StartsWithGgufMagic(absl::Span<const uint8_t> head) { return StartsWith(head, "GGUF"); }

absl::StatusOr<LlamafileProbe> ProbeLlamafile(ByteSource& source) {
  LlamafileProbe probe;
  absl::StatusOr<ZipDirectory> dir = ReadZipDirectory(source);
  if (!dir.ok()) return dir.status();
  if (!dir->found) return probe;
  probe.is_archive = true;
  // The container's magic, read here: what a caller happened to read
  // first may be shorter.
  uint8_t head[8] = {};
  const size_t head_size = static_cast<size_t>(std::min<uint64_t>(sizeof(head), source.size()));
  if (absl::Status s = source.ReadAt(0, absl::MakeSpan(head, head_size)); !s.ok()) return s;
  probe.container = Container(absl::MakeConstSpan(head, head_size));
  if (!dir->problem.empty()) {
    probe.problem = absl::StrCat("its ZIP cannot be read: ", EscapeForDisplay(dir->problem, 400));
    return probe;
  }
  if (dir->members.empty()) {
    probe.problem = absl::StrCat("its ZIP of ", dir->entries, " entries holds no .gguf member");
    return probe;
  }
  const ZipMember& m = dir->members.front();
  probe.member_name = EscapeForDisplay(m.name, 200);
  probe.other_members = dir->gguf_members - 1;
  if (m.encrypted) {
    probe.problem = absl::StrCat("its member '", probe.member_name, "' is encrypted");
  } else if (m.method != 0) {
    probe.problem = absl::StrCat("its member '", probe.member_name, "' is compressed (ZIP method ", m.method,
                                 "), not stored: a loader cannot map it, and it is not read");
  } else if (m.compressed_size != m.size) {
    probe.problem = absl::StrCat("its stored member '", probe.member_name, "' gives two sizes, ", m.compressed_size,
                                 " and ", m.size);
  } else if (!m.data_known) {
    probe.problem = absl::StrCat("its member '", probe.member_name, "' has no readable local header");
  } else {
    // Judged as a GGUF file only when it is one: a member that is itself an
    // archive is not opened again (no recursion, whatever the nesting).
    uint8_t magic[4] = {};
    if (m.size >= sizeof(magic)) {
      absl::Status s = source.ReadAt(m.data_offset, absl::MakeSpan(magic));
      if (!s.ok()) return s;
    }
    if (m.size < sizeof(magic) || !StartsWithGgufMagic(magic)) {
      probe.problem = absl::StrCat("its member '", probe.member_name, "' does not start with the GGUF magic");
    } else {
      probe.judged = true;
      probe.offset = m.data_offset;
      probe.size = m.size;
    }
  }
  return probe;
}

std::string LlamafileMessage(const LlamafileProbe& probe) {
  if (!probe.judged) {
    return absl::StrCat("the file is ", probe.container, " that ends with a ZIP (the shape of a llamafile), but ",
                        probe.problem, "; no model inside is judged");
  }
  return absl::StrCat("the file is ", probe.container, " carrying a GGUF model in its ZIP (a llamafile): member '",
                      probe.member_name, "', stored, bytes ", probe.offset, " to ", probe.offset + probe.size,
                      " of the file, judged as the file here; every offset in this report counts from that "
                      "member's first byte. Loaders cannot read the file itself, and running it runs its code");
}

std::string LlamafileNotChecked(const LlamafileProbe& probe) {
  if (probe.other_members == 0) return "";
  return absl::StrCat(probe.other_members, " more .gguf member", probe.other_members == 1 ? "" : "s",
                      " of the llamafile's ZIP after '", probe.member_name, "' (only the first is judged)");
}

absl::Status SubrangeSource::ReadAt(uint64_t offset, absl::Span<uint8_t> out) {
  uint64_t end = 0;
  if (!CheckedAdd(offset, out.size(), &end) || end > size_) {
    return absl::OutOfRangeError(absl::StrCat("read of ", out.size(), " bytes at ", offset, " past the member's ", size_));
  }
  return inner_.ReadAt(offset_ + offset, out);
}

uint64_t SubrangeSource::NextData(uint64_t offset) {
  if (offset >= size_) return size_;
  const uint64_t next = inner_.NextData(offset_ + offset);
  return next < offset_ ? offset : std::min(next - offset_, size_);
}

absl::Span<const uint8_t> SubrangeSource::Memory() const {
  const absl::Span<const uint8_t> all = inner_.Memory();
  if (all.empty()) return {};
  return all.subspan(offset_, size_);
}

absl::Status RecordingSource::ReadAt(uint64_t offset, absl::Span<uint8_t> out) {
  uint64_t total = 0;
  if (!CheckedAdd(recorded_, out.size(), &total) || total > kMaxRecordedBytes) {
    return absl::InternalError(absl::StrCat("the llamafile probe read more than ", kMaxRecordedBytes, " bytes"));
  }
  if (absl::Status s = inner_.ReadAt(offset, out); !s.ok()) return s;
  recorded_ = total;
  reads_.push_back(Read{offset, std::vector<uint8_t>(out.begin(), out.end())});
  return absl::OkStatus();
}

absl::Status CheckedWindowStream::Pass(absl::Span<const uint8_t> bytes) {
  hash_.Update(bytes.data(), bytes.size());
  const uint64_t from = position_, to = position_ + bytes.size();
  for (const RecordingSource::Read& r : expected_) {
    const uint64_t r_end = r.offset + r.bytes.size();  // a read that was served: no overflow
    const uint64_t lo = std::max(from, r.offset), hi = std::min(to, r_end);
    if (lo >= hi || std::memcmp(&bytes[lo - from], &r.bytes[lo - r.offset], hi - lo) == 0) continue;
    for (uint64_t at = lo; at < hi; ++at) {
      if (bytes[at - from] != r.bytes[at - r.offset]) {
        return absl::DataLossError(absl::StrCat("byte ", at, " of the file changed while it was read (the llamafile ",
                                                "probe and the pass that hashed the file saw different bytes): "
                                                "no verdict is given for either"));
      }
    }
  }
  position_ = to;
  return absl::OkStatus();
}

absl::Status CheckedWindowStream::ReadUpTo(uint64_t to) {
  constexpr size_t kStep = size_t{1} << 20;
  while (position_ < to) {
    if (scratch_.empty()) scratch_.resize(kStep);
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kStep, to - position_));
    const absl::Span<uint8_t> chunk = absl::MakeSpan(scratch_).first(n);
    if (absl::Status s = source_.ReadAt(position_, chunk); !s.ok()) return s;
    if (absl::Status s = Pass(chunk); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<size_t> CheckedWindowStream::Read(absl::Span<uint8_t> out) {
  if (absl::Status s = ReadUpTo(begin_); !s.ok()) return s;
  const size_t n = static_cast<size_t>(std::min<uint64_t>(out.size(), end_ - position_));
  if (n == 0) return size_t{0};
  if (absl::Status s = source_.ReadAt(position_, out.first(n)); !s.ok()) return s;
  if (absl::Status s = Pass(out.first(n)); !s.ok()) return s;
  return n;
}

absl::StatusOr<std::string> CheckedWindowStream::Finish() {
  if (absl::Status s = ReadUpTo(size_); !s.ok()) return s;
  return hash_.HexDigest();
}

}  // namespace ggufguard
