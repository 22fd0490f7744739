// KV cache benchmarks: decode (q_len = 1) and chunked prefill (q_len = 16) against caches of n positions in f32,
// f16 and int8, one KV head shared by 4 query heads (GQA), hot (the same cache every call) and cold; append
// throughput. Each f16 and q8 case also times the SIMD path on an F32 cache of the same shape and contents as
// implementation "f32_cache", so RegisterPairs pairs them (ratio counter "simd~f32_cache": the f32 cache's time / this one's);
// each decode case also times one query head on the same cache as "one_query_head" (GQA's cost: "simd~one_query_head");
// each f32 decode case also times edgeattn_attention on plain arrays holding the same K and V as "uncached" (the
// cache's own cost over today's decode path on the same bytes: "simd~uncached", the goal >= 0.95).
// Every result is checked against a double-precision attention over the values the cache stores (Read) before
// it is timed. Rows: kv_cache/decode/<type>/n=<n>,d=<d>,hot|cold, kv_cache/prefill16/..., and
// kv_cache/append16/<type>/d=<d>. Cold calls rotate through copies of the cache filling 256 MiB.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "edgeattn/edgeattn.hpp"

namespace edgeattn_bench {
namespace {

using edgeattn::KvType;
using edgeattn::Status;

constexpr size_t kQueryHeads = 4;
constexpr double kKvTolerance = 1e-5;  // relative L2 per row, against attention on the stored values

// A filled cache of n positions of one KV head (inputs from fixed seeds: identical for every implementation).
struct BenchCache {
  std::vector<unsigned char> storage;
  edgeattn::KvCache cache;
  BenchCache(KvType type, size_t n, size_t dim) { FillKvCache(type, 1, n, dim, 701, 702, &storage, &cache); }
};

// Largest relative L2 error of a row of out [q_len][heads][dim] against double attention on the stored values.
double CachedError(const edgeattn::KvCache& cache, const float* q, size_t q_len, size_t heads, size_t dim,
                   const float* out) {
  const size_t n = cache.length();
  std::vector<float> k(n * dim), v(n * dim);
  for (size_t p = 0; p < n; ++p) {
    if (cache.Read(p, &k[p * dim], &v[p * dim]) != Status::kOk) return 1.0;
  }
  double worst = 0;
  for (size_t i = 0; i < q_len; ++i) {
    const size_t visible = n - q_len + i + 1;  // causal: query i at position n - q_len + i
    for (size_t h = 0; h < heads; ++h) {
      const float* qr = q + (i * heads + h) * dim;
      std::vector<double> s(visible);
      double m = -HUGE_VAL, sum = 0, err = 0, norm = 0;
      for (size_t j = 0; j < visible; ++j) {
        double dot = 0;
        for (size_t c = 0; c < dim; ++c) dot += static_cast<double>(qr[c]) * k[j * dim + c];
        s[j] = dot / std::sqrt(static_cast<double>(dim));
        m = std::max(m, s[j]);
      }
      for (double& x : s) sum += (x = std::exp(x - m));
      for (size_t c = 0; c < dim; ++c) {
        double o = 0;
        for (size_t j = 0; j < visible; ++j) o += s[j] / sum * v[j * dim + c];
        const double got = out[(i * heads + h) * dim + c];
        err += (got - o) * (got - o);
        norm += o * o;
      }
      worst = std::max(worst, std::sqrt(err / std::max(norm, 1e-300)));
    }
  }
  return worst;
}

// Larger than the last-level cache of the cores this suite targets: cold calls rotate through copies of the cache
// that fill this many bytes, so each call reads its cache from DRAM.
constexpr size_t kColdBytes = size_t{256} << 20;

// The same decode (q_len = 1, the last position: every key visible) by edgeattn_attention on plain K and V arrays
// holding the values the cache stores, [K | V] per copy, cold calls rotating through copies as the cache's do.
void Uncached(benchmark::State& state, const BenchCache& bc, const Floats& q, size_t heads, bool cold) {
  const size_t n = bc.cache.length(), dim = bc.cache.desc().head_dim;
  Floats one(2 * n * dim);
  for (size_t p = 0; p < n; ++p) {
    if (bc.cache.Read(p, &one[p * dim], &one[(n + p) * dim]) != Status::kOk) return state.SkipWithError("read");
  }
  const size_t copies = cold ? std::max<size_t>(2, kColdBytes / (one.size() * sizeof(float))) : 1;
  std::vector<float, CacheAligned<float>> pool(copies * one.size());
  for (size_t c = 0; c < copies; ++c) {
    std::copy(one.begin(), one.end(), pool.begin() + static_cast<std::ptrdiff_t>(c * one.size()));
  }
  edgeattn::AttentionDesc desc;
  desc.q_len = 1;
  desc.kv_len = n;
  desc.head_dim = desc.value_dim = dim;
  desc.num_heads = heads;
  desc.num_kv_heads = 1;
  desc.mask = edgeattn::MaskKind::kNone;  // one query at the last position sees every key, as the cached call's
  std::vector<unsigned char> ws(edgeattn::AttentionWorkspaceSize(desc));
  Floats out(heads * dim);
  size_t next = 0;
  auto run = [&] {
    const float* k = pool.data() + (next++ % copies) * one.size();
    return edgeattn::Attention(desc, q.data(), k, k + n * dim, out.data(), ws.data(), ws.size());
  };
  const Status s = run();
  if (s != Status::kOk) return state.SkipWithError(edgeattn::StatusString(s));
  TimeIfRight(state, CachedError(bc.cache, q.data(), 1, heads, dim, out.data()), kKvTolerance, run,
              4.0 * static_cast<double>(dim * n * heads), static_cast<double>(one.size() * sizeof(float)), 0);
}

// Attention of q_len queries (the last q_len positions) against a cache of n positions; cold: copies of the cache
// (same bytes: the storage holds no pointer) used in turn. uncached: the Uncached row instead (q_len = 1).
void Cached(benchmark::State& state, bool scalar, KvType type, size_t n, size_t dim, size_t q_len, bool cold,
            size_t heads = kQueryHeads, bool uncached = false) {
  static std::vector<std::unique_ptr<BenchCache>> caches;  // kept for the process: same addresses every run
  BenchCache* bc = nullptr;
  for (auto& c : caches) {
    if (c->cache.desc().type == type && c->cache.length() == n && c->cache.desc().head_dim == dim) bc = c.get();
  }
  if (bc == nullptr) {
    caches.push_back(std::make_unique<BenchCache>(type, n, dim));
    bc = caches.back().get();
  }
  if (bc->storage.empty()) return state.SkipWithError("cache setup failed");
  const Floats q = Random(q_len * heads * dim, -1, 1, 703);
  if (uncached) return Uncached(state, *bc, q, heads, cold);
  Floats out(q_len * heads * dim);
  edgeattn::AttentionDesc desc;
  desc.q_len = q_len;
  desc.kv_len = 0;
  desc.head_dim = desc.value_dim = dim;
  desc.num_heads = heads;
  desc.num_kv_heads = 1;
  desc.mask = edgeattn::MaskKind::kCausal;
  std::vector<unsigned char> ws(edgeattn::AttentionCachedWorkspaceSize(desc, bc->cache));
  const size_t bytes_each = bc->storage.size();
  const size_t copies = cold ? std::max<size_t>(2, kColdBytes / bytes_each) : 0;
  std::vector<unsigned char, CacheAligned<unsigned char>> pool(copies * bytes_each);
  std::vector<edgeattn::KvCache> views;
  for (size_t c = 0; c < copies; ++c) {
    std::copy(bc->storage.begin(), bc->storage.end(), pool.begin() + static_cast<std::ptrdiff_t>(c * bytes_each));
    edgeattn::internal::KvCacheState st = bc->cache.state();
    st.storage = pool.data() + c * bytes_each;
    views.emplace_back(st);
  }
  size_t next = 0;
  auto run = [&] {
    const edgeattn::KvCache& cache = cold ? views[next++ % copies] : bc->cache;
    return scalar ? edgeattn::scalar::AttentionCached(desc, q.data(), cache, out.data(), ws.data(), ws.size())
                  : edgeattn::AttentionCached(desc, q.data(), cache, out.data(), ws.data(), ws.size());
  };
  const Status s = run();
  if (s != Status::kOk) return state.SkipWithError(edgeattn::StatusString(s));
  const double bytes = static_cast<double>(bc->storage.size());  // K, V (and scales) read once per call
  const double flops = 4.0 * static_cast<double>(dim * n * q_len * heads);
  TimeIfRight(state, CachedError(bc->cache, q.data(), q_len, heads, dim, out.data()), kKvTolerance, run, flops, bytes,
              0);
}

// Appending blocks of 16 positions to a ring of 1024 (the ring never fills: appending never stops).
void Append(benchmark::State& state, KvType type, size_t dim) {
  edgeattn::KvCacheDesc d;
  d.type = type;
  d.num_kv_heads = 1;
  d.head_dim = d.value_dim = dim;
  d.capacity = d.window = 1024;
  std::vector<unsigned char> storage(edgeattn::KvCacheStorageSize(d));
  edgeattn::KvCache cache;
  const Floats k = Random(16 * dim, -1, 1, 704), v = Random(16 * dim, -1, 1, 705);
  if (cache.Init(d, storage.data(), storage.size()) != Status::kOk) return state.SkipWithError("init failed");
  auto run = [&] { return cache.Append(k.data(), v.data(), 16); };
  if (run() != Status::kOk) return state.SkipWithError("append failed");
  // Correctness: the stored values read back within the format's rounding (checked by the tests; here 1e-2).
  std::vector<float> kr(dim), vr(dim);
  if (cache.Read(cache.length() - 1, kr.data(), vr.data()) != Status::kOk) return state.SkipWithError("read failed");
  double worst = 0;
  for (size_t c = 0; c < dim; ++c) worst = std::max(worst, std::fabs(kr[c] - static_cast<double>(k[15 * dim + c])));
  TimeIfRight(state, worst, 1e-2, run, 0, static_cast<double>(16 * 2 * dim * sizeof(float)),
              static_cast<double>(16 * 2 * dim));
}

}  // namespace

void RegisterKvCache() {
  const KvType types[] = {KvType::kF32, KvType::kF16, KvType::kQ8};
  for (KvType type : types) {
    for (size_t n : {1024, 4096, 16384}) {
      for (size_t dim : {64, 128}) {
        const std::string shape =
            std::string(KvTypeName(type)) + "/n=" + std::to_string(n) + ",d=" + std::to_string(dim);
        for (size_t q_len : {1, 16}) {
          for (bool cold : {false, true}) {
            if (q_len == 16 && n == 16384) continue;
            // ",hot"/",cold": report.py judges the row against the memory its bytes come from, as attention/decode's.
            const std::string name = std::string("kv_cache/") + (q_len == 1 ? "decode/" : "prefill16/") + shape +
                                     (cold ? ",cold" : ",hot");
            // The scalar path only hot (cold it is compute-bound, and slow to time).
            if (!cold) Register(name, "scalar", [=](benchmark::State& s) { Cached(s, true, type, n, dim, q_len, cold); });
            Register(name, "simd", [=](benchmark::State& s) { Cached(s, false, type, n, dim, q_len, cold); });
            if (type != KvType::kF32) {
              Register(name, "f32_cache",
                       [=](benchmark::State& s) { Cached(s, false, KvType::kF32, n, dim, q_len, cold); });
            }
            // The GQA goal: the 4 query heads against one of them on the same cache ("simd~one_query_head").
            if (q_len == 1) {
              Register(name, "one_query_head",
                       [=](benchmark::State& s) { Cached(s, false, type, n, dim, q_len, cold, 1); });
            }
            if (q_len == 1 && type == KvType::kF32) {
              Register(name, "uncached",
                       [=](benchmark::State& s) { Cached(s, false, type, n, dim, q_len, cold, kQueryHeads, true); });
            }
          }
        }
      }
    }
    for (size_t dim : {64, 128}) {
      Register(std::string("kv_cache/append16/") + KvTypeName(type) + "/d=" + std::to_string(dim), "simd",
               [=](benchmark::State& s) { Append(s, type, dim); });
    }
  }
}

}  // namespace edgeattn_bench
