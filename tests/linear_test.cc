// SPDX-License-Identifier: Apache-2.0
// Linear projection: the documented bound on every path, for output widths covering every tail, with and
// without bias, misaligned; bad inputs leave y untouched.
#include "edgeattn/linear.h"

#include <gtest/gtest.h>
#include <stdint.h>

#include <cmath>
#include <vector>

#include "hwy/targets.h"
#include "tests/test_util.h"

namespace edgeattn_test {
namespace {

class LinearTest : public PathTest {};
EDGEATTN_INSTANTIATE_PATHS(LinearTest);

void CheckLinear(const Api& api, Rng& rng, size_t rows, size_t in, size_t out, bool with_bias, size_t misalign) {
  GuardedBuffer x(rows * in, misalign), w(in * out, (misalign + 1) % 4), b(out, (misalign + 2) % 4),
      y(rows * out, (misalign + 3) % 4);
  for (size_t i = 0; i < x.size(); ++i) x[i] = rng.Normal();
  for (size_t i = 0; i < w.size(); ++i) w[i] = rng.Normal();
  for (size_t i = 0; i < b.size(); ++i) b[i] = rng.Normal();
  y.Fill(kNaN);
  ASSERT_EQ(api.linear(x.data(), rows, in, w.data(), with_bias ? b.data() : nullptr, out, y.data()), Status::kOk);
  const double nu = static_cast<double>(in + 1) * kU;
  for (size_t r = 0; r < rows; ++r) {
    for (size_t o = 0; o < out; ++o) {
      double exact = with_bias ? b[o] : 0.0;
      double magnitude = with_bias ? std::fabs(b[o]) : 0.0;
      for (size_t i = 0; i < in; ++i) {
        exact += static_cast<double>(x[r * in + i]) * w[i * out + o];
        magnitude += std::fabs(static_cast<double>(x[r * in + i]) * w[i * out + o]);
      }
      ASSERT_LE(std::fabs(y[r * out + o] - exact), nu / (1 - nu) * magnitude + static_cast<double>(in + 1) * 0x1p-149)
          << "rows=" << rows << " in=" << in << " out=" << out << " at [" << r << "][" << o << "]";
    }
  }
  EXPECT_TRUE(x.GuardsIntact() && w.GuardsIntact() && b.GuardsIntact() && y.GuardsIntact());
}

TEST_P(LinearTest, EveryOutputWidthWithAndWithoutBias) {
  Rng rng;
  for (size_t out = 1; out <= kMaxTailTestLength; ++out) {
    // 1 to 9 rows: the four-row blocks with 0 to 3 rows left over, and every column tail after them.
    for (bool bias : {false, true}) CheckLinear(api(), rng, 1 + out % 9, 1 + (out * 5) % 19, out, bias, out % 4);
  }
}

TEST_P(LinearTest, ModelSizedProjection) {
  Rng rng;
  CheckLinear(api(), rng, 7, 256, 192, true, 1);
  CheckLinear(api(), rng, 2, 1000, 65, false, 3);
}

TEST_P(LinearTest, SmallIntegersAreExact) {
  // Seed 003: one-hot words times integer weights; every sum is a small integer, so exact.
  const float words[4][3] = {{1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {0, 0, 1}};
  const float w_q[3][3] = {{2, 0, 2}, {2, 0, 0}, {2, 1, 2}};
  const float expected[4][3] = {{2, 0, 2}, {2, 0, 0}, {4, 0, 2}, {2, 1, 2}};
  float y[4][3];
  ASSERT_EQ(api().linear(&words[0][0], 4, 3, &w_q[0][0], nullptr, 3, &y[0][0]), Status::kOk);
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 3; ++c) EXPECT_EQ(y[r][c], expected[r][c]);
  }
}

TEST_P(LinearTest, BadInputsLeaveOutputUntouched) {
  float x[6] = {1, 2, 3, 4, 5, 6};
  float w[6] = {1, 0, 0, 1, 1, 1};
  float b[2] = {0.5f, -0.5f};
  float y[4] = {7, 7, 7, 7};
  EXPECT_EQ(api().linear(nullptr, 2, 3, w, b, 2, y), Status::kNullPointer);
  EXPECT_EQ(api().linear(x, 2, 3, nullptr, b, 2, y), Status::kNullPointer);
  EXPECT_EQ(api().linear(x, 2, 3, w, b, 2, nullptr), Status::kNullPointer);
  EXPECT_EQ(api().linear(x, 0, 3, w, b, 2, y), Status::kInvalidShape);
  EXPECT_EQ(api().linear(x, 2, 0, w, b, 2, y), Status::kInvalidShape);
  EXPECT_EQ(api().linear(x, 2, 3, w, b, 0, y), Status::kInvalidShape);
  EXPECT_EQ(api().linear(x, SIZE_MAX / 4, 3, w, b, 2, y), Status::kInvalidShape);
  EXPECT_EQ(api().linear(x, 2, SIZE_MAX / 2, w, b, 2, y), Status::kInvalidShape);
  for (float v : y) EXPECT_EQ(v, 7.0f);
  // y may not alias anything: x, W or the bias.
  EXPECT_EQ(api().linear(x, 2, 3, w, b, 2, x + 1), Status::kOverlap);
  EXPECT_EQ(api().linear(x, 1, 3, w, b, 2, w + 4), Status::kOverlap);
  EXPECT_EQ(api().linear(x, 1, 3, w, b, 2, b + 1), Status::kOverlap);
  EXPECT_EQ(api().linear(x, 1, 3, w, b, 2, b), Status::kOverlap);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(x[i], static_cast<float>(i + 1));
  EXPECT_EQ(w[4], 1.0f);
  EXPECT_EQ(b[1], -0.5f);
}

// ---- linear_transposed: W stored [out][in].

void CheckLinearTransposed(const Api& api, Rng& rng, size_t rows, size_t in, size_t out, bool with_bias,
                           size_t misalign) {
  GuardedBuffer x(rows * in, misalign), w(out * in, (misalign + 1) % 4), b(out, (misalign + 2) % 4),
      y(rows * out, (misalign + 3) % 4);
  for (size_t i = 0; i < x.size(); ++i) x[i] = rng.Normal();
  for (size_t i = 0; i < w.size(); ++i) w[i] = rng.Normal();
  for (size_t i = 0; i < b.size(); ++i) b[i] = rng.Normal();
  y.Fill(kNaN);
  ASSERT_EQ(api.linear_transposed(x.data(), rows, in, w.data(), with_bias ? b.data() : nullptr, out, y.data()),
            Status::kOk);
  const double nu = static_cast<double>(in + 1) * kU;
  for (size_t r = 0; r < rows; ++r) {
    for (size_t o = 0; o < out; ++o) {
      double exact = with_bias ? b[o] : 0.0;
      double magnitude = with_bias ? std::fabs(b[o]) : 0.0;
      for (size_t i = 0; i < in; ++i) {
        exact += static_cast<double>(x[r * in + i]) * w[o * in + i];
        magnitude += std::fabs(static_cast<double>(x[r * in + i]) * w[o * in + i]);
      }
      ASSERT_LE(std::fabs(y[r * out + o] - exact), nu / (1 - nu) * magnitude + static_cast<double>(in + 1) * 0x1p-149)
          << "rows=" << rows << " in=" << in << " out=" << out << " at [" << r << "][" << o << "]";
    }
  }
  EXPECT_TRUE(x.GuardsIntact() && w.GuardsIntact() && b.GuardsIntact() && y.GuardsIntact());
}

TEST_P(LinearTest, TransposedEveryInputWidthAndOutputCount) {
  Rng rng;
  // in covers every vector tail of the dot products; out every remainder of the four-output groups; rows 1 to 9
  // the four-row blocks and the rows left over.
  for (size_t in = 1; in <= kMaxTailTestLength; ++in) {
    for (bool bias : {false, true}) {
      CheckLinearTransposed(api(), rng, 1 + in % 9, in, 1 + (in * 3) % 11, bias, in % 4);
    }
  }
}

TEST_P(LinearTest, TransposedDecodeRowsEveryTail) {
  // Calls of one to three rows with rows of at least 128 inputs take W one row at a time on x86 SIMD targets (two
  // chains, then a vector tail) and eight rows per pass elsewhere, fetching ahead: every vector tail of such rows,
  // outputs 8 to 27 (blocks of eight, the four-output groups after them, a next block or none), a 1000-input row,
  // and rows over 4 KB (the one-row kernel's requests run 4 KB ahead).
  Rng rng;
  for (size_t in = 128; in <= 128 + kMaxTailTestLength; ++in) {
    CheckLinearTransposed(api(), rng, 1 + in % 3, in, 8 + (in * 7) % 20, in % 2 == 0, in % 4);
  }
  CheckLinearTransposed(api(), rng, 1, 384, 40, true, 1);
  CheckLinearTransposed(api(), rng, 2, 1000, 17, false, 2);
  CheckLinearTransposed(api(), rng, 3, 1100, 9, true, 3);
}

// One to three rows: an output's bits do not depend on which outputs share its block, so a call on W's rows from
// `first` on gives the bits of the call on all of W, for every first. The later call's blocks are shifted against
// the first's, so most outputs are summed by another of the x86 kernels (eight outputs whose lane sums are added
// together, four, or one row at a time), which must agree bit for bit.
// Row values spread over 2^-20 .. 2^20, so a change in the order of the additions changes the bits.
// Rows of 128 inputs or more: the same on x86's SIMD targets (the one-row stream for matrices over 256 KiB, eight
// outputs at a time for smaller ones on AVX-512); the eight-row kernel of Arm and of Highway's SCALAR and EMU128
// targets has its own chains (not asserted there).
TEST_P(LinearTest, TransposedOneRowBitsDoNotDependOnTheBlock) {
  Rng rng;
  auto spread = [&rng] { return std::ldexp(rng.Normal(), static_cast<int>(rng.Index(41)) - 20); };
  struct Shape {
    size_t in, out;
  };
  std::vector<Shape> shapes = {{1, 24}, {16, 24}, {33, 40}, {64, 172}, {100, 27}, {127, 33}};
#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64)
  if (!IsScalarPath() && Target() != HWY_SCALAR && Target() != HWY_EMU128) {
    shapes.push_back({128, 520});  // 266 KB: one row at a time
    shapes.push_back({200, 330});  // 264 KB
  }
#endif
  for (const Shape& s : shapes) {
    for (size_t rows = 1; rows <= 3; ++rows) {
      std::vector<float> x(rows * s.in), w(s.out * s.in), b(s.out), all(rows * s.out);
      for (float& v : x) v = spread();
      for (float& v : w) v = spread();
      for (float& v : b) v = spread();
      const bool bias = rows != 2;
      ASSERT_EQ(api().linear_transposed(x.data(), rows, s.in, w.data(), bias ? b.data() : nullptr, s.out, all.data()),
                Status::kOk);
      for (size_t first : {size_t{1}, size_t{3}, size_t{5}, size_t{8}, size_t{13}}) {
        const size_t out = s.out - first;
        std::vector<float> part(rows * out);
        ASSERT_EQ(api().linear_transposed(x.data(), rows, s.in, w.data() + first * s.in,
                                          bias ? b.data() + first : nullptr, out, part.data()),
                  Status::kOk);
        for (size_t r = 0; r < rows; ++r) {
          for (size_t o = 0; o < out; ++o) {
            ASSERT_EQ(Bits(part[r * out + o]), Bits(all[r * s.out + first + o]))
                << "in=" << s.in << " out=" << s.out << " rows=" << rows << " first=" << first << " output "
                << first + o << " row " << r;
          }
        }
      }
    }
  }
}

TEST_P(LinearTest, TransposedModelSizedProjection) {
  Rng rng;
  CheckLinearTransposed(api(), rng, 7, 384, 97, true, 1);
  CheckLinearTransposed(api(), rng, 1, 1000, 65, false, 3);
  CheckLinearTransposed(api(), rng, 8, 64, 172, true, 2);
}

TEST_P(LinearTest, TransposedMatchesLinearOnTransposedWeights) {
  // The same projection in both layouts: W [in][out] for linear, its transpose for linear_transposed. Small
  // integers make every sum exact, so the two must agree bit for bit.
  Rng rng;
  const size_t rows = 5, in = 13, out = 7;
  std::vector<float> x(rows * in), w(in * out), wt(out * in), b(out), y(rows * out), yt(rows * out);
  for (float& v : x) v = static_cast<float>(static_cast<int>(rng.Index(9)) - 4);
  for (size_t i = 0; i < in; ++i) {
    for (size_t o = 0; o < out; ++o)
      wt[o * in + i] = w[i * out + o] = static_cast<float>(static_cast<int>(rng.Index(7)) - 3);
  }
  for (float& v : b) v = static_cast<float>(rng.Index(5));
  ASSERT_EQ(api().linear(x.data(), rows, in, w.data(), b.data(), out, y.data()), Status::kOk);
  ASSERT_EQ(api().linear_transposed(x.data(), rows, in, wt.data(), b.data(), out, yt.data()), Status::kOk);
  for (size_t k = 0; k < y.size(); ++k) EXPECT_EQ(y[k], yt[k]) << k;
}

TEST_P(LinearTest, TransposedBadInputsLeaveOutputUntouched) {
  float x[6] = {1, 2, 3, 4, 5, 6};
  float w[6] = {1, 0, 0, 1, 1, 1};
  float b[2] = {0.5f, -0.5f};
  float y[4] = {7, 7, 7, 7};
  EXPECT_EQ(api().linear_transposed(nullptr, 2, 3, w, b, 2, y), Status::kNullPointer);
  EXPECT_EQ(api().linear_transposed(x, 2, 3, nullptr, b, 2, y), Status::kNullPointer);
  EXPECT_EQ(api().linear_transposed(x, 2, 3, w, b, 2, nullptr), Status::kNullPointer);
  EXPECT_EQ(api().linear_transposed(x, 0, 3, w, b, 2, y), Status::kInvalidShape);
  EXPECT_EQ(api().linear_transposed(x, 2, 0, w, b, 2, y), Status::kInvalidShape);
  EXPECT_EQ(api().linear_transposed(x, 2, 3, w, b, 0, y), Status::kInvalidShape);
  EXPECT_EQ(api().linear_transposed(x, SIZE_MAX / 4, 3, w, b, 2, y), Status::kInvalidShape);
  EXPECT_EQ(api().linear_transposed(x, 2, SIZE_MAX / 2, w, b, 2, y), Status::kInvalidShape);
  for (float v : y) EXPECT_EQ(v, 7.0f);
  EXPECT_EQ(api().linear_transposed(x, 2, 3, w, b, 2, x + 1), Status::kOverlap);
  EXPECT_EQ(api().linear_transposed(x, 1, 3, w, b, 2, w + 4), Status::kOverlap);
  EXPECT_EQ(api().linear_transposed(x, 1, 3, w, b, 2, b + 1), Status::kOverlap);
  EXPECT_EQ(api().linear_transposed(x, 1, 3, w, b, 2, b), Status::kOverlap);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(x[i], static_cast<float>(i + 1));
  EXPECT_EQ(w[4], 1.0f);
  EXPECT_EQ(b[1], -0.5f);
}

}  // namespace
}  // namespace edgeattn_test
