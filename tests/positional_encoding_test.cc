// SPDX-License-Identifier: Apache-2.0
// Positional encoding: the documented bound against a long-double reference on every path, for every width
// up to 3 vectors + 1 (odd ones too) and positions up to the limit; the paper's formula, not seed 002's.
#include "edgeattn/positional_encoding.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/test_util.h"

namespace edgeattn_test {
namespace {

class PositionalEncodingTest : public PathTest {};
EDGEATTN_INSTANTIATE_PATHS(PositionalEncodingTest);

// PE(p, j) from the definition, in long double (64-bit mantissa on x86, 113 on AArch64).
long double RefPe(size_t p, size_t j, size_t d) {
  const long double pair = static_cast<long double>(j / 2);
  const long double angle = static_cast<long double>(p) / powl(10000.0L, 2.0L * pair / static_cast<long double>(d));
  return j % 2 == 0 ? sinl(angle) : cosl(angle);
}

void CheckPe(const Api& api, Rng& rng, size_t seq, size_t d, size_t first, size_t misalign) {
  GuardedBuffer x(seq * d, misalign);
  for (size_t i = 0; i < x.size(); ++i) x[i] = rng.Normal();
  const std::vector<float> before(x.data(), x.data() + x.size());
  ASSERT_EQ(api.add_positional_encoding(x.data(), seq, d, first), Status::kOk);
  for (size_t r = 0; r < seq; ++r) {
    for (size_t j = 0; j < d; ++j) {
      const long double exact = before[r * d + j] + RefPe(first + r, j, d);
      const float got = x[r * d + j];
      // positional_encoding.h: 1 ULP of the result + (p + 1) * 2^-46, and 0.5 ULP to nearest (this test's mode;
      // fp_env_test.cc checks the directed modes against the 1 ULP).
      const double bound = 0.5 * UlpOf(static_cast<double>(got)) + std::ldexp(static_cast<double>(first + r + 1), -46);
      ASSERT_LE(std::fabs(static_cast<double>(got - exact)), bound)
          << "d=" << d << " position " << first + r << " column " << j;
    }
  }
  EXPECT_TRUE(x.GuardsIntact());
}

TEST_P(PositionalEncodingTest, EveryWidthIncludingOdd) {
  Rng rng;
  for (size_t d = 1; d <= kMaxTailTestLength; ++d) CheckPe(api(), rng, 1 + d % 5, d, d * 7, d % 4);
}

TEST_P(PositionalEncodingTest, LargePositionsUpToTheLimit) {
  Rng rng;
  CheckPe(api(), rng, 3, 64, 100000, 1);
  CheckPe(api(), rng, 2, 33, 1234567, 2);
  CheckPe(api(), rng, 4, 128, edgeattn::kMaxPositions - 4, 0);
}

// Vaswani et al.: PE(p, 2i) = sin(p / 10000^(2i/d)) with i the pair index. For d = 4, position 1: angles 1 and
// 1/100. Seed 002's notebook uses the column index (2i) in the exponent, so it prints 6.0001 = 6 + sin(1e-4)
// for its third column; the paper (and this library) give 6 + sin(0.01).
TEST_P(PositionalEncodingTest, PaperFormulaNotSeed002Defect) {
  float x[4] = {2, 4, 6, 8};  // seed 002's first embedding [1, 2, 3, 4] scaled by sqrt(d_model) = 2
  ASSERT_EQ(api().add_positional_encoding(x, 1, 4, 1), Status::kOk);
  EXPECT_EQ(x[0], static_cast<float>(2.0 + std::sin(1.0)));
  EXPECT_EQ(x[1], static_cast<float>(4.0 + std::cos(1.0)));
  EXPECT_EQ(x[2], static_cast<float>(6.0 + std::sin(0.01)));
  EXPECT_EQ(x[3], static_cast<float>(8.0 + std::cos(0.01)));
  EXPECT_GT(std::fabs(x[2] - 6.0001f), 5e-3f) << "reproduces seed 002's exponent defect";
}

TEST_P(PositionalEncodingTest, PositionZeroIsSinZeroCosOne) {
  float x[5] = {0, 0, 0, 0, 0};
  ASSERT_EQ(api().add_positional_encoding(x, 1, 5, 0), Status::kOk);
  const float expected[5] = {0, 1, 0, 1, 0};
  for (int j = 0; j < 5; ++j) EXPECT_EQ(x[j], expected[j]);
}

TEST_P(PositionalEncodingTest, BadInputsLeaveXUntouched) {
  float x[6] = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(api().add_positional_encoding(nullptr, 2, 3, 0), Status::kNullPointer);
  EXPECT_EQ(api().add_positional_encoding(x, 0, 3, 0), Status::kInvalidShape);
  EXPECT_EQ(api().add_positional_encoding(x, 2, 0, 0), Status::kInvalidShape);
  EXPECT_EQ(api().add_positional_encoding(x, 2, SIZE_MAX / 2, 0), Status::kInvalidShape);
  EXPECT_EQ(api().add_positional_encoding(x, 2, 3, edgeattn::kMaxPositions - 1), Status::kInvalidArgument);
  EXPECT_EQ(api().add_positional_encoding(x, 2, 3, SIZE_MAX), Status::kInvalidArgument);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(x[i], static_cast<float>(i + 1));
  EXPECT_EQ(api().add_positional_encoding(x, 2, 3, edgeattn::kMaxPositions - 2), Status::kOk);
}

}  // namespace
}  // namespace edgeattn_test
