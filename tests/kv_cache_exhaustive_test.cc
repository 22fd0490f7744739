// SPDX-License-Identifier: Apache-2.0
// The KV cache's f32 -> binary16 rounding over every float32 bit pattern (EDGEATTN_EXP_SWEEP_STRIDE = 1; emulated
// builds take every n-th): the scalar conversion against the double-precision reference of tests/half_reference.h,
// then Append's stores on every path (the branch-free vector form of the same integer steps, lib/common/f16-inl.h)
// against the scalar conversion, bit for bit. Part of the ctest label "long".
#include <gtest/gtest.h>
#include <stdint.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "edgeattn/kv_cache.h"
#include "lib/common/float_util.h"
#include "lib/kv_cache/kv_cache_storage.h"
#include "tests/half_reference.h"
#include "tests/long_test_paths.h"
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

// How many of the n halves stored at `stored` (any alignment) differ from expected: branch-free, so that the
// compiler vectorizes it.
EDGEATTN_TEST_WIDE_CLONES size_t Mismatches(const unsigned char* stored, const uint16_t* expected, size_t n) {
  size_t count = 0;
  for (size_t i = 0; i < n; ++i) {
    uint16_t got;
    std::memcpy(&got, stored + 2 * i, sizeof(got));
    count += got != expected[i] ? 1 : 0;
  }
  return count;
}

// Every bit pattern the cache admits (finite values from 65520 up are INVALID_ARGUMENT: those lanes hold 0 here),
// appended as positions of one kv head of 2048 keys and 2048 values to a ring cache of one slot at an odd address,
// on every target: the stored halves are FloatToHalfBits' bits, NaN payloads included. The expected halves are
// computed once per chunk of inputs, then each target appends the chunk.
TEST(KvCacheHalfExhaustive, AppendStoresTheScalarBitsOnEveryPath) {
  constexpr uint64_t kStride = EDGEATTN_EXP_SWEEP_STRIDE;
  constexpr uint64_t kInputs = ((uint64_t{1} << 32) + kStride - 1) / kStride;
  constexpr size_t kRow = 2048, kBlocks = EDGEATTN_TEST_SMALL_MEMORY ? 4 : 1024;  // positions per chunk
  constexpr size_t kChunk = kBlocks * 2 * kRow;
  edgeattn::KvCacheDesc desc;
  desc.type = edgeattn::KvType::kF16;
  desc.num_kv_heads = 1;
  desc.head_dim = kRow;
  desc.value_dim = kRow;
  desc.capacity = 1;
  desc.window = 1;
  const edgeattn::internal::KvLayout layout = edgeattn::internal::MakeKvLayout(desc);
  const size_t k_at = layout.RowByte(0, 0, edgeattn::internal::KvSide::kKey);
  const size_t v_at = layout.RowByte(0, 0, edgeattn::internal::KvSide::kValue);
  const size_t storage_bytes = edgeattn::KvCacheStorageSize(desc);
  std::vector<Path> paths;
  for (Path path : LongTestPaths()) {
    if (path != kScalarPath) paths.push_back(path);  // Append has one entry point: the targets are its paths
  }
  std::vector<uint64_t> failures(paths.size(), 0);
  std::vector<uint32_t> first_failure(paths.size(), 0);
  std::vector<float> in(kChunk);
  std::vector<uint16_t> expected(kChunk);
  for (uint64_t base = 0; base < kInputs; base += kChunk) {
    ParallelFor(kChunk, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        const uint32_t bits = base + i < kInputs ? static_cast<uint32_t>((base + i) * kStride) : 0u;
        float x;
        std::memcpy(&x, &bits, sizeof(x));
        in[i] = edgeattn::internal::IsFinite(x) && std::fabs(x) >= 65520.0f ? 0.0f : x;
        expected[i] = edgeattn::internal::FloatToHalfBits(in[i]);
      }
    });
    for (size_t p = 0; p < paths.size(); ++p) {
      ScopedTarget target(paths[p]);  // process-wide: every worker runs this target
      TestMutex mutex;
      ParallelFor(kBlocks, [&](size_t begin, size_t end) {
        std::vector<unsigned char> bytes(storage_bytes + 1);
        unsigned char* storage = bytes.data() + 1;
        edgeattn::KvCache cache;
        uint64_t local = cache.Init(desc, storage, storage_bytes) == edgeattn::Status::kOk ? 0 : 1;
        uint32_t first = 0;
        for (size_t block = begin; block < end && local == 0; ++block) {
          const float* k = in.data() + block * 2 * kRow;
          if (cache.Append(k, k + kRow, 1) != edgeattn::Status::kOk) {
            local = 1;
            break;
          }
          const uint16_t* want = expected.data() + block * 2 * kRow;
          const size_t bad = Mismatches(storage + k_at, want, kRow) + Mismatches(storage + v_at, want + kRow, kRow);
          if (bad == 0) continue;
          for (size_t i = 0; local == 0; ++i) {  // the first mismatch's input
            if (Mismatches(storage + (i < kRow ? k_at + 2 * i : v_at + 2 * (i - kRow)), want + i, 1) != 0) {
              std::memcpy(&first, &k[i], sizeof(first));
              break;
            }
          }
          local += bad;
        }
        ScopedLock lock(mutex);
        if (local != 0 && failures[p] == 0) first_failure[p] = first;
        failures[p] += local;
      });
    }
  }
  for (size_t p = 0; p < paths.size(); ++p) {
    EXPECT_EQ(failures[p], 0u) << TargetName(paths[p]) << ": first failing pattern 0x" << std::hex << first_failure[p];
  }
  RecordProperty("inputs", std::to_string(kInputs));
}

}  // namespace
}  // namespace edgeattn_test
