// SPDX-License-Identifier: Apache-2.0
// linear_q8: ACT_Q8 bit for bit against the contract's formula written out here (its own quantiser, its own
// loops: not the library's scalar path), on every path, every int8 kernel this CPU has, random shapes, tails,
// misalignments and special rows; ACT_F32 within its stated bound; the quantiser against its rule and against
// the KV cache's bits; the work split; every error, with nothing written.
#include "edgeattn/linear_q8.h"

#include <gtest/gtest.h>
#include <stdint.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "lib/common/q8.h"
#include "lib/linear_q8/linear_q8_kernels.h"
#include "tests/fp_env.h"
#include "tests/test_util.h"

namespace edgeattn_test {
namespace {

using edgeattn::Q8Activations;
using edgeattn::Q8Matrix;
using edgeattn::internal::Q8Kernel;

// ---- The contract, written out: round to nearest even without the rounding mode (floor is exact in any mode,
// and r - floor(r) is exact in double for |r| < 2^24), then the Q8 rule and the ACT_Q8 loop.
float RoundHalfEven(float r) {
  const double f = std::floor(static_cast<double>(r)), frac = static_cast<double>(r) - f;
  const bool up = frac > 0.5 || (frac == 0.5 && std::fmod(f, 2.0) != 0.0);
  return static_cast<float>(up ? f + 1.0 : f);
}

float QuantizeGroupRef(const float* x, size_t n, int8_t* q) {
  float max_abs = 0.0f;
  for (size_t i = 0; i < n; ++i) max_abs = std::fmax(max_abs, std::fabs(x[i]));
  const float scale = max_abs / 127.0f;
  for (size_t i = 0; i < n; ++i) {
    const float r = scale == 0.0f ? 0.0f : x[i] / scale;
    q[i] = static_cast<int8_t>(r > 127.0f ? 127.0f : r < -127.0f ? -127.0f : RoundHalfEven(r));
  }
  return scale;
}

std::vector<float> FormulaQ8(const float* x, size_t rows, const Q8Matrix& w, const float* bias) {
  const size_t in = w.in_features, gs = w.group_size, groups = in / gs, out = w.out_features;
  std::vector<int8_t> qx(rows * in);
  std::vector<float> sx(rows * groups), y(rows * out);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t g = 0; g < groups; ++g)
      sx[r * groups + g] = QuantizeGroupRef(x + r * in + g * gs, gs, &qx[r * in + g * gs]);
  }
  for (size_t r = 0; r < rows; ++r) {
    for (size_t o = 0; o < out; ++o) {
      float acc = 0.0f;
      for (size_t g = 0; g < groups; ++g) {
        int64_t s = 0;
        for (size_t i = g * gs; i < (g + 1) * gs; ++i) s += int64_t{qx[r * in + i]} * w.q[o * in + i];
        const float step = (static_cast<float>(s) * w.scale[o * groups + g]) * sx[r * groups + g];
        acc = acc + step;
      }
      y[r * out + o] = bias != nullptr ? acc + bias[o] : acc;
    }
  }
  return y;
}

// ---- The implementations under test: the scalar path, or the SIMD path with each int8 kernel this CPU has
// (and the default choice).
struct Impl {
  const char* name;
  bool scalar;
  bool chosen;  // the public entry point's own kernel choice
  Q8Kernel kernel;
};

std::vector<Impl> Impls(bool scalar_path, size_t group_size) {
  if (scalar_path) return {{"scalar", true, false, Q8Kernel::kPortable}};
  std::vector<Impl> impls = {{"chosen", false, true, Q8Kernel::kPortable}};
  for (int k = 0; k < edgeattn::internal::kQ8KernelCount; ++k) {
    const Q8Kernel kernel = static_cast<Q8Kernel>(k);
    if (edgeattn::internal::Q8KernelSupported(kernel) && (kernel == Q8Kernel::kPortable || group_size % 4 == 0)) {
      impls.push_back({edgeattn::internal::Q8KernelName(kernel), false, false, kernel});
    }
  }
  return impls;
}

Status RunImpl(const Impl& impl, const float* x, size_t rows, const Q8Matrix& w, const float* bias, Q8Activations act,
               float* y, void* ws, size_t ws_size) {
  if (impl.scalar) return edgeattn::scalar::LinearQ8(x, rows, w, bias, act, y, ws, ws_size);
  if (impl.chosen) return edgeattn::LinearQ8(x, rows, w, bias, act, y, ws, ws_size);
  return edgeattn::internal::LinearQ8WithKernel(x, rows, w, bias, act, y, ws, ws_size, impl.kernel);
}

// Which int8 kernels this run exercises (the AArch64 suite runs with dotprod, QEMU_CPU=max, and without it,
// cortex-a53): printed, and the chooser's pick is a supported one.
TEST(LinearQ8Kernels, ThisCpusKernels) {
  std::string names;
  for (int k = 0; k < edgeattn::internal::kQ8KernelCount; ++k) {
    const Q8Kernel kernel = static_cast<Q8Kernel>(k);
    if (edgeattn::internal::Q8KernelSupported(kernel))
      names += std::string(" ") + edgeattn::internal::Q8KernelName(kernel);
  }
  std::printf("linear_q8 int8 kernels on this CPU:%s\n", names.c_str());
  RecordProperty("kernels", names);
  EXPECT_TRUE(edgeattn::internal::Q8KernelSupported(edgeattn::internal::ChooseQ8Kernel(32)));
  EXPECT_EQ(edgeattn::internal::ChooseQ8Kernel(6), Q8Kernel::kPortable);
}

class LinearQ8Test : public PathTest {};
EDGEATTN_INSTANTIATE_PATHS(LinearQ8Test);

// A quantised matrix in test buffers: q starts `misalign` bytes off a 64-byte boundary, scale is a GuardedBuffer.
struct TestMatrix {
  TestMatrix(size_t out, size_t in, size_t gs, size_t misalign)
      : q_storage(out * in + 128), scale(out * (in / gs), misalign % 4) {
    const uintptr_t base = reinterpret_cast<uintptr_t>(q_storage.data());
    q = q_storage.data() + (64 - base % 64) % 64 + misalign % 64;
    w.q = q;
    w.scale = scale.data();
    w.out_features = out;
    w.in_features = in;
    w.group_size = gs;
  }
  std::vector<int8_t> q_storage;
  int8_t* q;
  GuardedBuffer scale;
  Q8Matrix w;
};

// x [rows][in] N(0, 1) with a few special groups; weights with random int8 (-128 included) and scales.
void FillRandom(Rng& rng, GuardedBuffer& x, TestMatrix& m) {
  for (size_t i = 0; i < x.size(); ++i) x[i] = rng.Normal();
  for (size_t i = 0; i < m.w.out_features * m.w.in_features; ++i) m.q[i] = static_cast<int8_t>(rng.Index(256) - 128);
  for (size_t i = 0; i < m.scale.size(); ++i) m.scale[i] = rng.Uniform(0.0f, 0.02f);
}

// Runs every implementation of this path on (x, m) and compares ACT_Q8 bits with the formula.
void ExpectFormulaBits(bool scalar_path, const GuardedBuffer& x, size_t rows, const TestMatrix& m, const float* bias,
                       size_t misalign) {
  const std::vector<float> expected = FormulaQ8(x.data(), rows, m.w, bias);
  const size_t ws_size = edgeattn::LinearQ8WorkspaceSize(rows, m.w, Q8Activations::kQ8);
  std::vector<unsigned char> ws(ws_size + misalign);
  for (const Impl& impl : Impls(scalar_path, m.w.group_size)) {
    GuardedBuffer y(rows * m.w.out_features, (misalign + 3) % 4);
    y.Fill(kNaN);
    ASSERT_EQ(RunImpl(impl, x.data(), rows, m.w, bias, Q8Activations::kQ8, y.data(), ws.data() + misalign, ws_size),
              Status::kOk);
    for (size_t i = 0; i < expected.size(); ++i) {
      ASSERT_EQ(Bits(y[i]), Bits(expected[i]))
          << impl.name << " rows=" << rows << " in=" << m.w.in_features << " out=" << m.w.out_features
          << " group=" << m.w.group_size << " at " << i << ": " << y[i] << " vs " << expected[i];
    }
    ASSERT_TRUE(y.GuardsIntact()) << impl.name;
  }
}

void CheckRandomShape(bool scalar_path, Rng& rng, size_t rows, size_t in, size_t out, size_t gs, bool with_bias,
                      size_t misalign) {
  GuardedBuffer x(rows * in, misalign % 4), b(out, (misalign + 2) % 4);
  TestMatrix m(out, in, gs, misalign);
  FillRandom(rng, x, m);
  for (size_t i = 0; i < out; ++i) b[i] = rng.Normal();
  ExpectFormulaBits(scalar_path, x, rows, m, with_bias ? b.data() : nullptr, misalign);
  EXPECT_TRUE(x.GuardsIntact() && b.GuardsIntact() && m.scale.GuardsIntact());
}

TEST_P(LinearQ8Test, ActQ8MatchesFormulaBitForBitOverGroupSizesAndTails) {
  Rng rng;
  // Group sizes 1, 4, 8, 32, 64, in itself, and sizes that are not powers of two; outputs 1 .. 40 cover every
  // remainder of the 16-output blocks; rows 1 .. 9 every remainder of the 4-row blocks.
  const size_t group_sizes[] = {1, 4, 32, 64, 8, 12, 20, 96};
  size_t n = 0;
  for (size_t gs : group_sizes) {
    for (size_t groups : {1, 3, 17}) {
      const size_t out = 1 + (n * 7) % 40, rows = 1 + n % 9;
      CheckRandomShape(IsScalarPath(), rng, rows, gs * groups, out, gs, n % 2 == 0, n % 67);
      ++n;
    }
  }
  // in itself as the group, unaligned widths.
  for (size_t in : {5, 33, 100, 257}) CheckRandomShape(IsScalarPath(), rng, 3, in, 19, in, true, in % 7);
}

// One row (a decode call), where each group size has a kernel of its own on x86 (the one-row reduction for
// multiples of 16, the stream for 32 and 64, one vpdpbusd per output's 16 groups for 4, the panels otherwise):
// every group size against the formula, blocks of groups whole and cut short (3, 16, 17, 43 groups: the 260K
// model's w2), outputs of whole and partial 16-output blocks.
TEST_P(LinearQ8Test, ActQ8OneRowMatchesFormulaForEveryGroupSize) {
  Rng rng;
  size_t n = 0;
  for (size_t gs : {1, 2, 3, 4, 5, 8, 12, 16, 20, 32, 48, 64, 96}) {
    for (size_t groups : {1, 3, 16, 17, 43}) {
      const size_t out = (n % 3 == 0) ? 64 : 1 + (n * 7) % 40;
      CheckRandomShape(IsScalarPath(), rng, 1, gs * groups, out, gs, n % 2 == 0, n % 67);
      ++n;
    }
  }
}

// x whose quantisation meets ties in every group: each group's max is 127 c (c a power of two, so its scale is c
// exactly) and its other values are (m + 1/2) c, so x / scale is a half-integer that rounds to even. Group sizes
// that fill whole vectors, 8 or 4 lanes, or fewer (the quantiser's every width), one row and several.
TEST_P(LinearQ8Test, ActQ8TiesInEveryGroupWidth) {
  Rng rng;
  size_t n = 0;
  for (size_t gs : {1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 24, 32, 64}) {
    for (size_t rows : {1, 3}) {
      const size_t in = gs * 5, out = 1 + (n * 5) % 23;
      GuardedBuffer x(rows * in, n % 4);
      TestMatrix m(out, in, gs, n % 7);
      FillRandom(rng, x, m);
      for (size_t g = 0; g < rows * in / gs; ++g) {
        const float c = std::ldexp(1.0f, static_cast<int>(rng.Index(20)) - 10);
        for (size_t i = 0; i < gs; ++i) {
          const float half = static_cast<float>(static_cast<int>(rng.Index(254)) - 127) + 0.5f;
          x[g * gs + i] = (i == (g % gs) ? (g % 2 != 0 ? -127.0f : 127.0f) : half) * c;
        }
      }
      ExpectFormulaBits(IsScalarPath(), x, rows, m, nullptr, n % 4);
      ++n;
    }
  }
}

// One row with group 32 or 64: the x86 VNNI kernel reads each block of 16 rows of W as one stream in windows of
// 1 KiB that straddle rows (and, at group 32 with an odd number of groups, chunks that straddle rows). Rows shorter
// than a window, longer than 4 KiB, odd and even group counts, group counts around 16 (the finish's tiles), and
// output counts around 16 (the last block's repeated lanes).
TEST_P(LinearQ8Test, ActQ8OneRowEveryStreamLayout) {
  Rng rng;
  size_t n = 0;
  for (size_t gs : {32, 64}) {
    for (size_t groups : {1, 2, 3, 9, 15, 16, 17, 31, 33, 47, 130}) {
      for (size_t out : {1, 16, 23, 33}) {
        CheckRandomShape(IsScalarPath(), rng, 1, gs * groups, out + n % 3, gs, n % 2 == 0, n % 13);
        ++n;
      }
    }
  }
}

// Two rows or more with group sizes 32 .. 256: the x86 VNNI kernel's wide blocks (32 outputs over at most 256
// inputs, two panels side by side). Group sizes whose blocks hold 8, 7, 2 and 1 groups (36: a last chunk of 15
// dwords), output counts around 16, 32 and 64 (a second panel of 1 .. 16 outputs, and 16-output blocks after wide
// ones), rows 2 .. 9 (every remainder of the 4-row blocks).
TEST_P(LinearQ8Test, ActQ8WideBlocks) {
  Rng rng;
  size_t n = 0;
  for (size_t gs : {32, 36, 128, 200, 256}) {
    for (size_t out : {17, 31, 32, 33, 48, 70}) {
      const size_t groups = 1 + (n * 5) % 11, rows = 2 + n % 8;
      CheckRandomShape(IsScalarPath(), rng, rows, gs * groups, out, gs, n % 2 == 0, n % 29);
      ++n;
    }
  }
}

TEST_P(LinearQ8Test, ActQ8ModelShapes) {
  Rng rng;
  CheckRandomShape(IsScalarPath(), rng, 1, 288, 768, 32, false, 0);  // TinyStories-15M's FFN, decode
  CheckRandomShape(IsScalarPath(), rng, 6, 512, 64, 64, true, 1);
  CheckRandomShape(IsScalarPath(), rng, 2, 1024, 40, 1024, false, 5);
  // A row of more than 4096 inputs in 228 groups of 18 (four words and a 2-byte tail each): the word-wise group
  // dots (SMLAD, dotprod, VNNI) and their tails over many groups.
  CheckRandomShape(IsScalarPath(), rng, 2, 4104, 3, 18, true, 7);
}

// Groups of 32 and of 4 (x86's one-row kernel and quantiser of their own for 4).
TEST_P(LinearQ8Test, ActQ8SpecialRows) {
  Rng rng;
  for (size_t gs : {size_t{32}, size_t{4}}) {
    const size_t rows = 6, in = 4 * gs, out = 21;
    GuardedBuffer x(rows * in, 1), b(out, 2);
    TestMatrix m(out, in, gs, 3);
    FillRandom(rng, x, m);
    for (size_t i = 0; i < out; ++i) b[i] = rng.Normal();
    for (size_t i = 0; i < gs; ++i) {
      x[0 * in + i] = 0.0f;                                    // an all-zero group: scale 0, q 0
      x[1 * in + gs + i] = rng.Normal() * 0x1p-140f;           // a group whose max is subnormal
      x[2 * in + 2 * gs + i] = (i % 2 ? -1.0f : 1.0f) * 3.0f;  // every value at +-127
      x[3 * in + i] = -0x1p-149f * static_cast<float>(i);      // subnormals down to the smallest
      x[4 * in + 3 * gs + i] = rng.Normal() * 1e30f;           // huge values: products overflow to inf
      x[5 * in + i] = (i % 3 ? -1.0f : 1.0f) * 3.4028235e38f;  // the largest finite floats (valid input)
    }
    for (size_t i = 0; i < in; ++i) {
      m.q[0 * in + i] = 127, m.q[1 * in + i] = -128, m.q[2 * in + i] = -127;  // saturated weight rows
      m.q[3 * in + i] = 0;                                                    // an all-zero weight row
    }
    const size_t groups = in / gs;
    for (size_t g = 0; g < groups; ++g) {
      m.scale[4 * groups + g] = 3e38f;      // huge scales
      m.scale[5 * groups + g] = 0x1p-149f;  // the smallest subnormal scale
      m.scale[6 * groups + g] = 1e-30f;     // tiny scales: subnormal products
      m.scale[7 * groups + g] = 0.0f;
    }
    ExpectFormulaBits(IsScalarPath(), x, rows, m, b.data(), 0);
    ExpectFormulaBits(IsScalarPath(), x, rows, m, nullptr, 7);
    for (size_t r = 0; r < rows; ++r) {  // each row alone (a decode call: the one-row kernels)
      GuardedBuffer one(in, r % 4);
      for (size_t i = 0; i < in; ++i) one[i] = x[r * in + i];
      ExpectFormulaBits(IsScalarPath(), one, 1, m, r % 2 == 0 ? b.data() : nullptr, r);
    }
  }
}

// Scales around what a vector unit that flushes subnormals can take (Helium's float steps run in MVE only where no
// operand or result could be subnormal, else on the scalar FPU): rows of x scaled by 2^-90 (x's scales near 2^-95:
// products with weight scales of 2^-51 are subnormal) and by 2^-40 (x's scales pass the row's test), a row with
// one group scaled by 2^-100; blocks of four outputs with weight scales 2^-51 (the smallest the vector steps take),
// 2^-100 (products with the 2^-40 row's are subnormal), a NaN with a payload (the scalar FPU keeps it; MVE would
// return the default NaN) or one scale just below 2^-51. Group sizes 32 (unrolled group dots) and 20 (a tail).
void CheckVectorFinishEdges(bool scalar_path, size_t gs) {
  Rng rng;
  const size_t rows = 4, in = 3 * gs, out = 22, groups = 3;
  GuardedBuffer x(rows * in, 1), b(out, 2);
  TestMatrix m(out, in, gs, 5);
  FillRandom(rng, x, m);
  for (size_t i = 0; i < out; ++i) b[i] = rng.Normal() * 0x1p-140f;  // a subnormal bias keeps a subnormal sum
  for (size_t i = 0; i < in; ++i) {
    x[1 * in + i] *= 0x1p-90f;
    x[2 * in + i] *= 0x1p-40f;
    if (i < gs) x[3 * in + i] *= 0x1p-100f;
  }
  for (size_t g = 0; g < groups; ++g) {
    for (size_t o = 4; o < 8; ++o) m.scale[o * groups + g] = 0x1p-51f;
    for (size_t o = 8; o < 12; ++o) m.scale[o * groups + g] = 0x1p-100f;
  }
  for (size_t o = 16; o < 20; ++o) m.scale[o * groups + 2] = 0x1p-51f;
  m.scale[17 * groups + 2] = std::nextafter(0x1p-51f, 0.0f);
  const uint32_t nan_bits = 0x7FC12345u;
  std::memcpy(&m.scale[13 * groups + 1], &nan_bits, sizeof nan_bits);
  ExpectFormulaBits(scalar_path, x, rows, m, b.data(), 0);
  ExpectFormulaBits(scalar_path, x, rows, m, nullptr, 3);
  for (size_t r = 0; r < rows; ++r) {  // each row alone (a decode call: the one-row kernels)
    GuardedBuffer one(in, r % 4);
    for (size_t i = 0; i < in; ++i) one[i] = x[r * in + i];
    ExpectFormulaBits(scalar_path, one, 1, m, b.data(), r);
  }
}

TEST_P(LinearQ8Test, ActQ8ScalesAtTheVectorFinishEdges) {
  CheckVectorFinishEdges(IsScalarPath(), 32);
  CheckVectorFinishEdges(IsScalarPath(), 20);
}

// The same bits in every rounding mode the caller may set (the formula evaluated in that mode, its integer
// rounding always to nearest even).
TEST_P(LinearQ8Test, ActQ8MatchesFormulaInEveryRoundingMode) {
  if (!kHasFpControl) GTEST_SKIP() << "no floating-point control register on this platform";
  Rng rng;
  const size_t rows = 5, gs = 32, in = 3 * gs, out = 37;
  GuardedBuffer x(rows * in, 0), b(out, 1);
  TestMatrix m(out, in, gs, 0);
  FillRandom(rng, x, m);
  for (size_t i = 0; i < out; ++i) b[i] = rng.Normal();
  // One row with an odd number of groups of 32 and one with groups of 64 (the one-row kernels).
  GuardedBuffer x32(9 * gs, 2), x64(18 * gs, 3), b1(out, 3);
  TestMatrix m32(out, 9 * gs, gs, 1), m64(out, 18 * gs, 2 * gs, 2);
  FillRandom(rng, x32, m32);
  FillRandom(rng, x64, m64);
  for (size_t i = 0; i < out; ++i) b1[i] = rng.Normal();
  for (int mode = kToNearest; mode <= kTowardZero; ++mode) {
    ScopedFpEnv env(FpEnv{static_cast<Rounding>(mode), false, false});
    ExpectFormulaBits(IsScalarPath(), x, rows, m, b.data(), 0);
    ExpectFormulaBits(IsScalarPath(), x32, 1, m32, b1.data(), 0);
    ExpectFormulaBits(IsScalarPath(), x64, 1, m64, nullptr, 1);
  }
}

// ---- ACT_F32: the header's bound, against the dequantised weights taken exactly.
void CheckActF32(bool scalar_path, Rng& rng, size_t rows, size_t in, size_t out, size_t gs, size_t misalign) {
  GuardedBuffer x(rows * in, misalign % 4), b(out, (misalign + 1) % 4);
  TestMatrix m(out, in, gs, misalign);
  FillRandom(rng, x, m);
  for (size_t i = 0; i < out; ++i) b[i] = rng.Normal();
  const size_t groups = in / gs;
  const double nu = static_cast<double>(in + groups + 9) * kU;
  for (const Impl& impl : Impls(scalar_path, gs)) {
    GuardedBuffer y(rows * out, (misalign + 3) % 4);
    ASSERT_EQ(RunImpl(impl, x.data(), rows, m.w, b.data(), Q8Activations::kF32, y.data(), nullptr, 0), Status::kOk);
    for (size_t r = 0; r < rows; ++r) {
      for (size_t o = 0; o < out; ++o) {
        double exact = b[o], magnitude = std::fabs(b[o]);
        for (size_t i = 0; i < in; ++i) {
          const double wi = static_cast<double>(m.q[o * in + i]) * m.scale[o * groups + i / gs];
          exact += x[r * in + i] * wi;
          magnitude += std::fabs(x[r * in + i] * wi);
        }
        ASSERT_LE(std::fabs(y[r * out + o] - exact),
                  nu / (1 - nu) * magnitude + static_cast<double>(in + 2 * groups + 9) * 0x1p-149)
            << impl.name << " rows=" << rows << " in=" << in << " group=" << gs << " at [" << r << "][" << o << "]";
      }
    }
    ASSERT_TRUE(y.GuardsIntact());
  }
}

TEST_P(LinearQ8Test, ActF32WithinBound) {
  Rng rng;
  size_t n = 0;
  for (size_t gs : {1, 4, 16, 32, 64, 12}) {
    for (size_t groups : {1, 2, 9}) {
      CheckActF32(IsScalarPath(), rng, 1 + n % 5, gs * groups, 1 + (n * 5) % 23, gs, n % 13);
      ++n;
    }
  }
  CheckActF32(IsScalarPath(), rng, 2, 1024, 33, 64, 1);
  // Decode shapes (1 to 3 rows of at least 512 inputs: two rows of W side by side on x86), odd output counts.
  CheckActF32(IsScalarPath(), rng, 1, 512, 7, 32, 2);
  CheckActF32(IsScalarPath(), rng, 3, 768, 5, 64, 3);
  CheckActF32(IsScalarPath(), rng, 1, 4160, 9, 32, 0);
}

// ACT_F32 sums each output on its own: in a call of many outputs it has the bits it has in a call of that output
// alone, whichever block of outputs (two, four or eight rows of W side by side) computed it.
// Each (row, output) of ACT_F32 has the bits of that output computed alone, whichever block computed it: one row
// at a time, or four (x86 AVX-512: two outputs of four rows per pass, an odd last output alone, rows past a
// multiple of four one at a time).
TEST_P(LinearQ8Test, ActF32EachOutputAsAlone) {
  Rng rng;
  for (size_t rows : {1, 2, 4, 5, 9}) {
    for (size_t in : {96, 512, 1088}) {
      const size_t out = 19, gs = 32, groups = in / gs;
      GuardedBuffer x(rows * in, 1);
      TestMatrix m(out, in, gs, 0);
      FillRandom(rng, x, m);
      std::vector<float> all(rows * out), one(rows);
      for (const Impl& impl : Impls(IsScalarPath(), gs)) {
        ASSERT_EQ(RunImpl(impl, x.data(), rows, m.w, nullptr, Q8Activations::kF32, all.data(), nullptr, 0),
                  Status::kOk);
        for (size_t o = 0; o < out; ++o) {
          const edgeattn::Q8Matrix row{m.q + o * in, m.scale.data() + o * groups, 1, in, gs};
          ASSERT_EQ(RunImpl(impl, x.data(), rows, row, nullptr, Q8Activations::kF32, one.data(), nullptr, 0),
                    Status::kOk);
          for (size_t r = 0; r < rows; ++r) {
            ASSERT_EQ(Bits(all[r * out + o]), Bits(one[r]))
                << impl.name << " rows=" << rows << " in=" << in << " at [" << r << "][" << o << "]";
          }
        }
      }
    }
  }
}

TEST_P(LinearQ8Test, ActF32PropagatesNonFinite) {
  const size_t in = 32, out = 3;
  TestMatrix m(out, in, 32, 0);
  std::vector<float> x(in, 1.0f), y(out);
  for (size_t i = 0; i < out * in; ++i) m.q[i] = 1;
  for (size_t o = 0; o < out; ++o) m.scale[o] = 1.0f;
  x[5] = kInf;
  for (const Impl& impl : Impls(IsScalarPath(), 32)) {
    ASSERT_EQ(RunImpl(impl, x.data(), 1, m.w, nullptr, Q8Activations::kF32, y.data(), nullptr, 0), Status::kOk);
    for (float v : y) EXPECT_EQ(v, kInf) << impl.name;
  }
}

// ---- The quantiser.
TEST(LinearQ8Quantize, MatchesTheRuleAndItsBound) {
  Rng rng;
  for (size_t gs : {1, 3, 32, 64}) {
    const size_t out = 5, in = gs * 4;
    std::vector<float> w(out * in), scale(out * 4), expected_scale(out * 4);
    std::vector<int8_t> q(out * in), expected_q(out * in);
    for (size_t i = 0; i < w.size(); ++i) w[i] = rng.Cauchy(1.0f);
    for (size_t i = 0; i < gs; ++i) w[i] = 0.0f;  // an all-zero group
    ASSERT_EQ(edgeattn::Q8Quantize(w.data(), out, in, gs, q.data(), scale.data()), Status::kOk);
    for (size_t g = 0; g < out * 4; ++g) {
      expected_scale[g] = QuantizeGroupRef(&w[g * gs], gs, &expected_q[g * gs]);
      ASSERT_EQ(Bits(scale[g]), Bits(expected_scale[g])) << "group " << g;
      for (size_t i = g * gs; i < (g + 1) * gs; ++i) {
        ASSERT_EQ(q[i], expected_q[i]) << i;
        EXPECT_LE(std::fabs(static_cast<double>(q[i]) * scale[g] - w[i]), scale[g] / 2.0 * (1 + 0x1p-14) + 0x1p-126);
      }
    }
  }
}

// One Q8 implementation: a matrix quantised with group_size = head_dim stores the bits a Q8 KV cache stores for
// the same rows as keys (kv_cache.h's storage layout: a 16-byte header, K [capacity][heads][head_dim], V, then
// the scales [capacity][heads][K's, V's]).
TEST(LinearQ8Quantize, SameBitsAsTheKvCache) {
  Rng rng;
  const size_t rows = 9, dim = 24;
  std::vector<float> w(rows * dim), v(rows * dim, 1.0f);
  for (size_t i = 0; i < w.size(); ++i) w[i] = rng.Normal() * (i % 5 == 0 ? 1e-39f : 1.0f);
  std::vector<int8_t> q(rows * dim);
  std::vector<float> scale(rows);
  ASSERT_EQ(edgeattn::Q8Quantize(w.data(), rows, dim, dim, q.data(), scale.data()), Status::kOk);
  edgeattn::KvCacheDesc d;
  d.type = edgeattn::KvType::kQ8;
  d.num_kv_heads = 1;
  d.head_dim = d.value_dim = dim;
  d.capacity = rows;
  std::vector<unsigned char> storage(edgeattn::KvCacheStorageSize(d));
  edgeattn::KvCache cache;
  ASSERT_EQ(cache.Init(d, storage.data(), storage.size()), Status::kOk);
  ASSERT_EQ(cache.Append(w.data(), v.data(), rows), Status::kOk);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t i = 0; i < dim; ++i) {
      ASSERT_EQ(static_cast<int8_t>(storage[16 + r * dim + i]), q[r * dim + i]) << r << " " << i;
    }
    float cache_scale;
    std::memcpy(&cache_scale, &storage[16 + 2 * rows * dim + r * 8], sizeof(float));
    ASSERT_EQ(Bits(cache_scale), Bits(scale[r])) << r;
  }
}

#if defined(__linux__)
// Bytes placed so that they end where an inaccessible page begins: a kernel that loads one byte past them faults.
class AtPageEnd {
 public:
  explicit AtPageEnd(size_t bytes) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    span_ = (bytes + page - 1) / page * page + page;
    base_ = mmap(nullptr, span_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base_ == MAP_FAILED) {
      base_ = nullptr;
      return;
    }
    unsigned char* guard = static_cast<unsigned char*>(base_) + span_ - page;
    if (mprotect(guard, page, PROT_NONE) != 0) return;
    data_ = guard - bytes;
  }
  ~AtPageEnd() {
    if (base_ != nullptr) munmap(base_, span_);
  }
  AtPageEnd(const AtPageEnd&) = delete;
  AtPageEnd& operator=(const AtPageEnd&) = delete;
  void* data() const { return data_; }

 private:
  void* base_ = nullptr;
  void* data_ = nullptr;
  size_t span_ = 0;
};

// W's values and scales each end at a page after which nothing is readable; x, y and the workspace too. Shapes
// whose last block of the one-row stream kernels ends in half a chunk (an odd count of 32-byte groups), short rows,
// one output. The results are the formula's (ACT_Q8) and each output alone's (ACT_F32).
TEST_P(LinearQ8Test, ReadsNothingPastItsArguments) {
  Rng rng;
  struct Shape {
    size_t rows, in, out, gs;
  };
  for (const Shape& sh : {Shape{1, 288, 3, 32}, Shape{1, 288, 17, 32}, Shape{1, 32, 1, 32}, Shape{1, 96, 7, 32},
                          Shape{1, 576, 5, 64}, Shape{1, 1088, 9, 64}, Shape{2, 288, 3, 32}}) {
    const size_t groups = sh.in / sh.gs;
    AtPageEnd q(sh.out * sh.in), scale(sh.out * groups * 4), x(sh.rows * sh.in * 4), y(sh.rows * sh.out * 4);
    ASSERT_NE(q.data(), nullptr);
    ASSERT_NE(scale.data(), nullptr);
    ASSERT_NE(x.data(), nullptr);
    ASSERT_NE(y.data(), nullptr);
    int8_t* qv = static_cast<int8_t*>(q.data());
    float* sv = static_cast<float*>(scale.data());
    float* xv = static_cast<float*>(x.data());
    float* yv = static_cast<float*>(y.data());
    for (size_t i = 0; i < sh.out * sh.in; ++i) qv[i] = static_cast<int8_t>(rng.Index(256) - 128);
    for (size_t i = 0; i < sh.out * groups; ++i) sv[i] = rng.Uniform(0.0f, 0.02f);
    for (size_t i = 0; i < sh.rows * sh.in; ++i) xv[i] = rng.Normal();
    const Q8Matrix w{qv, sv, sh.out, sh.in, sh.gs};
    const std::vector<float> expected = FormulaQ8(xv, sh.rows, w, nullptr);
    const size_t ws_size = edgeattn::LinearQ8WorkspaceSize(sh.rows, w, Q8Activations::kQ8);
    AtPageEnd ws(ws_size);
    ASSERT_NE(ws.data(), nullptr);
    for (const Impl& impl : Impls(IsScalarPath(), sh.gs)) {
      ASSERT_EQ(RunImpl(impl, xv, sh.rows, w, nullptr, Q8Activations::kQ8, yv, ws.data(), ws_size), Status::kOk);
      for (size_t i = 0; i < expected.size(); ++i) {
        ASSERT_EQ(Bits(yv[i]), Bits(expected[i])) << impl.name << " in=" << sh.in << " out=" << sh.out << " at " << i;
      }
      ASSERT_EQ(RunImpl(impl, xv, sh.rows, w, nullptr, Q8Activations::kF32, yv, nullptr, 0), Status::kOk);
      for (size_t o = 0; o < sh.out; ++o) {
        const Q8Matrix row{qv + o * sh.in, sv + o * groups, 1, sh.in, sh.gs};
        float one[2];
        ASSERT_EQ(RunImpl(impl, xv, sh.rows, row, nullptr, Q8Activations::kF32, one, nullptr, 0), Status::kOk);
        for (size_t r = 0; r < sh.rows; ++r) ASSERT_EQ(Bits(yv[r * sh.out + o]), Bits(one[r])) << impl.name;
      }
    }
  }
}
#endif

// ---- The work split: every part, in reverse order, and every T-way split into ranges of parts write the single
// call's bits.
TEST_P(LinearQ8Test, PartsWriteTheSingleCallsBits) {
  if (IsScalarPath()) GTEST_SKIP() << "the split runs the SIMD entry points";
  Rng rng;
  // One row: 288 -> 2 parts of 144, 513 -> 4 of 144 (the last 81), 2050 -> 15 of 144 (the last 34), 4100 -> 16;
  // three rows: parts of at least 512 outputs.
  for (size_t out : {7, 288, 513, 1300, 2050, 4100, 9000}) {
    const size_t rows = out == 1300 || out == 9000 ? 3 : 1, in = out == 513 || out == 288 ? 288 : 64, gs = 32;
    GuardedBuffer x(rows * in, 1), b(out, 0);
    TestMatrix m(out, in, gs, 0);
    FillRandom(rng, x, m);
    for (size_t i = 0; i < out; ++i) b[i] = rng.Normal();
    for (Q8Activations act : {Q8Activations::kQ8, Q8Activations::kF32}) {
      const size_t ws_size = edgeattn::LinearQ8WorkspaceSize(rows, m.w, act);
      std::vector<unsigned char> ws(ws_size);
      std::vector<float> single(rows * out), split(rows * out, kNaN);
      ASSERT_EQ(edgeattn::LinearQ8(x.data(), rows, m.w, b.data(), act, single.data(), ws.data(), ws_size), Status::kOk);
      const size_t parts = edgeattn::LinearQ8PartCount(rows, m.w);
      ASSERT_GE(parts, 1u);
      ASSERT_LE(parts, 16u);
      for (size_t p = parts; p-- > 0;) {
        ASSERT_EQ(edgeattn::LinearQ8Part(x.data(), rows, m.w, b.data(), act, p, split.data(), ws.data(), ws_size),
                  Status::kOk);
      }
      for (size_t i = 0; i < single.size(); ++i) ASSERT_EQ(Bits(split[i]), Bits(single[i])) << out << " " << i;
      EXPECT_EQ(edgeattn::LinearQ8Part(x.data(), rows, m.w, b.data(), act, parts, split.data(), ws.data(), ws_size),
                Status::kInvalidArgument);
      // Ranges of parts (LinearQ8PartRange) as thread t of T would run them: every T-way split, in reverse order.
      for (size_t threads = 1; threads <= parts + 1; ++threads) {
        std::vector<float> ranges(rows * out, kNaN);
        for (size_t t = threads; t-- > 0;) {
          const size_t first = parts * t / threads, end = parts * (t + 1) / threads;
          if (end == first) continue;
          ASSERT_EQ(edgeattn::LinearQ8PartRange(x.data(), rows, m.w, b.data(), act, first, end - first, ranges.data(),
                                                ws.data(), ws_size),
                    Status::kOk);
        }
        for (size_t i = 0; i < single.size(); ++i) {
          ASSERT_EQ(Bits(ranges[i]), Bits(single[i])) << out << ", " << threads << " threads, " << i;
        }
      }
      // A bad range: kInvalidArgument, nothing written.
      std::vector<float> untouched(rows * out, kNaN);
      const size_t bad_ranges[][2] = {{0, 0}, {0, parts + 1}, {parts, 1}, {1, parts}, {SIZE_MAX, 2}, {2, SIZE_MAX}};
      for (const auto& r : bad_ranges) {
        EXPECT_EQ(edgeattn::LinearQ8PartRange(x.data(), rows, m.w, b.data(), act, r[0], r[1], untouched.data(),
                                              ws.data(), ws_size),
                  Status::kInvalidArgument)
            << r[0] << " + " << r[1];
      }
      for (float v : untouched) ASSERT_NE(v, v) << "written on error";
    }
  }
}

// The AVX-512 quantiser with groups in lanes (linear_q8_kernels.h, Q8QuantizeGroupsAvx512) against the rule of
// lib/common/q8.h group by group: the scale's bits, every q and the offset -128 * sum(q), over runs of 1 .. 40
// groups (sixteen at a time, then a tail) with special groups among random ones: all zero, a subnormal max, a max
// whose scale underflows to 0 (q must be 0), values at +-127 after the division, the largest finite floats.
TEST(LinearQ8Quantizer, GroupsInLanesFollowTheRule) {
  if (!edgeattn::internal::Q8KernelSupported(Q8Kernel::kAvx512Vnni)) GTEST_SKIP() << "no AVX512-VNNI on this CPU";
  Rng rng;
  for (size_t gs : {32, 64}) {
    for (size_t groups : {1, 5, 15, 16, 17, 33, 40}) {
      std::vector<float> x(groups * gs);
      for (float& v : x) v = rng.Normal() * 4.0f;
      for (size_t g = 0; g < groups; ++g) {
        float* xg = x.data() + g * gs;
        for (size_t i = 0; i < gs; ++i) {
          switch (g % 7) {
            case 1:
              xg[i] = 0.0f;
              break;
            case 2:
              xg[i] = rng.Normal() * 0x1p-140f;
              break;
            case 3:
              xg[i] = -0x1p-149f * static_cast<float>(i % 3);
              break;  // max 2^-148: its scale rounds to 0
            case 4:
              xg[i] = (i % 2 ? -1.0f : 1.0f) * 3.0f;
              break;
            case 5:
              xg[i] = (i % 3 ? -1.0f : 1.0f) * 3.4028235e38f;
              break;
            default:
              break;
          }
        }
      }
      std::vector<int8_t> q(groups * gs, 99);
      std::vector<float> scale(groups + 1, kNaN);
      std::vector<int32_t> offset(groups + 1, 12345);
      edgeattn::internal::Q8QuantizeGroupsAvx512(x.data(), groups, gs, q.data(), scale.data(), offset.data());
      for (size_t g = 0; g < groups; ++g) {
        int8_t expect[64];
        const float expect_scale = edgeattn::internal::Q8QuantizeGroup(x.data() + g * gs, gs, expect);
        int32_t sum = 0;
        for (size_t i = 0; i < gs; ++i) {
          ASSERT_EQ(q[g * gs + i], expect[i]) << gs << " x " << groups << ", group " << g << ", element " << i;
          sum += expect[i];
        }
        ASSERT_EQ(Bits(scale[g]), Bits(expect_scale)) << gs << " x " << groups << ", group " << g;
        ASSERT_EQ(offset[g], -128 * sum) << gs << " x " << groups << ", group " << g;
      }
      EXPECT_NE(scale[groups], scale[groups]) << "written past the last group";
      EXPECT_EQ(offset[groups], 12345) << "written past the last group";
    }
  }
}

// The part counts of linear_q8.h's rule, worked by hand: one row, the largest power of two P <= 16 with
// out / P >= 128, parts of ceil(out / P) rounded up to 16 outputs; more rows, parts of at least 512 outputs.
TEST(LinearQ8Split, PartCountsFollowTheHeadersRule) {
  const struct {
    size_t rows, out, parts;
  } cases[] = {{1, 1, 1},   {1, 255, 1},  {1, 256, 2},   {1, 288, 2},    {1, 511, 2},    {1, 512, 4},
               {1, 768, 4}, {1, 1024, 8}, {1, 2048, 16}, {1, 2050, 15},  {1, 32000, 16}, {2, 288, 1},
               {2, 768, 2}, {3, 1024, 2}, {64, 4096, 8}, {64, 32000, 16}};
  std::vector<int8_t> q(32000 * 32, 1);
  std::vector<float> scale(32000, 1.0f);
  for (const auto& c : cases) {
    const edgeattn::Q8Matrix w{q.data(), scale.data(), c.out, 32, 32};
    EXPECT_EQ(edgeattn::LinearQ8PartCount(c.rows, w), c.parts) << c.rows << " x " << c.out;
  }
}

TEST_P(LinearQ8Test, TransposedPartsWriteTheSingleCallsBits) {
  if (IsScalarPath()) GTEST_SKIP() << "the split runs the SIMD entry points";
  Rng rng;
  for (size_t out : {5, 64, 67, 1031}) {
    for (size_t rows : {1, 6}) {
      const size_t in = 37;
      std::vector<float> x(rows * in), w(out * in), b(out), single(rows * out), split(rows * out, kNaN);
      for (float& v : x) v = rng.Normal();
      for (float& v : w) v = rng.Normal();
      for (float& v : b) v = rng.Normal();
      ASSERT_EQ(edgeattn::LinearTransposed(x.data(), rows, in, w.data(), b.data(), out, single.data()), Status::kOk);
      const size_t parts = edgeattn::LinearTransposedPartCount(rows, in, out);
      ASSERT_GE(parts, 1u);
      for (size_t p = parts; p-- > 0;) {
        ASSERT_EQ(edgeattn::LinearTransposedPart(x.data(), rows, in, w.data(), b.data(), out, p, split.data()),
                  Status::kOk);
      }
      for (size_t i = 0; i < single.size(); ++i) ASSERT_EQ(Bits(split[i]), Bits(single[i])) << out << " " << i;
      EXPECT_EQ(edgeattn::LinearTransposedPart(x.data(), rows, in, w.data(), b.data(), out, parts, split.data()),
                Status::kInvalidArgument);
    }
  }
  EXPECT_EQ(edgeattn::LinearTransposedPartCount(0, 4, 4), 0u);
  EXPECT_EQ(edgeattn::LinearTransposedPartCount(1, 4, 1024), 16u);
}

TEST(LinearQ8Fixed, RunsTheRuntimeKernel) {
  Rng rng;
  static edgeattn::FixedLinearQ8<2, 64, 20, 32> fixed;
  TestMatrix m(20, 64, 32, 0);
  float x[2][64], y[2][20];
  GuardedBuffer xb(2 * 64, 0);
  FillRandom(rng, xb, m);
  for (size_t i = 0; i < 128; ++i) x[i / 64][i % 64] = xb[i];
  ASSERT_EQ(fixed.Run(x, m.w, nullptr, Q8Activations::kQ8, y), Status::kOk);
  const std::vector<float> expected = FormulaQ8(&x[0][0], 2, m.w, nullptr);
  for (size_t i = 0; i < 40; ++i) EXPECT_EQ(Bits(y[i / 20][i % 20]), Bits(expected[i]));
  Q8Matrix wrong = m.w;
  wrong.out_features = 19;
  EXPECT_EQ(fixed.Run(x, wrong, nullptr, Q8Activations::kQ8, y), Status::kInvalidShape);
}

// Both modes against float linear_transposed on the float weights the int8 ones came from, N(0, 1) data: the
// relative RMS error over all outputs (the quantisation's cost, reported in docs/performance.md), printed, and
// held to loose ceilings (measured: 0.54% and 0.76% at group 32, 0.59% and 0.87% at 64, in = 1024).
TEST(LinearQ8Accuracy, ErrorAgainstFloatWeightsOnNormalData) {
  Rng rng;
  const size_t rows = 8, in = 1024, out = 256;
  for (size_t gs : {32, 64}) {
    std::vector<float> x(rows * in), w(out * in), scale(out * in / gs), y_float(rows * out), y_q8(rows * out),
        y_f32(rows * out);
    std::vector<int8_t> q(out * in);
    for (float& v : x) v = rng.Normal();
    for (float& v : w) v = rng.Normal();
    ASSERT_EQ(edgeattn::Q8Quantize(w.data(), out, in, gs, q.data(), scale.data()), Status::kOk);
    const Q8Matrix m{q.data(), scale.data(), out, in, gs};
    std::vector<unsigned char> ws(edgeattn::LinearQ8WorkspaceSize(rows, m, Q8Activations::kQ8));
    ASSERT_EQ(edgeattn::LinearTransposed(x.data(), rows, in, w.data(), nullptr, out, y_float.data()), Status::kOk);
    ASSERT_EQ(edgeattn::LinearQ8(x.data(), rows, m, nullptr, Q8Activations::kQ8, y_q8.data(), ws.data(), ws.size()),
              Status::kOk);
    ASSERT_EQ(edgeattn::LinearQ8(x.data(), rows, m, nullptr, Q8Activations::kF32, y_f32.data(), nullptr, 0),
              Status::kOk);
    double norm = 0, err_q8 = 0, err_f32 = 0;
    for (size_t i = 0; i < y_float.size(); ++i) {
      norm += static_cast<double>(y_float[i]) * y_float[i];
      err_q8 += (static_cast<double>(y_q8[i]) - y_float[i]) * (static_cast<double>(y_q8[i]) - y_float[i]);
      err_f32 += (static_cast<double>(y_f32[i]) - y_float[i]) * (static_cast<double>(y_f32[i]) - y_float[i]);
    }
    const double rel_q8 = std::sqrt(err_q8 / norm), rel_f32 = std::sqrt(err_f32 / norm);
    // %lu, not %zu: the boards' newlib-nano printf has no z length modifier (it printed "in=zu").
    std::printf("linear_q8 vs float weights, N(0,1), in=%lu, group=%lu: ACT_F32 %.3g, ACT_Q8 %.3g (relative RMS)\n",
                static_cast<unsigned long>(in), static_cast<unsigned long>(gs), rel_f32, rel_q8);
    RecordProperty("group" + std::to_string(gs) + "_act_f32", std::to_string(rel_f32));
    RecordProperty("group" + std::to_string(gs) + "_act_q8", std::to_string(rel_q8));
    EXPECT_LT(rel_f32, 0.01);
    EXPECT_LT(rel_q8, 0.015);
    EXPECT_GT(rel_q8, rel_f32);  // quantising x adds error: the modes differ
  }
}

// ---- Bad inputs: each error of the contract, in the common order, with nothing written.
class LinearQ8Errors : public PathTest {
 protected:
  static constexpr size_t kRows = 2, kIn = 8, kOut = 3, kGroup = 4;
  void SetUp() override {
    PathTest::SetUp();
    for (size_t i = 0; i < kOut * kIn; ++i) q[i] = static_cast<int8_t>(i);
    for (size_t i = 0; i < kRows * kIn; ++i) x[i] = static_cast<float>(i);
    w.q = q;
    w.scale = scale;
    w.out_features = kOut;
    w.in_features = kIn;
    w.group_size = kGroup;
    ws.assign(edgeattn::LinearQ8WorkspaceSize(kRows, w, Q8Activations::kQ8), 0);
  }
  Status Call(const float* xp, size_t rows, const Q8Matrix& m, const float* bias, Q8Activations act, float* yp,
              void* wsp, size_t ws_size) {
    return IsScalarPath() ? edgeattn::scalar::LinearQ8(xp, rows, m, bias, act, yp, wsp, ws_size)
                          : edgeattn::LinearQ8(xp, rows, m, bias, act, yp, wsp, ws_size);
  }
  Status Call(Q8Activations act = Q8Activations::kQ8) { return Call(x, kRows, w, bias, act, y, ws.data(), ws.size()); }
  void ExpectUntouched() {
    for (float v : y) ASSERT_EQ(v, 7.0f);
    for (size_t i = 0; i < kRows * kIn; ++i) ASSERT_EQ(x[i], static_cast<float>(i));
  }
  int8_t q[kOut * kIn];
  float scale[kOut * kIn / kGroup] = {1, 1, 1, 1, 1, 1};
  float x[kRows * kIn];
  float bias[kOut] = {0.5f, 0.25f, 0.125f};
  float y[kRows * kOut] = {7, 7, 7, 7, 7, 7};
  Q8Matrix w;
  std::vector<unsigned char> ws;
};
EDGEATTN_INSTANTIATE_PATHS(LinearQ8Errors);

TEST_P(LinearQ8Errors, NullPointer) {
  EXPECT_EQ(Call(nullptr, kRows, w, bias, Q8Activations::kQ8, y, ws.data(), ws.size()), Status::kNullPointer);
  EXPECT_EQ(Call(x, kRows, w, bias, Q8Activations::kQ8, nullptr, ws.data(), ws.size()), Status::kNullPointer);
  Q8Matrix m = w;
  m.q = nullptr;
  EXPECT_EQ(Call(x, kRows, m, bias, Q8Activations::kQ8, y, ws.data(), ws.size()), Status::kNullPointer);
  m = w;
  m.scale = nullptr;
  EXPECT_EQ(Call(x, kRows, m, bias, Q8Activations::kQ8, y, ws.data(), ws.size()), Status::kNullPointer);
  // The workspace pointer is checked with its size: null with enough bytes claimed.
  EXPECT_EQ(Call(x, kRows, w, bias, Q8Activations::kQ8, y, nullptr, ws.size()), Status::kNullPointer);
  // Null before shape: a null x with rows 0.
  EXPECT_EQ(Call(nullptr, 0, w, bias, Q8Activations::kQ8, y, ws.data(), ws.size()), Status::kNullPointer);
  ExpectUntouched();
}

TEST_P(LinearQ8Errors, InvalidShape) {
  EXPECT_EQ(Call(x, 0, w, bias, Q8Activations::kQ8, y, ws.data(), ws.size()), Status::kInvalidShape);
  const size_t bad[][3] = {{0, kIn, kGroup}, {kOut, 0, kGroup},           {kOut, kIn, 0},          {kOut, kIn, 3},
                           {kOut, kIn, 16},  {SIZE_MAX / 4, kIn, kGroup}, {kOut, 65537 * 2, 65537}};
  for (const auto& shape : bad) {
    Q8Matrix m = w;
    m.out_features = shape[0], m.in_features = shape[1], m.group_size = shape[2];
    EXPECT_EQ(Call(x, kRows, m, bias, Q8Activations::kQ8, y, ws.data(), ws.size()), Status::kInvalidShape)
        << shape[0] << " " << shape[1] << " " << shape[2];
    EXPECT_EQ(Call(x, kRows, m, bias, Q8Activations::kF32, y, nullptr, 0), Status::kInvalidShape);
    EXPECT_EQ(edgeattn::LinearQ8WorkspaceSize(kRows, m, Q8Activations::kQ8), 0u);
    EXPECT_EQ(edgeattn::LinearQ8PartCount(kRows, m), 0u);
  }
  EXPECT_EQ(Call(x, SIZE_MAX / 8, w, bias, Q8Activations::kQ8, y, ws.data(), ws.size()), Status::kInvalidShape);
  // Shape before argument: an unknown act with rows 0.
  EXPECT_EQ(Call(x, 0, w, bias, static_cast<Q8Activations>(2), y, ws.data(), ws.size()), Status::kInvalidShape);
  ExpectUntouched();
}

TEST_P(LinearQ8Errors, InvalidArgument) {
  EXPECT_EQ(Call(static_cast<Q8Activations>(2)), Status::kInvalidArgument);
  EXPECT_EQ(Call(static_cast<Q8Activations>(-1)), Status::kInvalidArgument);
  float negative_nan, signaling_nan;
  const uint32_t negative_nan_bits = 0xFFC00000u, signaling_nan_bits = 0x7F800001u;
  std::memcpy(&negative_nan, &negative_nan_bits, sizeof negative_nan);
  std::memcpy(&signaling_nan, &signaling_nan_bits, sizeof signaling_nan);
  for (float bad : {kNaN, kInf, -kInf, negative_nan, signaling_nan}) {
    x[kIn + 5] = bad;
    EXPECT_EQ(Call(Q8Activations::kQ8), Status::kInvalidArgument);
    // Argument before workspace size: a non-finite x with no workspace at all.
    EXPECT_EQ(Call(x, kRows, w, bias, Q8Activations::kQ8, y, nullptr, 0), Status::kInvalidArgument);
    x[kIn + 5] = static_cast<float>(kIn + 5);
  }
  ExpectUntouched();
}

TEST_P(LinearQ8Errors, WorkspaceTooSmall) {
  EXPECT_EQ(Call(x, kRows, w, bias, Q8Activations::kQ8, y, ws.data(), ws.size() - 1), Status::kWorkspaceTooSmall);
  EXPECT_EQ(Call(x, kRows, w, bias, Q8Activations::kQ8, y, nullptr, 0), Status::kWorkspaceTooSmall);
  // Workspace before overlap.
  EXPECT_EQ(Call(x, kRows, w, bias, Q8Activations::kQ8, x + 1, ws.data(), 1), Status::kWorkspaceTooSmall);
  ExpectUntouched();
  EXPECT_EQ(edgeattn::LinearQ8WorkspaceSize(kRows, w, Q8Activations::kF32), 0u);
  EXPECT_EQ(ws.size(), kRows * kIn + kRows * (kIn / kGroup) * 8 + 5184 + 16 * 512);
}

TEST_P(LinearQ8Errors, Overlap) {
  float big[64];
  for (float& v : big) v = 7.0f;
  EXPECT_EQ(Call(x, kRows, w, bias, Q8Activations::kQ8, x + 3, ws.data(), ws.size()), Status::kOverlap);
  EXPECT_EQ(Call(x, kRows, w, bias, Q8Activations::kQ8, bias + 1, ws.data(), ws.size()), Status::kOverlap);
  EXPECT_EQ(Call(x, kRows, w, bias, Q8Activations::kQ8, scale + 1, ws.data(), ws.size()), Status::kOverlap);
  EXPECT_EQ(Call(x, kRows, w, bias, Q8Activations::kF32, reinterpret_cast<float*>(q + 4), nullptr, 0),
            Status::kOverlap);
  std::vector<float> ws_floats(ws.size() / 4 + 8, 7.0f);
  EXPECT_EQ(Call(x, kRows, w, bias, Q8Activations::kQ8, ws_floats.data() + 2, ws_floats.data(), ws.size()),
            Status::kOverlap);
  for (float v : ws_floats) ASSERT_EQ(v, 7.0f);
  for (float v : bias) ASSERT_NE(v, 7.0f);
  for (int i = 0; i < 6; ++i) ASSERT_EQ(scale[i], 1.0f);
  ExpectUntouched();
}

TEST(LinearQ8QuantizeErrors, EveryErrorWritesNothing) {
  float w[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  int8_t q[8] = {9, 9, 9, 9, 9, 9, 9, 9};
  float scale[4] = {9, 9, 9, 9};
  EXPECT_EQ(edgeattn::Q8Quantize(nullptr, 2, 4, 2, q, scale), Status::kNullPointer);
  EXPECT_EQ(edgeattn::Q8Quantize(w, 2, 4, 2, nullptr, scale), Status::kNullPointer);
  EXPECT_EQ(edgeattn::Q8Quantize(w, 2, 4, 2, q, nullptr), Status::kNullPointer);
  EXPECT_EQ(edgeattn::Q8Quantize(w, 0, 4, 2, q, scale), Status::kInvalidShape);
  EXPECT_EQ(edgeattn::Q8Quantize(w, 2, 0, 2, q, scale), Status::kInvalidShape);
  EXPECT_EQ(edgeattn::Q8Quantize(w, 2, 4, 0, q, scale), Status::kInvalidShape);
  EXPECT_EQ(edgeattn::Q8Quantize(w, 2, 4, 3, q, scale), Status::kInvalidShape);
  EXPECT_EQ(edgeattn::Q8Quantize(w, SIZE_MAX / 2, 4, 2, q, scale), Status::kInvalidShape);
  w[6] = kNaN;
  EXPECT_EQ(edgeattn::Q8Quantize(w, 2, 4, 2, q, scale), Status::kInvalidArgument);
  w[6] = -kInf;
  EXPECT_EQ(edgeattn::Q8Quantize(w, 2, 4, 2, q, scale), Status::kInvalidArgument);
  w[6] = 7;
  EXPECT_EQ(edgeattn::Q8Quantize(w, 2, 4, 2, reinterpret_cast<int8_t*>(w + 7), scale), Status::kOverlap);
  EXPECT_EQ(edgeattn::Q8Quantize(w, 2, 4, 2, q, w + 5), Status::kOverlap);
  EXPECT_EQ(edgeattn::Q8Quantize(w, 2, 4, 2, q, reinterpret_cast<float*>(q + 4)), Status::kOverlap);
  for (int8_t v : q) EXPECT_EQ(v, 9);
  for (float v : scale) EXPECT_EQ(v, 9.0f);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(w[i], static_cast<float>(i + 1));
}

}  // namespace
}  // namespace edgeattn_test
