// SPDX-License-Identifier: Apache-2.0
// Softmax over 2^20 random rows per path, fresh each run: every element within softmax.h's bound of a double
// reference, every row sum within 2^-21 of 1. Rows of 1..300 entries in batches of one length; logits from
// normal, uniform, Cauchy (heavy-tailed), 1e4-offset, huge (+-1e30 with +-FLT_MAX) and tiny distributions,
// with and without -inf. Reports the max ULP error and max |sum - 1| per path. Label "long".
#include <gtest/gtest.h>
#include <stdint.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <functional>
#include <vector>

#include "edgeattn/softmax.h"
#include "tests/long_test_paths.h"
#include "tests/reference.h"
#include "tests/test_util.h"

namespace edgeattn_test {
namespace {

constexpr double kMaxUlp = 4.0;              // softmax.h
constexpr double kMaxRowSumError = 0x1p-21;  // softmax.h

struct Stats {
  double max_ulp = 0;
  double max_sum_error = 0;
  uint64_t violations = 0;
  void Merge(const Stats& o) {
    max_ulp = std::max(max_ulp, o.max_ulp);
    max_sum_error = std::max(max_sum_error, o.max_sum_error);
    violations += o.violations;
  }
};

using Draw = std::function<float(Rng&)>;

std::vector<Draw> Distributions() {
  return {
      [](Rng& r) { return r.Normal(1.0f); },
      [](Rng& r) { return r.Normal(10.0f); },
      [](Rng& r) { return r.Normal(100.0f); },
      [](Rng& r) { return r.Uniform(-1e4f, 1e4f); },
      [](Rng& r) { return 1e4f + r.Normal(3.0f); },
      [](Rng& r) { return r.Cauchy(5.0f); },
      [](Rng& r) { return r.Cauchy(1e3f); },
      [](Rng& r) { return r.Bernoulli(0.3) ? -kInf : r.Normal(3.0f); },
      [](Rng& r) { return r.Bernoulli(0.05) ? (r.Bernoulli(0.5) ? FLT_MAX : -FLT_MAX) : r.Uniform(-1e30f, 1e30f); },
      [](Rng& r) { return r.Normal(1e-30f); },
  };
}

TEST(SoftmaxStatistics, MillionRowsPerPath) {
  Rng rng;
  const std::vector<Path> paths = LongTestPaths();
  const std::vector<Draw> distributions = Distributions();
  std::vector<Stats> stats(paths.size());
  constexpr size_t kRowsPerPath = EDGEATTN_SOFTMAX_STATISTICS_ROWS;          // 2^20 natively, fewer under emulation
  constexpr size_t kMaxBatchRows = EDGEATTN_TEST_SMALL_MEMORY ? 128 : 4096;  // 16 bytes per entry, <= 300 per row
  constexpr size_t kBatchRows = kRowsPerPath < kMaxBatchRows ? kRowsPerPath : kMaxBatchRows;
  std::vector<float> in, out;
  std::vector<double> ref;
  for (size_t done = 0, batch = 0; done < kRowsPerPath; done += kBatchRows, ++batch) {
    const size_t cols = 1 + rng.Index(300);
    const Draw& draw = distributions[batch % distributions.size()];
    in.resize(kBatchRows * cols);
    out.resize(in.size());
    ref.resize(in.size());
    for (float& x : in) x = draw(rng);
    ParallelFor(kBatchRows, [&](size_t begin, size_t end) {
      for (size_t r = begin; r < end; ++r) {
        const std::vector<double> row = RefSoftmaxRow(&in[r * cols], cols);
        std::copy(row.begin(), row.end(), &ref[r * cols]);
      }
    });
    for (size_t p = 0; p < paths.size(); ++p) {
      ScopedTarget target(paths[p]);
      const Api& api = paths[p] == kScalarPath ? ScalarApi() : SimdApi();
      TestMutex merge;
      ParallelFor(kBatchRows, [&](size_t begin, size_t end) {
        Stats s;
        if (api.softmax(&in[begin * cols], &out[begin * cols], end - begin, cols) != Status::kOk) ++s.violations;
        for (size_t r = begin; r < end; ++r) {
          double sum = 0;
          bool all_zero = true;
          for (size_t j = r * cols; j < (r + 1) * cols; ++j) {
            const double exact = ref[j];
            const float got = out[j];
            sum += got;
            all_zero &= exact == 0.0;
            if (exact >= FLT_MIN) {
              const double ulp = UlpError(got, exact);
              s.max_ulp = std::max(s.max_ulp, ulp);
              s.violations += ulp <= kMaxUlp ? 0 : 1;
            } else {
              s.violations += std::fabs(got - exact) <= FLT_MIN && !std::signbit(got) ? 0 : 1;
            }
          }
          if (!all_zero) {
            s.max_sum_error = std::max(s.max_sum_error, std::fabs(sum - 1.0));
            s.violations += std::fabs(sum - 1.0) <= kMaxRowSumError ? 0 : 1;
          }
        }
        ScopedLock lock(merge);
        stats[p].Merge(s);
      });
    }
  }
  for (size_t p = 0; p < paths.size(); ++p) {
    std::printf("softmax statistics, %-10s %s rows: max %.3f ULP, max |row sum - 1| = %.3g, %s violations\n",
                TargetName(paths[p]), std::to_string(kRowsPerPath).c_str(), stats[p].max_ulp, stats[p].max_sum_error,
                std::to_string(stats[p].violations).c_str());
    RecordProperty(std::string("max_ulp_") + TargetName(paths[p]), std::to_string(stats[p].max_ulp));
    EXPECT_EQ(stats[p].violations, 0u) << TargetName(paths[p]);
  }
}

}  // namespace
}  // namespace edgeattn_test
