// SPDX-License-Identifier: Apache-2.0
// GELU (erf and tanh forms) and SiLU over every float32 bit pattern, on every path, against float64 references
// (tests/activation_reference.h says why libm in double is accurate enough). Asserts activation.h's contract and
// reports the max ULP error per function and path. Part of the ctest label "long".
//
// The reference is the expensive part (erfc and exp in double), so it is computed once per input and shared by
// all paths (kept rounded to float for a fast vectorized first check, and computed again for the few blocks of
// inputs that the first check sends to the exact one: BlockNeedsCheck), and where a short formula is exact to far below
// 2^-43 relative it replaces libm:
//   |x| < 2^-25:  f(x) = x/2 + c x^2 + O(x^4) (c = 1/sqrt(2 pi) for GELU erf, sqrt(2/pi) for GELU tanh,
//                 1/4 for SiLU), relative truncation error below x^2 < 2^-50;
//   x >= kLargeX: f(x) = x to within 2^-64 relative;
//   x <= kFlushX: |f(x)| < FLT_MIN, only the flush rule applies.
// The rest, 2^-25 <= |x| < 16 (120 for SiLU), is about an eighth of all inputs.
#include <gtest/gtest.h>
#include <stdint.h>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "tests/activation_reference.h"
#include "tests/long_test_paths.h"
#include "tests/test_util.h"

namespace edgeattn_test {
namespace {

constexpr Activation kSwept[] = {Activation::kGeluErf, Activation::kGeluTanh, Activation::kSilu};
constexpr size_t kNumSwept = sizeof(kSwept) / sizeof(kSwept[0]);

// f(x) = x exactly at float precision from here up: 1 - f(x)/x = Phi(-x) < 7e-58 (GELU erf),
// 1/(1 + e^z) < e^-92 (GELU tanh, z > 92), 1/(1 + e^x) < e^-45 = 2^-64.9 (SiLU).
constexpr float kLargeX[kNumSwept] = {16.0f, 16.0f, 45.0f};
// |f(x)| < FLT_MIN / 2 at and below these (GELU erf 2e-50 at -15, GELU tanh 2e-48 at -11, SiLU 9e-51 at -120):
// only the flush rule applies, and the reference is not needed.
constexpr float kFlushX[kNumSwept] = {-15.0f, -11.0f, -120.0f};
constexpr double kSmallX = 0x1p-25;
constexpr double kSeriesC2[kNumSwept] = {0.39894228040143267794, 0.79788456080286535588 * 0.5, 0.25};

struct PathResult {
  double max_ulp = 0;
  float worst_input = 0;
  uint64_t violations = 0;
  std::vector<std::string> examples;
  void Merge(const PathResult& other) {
    if (other.max_ulp > max_ulp) {
      max_ulp = other.max_ulp;
      worst_input = other.worst_input;
    }
    violations += other.violations;
    for (const std::string& e : other.examples) {
      if (examples.size() < 5) examples.push_back(e);
    }
  }
};

// The contract for one input and function, packed into one double: a normal-range value is the reference (ULP bound);
// NaN: NaN expected; +inf: +inf expected; +-0: the result may flush (|y| <= FLT_MIN, zero or the sign of the 0). Inputs
// +-0 and -inf, whose exact bits the unit test checks, are checked here by the flush rule.
double PackedExpectation(size_t f, float x) {
  if (std::isnan(x)) return kNaN;
  if (x == kInf) return kInf;
  if (x == -kInf || x <= kFlushX[f]) return -0.0;
  const double xd = static_cast<double>(x);
  double exact;
  if (x >= kLargeX[f]) {
    exact = xd;
  } else if (std::fabs(xd) < kSmallX) {
    exact = xd * (0.5 + kSeriesC2[f] * xd);
  } else {
    exact = ActivationReference(kSwept[f], xd);
  }
  if (std::fabs(static_cast<float>(exact)) < FLT_MIN) return std::signbit(exact) ? -0.0 : 0.0;
  return exact;
}

// Whether got meets the contract's special rules for an expectation that is not a finite nonzero value: +-0
// (flushing allowed: |got| <= FLT_MIN, zero or the sign of the 0), NaN or +inf.
inline bool SpecialOk(float got, double exact) {
  if (exact == 0.0) return std::fabs(got) <= FLT_MIN && (got == 0.0f || std::signbit(got) == std::signbit(exact));
  return std::isnan(exact) ? std::isnan(got) : got == kInf;
}

// Checks inputs [begin, end) of function f one by one into r, each against its reference computed again: the
// largest ULP error and its input, violations and the first examples.
void CheckInputs(const float* in, const float* out, size_t f, size_t begin, size_t end, double bound, PathResult& r) {
  for (size_t i = begin; i < end; ++i) {
    const float got = out[i];
    const double exact = PackedExpectation(f, in[i]);
    bool ok;
    if (exact != 0.0 && std::isfinite(exact)) {
      const double ulp = std::fabs(static_cast<double>(got) - exact) * InverseUlp(exact);
      ok = ulp <= bound;
      if (ulp > r.max_ulp) {
        r.max_ulp = ulp;
        r.worst_input = in[i];
      }
    } else {
      ok = SpecialOk(got, exact);
    }
    if (!ok && ++r.violations <= 5) {
      r.examples.push_back(std::string(ActivationName(kSwept[f])) + "(" + std::to_string(in[i]) +
                           ") = " + std::to_string(got) + ", reference " + std::to_string(exact));
    }
  }
}

// Whether any of n results may break the contract or have an error above limit + 0.5 ULP, from the expectations
// rounded to float (rounded = float(PackedExpectation)), in 32-bit integer operations only, which the compiler
// vectorizes. For a normal expectation, got in the same binade (sign and exponent) as rounded is d = |bits(got) -
// bits(rounded)| ULPs of rounded's binade from it, and rounded is within half a ULP of the exact value, so the error
// is at most d + 0.5: d <= limit means no new largest error and no violation. got in another binade (rare) is
// flagged. The special expectations +-0, NaN and +inf are checked exactly, by their rules on got's bits.
// On x86 the loop is also compiled for AVX2 and AVX-512 and the CPU's best is picked at load time (the test's own
// code is built for the baseline, SSE2, where this check took a quarter of the sweep's time).
EDGEATTN_TEST_WIDE_CLONES bool BlockNeedsCheck(const float* out, const float* rounded, size_t n, int32_t limit) {
  uint32_t flagged = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t g, e;
    std::memcpy(&g, &out[i], sizeof(g));
    std::memcpy(&e, &rounded[i], sizeof(e));
    const uint32_t e_exponent = e & 0x7F800000u, e_magnitude = e & 0x7FFFFFFFu, g_magnitude = g & 0x7FFFFFFFu;
    const uint32_t normal = (e_exponent != 0) & (e_exponent != 0x7F800000u);
    const int32_t d = static_cast<int32_t>(g_magnitude) - static_cast<int32_t>(e_magnitude);
    const uint32_t normal_flag = (((g ^ e) >> 23) != 0) | ((d > limit) | (-d > limit));
    const uint32_t zero_ok = (g_magnitude <= 0x00800000u) & ((g_magnitude == 0) | (((g ^ e) >> 31) == 0));
    const uint32_t nan_ok = g_magnitude > 0x7F800000u, inf_ok = g == 0x7F800000u;
    const uint32_t special_ok = ((e_magnitude == 0) & zero_ok) | ((e_magnitude > 0x7F800000u) & nan_ok) |
                                ((e_magnitude == 0x7F800000u) & inf_ok);
    flagged |= (normal & normal_flag) | ((normal ^ 1) & (special_ok ^ 1));
  }
  return flagged != 0;
}

// The inputs of one sweep: count bit patterns, the i-th given by bits(i); functions[f] says which of kSwept run.
struct SweepResult {
  std::vector<PathResult> results;  // [path][function]
  std::vector<double> path_seconds;
};

template <class Bits>
SweepResult SweepInputs(const std::vector<Path>& paths, uint64_t count, Bits bits, const bool (&functions)[kNumSwept]) {
  // 20 bytes per input: 5 MiB, which stays in the last-level cache while every path reads it.
  constexpr size_t kChunk = EDGEATTN_TEST_SMALL_MEMORY ? size_t{1} << 12 : size_t{1} << 18;
  SweepResult sweep;
  sweep.results.resize(paths.size() * kNumSwept);
  sweep.path_seconds.assign(paths.size(), 0.0);
  std::vector<float> in(kChunk), out(kChunk);
  std::vector<float> rounded(kChunk * kNumSwept);  // [function][input]: float(PackedExpectation)
  for (uint64_t base = 0; base < count; base += kChunk) {
    const size_t chunk = static_cast<size_t>(std::min<uint64_t>(kChunk, count - base));
    ParallelFor(chunk, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        const uint32_t b = bits(base + i);
        std::memcpy(&in[i], &b, sizeof(float));
        for (size_t f = 0; f < kNumSwept; ++f) {
          if (functions[f]) rounded[f * kChunk + i] = static_cast<float>(PackedExpectation(f, in[i]));
        }
      }
    });
    for (size_t p = 0; p < paths.size(); ++p) {
      const auto path_start = std::chrono::steady_clock::now();
      ScopedTarget target(paths[p]);  // process-wide: every worker runs the same path
      const ActivationApi& api = ActivationApiFor(paths[p]);
      TestMutex merge;
      double largest[kNumSwept];  // each function's largest error on this path so far
      for (size_t f = 0; f < kNumSwept; ++f) largest[f] = sweep.results[p * kNumSwept + f].max_ulp;
      ParallelFor(chunk, [&](size_t begin, size_t end) {
        PathResult r[kNumSwept];
        // Blocks of kBlock inputs, each evaluated and checked while it is in the L1 cache: a branch-free pass over
        // the block (BlockNeedsCheck), and only a block that may raise the largest error so far or breaks the
        // contract is checked again input by input, which records the worst input and the examples. The same
        // results as checking each input in detail.
        constexpr size_t kBlock = 1024;
        for (size_t block = begin; block < end; block += kBlock) {
          const size_t block_end = std::min(end, block + kBlock);
          for (size_t f = 0; f < kNumSwept; ++f) {
            if (!functions[f]) continue;
            const Activation act = kSwept[f];
            if (api.apply(in.data() + block, out.data() + block, block_end - block, act) != Status::kOk) {
              r[f].violations += block_end - block;
              if (r[f].examples.size() < 5) r[f].examples.push_back("status not OK");
            }
            const double bound = MaxUlp(act);
            // The largest error so far on this path, or the bound if lower: a block whose errors may exceed it
            // is checked in detail.
            const double limit = std::floor(std::min(std::max(largest[f], r[f].max_ulp), bound) - 0.5);
            if (!BlockNeedsCheck(out.data() + block, rounded.data() + f * kChunk + block, block_end - block,
                                 static_cast<int32_t>(std::max(limit, -1.0)))) {
              continue;
            }
            CheckInputs(in.data(), out.data(), f, block, block_end, bound, r[f]);
          }
        }
        ScopedLock lock(merge);
        for (size_t f = 0; f < kNumSwept; ++f) sweep.results[p * kNumSwept + f].Merge(r[f]);
      });
      sweep.path_seconds[p] += std::chrono::duration<double>(std::chrono::steady_clock::now() - path_start).count();
    }
  }
  return sweep;
}

// Prints and asserts one sweep's results; what says which inputs it covered.
void Report(const std::vector<Path>& paths, const SweepResult& sweep, const bool (&functions)[kNumSwept],
            const std::string& what, const std::string& property_suffix) {
  for (size_t p = 0; p < paths.size(); ++p) {
    for (size_t f = 0; f < kNumSwept; ++f) {
      if (!functions[f]) continue;
      const PathResult& r = sweep.results[p * kNumSwept + f];
      const char* name = ActivationName(kSwept[f]);
      std::printf("%-9s %s, %-10s max %.4f ULP (at x = %.9g), %s contract violations\n", name, what.c_str(),
                  TargetName(paths[p]), r.max_ulp, static_cast<double>(r.worst_input),
                  std::to_string(r.violations).c_str());
      ::testing::Test::RecordProperty(std::string("max_ulp_") + name + "_" + TargetName(paths[p]) + property_suffix,
                                      std::to_string(r.max_ulp));
      EXPECT_EQ(r.violations, 0u) << name << " " << TargetName(paths[p]) << " " << what;
      for (const std::string& e : r.examples) ADD_FAILURE() << TargetName(paths[p]) << ": " << e;
    }
  }
  std::printf("per path, evaluating and checking:");
  for (size_t p = 0; p < paths.size(); ++p) std::printf(" %s %.1f s", TargetName(paths[p]), sweep.path_seconds[p]);
  std::printf("\n");
}

TEST(ActivationExhaustive, AllFloatsAllPaths) {
  // EDGEATTN_EXP_SWEEP_STRIDE = 1: every bit pattern; emulated builds take every n-th (n odd).
  constexpr uint64_t kStride = EDGEATTN_EXP_SWEEP_STRIDE;
  constexpr uint64_t kInputs = ((uint64_t{1} << 32) + kStride - 1) / kStride;
  const std::vector<Path> paths = LongTestPaths();
  const bool all[kNumSwept] = {true, true, true};
  const auto start = std::chrono::steady_clock::now();
  const SweepResult sweep = SweepInputs(
      paths, kInputs, [](uint64_t i) { return static_cast<uint32_t>(i * kStride); }, all);
  Report(paths, sweep, all,
         kStride == 1 ? "exhaustive (all 2^32 inputs)" : "dense sample (stride " + std::to_string(kStride) + ")", "");
#if !EDGEATTN_TEST_SMALL_MEMORY
  // A sample (under QEMU) finds where a path's error peaks, not the peak itself: every input of each binade (one
  // sign, one exponent: 2^23 inputs) that holds a path's worst sampled input is swept too, for that function on
  // every path (ARMv7 NEON's GELU erf spends 5.07 of its 6 ULP in the sample). Not on the 4 MB boards, whose
  // stride is 16x coarser: one binade there is 8 times their whole sample.
  for (size_t f = 0; kStride > 1 && f < kNumSwept; ++f) {
    std::vector<uint32_t> binades;  // sign and exponent: the top 9 bits
    for (size_t p = 0; p < paths.size(); ++p) {
      if (sweep.results[p * kNumSwept + f].max_ulp == 0) continue;
      uint32_t b;
      std::memcpy(&b, &sweep.results[p * kNumSwept + f].worst_input, sizeof(b));
      if (std::find(binades.begin(), binades.end(), b >> 23) == binades.end()) binades.push_back(b >> 23);
    }
    bool one[kNumSwept] = {false, false, false};
    one[f] = true;
    for (uint32_t binade : binades) {
      const SweepResult full = SweepInputs(
          paths, uint64_t{1} << 23, [binade](uint64_t i) { return (binade << 23) | static_cast<uint32_t>(i); }, one);
      const int exponent = static_cast<int>(binade & 0xFF) - 127;
      Report(paths, full, one,
             "every input of the binade " + std::string(binade >> 8 ? "-" : "+") + "[2^" + std::to_string(exponent) +
                 ", 2^" + std::to_string(exponent + 1) + ")",
             "_binade_" + std::to_string(binade));
    }
  }
#endif
  std::printf("%.1f s in all (wall clock)\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

}  // namespace
}  // namespace edgeattn_test
