// RoPE: the bound of rope.h against a long double reference on every path, both layouts, partial rotary,
// positions up to 2^24 - 1; pass-through elements untouched; the layouts are permutations of each other; bad
// inputs leave x untouched.
#include "edgeattn/rope.h"

#include <gtest/gtest.h>
#include <stdint.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "tests/test_util.h"

namespace edgeattn_test {
namespace {

using edgeattn::RopeDesc;
using edgeattn::RopeLayout;

class RopeTest : public PathTest {};
EDGEATTN_INSTANTIATE_PATHS(RopeTest);

RopeDesc MakeRope(size_t num_heads, size_t head_dim, size_t rotary_dim, float base, RopeLayout layout) {
  RopeDesc desc;
  desc.num_heads = num_heads;
  desc.head_dim = head_dim;
  desc.rotary_dim = rotary_dim;
  desc.base = base;
  desc.layout = layout;
  return desc;
}

// Runs Rope on random x and checks every element: rotated pairs within the bound of a long double reference,
// the pass-through elements bit for bit. Returns the worst error in units of the bound.
double CheckRope(const Api& api, Rng& rng, const RopeDesc& desc, size_t seq_len, size_t first_position,
                 size_t misalign) {
  const size_t stride = desc.num_heads * desc.head_dim;
  GuardedBuffer x(seq_len * stride, misalign);
  for (size_t i = 0; i < x.size(); ++i) x[i] = rng.Normal();
  const std::vector<float> before(x.data(), x.data() + x.size());
  EXPECT_EQ(api.rope(desc, x.data(), seq_len, first_position), Status::kOk);
  const size_t rotary = desc.rotary_dim != 0 ? desc.rotary_dim : desc.head_dim;
  const long double base = desc.base != 0.0f ? desc.base : 10000.0L;
  double worst = 0.0;
  for (size_t t = 0; t < seq_len; ++t) {
    const size_t p = first_position + t;
    for (size_t h = 0; h < desc.num_heads; ++h) {
      const size_t offset = t * stride + h * desc.head_dim;
      for (size_t i = 0; i < rotary / 2; ++i) {
        const size_t ia = desc.layout == RopeLayout::kHalf ? i : 2 * i;
        const size_t ib = desc.layout == RopeLayout::kHalf ? i + rotary / 2 : 2 * i + 1;
        const long double angle =
            static_cast<long double>(p) * std::pow(base, -static_cast<long double>(2 * i) / static_cast<long double>(rotary));
        const long double c = std::cos(angle), s = std::sin(angle);
        const long double xa = before[offset + ia], xb = before[offset + ib];
        const long double exact[2] = {xa * c - xb * s, xb * c + xa * s};
        const float got[2] = {x[offset + ia], x[offset + ib]};
        for (int k = 0; k < 2; ++k) {
          const double e = static_cast<double>(exact[k]);
          const double bound = UlpOf(e) + static_cast<double>(p + 1) * 0x1p-44 * static_cast<double>(std::fabs(xa) + std::fabs(xb)) + 0x1p-149;
          const double err = static_cast<double>(std::fabs(static_cast<long double>(got[k]) - exact[k]));
          EXPECT_LE(err, bound) << "p=" << p << " head " << h << " pair " << i << " member " << k << " got " << got[k]
                                << " exact " << e;
          if (err > bound) return err / bound;
          worst = std::max(worst, err / bound);
        }
      }
      for (size_t j = rotary; j < desc.head_dim; ++j) EXPECT_EQ(Bits(x[offset + j]), Bits(before[offset + j]));
    }
  }
  EXPECT_TRUE(x.GuardsIntact());
  return worst;
}

TEST_P(RopeTest, BothLayoutsEveryHeadWidthPartialRotary) {
  Rng rng;
  for (RopeLayout layout : {RopeLayout::kInterleaved, RopeLayout::kHalf}) {
    for (size_t head_dim = 1; head_dim <= kMaxTailTestLength; ++head_dim) {
      // rotary 0 (= head_dim) where head_dim is even; a partial rotary of every even width below it otherwise.
      const size_t rotary = head_dim % 2 == 0 ? 0 : (head_dim - 1) / 2 * 2;
      if (rotary == 0 && head_dim % 2 != 0) continue;
      const RopeDesc desc = MakeRope(1 + head_dim % 3, head_dim, rotary, head_dim % 4 == 0 ? 500000.0f : 0.0f, layout);
      CheckRope(api(), rng, desc, 1 + head_dim % 5, rng.Index(4096), head_dim % 4);
    }
    CheckRope(api(), rng, MakeRope(8, 64, 0, 0.0f, layout), 17, 100, 1);
    CheckRope(api(), rng, MakeRope(6, 128, 32, 0.0f, layout), 3, 2047, 0);  // partial rotary, GPT-NeoX style
    CheckRope(api(), rng, MakeRope(2, 8, 8, 1.0001f, layout), 5, 12345, 2);  // base barely above 1
    CheckRope(api(), rng, MakeRope(2, 8, 8, 3.0e38f, layout), 5, 12345, 2);  // frequencies down to 1e-38
  }
}

// Where a float angle p * inv_freq has lost everything: positions just below 2^24 (the float product's error
// there is up to 0.5 rad).
TEST_P(RopeTest, AccurateAtPositionsNear2To24) {
  Rng rng;
  double worst = 0.0;
  for (RopeLayout layout : {RopeLayout::kInterleaved, RopeLayout::kHalf}) {
    const size_t last = edgeattn::kMaxPositions;
    worst = std::max(worst, CheckRope(api(), rng, MakeRope(2, 64, 0, 0.0f, layout), 9, last - 9, 1));
    worst = std::max(worst, CheckRope(api(), rng, MakeRope(1, 128, 0, 500000.0f, layout), 4, last - 1000, 3));
    worst = std::max(worst, CheckRope(api(), rng, MakeRope(3, 34, 0, 0.0f, layout), 2, (last >> 1) + rng.Index(1000), 0));
    for (int k = 0; k < 8; ++k) {
      worst = std::max(worst, CheckRope(api(), rng, MakeRope(1, 16, 0, 0.0f, layout), 1, rng.Index(last), 2));
    }
  }
  std::printf("[   INFO   ] %s: worst error %.3g of the bound\n", TargetName(GetParam()), worst);
}

TEST_P(RopeTest, PositionZeroIsIdentityAndOneRadianIsExact) {
  float x[2][4] = {{1.5f, -2.0f, 3.0f, 0.25f}, {1.0f, 0.0f, 0.0f, 1.0f}};
  const float copy0[4] = {1.5f, -2.0f, 3.0f, 0.25f};
  // Token 0 at position 0 is left as is; token 1 at position 1: pair 0 turns by 1 rad, pair 1 by 1/sqrt(10000).
  ASSERT_EQ(api().rope(MakeRope(1, 4, 0, 0.0f, RopeLayout::kInterleaved), &x[0][0], 2, 0), Status::kOk);
  for (int j = 0; j < 4; ++j) EXPECT_EQ(x[0][j], copy0[j]);
  EXPECT_EQ(x[1][0], static_cast<float>(std::cos(1.0)));
  EXPECT_EQ(x[1][1], static_cast<float>(std::sin(1.0)));
  EXPECT_EQ(x[1][2], static_cast<float>(-std::sin(0.01)));
  EXPECT_EQ(x[1][3], static_cast<float>(std::cos(0.01)));
}

TEST_P(RopeTest, HalfLayoutIsInterleavedOnPermutedElements) {
  Rng rng;
  const size_t heads = 3, head_dim = 12, rotary = 8, seq = 5;
  std::vector<float> half(seq * heads * head_dim), interleaved(half.size());
  for (float& v : half) v = rng.Normal();
  // Element i of the half layout's first half goes to 2i, element i + rotary/2 to 2i + 1.
  const auto to_interleaved = [&](size_t j) { return j >= rotary ? j : j < rotary / 2 ? 2 * j : 2 * (j - rotary / 2) + 1; };
  for (size_t k = 0; k < half.size(); ++k) {
    const size_t base = k / head_dim * head_dim;
    interleaved[base + to_interleaved(k % head_dim)] = half[k];
  }
  ASSERT_EQ(api().rope(MakeRope(heads, head_dim, rotary, 0.0f, RopeLayout::kHalf), half.data(), seq, 77), Status::kOk);
  ASSERT_EQ(api().rope(MakeRope(heads, head_dim, rotary, 0.0f, RopeLayout::kInterleaved), interleaved.data(), seq, 77),
            Status::kOk);
  for (size_t k = 0; k < half.size(); ++k) {
    const size_t base = k / head_dim * head_dim;
    EXPECT_EQ(Bits(half[k]), Bits(interleaved[base + to_interleaved(k % head_dim)])) << k;
  }
}

TEST_P(RopeTest, BadInputsLeaveXUntouched) {
  float x[16];
  for (int i = 0; i < 16; ++i) x[i] = static_cast<float>(i);
  const RopeDesc good = MakeRope(2, 4, 0, 0.0f, RopeLayout::kInterleaved);
  EXPECT_EQ(api().rope(good, nullptr, 2, 0), Status::kNullPointer);
  EXPECT_EQ(api().rope(good, nullptr, 0, 0), Status::kNullPointer);
  EXPECT_EQ(api().rope(good, x, 0, 0), Status::kInvalidShape);
  EXPECT_EQ(api().rope(MakeRope(0, 4, 0, 0.0f, RopeLayout::kInterleaved), x, 2, 0), Status::kInvalidShape);
  EXPECT_EQ(api().rope(MakeRope(2, 0, 0, 0.0f, RopeLayout::kInterleaved), x, 2, 0), Status::kInvalidShape);
  EXPECT_EQ(api().rope(MakeRope(SIZE_MAX / 2, 4, 0, 0.0f, RopeLayout::kInterleaved), x, 2, 0), Status::kInvalidShape);
  EXPECT_EQ(api().rope(MakeRope(2, 4, 0, kNaN, RopeLayout::kInterleaved), x, 0, 0), Status::kInvalidShape);
  EXPECT_EQ(api().rope(MakeRope(2, 4, 3, 0.0f, RopeLayout::kInterleaved), x, 2, 0), Status::kInvalidArgument);
  EXPECT_EQ(api().rope(MakeRope(2, 4, 6, 0.0f, RopeLayout::kInterleaved), x, 2, 0), Status::kInvalidArgument);
  EXPECT_EQ(api().rope(MakeRope(2, 5, 0, 0.0f, RopeLayout::kHalf), x, 1, 0), Status::kInvalidArgument);
  for (float base : {1.0f, 0.5f, -10000.0f, kInf, -kInf, kNaN}) {
    EXPECT_EQ(api().rope(MakeRope(2, 4, 0, base, RopeLayout::kInterleaved), x, 2, 0), Status::kInvalidArgument) << base;
  }
  EXPECT_EQ(api().rope(MakeRope(2, 4, 0, 0.0f, static_cast<RopeLayout>(2)), x, 2, 0), Status::kInvalidArgument);
  EXPECT_EQ(api().rope(MakeRope(2, 4, 0, 0.0f, static_cast<RopeLayout>(-1)), x, 2, 0), Status::kInvalidArgument);
  const size_t limit = edgeattn::kMaxPositions;
  EXPECT_EQ(api().rope(good, x, 2, limit - 1), Status::kInvalidArgument);  // position 2^24 itself
  EXPECT_EQ(api().rope(good, x, 2, limit), Status::kInvalidArgument);
  EXPECT_EQ(api().rope(good, x, 2, SIZE_MAX), Status::kInvalidArgument);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(x[i], static_cast<float>(i));
  EXPECT_EQ(api().rope(good, x, 2, limit - 2), Status::kOk);  // positions 2^24 - 2 and 2^24 - 1
  EXPECT_EQ(api().rope(MakeRope(2, 5, 4, 0.0f, RopeLayout::kHalf), x, 1, 0), Status::kOk);
  EXPECT_EQ(api().rope(MakeRope(2, 4, 0, 1.5f, RopeLayout::kHalf), x, 2, 0), Status::kOk);
}

}  // namespace
}  // namespace edgeattn_test
