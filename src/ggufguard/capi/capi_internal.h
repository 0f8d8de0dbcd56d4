// What the C API's translation units share; not installed.
#ifndef GGUFGUARD_CAPI_CAPI_INTERNAL_H_
#define GGUFGUARD_CAPI_CAPI_INTERNAL_H_

#include <cstdint>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

// Which file a report was read from, so that a mapping can refuse another.
struct FileIdentity {
  bool known = false;  // false for a caller's buffer
  uint64_t device = 0;
  uint64_t inode = 0;
};

// ReportOf answers NULL for NULL; `report` must not be NULL for the others.
const Report* ReportOf(const ggufguard_report* report);
const FileIdentity& IdentityOf(const ggufguard_report* report);
// The trusted tensor table (empty unless TableRefusalOf is empty), and why
// it is not handed out.
const std::vector<ggufguard_tensor>& TableOf(const ggufguard_report* report);
const std::string& TableRefusalOf(const ggufguard_report* report);

}  // namespace ggufguard::capi

#endif  // GGUFGUARD_CAPI_CAPI_INTERNAL_H_
