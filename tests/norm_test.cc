// SPDX-License-Identifier: Apache-2.0
// RMSNorm and LayerNorm: the bounds of norm.h against a long double reference on every path, over every tail,
// misalignment, with and without weight and bias, in place; rows offset far from zero, huge and tiny rows;
// special rows; bad inputs leave y untouched.
#include "edgeattn/norm.h"

#include <gtest/gtest.h>
#include <stdint.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "lib/common/dispatch.h"
#include "tests/test_util.h"

namespace edgeattn_test {
namespace {

class NormTest : public PathTest {
 protected:
  // A vector unit that flushes subnormal inputs and results to zero (ARMv7 NEON) is held to the flushing bound.
  bool Flushes() const { return !IsScalarPath() && edgeattn::internal::DispatchedVectorFlushesSubnormals(); }
  double Tiny() const { return Flushes() ? 0x1p-126 : 0x1p-149; }
};
EDGEATTN_INSTANTIATE_PATHS(NormTest);

using Real = long double;

struct NormCase {
  size_t rows, cols;
  bool weight, bias, in_place;
  size_t misalign;
  float eps;
};

// Fills x, weight and bias, runs the kernel, checks every element against its bound; returns the largest
// relative L2 error of a row (of y - bias, the normalised part).
double CheckRms(const Api& api, const NormCase& c, std::vector<float> x_values, Rng& rng, double tiny) {
  GuardedBuffer x(c.rows * c.cols, c.misalign), w(c.cols, (c.misalign + 1) % 4),
      y(c.rows * c.cols, (c.misalign + 2) % 4);
  for (size_t i = 0; i < x.size(); ++i) x[i] = x_values[i];
  for (size_t j = 0; j < c.cols; ++j) w[j] = rng.Normal();
  y.Fill(kNaN);
  float* out = c.in_place ? x.data() : y.data();
  EXPECT_EQ(api.rms_norm(x.data(), c.rows, c.cols, c.weight ? w.data() : nullptr, c.eps, out), Status::kOk);
  double worst = 0.0;
  for (size_t r = 0; r < c.rows; ++r) {
    Real sum = 0;
    for (size_t j = 0; j < c.cols; ++j) sum += static_cast<Real>(x_values[r * c.cols + j]) * x_values[r * c.cols + j];
    const Real factor = 1 / std::sqrt(sum / static_cast<Real>(c.cols) + static_cast<Real>(c.eps));
    Real err2 = 0, ref2 = 0;
    for (size_t j = 0; j < c.cols; ++j) {
      const Real wj = c.weight ? static_cast<Real>(w[j]) : 1;
      const Real exact = static_cast<Real>(x_values[r * c.cols + j]) * factor * wj;
      const float got = out[r * c.cols + j];
      const Real err = std::fabs(static_cast<Real>(got) - exact);
      const Real bound = (static_cast<Real>(c.cols) / 2 + 4) * kU * std::fabs(exact) +
                         static_cast<Real>(c.cols + 2) * tiny * std::fabs(wj);
      EXPECT_LE(err, bound) << "cols=" << c.cols << " row " << r << " col " << j << " got " << got << " exact "
                            << static_cast<double>(exact);
      if (err > bound) return 1.0;
      err2 += err * err;
      ref2 += exact * exact;
    }
    if (ref2 > 0) worst = std::max(worst, static_cast<double>(std::sqrt(err2 / ref2)));
  }
  EXPECT_TRUE(x.GuardsIntact() && w.GuardsIntact() && y.GuardsIntact());
  return worst;
}

double CheckLayer(const Api& api, const NormCase& c, std::vector<float> x_values, Rng& rng, double tiny) {
  GuardedBuffer x(c.rows * c.cols, c.misalign), w(c.cols, (c.misalign + 1) % 4), b(c.cols, (c.misalign + 2) % 4),
      y(c.rows * c.cols, (c.misalign + 3) % 4);
  for (size_t i = 0; i < x.size(); ++i) x[i] = x_values[i];
  for (size_t j = 0; j < c.cols; ++j) w[j] = rng.Normal(), b[j] = rng.Normal();
  y.Fill(kNaN);
  float* out = c.in_place ? x.data() : y.data();
  EXPECT_EQ(
      api.layer_norm(x.data(), c.rows, c.cols, c.weight ? w.data() : nullptr, c.bias ? b.data() : nullptr, c.eps, out),
      Status::kOk);
  double worst = 0.0;
  for (size_t r = 0; r < c.rows; ++r) {
    const float* xr = x_values.data() + r * c.cols;
    Real sum = 0, max_abs = 0;
    for (size_t j = 0; j < c.cols; ++j) sum += xr[j], max_abs = std::max(max_abs, std::fabs(static_cast<Real>(xr[j])));
    const Real mu = sum / static_cast<Real>(c.cols);
    Real var = 0;
    for (size_t j = 0; j < c.cols; ++j) var += (xr[j] - mu) * (xr[j] - mu);
    var /= static_cast<Real>(c.cols);
    // var + eps = 0 (a constant row with eps = 0): the contract's output is the bias, so rho counts as 0.
    const Real rho = var + static_cast<Real>(c.eps) == 0 ? 0 : 1 / std::sqrt(var + static_cast<Real>(c.eps));
    Real err2 = 0, ref2 = 0;
    for (size_t j = 0; j < c.cols; ++j) {
      const Real wj = c.weight ? static_cast<Real>(w[j]) : 1;
      const Real bj = c.bias ? static_cast<Real>(b[j]) : 0;
      const Real normalised = (xr[j] - mu) * rho * wj;
      const Real exact = normalised + bj;
      const float got = out[r * c.cols + j];
      const Real err = std::fabs(static_cast<Real>(got) - exact);
      const Real n = static_cast<Real>(c.cols);
      const Real bound =
          std::fabs(wj) * rho * ((n / 2 + 7) * kU * std::fabs(xr[j] - mu) + (n + 8) * 0x1p-46 * max_abs) +
          kU * std::fabs(exact) + (n + 2) * tiny * std::fabs(wj) * (1 + rho);
      EXPECT_LE(err, bound) << "cols=" << c.cols << " row " << r << " col " << j << " got " << got << " exact "
                            << static_cast<double>(exact);
      if (err > bound) return 1.0;
      const Real got_normalised = static_cast<Real>(got) - bj;
      err2 += (got_normalised - normalised) * (got_normalised - normalised);
      ref2 += normalised * normalised;
    }
    if (ref2 > 0) worst = std::max(worst, static_cast<double>(std::sqrt(err2 / ref2)));
  }
  EXPECT_TRUE(x.GuardsIntact() && w.GuardsIntact() && b.GuardsIntact() && y.GuardsIntact());
  return worst;
}

std::vector<float> NormalRows(Rng& rng, size_t count, float mean, float sigma) {
  std::vector<float> v(count);
  for (float& f : v) f = mean + rng.Normal(sigma);
  return v;
}

TEST_P(NormTest, RmsNormEveryWidthMisalignedWithAndWithoutWeight) {
  Rng rng;
  for (size_t cols = 1; cols <= kMaxTailTestLength; ++cols) {
    for (int variant = 0; variant < 4; ++variant) {
      const NormCase c{1 + cols % 3,       cols,     (variant & 1) != 0,         false,
                       (variant & 2) != 0, cols % 4, variant == 3 ? 0.0f : 1e-5f};
      CheckRms(api(), c, NormalRows(rng, c.rows * cols, 0.0f, 1.0f), rng, Tiny());
    }
  }
  for (size_t cols : {64u, 288u, 384u, 1536u, 4096u}) {
    CheckRms(api(), NormCase{3, cols, true, false, false, 1, 1e-6f}, NormalRows(rng, 3 * cols, 0.0f, 1.0f), rng,
             Tiny());
  }
}

TEST_P(NormTest, LayerNormEveryWidthMisalignedWithAndWithoutWeightAndBias) {
  Rng rng;
  for (size_t cols = 1; cols <= kMaxTailTestLength; ++cols) {
    for (int variant = 0; variant < 8; ++variant) {
      const NormCase c{1 + cols % 3,       cols,     (variant & 1) != 0,         (variant & 2) != 0,
                       (variant & 4) != 0, cols % 4, variant == 5 ? 0.0f : 1e-5f};
      CheckLayer(api(), c, NormalRows(rng, c.rows * cols, rng.Normal(2.0f), 1.0f), rng, Tiny());
    }
  }
  for (size_t cols : {64u, 288u, 384u, 1536u, 4096u}) {
    CheckLayer(api(), NormCase{3, cols, true, true, false, 1, 1e-5f}, NormalRows(rng, 3 * cols, 0.5f, 2.0f), rng,
               Tiny());
  }
}

// The case: mean 1e4, spread 1. A float mean is up to 2^-11 off here; the centred output must stay
// within 1e-5 relative L2 per row of the long double reference (and within the per-element bound).
TEST_P(NormTest, LayerNormOffsetRowsKeepRelativeAccuracy) {
  Rng rng;
  double overall = 0.0;
  for (size_t cols : {7u, 64u, 100u, 384u, 1536u, 4096u}) {
    for (float mean : {1e4f, -1e4f, 3e5f}) {
      const double worst = CheckLayer(api(), NormCase{4, cols, false, false, cols % 2 == 0, cols % 4, 0.0f},
                                      NormalRows(rng, 4 * cols, mean, 1.0f), rng, Tiny());
      EXPECT_LE(worst, 1e-5) << "cols=" << cols << " mean=" << mean;
      overall = std::max(overall, worst);
    }
  }
  std::printf("[   INFO   ] %s: worst relative L2 error of a centred row %.3g\n", TargetName(GetParam()), overall);
}

TEST_P(NormTest, HugeAndTinyRowsNeitherOverflowNorUnderflow) {
  Rng rng;
  for (size_t cols : {1u, 5u, 33u, 384u}) {
    for (float sigma : {1e30f, 1e37f, 1e-20f, 1e-30f, 1e-36f}) {
      // Rows of N(0, 1e-36) hold elements below FLT_MIN, which SIMD units that flush subnormals read as 0.
      if (sigma == 1e-36f && Flushes()) continue;
      const std::vector<float> values = NormalRows(rng, 2 * cols, 0.0f, sigma);
      const double rms_worst = CheckRms(api(), NormCase{2, cols, true, false, false, 0, 0.0f}, values, rng, Tiny());
      EXPECT_LE(rms_worst, 1e-5) << "rms cols=" << cols << " sigma=" << sigma;
      const double layer_worst = CheckLayer(api(), NormCase{2, cols, true, true, false, 0, 0.0f}, values, rng, Tiny());
      EXPECT_LE(layer_worst, cols == 1 ? 1.0 : 1e-5) << "layer cols=" << cols << " sigma=" << sigma;
    }
  }
  // RMSNorm up to FLT_MAX: the plain sum of squares overflows for any of these rows.
  std::vector<float> extreme = {3.4e38f, -3.4e38f, 1e38f, 2.0f, -1e-30f, 3.3e38f};
  CheckRms(api(), NormCase{1, extreme.size(), false, false, false, 0, 0.0f}, extreme, rng, Tiny());
  if (!Flushes()) {
    // Subnormal rows: the sum of squares is formed on x * 2^127.
    std::vector<float> sub = {1e-40f, -3e-41f, 1e-45f, 0.0f, 7e-39f};
    CheckRms(api(), NormCase{1, sub.size(), false, false, false, 0, 0.0f}, sub, rng, Tiny());
    CheckRms(api(), NormCase{1, sub.size(), false, false, false, 0, 1e-30f}, sub, rng, Tiny());
    CheckLayer(api(), NormCase{1, sub.size(), false, false, false, 0, 0.0f}, sub, rng, Tiny());
  }
}

TEST_P(NormTest, SpecialRows) {
  float zeros[6] = {0, 0, 0, 0, 0, 0};
  float y[6];
  ASSERT_EQ(api().rms_norm(zeros, 1, 6, nullptr, 0.0f, y), Status::kOk);
  for (float v : y) EXPECT_EQ(v, 0.0f);
  ASSERT_EQ(api().rms_norm(zeros, 2, 3, nullptr, 1e-5f, y), Status::kOk);
  for (float v : y) EXPECT_EQ(v, 0.0f);
  // A constant row with eps = 0: var + eps is 0, so the output is the bias (or zeros).
  float constant[4] = {2.5f, 2.5f, 2.5f, 2.5f};
  const float bias[4] = {1, -2, 3, -4};
  const float weight[4] = {5, 5, 5, 5};
  ASSERT_EQ(api().layer_norm(constant, 1, 4, weight, bias, 0.0f, y), Status::kOk);
  for (int j = 0; j < 4; ++j) EXPECT_EQ(y[j], bias[j]);
  ASSERT_EQ(api().layer_norm(constant, 1, 4, weight, nullptr, 0.0f, y), Status::kOk);
  for (int j = 0; j < 4; ++j) EXPECT_EQ(y[j], 0.0f);
  ASSERT_EQ(api().layer_norm(constant, 1, 4, nullptr, bias, 1e-5f, y), Status::kOk);
  for (int j = 0; j < 4; ++j) EXPECT_EQ(y[j], bias[j]);
  // Constant rows of every width up to 70 and of values of every magnitude: the deviations are exactly 0, so with
  // eps = 0 the output is exactly the bias, and with eps > 0 too (0 times the gain, plus the bias).
  {
    Rng rng;
    std::vector<float> row(70), out(70), b(70), w(70);
    for (size_t cols = 1; cols <= 70; ++cols) {
      for (float magnitude : {1.0f, 0x1p-140f, 0x1p100f, 1e4f}) {
        const float value = rng.Uniform(-3.0f, 3.0f) * magnitude;
        for (size_t j = 0; j < cols; ++j)
          row[j] = value, b[j] = rng.Uniform(-2.0f, 2.0f), w[j] = rng.Uniform(-2.0f, 2.0f);
        for (float e : {0.0f, 1e-5f}) {
          ASSERT_EQ(api().layer_norm(row.data(), 1, cols, w.data(), b.data(), e, out.data()), Status::kOk);
          for (size_t j = 0; j < cols; ++j) {
            ASSERT_EQ(out[j], b[j]) << "cols " << cols << " value " << value << " eps " << e << " j " << j;
          }
        }
      }
    }
  }
  // inf or NaN anywhere in a row: the whole row is NaN; the other rows are unaffected.
  for (float bad : {kInf, -kInf, kNaN}) {
    float x[2][5] = {{1, 2, 3, 4, 5}, {1, 2, 3, 4, 5}};
    x[0][3] = bad;
    float out[2][5];
    ASSERT_EQ(api().rms_norm(&x[0][0], 2, 5, nullptr, 1e-5f, &out[0][0]), Status::kOk);
    for (int j = 0; j < 5; ++j) EXPECT_TRUE(std::isnan(out[0][j])) << bad;
    for (int j = 0; j < 5; ++j) EXPECT_TRUE(std::isfinite(out[1][j]));
    ASSERT_EQ(api().layer_norm(&x[0][0], 2, 5, nullptr, nullptr, 1e-5f, &out[0][0]), Status::kOk);
    for (int j = 0; j < 5; ++j) EXPECT_TRUE(std::isnan(out[0][j])) << bad;
    for (int j = 0; j < 5; ++j) EXPECT_TRUE(std::isfinite(out[1][j]));
  }
  // Finite values whose float sum overflows: the mean is summed again scaled.
  float big[4] = {3e38f, 3e38f, 3e38f, 2.9e38f};
  ASSERT_EQ(api().layer_norm(big, 1, 4, nullptr, nullptr, 0.0f, y), Status::kOk);
  for (int j = 0; j < 3; ++j) EXPECT_NEAR(y[j], 1.0f / std::sqrt(3.0f), 1e-5f);
  EXPECT_NEAR(y[3], -std::sqrt(3.0f), 1e-5f);
}

TEST_P(NormTest, InPlaceEqualsOutOfPlace) {
  Rng rng;
  std::vector<float> x = NormalRows(rng, 3 * 37, 1.0f, 3.0f), w = NormalRows(rng, 37, 0.0f, 1.0f),
                     b = NormalRows(rng, 37, 0.0f, 1.0f), y(x.size()), z = x;
  ASSERT_EQ(api().rms_norm(x.data(), 3, 37, w.data(), 1e-6f, y.data()), Status::kOk);
  ASSERT_EQ(api().rms_norm(z.data(), 3, 37, w.data(), 1e-6f, z.data()), Status::kOk);
  for (size_t i = 0; i < y.size(); ++i) EXPECT_EQ(Bits(y[i]), Bits(z[i]));
  z = x;
  ASSERT_EQ(api().layer_norm(x.data(), 3, 37, w.data(), b.data(), 1e-6f, y.data()), Status::kOk);
  ASSERT_EQ(api().layer_norm(z.data(), 3, 37, w.data(), b.data(), 1e-6f, z.data()), Status::kOk);
  for (size_t i = 0; i < y.size(); ++i) EXPECT_EQ(Bits(y[i]), Bits(z[i]));
}

TEST_P(NormTest, BadInputsLeaveOutputUntouched) {
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  float w[4] = {1, 1, 1, 1};
  float b[4] = {0, 0, 0, 0};
  float y[8];
  for (float& v : y) v = 7.0f;
  for (int layer = 0; layer < 2; ++layer) {
    const auto run = [&](const float* in, size_t rows, size_t cols, const float* weight, const float* bias, float eps,
                         float* out) {
      return layer != 0 ? api().layer_norm(in, rows, cols, weight, bias, eps, out)
                        : api().rms_norm(in, rows, cols, weight, eps, out);
    };
    EXPECT_EQ(run(nullptr, 2, 4, w, b, 1e-5f, y), Status::kNullPointer);
    EXPECT_EQ(run(x, 2, 4, w, b, 1e-5f, nullptr), Status::kNullPointer);
    EXPECT_EQ(run(nullptr, 0, 4, w, b, -1.0f, y), Status::kNullPointer);
    EXPECT_EQ(run(x, 0, 4, w, b, 1e-5f, y), Status::kInvalidShape);
    EXPECT_EQ(run(x, 2, 0, w, b, 1e-5f, y), Status::kInvalidShape);
    EXPECT_EQ(run(x, SIZE_MAX / 2, 4, w, b, 1e-5f, y), Status::kInvalidShape);
    EXPECT_EQ(run(x, 0, 4, w, b, kNaN, y), Status::kInvalidShape);
    for (float eps : {-1e-5f, -1e-30f, kInf, -kInf, kNaN}) {
      EXPECT_EQ(run(x, 2, 4, w, b, eps, y), Status::kInvalidArgument) << eps;
    }
    EXPECT_EQ(run(x, 2, 4, w, b, kNaN, x + 1), Status::kInvalidArgument);  // argument before overlap
    EXPECT_EQ(run(x, 2, 4, w, b, 1e-5f, x + 1), Status::kOverlap);
    EXPECT_EQ(run(x + 1, 1, 4, w, b, 1e-5f, x), Status::kOverlap);
    EXPECT_EQ(run(x, 1, 4, w, b, 1e-5f, w), Status::kOverlap);
    EXPECT_EQ(run(x, 1, 4, nullptr, b, 1e-5f, x + 4), Status::kOk);  // adjacent, not overlapping
    x[4] = 5, x[5] = 6, x[6] = 7, x[7] = 8;
    for (float v : y) EXPECT_EQ(v, 7.0f);
    for (int i = 0; i < 8; ++i) EXPECT_EQ(x[i], static_cast<float>(i + 1));
    EXPECT_EQ(w[0], 1.0f);
  }
  EXPECT_EQ(api().layer_norm(x, 1, 4, w, b, 1e-5f, b), Status::kOverlap);
  EXPECT_EQ(api().layer_norm(x, 1, 4, w, b + 2, 1e-5f, b), Status::kOverlap);
  EXPECT_EQ(b[0], 0.0f);
  // eps = 0 is valid.
  EXPECT_EQ(api().rms_norm(x, 2, 4, w, 0.0f, y), Status::kOk);
  EXPECT_EQ(api().layer_norm(x, 2, 4, w, b, 0.0f, y), Status::kOk);
}

}  // namespace
}  // namespace edgeattn_test
