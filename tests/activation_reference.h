// SPDX-License-Identifier: Apache-2.0
// Activation tests' shared pieces: the function table per path, float64 references and the contract of
// edgeattn/activation.h for one input.
//
// Why libm in double is a good enough reference: glibc's erfc and exp in double are within a few ULP of double
// (2^-50 relative), and the arguments below are formed in double from exact float inputs with a relative error of a
// few 2^-53; the largest amplification is |z| <= 113 for e^-z (GELU tanh) and x^2 <= 225 for erfc, so every
// reference is within about 2^-43 (relative) of the exact value: 2^-19 ULP of float, far below the bounds tested
// (a result within 2^-19 ULP of a float midpoint is the only case in which its rounding could be misjudged, and
// the tests compare ULP distances, not rounded values, so such cases cost 2^-19 ULP of margin, never a false
// verdict).
#ifndef EDGEATTN_TESTS_ACTIVATION_REFERENCE_H_
#define EDGEATTN_TESTS_ACTIVATION_REFERENCE_H_

#include <cfloat>
#include <cmath>
#include <cstring>

#include "edgeattn/activation.h"
#include "tests/test_util.h"

namespace edgeattn_test {

using edgeattn::Activation;

struct ActivationApi {
  Status (*apply)(const float*, float*, size_t, Activation);
  Status (*gated)(const float*, const float*, float*, size_t, Activation);
  Status (*add)(const float*, const float*, float*, size_t);
};

inline const ActivationApi& ActivationApiFor(Path path) {
  static const ActivationApi scalar_api = {edgeattn::scalar::ActivationApply, edgeattn::scalar::GatedActivation,
                                           edgeattn::scalar::Add};
  static const ActivationApi simd_api = {edgeattn::ActivationApply, edgeattn::GatedActivation, edgeattn::Add};
  return path == kScalarPath ? scalar_api : simd_api;
}

constexpr Activation kAllActivations[] = {Activation::kGeluErf, Activation::kGeluTanh, Activation::kSilu,
                                          Activation::kRelu};

inline const char* ActivationName(Activation act) {
  switch (act) {
    case Activation::kGeluErf:
      return "gelu_erf";
    case Activation::kGeluTanh:
      return "gelu_tanh";
    case Activation::kSilu:
      return "silu";
    case Activation::kRelu:
      return "relu";
  }
  return "unknown";
}

// The bounds of activation.h, in ULP of the correctly rounded result (ReLU is exact).
inline double MaxUlp(Activation act) {
  switch (act) {
    case Activation::kGeluErf:
      return 6.0;
    case Activation::kGeluTanh:
      return 5.0;
    case Activation::kSilu:
      return 5.0;
    case Activation::kRelu:
      return 0.0;
  }
  return 0.0;
}

// Float64 references for finite x.
inline double GeluErfReference(double x) { return x * 0.5 * std::erfc(-x * 0.70710678118654752440); }
inline double GeluTanhReference(double x) {
  // 0.5 x (1 + tanh u) = x / (1 + e^-2u): the same function without 1 + tanh u's cancellation for u << 0.
  const double z = 2.0 * 0.79788456080286535588 * (x + 0.044715 * x * x * x);
  return x / (1.0 + std::exp(-z));
}
inline double SiluReference(double x) { return x / (1.0 + std::exp(-x)); }
inline double ActivationReference(Activation act, double x) {
  switch (act) {
    case Activation::kGeluErf:
      return GeluErfReference(x);
    case Activation::kGeluTanh:
      return GeluTanhReference(x);
    case Activation::kSilu:
      return SiluReference(x);
    case Activation::kRelu:
      return x <= 0.0 ? 0.0 : x;
  }
  return 0.0;
}

// What activation.h promises for one input: NaN, an exact float (bits compared), a value that may flush (|y| <=
// FLT_MIN, sign of x or zero), or the ULP bound around `exact`.
enum class Expect : uint8_t { kNaN, kBits, kFlushable, kUlp };
struct Expectation {
  Expect kind;
  double exact;   // kUlp: the reference; kBits: the exact float
  bool negative;  // kFlushable: x < 0
};

inline Expectation Expected(Activation act, float x) {
  if (std::isnan(x)) return {Expect::kNaN, 0.0, false};
  if (act == Activation::kRelu) {
    // A subnormal x > 0 reads as 0 on SIMD units that flush subnormals (ARMv7 NEON): x or +0.
    if (x > 0.0f && x < FLT_MIN) return {Expect::kFlushable, static_cast<double>(x), false};
    return {Expect::kBits, x > 0.0f ? static_cast<double>(x) : 0.0, false};
  }
  if (x == kInf) return {Expect::kBits, static_cast<double>(kInf), false};
  if (x == -kInf || x == 0.0f) return {Expect::kBits, x == 0.0f ? static_cast<double>(x) : -0.0, false};
  const double exact = ActivationReference(act, static_cast<double>(x));
  if (std::fabs(static_cast<float>(exact)) < FLT_MIN) return {Expect::kFlushable, exact, x < 0.0f};
  return {Expect::kUlp, exact, false};
}

// Random inputs that reach every branch of the contract: the bulk of each function ([-16, 16]), SiLU's range
// where e^-x overflows ([-125, -80]), the flush/clamp region, huge values and a few specials.
inline float ActivationRandomInput(Rng& rng) {
  switch (rng.Index(8)) {
    case 0:
      return rng.Uniform(-125.0f, -80.0f);
    case 1:
      return rng.Uniform(-16.0f, -9.0f);
    case 2:
      return rng.Cauchy(1e3f);
    case 3:
      return rng.Uniform(-1e-3f, 1e-3f);
    default:
      return rng.Uniform(-16.0f, 16.0f);
  }
}

inline uint64_t DoubleBits(double v) {
  uint64_t u;
  std::memcpy(&u, &v, sizeof(u));
  return u;
}

// Whether got meets e; *ulp receives the error in ULP for kUlp (0 otherwise).
inline bool MeetsContract(Activation act, const Expectation& e, float got, double* ulp) {
  *ulp = 0.0;
  switch (e.kind) {
    case Expect::kNaN:
      return std::isnan(got);
    case Expect::kBits:
      return DoubleBits(static_cast<double>(got)) == DoubleBits(e.exact);
    case Expect::kFlushable:
      return std::fabs(got) <= FLT_MIN && (got == 0.0f || std::signbit(got) == e.negative);
    case Expect::kUlp:
    default:
      *ulp = UlpError(got, e.exact);
      return *ulp <= MaxUlp(act);
  }
}

}  // namespace edgeattn_test

#endif  // EDGEATTN_TESTS_ACTIVATION_REFERENCE_H_
