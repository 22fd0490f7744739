// linear_q8's int8 kernel choice: what this build compiled and this CPU runs, asked at every call (a few cpuid
// or getauxval instructions against a call's thousands of multiply-adds; the library keeps no state to cache it).
#include "lib/linear_q8/linear_q8_kernels.h"

#include <stddef.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#define EDGEATTN_Q8_X86 1
#else
#define EDGEATTN_Q8_X86 0
#endif
#if defined(__aarch64__) && defined(__GNUC__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#define EDGEATTN_Q8_DOTPROD 1
#else
#define EDGEATTN_Q8_DOTPROD 0
#endif

namespace edgeattn {
namespace internal {
namespace {

#if EDGEATTN_Q8_X86
// AVX512-VNNI with the AVX-512 subsets the kernel uses, and the OS saving the opmask and zmm state (XCR0 bits
// 1, 2, 5, 6, 7): cpuid leaf 7 (compilers' __builtin_cpu_supports differ in the names they know).
bool CpuHasAvx512Vnni() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d) || (c & (1u << 27)) == 0) return false;  // OSXSAVE
  unsigned xcr0_low = 0, xcr0_high = 0;
  __asm__("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  if ((xcr0_low & 0xE6u) != 0xE6u) return false;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  const unsigned f = 1u << 16, bw = 1u << 30, vl = 1u << 31, vnni = 1u << 11;
  return (b & (f | bw | vl)) == (f | bw | vl) && (c & vnni) != 0;
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
#if EDGEATTN_Q8_X86
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
