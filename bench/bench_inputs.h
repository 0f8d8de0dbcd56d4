// Benchmark inputs: SmolLM2-like GGUF files whose header has the size and
// shape of a real small model's (~98,000 vocabulary strings, 272 tensors),
// built with the test GGUF writer so they need no download.
//
// Shared by the benchmark programs (bench/) and by the system-call budget
// test (tests/syscall_budget_test.cc), so that what is timed and what is
// counted are the same files.
#ifndef GGUFGUARD_BENCH_BENCH_INPUTS_H_
#define GGUFGUARD_BENCH_BENCH_INPUTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tests/support/gguf_writer.h"

namespace ggufguard::bench {

// SmolLM2-135M's vocabulary and merges; `vocab_scale` multiplies both.
inline constexpr uint32_t kSmolLm2VocabSize = 49152;
inline constexpr uint32_t kSmolLm2MergeCount = 48900;

// A GGUF v3 file shaped like SmolLM2-135M-Instruct quantised to Q8_0:
// general.architecture = llama with SmolLM2's hyperparameters, a gpt2
// (byte-level BPE) tokenizer with `kSmolLm2VocabSize * vocab_scale` tokens,
// `kSmolLm2MergeCount * vocab_scale` merges, int32 token types, a ChatML
// chat template, and the model's 272 tensors with its real shapes
// (token_embd follows the vocabulary size) at 32-byte aligned offsets.
// The vocabulary is built as byte-level BPE builds one, from pseudo-random
// but deterministic words (a fixed-seed PRNG): tokens are strings over GPT-2's
// byte-level alphabet, unique, 1 to 16 bytes (7.5 on average), about half
// with multi-byte UTF-8 such as 'Ġ' (U+0120, C4 A0), and every merge is a
// pair of tokens whose concatenation is a token. Tensor data is all zeros
// (DataFill::kZeros), so WriteToFile(path, /*sparse_data=*/true) leaves it
// as a hole.
//
// A valid file: the default and strict policies report no finding for it.
testing::GgufBuilder SmolLm2LikeBuilder(uint32_t vocab_scale);

// The benchmark input files, by file name.
struct BenchInputFile {
  const char* file_name;
  uint32_t vocab_scale;
};
inline constexpr BenchInputFile kBenchInputFiles[] = {
    {"smollm2-like.gguf", 1},
    {"smollm2-like-4x.gguf", 4},
};

// Writes every file of kBenchInputFiles into `dir` (created if missing),
// sparse, overwriting what is there, plus a stamp that records the
// generator's version.
absl::Status WriteBenchInputs(const std::string& dir);

// True when `dir` holds every input, written by this version of the
// generator (the stamp matches).
bool BenchInputsPresent(const std::string& dir);

// Where the benchmark looks for its inputs: $GGUFGUARD_BENCH_INPUTS, else
// `fallback` (the build tree's bench-inputs/).
std::string BenchInputDir(const std::string& fallback);

}  // namespace ggufguard::bench

#endif  // GGUFGUARD_BENCH_BENCH_INPUTS_H_
