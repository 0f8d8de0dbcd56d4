// What the C API's translation units share; not installed.
#ifndef GGUFGUARD_CAPI_CAPI_INTERNAL_H_
#define GGUFGUARD_CAPI_CAPI_INTERNAL_H_

#include <sys/stat.h>

#include <cstdint>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "ggufguard/ggufguard.h"
#include "ggufguard/validate.h"

namespace ggufguard::capi {

// Sets this thread's ggufguard_last_error() and returns `status`; never
// throws.
ggufguard_status Fail(ggufguard_status status, std::string_view message) noexcept;

// Runs an exported function's body; an exception becomes a status (or
// `fallback` for functions that return something else), never an unwind
// into C.
template <typename F>
ggufguard_status Guard(F&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Fail(GGUFGUARD_ERR_NO_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return Fail(GGUFGUARD_ERR_INTERNAL, e.what());
  } catch (...) {
    return Fail(GGUFGUARD_ERR_INTERNAL, "unknown exception");
  }
}

template <typename T, typename F>
T Guard(T fallback, F&& body) {
  try {
    return body();
  } catch (...) {
    return fallback;
  }
}

// What a mapping must find to hand out a report's tensor data: the file
// that was validated, unchanged since (capi/identity.cc). For a report from
// a path or a regular descriptor: its device, inode, size, mtime and ctime
// as they were when validation began and still were when it ended. A write
// changes the ctime (and the mtime) to the time of the write, cut to the
// timestamps' granularity; a write in the same tick as the file's last
// change before validation could leave them as they were, so a file changed
// that recently (TimestampsSettled false) is validated and hashed in one
// read, and a mapping of it compares the digest of what it maps too.
struct FileIdentity {
  bool known = false;  // false for a caller's buffer or a prefix: their bytes are compared instead
  uint64_t device = 0;
  uint64_t inode = 0;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  std::string sha256;  // of the validated bytes, when the timestamps could not prove them
  // Why no mapping can prove the file is the validated content (it changed
  // while it was validated, it was a pipe); empty when one can.
  std::string unproven;
};

// The identity of what `st` describes.
FileIdentity IdentityFrom(const struct stat& st);
// What differs between `validated` and `now` ("its ctime", ...); empty when
// nothing does.
std::string IdentityDiffers(const FileIdentity& validated, const struct stat& now);
// Whether the file's last change (`st`) is far enough in the past that any
// later write gets another ctime: more than one timestamp tick (20 ms; 2 s
// on a file system with whole-second timestamps) before now.
bool TimestampsSettled(const struct stat& st);

// ReportOf answers NULL for NULL; `report` must not be NULL for the others.
const Report* ReportOf(const ggufguard_report* report);
const FileIdentity& IdentityOf(const ggufguard_report* report);
// The bytes a report without a file identity was made from (a caller's
// buffer, a prefix's header), which a mapping compares with the file's.
absl::Span<const uint8_t> ValidatedBytesOf(const ggufguard_report* report);
// The trusted tensor table (empty unless TableRefusalOf is empty), and why
// it is not handed out.
const std::vector<ggufguard_tensor>& TableOf(const ggufguard_report* report);
const std::string& TableRefusalOf(const ggufguard_report* report);

}  // namespace ggufguard::capi

#endif  // GGUFGUARD_CAPI_CAPI_INTERNAL_H_
