// SPDX-License-Identifier: Apache-2.0
// Exp: <= 2 ULP where the result is normal, flush below FLT_MIN, exact special values; every path, tail,
// misalignment, in place.
#include "edgeattn/exp.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "tests/test_util.h"

namespace edgeattn_test {
namespace {

class ExpTest : public PathTest {};
EDGEATTN_INSTANTIATE_PATHS(ExpTest);

constexpr double kMaxUlp = 2.0;  // exp.h

// Checks one result against the contract; returns its ULP error (0 outside the normal range).
double CheckOne(float x, float got) {
  if (std::isnan(x)) {
    EXPECT_TRUE(std::isnan(got)) << "exp(NaN) = " << got;
    return 0;
  }
  const double exact = std::exp(static_cast<double>(x));
  const float rounded = static_cast<float>(exact);
  if (std::isinf(rounded)) {
    EXPECT_EQ(got, kInf) << "x=" << x;
    return 0;
  }
  if (rounded < FLT_MIN) {
    // May flush to +0; otherwise a non-negative value no larger than FLT_MIN.
    EXPECT_TRUE(got >= 0.0f && got <= FLT_MIN && !std::signbit(got)) << "x=" << x << " got " << got;
    return 0;
  }
  const double ulp = UlpError(got, exact);
  EXPECT_LE(ulp, kMaxUlp) << "x=" << x << " (" << std::hexfloat << x << std::defaultfloat << ") got " << got
                          << " exact " << exact;
  return ulp;
}

TEST_P(ExpTest, EveryLengthMisalignmentAndInPlace) {
  Rng rng;
  for (size_t n = 0; n <= kMaxTailTestLength; ++n) {
    for (size_t m = 0; m < 4; ++m) {
      GuardedBuffer in(n, m), out(n, (m + 1) % 4);
      for (size_t i = 0; i < n; ++i) in[i] = rng.Uniform(-104.0f, 89.0f);
      ASSERT_EQ(api().exp(in.data(), out.data(), n), Status::kOk);
      for (size_t i = 0; i < n; ++i) CheckOne(in[i], out[i]);
      EXPECT_TRUE(in.GuardsIntact() && out.GuardsIntact()) << "n=" << n;
      // In place gives the same bits.
      const std::vector<uint32_t> expected = out.Bits();
      ASSERT_EQ(api().exp(in.data(), in.data(), n), Status::kOk);
      EXPECT_EQ(in.Bits(), expected);
      EXPECT_TRUE(in.GuardsIntact());
    }
  }
}

// Inputs in [-87, 43] only: vectors whose lanes are all in that range take the SIMD loop's fast path
// (ExpRr2P6InRange), which the mixed inputs above reach only now and then.
TEST_P(ExpTest, FastRangeEveryLength) {
  Rng rng;
  double max_ulp = 0;
  for (size_t n = 0; n <= kMaxTailTestLength; ++n) {
    GuardedBuffer in(n, n % 4), out(n, (n + 1) % 4);
    for (size_t i = 0; i < n; ++i) in[i] = rng.Uniform(-87.0f, 43.0f);
    if (n > 2) in[0] = -87.0f, in[1] = 43.0f;  // the ends of the fast range
    ASSERT_EQ(api().exp(in.data(), out.data(), n), Status::kOk);
    for (size_t i = 0; i < n; ++i) max_ulp = std::max(max_ulp, CheckOne(in[i], out[i]));
    EXPECT_TRUE(in.GuardsIntact() && out.GuardsIntact()) << "n=" << n;
  }
  EXPECT_LE(max_ulp, kMaxUlp);
}

// Every 4099th float bit pattern (a prime stride: all exponents and mantissa residues), about a million inputs,
// streamed in chunks so that it fits the few MB of a Cortex-M board.
TEST_P(ExpTest, StridedSweepOfAllFloats) {
  constexpr uint64_t kStride = 4099, kChunk = 1 << 16;
  std::vector<float> in(kChunk), out(kChunk);
  double max_ulp = 0;
  uint64_t count = 0;
  for (uint64_t u = 0; u < (uint64_t{1} << 32);) {
    size_t n = 0;
    for (; n < kChunk && u < (uint64_t{1} << 32); ++n, u += kStride) {
      const uint32_t bits = static_cast<uint32_t>(u);
      std::memcpy(&in[n], &bits, sizeof(float));
    }
    ASSERT_EQ(api().exp(in.data(), out.data(), n), Status::kOk);
    for (size_t i = 0; i < n; ++i) max_ulp = std::max(max_ulp, CheckOne(in[i], out[i]));
    count += n;
  }
  RecordProperty("max_ulp", std::to_string(max_ulp));
  std::printf("%s: max ULP error over %s strided inputs: %.3f\n", TargetName(GetParam()), std::to_string(count).c_str(),
              max_ulp);
}

TEST_P(ExpTest, SpecialValues) {
  const float in[] = {-kInf,   kInf,       kNaN,    -kNaN,   0.0f,   -0.0f,    88.72283f, 88.72284f, 89.0f, 1e30f,
                      FLT_MAX, -87.33654f, -104.0f, -150.0f, -1e30f, -FLT_MAX, FLT_MIN,   -FLT_MIN,  1e-45f};
  constexpr size_t n = sizeof(in) / sizeof(in[0]);
  float out[n];
  ASSERT_EQ(api().exp(in, out, n), Status::kOk);
  EXPECT_EQ(Bits(out[0]), Bits(0.0f)) << "exp(-inf) must be +0 exactly";
  EXPECT_EQ(out[1], kInf);
  EXPECT_TRUE(std::isnan(out[2]) && std::isnan(out[3])) << "NaN in must give NaN out";
  EXPECT_EQ(out[4], 1.0f);
  EXPECT_EQ(out[5], 1.0f);
  EXPECT_TRUE(std::isfinite(out[6])) << "exp(88.72283) is just below FLT_MAX";
  for (size_t i = 7; i <= 10; ++i) EXPECT_EQ(out[i], kInf) << in[i];
  for (size_t i = 12; i <= 15; ++i) EXPECT_EQ(Bits(out[i]), Bits(0.0f)) << in[i];  // e^-104 < 2^-150
  for (size_t i = 0; i < n; ++i) CheckOne(in[i], out[i]);
}

TEST_P(ExpTest, PartialOverlapIsRefusedAndOutputUntouched) {
  float buf[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(api().exp(buf, buf + 1, 4), Status::kOverlap);
  EXPECT_EQ(api().exp(buf + 3, buf, 4), Status::kOverlap);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(buf[i], static_cast<float>(i));
}

TEST_P(ExpTest, ByteCountOverflowIsInvalidShapeAndNothingTouched) {
  // n * 4 wraps to 4 bytes (on 32- and 64-bit size_t alike): buf and buf + 1 would look disjoint and the
  // kernel would write far past buf. The count is refused before anything is read or written.
  float buf[4] = {0, 1, 2, 3};
  const size_t n = SIZE_MAX / 2 + 2;
  EXPECT_EQ(api().exp(buf, buf + 1, n), Status::kInvalidShape);
  EXPECT_EQ(api().exp(buf, buf, n), Status::kInvalidShape);
  EXPECT_EQ(api().exp(buf, buf, SIZE_MAX / 4 + 1), Status::kInvalidShape);  // first n that overflows
  for (int i = 0; i < 4; ++i) EXPECT_EQ(buf[i], static_cast<float>(i));
}

TEST_P(ExpTest, NullPointersAreRefused) {
  float x = 1.0f;
  EXPECT_EQ(api().exp(nullptr, &x, 1), Status::kNullPointer);
  EXPECT_EQ(api().exp(&x, nullptr, 1), Status::kNullPointer);
  EXPECT_EQ(x, 1.0f);
  // n = 0 reads and writes nothing: null arrays (an empty std::vector's data()) are fine.
  EXPECT_EQ(api().exp(nullptr, nullptr, 0), Status::kOk);
}

TEST_P(ExpTest, ZeroLengthIsValid) {
  float x = 5.0f;
  EXPECT_EQ(api().exp(&x, &x, 0), Status::kOk);
  EXPECT_EQ(x, 5.0f);
}

}  // namespace
}  // namespace edgeattn_test
