// SPDX-License-Identifier: Apache-2.0
// Activations, gated activations and add: the bounds of activation.h on fresh random inputs on every path, tail
// and misalignment, in place and aliased; special values; every status code, with nothing written on error.
#include "edgeattn/activation.h"

#include <gtest/gtest.h>
#include <stdint.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "tests/activation_reference.h"
#include "tests/test_util.h"

namespace edgeattn_test {
namespace {

class ActivationTest : public PathTest {
 protected:
  const ActivationApi& act_api() const { return ActivationApiFor(GetParam()); }
};
EDGEATTN_INSTANTIATE_PATHS(ActivationTest);

double CheckOne(Activation act, float x, float got) {
  double ulp;
  const Expectation e = Expected(act, x);
  EXPECT_TRUE(MeetsContract(act, e, got, &ulp))
      << ActivationName(act) << "(" << x << " = " << std::hexfloat << x << std::defaultfloat << ") = " << got
      << ", reference " << e.exact << " (" << ulp << " ULP)";
  return ulp;
}

TEST_P(ActivationTest, EveryLengthMisalignmentAndInPlace) {
  Rng rng;
  for (Activation act : kAllActivations) {
    double max_ulp = 0;
    for (size_t n = 0; n <= kMaxTailTestLength; ++n) {
      for (size_t m = 0; m < 4; ++m) {
        GuardedBuffer in(n, m), out(n, (m + 1) % 4);
        for (size_t i = 0; i < n; ++i) in[i] = ActivationRandomInput(rng);
        ASSERT_EQ(act_api().apply(in.data(), out.data(), n, act), Status::kOk);
        for (size_t i = 0; i < n; ++i) max_ulp = std::max(max_ulp, CheckOne(act, in[i], out[i]));
        EXPECT_TRUE(in.GuardsIntact() && out.GuardsIntact()) << ActivationName(act) << " n=" << n;
        const std::vector<uint32_t> expected = out.Bits();
        ASSERT_EQ(act_api().apply(in.data(), in.data(), n, act), Status::kOk);
        EXPECT_EQ(in.Bits(), expected) << ActivationName(act) << " in place, n=" << n;
        EXPECT_TRUE(in.GuardsIntact());
      }
    }
    std::printf("%s %s: max %.3f ULP on random inputs\n", TargetName(GetParam()), ActivationName(act), max_ulp);
  }
}

TEST_P(ActivationTest, SpecialValues) {
  const float in[] = {kInf,   -kInf,   kNaN,   -kNaN,  0.0f,    -0.0f,   FLT_MAX, -FLT_MAX, FLT_MIN, -FLT_MIN,
                      1e-45f, -1e-45f, -88.0f, -91.0f, -100.0f, -103.0f, -13.0f,  -10.0f,   1e30f,   -1e30f};
  constexpr size_t n = sizeof(in) / sizeof(in[0]);
  for (Activation act : kAllActivations) {
    float out[n];
    ASSERT_EQ(act_api().apply(in, out, n, act), Status::kOk);
    for (size_t i = 0; i < n; ++i) CheckOne(act, in[i], out[i]);
    EXPECT_TRUE(std::isnan(out[2]) && std::isnan(out[3])) << ActivationName(act);
    if (act == Activation::kRelu) {
      EXPECT_EQ(Bits(out[5]), Bits(0.0f)) << "relu(-0) is +0";
      EXPECT_EQ(Bits(out[1]), Bits(0.0f)) << "relu(-inf) is +0";
    } else {
      EXPECT_EQ(out[0], kInf) << ActivationName(act);
      EXPECT_EQ(Bits(out[1]), Bits(-0.0f)) << ActivationName(act) << "(-inf) is -0";
      EXPECT_EQ(Bits(out[5]), Bits(-0.0f)) << ActivationName(act) << "(-0) is -0";
      EXPECT_EQ(Bits(out[7]), Bits(-0.0f)) << ActivationName(act) << "(-FLT_MAX) is -0";
      EXPECT_EQ(out[6], FLT_MAX) << ActivationName(act);
    }
  }
}

// SiLU where e^-x overflows a float but the result is normal (down to -91.8): the full bound, not a flush.
TEST_P(ActivationTest, SiluWhereExpOfMinusXOverflows) {
  Rng rng;
  std::vector<float> in(4096), out(4096);
  for (float& x : in) x = rng.Uniform(-91.8f, -88.0f);
  ASSERT_EQ(act_api().apply(in.data(), out.data(), in.size(), Activation::kSilu), Status::kOk);
  for (size_t i = 0; i < in.size(); ++i) {
    ASSERT_GE(std::fabs(SiluReference(in[i])), FLT_MIN);
    EXPECT_LE(UlpError(out[i], SiluReference(in[i])), MaxUlp(Activation::kSilu)) << in[i];
  }
}

TEST_P(ActivationTest, GatedWithinBoundTimesUpPlusOneRounding) {
  Rng rng;
  for (Activation act : kAllActivations) {
    for (size_t n = 0; n <= kMaxTailTestLength; ++n) {
      for (size_t m = 0; m < 4; ++m) {
        GuardedBuffer gate(n, m), up(n, (m + 2) % 4), y(n, (m + 1) % 4);
        for (size_t i = 0; i < n; ++i) {
          gate[i] = ActivationRandomInput(rng);
          up[i] = rng.Bernoulli(0.1) ? rng.Cauchy(1e6f) : rng.Normal(2.0f);
        }
        ASSERT_EQ(act_api().gated(gate.data(), up.data(), y.data(), n, act), Status::kOk);
        for (size_t i = 0; i < n; ++i) {
          const Expectation e = Expected(act, gate[i]);
          const float u = up[i];
          if (e.kind == Expect::kNaN) {
            EXPECT_TRUE(std::isnan(y[i]));
          } else if (e.kind == Expect::kUlp || e.kind == Expect::kBits) {
            const double exact = e.exact * static_cast<double>(u);
            if (std::isinf(e.exact) || std::fabs(exact) < FLT_MIN || std::fabs(exact) > FLT_MAX) continue;
            const double act_ulp = e.exact == 0.0 ? 0.0 : UlpOf(e.exact);
            const double bound = MaxUlp(act) * act_ulp * std::fabs(static_cast<double>(u)) + 0.5 * UlpOf(exact);
            EXPECT_LE(std::fabs(static_cast<double>(y[i]) - exact), bound)
                << ActivationName(act) << "(" << gate[i] << ") * " << u << " = " << y[i] << ", reference " << exact;
          } else {  // act(gate) may flush: |y| <= FLT_MIN |up| (rounded)
            EXPECT_LE(std::fabs(y[i]), FLT_MIN * std::fabs(u) * (1 + 1e-6)) << gate[i] << " * " << u;
          }
        }
        EXPECT_TRUE(gate.GuardsIntact() && up.GuardsIntact() && y.GuardsIntact());
        // y aliasing gate, then up: the same bits.
        const std::vector<uint32_t> expected = y.Bits();
        GuardedBuffer g2 = gate, u2 = up;
        ASSERT_EQ(act_api().gated(g2.data(), up.data(), g2.data(), n, act), Status::kOk);
        EXPECT_EQ(g2.Bits(), expected) << ActivationName(act) << " y == gate, n=" << n;
        ASSERT_EQ(act_api().gated(gate.data(), u2.data(), u2.data(), n, act), Status::kOk);
        EXPECT_EQ(u2.Bits(), expected) << ActivationName(act) << " y == up, n=" << n;
        EXPECT_TRUE(g2.GuardsIntact() && u2.GuardsIntact());
      }
    }
  }
}

TEST_P(ActivationTest, AddIsCorrectlyRoundedAndMayAlias) {
  Rng rng;
  for (size_t n = 0; n <= kMaxTailTestLength; ++n) {
    for (size_t m = 0; m < 4; ++m) {
      GuardedBuffer a(n, m), b(n, (m + 3) % 4), y(n, (m + 1) % 4);
      for (size_t i = 0; i < n; ++i) {
        // |a|, |b| in [2^-10, 2^10): exponents differ by less than 29.
        const auto random_value = [&rng] {
          const float sign = rng.Bernoulli(0.5) ? -1.0f : 1.0f;
          return sign * rng.Uniform(1.0f, 2.0f) * std::ldexp(1.0f, static_cast<int>(rng.Index(20)) - 10);
        };
        a[i] = random_value();
        b[i] = rng.Bernoulli(0.05) ? -a[i] : random_value();
      }
      ASSERT_EQ(act_api().add(a.data(), b.data(), y.data(), n), Status::kOk);
      for (size_t i = 0; i < n; ++i) {
        // The double sum is exact (24-bit significands, exponents less than 29 apart), so its rounding to float is
        // the correctly rounded float sum.
        const double exact = static_cast<double>(a[i]) + static_cast<double>(b[i]);
        ASSERT_EQ(exact - static_cast<double>(a[i]), static_cast<double>(b[i]));
        EXPECT_EQ(Bits(y[i]), Bits(static_cast<float>(exact))) << a[i] << " + " << b[i];
      }
      EXPECT_TRUE(a.GuardsIntact() && b.GuardsIntact() && y.GuardsIntact());
      const std::vector<uint32_t> expected = y.Bits();
      GuardedBuffer a2 = a, b2 = b;
      ASSERT_EQ(act_api().add(a2.data(), b.data(), a2.data(), n), Status::kOk);
      EXPECT_EQ(a2.Bits(), expected) << "y == a, n=" << n;
      ASSERT_EQ(act_api().add(a.data(), b2.data(), b2.data(), n), Status::kOk);
      EXPECT_EQ(b2.Bits(), expected) << "y == b, n=" << n;
      ASSERT_EQ(act_api().add(a.data(), a.data(), y.data(), n), Status::kOk);  // both inputs the same array
      for (size_t i = 0; i < n; ++i) EXPECT_EQ(y[i], 2.0f * a[i]);
    }
  }
}

TEST_P(ActivationTest, StatusCodesInOrderAndNothingWritten) {
  const float in[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  float buf[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  float out[8];
  std::fill(out, out + 8, 42.0f);
  const Activation bad = static_cast<Activation>(4);
  const Activation negative = static_cast<Activation>(-1);
  const ActivationApi& api = act_api();
  const auto untouched = [&] {
    for (int i = 0; i < 8; ++i) {
      if (out[i] != 42.0f || buf[i] != static_cast<float>(i)) return false;
    }
    return true;
  };
  const size_t huge = SIZE_MAX / 2;  // n * sizeof(float) overflows
  for (Activation act : kAllActivations) {
    EXPECT_EQ(api.apply(nullptr, out, 4, act), Status::kNullPointer);
    EXPECT_EQ(api.apply(in, nullptr, 4, act), Status::kNullPointer);
    EXPECT_EQ(api.gated(nullptr, in, out, 4, act), Status::kNullPointer);
    EXPECT_EQ(api.gated(in, nullptr, out, 4, act), Status::kNullPointer);
    EXPECT_EQ(api.gated(in, in, nullptr, 4, act), Status::kNullPointer);
    EXPECT_EQ(api.apply(in, out, huge, act), Status::kInvalidShape);
    EXPECT_EQ(api.gated(in, in, out, huge, act), Status::kInvalidShape);
    EXPECT_EQ(api.apply(buf, buf + 1, 4, act), Status::kOverlap);
    EXPECT_EQ(api.apply(buf + 2, buf, 4, act), Status::kOverlap);
    EXPECT_EQ(api.gated(buf, in, buf + 1, 4, act), Status::kOverlap);
    EXPECT_EQ(api.gated(in, buf + 1, buf, 4, act), Status::kOverlap);
    // n = 0: nothing read or written, null arrays fine.
    EXPECT_EQ(api.apply(nullptr, nullptr, 0, act), Status::kOk);
    EXPECT_EQ(api.gated(nullptr, nullptr, nullptr, 0, act), Status::kOk);
    EXPECT_EQ(api.apply(buf, buf + 1, 0, act), Status::kOk);
  }
  for (Activation act : {bad, negative, static_cast<Activation>(1000)}) {
    EXPECT_EQ(api.apply(in, out, 4, act), Status::kInvalidArgument);
    EXPECT_EQ(api.gated(in, in, out, 4, act), Status::kInvalidArgument);
    EXPECT_EQ(api.apply(nullptr, nullptr, 0, act), Status::kInvalidArgument) << "act is checked even for n = 0";
    // Order: null pointer, shape, argument, overlap.
    EXPECT_EQ(api.apply(nullptr, out, 4, act), Status::kNullPointer);
    EXPECT_EQ(api.apply(in, out, huge, act), Status::kInvalidShape);
    EXPECT_EQ(api.apply(buf, buf + 1, 4, act), Status::kInvalidArgument);
  }
  EXPECT_EQ(api.add(nullptr, in, out, 4), Status::kNullPointer);
  EXPECT_EQ(api.add(in, nullptr, out, 4), Status::kNullPointer);
  EXPECT_EQ(api.add(in, in, nullptr, 4), Status::kNullPointer);
  EXPECT_EQ(api.add(in, in, out, huge), Status::kInvalidShape);
  EXPECT_EQ(api.add(nullptr, in, out, huge), Status::kNullPointer);
  EXPECT_EQ(api.add(buf, in, buf + 1, 4), Status::kOverlap);
  EXPECT_EQ(api.add(in, buf + 3, buf, 4), Status::kOverlap);
  EXPECT_EQ(api.add(nullptr, nullptr, nullptr, 0), Status::kOk);
  EXPECT_TRUE(untouched()) << "an error wrote an output";
}

}  // namespace
}  // namespace edgeattn_test
