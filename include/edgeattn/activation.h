// SPDX-License-Identifier: Apache-2.0
// Elementwise activations (GELU in PyTorch's erf and tanh forms, SiLU, ReLU), the gated form of SwiGLU/GeGLU,
// and the residual addition.
#ifndef EDGEATTN_ACTIVATION_H_
#define EDGEATTN_ACTIVATION_H_

#include <stddef.h>

#include "edgeattn/status.h"

namespace edgeattn {

// Same values as the C API's edgeattn_activation. Any other value is kInvalidArgument.
enum class Activation : int {
  kGeluErf = 0,   // x * Phi(x), PyTorch's nn.GELU() (BERT, Whisper)
  kGeluTanh = 1,  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), nn.GELU(approximate="tanh") (GPT-2)
  kSilu = 2,      // x * sigmoid(x)
  kRelu = 3,      // max(x, 0)
};

// y[i] = act(x[i]) for i < n. y == x is allowed; partial overlap is kOverlap. n = 0 is valid, and then x and y may
// be null (an unknown act is still kInvalidArgument).
//
// Algorithm (activation_scalar.h): GELU and SiLU are x times a sigmoid-like factor computed with edgeattn's exp
// (exp.h's reduction and polynomial) on -|.| only, so nothing overflows: SiLU from e^-|x|; the tanh form as
// x * sigmoid(2u), 1 + tanh(u) = 2/(1 + e^-2u), with 2u carried as a float pair; the erf form (an erf of the
// library's own) as Phi(-|x|) = e^(-x^2/2) Q(|x|), x^2/2 exact as a float pair and Q (Mills' ratio) a rational fit,
// Phi(x) = 1 - Phi(-x) for x >= 0. For x < 0 the tiny factor is kept scaled by 2^64 until the last multiply, so a
// normal result never passes through a subnormal intermediate (which matters where the SIMD unit flushes them).
// For |x| < 2^-27 (erf) and 2^-26 (tanh) both GELUs take the factor's value at 0, 1/2 (relative error < 2^-26):
// in round to nearest the full computation rounds to exactly that, and it would spend its time on x^2, subnormal.
// The scalar path and the one-lane SIMD target likewise take SiLU's factor at 0 below 2^-26 (the exp's polynomial
// is subnormal there) and give -0 for GELU tanh of x <= -11 without computing it (the product that rounds it to -0
// underflows, a microcode assist on x86): the same bits in round to nearest.
// SIMD SiLU (except on ARMv7, whose division is not correctly rounded): a vector whose lanes all have |x| <= 43
// (e^-x normal) takes x / (1 + e^-x) directly, with the same exp; measured over every float with |x| <= 43 on
// x86-64: 2.39 ULP with FMA (AVX3, AVX2), 2.47 without (SSE4, SSSE3); other vectors as above.
// Highway's one-lane SCALAR target (the Cortex-M4 and M7 builds) runs the scalar path's loops, for every activation
// and for Add: they take fewer instructions there than one-lane vector code, and give the scalar path's bits.
//
// Contract (asserted over all tails, misalignments and targets; an exhaustive test checks every float32 input on
// every path, see tests/activation_exhaustive_test.cc, which prints the measured maximum per path):
//   - |error| <= 6 ULP (GELU erf), 5 ULP (GELU tanh), 5 ULP (SiLU) of the correctly rounded result wherever that
//     result is a normal float. Measured over all 2^32 inputs on x86-64, every path: GELU erf 4.91 ULP on every
//     path (at x = 0.00188: for small x > 0, Phi(x) = 1 - Phi(-x) carries Phi(-x)'s error); GELU tanh 3.46 ULP
//     without FMA (scalar path, SCALAR, SSSE3, SSE4) and 3.50 with FMA (AVX2, AVX-512); SiLU 3.46 without FMA
//     and 3.34 with (before the direct path above: its vectors now measure at most 2.47). ARMv7 NEON has no
//     divide instruction and Highway divides there by a refined reciprocal estimate (not correctly rounded): on
//     every 257th input, GELU erf 5.07, GELU tanh 3.41, SiLU 3.94 ULP.
//     SiLU keeps that accuracy where e^-x would overflow a float but the result is normal (x in [-91.8, -88.7]).
//   - Results below FLT_MIN in magnitude may flush to +0 or -0 (they are 0, the subnormal product, or a value of
//     magnitude <= FLT_MIN with the sign of x). GELU and SiLU of x <= -15 (erf), -11 (tanh), -120 (SiLU) are -0.
//   - GELU and SiLU: +inf for +inf, -0 for -inf (the limits; PyTorch 1.13 gives NaN there), NaN for NaN, -0 for -0.
//   - ReLU: x for x > 0 (also +inf), +0 for every x <= 0 including -0 and -inf, NaN for NaN. Exact, except that
//     on SIMD units that flush subnormals (ARMv7 NEON) a subnormal x > 0 compares as 0 and gives +0.
// Errors, in this order: kNullPointer, kInvalidShape (n * sizeof(float) overflows size_t), kInvalidArgument
// (unknown act), kOverlap.
[[nodiscard]] Status ActivationApply(const float* x, float* y, size_t n, Activation act) noexcept;

// y[i] = act(gate[i]) * up[i] (SwiGLU with kSilu, GeGLU with kGeluErf / kGeluTanh). y may alias gate or up
// exactly; partial overlap with either is kOverlap (gate and up may overlap each other: both are only read).
// |error| <= (act's bound above) * ULP(act(gate)) * |up| + one rounding of the product (1/2 ULP of the result),
// wherever act(gate) and the result are normal; otherwise as act's contract (a flushed act(gate) gives +-0 * up).
// n = 0 and the errors as ActivationApply.
[[nodiscard]] Status GatedActivation(const float* gate, const float* up, float* y, size_t n, Activation act) noexcept;

// y[i] = a[i] + b[i], correctly rounded (one IEEE addition). y may alias a or b exactly. On SIMD units that flush
// subnormals to zero (ARMv7 NEON always; x86 if the caller sets FTZ/DAZ) subnormal inputs and results read as 0
// there. n = 0 as ActivationApply; errors: kNullPointer, kInvalidShape, kOverlap.
[[nodiscard]] Status Add(const float* a, const float* b, float* y, size_t n) noexcept;

namespace scalar {
// Plain C++ loops over the same algorithms (activation_scalar.h); same contracts.
[[nodiscard]] Status ActivationApply(const float* x, float* y, size_t n, Activation act) noexcept;
[[nodiscard]] Status GatedActivation(const float* gate, const float* up, float* y, size_t n, Activation act) noexcept;
[[nodiscard]] Status Add(const float* a, const float* b, float* y, size_t n) noexcept;
}  // namespace scalar

}  // namespace edgeattn

#endif  // EDGEATTN_ACTIVATION_H_
