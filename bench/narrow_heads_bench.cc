// SPDX-License-Identifier: Apache-2.0
// Narrow heads (issue 33): decode and short prefill against a KV cache of each type at the head widths of
// MCU-sized models, d = 8, 16, 32 (and d = 64, to compare per byte), in the TinyStories-260K shape: 8 query heads
// over 4 KV heads (GQA groups of 2), n = 64 ... 512 cached positions, hot (a cache this size stays in L1 or L2).
// Rows: kv_cache/decode/<type>/n=<n>,d=<d>,h=8,kv=4,hot and kv_cache/prefill16/<type>/... (16 causal queries at the
// end of the cache). Implementations: "simd" (AttentionCached) and "plain_loop", this file's baseline written as a
// first implementation would be (llama2.c's run.c attention: per query head, a dot product with every visible key,
// a max-subtracted softmax with expf, a weighted sum of the values; narrow_heads_plain_loop.cc), reading the cache's
// own storage as kv_cache.h lays it out (f16 converted by bit arithmetic, q8 as q * scale). It is compiled like
// run.c's fast build (-Ofast -march=native: GCC may vectorise its reductions) on a native build.
// Both are checked against a double-precision attention over the values the cache stores before they are timed;
// "bytes" is the cache storage a call reads (K, V and the Q8 scales), so GB/s compares with the d = 64 rows.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "bench/narrow_heads_bench.h"
#include "edgeattn/edgeattn.hpp"

namespace edgeattn_bench {
namespace {

using edgeattn::KvType;
using edgeattn::Status;

constexpr size_t kHeads = 8, kKvHeads = 4;  // TinyStories-260K: dim 64 = 8 heads of 8, n_kv_heads 4
constexpr size_t kPrefill = 16;
constexpr double kNarrowTolerance = 1e-5;  // relative L2 per output row against the double reference

// One filled cache per (type, n, d), kept for the process (every implementation reads the same bytes).
struct NarrowCache {
  std::vector<unsigned char> storage;
  edgeattn::KvCache cache;
  NarrowCache(KvType type, size_t n, size_t dim) { FillKvCache(type, kKvHeads, n, dim, 801, 802, &storage, &cache); }
  static const NarrowCache& Get(KvType type, size_t n, size_t dim) {
    static std::vector<std::unique_ptr<NarrowCache>> caches;
    for (const auto& c : caches) {
      const edgeattn::KvCacheDesc& d = c->cache.desc();
      if (d.type == type && c->cache.length() == n && d.head_dim == dim) return *c;
    }
    caches.push_back(std::make_unique<NarrowCache>(type, n, dim));
    return *caches.back();
  }
};

// Worst relative L2 error of an output row [q_len][kHeads][dim] against double attention over what the cache
// stores (causal: query i sits at position n - q_len + i).
double NarrowError(const edgeattn::KvCache& cache, const float* q, size_t q_len, const float* out) {
  const size_t n = cache.length(), dim = cache.desc().head_dim, group = kHeads / kKvHeads;
  std::vector<float> k(n * kKvHeads * dim), v(n * kKvHeads * dim);
  for (size_t p = 0; p < n; ++p) {
    if (cache.Read(p, &k[p * kKvHeads * dim], &v[p * kKvHeads * dim]) != Status::kOk) return 1.0;
  }
  double worst = 0;
  for (size_t i = 0; i < q_len; ++i) {
    const size_t visible = n - q_len + i + 1;
    for (size_t h = 0; h < kHeads; ++h) {
      const size_t kv = h / group;
      std::vector<double> s(visible);
      double m = -HUGE_VAL, sum = 0, err = 0, norm = 0;
      for (size_t t = 0; t < visible; ++t) {
        double dot = 0;
        for (size_t c = 0; c < dim; ++c)
          dot += double{q[(i * kHeads + h) * dim + c]} * k[(t * kKvHeads + kv) * dim + c];
        m = std::max(m, s[t] = dot / std::sqrt(static_cast<double>(dim)));
      }
      for (double& x : s) sum += (x = std::exp(x - m));
      for (size_t c = 0; c < dim; ++c) {
        double o = 0;
        for (size_t t = 0; t < visible; ++t) o += s[t] / sum * v[(t * kKvHeads + kv) * dim + c];
        const double got = out[(i * kHeads + h) * dim + c];
        err += (got - o) * (got - o);
        norm += o * o;
      }
      worst = std::max(worst, std::sqrt(err / std::max(norm, 1e-300)));
    }
  }
  return worst;
}

void Narrow(benchmark::State& state, bool plain, KvType type, size_t n, size_t dim, size_t q_len) {
  const NarrowCache& nc = NarrowCache::Get(type, n, dim);
  if (nc.storage.empty()) return state.SkipWithError("cache setup failed");
  const Floats q = Random(q_len * kHeads * dim, -1, 1, 803);
  Floats out(q_len * kHeads * dim), att(n);
  edgeattn::AttentionDesc desc;
  desc.q_len = q_len;
  desc.head_dim = desc.value_dim = dim;
  desc.num_heads = kHeads;
  desc.num_kv_heads = kKvHeads;
  desc.mask = edgeattn::MaskKind::kCausal;
  std::vector<unsigned char> ws(edgeattn::AttentionCachedWorkspaceSize(desc, nc.cache));
  const PlainLoopCache view{nc.storage.data(), edgeattn::internal::KvElementBytes(type), n, kKvHeads, dim};
  auto run = [&] {
    if (!plain) return edgeattn::AttentionCached(desc, q.data(), nc.cache, out.data(), ws.data(), ws.size());
    PlainLoopAttention(view, q.data(), q_len, kHeads, att.data(), out.data());
    return Status::kOk;
  };
  const Status s = run();
  if (s != Status::kOk) return state.SkipWithError(edgeattn::StatusString(s));
  TimeIfRight(state, NarrowError(nc.cache, q.data(), q_len, out.data()), kNarrowTolerance, run,
              4.0 * static_cast<double>(dim * n * q_len * kHeads), static_cast<double>(nc.storage.size()), 0);
}

}  // namespace

void RegisterNarrowHeads() {
  for (KvType type : {KvType::kF32, KvType::kF16, KvType::kQ8}) {
    for (size_t dim : {8, 16, 32, 64}) {
      for (size_t n : {64, 128, 256, 512}) {
        for (size_t q_len : {size_t{1}, kPrefill}) {
          if (q_len == kPrefill && (n == 128 || n == 256)) continue;  // prefill at the two ends of the range
          const std::string name = std::string("kv_cache/") + (q_len == 1 ? "decode/" : "prefill16/") +
                                   KvTypeName(type) + "/n=" + std::to_string(n) + ",d=" + std::to_string(dim) +
                                   ",h=8,kv=4,hot";
          Register(name, "simd", [=](benchmark::State& s) { Narrow(s, false, type, n, dim, q_len); });
          Register(name, "plain_loop", [=](benchmark::State& s) { Narrow(s, true, type, n, dim, q_len); });
        }
      }
    }
  }
}

}  // namespace edgeattn_bench
