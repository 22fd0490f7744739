// SPDX-License-Identifier: Apache-2.0
// This core's limits, measured at the start of every run (the report divides by them): single-core FP32 FMA
// peak and read bandwidth from L2, L3 and DRAM, each on the best SIMD target the CPU has.
//
// FMA peak: 16 independent chains of vector FMAs (enough to cover a 4-cycle latency on two FMA ports), counted
// as 2 flops per lane. Read bandwidth: a sum over a buffer with 8 vector accumulators. The buffers are sized from
// this CPU's caches (Google Benchmark's CPUInfo, read from sysfs), so that each sits in the level it measures on
// any core: L2 half of L2 (and more than L1D); L3 twice L2 and at least 4 MiB (the largest hot decode caches,
// so the rate is the one those calls can get), but at most halfway between L2 and L3; DRAM 256 MiB and at least
// twice the last level. Without cache sizes: 512 KiB, 4 MiB and 256 MiB. On the Zen and Xeon hosts of
// docs/performance.md the rule gives 512 KiB or 1 MiB, 4 MiB and 256 MiB.
#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <memory>

#include "bench/bench_util.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bench/calibrate.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn_bench {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Returns flops done.
double FmaChains(size_t iterations, float seed) {
  const hn::ScalableTag<float> d;
  const auto m = hn::Set(d, 0.99999994f), c = hn::Set(d, 1e-7f);
  auto a0 = hn::Set(d, seed), a1 = hn::Add(a0, c), a2 = hn::Add(a1, c), a3 = hn::Add(a2, c);
  auto a4 = hn::Add(a3, c), a5 = hn::Add(a4, c), a6 = hn::Add(a5, c), a7 = hn::Add(a6, c);
  auto a8 = hn::Add(a7, c), a9 = hn::Add(a8, c), a10 = hn::Add(a9, c), a11 = hn::Add(a10, c);
  auto a12 = hn::Add(a11, c), a13 = hn::Add(a12, c), a14 = hn::Add(a13, c), a15 = hn::Add(a14, c);
  for (size_t i = 0; i < iterations; ++i) {
    a0 = hn::MulAdd(a0, m, c), a1 = hn::MulAdd(a1, m, c), a2 = hn::MulAdd(a2, m, c), a3 = hn::MulAdd(a3, m, c);
    a4 = hn::MulAdd(a4, m, c), a5 = hn::MulAdd(a5, m, c), a6 = hn::MulAdd(a6, m, c), a7 = hn::MulAdd(a7, m, c);
    a8 = hn::MulAdd(a8, m, c), a9 = hn::MulAdd(a9, m, c), a10 = hn::MulAdd(a10, m, c);
    a11 = hn::MulAdd(a11, m, c), a12 = hn::MulAdd(a12, m, c), a13 = hn::MulAdd(a13, m, c);
    a14 = hn::MulAdd(a14, m, c), a15 = hn::MulAdd(a15, m, c);
  }
  auto sum = hn::Add(hn::Add(hn::Add(a0, a1), hn::Add(a2, a3)), hn::Add(hn::Add(a4, a5), hn::Add(a6, a7)));
  const auto upper =
      hn::Add(hn::Add(hn::Add(a8, a9), hn::Add(a10, a11)), hn::Add(hn::Add(a12, a13), hn::Add(a14, a15)));
  sum = hn::Add(sum, upper);
  benchmark::DoNotOptimize(hn::GetLane(sum));
  return 2.0 * 16.0 * static_cast<double>(hn::Lanes(d)) * static_cast<double>(iterations);
}

// Sums n floats (n a multiple of 8 vectors); returns the sum so the loads are not optimised away.
float ReadSum(const float* HWY_RESTRICT p, size_t n) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  auto s0 = hn::Zero(d), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
  for (size_t i = 0; i + 8 * N <= n; i += 8 * N) {
    s0 = hn::Add(s0, hn::Load(d, p + i)), s1 = hn::Add(s1, hn::Load(d, p + i + N));
    s2 = hn::Add(s2, hn::Load(d, p + i + 2 * N)), s3 = hn::Add(s3, hn::Load(d, p + i + 3 * N));
    s4 = hn::Add(s4, hn::Load(d, p + i + 4 * N)), s5 = hn::Add(s5, hn::Load(d, p + i + 5 * N));
    s6 = hn::Add(s6, hn::Load(d, p + i + 6 * N)), s7 = hn::Add(s7, hn::Load(d, p + i + 7 * N));
  }
  const auto s = hn::Add(hn::Add(hn::Add(s0, s1), hn::Add(s2, s3)), hn::Add(hn::Add(s4, s5), hn::Add(s6, s7)));
  return hn::GetLane(hn::SumOfLanes(d, s));
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace edgeattn_bench
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace edgeattn_bench {
HWY_EXPORT(FmaChains);
HWY_EXPORT(ReadSum);

double CalibrationFma(size_t iterations, float seed) { return HWY_DYNAMIC_DISPATCH(FmaChains)(iterations, seed); }
float CalibrationReadSum(const float* p, size_t n) { return HWY_DYNAMIC_DISPATCH(ReadSum)(p, n); }

namespace {

void FmaPeak(benchmark::State& state) {
  size_t iterations = 4096;
  float seed = 1.0f;
  double flops = 0;
  for (auto _ : state) {
    // Opaque to the compiler, so the chains cannot be folded at compile time.
    benchmark::DoNotOptimize(iterations);
    benchmark::DoNotOptimize(seed);
    flops = HWY_DYNAMIC_DISPATCH(FmaChains)(iterations, seed);
  }
  SetCounters(state, flops, 0, 0);
}

void ReadBandwidth(benchmark::State& state, size_t bytes) {
  const size_t n = bytes / sizeof(float);
  // Aligned for the widest vector; std::aligned_alloc because static-dispatch builds have no libhwy.
  std::unique_ptr<float, void (*)(void*)> buffer(static_cast<float*>(std::aligned_alloc(256, n * sizeof(float))),
                                                 std::free);
  if (!buffer) {
    state.SkipWithError("out of memory");
    return;
  }
  for (size_t i = 0; i < n; ++i) buffer.get()[i] = 1.0f;
  for (auto _ : state) benchmark::DoNotOptimize(HWY_DYNAMIC_DISPATCH(ReadSum)(buffer.get(), n));
  SetCounters(state, 0, static_cast<double>(n * sizeof(float)), 0);
}

constexpr size_t kKiB = size_t{1} << 10, kMiB = size_t{1} << 20;

// Bytes of this CPU's data (or unified) cache of a level, 0 when unknown.
size_t CacheBytes(int level) {
  size_t bytes = 0;
  for (const auto& c : benchmark::CPUInfo::Get().caches) {
    if (c.level == level && c.type != "Instruction" && c.size > 0) bytes = std::max(bytes, static_cast<size_t>(c.size));
  }
  return bytes;
}

// Whole 64 KiB blocks: ReadSum reads multiples of 8 vectors of the widest target.
constexpr size_t Blocks(size_t bytes) { return std::max<size_t>(bytes / (64 * kKiB), 1) * (64 * kKiB); }

struct CalibrationBuffers {
  size_t l2, l3, dram;
};

// The buffer sizes of the rule at the top of this file, from the L1D, L2 and L3 sizes (0: unknown).
constexpr CalibrationBuffers CalibrationBufferBytes(size_t l1, size_t l2, size_t l3) {
  CalibrationBuffers b{512 * kKiB, 4 * kMiB, 256 * kMiB};
  if (l2 != 0) b.l2 = Blocks(std::max(l2 / 2, 2 * l1));
  if (l2 != 0) b.l3 = std::max(2 * l2, 4 * kMiB);
  if (l2 != 0 && l3 > l2) b.l3 = std::min(b.l3, l2 + (l3 - l2) / 2);
  b.l3 = Blocks(b.l3);
  b.dram = Blocks(std::max(b.dram, 2 * std::max(l2, l3)));
  return b;
}

// The rule on the cores of docs/performance.md and on two that the fixed sizes would mislead: each buffer lands
// between the level below and the level it measures.
constexpr bool Is(CalibrationBuffers b, size_t l2, size_t l3, size_t dram) {
  return b.l2 == l2 && b.l3 == l3 && b.dram == dram;
}
static_assert(Is(CalibrationBufferBytes(0, 0, 0), 512 * kKiB, 4 * kMiB, 256 * kMiB), "no cache sizes");
static_assert(Is(CalibrationBufferBytes(32 * kKiB, kMiB, 32 * kMiB), 512 * kKiB, 4 * kMiB, 256 * kMiB), "Zen 4/5");
static_assert(Is(CalibrationBufferBytes(48 * kKiB, 2 * kMiB, 105 * kMiB), kMiB, 4 * kMiB, 256 * kMiB), "Xeon");
static_assert(Is(CalibrationBufferBytes(64 * kKiB, 8 * kMiB, 16 * kMiB), 4 * kMiB, 12 * kMiB, 256 * kMiB),
              "an L2 larger than 4 MiB, a small L3");
static_assert(Is(CalibrationBufferBytes(32 * kKiB, kMiB, 192 * kMiB), 512 * kKiB, 4 * kMiB, 384 * kMiB),
              "an L3 larger than 128 MiB");

}  // namespace

void RegisterCalibration() {
  const CalibrationBuffers b = CalibrationBufferBytes(CacheBytes(1), CacheBytes(2), CacheBytes(3));
  Register("calibrate/fma_peak", "limit", FmaPeak);
  Register("calibrate/read_l2", "limit", [b](benchmark::State& s) { ReadBandwidth(s, b.l2); });
  Register("calibrate/read_l3", "limit", [b](benchmark::State& s) { ReadBandwidth(s, b.l3); });
  Register("calibrate/read_dram", "limit", [b](benchmark::State& s) { ReadBandwidth(s, b.dram); });
}

}  // namespace edgeattn_bench
#endif  // HWY_ONCE
