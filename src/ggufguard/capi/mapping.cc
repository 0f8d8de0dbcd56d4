// ggufguard_map_*: a validated file mapped read-only, whose tensor data is
// reachable only through the table the validation checked.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ggufguard/base/checked_math.h"
#include "ggufguard/base/sha256.h"
#include "ggufguard/capi/capi_internal.h"
#include "ggufguard/ggufguard.h"
#include "ggufguard/io/source.h"

using ggufguard::capi::Fail;
using ggufguard::capi::Guard;

struct ggufguard_mapping {
  struct Extent {
    uint64_t offset;
    uint64_t size;
  };
  void* base = nullptr;
  size_t length = 0;
  std::vector<Extent> tensors;  // a copy: the report may be freed first

  ggufguard_mapping() = default;
  ggufguard_mapping(const ggufguard_mapping&) = delete;
  ggufguard_mapping& operator=(const ggufguard_mapping&) = delete;
  ~ggufguard_mapping() {
    if (base != nullptr) ::munmap(base, length);
  }
};

extern "C" {

ggufguard_status ggufguard_map_fd(const ggufguard_report* report, int fd, ggufguard_mapping** out) {
  return Guard([&] {
    if (out == nullptr) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL out");
    *out = nullptr;
    const ggufguard::Report* r = ggufguard::capi::ReportOf(report);
    if (r == nullptr) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL report");
    // The table TableRefusal passed, or nothing: a policy that let an
    // overlap or an out-of-file tensor pass does not get a mapping either.
    const std::string& refusal = ggufguard::capi::TableRefusalOf(report);
    if (!refusal.empty()) return Fail(GGUFGUARD_ERR_NOT_VALID, absl::StrCat(refusal, ": the file is not mapped"));
    // A llamafile (GG9166): the table is its member's, at offsets from the
    // member's first byte, which a mapping of the whole file would misplace.
    if (r->member_offset) {
      return Fail(GGUFGUARD_ERR_NOT_VALID, "the file is a llamafile: its GGUF member was validated, not the file; "
                                           "extract the .gguf to map it");
    }
    struct stat st;
    if (fd < 0 || ::fstat(fd, &st) != 0) return Fail(GGUFGUARD_ERR_IO, absl::StrCat("bad descriptor ", fd));
    if (!S_ISREG(st.st_mode)) return Fail(GGUFGUARD_ERR_IO, "only a regular file can be mapped");
    // The table is only true of the bytes that were validated: a file of
    // another size, another file, or the file changed since, is refused.
    if (static_cast<uint64_t>(st.st_size) != r->file_size) {
      return Fail(GGUFGUARD_ERR_CHANGED, absl::StrCat("the file has ", st.st_size, " bytes; ", r->file_size,
                                                      " were validated"));
    }
    const ggufguard::capi::FileIdentity& id = ggufguard::capi::IdentityOf(report);
    if (!id.unproven.empty()) return Fail(GGUFGUARD_ERR_CHANGED, absl::StrCat(id.unproven, ": the file is not mapped"));
    if (id.known) {
      if (const std::string differs = ggufguard::capi::IdentityDiffers(id, st); !differs.empty()) {
        return Fail(GGUFGUARD_ERR_CHANGED,
                    absl::StrCat("this is not the file that was validated, or it was written since (", differs,
                                 " differ)"));
      }
    }
    if (r->file_size == 0 || r->file_size > SIZE_MAX) return Fail(GGUFGUARD_ERR_IO, "cannot map the file's size");

    auto m = std::make_unique<ggufguard_mapping>();
    const std::vector<ggufguard_tensor>& table = ggufguard::capi::TableOf(report);
    m->tensors.reserve(table.size());
    for (const ggufguard_tensor& t : table) {
      // Checked again here, where a wrong extent would become a wild
      // pointer: the table's promise, not trusted blindly.
      uint64_t end;
      if (!ggufguard::CheckedAdd(t.offset, t.size, &end) || end > r->file_size) {
        return Fail(GGUFGUARD_ERR_INTERNAL, "a validated tensor lies outside the file");
      }
      m->tensors.push_back({t.offset, t.size});
    }
    void* base = ::mmap(nullptr, static_cast<size_t>(r->file_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (base == MAP_FAILED) return Fail(GGUFGUARD_ERR_IO, absl::StrCat("mmap: ", std::strerror(errno)));
    m->base = base;
    m->length = static_cast<size_t>(r->file_size);
    // A write between the check above and the mapping: looked at again
    // once the mapping exists (what is written after that, through the
    // file, is visible in the mapping: docs/library.md).
    struct stat mapped;
    if (::fstat(fd, &mapped) != 0) return Fail(GGUFGUARD_ERR_IO, absl::StrCat("fstat: ", std::strerror(errno)));
    ggufguard::capi::FileIdentity checked = ggufguard::capi::IdentityFrom(st);
    if (id.known) checked = id;
    if (const std::string differs = ggufguard::capi::IdentityDiffers(checked, mapped); !differs.empty()) {
      return Fail(GGUFGUARD_ERR_CHANGED, absl::StrCat("the file was written while it was mapped (", differs, ")"));
    }
    // A file changed just before it was validated: its timestamps cannot
    // tell a write in the same tick, the digest of the bytes judged can.
    if (!id.sha256.empty() &&
        ggufguard::Sha256Hex(std::string_view(static_cast<const char*>(base), m->length)) != id.sha256) {
      return Fail(GGUFGUARD_ERR_CHANGED, "the file's bytes are not the ones validated (their SHA-256 differs)");
    }
    // A report without a file identity (a caller's buffer, a prefix) holds
    // the bytes it judged: the file must hold the same.
    const absl::Span<const uint8_t> judged = ggufguard::capi::ValidatedBytesOf(report);
    if (judged.size() > m->length || (!judged.empty() && std::memcmp(base, judged.data(), judged.size()) != 0)) {
      return Fail(GGUFGUARD_ERR_CHANGED, absl::StrCat("the file's bytes are not the ", judged.size(),
                                                      " that were validated"));
    }
    *out = m.release();
    return GGUFGUARD_OK;
  });
}

ggufguard_status ggufguard_map_path(const ggufguard_report* report, const char* path, ggufguard_mapping** out) {
  return Guard([&] {
    if (out == nullptr) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL out");
    *out = nullptr;
    if (path == nullptr) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL path");
    // Not a plain open: a FIFO would block it forever (map_fd refuses
    // anything but a regular file once it is open).
    int fd = ggufguard::OpenWithoutWaiting(path, ggufguard::FinalLink::kFollow);
    if (fd < 0) return Fail(GGUFGUARD_ERR_IO, absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
    ggufguard_status s = ggufguard_map_fd(report, fd, out);
    ::close(fd);  // the mapping keeps the file's pages
    return s;
  });
}

void ggufguard_mapping_free(ggufguard_mapping* mapping) { delete mapping; }

size_t ggufguard_mapping_tensor_count(const ggufguard_mapping* mapping) {
  return mapping ? mapping->tensors.size() : 0;
}

ggufguard_status ggufguard_mapping_tensor_data(const ggufguard_mapping* mapping, size_t index, const void** data,
                                               uint64_t* size) {
  return Guard([&] {
    if (mapping == nullptr || data == nullptr || size == nullptr) {
      return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL mapping or out");
    }
    if (index >= mapping->tensors.size()) return Fail(GGUFGUARD_ERR_RANGE, absl::StrCat("no tensor ", index));
    const ggufguard_mapping::Extent& e = mapping->tensors[index];
    *data = static_cast<const uint8_t*>(mapping->base) + e.offset;
    *size = e.size;
    return GGUFGUARD_OK;
  });
}

}  // extern "C"
