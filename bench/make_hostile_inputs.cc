// Writes the hostile-header benchmark inputs (bench/hostile_inputs.h):
//
//   build/bench/bench/make_hostile_inputs DIR
//
// Four files of a million KVs each, 13-70 MB (no tensor data), and pipe-1g.gguf
// (8 F16 tensors of 128 MiB of non-zero data) for the pipe throughput of
// `cat FILE | ggufguard validate -`. bench/measure_bulk.sh validates each and
// reports time per header byte, peak memory and report size.
#include <cstdio>
#include <filesystem>
#include <string>

#include "bench/hostile_inputs.h"

int main(int argc, char** argv) {
  if (argc != 2 || std::string(argv[1]).starts_with("-")) {
    std::fprintf(stderr, "usage: make_hostile_inputs DIR\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  for (const auto& input : ggufguard::bench::kHostileInputs) {
    const auto path = dir / input.file_name;
    absl::Status s =
        ggufguard::bench::HostileBuilder(input.kind, input.count).WriteToFile(path.string(), /*sparse_data=*/false);
    if (!s.ok()) {
      std::fprintf(stderr, "make_hostile_inputs: %s\n", std::string(s.message()).c_str());
      return 1;
    }
    std::printf("%s (%ju bytes)\n", path.c_str(), static_cast<uintmax_t>(std::filesystem::file_size(path)));
  }
  // Non-zero data, so that the zero map scans only the padding, as on a
  // real model; every byte still streams through the pipe and the hash.
  ggufguard::testing::GgufBuilder pipe;
  pipe.AddKv("general.name", ggufguard::testing::GgufValue::Str("pipe throughput"));
  for (int i = 0; i < 8; ++i) pipe.AddTensor("t" + std::to_string(i), {uint64_t{64} << 20}, /*F16=*/1);
  const auto pipe_path = dir / "pipe-1g.gguf";
  absl::Status s = pipe.WriteToFile(pipe_path.string(), /*sparse_data=*/false);
  if (!s.ok()) {
    std::fprintf(stderr, "make_hostile_inputs: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  std::printf("%s (%ju bytes)\n", pipe_path.c_str(), static_cast<uintmax_t>(std::filesystem::file_size(pipe_path)));
  return 0;
}
