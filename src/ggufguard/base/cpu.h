// What the CPU this process runs on can do, asked once.
#ifndef GGUFGUARD_BASE_CPU_H_
#define GGUFGUARD_BASE_CPU_H_

namespace ggufguard {

// Whether AVX2 code may run: the CPU has AVX2 and the OS saves its
// registers. False off x86-64. The text scan and the tensor data kernels
// choose their vector path with it.
bool CpuHasAvx2();

}  // namespace ggufguard

#endif  // GGUFGUARD_BASE_CPU_H_
