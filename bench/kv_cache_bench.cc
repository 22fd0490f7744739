// SPDX-License-Identifier: Apache-2.0
// KV cache benchmarks: decode (q_len = 1) and chunked prefill (q_len = 16) against caches of n positions in f32,
// f16 and int8, one KV head shared by 4 query heads (GQA), hot (the same cache every call) and cold; append
// throughput. Each row names the route the dispatched target takes (docs/performance.md, KV cache routes; asked with
// KvRouteForTest at registration): kv_cache/<route>/decode/<type>/n=<n>,d=<d>,hot|cold,
// kv_cache/<route>/prefill16/..., kv_cache/append16/<type>/d=<d>. Until issue 28 the rows had no route segment
// (kv_cache/decode/...): drop it to compare with older runs. Besides the aligned caches: decode on storage one byte
// off alignment (F32, F16: route converted) and decode under a directed rounding mode (two_pass over several key
// chunks, scalar_rows over one). Each f16 and q8 case also times the SIMD path on an F32 cache of the same shape and
// contents as implementation "f32_cache", so RegisterPairs pairs them (ratio counter "simd~f32_cache": the f32
// cache's time / this one's); each decode case also times one query head on the same cache as "one_query_head"
// (GQA's cost: "simd~one_query_head"); each f32 decode case also times edgeattn_attention on plain arrays holding
// the same K and V as "uncached" (the cache's own cost over the decode path on the same bytes: "simd~uncached", the
// goal >= 0.95). Every result is checked against a double-precision attention over the values the cache stores
// (Read) before it is timed. Cold calls rotate through copies of the cache filling 256 MiB.
#include <algorithm>
#include <cfenv>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "edgeattn/edgeattn.hpp"
#include "lib/kv_cache/kv_route.h"

namespace edgeattn_bench {
namespace {

using edgeattn::KvType;
using edgeattn::Status;

constexpr size_t kQueryHeads = 4;
constexpr double kKvTolerance = 1e-5;  // relative L2 per row, against attention on the stored values

edgeattn::KvCacheDesc CacheDesc(KvType type, size_t n, size_t dim) {
  edgeattn::KvCacheDesc d;
  d.type = type;
  d.num_kv_heads = 1;
  d.head_dim = d.value_dim = dim;
  d.capacity = n;
  return d;
}

// The queries' descriptor: q_len causal queries of `heads` heads against a cache of this width.
edgeattn::AttentionDesc CachedDesc(size_t q_len, size_t dim, size_t heads) {
  edgeattn::AttentionDesc desc;
  desc.q_len = q_len;
  desc.kv_len = 0;
  desc.head_dim = desc.value_dim = dim;
  desc.num_heads = heads;
  desc.num_kv_heads = 1;
  desc.mask = edgeattn::MaskKind::kCausal;
  return desc;
}

// A filled cache of n positions of one KV head (inputs from fixed seeds: identical for every implementation), its
// storage `misalign` bytes past malloc's alignment.
struct BenchCache {
  std::vector<unsigned char> bytes;  // as before issue 28's rows, for A/B (malloc's alignment, then misalign)
  size_t misalign;
  edgeattn::KvCache cache;
  BenchCache(KvType type, size_t n, size_t dim, size_t misalign_bytes) : misalign(misalign_bytes) {
    const edgeattn::KvCacheDesc d = CacheDesc(type, n, dim);
    bytes.resize(edgeattn::KvCacheStorageSize(d) + misalign);
    const Floats k = Random(n * dim, -1, 1, 701), v = Random(n * dim, -1, 1, 702);
    if (cache.Init(d, bytes.data() + misalign, bytes.size() - misalign) != Status::kOk ||
        cache.Append(k.data(), v.data(), n) != Status::kOk) {
      bytes.clear();
    }
  }
  size_t StorageBytes() const { return bytes.size() - misalign; }
};

// Sets the rounding direction for the benchmark's lifetime (the directed rows); restores round-to-nearest.
class ScopedRounding {
 public:
  explicit ScopedRounding(bool upward) : set_(upward) {
    if (set_) std::fesetround(FE_UPWARD);
  }
  ~ScopedRounding() {
    if (set_) std::fesetround(FE_TONEAREST);
  }
  ScopedRounding(const ScopedRounding&) = delete;
  ScopedRounding& operator=(const ScopedRounding&) = delete;

 private:
  bool set_;
};

// The route AttentionCached takes on the dispatched target for q_len queries against a cache of this type, storage
// alignment and length (the length decides one key chunk or several), in round-to-nearest or upward.
std::string RouteName(KvType type, size_t n, size_t q_len, size_t misalign, bool upward) {
  BenchCache probe(type, n, 8, misalign);
  if (probe.bytes.empty()) return "unknown";
  const ScopedRounding rounding(upward);
  return edgeattn::internal::KvRouteName(
      edgeattn::internal::KvRouteForTest(CachedDesc(q_len, 8, kQueryHeads), probe.cache));
}

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
struct CachedCase {
  KvType type;
  size_t n, dim, q_len;
  bool cold;
  size_t heads = kQueryHeads;
  bool uncached = false;
  size_t misalign = 0;  // storage bytes past malloc's alignment
  bool upward = false;  // under FE_UPWARD (the directed-mode routes)
};

void Cached(benchmark::State& state, bool scalar, const CachedCase& cc) {
  static std::vector<std::unique_ptr<BenchCache>> caches;  // kept for the process: same addresses every run
  BenchCache* bc = nullptr;
  for (auto& c : caches) {
    const edgeattn::KvCacheDesc& d = c->cache.desc();
    if (d.type == cc.type && c->cache.length() == cc.n && d.head_dim == cc.dim && c->misalign == cc.misalign) {
      bc = c.get();
    }
  }
  if (bc == nullptr) {
    caches.push_back(std::make_unique<BenchCache>(cc.type, cc.n, cc.dim, cc.misalign));
    bc = caches.back().get();
  }
  if (bc->bytes.empty()) return state.SkipWithError("cache setup failed");
  const size_t heads = cc.heads, dim = cc.dim, q_len = cc.q_len;
  const Floats q = Random(q_len * heads * dim, -1, 1, 703);
  if (cc.uncached) return Uncached(state, *bc, q, heads, cc.cold);
  Floats out(q_len * heads * dim);
  const edgeattn::AttentionDesc desc = CachedDesc(q_len, dim, heads);
  std::vector<unsigned char> ws(edgeattn::AttentionCachedWorkspaceSize(desc, bc->cache));
  const size_t bytes_each = bc->StorageBytes() + cc.misalign;
  const size_t copies = cc.cold ? std::max<size_t>(2, kColdBytes / bytes_each) : 0;
  std::vector<unsigned char, CacheAligned<unsigned char>> pool(copies * bytes_each);
  std::vector<edgeattn::KvCache> views;
  for (size_t c = 0; c < copies; ++c) {
    std::copy(bc->bytes.begin() + static_cast<std::ptrdiff_t>(cc.misalign), bc->bytes.end(),
              pool.begin() + static_cast<std::ptrdiff_t>(c * bytes_each + cc.misalign));
    edgeattn::internal::KvCacheState st = bc->cache.state();
    st.storage = pool.data() + c * bytes_each + cc.misalign;
    views.emplace_back(st);
  }
  const ScopedRounding rounding(cc.upward);
  size_t next = 0;
  auto run = [&] {
    const edgeattn::KvCache& cache = cc.cold ? views[next++ % copies] : bc->cache;
    return scalar ? edgeattn::scalar::AttentionCached(desc, q.data(), cache, out.data(), ws.data(), ws.size())
                  : edgeattn::AttentionCached(desc, q.data(), cache, out.data(), ws.data(), ws.size());
  };
  const Status s = run();
  if (s != Status::kOk) return state.SkipWithError(edgeattn::StatusString(s));
  const double bytes = static_cast<double>(bc->StorageBytes());  // K, V (and scales) read once per call
  const double flops = 4.0 * static_cast<double>(dim * cc.n * q_len * heads);
  // Under FE_UPWARD every rounding errs the same way: attention.h's directed-mode bound (u = 2^-23), not the
  // round-to-nearest figure the other rows are checked against.
  TimeIfRight(state, CachedError(bc->cache, q.data(), q_len, heads, dim, out.data()),
              cc.upward ? 10 * kKvTolerance : kKvTolerance, run, flops, bytes, 0);
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

// One case's rows: edgeattn's scalar path (hot only: cold it is compute-bound, and slow to time), its SIMD path,
// and for the aligned round-to-nearest decode cases the pairs described at the top.
void RegisterCachedCase(const std::string& call, const CachedCase& cc) {
  const std::string name = "kv_cache/" + RouteName(cc.type, cc.n, cc.q_len, cc.misalign, cc.upward) + "/" + call + "/" +
                           KvTypeName(cc.type) + "/n=" + std::to_string(cc.n) + ",d=" + std::to_string(cc.dim) +
                           (cc.cold ? ",cold" : ",hot");
  Register(name, "simd", [=](benchmark::State& s) { Cached(s, false, cc); });
  if (cc.misalign != 0 || cc.upward) return;
  if (!cc.cold) Register(name, "scalar", [=](benchmark::State& s) { Cached(s, true, cc); });
  if (cc.type != KvType::kF32) {
    CachedCase f32 = cc;
    f32.type = KvType::kF32;
    Register(name, "f32_cache", [=](benchmark::State& s) { Cached(s, false, f32); });
  }
  if (cc.q_len != 1) return;
  // The GQA goal: the 4 query heads against one of them on the same cache ("simd~one_query_head").
  CachedCase one = cc;
  one.heads = 1;
  Register(name, "one_query_head", [=](benchmark::State& s) { Cached(s, false, one); });
  if (cc.type != KvType::kF32) return;
  CachedCase uncached = cc;
  uncached.uncached = true;
  Register(name, "uncached", [=](benchmark::State& s) { Cached(s, false, uncached); });
}

}  // namespace

void RegisterKvCache() {
  const KvType types[] = {KvType::kF32, KvType::kF16, KvType::kQ8};
  for (KvType type : types) {
    for (size_t n : {1024, 4096, 16384}) {
      for (size_t dim : {64, 128}) {
        for (size_t q_len : {1, 16}) {
          for (bool cold : {false, true}) {
            if (q_len == 16 && n == 16384) continue;
            // ",hot"/",cold": report.py judges the row against the memory its bytes come from, as attention/decode's.
            RegisterCachedCase(q_len == 1 ? "decode" : "prefill16", CachedCase{type, n, dim, q_len, cold});
          }
        }
      }
    }
    for (size_t dim : {64, 128}) {
      Register(std::string("kv_cache/append16/") + KvTypeName(type) + "/d=" + std::to_string(dim), "simd",
               [=](benchmark::State& s) { Append(s, type, dim); });
    }
  }
  // The other routes on the decode step: storage one byte off alignment (F32 and F16 convert their tiles), and a
  // directed rounding mode (several key chunks: two passes per chunk; one chunk: the scalar row kernels).
  for (KvType type : {KvType::kF32, KvType::kF16}) {
    CachedCase misaligned{type, 4096, 128, 1, false};
    misaligned.misalign = 1;
    RegisterCachedCase("decode", misaligned);
  }
  for (size_t n : {size_t{512}, size_t{4096}}) {
    CachedCase directed{KvType::kF32, n, 128, 1, false};
    directed.upward = true;
    RegisterCachedCase("decode", directed);
  }
}

}  // namespace edgeattn_bench
