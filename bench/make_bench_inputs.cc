// Writes the benchmark inputs (bench/bench_inputs.h) into a directory:
//
//   build/bench/bench/make_bench_inputs [DIR]
//
// DIR defaults to $GGUFGUARD_BENCH_INPUTS, else the build tree's
// bench-inputs/. The files are sparse: ~143 MB and ~233 MB apparent size,
// a few MB on disk (the zero tensor data is a hole). validate_bench writes
// them itself when they are missing; this program is for rewriting them or
// putting them somewhere else (hyperfine, strace and /usr/bin/time runs in
// docs/performance.md use them).
#include <cstdio>
#include <filesystem>
#include <string>

#include "bench/bench_inputs.h"

int main(int argc, char** argv) {
  if (argc > 2 || (argc == 2 && std::string(argv[1]).starts_with("-"))) {
    std::fprintf(stderr, "usage: make_bench_inputs [DIR]\n");
    return 2;
  }
  const std::string dir = argc == 2 ? argv[1] : ggufguard::bench::BenchInputDir(GGUFGUARD_BENCH_INPUTS_DEFAULT);
  absl::Status s = ggufguard::bench::WriteBenchInputs(dir);
  if (!s.ok()) {
    std::fprintf(stderr, "make_bench_inputs: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  for (const auto& f : ggufguard::bench::kBenchInputFiles) {
    const auto path = std::filesystem::path(dir) / f.file_name;
    std::printf("%s (%ju bytes)\n", path.c_str(), static_cast<uintmax_t>(std::filesystem::file_size(path)));
  }
  return 0;
}
