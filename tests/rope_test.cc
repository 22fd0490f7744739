// SPDX-License-Identifier: Apache-2.0
// RoPE: the bound of rope.h against a long double reference on every path, both layouts, partial rotary,
// positions up to 2^24 - 1; pass-through elements untouched; the layouts are permutations of each other; bad
// inputs leave x untouched.
#include "edgeattn/rope.h"

#include <gtest/gtest.h>
#include <stdint.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <tuple>
#include <vector>

#include "lib/common/dispatch.h"
#include "lib/rope/rope_scalar.h"
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
        const long double angle = static_cast<long double>(p) *
                                  std::pow(base, -static_cast<long double>(2 * i) / static_cast<long double>(rotary));
        const long double c = std::cos(angle), s = std::sin(angle);
        const long double xa = before[offset + ia], xb = before[offset + ib];
        const long double exact[2] = {xa * c - xb * s, xb * c + xa * s};
        const float got[2] = {x[offset + ia], x[offset + ib]};
        for (int k = 0; k < 2; ++k) {
          const double e = static_cast<double>(exact[k]);
          const double bound =
              UlpOf(e) + static_cast<double>(p + 1) * 0x1p-44 * static_cast<double>(std::fabs(xa) + std::fabs(xb)) +
              0x1p-149;
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
    CheckRope(api(), rng, MakeRope(6, 128, 32, 0.0f, layout), 3, 2047, 0);   // partial rotary, GPT-NeoX style
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
    worst =
        std::max(worst, CheckRope(api(), rng, MakeRope(3, 34, 0, 0.0f, layout), 2, (last >> 1) + rng.Index(1000), 0));
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
  const auto to_interleaved = [&](size_t j) {
    return j >= rotary ? j : j < rotary / 2 ? 2 * j : 2 * (j - rotary / 2) + 1;
  };
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

// ---- The table variant.

// A firmware's table, evaluated by the compiler.
constexpr edgeattn::RopeTable<48, 16> kConstexprTable = edgeattn::MakeRopeTable<48, 16>(10000.0f);

long double ExactAngle(size_t p, size_t i, size_t rotary, long double base) {
  return static_cast<long double>(p) *
         std::pow(base, -static_cast<long double>(2 * i) / static_cast<long double>(rotary));
}

TEST(RopeTableTest, EntriesWithinHalfUlpAndConstexprEqualsFill) {
  std::vector<float> filled(edgeattn::RopeTableFloats(48, 16));
  ASSERT_EQ(edgeattn::RopeTableFill(16, 0.0f, 0, 48, filled.data()), Status::kOk);
  for (size_t k = 0; k < filled.size(); ++k) EXPECT_EQ(Bits(filled[k]), Bits(kConstexprTable.data[k])) << k;
  // Rows near 2^24, another base, another width.
  const size_t first = edgeattn::kMaxPositions - 40;
  std::vector<float> far(edgeattn::RopeTableFloats(40, 34));
  ASSERT_EQ(edgeattn::RopeTableFill(34, 500000.0f, first, 40, far.data()), Status::kOk);
  for (const auto& [table, rotary, first_position, rows, base] :
       {std::make_tuple(filled.data(), size_t{16}, size_t{0}, size_t{48}, 10000.0L),
        std::make_tuple(far.data(), size_t{34}, first, size_t{40}, 500000.0L)}) {
    for (size_t r = 0; r < rows; ++r) {
      const size_t p = first_position + r;
      for (size_t i = 0; i < rotary / 2; ++i) {
        const long double angle = ExactAngle(p, i, rotary, base);
        const long double exact[2] = {std::cos(angle), std::sin(angle)};
        for (int k = 0; k < 2; ++k) {
          const double e = static_cast<double>(exact[k]);
          const float got = table[r * rotary + 2 * i + static_cast<size_t>(k)];
          EXPECT_LE(std::fabs(static_cast<double>(got) - e),
                    0.5 * UlpOf(e) + static_cast<double>(p + 1) * 0x1p-46 + 0x1p-149)
              << "p=" << p << " pair " << i << (k == 0 ? " cos" : " sin");
        }
      }
    }
  }
}

// Rope takes ln(base) for the default base from a constant (rope_detail::Log at compile time): it must be the
// runtime log's value, as must the constexpr table's log for any base.
TEST(RopeTableTest, ConstexprLogIsTheRuntimeLog) {
  static_assert(edgeattn::rope_detail::Log(10000.0) > 9.21 && edgeattn::rope_detail::Log(10000.0) < 9.22, "ln 1e4");
  constexpr double kLog10000 = edgeattn::rope_detail::Log(10000.0);
  EXPECT_EQ(edgeattn::internal::LogDouble(10000.0), kLog10000);  // exact equality of doubles
  Rng rng;
  for (double base : {1.0001, 2.0, 500000.0, 1e6, 3.0e38}) {
    EXPECT_EQ(edgeattn::internal::LogDouble(base), edgeattn::rope_detail::Log(base)) << base;
  }
  for (int k = 0; k < 1000; ++k) {
    const double base = 2.0 + static_cast<double>(rng.Index(1u << 30)) * 0.37;
    EXPECT_EQ(edgeattn::internal::LogDouble(base), edgeattn::rope_detail::Log(base)) << base;
  }
}

TEST_P(RopeTest, WithTableWithinItsBound) {
  Rng rng;
  const size_t first = edgeattn::kMaxPositions - 64;
  std::vector<float> far(edgeattn::RopeTableFloats(64, 24));
  ASSERT_EQ(edgeattn::RopeTableFill(24, 0.0f, first, 64, far.data()), Status::kOk);
  struct Case {
    edgeattn::RopeTableView table;
    RopeDesc desc;
    size_t seq, first_position;
  };
  const edgeattn::RopeTableView far_view{far.data(), 24, first, 64};
  const bool flushes = !IsScalarPath() && edgeattn::internal::DispatchedVectorFlushesSubnormals();
  for (RopeLayout layout : {RopeLayout::kInterleaved, RopeLayout::kHalf}) {
    for (const Case& c : {Case{kConstexprTable.View(), MakeRope(3, 16, 0, 0.0f, layout), 48, 0},
                          Case{kConstexprTable.View(), MakeRope(2, 21, 16, 0.0f, layout), 5, 43},
                          Case{far_view, MakeRope(2, 30, 24, 0.0f, layout), 7, first + 57},
                          Case{far_view, MakeRope(1, 24, 0, 0.0f, layout), 64, first}}) {
      const size_t stride = c.desc.num_heads * c.desc.head_dim;
      GuardedBuffer x(c.seq * stride, c.seq % 4);
      for (size_t k = 0; k < x.size(); ++k) x[k] = rng.Normal();
      const std::vector<float> before(x.data(), x.data() + x.size());
      ASSERT_EQ(api().rope_with_table(c.desc, c.table, x.data(), c.seq, c.first_position), Status::kOk);
      const size_t rotary = c.table.rotary_dim;
      for (size_t t = 0; t < c.seq; ++t) {
        const size_t p = c.first_position + t;
        for (size_t h = 0; h < c.desc.num_heads; ++h) {
          const size_t o = t * stride + h * c.desc.head_dim;
          for (size_t i = 0; i < rotary / 2; ++i) {
            const size_t ia = layout == RopeLayout::kHalf ? i : 2 * i,
                         ib = layout == RopeLayout::kHalf ? i + rotary / 2 : 2 * i + 1;
            const long double angle = ExactAngle(p, i, rotary, 10000.0L);
            const long double xa = before[o + ia], xb = before[o + ib];
            const long double exact[2] = {xa * std::cos(angle) - xb * std::sin(angle),
                                          xb * std::cos(angle) + xa * std::sin(angle)};
            const double bound =
                (3 * kU + static_cast<double>(p + 1) * 0x1p-46) * static_cast<double>(std::fabs(xa) + std::fabs(xb)) +
                (flushes ? 3 * 0x1p-126 : 0x1p-149);
            EXPECT_LE(std::fabs(static_cast<double>(x[o + ia]) - static_cast<double>(exact[0])), bound) << "p=" << p;
            EXPECT_LE(std::fabs(static_cast<double>(x[o + ib]) - static_cast<double>(exact[1])), bound) << "p=" << p;
          }
          for (size_t j = rotary; j < c.desc.head_dim; ++j) EXPECT_EQ(Bits(x[o + j]), Bits(before[o + j]));
        }
      }
      EXPECT_TRUE(x.GuardsIntact());
    }
  }
}

TEST_P(RopeTest, WithTableBadInputsLeaveXUntouched) {
  float x[32];
  for (int i = 0; i < 32; ++i) x[i] = static_cast<float>(i);
  const RopeDesc desc = MakeRope(1, 16, 0, 0.0f, RopeLayout::kInterleaved);
  const edgeattn::RopeTableView table = kConstexprTable.View();  // positions 0 .. 47
  edgeattn::RopeTableView null_table = table;
  null_table.data = nullptr;
  EXPECT_EQ(api().rope_with_table(desc, table, nullptr, 2, 0), Status::kNullPointer);
  EXPECT_EQ(api().rope_with_table(desc, null_table, x, 2, 0), Status::kNullPointer);
  EXPECT_EQ(api().rope_with_table(desc, table, x, 0, 0), Status::kInvalidShape);
  EXPECT_EQ(api().rope_with_table(MakeRope(1, 16, 8, 0.0f, RopeLayout::kInterleaved), table, x, 2, 0),
            Status::kInvalidArgument);                                                // rotary 8 against a table of 16
  EXPECT_EQ(api().rope_with_table(desc, table, x, 2, 47), Status::kInvalidArgument);  // position 48 is not there
  EXPECT_EQ(api().rope_with_table(desc, table, x, 1, 48), Status::kInvalidArgument);
  edgeattn::RopeTableView later = table;
  later.first_position = 10;
  EXPECT_EQ(api().rope_with_table(desc, later, x, 1, 9), Status::kInvalidArgument);
  EXPECT_EQ(api().rope_with_table(desc, table, x, 1, SIZE_MAX), Status::kInvalidArgument);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(x[i], static_cast<float>(i));
  // x over the table (a writable copy of it).
  std::vector<float> copy(kConstexprTable.data, kConstexprTable.data + edgeattn::RopeTableFloats(48, 16));
  const edgeattn::RopeTableView copy_view{copy.data(), 16, 0, 48};
  EXPECT_EQ(api().rope_with_table(desc, copy_view, copy.data() + 100, 1, 0), Status::kOverlap);
  EXPECT_EQ(api().rope_with_table(desc, table, x, 2, 46), Status::kOk);  // the last two rows
  // desc.base is not read by the table variant: an invalid base rotates as base 0 does (found by layers_fuzzer).
  for (const float base : {1.0f, -3.0f, kNaN}) {
    float a[32], b[32];
    for (int i = 0; i < 32; ++i) a[i] = b[i] = static_cast<float>(i);
    EXPECT_EQ(api().rope_with_table(MakeRope(1, 16, 0, base, RopeLayout::kInterleaved), table, a, 2, 3), Status::kOk)
        << base;
    EXPECT_EQ(api().rope_with_table(desc, table, b, 2, 3), Status::kOk);
    EXPECT_EQ(std::memcmp(a, b, sizeof(a)), 0) << base;
  }
  // RopeTableFill's own checks.
  float t[16];
  EXPECT_EQ(edgeattn::RopeTableFill(16, 0.0f, 0, 1, nullptr), Status::kNullPointer);
  EXPECT_EQ(edgeattn::RopeTableFill(16, 0.0f, 0, 0, t), Status::kInvalidShape);
  EXPECT_EQ(edgeattn::RopeTableFill(15, 0.0f, 0, 1, t), Status::kInvalidArgument);
  EXPECT_EQ(edgeattn::RopeTableFill(0, 0.0f, 0, 1, t), Status::kInvalidArgument);
  EXPECT_EQ(edgeattn::RopeTableFill(16, 1.0f, 0, 1, t), Status::kInvalidArgument);
  EXPECT_EQ(edgeattn::RopeTableFill(16, kNaN, 0, 1, t), Status::kInvalidArgument);
  EXPECT_EQ(edgeattn::RopeTableFill(16, 0.0f, edgeattn::kMaxPositions, 1, t), Status::kInvalidArgument);
  EXPECT_EQ(edgeattn::RopeTableFill(16, 0.0f, edgeattn::kMaxPositions - 1, 1, t), Status::kOk);
}

}  // namespace
}  // namespace edgeattn_test
