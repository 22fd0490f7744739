// SPDX-License-Identifier: Apache-2.0
// GELU (erf and tanh forms) and SiLU over every float32 bit pattern, on every path, against float64 references
// (tests/activation_reference.h says why libm in double is accurate enough). Asserts activation.h's contract and
// reports the max ULP error per function and path. Part of the ctest label "long".
//
// The reference is the expensive part (erfc and exp in double), so it is computed once per input and shared by
// all paths, and where a short formula is exact to far below 2^-43 relative it replaces libm:
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

// The contract for one input and function, packed into one double (8 bytes per input and function: the sweep is
// bound by memory traffic): a normal-range value is the reference (ULP bound); NaN: NaN expected; +inf: +inf
// expected; +-0: the result may flush (|y| <= FLT_MIN, zero or the sign of the 0). Inputs +-0 and -inf, whose exact
// bits the unit test checks, are checked here by the flush rule.
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

// 1 / ULP of exact rounded to float (|exact| >= FLT_MIN) from its bits: frexp and ldexp would cost more than the
// rest of the check.
inline double InverseUlp(double exact) {
  uint32_t bits;
  const float rounded = std::fabs(static_cast<float>(exact));
  std::memcpy(&bits, &rounded, sizeof(bits));
  const uint64_t inverse_bits = static_cast<uint64_t>(1023 + 23 + 127 - (bits >> 23)) << 52;  // 2^(23 - e)
  double inverse;
  std::memcpy(&inverse, &inverse_bits, sizeof(inverse));
  return inverse;
}

// The inputs of one sweep: count bit patterns, the i-th given by bits(i); functions[f] says which of kSwept run.
struct SweepResult {
  std::vector<PathResult> results;  // [path][function]
  std::vector<double> path_seconds;
};

template <class Bits>
SweepResult SweepInputs(const std::vector<Path>& paths, uint64_t count, Bits bits, const bool (&functions)[kNumSwept]) {
  constexpr size_t kChunk = EDGEATTN_TEST_SMALL_MEMORY ? size_t{1} << 12 : size_t{1} << 20;  // 36 bytes per input
  SweepResult sweep;
  sweep.results.resize(paths.size() * kNumSwept);
  sweep.path_seconds.assign(paths.size(), 0.0);
  std::vector<float> in(kChunk), out(kChunk);
  std::vector<double> expect(kChunk * kNumSwept);
  for (uint64_t base = 0; base < count; base += kChunk) {
    const size_t chunk = static_cast<size_t>(std::min<uint64_t>(kChunk, count - base));
    ParallelFor(chunk, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        const uint32_t b = bits(base + i);
        std::memcpy(&in[i], &b, sizeof(float));
        for (size_t f = 0; f < kNumSwept; ++f) {
          if (functions[f]) expect[f * kChunk + i] = PackedExpectation(f, in[i]);
        }
      }
    });
    for (size_t p = 0; p < paths.size(); ++p) {
      const auto path_start = std::chrono::steady_clock::now();
      ScopedTarget target(paths[p]);  // process-wide: every worker runs the same path
      const ActivationApi& api = ActivationApiFor(paths[p]);
      for (size_t f = 0; f < kNumSwept; ++f) {
        if (!functions[f]) continue;
        const Activation act = kSwept[f];
        const double bound = MaxUlp(act);
        TestMutex merge;
        ParallelFor(chunk, [&](size_t begin, size_t end) {
          PathResult r;
          if (api.apply(in.data() + begin, out.data() + begin, end - begin, act) != Status::kOk) {
            r.violations = end - begin;
            r.examples.push_back("status not OK");
          }
          const double* e = expect.data() + f * kChunk;
          for (size_t i = begin; i < end; ++i) {
            const float got = out[i];
            const double exact = e[i];
            bool ok;
            if (exact != 0.0 && std::isfinite(exact)) {
              const double ulp = std::fabs(static_cast<double>(got) - exact) * InverseUlp(exact);
              ok = ulp <= bound;
              if (ulp > r.max_ulp) {
                r.max_ulp = ulp;
                r.worst_input = in[i];
              }
            } else if (exact == 0.0) {
              ok = std::fabs(got) <= FLT_MIN && (got == 0.0f || std::signbit(got) == std::signbit(exact));
            } else {  // NaN or +inf
              ok = (std::isnan(exact) ? std::isnan(got) : got == kInf);
            }
            if (!ok && ++r.violations <= 5) {
              r.examples.push_back(std::string(ActivationName(act)) + "(" + std::to_string(in[i]) +
                                   ") = " + std::to_string(got) + ", reference " + std::to_string(exact));
            }
          }
          ScopedLock lock(merge);
          sweep.results[p * kNumSwept + f].Merge(r);
        });
      }
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
