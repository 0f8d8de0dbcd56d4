// Writes the hostile-header benchmark inputs (bench/hostile_inputs.h):
//
//   build/bench/bench/make_hostile_inputs DIR
//
// Four files of a million KVs each, 13-70 MB (no tensor data). bench/measure.sh
// validates each and reports time per header byte, peak memory and report size.
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
  return 0;
}
