// SPDX-License-Identifier: Apache-2.0
// Dot product: the documented bound against a double reference on every path, length, tail and misalignment.
#include "edgeattn/dot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "tests/test_util.h"

namespace edgeattn_test {
namespace {

class DotTest : public PathTest {};
EDGEATTN_INSTANTIATE_PATHS(DotTest);

// gamma(n) * sum |a b| + n * 2^-149 (dot.h).
double DotBound(const float* a, const float* b, size_t n) {
  double abs_sum = 0;
  for (size_t i = 0; i < n; ++i) abs_sum += std::fabs(static_cast<double>(a[i]) * b[i]);
  const double nu = static_cast<double>(n) * kU;
  return nu / (1 - nu) * abs_sum + static_cast<double>(n) * 0x1p-149;
}

void CheckDot(const Api& api, Rng& rng, size_t n, size_t misalign_a, size_t misalign_b) {
  GuardedBuffer a(n, misalign_a), b(n, misalign_b);
  for (size_t i = 0; i < n; ++i) {
    a[i] = rng.Normal();
    b[i] = rng.Normal();
  }
  float result = kNaN;
  ASSERT_EQ(api.dot(a.data(), b.data(), n, &result), Status::kOk);
  double exact = 0;
  for (size_t i = 0; i < n; ++i) exact += static_cast<double>(a[i]) * b[i];
  EXPECT_LE(std::fabs(result - exact), DotBound(a.data(), b.data(), n))
      << "n=" << n << " misalign " << misalign_a << "/" << misalign_b;
  EXPECT_TRUE(a.GuardsIntact() && b.GuardsIntact());
}

TEST_P(DotTest, EveryLengthAndMisalignment) {
  Rng rng;
  for (size_t n = 0; n <= kMaxTailTestLength; ++n) {
    for (size_t m = 0; m < 4; ++m) CheckDot(api(), rng, n, m, (m * 3 + 1) % 4);
  }
}

TEST_P(DotTest, LongVectors) {
  Rng rng;
  for (size_t n : {255, 1000, 4099, 65537}) CheckDot(api(), rng, n, n % 3, 1);
}

// At n = 65537 the bound of LongVectors is about 0.4% of sum |a b|, which for random data is close to the result
// itself. Integers in [-15, 15] make every product exact and keep every partial sum, in any order and any number
// of accumulators, an integer below 225 * 65537 < 2^24: the result must equal the exact sum, at every length.
TEST_P(DotTest, LongVectorsExactSmallIntegers) {
  Rng rng;
  for (size_t n : {255, 1000, 4099, 65537}) {
    GuardedBuffer a(n, n % 4), b(n, (n + 1) % 4);
    double exact = 0;
    for (size_t i = 0; i < n; ++i) {
      a[i] = static_cast<float>(static_cast<int>(rng.Index(31)) - 15);
      b[i] = static_cast<float>(static_cast<int>(rng.Index(31)) - 15);
      exact += static_cast<double>(a[i]) * b[i];
    }
    float result = kNaN;
    ASSERT_EQ(api().dot(a.data(), b.data(), n, &result), Status::kOk);
    EXPECT_EQ(static_cast<double>(result), exact) << "n=" << n;
    EXPECT_TRUE(a.GuardsIntact() && b.GuardsIntact());
  }
}

TEST_P(DotTest, ZeroLengthGivesZero) {
  const float a = 1.0f, b = 2.0f;
  float result = kNaN;
  ASSERT_EQ(api().dot(&a, &b, 0, &result), Status::kOk);
  EXPECT_EQ(Bits(result), Bits(0.0f));
}

TEST_P(DotTest, ExactSmallIntegers) {
  // Small integers: every product and partial sum is exact, so the result must be too.
  float a[37], b[37];
  double exact = 0;
  for (int i = 0; i < 37; ++i) {
    a[i] = static_cast<float>(i - 18);
    b[i] = static_cast<float>((i * 7) % 11 - 5);
    exact += static_cast<double>(a[i]) * b[i];
  }
  float result = 0;
  ASSERT_EQ(api().dot(a, b, 37, &result), Status::kOk);
  EXPECT_EQ(result, exact);
}

TEST_P(DotTest, NullPointerLeavesResultUntouched) {
  const float a[3] = {1, 2, 3};
  float result = 42.0f;
  EXPECT_EQ(api().dot(nullptr, a, 3, &result), Status::kNullPointer);
  EXPECT_EQ(api().dot(a, nullptr, 3, &result), Status::kNullPointer);
  EXPECT_EQ(api().dot(a, a, 3, nullptr), Status::kNullPointer);
  EXPECT_EQ(api().dot(a, a, 0, nullptr), Status::kNullPointer);
  EXPECT_EQ(result, 42.0f);
  // n = 0 reads no array: null arrays (an empty std::vector's data()) are fine, the result is 0.
  EXPECT_EQ(api().dot(nullptr, nullptr, 0, &result), Status::kOk);
  EXPECT_EQ(result, 0.0f);
}

TEST_P(DotTest, ResultOverlappingAnInputIsRefused) {
  float a[4] = {1, 2, 3, 4};
  const float b[4] = {1, 1, 1, 1};
  EXPECT_EQ(api().dot(a, b, 4, &a[2]), Status::kOverlap);
  EXPECT_EQ(a[2], 3.0f);
  float c[4] = {1, 1, 1, 1};
  EXPECT_EQ(api().dot(b, c, 4, &c[3]), Status::kOverlap);
  EXPECT_EQ(c[3], 1.0f);
}

TEST_P(DotTest, ByteCountOverflowIsInvalidShapeAndNothingRead) {
  // n * 4 wraps to 4 bytes (on 32- and 64-bit size_t alike): a wrapped count would make a look one float long,
  // so &a[1] would pass the overlap check and the kernel would read far past a. The count is refused first.
  float a[2] = {1, 2};
  const float b[2] = {3, 4};
  const size_t n = SIZE_MAX / 2 + 2;
  EXPECT_EQ(api().dot(a, b, n, &a[1]), Status::kInvalidShape);
  EXPECT_EQ(a[1], 2.0f);
  float result = 42.0f;
  EXPECT_EQ(api().dot(a, b, n, &result), Status::kInvalidShape);
  EXPECT_EQ(result, 42.0f);
  EXPECT_EQ(api().dot(a, b, SIZE_MAX / 4 + 1, &result), Status::kInvalidShape);  // first n that overflows
  EXPECT_EQ(result, 42.0f);
}

}  // namespace
}  // namespace edgeattn_test
