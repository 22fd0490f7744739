// This core's limits, measured at the start of every run (the report divides by them): single-core FP32 FMA
// peak and read bandwidth from L2 and from DRAM, each on the best SIMD target the CPU has.
//
// FMA peak: 16 independent chains of vector FMAs (enough to cover a 4-cycle latency on two FMA ports), counted
// as 2 flops per lane. Read bandwidth: a sum over a buffer with 8 vector accumulators; 512 KiB stays in L2 (and
// exceeds L1), 4 MiB exceeds L2 (the size of the largest hot decode caches) and stays in L3, 256 MiB exceeds L3.
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

}  // namespace

void RegisterCalibration() {
  Register("calibrate/fma_peak", "limit", FmaPeak);
  Register("calibrate/read_l2", "limit", [](benchmark::State& s) { ReadBandwidth(s, size_t{512} << 10); });
  Register("calibrate/read_l3", "limit", [](benchmark::State& s) { ReadBandwidth(s, size_t{4} << 20); });
  Register("calibrate/read_dram", "limit", [](benchmark::State& s) { ReadBandwidth(s, size_t{256} << 20); });
}

}  // namespace edgeattn_bench
#endif  // HWY_ONCE
