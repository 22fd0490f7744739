// Attention against a KV cache on Highway vectors.

#if defined(EDGEATTN_LIB_KV_CACHE_KV_CACHE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_KV_CACHE_KV_CACHE_INL_H_
#undef EDGEATTN_LIB_KV_CACHE_KV_CACHE_INL_H_
#else
#define EDGEATTN_LIB_KV_CACHE_KV_CACHE_INL_H_
#endif

#include <stddef.h>

#include "hwy/highway.h"
#include "lib/kv_cache/kv_cache_scalar.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {

// Phase 1: the scalar algorithm, compiled per target.
inline void KvAttentionForward(const internal::KvAttentionProblem& p, const float* q, float* out, float* ws) {
  internal::KvAttentionScalar(p, q, out, ws);
}

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle
