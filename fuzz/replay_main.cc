// A main() for builds without libFuzzer (gcc, the developer build): runs
// LLVMFuzzerTestOneInput over every file given, and every regular file found
// recursively under every directory given, in sorted order. Options that
// start with '-' are libFuzzer's and are ignored, except:
//
//   -mutate=N  for each input, N rounds of the linked custom mutator
//              (gguf_mutator.cc) fed back to the fuzzer; a cheap, seeded,
//              reproducible fuzz run under gcc's sanitizers. An input that
//              breaks is written to ./crash-replay-mutation before the
//              process dies.
//
// So every fuzzer builds in every build and CTest replays corpus/ through it
// (simdjson's "fuzzers that are built in every build don't bitrot").
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed)
    __attribute__((weak));
extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

namespace {

// The input being run in -mutate mode, for the crash handlers.
std::vector<uint8_t>* g_current = nullptr;
size_t g_current_size = 0;
const char kCrashPath[] = "crash-replay-mutation";

void SaveCurrent() {
  static bool saved = false;
  if (g_current == nullptr || saved) return;
  saved = true;
  int fd = ::open(kCrashPath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  size_t done = 0;
  while (done < g_current_size) {
    ssize_t n = ::write(fd, g_current->data() + done, g_current_size - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  static const char msg[] = "replay: the failing mutated input was written to ./crash-replay-mutation\n";
  (void)!::write(2, msg, sizeof(msg) - 1);
}

void OnSignal(int sig) {
  SaveCurrent();
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

bool ReadFile(const std::filesystem::path& path, std::vector<uint8_t>* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

}  // namespace

int main(int argc, char** argv) {
  long mutate_rounds = 0;
  std::vector<std::filesystem::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("-mutate=", 0) == 0) {
      mutate_rounds = std::strtol(arg.c_str() + 8, nullptr, 10);
      continue;
    }
    if (!arg.empty() && arg[0] == '-') continue;  // a libFuzzer flag
    std::error_code ec;
    if (std::filesystem::is_directory(arg, ec)) {
      for (auto it = std::filesystem::recursive_directory_iterator(arg, ec);
           !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
        if (it->is_regular_file(ec)) inputs.push_back(it->path());
      }
      if (ec) {
        std::fprintf(stderr, "replay: cannot walk %s: %s\n", arg.c_str(), ec.message().c_str());
        return 2;
      }
    } else if (std::filesystem::exists(arg, ec)) {
      inputs.push_back(arg);
    } else {
      std::fprintf(stderr, "replay: no such file or directory: %s\n", arg.c_str());
      return 2;
    }
  }
  std::sort(inputs.begin(), inputs.end());
  if (mutate_rounds > 0 && LLVMFuzzerCustomMutator == nullptr) {
    std::fprintf(stderr, "replay: -mutate needs a custom mutator linked in; replaying only\n");
    mutate_rounds = 0;
  }
  if (mutate_rounds > 0) {
    for (int sig : {SIGABRT, SIGILL, SIGTRAP, SIGSEGV, SIGBUS, SIGFPE}) ::signal(sig, OnSignal);
    if (__sanitizer_set_death_callback != nullptr) __sanitizer_set_death_callback(SaveCurrent);
  }

  uint64_t runs = 0;
  std::vector<uint8_t> bytes, buf;
  for (size_t index = 0; index < inputs.size(); ++index) {
    const std::filesystem::path& path = inputs[index];
    if (!ReadFile(path, &bytes)) {
      std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
      return 2;
    }
    std::fprintf(stderr, "Running: %s\n", path.c_str());
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
    ++runs;
    // Chains of mutations, restarting from the original every 4 rounds.
    const size_t max_size = std::max<size_t>(2 * bytes.size(), 4096);
    size_t size = 0;
    for (long round = 0; round < mutate_rounds; ++round) {
      if (round % 4 == 0) {
        buf.assign(bytes.begin(), bytes.end());
        size = bytes.size();
      }
      buf.resize(max_size);
      const auto seed = static_cast<unsigned int>(index * 1000003u + static_cast<size_t>(round) * 7919u + 1);
      size = LLVMFuzzerCustomMutator(buf.data(), size, max_size, seed);
      g_current = &buf;
      g_current_size = size;
      LLVMFuzzerTestOneInput(buf.data(), size);
      g_current = nullptr;
      ++runs;
    }
  }
  std::fprintf(stderr, "replay: %zu inputs, %llu runs, no invariant broken\n", inputs.size(),
               static_cast<unsigned long long>(runs));
  return 0;
}
