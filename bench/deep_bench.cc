// The `--deep` data kernels alone (deep/data_check.h), one core, on clean
// data held in memory: what a worker thread can check per second once the
// bytes are in its hands (docs/performance.md, "Deep validation (issue 14)").
//
//   build/bench/bench/deep_bench --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true   (one command line)
//
// Per ggml type, a buffer of GGUFGUARD_DEEP_BENCH_MIB MiB (default 64) of
// clean data (random bytes, every checked field made finite; no byte is
// zero, so the floor below has nothing to find):
//   floor/memchr                 glibc's memchr for a byte that is not there
//   deep/<TYPE>                  CheckDataUnits (AVX2 where the type has a
//                                vector path and the CPU has AVX2)
//   deep_scalar/<TYPE>           CheckDataUnitsScalar, for the types with a
//                                path of their own (AVX2 for F32, F16, BF16,
//                                F64; a screen without a switch or a byte
//                                swap per block for little-endian blocks):
//                                what that path buys
// bytes_per_second counts the buffer's bytes. The buffer is bigger than L2
// but may fit a large L3 (this VM reports 300 MiB): set the variable to 1024
// to read from memory; the whole-process figures (bench/measure_deep.sh)
// read a 1.1 GB file.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "ggufguard/deep/data_check.h"
#include "ggufguard/format/ggml_type.h"

namespace ggufguard::bench {
namespace {

size_t BufferBytes() {
  static const size_t bytes = [] {
    size_t mib = 64;
    if (const char* env = std::getenv("GGUFGUARD_DEEP_BENCH_MIB"); env != nullptr && std::atoi(env) > 0) {
      mib = static_cast<size_t>(std::atoi(env));
    }
    return mib << 20;
  }();
  return bytes;
}

uint64_t Next(uint64_t& s) {  // splitmix64: deterministic, fast
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Clears the exponent's top bit of a little-endian value whose exponent bits
// are all set (NaN, inf): finite, and no byte of it becomes zero.
void MakeFinite(uint8_t* p, DataCheckKind kind) {
  switch (kind) {
    case DataCheckKind::kF16:
    case DataCheckKind::kBlockF16:
      if ((p[1] & 0x7c) == 0x7c) p[1] &= 0xbf;
      break;
    case DataCheckKind::kBF16:
      if ((p[1] & 0x7f) == 0x7f && (p[0] & 0x80)) p[1] &= 0xbf;
      break;
    case DataCheckKind::kF32:
    case DataCheckKind::kBlockF32:
      if ((p[3] & 0x7f) == 0x7f && (p[2] & 0x80)) p[3] &= 0xbf;
      break;
    case DataCheckKind::kF64:
      if ((p[7] & 0x7f) == 0x7f && (p[6] & 0xf0) == 0xf0) p[7] &= 0xbf;
      break;
    case DataCheckKind::kBlockE8M0:
      if (p[0] == 0xff) p[0] = 0xfe;
      break;
    default:
      break;
  }
}

// Random non-zero bytes with every field the check reads made finite: the
// check's own table says where the fields are (IQ1_M's scattered scale is
// made finite through the top nibble of its fourth u16).
std::vector<uint8_t> CleanData(uint32_t type, size_t bytes) {
  const DataCheck& c = DataCheckFor(type);
  std::vector<uint8_t> v(bytes / c.unit_bytes * c.unit_bytes);
  uint64_t s = 0x5eed0000 + type;
  for (size_t i = 0; i + 8 <= v.size(); i += 8) {
    uint64_t r = Next(s);
    for (int k = 0; k < 8; ++k, r >>= 8) v[i + k] = static_cast<uint8_t>(r) ? static_cast<uint8_t>(r) : 1;
  }
  for (size_t i = v.size() / 8 * 8; i < v.size(); ++i) v[i] = 1;
  for (size_t u = 0; u + c.unit_bytes <= v.size(); u += c.unit_bytes) {
    uint8_t* unit = v.data() + u;
    switch (c.kind) {
      case DataCheckKind::kBlockF16:
        for (int f = 0; f < c.n_fields; ++f) MakeFinite(unit + c.field_offset[f], c.kind);
        break;
      case DataCheckKind::kIq1mScale:
        unit[c.field_offset[0] + 7] &= 0xbf;  // the scale's exponent top bit is bit 14 of the fourth u16
        break;
      default:
        MakeFinite(unit, c.kind);
    }
  }
  return v;
}

// One buffer at a time (a benchmark's repetitions reuse it).
const std::vector<uint8_t>& BufferFor(uint32_t type) {
  static uint32_t held = UINT32_MAX;
  static std::vector<uint8_t> buffer;
  if (held != type) {
    buffer.clear();
    buffer.shrink_to_fit();
    buffer = CleanData(type, BufferBytes());
    held = type;
  }
  return buffer;
}

void Kernel(benchmark::State& state, uint32_t type, bool scalar) {
  const DataCheck& c = DataCheckFor(type);
  const std::vector<uint8_t>& data = BufferFor(type);
  const uint64_t units = data.size() / c.unit_bytes;
  uint64_t bad = 0;
  for (auto _ : state) {
    bad = scalar ? CheckDataUnitsScalar(c, ByteOrder::kLittle, data.data(), units, 0, 8, nullptr)
                 : CheckDataUnits(c, ByteOrder::kLittle, data.data(), units, 0, 8, nullptr);
    benchmark::DoNotOptimize(bad);
  }
  if (bad != 0) state.SkipWithError("the clean buffer has bad values: the generator is wrong");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * data.size()));
}

void Memchr(benchmark::State& state) {
  const std::vector<uint8_t>& data = BufferFor(/*F16=*/1);
  for (auto _ : state) {
    const void* hit = std::memchr(data.data(), 0, data.size());
    benchmark::DoNotOptimize(hit);
    if (hit != nullptr) state.SkipWithError("the buffer holds a zero byte");
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * data.size()));
}

// Every type with something to check, in type-id order; the scalar variants
// where CheckDataUnits has a path of its own: AVX2 for the element types, the
// little-endian block screen for F16 scales (Q4_0, Q8_0, Q4_K), f32 scales
// (Q8_K) and E8M0 (MXFP4).
constexpr uint32_t kTypes[] = {0, 1, 2, 3, 6, 7, 8, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 28, 29, 30,
                               34, 35, 39};
constexpr uint32_t kFastPathTypes[] = {0, 1, 28, 30, 2, 8, 12, 15, 39};

void Register() {
  benchmark::RegisterBenchmark("floor/memchr", Memchr)->Unit(benchmark::kMillisecond)->UseRealTime();
  for (uint32_t type : kTypes) {
    const GgmlTypeInfo* info = FindGgmlType(type);
    const std::string name = info ? std::string(info->name) : std::to_string(type);
    benchmark::RegisterBenchmark(("deep/" + name).c_str(), [type](benchmark::State& s) { Kernel(s, type, false); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  for (uint32_t type : kFastPathTypes) {
    const std::string name(FindGgmlType(type)->name);
    benchmark::RegisterBenchmark(("deep_scalar/" + name).c_str(), [type](benchmark::State& s) { Kernel(s, type, true); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
}

}  // namespace
}  // namespace ggufguard::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  ggufguard::bench::Register();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
