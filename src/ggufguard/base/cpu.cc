#include "ggufguard/base/cpu.h"

#if defined(__x86_64__)
// glibc 2.33 and later; its inline functions use C's _Bool, which clang
// rejects in C++, so clang builds (the fuzzers) keep libgcc's probe.
#if __has_include(<sys/platform/x86.h>) && !defined(__clang__)
#include <sys/platform/x86.h>
#endif
#endif

namespace ggufguard {

// glibc has asked the CPU at start-up already; asking again through
// __builtin_cpu_supports links libgcc's own start-up probe
// (__cpu_indicator_init), a dozen more `cpuid` instructions in every
// process, each a trap to the hypervisor on a VM: 3% of the samples of
// `perf record` over 300 runs of `ggufguard validate` on the machine of
// docs/performance.md. Elsewhere (older glibc, other C libraries) libgcc's.
bool CpuHasAvx2() {
#if !defined(__x86_64__)
  return false;
#elif defined(CPU_FEATURE_ACTIVE)
  static const bool avx2 = CPU_FEATURE_ACTIVE(AVX2);
  return avx2;
#else
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2;
#endif
}

}  // namespace ggufguard
