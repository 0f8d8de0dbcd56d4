// Writes the input of bench/measure_deep.sh: one GGUF file of 1.24 GB of
// tensor data in mixed types, every value and every block scale finite, so
// that `ggufguard validate --deep` reads every byte and finds nothing.
//
//   build/bench/bench/make_deep_inputs FILE
//
// 23 tensors in an interleaved order (as a model's layers mix types):
// F16, Q8_0 and Q4_K 256 MiB each, Q6_K 128 MiB, BF16, F32 64 MiB each,
// Q5_K, Q4_0, MXFP4, IQ4_XS 32 MiB each, Q2_K and Q3_K 16 MiB each, plus 64
// small F32 norms of 16 KiB. The data is random bytes (deterministic), none
// of them zero (so the memchr floor of bench/deep_floor.cc finds nothing in
// it), with each block's scale fields, or each element, made finite. The
// block layouts are written out here from ggml-common.h rather than taken
// from src/, so that the validator's table and this file check each other:
// `--deep` must report no bad value.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tests/support/gguf_writer.h"

namespace {

using ggufguard::testing::GgufBuilder;
using ggufguard::testing::GgufValue;

enum class Field : uint8_t { kF16, kBF16, kF32, kE8M0 };

struct TypeSpec {
  const char* name;
  uint32_t id;
  uint32_t block;       // elements per block
  uint32_t unit;        // bytes per block (an element for the float types)
  Field field;          // what kind of value the checked fields are
  int n_fields;         // 1 or 2 per block (the float types: the element itself)
  uint16_t offsets[2];  // where they are in the block
  uint64_t mib;         // bytes of this type in the file
  int tensors;          // in how many tensors
};

// Block layouts (ggml-common.h): the fields ggml_validate_row_data checks.
const TypeSpec kSpecs[] = {
    {"F16", 1, 1, 2, Field::kF16, 1, {0, 0}, 256, 4},
    {"Q8_0", 8, 32, 34, Field::kF16, 1, {0, 0}, 256, 4},      // {d; qs[32]}
    {"Q4_K", 12, 256, 144, Field::kF16, 2, {0, 2}, 256, 4},   // {d, dmin; scales[12]; qs[128]}
    {"Q6_K", 14, 256, 210, Field::kF16, 1, {208, 0}, 128, 2},  // {ql[128]; qh[64]; scales[16]; d}
    {"BF16", 30, 1, 2, Field::kBF16, 1, {0, 0}, 64, 1},
    {"F32", 0, 1, 4, Field::kF32, 1, {0, 0}, 64, 1},
    {"Q5_K", 13, 256, 176, Field::kF16, 2, {0, 2}, 32, 1},    // {d, dmin; scales[12]; qh[32]; qs[128]}
    {"Q4_0", 2, 32, 18, Field::kF16, 1, {0, 0}, 32, 1},       // {d; qs[16]}
    {"MXFP4", 39, 32, 17, Field::kE8M0, 1, {0, 0}, 32, 1},    // {e; qs[16]}
    {"IQ4_XS", 23, 256, 136, Field::kF16, 1, {0, 0}, 32, 1},  // {d; scales_h; scales_l[4]; qs[128]}
    {"Q2_K", 10, 256, 84, Field::kF16, 2, {80, 82}, 16, 1},   // {scales[16]; qs[64]; d, dmin}
    {"Q3_K", 11, 256, 110, Field::kF16, 1, {108, 0}, 16, 1},  // {hmask[32]; qs[64]; scales[12]; d}
};
constexpr uint64_t kRow = 4096;  // elements per row: a multiple of every block

uint64_t Next(uint64_t& s) {  // splitmix64
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// A value whose exponent bits are all set loses the exponent's top bit; no
// byte becomes zero (the top byte keeps its other exponent bits).
void MakeFinite(uint8_t* p, Field f) {
  switch (f) {
    case Field::kF16:
      if ((p[1] & 0x7c) == 0x7c) p[1] &= 0xbf;
      break;
    case Field::kBF16:
      if ((p[1] & 0x7f) == 0x7f && (p[0] & 0x80)) p[1] &= 0xbf;
      break;
    case Field::kF32:
      if ((p[3] & 0x7f) == 0x7f && (p[2] & 0x80)) p[3] &= 0xbf;
      break;
    case Field::kE8M0:
      if (p[0] == 0xff) p[0] = 0xfe;
      break;
  }
}

// `n` bytes (whole units) of clean data of one type, continuing the PRNG.
void Fill(const TypeSpec& t, uint64_t& seed, uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; i += 8) {
    uint64_t r = Next(seed);
    for (size_t k = 0; k < 8 && i + k < n; ++k, r >>= 8) p[i + k] = static_cast<uint8_t>(r) ? static_cast<uint8_t>(r) : 1;
  }
  for (size_t u = 0; u + t.unit <= n; u += t.unit) {
    for (int f = 0; f < t.n_fields; ++f) MakeFinite(p + u + t.offsets[f], t.field);
  }
}

struct Planned {
  const TypeSpec* spec;
  uint64_t rows;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || argv[1][0] == '-') {
    std::fprintf(stderr, "usage: make_deep_inputs FILE\n");
    return 2;
  }
  const std::string path = argv[1];
  // Round robin over the types, so that the file mixes them as it goes.
  std::vector<Planned> tensors;
  for (int round = 0; round < 4; ++round) {
    for (const TypeSpec& t : kSpecs) {
      if (round >= t.tensors) continue;
      const uint64_t row_bytes = kRow / t.block * t.unit;
      tensors.push_back({&t, (t.mib << 20) / t.tensors / row_bytes});
    }
  }
  GgufBuilder b;
  b.AddKv("general.architecture", GgufValue::Str("deep-bench"));
  b.AddKv("general.name", GgufValue::Str("deep validation throughput"));
  b.AddKv("general.quantization_version", GgufValue::U32(2));
  for (size_t i = 0; i < tensors.size(); ++i) {
    b.AddTensor("blk." + std::to_string(i) + "." + tensors[i].spec->name, {kRow, tensors[i].rows}, tensors[i].spec->id);
  }
  static const TypeSpec kNorm = {"F32", 0, 1, 4, Field::kF32, 1, {0, 0}, 0, 0};
  for (int i = 0; i < 64; ++i) b.AddTensor("blk." + std::to_string(i) + ".norm", {kRow}, 0);
  const ggufguard::testing::BuiltFile layout = b.Layout();

  // The header and its padding, then each tensor's data where the layout
  // puts it; the alignment padding between tensors reads as zeros.
  b.set_omit_tensor_data(true);
  if (absl::Status s = b.WriteToFile(path, /*sparse_data=*/false); !s.ok()) {
    std::fprintf(stderr, "make_deep_inputs: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(layout.file_size)) != 0) {
    std::fprintf(stderr, "make_deep_inputs: %s: %s\n", path.c_str(), std::strerror(errno));
    return 1;
  }
  std::vector<uint8_t> chunk;
  uint64_t seed = 14;
  for (size_t i = 0; i < layout.tensor_data_offsets.size(); ++i) {
    const TypeSpec& t = i < tensors.size() ? *tensors[i].spec : kNorm;
    const uint64_t size = layout.tensor_sizes[i];
    const uint64_t step = (uint64_t{4} << 20) / t.unit * t.unit;  // whole units a write
    for (uint64_t done = 0; done < size;) {
      const size_t n = static_cast<size_t>(std::min(step, size - done));
      chunk.resize(n);
      Fill(t, seed, chunk.data(), n);
      for (size_t written = 0; written < n;) {
        const off_t at = static_cast<off_t>(layout.tensor_data_offsets[i] + done + written);
        const ssize_t w = ::pwrite(fd, chunk.data() + written, n - written, at);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
          std::fprintf(stderr, "make_deep_inputs: %s: %s\n", path.c_str(), std::strerror(errno));
          return 1;
        }
        written += static_cast<size_t>(w);
      }
      done += n;
    }
  }
  if (::close(fd) != 0) {
    std::fprintf(stderr, "make_deep_inputs: %s: %s\n", path.c_str(), std::strerror(errno));
    return 1;
  }
  std::printf("%s (%ju bytes, %zu tensors)\n", path.c_str(), static_cast<uintmax_t>(layout.file_size),
              layout.tensor_data_offsets.size());
  return 0;
}
