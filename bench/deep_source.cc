// The deep check in process, by the read it uses (docs/performance.md,
// "Deep validation (issue 14)"): ValidateSource with --deep over FILE, read
// with preads of READ_BYTES (FileSource, what the CLI does), or in place from
// an mmap of the file (a source whose Memory() is the mapping: an
// experiment, not a path the CLI takes; see the page for why).
//
//   build/bench/bench/deep_source FILE JOBS READ_BYTES|mmap [RUNS]
//
// Prints the least wall seconds of RUNS (default 5) validations, each from
// the open (or the mmap) to the report, and GB/s of the file's size.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "ggufguard/findings/policy.h"
#include "ggufguard/validate.h"

namespace {

class MappedSource final : public ggufguard::ByteSource {
 public:
  static std::unique_ptr<MappedSource> Open(const char* path) {
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || ::fstat(fd, &st) != 0 || st.st_size <= 0) return nullptr;
    void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED) return nullptr;
    ::madvise(p, static_cast<size_t>(st.st_size), MADV_SEQUENTIAL);
    return std::unique_ptr<MappedSource>(new MappedSource(static_cast<const uint8_t*>(p), st.st_size));
  }
  ~MappedSource() override { ::munmap(const_cast<uint8_t*>(data_), size_); }
  uint64_t size() const override { return size_; }
  absl::Status ReadAt(uint64_t offset, absl::Span<uint8_t> out) override {
    if (offset > size_ || out.size() > size_ - offset) return absl::OutOfRangeError("read past the end");
    std::memcpy(out.data(), data_ + offset, out.size());
    return absl::OkStatus();
  }
  absl::Span<const uint8_t> Memory() const override { return {data_, size_}; }

 private:
  MappedSource(const uint8_t* data, uint64_t size) : data_(data), size_(size) {}
  const uint8_t* data_;
  size_t size_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5) {
    std::fprintf(stderr, "usage: deep_source FILE JOBS READ_BYTES|mmap [RUNS]\n");
    return 2;
  }
  const char* path = argv[1];
  const bool mapped = std::string(argv[3]) == "mmap";
  ggufguard::DeepOptions deep;
  deep.enabled = true;
  deep.jobs = static_cast<unsigned>(std::atoi(argv[2]));
  if (!mapped) deep.read_bytes = std::strtoull(argv[3], nullptr, 0);
  const int runs = argc > 4 ? std::atoi(argv[4]) : 5;
  const ggufguard::Policy policy = ggufguard::DefaultPolicy();
  double best = 0;
  uint64_t size = 0, checked = 0, bad = 0;
  for (int r = 0; r < runs; ++r) {
    const auto start = std::chrono::steady_clock::now();
    std::unique_ptr<ggufguard::ByteSource> source;
    if (mapped) {
      source = MappedSource::Open(path);
    } else if (auto file = ggufguard::FileSource::Open(path); file.ok()) {
      source = *std::move(file);
    }
    if (source == nullptr) {
      std::fprintf(stderr, "deep_source: cannot open %s\n", path);
      return 3;
    }
    absl::StatusOr<ggufguard::ValidatedFile> f = ggufguard::ValidateSource(*source, policy, {}, deep);
    if (!f.ok()) {
      std::fprintf(stderr, "deep_source: %s\n", std::string(f.status().message()).c_str());
      return 3;
    }
    source.reset();  // the unmap is part of the cost
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (r == 0 || s < best) best = s;
    size = f->report().file_size;
    checked = f->report().deep.checked_bytes;
    bad = f->report().deep.bad_values;
  }
  std::printf("deep_source: %s, %u jobs, %ju bytes checked, %ju bad, best of %d: %.4f s, %.2f GB/s\n",
              mapped ? "mmap" : (std::string("pread ") + argv[3]).c_str(), deep.jobs, static_cast<uintmax_t>(checked),
              static_cast<uintmax_t>(bad), runs, best, static_cast<double>(size) / best / 1e9);
  return 0;
}
