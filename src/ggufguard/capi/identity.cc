// The identity a mapping checks (capi_internal.h, FileIdentity).
#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "ggufguard/capi/capi_internal.h"

namespace ggufguard::capi {
namespace {

int64_t Nanoseconds(const timespec& t) { return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec; }

int64_t Now() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return Nanoseconds(now);
}

// How far after a file's ctime a write could still get the same ctime.
// Linux stamps a change with its coarse clock (one tick, 1 to 10 ms), cut to
// the file system's granularity; a file system that keeps whole seconds
// (FAT keeps two) shows it in the nanoseconds of both stamps. The ctime is
// set by the kernel only, so it is never whole by chance of utimensat.
int64_t Granularity(const struct stat& st) {
  const bool whole_seconds = st.st_ctim.tv_nsec == 0 && st.st_mtim.tv_nsec == 0;
  return whole_seconds ? int64_t{2'000'000'000} : int64_t{20'000'000};
}

}  // namespace

FileIdentity IdentityFrom(const struct stat& st) {
  FileIdentity id;
  id.known = true;
  id.device = static_cast<uint64_t>(st.st_dev);
  id.inode = static_cast<uint64_t>(st.st_ino);
  id.size = static_cast<uint64_t>(st.st_size);
  id.mtime_ns = Nanoseconds(st.st_mtim);
  id.ctime_ns = Nanoseconds(st.st_ctim);
  return id;
}

std::string IdentityDiffers(const FileIdentity& validated, const struct stat& now) {
  const FileIdentity n = IdentityFrom(now);
  std::vector<const char*> differ;
  if (n.device != validated.device || n.inode != validated.inode) differ.push_back("its device and inode");
  if (n.size != validated.size) differ.push_back("its size");
  if (n.mtime_ns != validated.mtime_ns) differ.push_back("its mtime");
  if (n.ctime_ns != validated.ctime_ns) differ.push_back("its ctime");
  return absl::StrJoin(differ, ", ");
}

bool TimestampsSettled(const struct stat& st) {
  const int64_t latest = std::max(Nanoseconds(st.st_ctim), Nanoseconds(st.st_mtim));
  return latest + Granularity(st) <= Now();
}

}  // namespace ggufguard::capi
