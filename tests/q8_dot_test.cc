// SPDX-License-Identifier: Apache-2.0
// The exact int8 dot products for Q8 groups (lib/common/q8_dot_dsp.h: SMLAD, Cortex-M4/M7/M55;
// lib/common/q8_dot_mve.h: VMLADAVA.S8, Cortex-M55), called directly on the boards: exact sums against an int64
// reference over every length to 3 vectors past the widest step, every misalignment, the extremes (-128 * -128),
// and bytes of 127 right after each array, which a read past the end would add to the sum.
#include <gtest/gtest.h>
#include <stddef.h>
#include <stdint.h>

#include <vector>

#include "lib/common/q8_dot_dsp.h"
#include "lib/common/q8_dot_mve.h"
#include "tests/test_util.h"

namespace edgeattn_test {
namespace {

using DotS8 = int32_t (*)(const int8_t*, const int8_t*, size_t);

void CheckExactSums(DotS8 dot, const char* name) {
  Rng rng;
  for (size_t n = 0; n <= 3 * 32 + 1; ++n) {
    for (size_t m = 0; m < 4; ++m) {
      for (int kind = 0; kind < 3; ++kind) {
        // Each array at offset m of its own storage, followed by 64 bytes of 127.
        std::vector<int8_t> sa(n + m + 64, 127), sb(n + m + 64, 127);
        int8_t* a = sa.data() + m;
        int8_t* b = sb.data() + (3 * m + 1) % 4;
        int64_t exact = 0;
        for (size_t i = 0; i < n; ++i) {
          // kind 0: random bytes; 1: every product (-128)(-128); 2: every product 127 (-128).
          a[i] = static_cast<int8_t>(kind == 0 ? static_cast<int>(rng.Index(256)) - 128 : kind == 1 ? -128 : 127);
          b[i] = static_cast<int8_t>(kind == 0 ? static_cast<int>(rng.Index(256)) - 128 : -128);
          exact += static_cast<int64_t>(a[i]) * b[i];
        }
        EXPECT_EQ(dot(a, b, n), exact) << name << " n=" << n << " misalign " << m << " kind " << kind;
      }
    }
  }
  // A long group: 4099 values, the sum far from either end of int32 but past int16.
  std::vector<int8_t> a(4099), b(4099);
  int64_t exact = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<int8_t>(static_cast<int>(rng.Index(255)) - 127);
    b[i] = static_cast<int8_t>(static_cast<int>(rng.Index(255)) - 127);
    exact += static_cast<int64_t>(a[i]) * b[i];
  }
  EXPECT_EQ(dot(a.data(), b.data(), a.size()), exact) << name << " n=4099";
}

#if EDGEATTN_DSP
TEST(Q8DotTest, DspSumsAreExact) { CheckExactSums(edgeattn::dsp::DotS8Dsp, "dsp"); }

// DotS8Dsp2's two rows, each checked as the second operand of a dot (the other row is a itself).
int32_t Dsp2First(const int8_t* a, const int8_t* b, size_t n) {
  int32_t s[2];
  edgeattn::dsp::DotS8Dsp2(a, b, a, n, s);
  return s[0];
}
int32_t Dsp2Second(const int8_t* a, const int8_t* b, size_t n) {
  int32_t s[2];
  edgeattn::dsp::DotS8Dsp2(a, a, b, n, s);
  return s[1];
}
TEST(Q8DotTest, Dsp2SumsAreExact) {
  CheckExactSums(Dsp2First, "dsp2 first row");
  CheckExactSums(Dsp2Second, "dsp2 second row");
}
#else
TEST(Q8DotTest, Dsp2SumsAreExact) { GTEST_SKIP() << "no DSP extension in this build"; }
TEST(Q8DotTest, DspSumsAreExact) { GTEST_SKIP() << "no DSP extension in this build"; }
#endif

#if EDGEATTN_MVE_INT
TEST(Q8DotTest, MveSumsAreExact) { CheckExactSums(edgeattn::mve::DotS8Mve, "mve"); }
#else
TEST(Q8DotTest, MveSumsAreExact) { GTEST_SKIP() << "no MVE integer instructions in this build"; }
#endif

}  // namespace
}  // namespace edgeattn_test
