// SPDX-License-Identifier: Apache-2.0
// The Helium (MVE) kernels of lib/*/*_mve.h, called directly on the Cortex-M55 board, against the contracts of
// the public headers in their flush-to-zero form (MVE flushes subnormals: lib/common/mve.h), on fresh random
// inputs over every tail and misalignment, with guard words (signalling NaNs: a read past an array's end would
// show as NaN in a result, a write as a changed guard). Exp, softmax, dot, linear and RoPE also run in every
// rounding mode the caller may set (their bounds with u = 2^-23 there), as tests/fp_env_test.cc runs the other
// paths. This file is temporary: phase 2 of issue 32 makes the MVE kernels a path through every test of
// tests/test_util.h's AllPaths, and only the unit facts (MveUnitTest) stay here.
#include <gtest/gtest.h>
#include <stddef.h>
#include <stdint.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "lib/common/mve.h"
#include "tests/activation_reference.h"
#include "tests/fp_env.h"
#include "tests/reference.h"
#include "tests/test_util.h"

#if EDGEATTN_MVE_FLOAT
#include "lib/activation/activation_mve.h"
#include "lib/dot/dot_mve.h"
#include "lib/exp/exp_mve.h"
#include "lib/linear/linear_mve.h"
#include "lib/norm/norm_mve.h"
#include "lib/rope/rope_mve.h"
#include "lib/softmax/softmax_mve.h"
#endif

namespace edgeattn_test {
namespace {

#if !EDGEATTN_MVE_FLOAT
TEST(MveTest, NeedsHeliumFloat) { GTEST_SKIP() << "no MVE floating point in this build (the cortex-m55 presets)"; }
#else
namespace mve = edgeattn::mve;
using edgeattn::Activation;

constexpr double kFlushTiny = 0x1p-126;  // the gradual-underflow terms' form where the unit flushes
constexpr Rounding kModes[] = {kToNearest, kUpward, kDownward, kTowardZero};
double UnitRoundoff(Rounding r) { return r == kToNearest ? 0x1p-24 : 0x1p-23; }
FpEnv Mode(Rounding r) { return FpEnv{r, false, false}; }

// What MVE reads for x: subnormals are zero (sign kept).
float Flushed(float x) { return std::fabs(x) < FLT_MIN ? std::copysign(0.0f, x) : x; }
double Gamma(size_t n, double u) { return static_cast<double>(n) * u / (1 - static_cast<double>(n) * u); }

// Normal values with a few subnormals, zeros and large magnitudes mixed in.
float MixedInput(Rng& rng) {
  switch (rng.Index(16)) {
    case 0:
      return rng.Uniform(-1.0f, 1.0f) * 0x1p-130f;  // subnormal
    case 1:
      return 0.0f;
    case 2:
      return rng.Normal(1e6f);
    default:
      return rng.Normal();
  }
}

// ---- The unit itself: what the kernels' contracts rest on. The instructions are written out (inline asm), so
// that the test sees the hardware's answer and not a compiler's idea of the intrinsic (clang-14 folds and
// scalarises MVE float intrinsics as IEEE operations in the caller's environment).
float32x4_t Splat(float x) {
  volatile float v = x;  // a value the compiler cannot see
  return vdupq_n_f32(v);
}
#define EDGEATTN_MVE_BINARY(name, insn)                                 \
  float32x4_t name(float32x4_t a, float32x4_t b) {                      \
    float32x4_t r;                                                      \
    __asm__ volatile(insn " %q0, %q1, %q2" : "=w"(r) : "w"(a), "w"(b)); \
    return r;                                                           \
  }
EDGEATTN_MVE_BINARY(Vadd, "vadd.f32")
EDGEATTN_MVE_BINARY(Vsub, "vsub.f32")
EDGEATTN_MVE_BINARY(Vmul, "vmul.f32")
EDGEATTN_MVE_BINARY(Vmaxnm, "vmaxnm.f32")
#define EDGEATTN_MVE_COMPARE(name, cond)                                                       \
  uint32_t name(float32x4_t a, float32x4_t b) {                                                \
    uint32_t p;                                                                                \
    __asm__ volatile("vcmp.f32 " cond ", %q1, %q2\n\tvmrs %0, p0" : "=r"(p) : "w"(a), "w"(b)); \
    return p & 0xFFFFu;                                                                        \
  }
EDGEATTN_MVE_COMPARE(VcmpLt, "lt")
EDGEATTN_MVE_COMPARE(VcmpLe, "le")
EDGEATTN_MVE_COMPARE(VcmpGt, "gt")
EDGEATTN_MVE_COMPARE(VcmpGe, "ge")
EDGEATTN_MVE_COMPARE(VcmpEq, "eq")
EDGEATTN_MVE_COMPARE(VcmpNe, "ne")
uint32_t Lane(float32x4_t v, int lane) {
  float lanes[4];
  vst1q_f32(lanes, v);
  return Bits(lanes[lane]);
}

TEST(MveUnitTest, RoundsToNearestInEveryModeFlushesSubnormalsAndGivesTheDefaultNaN) {
  const float tiny = 0x1p-30f;
  for (Rounding r : kModes) {
    ScopedFpEnv env(Mode(r));
    // 2^-30 away from +-1: every directed mode moves one of these three off the nearest float; MVE none.
    EXPECT_EQ(Lane(Vadd(Splat(1.0f), Splat(tiny)), 0), Bits(1.0f)) << kRoundingNames[r];
    EXPECT_EQ(Lane(Vsub(Splat(-1.0f), Splat(tiny)), 2), Bits(-1.0f)) << kRoundingNames[r];
    EXPECT_EQ(Lane(Vsub(Splat(1.0f), Splat(tiny)), 3), Bits(1.0f)) << kRoundingNames[r];
    // ... while the scalar FPU follows the mode (the environment took effect).
    volatile float one = 1.0f, t = tiny;
    const float scalar = r == kUpward ? one + t : r == kDownward ? -one - t : one - t;
    EXPECT_EQ(Bits(scalar) == Bits(r == kDownward ? -1.0f : 1.0f), r == kToNearest) << kRoundingNames[r];
  }
  EXPECT_EQ(Lane(Vmul(Splat(0x1p-140f), Splat(2.0f)), 1), 0u);               // a subnormal input reads as 0
  EXPECT_EQ(Lane(Vmul(Splat(-0x1p-70f), Splat(0x1p-70f)), 3), 0x80000000u);  // a subnormal result is -0
  volatile float subnormal = 0x1p-140f;
  EXPECT_NE(subnormal * 2.0f, 0.0f);  // the scalar FPU keeps gradual underflow
  const uint32_t payload_bits = 0x7FC12345u;
  float payload;
  std::memcpy(&payload, &payload_bits, sizeof payload);
  const float32x4_t nan = Splat(payload), one = Splat(1.0f);
  EXPECT_EQ(Lane(Vadd(nan, one), 0), 0x7FC00000u);   // the default NaN
  EXPECT_EQ(Lane(Vmaxnm(nan, one), 0), Bits(1.0f));  // VMAXNM drops NaN
  // Comparisons follow Arm's condition codes: LT and LE hold for unordered operands, GT and GE do not.
  EXPECT_EQ(VcmpLt(nan, one), 0xFFFFu);
  EXPECT_EQ(VcmpLe(nan, one), 0xFFFFu);
  EXPECT_EQ(VcmpGt(one, nan), 0u);
  EXPECT_EQ(VcmpGe(one, nan), 0u);
  EXPECT_EQ(VcmpEq(nan, nan), 0u);
  EXPECT_EQ(VcmpNe(nan, nan), 0xFFFFu);
}

TEST(MveUnitTest, DivideWithinOneUlpOverItsRange) {
  Rng rng;
  for (int k = 0; k < 40000; ++k) {
    const float num = rng.Uniform(-1.0f, 1.0f) * std::ldexp(1.0f, static_cast<int>(rng.Index(200)) - 100);
    const float den = rng.Uniform(1.0f, 2.0f) * std::ldexp(1.0f, static_cast<int>(rng.Index(200)) - 100);
    const double exact = static_cast<double>(num) / den;
    if (std::fabs(exact) < FLT_MIN || std::fabs(exact) > FLT_MAX) continue;  // outside Divide's range
    const float got = vgetq_lane_f32(mve::Divide(vdupq_n_f32(num), vdupq_n_f32(den)), 0);
    EXPECT_LE(UlpError(got, exact), std::fabs(num) >= 0x1p-100f ? 1.0 : 1.5) << num << " / " << den;
  }
}

// ---- Dot: dot.h with n * 2^-126 for the flushing unit, inputs below FLT_MIN read as 0.
TEST(MveDotTest, BoundOverEveryTailMisalignmentAndMode) {
  Rng rng;
  for (Rounding mode : kModes) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{3}, size_t{4}, size_t{5}, size_t{15}, size_t{16}, size_t{17},
                     size_t{31}, size_t{33}, size_t{48}, size_t{49}, size_t{1023}, size_t{4099}}) {
      for (size_t m = 0; m < 4; ++m) {
        GuardedBuffer a(n, m), b(n, (m + 1) % 4);
        double exact = 0, magnitude = 0;
        for (size_t i = 0; i < n; ++i) {
          a[i] = MixedInput(rng), b[i] = MixedInput(rng);
          const double p = static_cast<double>(Flushed(a[i])) * Flushed(b[i]);
          exact += p, magnitude += std::fabs(p);
        }
        float got = kNaN;
        {
          ScopedFpEnv env(Mode(mode));
          mve::DotArraysMve(a.data(), b.data(), n, &got);
        }
        const double bound = Gamma(n, UnitRoundoff(mode)) * magnitude + static_cast<double>(n) * kFlushTiny;
        EXPECT_LE(std::fabs(got - exact), bound) << "n=" << n << " misalign " << m << " " << kRoundingNames[mode];
        EXPECT_TRUE(a.GuardsIntact() && b.GuardsIntact());
      }
    }
  }
}

// ---- Exp: exp.h (2 ULP where the result is normal; +0 or a subnormal below FLT_MIN; specials exact).
void CheckExp(float x, float got) {
  const double exact = std::exp(static_cast<double>(Flushed(x)));
  if (std::isnan(x)) {
    EXPECT_TRUE(std::isnan(got)) << x;
  } else if (x > 88.72283172607421875f) {
    EXPECT_EQ(got, kInf) << x;
  } else if (x == -kInf) {
    EXPECT_EQ(Bits(got), 0u);
  } else if (exact < FLT_MIN) {
    EXPECT_TRUE(got >= 0.0f && got <= FLT_MIN && !std::signbit(got)) << x << " -> " << got;
  } else {
    EXPECT_LE(UlpError(got, exact), 2.0) << "exp(" << std::setprecision(9) << x << ") = " << got;
  }
}

float ExpInput(Rng& rng) {
  switch (rng.Index(8)) {
    case 0:
      return rng.Uniform(-110.0f, -80.0f);
    case 1:
      return rng.Uniform(80.0f, 95.0f);
    case 2:
      return MixedInput(rng);
    default:
      return rng.Uniform(-87.0f, 43.0f);  // the fast range
  }
}

TEST(MveExpTest, BoundOverEveryTailMisalignmentModeAndInPlace) {
  Rng rng;
  const float specials[] = {kNaN,        kInf,         -kInf,  0.0f,  -0.0f,     FLT_MAX,  -FLT_MAX, 88.7228317f,
                            88.7228394f, -87.3365479f, -87.0f, 43.0f, 0x1p-140f, -103.97f, -150.0f,  100.0f};
  for (Rounding mode : kModes) {
    for (size_t n = 0; n <= kMaxTailTestLength; ++n) {
      for (size_t m = 0; m < 4; ++m) {
        GuardedBuffer in(n, m), out(n, (m + 1) % 4);
        for (size_t i = 0; i < n; ++i) in[i] = rng.Bernoulli(0.1) ? specials[rng.Index(16)] : ExpInput(rng);
        GuardedBuffer same = in;
        {
          ScopedFpEnv env(Mode(mode));
          mve::ExpArrayMve(in.data(), out.data(), n);
          mve::ExpArrayMve(same.data(), same.data(), n);
        }
        for (size_t i = 0; i < n; ++i) CheckExp(in[i], out[i]);
        EXPECT_EQ(same.Bits(), out.Bits()) << "in place, n=" << n;
        EXPECT_TRUE(in.GuardsIntact() && out.GuardsIntact() && same.GuardsIntact());
      }
    }
  }
}

// ---- Softmax: softmax.h (4 ULP, 8 under a directed mode, absolute FLT_MIN below FLT_MIN; special rows exact).
void CheckSoftmaxRow(const float* in, const float* out, size_t n, double ulps, const char* what) {
  const std::vector<double> ref = RefSoftmaxRow(in, n);
  for (size_t j = 0; j < n; ++j) {
    if (std::isnan(ref[j])) {
      EXPECT_TRUE(std::isnan(out[j])) << what << " j=" << j;
    } else if (ref[j] < FLT_MIN) {
      EXPECT_LE(std::fabs(out[j] - ref[j]), FLT_MIN) << what << " j=" << j;
    } else {
      EXPECT_LE(UlpError(out[j], ref[j]), ulps) << what << " n=" << n << " j=" << j << " x=" << in[j];
    }
  }
}

float SoftmaxInput(Rng& rng, size_t kind) {
  switch (kind) {
    case 0:
      return rng.Uniform(-1e4f, 1e4f);
    case 1:
      return rng.Cauchy(10.0f);
    case 2:
      return 1e4f + rng.Normal();
    case 3:
      return rng.Bernoulli(0.3) ? -kInf : rng.Normal(5.0f);
    default:
      return rng.Normal(3.0f);
  }
}

TEST(MveSoftmaxTest, BoundOverRowsTailsMisalignmentsAndModes) {
  Rng rng;
  for (Rounding mode : kModes) {
    const double ulps = mode == kToNearest ? 4.0 : 8.0;
    for (size_t n : {size_t{1}, size_t{2}, size_t{3}, size_t{4}, size_t{5}, size_t{7}, size_t{8}, size_t{9}, size_t{16},
                     size_t{17}, size_t{33}, size_t{49}, size_t{300}, size_t{1024}}) {
      for (size_t kind = 0; kind < 5; ++kind) {
        const size_t m = rng.Index(4);
        GuardedBuffer in(n, m), out(n, (m + 1) % 4);
        for (size_t j = 0; j < n; ++j) in[j] = SoftmaxInput(rng, kind);
        GuardedBuffer same = in;
        {
          ScopedFpEnv env(Mode(mode));
          mve::SoftmaxRowsMve(in.data(), out.data(), 1, n);
          mve::SoftmaxRowsMve(same.data(), same.data(), 1, n);
        }
        CheckSoftmaxRow(in.data(), out.data(), n, ulps, kRoundingNames[mode]);
        EXPECT_EQ(same.Bits(), out.Bits()) << "in place, n=" << n;
        EXPECT_TRUE(in.GuardsIntact() && out.GuardsIntact() && same.GuardsIntact());
      }
    }
  }
}

TEST(MveSoftmaxTest, SpecialRowsAreExact) {
  struct Row {
    std::vector<float> in, expected;
  };
  const Row rows[] = {
      {{1.0f, kNaN, 2.0f, 3.0f, 4.0f}, {kNaN, kNaN, kNaN, kNaN, kNaN}},
      {{-kInf, -kInf, -kInf, -kInf, -kInf, -kInf}, {0, 0, 0, 0, 0, 0}},
      {{kInf, 1.0f, kInf, -kInf, 5.0f}, {0.5f, 0, 0.5f, 0, 0}},
      {{-kInf, kNaN, -kInf}, {kNaN, kNaN, kNaN}},
      {{0.0f, 1e4f, -3.0f, 7.0f, 2e3f, 1.0f, 0.5f, -1e4f, 9.0f}, {0, 1, 0, 0, 0, 0, 0, 0, 0}},
      {{FLT_MAX, -FLT_MAX, 0.0f}, {1, 0, 0}},
  };
  for (Rounding mode : kModes) {
    for (const Row& row : rows) {
      const size_t n = row.in.size();
      GuardedBuffer in(n, 1), out(n, 2);
      std::copy(row.in.begin(), row.in.end(), in.data());
      {
        ScopedFpEnv env(Mode(mode));
        mve::SoftmaxRowsMve(in.data(), out.data(), 1, n);
      }
      for (size_t j = 0; j < n; ++j) {
        if (std::isnan(row.expected[j])) {
          EXPECT_TRUE(std::isnan(out[j])) << kRoundingNames[mode] << " j=" << j;
        } else {
          EXPECT_EQ(Bits(out[j]), Bits(row.expected[j])) << kRoundingNames[mode] << " n=" << n << " j=" << j;
        }
      }
      EXPECT_TRUE(out.GuardsIntact());
    }
  }
}

// ---- RMSNorm and LayerNorm: norm.h's bounds, flush-to-zero form (inputs below FLT_MIN count as zero, 2^-126
// for 2^-149), against a double reference on the flushed inputs.
void CheckRmsNorm(const std::vector<float>& x, size_t cols, const float* w, float eps, const float* y) {
  std::vector<double> xf(cols);
  double sum = 0;
  for (size_t j = 0; j < cols; ++j) xf[j] = Flushed(x[j]), sum += xf[j] * xf[j];
  if (sum == 0 && eps == 0) {
    for (size_t j = 0; j < cols; ++j) EXPECT_EQ(y[j], 0.0f) << "zero row j=" << j;
    return;
  }
  const double factor = 1 / std::sqrt(sum / static_cast<double>(cols) + eps);
  for (size_t j = 0; j < cols; ++j) {
    const double wj = w != nullptr ? w[j] : 1.0;
    const double exact = xf[j] * factor * wj;
    const double bound = (static_cast<double>(cols) / 2 + 4) * kU * std::fabs(exact) +
                         static_cast<double>(cols + 2) * kFlushTiny * std::fabs(wj) + kFlushTiny;
    EXPECT_LE(std::fabs(y[j] - exact), bound) << "cols=" << cols << " j=" << j << " x=" << x[j];
  }
}

void CheckLayerNorm(const std::vector<float>& x, size_t cols, const float* w, const float* b, float eps,
                    const float* y) {
  std::vector<double> xf(cols);
  double sum = 0, max_abs = 0;
  for (size_t j = 0; j < cols; ++j) xf[j] = Flushed(x[j]), sum += xf[j], max_abs = std::max(max_abs, std::fabs(xf[j]));
  const double n = static_cast<double>(cols), mu = sum / n;
  double var = 0;
  for (double v : xf) var += (v - mu) * (v - mu);
  var /= n;
  const double rho = var + eps == 0 ? 0 : 1 / std::sqrt(var + eps);
  for (size_t j = 0; j < cols; ++j) {
    const double wj = w != nullptr ? w[j] : 1.0, bj = b != nullptr ? b[j] : 0.0;
    const double exact = (xf[j] - mu) * rho * wj + bj;
    const double bound =
        std::fabs(wj) * rho * ((n / 2 + 7) * kU * std::fabs(xf[j] - mu) + (n + 8) * 0x1p-46 * max_abs) +
        kU * std::fabs(exact) + (n + 2) * kFlushTiny * std::fabs(wj) * (1 + rho) + kFlushTiny;
    EXPECT_LE(std::fabs(y[j] - exact), bound) << "cols=" << cols << " j=" << j << " x=" << x[j];
  }
}

TEST(MveNormTest, BoundOverWidthsScalesAndMisalignments) {
  Rng rng;
  // Plain; rescaled up; sum of squares overflowing (LayerNorm: the float sum too); RMSNorm near FLT_MAX.
  const float scales[] = {1.0f, 1e-36f, 1e30f, 0x1p124f, 3e38f};
  for (size_t cols : {size_t{1}, size_t{2}, size_t{3}, size_t{4}, size_t{5}, size_t{8}, size_t{9}, size_t{16},
                      size_t{17}, size_t{33}, size_t{256}, size_t{385}}) {
    for (float scale : scales) {
      const size_t m = rng.Index(4);
      const bool with_weight = rng.Bernoulli(0.5), with_bias = rng.Bernoulli(0.5);
      const float eps = rng.Bernoulli(0.5) ? 0.0f : 1e-5f;
      std::vector<float> x(cols);
      for (float& v : x) v = rng.Bernoulli(0.05) ? 0x1p-130f : rng.Uniform(-1.0f, 1.0f) * scale;
      GuardedBuffer xb(cols, m), w(cols, (m + 1) % 4), b(cols, (m + 2) % 4), y(cols, (m + 3) % 4);
      std::copy(x.begin(), x.end(), xb.data());
      for (size_t j = 0; j < cols; ++j) w[j] = rng.Normal(), b[j] = rng.Normal();
      const float* wp = with_weight ? w.data() : nullptr;
      const float* bp = with_bias ? b.data() : nullptr;
      mve::RmsNormRowsMve(xb.data(), 1, cols, wp, eps, y.data());
      CheckRmsNorm(x, cols, wp, eps, y.data());
      if (scale < 0x1p125f) {  // LayerNorm's bound is for |x| <= 2^126 (norm.h)
        mve::LayerNormRowsMve(xb.data(), 1, cols, wp, bp, eps, y.data());
        CheckLayerNorm(x, cols, wp, bp, eps, y.data());
      }
      mve::LayerNormRowsMve(xb.data(), 1, cols, wp, bp, 1e-5f, xb.data());  // in place
      EXPECT_TRUE(xb.GuardsIntact() && w.GuardsIntact() && b.GuardsIntact() && y.GuardsIntact());
    }
  }
}

TEST(MveNormTest, SpecialRows) {
  const size_t cols = 7;
  GuardedBuffer y(cols, 1), b(cols, 2);
  for (size_t j = 0; j < cols; ++j) b[j] = static_cast<float>(j) - 3.5f;
  const std::vector<float> zeros(cols, 0.0f), subnormals(cols, 0x1p-140f), constant(cols, 2.5f);
  std::vector<float> with_inf(cols, 1.0f), with_nan(cols, 1.0f);
  with_inf[5] = kInf, with_nan[6] = kNaN;
  mve::RmsNormRowsMve(zeros.data(), 1, cols, nullptr, 0.0f, y.data());
  for (size_t j = 0; j < cols; ++j) EXPECT_EQ(Bits(y[j]), 0u);
  mve::RmsNormRowsMve(subnormals.data(), 1, cols, nullptr, 0.0f, y.data());  // flushed: a zero row
  for (size_t j = 0; j < cols; ++j) EXPECT_EQ(y[j], 0.0f);
  mve::LayerNormRowsMve(constant.data(), 1, cols, nullptr, b.data(), 0.0f, y.data());
  for (size_t j = 0; j < cols; ++j) EXPECT_EQ(Bits(y[j]), Bits(b[j]));
  for (const std::vector<float>* row : {&with_inf, &with_nan}) {
    mve::RmsNormRowsMve(row->data(), 1, cols, nullptr, 1e-5f, y.data());
    for (size_t j = 0; j < cols; ++j) EXPECT_TRUE(std::isnan(y[j]));
    mve::LayerNormRowsMve(row->data(), 1, cols, nullptr, b.data(), 1e-5f, y.data());
    for (size_t j = 0; j < cols; ++j) EXPECT_TRUE(std::isnan(y[j]));
  }
  EXPECT_TRUE(y.GuardsIntact());
}

// ---- Activations, gated activation, add: activation.h.
void ActivationArray(Activation act, const float* x, float* y, size_t n) { mve::ActivationArrayMve(x, y, n, act); }

bool CheckActivation(Activation act, float x, float got, double* worst) {
  double ulp = 0;
  const bool ok = MeetsContract(act, Expected(act, x), got, &ulp);
  EXPECT_TRUE(ok) << ActivationName(act) << "(" << std::setprecision(9) << x << ") = " << got << " (" << ulp << " ULP)";
  *worst = std::max(*worst, ulp);
  return ok;
}

TEST(MveActivationTest, EveryTailMisalignmentSpecialsAndInPlace) {
  Rng rng;
  const float specials[] = {kNaN,       kInf,    -kInf,    0.0f,   -0.0f,  FLT_MAX, -FLT_MAX, 0x1p-140f,
                            -0x1p-140f, FLT_MIN, -FLT_MIN, -91.8f, -88.7f, -15.0f,  -11.0f,   -120.0f};
  for (Activation act : kAllActivations) {
    double worst = 0;
    for (size_t n = 0; n <= kMaxTailTestLength; ++n) {
      for (size_t m = 0; m < 4; ++m) {
        GuardedBuffer in(n, m), out(n, (m + 1) % 4);
        for (size_t i = 0; i < n; ++i)
          in[i] = rng.Bernoulli(0.15) ? specials[rng.Index(16)] : ActivationRandomInput(rng);
        GuardedBuffer same = in;
        ActivationArray(act, in.data(), out.data(), n);
        ActivationArray(act, same.data(), same.data(), n);
        for (size_t i = 0; i < n; ++i) CheckActivation(act, in[i], out[i], &worst);
        EXPECT_EQ(same.Bits(), out.Bits()) << ActivationName(act) << " in place, n=" << n;
        EXPECT_TRUE(in.GuardsIntact() && out.GuardsIntact() && same.GuardsIntact());
      }
    }
    printf("mve %s: max %.2f ULP (bound %.0f)\n", ActivationName(act), worst, MaxUlp(act));
  }
}

// Every 16411th float32 bit pattern (261,715 inputs per activation, both signs, every binade).
TEST(MveActivationTest, SampledSweepOfAllFloats) {
  constexpr uint32_t kStride = 16411, kBlock = 256;
  std::vector<float> in(kBlock), out(kBlock);
  for (Activation act : kAllActivations) {
    double worst = 0;
    size_t failures = 0;
    uint64_t bits = 0;
    while (bits <= 0xFFFFFFFFu) {
      size_t count = 0;
      for (; count < kBlock && bits <= 0xFFFFFFFFu; ++count, bits += kStride) {
        const uint32_t b = static_cast<uint32_t>(bits);
        std::memcpy(&in[count], &b, sizeof b);
      }
      ActivationArray(act, in.data(), out.data(), count);
      for (size_t i = 0; i < count && failures < 10; ++i)
        failures += CheckActivation(act, in[i], out[i], &worst) ? 0 : 1;
    }
    printf("mve %s sweep: max %.2f ULP (bound %.0f)\n", ActivationName(act), worst, MaxUlp(act));
  }
}

TEST(MveActivationTest, GatedWithinBoundTimesUpPlusOneRoundingAndAddRoundsToNearest) {
  Rng rng;
  for (Activation act : kAllActivations) {
    for (size_t n = 0; n <= kMaxTailTestLength; ++n) {
      const size_t m = rng.Index(4);
      GuardedBuffer gate(n, m), up(n, (m + 1) % 4), y(n, (m + 2) % 4), act_y(n, 0);
      for (size_t i = 0; i < n; ++i) gate[i] = ActivationRandomInput(rng), up[i] = rng.Uniform(-2.0f, 2.0f);
      mve::GatedActivationArrayMve(gate.data(), up.data(), y.data(), n, act);
      ActivationArray(act, gate.data(), act_y.data(), n);
      for (size_t i = 0; i < n; ++i) {
        const double a = ActivationReference(act, gate[i]);
        const double exact = a * up[i];
        if (std::fabs(a) < FLT_MIN || std::fabs(exact) < FLT_MIN) continue;  // flushable: activation.h
        const double bound = MaxUlp(act) * UlpOf(a) * std::fabs(up[i]) + 0.5 * UlpOf(exact);
        EXPECT_LE(std::fabs(y[i] - exact), bound) << ActivationName(act) << " gate " << gate[i] << " up " << up[i];
      }
      EXPECT_TRUE(gate.GuardsIntact() && up.GuardsIntact() && y.GuardsIntact());
    }
  }
  // Add: the IEEE sum rounded to nearest in every mode the caller may set (MVE ignores FPSCR.RMode); exponents
  // less than 29 apart, so the double sum is exact and its rounding to float is the nearest float.
  for (Rounding mode : kModes) {
    for (size_t n = 0; n <= kMaxTailTestLength; ++n) {
      const size_t m = rng.Index(4);
      GuardedBuffer a(n, m), b(n, (m + 3) % 4), y(n, (m + 1) % 4);
      for (size_t i = 0; i < n; ++i) {
        a[i] = rng.Uniform(-2.0f, 2.0f) * std::ldexp(1.0f, static_cast<int>(rng.Index(20)) - 10);
        b[i] = rng.Bernoulli(0.05) ? -a[i]
                                   : rng.Uniform(-2.0f, 2.0f) * std::ldexp(1.0f, static_cast<int>(rng.Index(20)) - 10);
      }
      {
        ScopedFpEnv env(Mode(mode));
        mve::AddArraysMve(a.data(), b.data(), y.data(), n);
      }
      for (size_t i = 0; i < n; ++i) {
        EXPECT_EQ(Bits(y[i]), Bits(static_cast<float>(static_cast<double>(a[i]) + b[i]))) << a[i] << " + " << b[i];
      }
      EXPECT_TRUE(a.GuardsIntact() && b.GuardsIntact() && y.GuardsIntact());
    }
  }
}

// ---- RoPE from a table: rope.h's table bound against the exact angles (std::sin/cos in double), flush form.
TEST(MveRopeTest, TableBoundBothLayoutsPartialRotationEveryMode) {
  Rng rng;
  struct Shape {
    size_t heads, head_dim, rotary_dim;
  };
  const Shape shapes[] = {{1, 2, 2},   {2, 6, 6},   {3, 8, 8},   {1, 10, 10}, {2, 12, 8},
                          {1, 16, 14}, {2, 64, 64}, {1, 34, 30}, {4, 18, 18}};
  const size_t kSeq = 3, kFirst = 1000;
  for (Rounding mode : kModes) {
    for (const Shape& s : shapes) {
      for (bool half : {false, true}) {
        std::vector<float> table(edgeattn::RopeTableFloats(kSeq, s.rotary_dim));
        ASSERT_EQ(edgeattn::RopeTableFill(s.rotary_dim, 0.0f, kFirst, kSeq, table.data()), Status::kOk);
        const size_t count = kSeq * s.heads * s.head_dim;
        GuardedBuffer x(count, rng.Index(4));
        for (size_t i = 0; i < count; ++i) x[i] = MixedInput(rng);
        const std::vector<float> before(x.data(), x.data() + count);
        edgeattn::internal::RopeProblem p{s.heads, s.head_dim, s.rotary_dim, 0.0, half};
        {
          ScopedFpEnv env(Mode(mode));
          mve::RopeWithTableMve(p, table.data(), kFirst, x.data(), kSeq, kFirst);
        }
        const double u = UnitRoundoff(mode);
        for (size_t t = 0; t < kSeq; ++t) {
          const double position = static_cast<double>(kFirst + t);
          for (size_t h = 0; h < s.heads; ++h) {
            const size_t base = (t * s.heads + h) * s.head_dim;
            for (size_t i = 0; i < s.rotary_dim / 2; ++i) {
              const size_t ia = base + (half ? i : 2 * i), ib = base + (half ? i + s.rotary_dim / 2 : 2 * i + 1);
              const double angle =
                  position * std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(s.rotary_dim));
              const double xa = Flushed(before[ia]), xb = Flushed(before[ib]);
              const double ya = xa * std::cos(angle) - xb * std::sin(angle);
              const double yb = xb * std::cos(angle) + xa * std::sin(angle);
              const double bound =
                  (3 * u + (position + 1) * 0x1p-46) * (std::fabs(xa) + std::fabs(xb)) + 3 * kFlushTiny;
              EXPECT_LE(std::fabs(x[ia] - ya), bound) << (half ? "half" : "interleaved") << " pair " << i;
              EXPECT_LE(std::fabs(x[ib] - yb), bound) << (half ? "half" : "interleaved") << " pair " << i;
            }
            for (size_t j = s.rotary_dim; j < s.head_dim; ++j) EXPECT_EQ(Bits(x[base + j]), Bits(before[base + j]));
          }
        }
        EXPECT_TRUE(x.GuardsIntact());
      }
    }
  }
}

// ---- Linear and LinearTransposed: linear.h's bound with (in + 1) * 2^-126.
TEST(MveLinearTest, BothLayoutsBoundOverShapesTailsAndModes) {
  Rng rng;
  for (Rounding mode : kModes) {
    for (size_t rows : {size_t{1}, size_t{3}}) {
      for (size_t in : {size_t{1}, size_t{2}, size_t{5}, size_t{8}, size_t{9}, size_t{64}}) {
        for (size_t out : {size_t{1}, size_t{3}, size_t{4}, size_t{7}, size_t{16}, size_t{17}, size_t{33}}) {
          for (bool transposed : {false, true}) {
            const bool with_bias = rng.Bernoulli(0.7);
            GuardedBuffer x(rows * in, rng.Index(4)), w(in * out, rng.Index(4)), b(out, rng.Index(4)),
                y(rows * out, rng.Index(4));
            for (size_t i = 0; i < x.size(); ++i) x[i] = MixedInput(rng);
            for (size_t i = 0; i < w.size(); ++i) w[i] = MixedInput(rng);
            for (size_t i = 0; i < out; ++i) b[i] = MixedInput(rng);
            const float* bias = with_bias ? b.data() : nullptr;
            {
              ScopedFpEnv env(Mode(mode));
              if (transposed) {
                mve::LinearTransposedMve(x.data(), rows, in, w.data(), bias, out, 0, out, y.data());
              } else {
                mve::LinearMve(x.data(), rows, in, w.data(), bias, out, y.data());
              }
            }
            for (size_t r = 0; r < rows; ++r) {
              for (size_t o = 0; o < out; ++o) {
                double exact = with_bias ? Flushed(b[o]) : 0.0, magnitude = std::fabs(exact);
                for (size_t i = 0; i < in; ++i) {
                  const double wv = Flushed(transposed ? w[o * in + i] : w[i * out + o]);
                  const double p = Flushed(x[r * in + i]) * wv;
                  exact += p, magnitude += std::fabs(p);
                }
                const double bound =
                    Gamma(in + 1, UnitRoundoff(mode)) * magnitude + static_cast<double>(in + 1) * kFlushTiny;
                EXPECT_LE(std::fabs(y[r * out + o] - exact), bound)
                    << (transposed ? "transposed " : "") << rows << "x" << in << "x" << out << " at " << r << "," << o;
              }
            }
            EXPECT_TRUE(x.GuardsIntact() && w.GuardsIntact() && b.GuardsIntact() && y.GuardsIntact());
          }
        }
      }
    }
  }
}
#endif  // EDGEATTN_MVE_FLOAT

}  // namespace
}  // namespace edgeattn_test
