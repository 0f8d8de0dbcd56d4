// A remote file against the same file on disk (Google Benchmark): time per
// validation, and the requests and bytes each one costs.
//
//   bench/measure_remote.sh            starts nginx on 127.0.0.1 and runs this
//   remote_bench BASE_URL DIR FILE...  (directly: BASE_URL serves DIR)
//
// Per file:
//   local/NAME         FileSource::Open + ValidateSource (as `ggufguard validate PATH`)
//   remote/NAME        ValidateRemote by range requests (as `ggufguard validate URL`)
//   remote_hash/NAME   ValidateRemote with --hash: the whole file in one streamed GET
// Counters: requests and bytes_transferred per validation, file_bytes (the
// file's size).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>
#include <vector>

#include "ggufguard/io/source.h"
#include "ggufguard/remote/remote_validate.h"
#include "ggufguard/validate.h"

namespace {

using namespace ggufguard;

void Local(benchmark::State& state, std::string path) {
  uint64_t size = 0;
  for (auto _ : state) {
    absl::StatusOr<std::unique_ptr<FileSource>> source = FileSource::Open(path);
    if (!source.ok()) return state.SkipWithError("cannot open");
    absl::StatusOr<ValidatedFile> file = ValidateSource(**source, DefaultPolicy());
    if (!file.ok()) return state.SkipWithError("cannot validate");
    size = file->report().file_size;
    benchmark::DoNotOptimize(file->report().has_errors);
  }
  state.counters["file_bytes"] = static_cast<double>(size);
  state.counters["requests"] = 0;
  state.counters["bytes_transferred"] = 0;
}

void Remote(benchmark::State& state, std::string url, bool hash) {
  TransferStats last;
  uint64_t size = 0;
  for (auto _ : state) {
    RemoteValidateOptions options;
    options.stream_whole = hash;
    RemoteValidation v = ValidateRemote(url, url, DefaultPolicy(), options);
    if (!v.file.ok()) return state.SkipWithError(std::string(v.file.status().message()).c_str());
    size = v.file->report().file_size;
    last = v.stats;
  }
  state.counters["file_bytes"] = static_cast<double>(size);
  state.counters["requests"] = static_cast<double>(last.requests);
  state.counters["bytes_transferred"] = static_cast<double>(last.bytes);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (argc < 4) {
    std::fprintf(stderr, "usage: remote_bench [benchmark flags] BASE_URL DIR FILE...\n");
    return 2;
  }
  const std::string base = argv[1], dir = argv[2];
  for (int i = 3; i < argc; ++i) {
    const std::string name = argv[i];
    benchmark::RegisterBenchmark(("local/" + name).c_str(), Local, dir + "/" + name)->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("remote/" + name).c_str(), Remote, base + "/" + name, false)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("remote_hash/" + name).c_str(), Remote, base + "/" + name, true)
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
