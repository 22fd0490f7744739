// SPDX-License-Identifier: Apache-2.0
// Shared pieces of the benchmark suite: the cases, their inputs, double-precision references, the correctness
// check every implementation passes before it is timed, and the naming and counters the report reads.
//
// Every benchmark is named "<case>/<implementation>", e.g. "attention/tiled/L=64,d=64/simd" or
// "softmax/n=256/xnnpack". Implementations: "scalar" and "simd" (edgeattn's two paths; "simd:<TARGET>" for each
// compiled target when EDGEATTN_BENCH_TARGETS=all), and one name per peer library. Each benchmark sets plain
// counters with its per-call work ("flops", "bytes", "elements") and the rate counters GFLOP/s, GB/s, ns/elem.
#ifndef EDGEATTN_BENCH_BENCH_UTIL_H_
#define EDGEATTN_BENCH_BENCH_UTIL_H_

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "edgeattn/kv_cache.h"

namespace edgeattn_bench {

// ---- Cases (identical inputs for every implementation: generated from fixed seeds).
struct AttentionShape {
  size_t len;  // L = Lq = Lk
  size_t dim;  // d = d_k = d_v
  bool causal;
  // "attention/<path>/L=64,d=64" or "attention_causal/<path>/...": <path> is the attention path (row, tiled,
  // decode, small, packed_small) the SIMD implementation takes on the dispatched target, asked at registration.
  std::string Name() const;
};
// The name of the path the SIMD attention takes for one head of this shape on the dispatched target.
std::string AttentionPathName(size_t q_len, size_t kv_len, size_t dim, bool causal);
std::vector<AttentionShape> AttentionShapes();  // L in {4,16,64,256,1024} x d in {64,128}, and L=4, d=8

struct DecodeShape {
  size_t keys;  // n cached keys, one query
  size_t dim;
  bool cold;                 // rotate through a pool of caches larger than the last-level cache
  std::string Name() const;  // "attention/decode/n=1024,d=64,hot" (or ",cold"; the path as for AttentionShape)
};
std::vector<DecodeShape> DecodeShapes();  // n in {128,1024,4096} x d in {64,128} x {hot, cold}

std::vector<size_t> SoftmaxSizes();  // {16, 64, 256, 1024, 4096}
constexpr size_t kExpSize = 4096;    // exp over 4096 floats in [-87, 0]
struct LinearShape {
  size_t rows, in, out;
  std::string Name() const;
};
std::vector<LinearShape> LinearShapes();

// ---- Buffers: every buffer an implementation reads or writes is 64-byte aligned (a cache line, and the widest
// vector): what a user who cares about speed allocates, and the same for every implementation. Rows that start
// 16 bytes off a line cost edgeattn's attention 15-19% at L = 16 ... 64 (docs/performance.md, step 12).
template <typename T>
struct CacheAligned {
  using value_type = T;
  CacheAligned() = default;
  template <typename U>
  CacheAligned(const CacheAligned<U>&) {}  // NOLINT(google-explicit-constructor): allocator rebinding
  T* allocate(size_t n) { return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{64})); }
  void deallocate(T* p, size_t) { ::operator delete (p, std::align_val_t{64}); }
  template <typename U>
  bool operator==(const CacheAligned<U>&) const {
    return true;
  }
  template <typename U>
  bool operator!=(const CacheAligned<U>&) const {
    return false;
  }
};
using Floats = std::vector<float, CacheAligned<float>>;

// ---- Inputs: one instance per case for the life of the process, built on first use (the Get functions). Every
// implementation of a case reads the same buffers: same values, and the same addresses, so that where the
// process's allocations happen to land affects all implementations of a case alike. Each case's double-precision
// reference is computed once, on the first check. The references returned stay valid until the process ends.
Floats Random(size_t n, float lo, float hi, uint32_t seed);

struct AttentionInputs {
  static const AttentionInputs& Get(size_t len, size_t dim);
  size_t len, dim;
  float scale;     // 1/sqrt(d)
  Floats q, k, v;  // [len][dim] each

 private:
  AttentionInputs(size_t len, size_t dim);
};

struct LinearInputs {
  static const LinearInputs& Get(const LinearShape& shape);
  LinearShape shape;
  Floats x, w, b;  // [rows][in], [in][out], [out]

 private:
  explicit LinearInputs(const LinearShape& shape);
};

// K and V caches for decode: `copies` caches of [keys][dim] each, back to back (1 when hot). The cold copies all
// live in one pool of random values shared by every cold shape (the copies hold different values; only copy 0
// is checked against the reference, the others are there to be read from DRAM).
struct DecodeInputs {
  static const DecodeInputs& Get(const DecodeShape& shape);
  size_t keys, dim, copies;
  float scale;
  Floats q;
  const float* K(size_t i) const { return k_ + (i % copies) * keys * dim; }
  const float* V(size_t i) const { return v_ + (i % copies) * keys * dim; }
  // The copy for the next timed call. One counter for every implementation and case: the two calls of a pair
  // benchmark take turns through the copies, so neither reads a cache the other has just brought in.
  static size_t NextCopy();

 private:
  explicit DecodeInputs(const DecodeShape& shape);
  Floats own_k_, own_v_;  // the hot cache
  const float* k_;
  const float* v_;
};

const Floats& SoftmaxInput(size_t n);  // one row of n, uniform in [-10, 10]
const Floats& ExpInput();              // kExpSize floats, uniform in [-87, 0]

// ---- Double-precision references and the check.
std::vector<double> ReferenceAttention(const float* q, const float* k, const float* v, size_t lq, size_t lk, size_t dim,
                                       float scale, bool causal);
std::vector<double> ReferenceSoftmax(const float* in, size_t rows, size_t cols);
std::vector<double> ReferenceLinear(const float* x, size_t rows, size_t in, const float* w, const float* b, size_t out);
// max over rows of ||got - ref||_2 / ||ref||_2 (absolute where the row of ref is 0).
double MaxRelativeRowError(const float* got, const std::vector<double>& ref, size_t rows, size_t cols);
// A result farther than `tolerance` is wrong: the benchmark is skipped with an error naming the error, so the
// report lists the implementation as wrong instead of timing it. Returns whether the result is right.
bool CheckResult(benchmark::State& state, double error, double tolerance);
constexpr double kAttentionTolerance = 1e-4;  // relative L2 per row; float GEMMs are far inside it
constexpr double kLinearTolerance = 1e-5;
constexpr double kSoftmaxTolerance = 1e-5;
constexpr double kExpTolerance = 1e-5;

// The causal mask as the peers apply it: -inf over the strictly upper triangle of the full score matrix.
void MaskAboveDiagonal(float* scores, size_t len);

// Distance of one call's output from the double reference of a suite case (inputs from the functions above).
double AttentionError(const AttentionInputs& in, bool causal, const float* out);  // [len][dim]
double DecodeError(const DecodeInputs& in, const float* out);                     // [dim], for copy 0
double SoftmaxError(const Floats& in, const float* out);                          // one row, in from SoftmaxInput
double ExpError(const Floats& in, const float* out);                              // max relative error
double LinearError(const LinearInputs& in, const float* y);                       // [rows][out]

// ---- Accuracy (the table's "max error" column): the worst error of n outputs against a double reference, in
// units in the last place of the float nearest the reference, ulp(r) = 2^(max(floor(log2 |r|), -126) - 23): the
// unit edgeattn's headers state their bounds in. Below FLT_MIN the unit stays 2^-149, so an output that lost a
// tiny result's relative accuracy (0.5 x (1 + erf(x / sqrt 2)) at x = -8 gives 0 for -5e-15) shows as the
// millions of ULP it is. NaN against a number is infinite. Peers are measured on the same inputs. unit: where not
// null, the ULP is that of |unit[i]| (>= |ref[i]|) instead: LayerNorm's output y = n + bias is judged in the unit of
// the larger of y and its normalised part n, which its bias can cancel.
double MaxUlpError(const float* got, const double* ref, size_t n, const double* unit = nullptr);
double SoftmaxUlp(const Floats& in, const float* out);  // one row, in from SoftmaxInput
double ExpUlp(const Floats& in, const float* out);
// Records one implementation's worst error as the counter "max_ulp" (report.py's accuracy column).
void SetAccuracy(benchmark::State& state, double max_ulp);

// ---- Registration and counters.
using BenchFn = std::function<void(benchmark::State&)>;
void Register(const std::string& case_name, const std::string& impl, BenchFn fn);
void SetCounters(benchmark::State& state, double flops, double bytes, double elements);
// Flops of attention as counted everywhere in this suite: 4*d per (query, key) pair that is computed (2*d for
// the score, 2*d for P.V). Causal counts the pairs on and below the diagonal only: L(L+1)/2.
double AttentionFlops(size_t len, size_t dim, bool causal);

double DecodeFlops(const DecodeShape& shape);
double LinearFlops(const LinearShape& shape);
double DecodeBytes(const DecodeShape& shape);  // K and V, read once

// Paired timing: inside a pair benchmark ("<case>/simd~<other>", registered by RegisterPairs), the first
// TimeIfRight (edgeattn's SIMD path) hands its call to TimePaired, which runs the other implementation's benchmark
// function inside it; that one's TimeIfRight hands over its call too, and the two calls are timed alternately,
// in batches of about 20 us each, for the whole benchmark. A shared machine slows both alike over such short
// spans, so the ratio of the two (counter "ratio" = other's time / SIMD time, the median over the batches) is
// far steadier than the ratio of two benchmarks timed seconds apart (bench/README.md).
bool PairActive();
void TimePaired(benchmark::State& state, const std::function<void()>& call);

// The common tail of every benchmark, after one call whose result is `error` away from the reference: a wrong
// result is reported and not timed; a right one is timed by calling `run` and gets the counters.
template <typename Run>
void TimeIfRight(benchmark::State& state, double error, double tolerance, Run&& run, double flops, double bytes,
                 double elements) {
  if (!CheckResult(state, error, tolerance)) return;
  auto call = [&run] {
    if constexpr (std::is_void_v<decltype(run())>) {
      run();
    } else {
      benchmark::DoNotOptimize(run());
    }
    benchmark::ClobberMemory();
  };
  if (PairActive()) {
    TimePaired(state, call);
    return;
  }
  for (auto _ : state) call();
  SetCounters(state, flops, bytes, elements);
}

// Peer libraries register their benchmarks through these (each compiled only when its package is found).
void RegisterEigen();
void RegisterOpenBlas();
void RegisterOneDnn();
void RegisterXnnpack();
// edgeattn's own benchmarks and the calibration of this core's limits.
void RegisterEdgeattn();
void RegisterCalibration();
void RegisterActivation();  // activation_bench.cc
// A linear KV cache of n positions (capacity n) over storage (resized to its size), filled with K and V uniform in
// [-1, 1] from the two seeds; storage is left empty if the setup fails. For kv_cache_bench.cc and
// narrow_heads_bench.cc.
void FillKvCache(edgeattn::KvType type, size_t kv_heads, size_t n, size_t dim, uint32_t seed_k, uint32_t seed_v,
                 std::vector<unsigned char>* storage, edgeattn::KvCache* cache);
const char* KvTypeName(edgeattn::KvType type);  // "f32", "f16", "q8"
// The KV cache cases (kv_cache_bench.cc), and the narrow-head ones (narrow_heads_bench.cc).
void RegisterKvCache();
void RegisterNarrowHeads();
// The work split over two threads against the single call (split_bench.cc): "split/..." cases.
void RegisterSplit();
// Whole llama2.c models (model_bench.cc): "model/..." cases, those on one thread and those on two.
void RegisterModel(bool one_thread, bool two_threads);
// The calibration kernels (calibrate.cc), for split_bench.cc's two-thread limits: `iterations` rounds of 16
// independent vector FMA chains (returns the flops), and the sum of n floats (64-byte aligned, n a multiple of
// 8 vectors of the widest target).
double CalibrationFma(size_t iterations, float seed);
float CalibrationReadSum(const float* p, size_t n);
// After every implementation is registered: one pair benchmark per case for edgeattn's SIMD path against each
// other implementation of the case (its scalar path, each peer; the compile-time-shape cases against the
// runtime-shape implementations of the same shape, edgeattn's included as "runtime").
void RegisterPairs();

}  // namespace edgeattn_bench

#endif  // EDGEATTN_BENCH_BENCH_UTIL_H_
