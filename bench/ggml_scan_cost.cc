// What ggml's own GGUF reader (gguf_init_from_file, the first thing
// llama.cpp's loader calls) spends on headers of many tensors or many keys:
// its duplicate checks compare each new key with every key before it and
// each new tensor name with every name before it, so the time grows with the
// square of the count (GG9162, docs/rules/GG9162.md). Built and run by
// bench/measure_loader_cost.sh against the libggml-base.so that the loader
// oracle installs (fuzz/oracle, node-llama-cpp's prebuilt CPU build); not part
// of the CMake build, which must not depend on that package.
//
//   ggml_scan_cost LIBGGML_BASE_SO DIR [REPETITIONS]
//
// Writes each shape's file into DIR, loads it with gguf_init_from_file
// (no_alloc, no context: the header only), and prints one line per shape:
// the count, the best time of REPETITIONS (default 3), and nanoseconds per
// pair of names compared (count * (count - 1) / 2 pairs).
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

struct GgufInitParams {  // ggml's struct gguf_init_params
  bool no_alloc;
  void** ctx;
};
using InitFn = void* (*)(const char*, GgufInitParams);
using FreeFn = void (*)(void*);

void PutU32(std::string& out, uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }
void PutU64(std::string& out, uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); }
void PutString(std::string& out, const std::string& s) {
  PutU64(out, s.size());
  out += s;
}

// A name `length` bytes long that ends in the decimal digits of i, padded
// with `fill` before them: every pair of names shares everything but the
// last few bytes when fill is long.
std::string Name(const std::string& head, uint64_t i, size_t length) {
  std::string digits = std::to_string(i);
  std::string out = head;
  while (out.size() + digits.size() < length) out.push_back('x');
  return out + digits;
}

// n tensors of one F32 element each, named `length` bytes long.
std::string ManyTensors(uint64_t n, size_t length) {
  std::string out = "GGUF";
  PutU32(out, 3);
  PutU64(out, n);
  PutU64(out, 0);
  for (uint64_t i = 0; i < n; ++i) {
    PutString(out, Name("t.", i, length));
    PutU32(out, 1);   // n_dims
    PutU64(out, 1);   // ne[0]
    PutU32(out, 0);   // F32
    PutU64(out, i * 32);
  }
  out.resize((out.size() + 31) / 32 * 32, '\0');
  out.append(n * 32, '\0');
  return out;
}

// n keys `length` bytes long, each with a u8 value.
std::string ManyKeys(uint64_t n, size_t length) {
  std::string out = "GGUF";
  PutU32(out, 3);
  PutU64(out, 0);
  PutU64(out, n);
  for (uint64_t i = 0; i < n; ++i) {
    PutString(out, Name("k.", i, length));
    PutU32(out, 0);  // u8
    out.push_back('\0');
  }
  out.resize((out.size() + 31) / 32 * 32, '\0');
  return out;
}

struct Shape {
  const char* what;
  bool tensors;
  uint64_t n;
  size_t length;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: ggml_scan_cost LIBGGML_BASE_SO DIR [REPETITIONS]\n");
    return 2;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "ggml_scan_cost: %s\n", dlerror());
    return 1;
  }
  auto init = reinterpret_cast<InitFn>(dlsym(lib, "gguf_init_from_file"));
  auto free_ctx = reinterpret_cast<FreeFn>(dlsym(lib, "gguf_free"));
  if (init == nullptr || free_ctx == nullptr) {
    std::fprintf(stderr, "ggml_scan_cost: gguf_init_from_file or gguf_free missing\n");
    return 1;
  }
  const int reps = argc > 3 ? std::max(1, std::atoi(argv[3])) : 3;
  const std::string dir = argv[2];
  // Tensor names: 16 bytes (real names are 10-40) and 63 (GGML_MAX_NAME - 1,
  // the longest ggml takes: the most each strcmp can read). Keys: 16 bytes,
  // and equal lengths of 1 KiB and 16 KiB (std::string == compares the bytes
  // of keys of one length).
  const Shape shapes[] = {
      {"tensors", true, 2000, 16},     {"tensors", true, 5000, 16},      {"tensors", true, 10000, 16},
      {"tensors", true, 20000, 16},    {"tensors", true, 40000, 16},     {"tensors", true, 5000, 63},
      {"tensors", true, 10000, 63},    {"tensors", true, 20000, 63},     {"tensors", true, 40000, 63},
      {"keys", false, 5000, 16},       {"keys", false, 10000, 16},       {"keys", false, 20000, 16},
      {"keys", false, 40000, 16},      {"keys", false, 80000, 16},       {"keys", false, 2000, 1024},
      {"keys", false, 5000, 1024},     {"keys", false, 10000, 1024},     {"keys", false, 1000, 16384},
      {"keys", false, 2000, 16384},    {"keys", false, 4000, 16384},
  };
  std::printf("%-8s %8s %7s %10s %12s\n", "items", "count", "length", "seconds", "ns/pair");
  for (const Shape& s : shapes) {
    const std::string bytes = s.tensors ? ManyTensors(s.n, s.length) : ManyKeys(s.n, s.length);
    const std::string path = dir + "/scan-" + s.what + "-" + std::to_string(s.n) + "-" + std::to_string(s.length) + ".gguf";
    FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || std::fclose(f) != 0) {
      std::fprintf(stderr, "ggml_scan_cost: cannot write %s\n", path.c_str());
      return 1;
    }
    double best = 1e30;
    for (int r = 0; r < reps; ++r) {
      const auto start = std::chrono::steady_clock::now();
      void* ctx = init(path.c_str(), GgufInitParams{true, nullptr});
      const auto end = std::chrono::steady_clock::now();
      if (ctx == nullptr) {
        std::fprintf(stderr, "ggml_scan_cost: gguf_init_from_file refused %s\n", path.c_str());
        return 1;
      }
      free_ctx(ctx);
      best = std::min(best, std::chrono::duration<double>(end - start).count());
    }
    const double pairs = static_cast<double>(s.n) * static_cast<double>(s.n - 1) / 2;
    std::printf("%-8s %8llu %7zu %10.3f %12.2f\n", s.what, static_cast<unsigned long long>(s.n), s.length, best,
                best * 1e9 / pairs);
    std::fflush(stdout);
    std::remove(path.c_str());
  }
  return 0;
}
