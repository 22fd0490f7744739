// SPDX-License-Identifier: Apache-2.0
#include "bench/bench_util.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <utility>

#include "edgeattn/attention.h"
#include "lib/attention/attention_path.h"

namespace edgeattn_bench {

std::string AttentionPathName(size_t q_len, size_t kv_len, size_t dim, bool causal) {
  edgeattn::AttentionDesc desc;
  desc.q_len = q_len;
  desc.kv_len = kv_len;
  desc.head_dim = desc.value_dim = dim;
  desc.mask = causal ? edgeattn::MaskKind::kCausal : edgeattn::MaskKind::kNone;
  return edgeattn::internal::AttentionPathName(edgeattn::internal::AttentionPathForTest(desc));
}

std::string AttentionShape::Name() const {
  return std::string(causal ? "attention_causal/" : "attention/") + AttentionPathName(len, len, dim, causal) +
         "/L=" + std::to_string(len) + ",d=" + std::to_string(dim);
}

std::vector<AttentionShape> AttentionShapes() {
  std::vector<AttentionShape> shapes;
  for (bool causal : {false, true}) {
    shapes.push_back({4, 8, causal});  // the seeds' shape
    for (size_t dim : {64, 128}) {
      for (size_t len : {4, 16, 64, 256, 1024}) shapes.push_back({len, dim, causal});
    }
  }
  return shapes;
}

std::string DecodeShape::Name() const {
  return "attention/" + AttentionPathName(1, keys, dim, false) + "/n=" + std::to_string(keys) +
         ",d=" + std::to_string(dim) + (cold ? ",cold" : ",hot");
}

std::vector<DecodeShape> DecodeShapes() {
  std::vector<DecodeShape> shapes;
  for (bool cold : {false, true}) {
    for (size_t dim : {64, 128}) {
      for (size_t keys : {128, 1024, 4096}) shapes.push_back({keys, dim, cold});
    }
  }
  return shapes;
}

std::vector<size_t> SoftmaxSizes() { return {16, 64, 256, 1024, 4096}; }

std::string LinearShape::Name() const {
  return "linear/rows=" + std::to_string(rows) + ",in=" + std::to_string(in) + ",out=" + std::to_string(out);
}

std::vector<LinearShape> LinearShapes() { return {{4, 8, 8}, {16, 256, 256}, {64, 512, 512}}; }

Floats Random(size_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  Floats v(n);
  for (float& x : v) x = dist(engine);
  return v;
}

namespace {
// One shared instance per key, built by `make` on first use and kept until the process ends.
template <typename Key, typename T, typename Make>
const T& Shared(std::map<Key, std::unique_ptr<const T>>& cache, const Key& key, Make&& make) {
  auto& slot = cache[key];
  if (!slot) slot.reset(make());
  return *slot;
}

// The double reference of shared inputs, computed on the first check; keyed by the inputs' address (they live
// until the process ends, so an address never names two different inputs).
template <typename Make>
const std::vector<double>& CachedReference(const void* inputs, int variant, Make&& make) {
  static std::map<std::pair<const void*, int>, std::unique_ptr<const std::vector<double>>> cache;
  return Shared(cache, std::make_pair(inputs, variant), [&] { return new std::vector<double>(make()); });
}

// Larger than the last-level cache of the cores this suite targets (48 MB here), so a cold call reads DRAM.
constexpr size_t kColdPoolBytes = size_t{256} << 20;

// The pool every cold decode case reads its copies from: K copies in the first half, V copies in the second.
const Floats& ColdPool() {
  static const Floats pool = Random(kColdPoolBytes / sizeof(float), -1, 1, 202);
  return pool;
}
}  // namespace

const AttentionInputs& AttentionInputs::Get(size_t len, size_t dim) {
  static std::map<std::pair<size_t, size_t>, std::unique_ptr<const AttentionInputs>> cache;
  return Shared(cache, std::make_pair(len, dim), [&] { return new AttentionInputs(len, dim); });
}

AttentionInputs::AttentionInputs(size_t len_, size_t dim_)
    : len(len_),
      dim(dim_),
      scale(1.0f / std::sqrt(static_cast<float>(dim_))),
      q(Random(len_ * dim_, -1, 1, 101)),
      k(Random(len_ * dim_, -1, 1, 102)),
      v(Random(len_ * dim_, -1, 1, 103)) {}

const LinearInputs& LinearInputs::Get(const LinearShape& s) {
  static std::map<std::string, std::unique_ptr<const LinearInputs>> cache;
  return Shared(cache, s.Name(), [&] { return new LinearInputs(s); });
}

LinearInputs::LinearInputs(const LinearShape& s)
    : shape(s),
      x(Random(s.rows * s.in, -1, 1, 601)),
      w(Random(s.in * s.out, -1, 1, 602)),
      b(Random(s.out, -1, 1, 603)) {}

const DecodeInputs& DecodeInputs::Get(const DecodeShape& shape) {
  static std::map<std::string, std::unique_ptr<const DecodeInputs>> cache;
  return Shared(cache, shape.Name(), [&] { return new DecodeInputs(shape); });
}

DecodeInputs::DecodeInputs(const DecodeShape& shape)
    : keys(shape.keys),
      dim(shape.dim),
      copies(shape.cold ? std::max<size_t>(2, kColdPoolBytes / (2 * shape.keys * shape.dim * sizeof(float))) : 1),
      scale(1.0f / std::sqrt(static_cast<float>(shape.dim))),
      q(Random(shape.dim, -1, 1, 201)) {
  if (shape.cold) {
    const Floats& pool = ColdPool();
    k_ = pool.data();
    v_ = pool.data() + pool.size() / 2;
  } else {
    own_k_ = Random(keys * dim, -1, 1, 202);
    own_v_ = Random(keys * dim, -1, 1, 203);
    k_ = own_k_.data();
    v_ = own_v_.data();
  }
}

size_t DecodeInputs::NextCopy() {
  static size_t next = 0;
  return ++next;
}

const Floats& SoftmaxInput(size_t n) {
  static std::map<size_t, std::unique_ptr<const Floats>> cache;
  return Shared(cache, n, [&] { return new Floats(Random(n, -10, 10, 301)); });
}

const Floats& ExpInput() {
  static const Floats in = Random(kExpSize, -87, 0, 401);
  return in;
}

std::vector<double> ReferenceAttention(const float* q, const float* k, const float* v, size_t lq, size_t lk, size_t dim,
                                       float scale, bool causal) {
  std::vector<double> out(lq * dim, 0.0), p(lk);
  for (size_t i = 0; i < lq; ++i) {
    const size_t visible = causal ? std::min(lk, i + lk - lq + 1) : lk;
    double m = -std::numeric_limits<double>::infinity();
    for (size_t j = 0; j < visible; ++j) {
      double s = 0;
      for (size_t c = 0; c < dim; ++c) s += static_cast<double>(q[i * dim + c]) * k[j * dim + c];
      p[j] = s * scale;
      m = std::max(m, p[j]);
    }
    double sum = 0;
    for (size_t j = 0; j < visible; ++j) sum += (p[j] = std::exp(p[j] - m));
    for (size_t j = 0; j < visible; ++j) {
      for (size_t c = 0; c < dim; ++c) out[i * dim + c] += p[j] / sum * v[j * dim + c];
    }
  }
  return out;
}

std::vector<double> ReferenceSoftmax(const float* in, size_t rows, size_t cols) {
  std::vector<double> out(rows * cols);
  for (size_t r = 0; r < rows; ++r) {
    double m = -std::numeric_limits<double>::infinity(), sum = 0;
    for (size_t c = 0; c < cols; ++c) m = std::max(m, static_cast<double>(in[r * cols + c]));
    for (size_t c = 0; c < cols; ++c) sum += (out[r * cols + c] = std::exp(in[r * cols + c] - m));
    for (size_t c = 0; c < cols; ++c) out[r * cols + c] /= sum;
  }
  return out;
}

std::vector<double> ReferenceLinear(const float* x, size_t rows, size_t in, const float* w, const float* b,
                                    size_t out) {
  std::vector<double> y(rows * out);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t o = 0; o < out; ++o) {
      double sum = b[o];
      for (size_t i = 0; i < in; ++i) sum += static_cast<double>(x[r * in + i]) * w[i * out + o];
      y[r * out + o] = sum;
    }
  }
  return y;
}

double MaxRelativeRowError(const float* got, const std::vector<double>& ref, size_t rows, size_t cols) {
  double worst = 0;
  for (size_t r = 0; r < rows; ++r) {
    double diff = 0, norm = 0;
    for (size_t c = 0; c < cols; ++c) {
      const double e = ref[r * cols + c];
      diff += (got[r * cols + c] - e) * (got[r * cols + c] - e);
      norm += e * e;
    }
    const double error = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
    worst = std::isnan(error) ? std::numeric_limits<double>::infinity() : std::max(worst, error);
  }
  return worst;
}

void MaskAboveDiagonal(float* scores, size_t len) {
  for (size_t i = 0; i < len; ++i) {
    for (size_t j = i + 1; j < len; ++j) scores[i * len + j] = -std::numeric_limits<float>::infinity();
  }
}

double AttentionError(const AttentionInputs& in, bool causal, const float* out) {
  const auto& ref = CachedReference(&in, causal ? 1 : 0, [&] {
    return ReferenceAttention(in.q.data(), in.k.data(), in.v.data(), in.len, in.len, in.dim, in.scale, causal);
  });
  return MaxRelativeRowError(out, ref, in.len, in.dim);
}

double DecodeError(const DecodeInputs& in, const float* out) {
  const auto& ref = CachedReference(
      &in, 0, [&] { return ReferenceAttention(in.q.data(), in.K(0), in.V(0), 1, in.keys, in.dim, in.scale, false); });
  return MaxRelativeRowError(out, ref, 1, in.dim);
}

double SoftmaxError(const Floats& in, const float* out) {
  const auto& ref = CachedReference(&in, 0, [&] { return ReferenceSoftmax(in.data(), 1, in.size()); });
  return MaxRelativeRowError(out, ref, 1, in.size());
}

double ExpError(const Floats& in, const float* out) {
  double worst = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const double exact = std::exp(static_cast<double>(in[i]));
    const double error = std::fabs(out[i] - exact) / exact;
    worst = std::isnan(error) ? std::numeric_limits<double>::infinity() : std::max(worst, error);
  }
  return worst;
}

double MaxUlpError(const float* got, const double* ref, size_t n, const double* unit) {
  double worst = 0;
  for (size_t i = 0; i < n; ++i) {
    const double r = ref[i];
    if (std::isnan(got[i]) || std::isnan(r)) {
      if (std::isnan(got[i]) != std::isnan(r)) return std::numeric_limits<double>::infinity();
      continue;
    }
    const double u = unit != nullptr ? std::max(std::fabs(unit[i]), std::fabs(r)) : r;
    const int exponent = u == 0 ? -126 : std::max(std::ilogb(u), -126);
    const double ulp = std::ldexp(1.0, exponent - 23);
    worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - r) / ulp);
  }
  return worst;
}

double SoftmaxUlp(const Floats& in, const float* out) {
  const auto& ref = CachedReference(&in, 0, [&] { return ReferenceSoftmax(in.data(), 1, in.size()); });
  return MaxUlpError(out, ref.data(), in.size());
}

double ExpUlp(const Floats& in, const float* out) {
  const auto& ref = CachedReference(&in, 0, [&] {
    std::vector<double> e(in.size());
    for (size_t i = 0; i < in.size(); ++i) e[i] = std::exp(static_cast<double>(in[i]));
    return e;
  });
  return MaxUlpError(out, ref.data(), in.size());
}

void SetAccuracy(benchmark::State& state, double max_ulp) { state.counters["max_ulp"] = max_ulp; }

void FillKvCache(edgeattn::KvType type, size_t kv_heads, size_t n, size_t dim, uint32_t seed_k, uint32_t seed_v,
                 std::vector<unsigned char>* storage, edgeattn::KvCache* cache) {
  edgeattn::KvCacheDesc d;
  d.type = type;
  d.num_kv_heads = kv_heads;
  d.head_dim = d.value_dim = dim;
  d.capacity = n;
  storage->resize(edgeattn::KvCacheStorageSize(d));
  const Floats k = Random(n * kv_heads * dim, -1, 1, seed_k), v = Random(n * kv_heads * dim, -1, 1, seed_v);
  if (cache->Init(d, storage->data(), storage->size()) != edgeattn::Status::kOk ||
      cache->Append(k.data(), v.data(), n) != edgeattn::Status::kOk) {
    storage->clear();
  }
}

const char* KvTypeName(edgeattn::KvType type) {
  return type == edgeattn::KvType::kF32 ? "f32" : type == edgeattn::KvType::kF16 ? "f16" : "q8";
}

double LinearError(const LinearInputs& in, const float* y) {
  const LinearShape& s = in.shape;
  const auto& ref = CachedReference(
      &in, 0, [&] { return ReferenceLinear(in.x.data(), s.rows, s.in, in.w.data(), in.b.data(), s.out); });
  return MaxRelativeRowError(y, ref, s.rows, s.out);
}

double LinearFlops(const LinearShape& s) { return 2.0 * static_cast<double>(s.rows * s.in * s.out); }

double DecodeFlops(const DecodeShape& shape) {
  return AttentionFlops(1, shape.dim, false) * static_cast<double>(shape.keys);
}

double DecodeBytes(const DecodeShape& shape) {
  return 2.0 * static_cast<double>(shape.keys * shape.dim * sizeof(float));
}

bool CheckResult(benchmark::State& state, double error, double tolerance) {
  state.counters["max_rel_error"] = error;
  if (error <= tolerance) return true;
  char message[96];
  std::snprintf(message, sizeof(message), "wrong result: relative error %.3g > %.3g", error, tolerance);
  state.SkipWithError(message);
  return false;
}

namespace {
// Every registered implementation, by case, in registration order (for RegisterPairs).
std::map<std::string, std::vector<std::pair<std::string, BenchFn>>>& Registry() {
  static std::map<std::string, std::vector<std::pair<std::string, BenchFn>>> registry;
  return registry;
}

void AddBenchmark(const std::string& name, BenchFn fn) {
  benchmark::RegisterBenchmark(name.c_str(), [fn](benchmark::State& state) { fn(state); })
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond)
      // The fastest repetition: noise on a shared machine only ever adds time, so the minimum is the most
      // repeatable statistic of one implementation's time (report.py's time columns).
      ->ComputeStatistics("min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); });
}

// The pair being timed (benchmarks run one at a time, on the main thread).
struct Pair {
  BenchFn other;                                // the other implementation's benchmark function
  const std::function<void()>* simd = nullptr;  // edgeattn's call, once its benchmark reached TimeIfRight
  bool timed = false;
};
Pair* active_pair = nullptr;

double Seconds(std::chrono::steady_clock::duration t) { return std::chrono::duration<double>(t).count(); }
}  // namespace

void Register(const std::string& case_name, const std::string& impl, BenchFn fn) {
  Registry()[case_name].emplace_back(impl, fn);
  AddBenchmark(case_name + "/" + impl, std::move(fn));
}

void RegisterPairs() {
  for (const auto& [case_name, impls] : Registry()) {
    const bool fixed = case_name.rfind("fixed_attention", 0) == 0;
    const BenchFn* simd = nullptr;
    for (const auto& [impl, fn] : impls) {
      if (impl == "simd") simd = &fn;
    }
    if (simd == nullptr) continue;
    std::vector<std::pair<std::string, BenchFn>> others;
    for (const auto& [impl, fn] : impls) {  // the scalar path, and the peers (the fixed cases have none)
      if (impl == "scalar" || (!fixed && impl != "simd" && impl.rfind("simd:", 0) != 0)) others.emplace_back(impl, fn);
    }
    if (fixed) {  // "fixed_attention/..." against the runtime-shape implementations of "attention/..."
      const auto runtime = Registry().find("attention" + case_name.substr(std::string("fixed_attention").size()));
      if (runtime != Registry().end()) {
        for (const auto& [impl, fn] : runtime->second) {
          if (impl != "scalar" && impl.rfind("simd:", 0) != 0)
            others.emplace_back(impl == "simd" ? "runtime" : impl, fn);
        }
      }
    }
    for (const auto& [impl, fn] : others) {
      const BenchFn simd_fn = *simd, other_fn = fn;
      AddBenchmark(case_name + "/simd~" + impl, [simd_fn, other_fn](benchmark::State& state) {
        Pair pair;
        pair.other = other_fn;
        active_pair = &pair;
        simd_fn(state);
        active_pair = nullptr;
        if (!pair.timed && !state.error_occurred()) state.SkipWithError("the pair was not timed");
      });
    }
  }
}

bool PairActive() { return active_pair != nullptr; }

void TimePaired(benchmark::State& state, const std::function<void()>& call) {
  Pair& pair = *active_pair;
  if (pair.simd == nullptr) {  // edgeattn's side: keep its call alive in this frame while the other one runs
    pair.simd = &call;
    pair.other(state);
    return;
  }
  const std::function<void()>& simd = *pair.simd;
  using Clock = std::chrono::steady_clock;
  // Calls per batch: about 20 us of the slower of the two (at least one call).
  Clock::time_point t0 = Clock::now();
  simd();
  Clock::time_point t1 = Clock::now();
  call();
  const double slower = std::max(Seconds(t1 - t0), Seconds(Clock::now() - t1));
  const size_t batch = std::max<size_t>(1, static_cast<size_t>(20e-6 / std::max(slower, 1e-9)));
  // Rounds (pairs of batches) per iteration: enough that a repetition of a few hundredths of a second still
  // gathers up to 8 ratios when a call takes milliseconds (L = 1024: one or two would decide the median).
  const double round_seconds = 2.0 * static_cast<double>(batch) * slower;
  const size_t rounds = std::min<size_t>(8, std::max<size_t>(1, static_cast<size_t>(0.15 / round_seconds)));
  std::vector<double> ratios;
  double best_simd = std::numeric_limits<double>::infinity(), best_other = best_simd;
  bool simd_first = true;
  for (auto _ : state) {
    for (size_t round = 0; round < rounds; ++round) {
      // The order alternates, so that neither call always runs right after the other's cache traffic.
      double t_simd = 0, t_other = 0;
      for (int half = 0; half < 2; ++half) {
        const bool run_simd = (half == 0) == simd_first;
        const std::function<void()>& f = run_simd ? simd : call;
        t0 = Clock::now();
        for (size_t i = 0; i < batch; ++i) f();
        (run_simd ? t_simd : t_other) = Seconds(Clock::now() - t0) / static_cast<double>(batch);
      }
      simd_first = !simd_first;
      ratios.push_back(t_other / t_simd);
      best_simd = std::min(best_simd, t_simd);
      best_other = std::min(best_other, t_other);
    }
  }
  std::sort(ratios.begin(), ratios.end());
  const size_t n = ratios.size();
  if (n > 0) {
    state.counters["ratio"] = n % 2 ? ratios[n / 2] : 0.5 * (ratios[n / 2 - 1] + ratios[n / 2]);
    state.counters["simd_s"] = best_simd;
    state.counters["other_s"] = best_other;
    state.counters["batches"] = static_cast<double>(n);
  }
  pair.timed = true;
}

void SetCounters(benchmark::State& state, double flops, double bytes, double elements) {
  using benchmark::Counter;
  state.counters["flops"] = flops;
  state.counters["bytes"] = bytes;
  state.counters["elements"] = elements;
  if (flops > 0) state.counters["GFLOP/s"] = Counter(flops * 1e-9, Counter::kIsIterationInvariantRate);
  if (bytes > 0) state.counters["GB/s"] = Counter(bytes * 1e-9, Counter::kIsIterationInvariantRate);
  if (elements > 0) {
    state.counters["ns/elem"] = Counter(elements * 1e-9, Counter::kIsIterationInvariantRate | Counter::kInvert);
  }
}

double AttentionFlops(size_t len, size_t dim, bool causal) {
  const double pairs = causal ? 0.5 * static_cast<double>(len) * static_cast<double>(len + 1)
                              : static_cast<double>(len) * static_cast<double>(len);
  return 4.0 * static_cast<double>(dim) * pairs;
}

}  // namespace edgeattn_bench
