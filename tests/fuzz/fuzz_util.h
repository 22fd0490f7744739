// SPDX-License-Identifier: Apache-2.0
// Shared pieces of the libFuzzer harnesses: choosing the path and SIMD target from the input, reading floats,
// and reporting a broken contract (abort, so that libFuzzer saves the input as a crash).
#ifndef EDGEATTN_TESTS_FUZZ_FUZZ_UTIL_H_
#define EDGEATTN_TESTS_FUZZ_FUZZ_UTIL_H_

#include <fuzzer/FuzzedDataProvider.h>  // from clang's resource directory
#include <stdint.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "hwy/highway.h"
#include "hwy/targets.h"

namespace edgeattn_fuzz {

#define FUZZ_CHECK(cond, ...)                                                            \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "%s:%d: contract broken: %s\n  ", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                                                 \
      std::fprintf(stderr, "\n");                                                        \
      std::abort();                                                                      \
    }                                                                                    \
  } while (0)

// Forces the SIMD target chosen by the input for this run (every compiled target the CPU supports).
class FuzzTarget {
 public:
  explicit FuzzTarget(FuzzedDataProvider& data) {
    const std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
    target_ = targets[data.ConsumeIntegralInRange<size_t>(0, targets.size() - 1)];
    hwy::SetSupportedTargetsForTest(target_);
  }
  ~FuzzTarget() { hwy::SetSupportedTargetsForTest(0); }
  const char* name() const { return hwy::TargetName(target_); }

 private:
  int64_t target_;
};

// A float from the input: mostly "reasonable" values in [-range, range], sometimes an arbitrary bit pattern
// (NaN, infinities, subnormals, huge values).
inline float ConsumeFloat(FuzzedDataProvider& data, float range) {
  const uint8_t kind = data.ConsumeIntegral<uint8_t>();
  if (kind < 16) {
    const uint32_t bits = data.ConsumeIntegral<uint32_t>();
    float f;
    std::memcpy(&f, &bits, sizeof(f));
    return f;
  }
  if (kind < 24) return -std::numeric_limits<float>::infinity();
  return data.ConsumeFloatingPointInRange<float>(-range, range);
}

inline std::vector<float> ConsumeFloats(FuzzedDataProvider& data, size_t n, float range) {
  std::vector<float> v(n);
  for (float& f : v) f = ConsumeFloat(data, range);
  return v;
}

inline double UlpOf(double exact) {
  int e;
  std::frexp(static_cast<float>(std::fabs(exact)), &e);
  return std::ldexp(1.0, e - 24);
}

inline bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// The same bits element by element, except that any two NaNs match: for results of two different code paths,
// whose NaN outputs' sign and payload follow the order in which each propagates NaN operands (kv_cache.h).
inline bool SameBitsOrBothNaN(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0 && !(a[i] != a[i] && b[i] != b[i])) return false;
  }
  return true;
}

}  // namespace edgeattn_fuzz

#endif  // EDGEATTN_TESTS_FUZZ_FUZZ_UTIL_H_
