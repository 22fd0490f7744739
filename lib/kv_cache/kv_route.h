// SPDX-License-Identifier: Apache-2.0
// The routes of AttentionCached's SIMD path by name (docs/performance.md, KV cache routes; docs/architecture.md).
// Internal: the route ChooseKvRoute (lib/kv_cache/kv_cache-inl.h) picks before anything is written, and a test-only
// hook that reports it.
#ifndef EDGEATTN_LIB_KV_CACHE_KV_ROUTE_H_
#define EDGEATTN_LIB_KV_CACHE_KV_ROUTE_H_

#include "edgeattn/kv_cache.h"

namespace edgeattn {
namespace internal {

enum class KvRoute { kFused, kConverted, kTwoPass, kScalarRows };

// "fused", "converted", "two_pass", "scalar_rows": the names of the routes' benchmark rows (kv_cache/<route>/...)
// and doc sections.
constexpr const char* KvRouteName(KvRoute route) {
  return route == KvRoute::kFused       ? "fused"
         : route == KvRoute::kConverted ? "converted"
         : route == KvRoute::kTwoPass   ? "two_pass"
                                        : "scalar_rows";
}

// For tests and benchmarks only: the route AttentionCached takes for desc against cache on the target the
// dispatcher selects now (forced targets included), in the caller's floating-point environment now. A call that
// AttentionCached rejects answers kScalarRows.
KvRoute KvRouteForTest(const AttentionDesc& desc, const KvCache& cache) noexcept;

}  // namespace internal
}  // namespace edgeattn

#endif  // EDGEATTN_LIB_KV_CACHE_KV_ROUTE_H_
