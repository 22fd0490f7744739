// SPDX-License-Identifier: Apache-2.0
// Softmax: the documented per-element bound and row-sum bound against a double reference on every path, for
// every row length up to 3 vectors + 1 and longer rows, many logit distributions; then each special value.
#include "edgeattn/softmax.h"

#include <gtest/gtest.h>
#include <stdint.h>

#include <cfloat>
#include <cmath>
#include <functional>

#include "tests/reference.h"
#include "tests/test_util.h"

namespace edgeattn_test {
namespace {

class SoftmaxTest : public PathTest {};
EDGEATTN_INSTANTIATE_PATHS(SoftmaxTest);

constexpr double kMaxUlp = 4.0;              // softmax.h
constexpr double kMaxRowSumError = 0x1p-21;  // softmax.h

// Checks out[rows][cols] against the reference; returns the largest ULP error seen.
double CheckRows(const float* in, const float* out, size_t rows, size_t cols, const char* what) {
  double max_ulp = 0;
  for (size_t r = 0; r < rows; ++r) {
    const std::vector<double> ref = RefSoftmaxRow(in + r * cols, cols);
    double sum = 0;
    bool nan_row = false;
    for (size_t j = 0; j < cols; ++j) {
      const float got = out[r * cols + j];
      const double exact = ref[j];
      if (std::isnan(exact)) {
        nan_row = true;
        EXPECT_TRUE(std::isnan(got)) << what << " row " << r << " col " << j;
        continue;
      }
      sum += got;
      if (exact >= FLT_MIN) {
        const double ulp = UlpError(got, exact);
        max_ulp = std::max(max_ulp, ulp);
        EXPECT_LE(ulp, kMaxUlp) << what << " cols=" << cols << " [" << r << "][" << j << "] in=" << in[r * cols + j]
                                << " got " << got << " exact " << exact;
      } else {
        EXPECT_LE(std::fabs(got - exact), FLT_MIN) << what << " [" << r << "][" << j << "]";
        EXPECT_FALSE(std::signbit(got));
      }
    }
    const bool all_zero_row = !nan_row && std::all_of(ref.begin(), ref.end(), [](double p) { return p == 0; });
    if (!nan_row && !all_zero_row) EXPECT_LE(std::fabs(sum - 1.0), kMaxRowSumError) << what << " row " << r;
  }
  return max_ulp;
}

struct Distribution {
  const char* name;
  std::function<float(Rng&)> draw;
};

std::vector<Distribution> Distributions() {
  return {
      {"normal(1)", [](Rng& r) { return r.Normal(1.0f); }},
      {"normal(10)", [](Rng& r) { return r.Normal(10.0f); }},
      {"normal(100)", [](Rng& r) { return r.Normal(100.0f); }},
      {"uniform(+-1e4)", [](Rng& r) { return r.Uniform(-1e4f, 1e4f); }},
      {"1e4 + normal(3)", [](Rng& r) { return 1e4f + r.Normal(3.0f); }},
      {"cauchy(5)", [](Rng& r) { return r.Cauchy(5.0f); }},
      {"normal(3) with 30% -inf", [](Rng& r) { return r.Bernoulli(0.3) ? -kInf : r.Normal(3.0f); }},
      {"tiny normal(1e-30)", [](Rng& r) { return r.Normal(1e-30f); }},
  };
}

// Every length up to one past the longest row held in registers (eight AVX-512 vectors, softmax-inl.h), so that every
// register row and every tail of it runs.
constexpr size_t kLongestRegisterRow = 8 * 16;

TEST_P(SoftmaxTest, EveryRowLengthMisalignmentAndDistribution) {
  Rng rng;
  double max_ulp = 0;
  for (const Distribution& dist : Distributions()) {
    for (size_t cols = 1; cols <= kLongestRegisterRow + 1; ++cols) {
      const size_t rows = 1 + cols % 3;
      const size_t misalign = cols % 4;
      GuardedBuffer in(rows * cols, misalign), out(rows * cols, (misalign + 2) % 4);
      for (size_t i = 0; i < rows * cols; ++i) in[i] = dist.draw(rng);
      ASSERT_EQ(api().softmax(in.data(), out.data(), rows, cols), Status::kOk);
      max_ulp = std::max(max_ulp, CheckRows(in.data(), out.data(), rows, cols, dist.name));
      EXPECT_TRUE(in.GuardsIntact() && out.GuardsIntact()) << dist.name << " cols=" << cols;
      // In place: the same bits.
      const std::vector<uint32_t> expected = out.Bits();
      ASSERT_EQ(api().softmax(in.data(), in.data(), rows, cols), Status::kOk);
      EXPECT_EQ(in.Bits(), expected) << dist.name << " cols=" << cols;
    }
  }
  RecordProperty("max_ulp", std::to_string(max_ulp));
}

TEST_P(SoftmaxTest, ManyRandomRows) {
  Rng rng;
  double max_ulp = 0;
  size_t rows_tested = 0;
  for (const Distribution& dist : Distributions()) {
    for (size_t cols : {16, 64, 256, 1000, 4099}) {
      const size_t rows = 20000 / cols + 1;
      std::vector<float> in(rows * cols), out(rows * cols);
      for (float& x : in) x = dist.draw(rng);
      ASSERT_EQ(api().softmax(in.data(), out.data(), rows, cols), Status::kOk);
      max_ulp = std::max(max_ulp, CheckRows(in.data(), out.data(), rows, cols, dist.name));
      rows_tested += rows;
    }
  }
  std::printf("%s: max softmax ULP error over %s rows: %.3f\n", TargetName(GetParam()),
              std::to_string(rows_tested).c_str(), max_ulp);
  RecordProperty("max_ulp", std::to_string(max_ulp));
}

void ExpectRow(const float* got, std::initializer_list<float> expected, const char* what) {
  size_t j = 0;
  for (float e : expected) {
    if (std::isnan(e)) {
      EXPECT_TRUE(std::isnan(got[j])) << what << " col " << j;
    } else {
      EXPECT_EQ(Bits(got[j]), Bits(e)) << what << " col " << j << ": " << got[j] << " vs " << e;
    }
    ++j;
  }
}

TEST_P(SoftmaxTest, AllMinusInfinityRowGivesZerosNotNaN) {
  const float in[5] = {-kInf, -kInf, -kInf, -kInf, -kInf};
  float out[5];
  ASSERT_EQ(api().softmax(in, out, 1, 5), Status::kOk);
  ExpectRow(out, {0, 0, 0, 0, 0}, "all -inf");
}

TEST_P(SoftmaxTest, SingleFiniteAmongMinusInfinityIsExactlyOne) {
  const float in[6] = {-kInf, -kInf, 3.5f, -kInf, -kInf, -kInf};
  float out[6];
  ASSERT_EQ(api().softmax(in, out, 1, 6), Status::kOk);
  ExpectRow(out, {0, 0, 1, 0, 0, 0}, "single finite");
}

TEST_P(SoftmaxTest, PlusInfinityTakesTheWholeRow) {
  const float in[2][4] = {{1.0f, kInf, -kInf, 1e30f}, {kInf, 0.0f, kInf, -3.0f}};
  float out[2][4];
  ASSERT_EQ(api().softmax(&in[0][0], &out[0][0], 2, 4), Status::kOk);
  ExpectRow(out[0], {0, 1, 0, 0}, "one +inf");
  ExpectRow(out[1], {0.5f, 0, 0.5f, 0}, "two +inf");
}

TEST_P(SoftmaxTest, NaNPoisonsOnlyItsRow) {
  float in[4][5] = {{1, 2, 3, 4, 5}, {1, kNaN, 3, 4, 5}, {-kInf, kNaN, -kInf, -kInf, -kInf}, {kInf, 0, 0, kNaN, 1}};
  float out[4][5];
  ASSERT_EQ(api().softmax(&in[0][0], &out[0][0], 4, 5), Status::kOk);
  for (int r = 1; r < 4; ++r) ExpectRow(out[r], {kNaN, kNaN, kNaN, kNaN, kNaN}, "NaN row");
  float alone[5];
  ASSERT_EQ(api().softmax(in[0], alone, 1, 5), Status::kOk);
  for (int j = 0; j < 5; ++j) EXPECT_EQ(Bits(out[0][j]), Bits(alone[j])) << "the NaN rows changed row 0";
}

// Rows of two vectors or more whose max is positive and whose other values sit near it, except -500 (far below
// the exp's flush threshold) and, `stride` floats later, a NaN. Where stride is twice the path's vector (or, in a
// row held in registers, the vector), the NaN shares the -500's lane in the max pass's accumulators, and x86's min
// (which returns its second operand when one is NaN) then loses the -500: the row looks as if it takes the short
// exp. Whichever exp its vectors take, the NaN must reach every output of its row and no other row.
TEST_P(SoftmaxTest, NaNPoisonsOnlyItsLongRow) {
  Rng rng;
  for (size_t cols : {20, 33, 64, 100, 128, 257, 1000, 4099}) {  // rows of 20 to 128 floats: the register rows
    for (size_t stride : {4, 8, 16, 32, 64, 128}) {
      if (5 + 3 * stride > cols) continue;
      std::vector<float> in(3 * cols), out(3 * cols), alone(cols);
      for (float& x : in) x = rng.Uniform(1.0f, 4.0f);
      float* nan_row = in.data() + cols;
      nan_row[5] = -500.0f;
      nan_row[5 + stride] = kNaN;
      ASSERT_EQ(api().softmax(in.data(), out.data(), 3, cols), Status::kOk);
      size_t not_nan = 0;
      for (size_t j = 0; j < cols; ++j) not_nan += std::isnan(out[cols + j]) ? 0 : 1;
      EXPECT_EQ(not_nan, 0u) << "cols " << cols << ", NaN " << stride << " after the -500";
      for (size_t r : {size_t{0}, size_t{2}}) {
        ASSERT_EQ(api().softmax(in.data() + r * cols, alone.data(), 1, cols), Status::kOk);
        for (size_t j = 0; j < cols; ++j)
          ASSERT_EQ(Bits(out[r * cols + j]), Bits(alone[j])) << "the NaN row changed row " << r << ", cols " << cols;
      }
    }
  }
}

TEST_P(SoftmaxTest, HugeLogitsGiveTheExactOneHotAnswer) {
  // Seed 002's scores are ~1e4 apart; a row-wise max-subtracted softmax is one-hot on the largest.
  const float in[3][3] = {{1e4f, 5e3f, -1e4f}, {-1e4f, -2e4f, -9e3f}, {FLT_MAX, -FLT_MAX, FLT_MAX}};
  float out[3][3];
  ASSERT_EQ(api().softmax(&in[0][0], &out[0][0], 3, 3), Status::kOk);
  ExpectRow(out[0], {1, 0, 0}, "+-1e4");
  ExpectRow(out[1], {0, 0, 1}, "-1e4");
  ExpectRow(out[2], {0.5f, 0, 0.5f}, "+-FLT_MAX");
}

// The vector paths give rows whose every x has an exponent at most the max m's (m > 0) and x - m at or above the exp's
// flush threshold a shorter exp (Fast2Sum for x - m's rounding error, no flush). Rows on each side of both edges, with
// x - m rounded in most lanes (a dropped or wrong error term is up to 8 ULP off here), each against the reference.
TEST_P(SoftmaxTest, RowsAtTheEdgesOfTheShortExp) {
  Rng rng;
  const float m = std::nextafter(16.0f, 0.0f);  // exponent 3: x may reach -m's next power of two, exclusive
  const float threshold = -87.3365478515625f;   // the exp's kShiftedMinArg
  struct Case {
    const char* what;
    float low, max, least;  // x uniform in [low, max), then x[1] = least and x[2] = max
  };
  const Case cases[] = {
      {"x_min just inside 16", -15.9f, m, -m},
      {"x_min at -16 (a larger exponent)", -15.9f, m, -16.0f},
      {"x_min - m at the flush threshold", -15.9f, 10.0f, 10.0f + threshold},
      {"x_min - m below the flush threshold", -15.9f, 10.0f, std::nextafter(10.0f + threshold, -kInf)},
      {"x_min - m far below it, one exponent", -15.9f, 100.0f, -120.0f},
      {"m <= 0", -60.0f, -3.5f, -60.0f},
      {"m subnormal", -1e-39f, 1e-40f, -1e-39f},
  };
  for (const Case& c : cases) {
    for (size_t cols : {32, 33, 64, 100, 1000, 4099}) {
      std::vector<float> in(cols), out(cols);
      for (float& x : in) x = c.low + (c.max - c.low) * rng.Uniform(0.0f, 0.999f);
      in[1] = c.least;
      in[2] = c.max;
      ASSERT_EQ(api().softmax(in.data(), out.data(), 1, cols), Status::kOk);
      CheckRows(in.data(), out.data(), 1, cols, c.what);
    }
  }
}

TEST_P(SoftmaxTest, DenormalInputs) {
  const float in[4] = {1e-45f, 0.0f, -1e-40f, 1e-38f};
  float out[4];
  ASSERT_EQ(api().softmax(in, out, 1, 4), Status::kOk);
  CheckRows(in, out, 1, 4, "denormals");
  for (float o : out) EXPECT_EQ(o, 0.25f);  // all within 1e-38 of 0: e^x rounds to exactly 1
}

TEST_P(SoftmaxTest, SingleColumn) {
  const float in[4] = {-3.0f, kInf, -kInf, kNaN};
  float out[4];
  ASSERT_EQ(api().softmax(in, out, 4, 1), Status::kOk);
  ExpectRow(out, {1, 1, 0, kNaN}, "n = 1");
}

TEST_P(SoftmaxTest, InvalidShapesNullsAndOverlapLeaveOutputUntouched) {
  float in[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  float out[8] = {9, 9, 9, 9, 9, 9, 9, 9};
  EXPECT_EQ(api().softmax(nullptr, out, 2, 4), Status::kNullPointer);
  EXPECT_EQ(api().softmax(in, nullptr, 2, 4), Status::kNullPointer);
  EXPECT_EQ(api().softmax(in, out, 0, 4), Status::kInvalidShape);
  EXPECT_EQ(api().softmax(in, out, 2, 0), Status::kInvalidShape);
  EXPECT_EQ(api().softmax(in, out, SIZE_MAX / 2, 4), Status::kInvalidShape);
  EXPECT_EQ(api().softmax(in, out, 4, SIZE_MAX / 8), Status::kInvalidShape);
  for (float o : out) EXPECT_EQ(o, 9.0f);
  EXPECT_EQ(api().softmax(in, in + 1, 1, 4), Status::kOverlap);
  EXPECT_EQ(api().softmax(in + 2, in, 1, 4), Status::kOverlap);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(in[i], static_cast<float>(i + 1));
}

}  // namespace
}  // namespace edgeattn_test
