// SPDX-License-Identifier: Apache-2.0
// linear_q8's int8 kernel choice: what this build compiled and this CPU runs, asked at every call from state the
// C runtime already holds (libgcc's CPU model, the auxiliary vector): the library keeps none of its own.
#include "lib/linear_q8/linear_q8_kernels.h"

#include <stddef.h>

// The dotprod kernel runs where it is compiled and Linux tells the CPU's features (getauxval).
#if EDGEATTN_Q8_DOTPROD_KERNEL && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#define EDGEATTN_Q8_DOTPROD 1
#else
#define EDGEATTN_Q8_DOTPROD 0
#endif

namespace edgeattn {
namespace internal {
namespace {

#if EDGEATTN_Q8_X86_KERNELS
// AVX512-VNNI with the AVX-512 subsets the kernel uses. The compiler's CPU model (libgcc's, filled once at
// start-up, OS support for the zmm state included) answers without an instruction: cpuid itself traps to the
// hypervisor in a VM, about 20 us per call measured here, more than a decode call's int8 work. Called before
// libgcc's constructor has run (from another static constructor), it answers false: the portable kernel, the
// same bits.
bool CpuHasAvx512Vnni() {
  return __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl");
}
#endif

}  // namespace

const char* Q8KernelName(Q8Kernel kernel) noexcept {
  switch (kernel) {
    case Q8Kernel::kPortable:
      return "portable";
    case Q8Kernel::kAvx512Vnni:
      return "avx512vnni";
    case Q8Kernel::kAvxVnni:
      return "avxvnni";
    case Q8Kernel::kDotprod:
      return "dotprod";
  }
  return "unknown";
}

bool Q8KernelSupported(Q8Kernel kernel) noexcept {
  switch (kernel) {
    case Q8Kernel::kPortable:
      return true;
    case Q8Kernel::kAvx512Vnni:
#if EDGEATTN_Q8_X86_KERNELS
      return CpuHasAvx512Vnni();
#else
      return false;
#endif
    case Q8Kernel::kAvxVnni:
      return false;  // not compiled yet: linear_q8_x86.cc's stub
    case Q8Kernel::kDotprod:
#if EDGEATTN_Q8_DOTPROD
      return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
#else
      return false;
#endif
  }
  return false;
}

Q8Kernel ChooseQ8Kernel(size_t group_size) noexcept {
  if (group_size % 4 != 0) return Q8Kernel::kPortable;
  const Q8Kernel best_first[] = {Q8Kernel::kAvx512Vnni, Q8Kernel::kAvxVnni, Q8Kernel::kDotprod};
  for (Q8Kernel k : best_first) {
    if (Q8KernelSupported(k)) return k;
  }
  return Q8Kernel::kPortable;
}

}  // namespace internal
}  // namespace edgeattn
