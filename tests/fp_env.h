// SPDX-License-Identifier: Apache-2.0
// The floating-point environment for tests: the rounding direction and flush-to-zero settings, written to and
// read from the FPU's control register (x86 MXCSR; AArch64 FPCR; ARMv7-A and Cortex-M FPSCR). The writes are
// volatile asm with a memory clobber; files that use them are compiled with -frounding-math so that no FP
// operation moves across a change. The register is per thread: set it in the thread that computes.
#ifndef EDGEATTN_TESTS_FP_ENV_H_
#define EDGEATTN_TESTS_FP_ENV_H_

#include <stdint.h>

#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace edgeattn_test {

enum Rounding { kToNearest = 0, kUpward = 1, kDownward = 2, kTowardZero = 3 };
constexpr const char* kRoundingNames[] = {"nearest", "upward", "downward", "toward-zero"};

struct FpEnv {
  Rounding rounding;
  bool flush_to_zero;       // results below FLT_MIN become 0 (ARM FZ also treats subnormal inputs as 0)
  bool denormals_are_zero;  // x86 DAZ: subnormal inputs read as 0
  std::string Name() const {
    std::string name = kRoundingNames[rounding];
    if (flush_to_zero) name += "+FTZ";
    if (denormals_are_zero) name += "+DAZ";
    return name;
  }
  bool Directed() const { return rounding != kToNearest; }
};

// ---------------------------------------------------------------------------------------------------------
// The control register of the FPU the library computes on. Control bits only: status flags (MXCSR 0-5,
// FPSCR 0-4, 7, 27-31) are the library's to raise, like any arithmetic's.
#if defined(__x86_64__) || (defined(__i386__) && defined(__SSE2__))
#define EDGEATTN_FP_CONTROL_X86 1
constexpr bool kHasFpControl = true;
constexpr bool kHasDenormalsAreZero = true;
inline uint64_t ReadControl() {
  asm volatile("" ::: "memory");
  return _mm_getcsr() & 0xFFC0u;
}
inline void WriteControl(uint64_t value) {
  asm volatile("" ::: "memory");
  _mm_setcsr(static_cast<unsigned>(value) | (_mm_getcsr() & 0x3Fu));
  asm volatile("" ::: "memory");
}
inline uint64_t ControlFor(uint64_t base, const FpEnv& env) {
  static const uint64_t kRc[] = {0x0000, 0x4000, 0x2000, 0x6000};  // MXCSR.RC: RN, RU, RD, RZ
  uint64_t v = base & ~uint64_t{0xE040};
  v |= kRc[env.rounding];
  if (env.flush_to_zero) v |= 0x8000;
  if (env.denormals_are_zero) v |= 0x0040;
  return v;
}
#elif defined(__aarch64__)
#define EDGEATTN_FP_CONTROL_ARM 1
constexpr bool kHasFpControl = true;
constexpr bool kHasDenormalsAreZero = false;
inline uint64_t ReadControl() {
  uint64_t v;
  asm volatile("mrs %0, fpcr" : "=r"(v)::"memory");
  return v;
}
inline void WriteControl(uint64_t value) { asm volatile("msr fpcr, %0" ::"r"(value) : "memory"); }
#elif defined(__arm__) && defined(__ARM_FP)
#define EDGEATTN_FP_CONTROL_ARM 1
constexpr bool kHasFpControl = true;
constexpr bool kHasDenormalsAreZero = false;
inline uint64_t ReadControl() {
  uint32_t v;
  asm volatile("vmrs %0, fpscr" : "=r"(v)::"memory");
  return v & ~uint32_t{0xF800009Fu};
}
inline void WriteControl(uint64_t value) {
  uint32_t flags;
  asm volatile("vmrs %0, fpscr" : "=r"(flags)::"memory");
  const uint32_t v = static_cast<uint32_t>(value) | (flags & 0xF800009Fu);
  asm volatile("vmsr fpscr, %0" ::"r"(v) : "memory");
}
#else
constexpr bool kHasFpControl = false;
constexpr bool kHasDenormalsAreZero = false;
inline uint64_t ReadControl() { return 0; }
inline void WriteControl(uint64_t) {}
#endif

#if EDGEATTN_FP_CONTROL_ARM
inline uint64_t ControlFor(uint64_t base, const FpEnv& env) {
  // FPCR / FPSCR: RMode in bits 23:22 (RN, RP, RM, RZ: the order of Rounding), FZ in bit 24.
  uint64_t v = base & ~uint64_t{0x01C00000};
  v |= static_cast<uint64_t>(env.rounding) << 22;
  if (env.flush_to_zero) v |= uint64_t{1} << 24;
  return v;
}
// FPCR / FPSCR.AHP (bit 26): halves in Arm's alternative format, where exponent 31 holds numbers, not infinities and
// NaNs. Only the FPU's half conversions read it.
constexpr uint64_t kAlternativeHalfBit = uint64_t{1} << 26;
#elif !EDGEATTN_FP_CONTROL_X86
inline uint64_t ControlFor(uint64_t base, const FpEnv&) { return base; }
#endif

// Sets env in this thread for the scope's lifetime; restores the previous control register.
class ScopedFpEnv {
 public:
  explicit ScopedFpEnv(const FpEnv& env) : saved_(ReadControl()) { WriteControl(ControlFor(saved_, env)); }
  ~ScopedFpEnv() { WriteControl(saved_); }
  ScopedFpEnv(const ScopedFpEnv&) = delete;
  ScopedFpEnv& operator=(const ScopedFpEnv&) = delete;

 private:
  uint64_t saved_;
};

}  // namespace edgeattn_test

#endif  // EDGEATTN_TESTS_FP_ENV_H_
