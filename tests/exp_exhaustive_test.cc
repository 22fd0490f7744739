// SPDX-License-Identifier: Apache-2.0
// Exp over every float32 bit pattern, on every path, against exp in double rounded to float (glibc's exp is
// within 1 ULP of double, so its rounding to float is the correctly rounded float result except in cases
// far rarer than one in 2^32). Asserts exp.h's contract and reports the max ULP error per path.
// Runs for minutes: part of the ctest label "long".
#include <gtest/gtest.h>
#include <stdint.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "edgeattn/exp.h"
#include "tests/fp_env.h"
#include "tests/long_test_paths.h"
#include "tests/test_util.h"

namespace edgeattn_test {
namespace {

struct PathResult {
  double max_ulp = 0;
  float worst_input = 0;
  uint64_t violations = 0;
  std::vector<std::string> examples;  // the first few violations
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

// What exp.h promises for one input, precomputed once and checked against every path.
enum class Expect : uint8_t { kNaN, kInfinity, kFlushable, kUlp };

// Every stride-th bit pattern on every path, each call made in env (null: the default environment; the
// control register is per thread, so each worker sets it around its own call).
void SweepExp(uint64_t stride, const FpEnv* env) {
  const uint64_t inputs = ((uint64_t{1} << 32) + stride - 1) / stride;
  constexpr size_t kChunk = EDGEATTN_TEST_SMALL_MEMORY ? size_t{1} << 14 : size_t{1} << 22;  // 25 bytes per input
  const std::vector<Path> paths = LongTestPaths();
  std::vector<PathResult> results(paths.size());
  std::vector<float> in(kChunk), out(kChunk);
  std::vector<double> exact(kChunk), inv_ulp(kChunk);
  std::vector<Expect> expect(kChunk);
  for (uint64_t base = 0; base < inputs; base += kChunk) {
    const size_t chunk = static_cast<size_t>(std::min<uint64_t>(kChunk, inputs - base));
    ParallelFor(chunk, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        const uint32_t bits = static_cast<uint32_t>((base + i) * stride);
        std::memcpy(&in[i], &bits, sizeof(float));
        // Half of all inputs need no exp in double: e^89 > FLT_MAX rounds to +inf, e^-88 < FLT_MIN flushes.
        if (std::isnan(in[i])) {
          expect[i] = Expect::kNaN;
          continue;
        }
        if (in[i] >= 89.0f || in[i] <= -88.0f) {
          expect[i] = in[i] > 0.0f ? Expect::kInfinity : Expect::kFlushable;
          continue;
        }
        exact[i] = std::exp(static_cast<double>(in[i]));
        const float rounded = static_cast<float>(exact[i]);
        if (std::isinf(rounded)) {
          expect[i] = Expect::kInfinity;
        } else if (rounded < FLT_MIN) {
          expect[i] = Expect::kFlushable;
        } else {
          expect[i] = Expect::kUlp;
          inv_ulp[i] = InverseUlp(exact[i]);
        }
      }
    });
    for (size_t p = 0; p < paths.size(); ++p) {
      // The forced target is process-wide, so every worker runs the same path.
      ScopedTarget target(paths[p]);
      const Api& api = paths[p] == kScalarPath ? ScalarApi() : SimdApi();
      TestMutex merge;
      ParallelFor(chunk, [&](size_t begin, size_t end) {
        PathResult r;
        edgeattn::Status status;
        if (env != nullptr) {
          ScopedFpEnv scoped(*env);
          status = api.exp(in.data() + begin, out.data() + begin, end - begin);
        } else {
          status = api.exp(in.data() + begin, out.data() + begin, end - begin);
        }
        if (status != edgeattn::Status::kOk) {
          r.violations = end - begin;
          r.examples.push_back("status not OK");
        }
        for (size_t i = begin; i < end; ++i) {
          const float got = out[i];
          bool ok;
          switch (expect[i]) {
            case Expect::kNaN:
              ok = std::isnan(got);
              break;
            case Expect::kInfinity:
              ok = got == kInf;
              break;
            case Expect::kFlushable:
              ok = got >= 0.0f && got <= FLT_MIN && !std::signbit(got);
              break;
            case Expect::kUlp:
            default: {
              const double ulp = std::fabs(static_cast<double>(got) - exact[i]) * inv_ulp[i];
              ok = ulp <= 2.0;
              if (ulp > r.max_ulp) {
                r.max_ulp = ulp;
                r.worst_input = in[i];
              }
            }
          }
          if (!ok && ++r.violations <= 5) {
            r.examples.push_back("exp(" + std::to_string(in[i]) + ") = " + std::to_string(got));
          }
        }
        ScopedLock lock(merge);
        results[p].Merge(r);
      });
    }
  }
  for (size_t p = 0; p < paths.size(); ++p) {
    const PathResult& r = results[p];
    const std::string mode = env == nullptr ? "" : " rounding " + env->Name();
    std::printf(
        "exp %s%s, %-10s max %.4f ULP (at x = %.9g), %s contract violations\n",
        stride == 1 ? "exhaustive (all 2^32 inputs)" : ("dense sample (stride " + std::to_string(stride) + ")").c_str(),
        mode.c_str(), TargetName(paths[p]), r.max_ulp, static_cast<double>(r.worst_input),
        std::to_string(r.violations).c_str());
    ::testing::Test::RecordProperty(
        std::string("max_ulp_") + TargetName(paths[p]) + (env == nullptr ? "" : "_" + env->Name()),
        std::to_string(r.max_ulp));
    EXPECT_EQ(r.violations, 0u) << TargetName(paths[p]);
    for (const std::string& e : r.examples) ADD_FAILURE() << TargetName(paths[p]) << ": " << e;
  }
}

TEST(ExpExhaustive, AllFloatsAllPaths) {
  // EDGEATTN_EXP_SWEEP_STRIDE = 1: every bit pattern. Emulated builds take every n-th (n odd, so every exponent
  // and sign is hit with many mantissas): a dense sample, and the output says so.
  SweepExp(EDGEATTN_EXP_SWEEP_STRIDE, nullptr);
}

// exp.h's contract under each directed rounding mode: every 61st of those bit patterns (70 M inputs natively),
// about 40 s on 2 cores for the three modes.
TEST(ExpExhaustive, DirectedRoundingDenseSampleAllPaths) {
  if (!kHasFpControl) GTEST_SKIP() << "no FP control register on this platform";
  for (Rounding rounding : {kUpward, kDownward, kTowardZero}) {
    const FpEnv env{rounding, false, false};
    SweepExp(uint64_t{61} * EDGEATTN_EXP_SWEEP_STRIDE, &env);
  }
}

}  // namespace
}  // namespace edgeattn_test
