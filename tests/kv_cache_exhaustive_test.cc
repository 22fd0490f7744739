// SPDX-License-Identifier: Apache-2.0
// The KV cache's f32 -> binary16 rounding over every float32 bit pattern (EDGEATTN_EXP_SWEEP_STRIDE = 1; emulated
// builds take every n-th), against the double-precision reference of tests/half_reference.h. The conversion is
// the same integer code on every path (the cache stores identical bits everywhere), so one run covers them all.
// Part of the ctest label "long".
#include <gtest/gtest.h>
#include <stdint.h>

#include <cstring>

#include "lib/kv_cache/kv_cache_storage.h"
#include "tests/half_reference.h"
#include "tests/test_util.h"

namespace edgeattn_test {
namespace {

TEST(KvCacheHalfExhaustive, AllFloatsRoundToNearestEven) {
  constexpr uint64_t kStride = EDGEATTN_EXP_SWEEP_STRIDE;
  constexpr uint64_t kInputs = ((uint64_t{1} << 32) + kStride - 1) / kStride;
  TestMutex mutex;
  uint64_t failures = 0;
  uint32_t first_failure = 0;
  ParallelFor(static_cast<size_t>(kInputs), [&](size_t begin, size_t end) {
    uint64_t local = 0;
    uint32_t first = 0;
    for (size_t i = begin; i < end; ++i) {
      const uint32_t bits = static_cast<uint32_t>(static_cast<uint64_t>(i) * kStride);
      float x;
      std::memcpy(&x, &bits, sizeof(x));
      if (!SameHalf(x, edgeattn::internal::FloatToHalfBits(x))) {
        if (local++ == 0) first = bits;
      }
    }
    ScopedLock lock(mutex);
    if (local != 0 && failures == 0) first_failure = first;
    failures += local;
  });
  EXPECT_EQ(failures, 0u) << "first failing pattern 0x" << std::hex << first_failure;
  RecordProperty("inputs", std::to_string(kInputs));
}

}  // namespace
}  // namespace edgeattn_test
