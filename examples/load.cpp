// The same loader as load.c, on the C++ wrapper <ggufguard/ggufguard.hpp>:
// handles free themselves and failed calls throw ggufguard::api::Error. Its
// output is byte for byte load.c's (tests/package/run.sh compares them).
//
//   load_cpp FILE.gguf...    exit 0 all loaded, 1 some refused, 2 an error
#include <cinttypes>
#include <cstdio>
#include <string>
#include <string_view>

#include <ggufguard/ggufguard.hpp>

namespace {

uint32_t Crc32(std::basic_string_view<unsigned char> bytes) {
  uint32_t crc = ~0u;
  for (unsigned char b : bytes) {
    crc ^= b;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

void PrintEscaped(std::string_view s) {
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      std::putchar(c);
    } else {
      std::printf("\\x%02x", c);
    }
  }
}

int Load(const char* path) {
  // [readme-cpp]
  ggufguard::api::Report report = ggufguard::api::Validate(path);
  // Accept only a valid verdict: inconclusive is no pass.
  if (report.verdict() != ggufguard::api::Report::Verdict::kValid) {
    std::printf("%s: refused\n", path);
    for (const ggufguard::api::Finding& f : report.findings()) {
      std::printf("  %s %s at %" PRIu64 ": ", f.rule.c_str(), f.name.c_str(), f.offset);
      PrintEscaped(f.message);
      std::printf("\n");
    }
    for (const std::string& item : report.not_checked()) {
      std::printf("  not checked: ");
      PrintEscaped(item);
      std::printf("\n");
    }
    return 1;
  }
  ggufguard::api::Mapping mapping(report, path);
  std::printf("%s: valid, %zu tensors\n", path, report.tensor_count());
  for (size_t i = 0; i < report.tensor_count(); ++i) {
    const ggufguard_tensor t = report.tensor(i);
    const std::basic_string_view<unsigned char> data = mapping.data(i);
    // [/readme-cpp]
    std::printf("  %s type=%" PRIu32 " ne=[%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "] offset=%" PRIu64
                " size=%zu crc32=%08" PRIx32 "\n",
                t.name, t.ggml_type, t.ne[0], t.ne[1], t.ne[2], t.ne[3], t.offset, data.size(), Crc32(data));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE.gguf...  (ggufguard %s)\n", argv[0], ggufguard_version());
    return 2;
  }
  int worst = 0;
  for (int i = 1; i < argc; ++i) {
    int rc;
    try {
      rc = Load(argv[i]);
    } catch (const ggufguard::api::Error& e) {
      std::fprintf(stderr, "%s: %s\n", argv[i], e.what());
      rc = 2;
    }
    if (rc > worst) worst = rc;
  }
  return worst;
}
