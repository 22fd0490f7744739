// SPDX-License-Identifier: Apache-2.0
// KV cache entry points: the cache's checks and storage operations (shared by every path: one conversion code,
// the same stored bits everywhere), and attention against it on the scalar or the dispatched SIMD kernels.
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "edgeattn/kv_cache.h"
#include "lib/attention/attention_checks.h"
#include "lib/attention/attention_split.h"
#include "lib/common/bit_cast.h"
#include "lib/common/checks.h"
#include "lib/common/dispatch.h"
#include "lib/kv_cache/kv_cache_scalar.h"
#include "lib/kv_cache/kv_cache_storage.h"
#include "lib/kv_cache/kv_route.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/kv_cache/kv_cache.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/kv_cache/kv_cache-inl.h"

#if HWY_ONCE
namespace edgeattn {
namespace {

using internal::KvLayout;

// Shape checks of a cache descriptor: zero sizes and byte counts that overflow size_t.
Status CheckCacheShape(const KvCacheDesc& d) {
  if (d.num_kv_heads == 0 || d.head_dim == 0 || d.value_dim == 0 || d.capacity == 0) return Status::kInvalidShape;
  // The storage size with the widest element (F32) and the Q8 scales both fit: no layout offset overflows.
  if (KvCacheStorageBytes(KvType::kF32, d.num_kv_heads, d.head_dim, d.value_dim, d.capacity) == 0 ||
      KvCacheStorageBytes(KvType::kQ8, d.num_kv_heads, d.head_dim, d.value_dim, d.capacity) == 0) {
    return Status::kInvalidShape;
  }
  return Status::kOk;
}

Status CheckCacheArguments(const KvCacheDesc& d) {
  if (d.type != KvType::kF32 && d.type != KvType::kF16 && d.type != KvType::kQ8) return Status::kInvalidArgument;
  if (d.window > d.capacity) return Status::kInvalidArgument;
  return Status::kOk;
}

// An initialised cache: its descriptor still valid, its length consistent with the first held position kept in the
// storage's header (a struct changed by hand is kInvalidArgument), its storage large enough (kWorkspaceTooSmall,
// after the arguments, as for every buffer; a storage without even the header cannot tell its first position).
Status CheckCacheState(const internal::KvCacheState& s, uint64_t* oldest) {
  *oldest = 0;
  if (s.storage == nullptr) return Status::kNullPointer;
  Status status = CheckCacheShape(s.desc);
  if (status != Status::kOk) return status;
  status = CheckCacheArguments(s.desc);
  if (status != Status::kOk) return status;
  if (s.desc.window == 0 && s.length > s.desc.capacity) return Status::kInvalidArgument;
  if (s.storage_size < internal::kKvHeaderBytes) return Status::kWorkspaceTooSmall;
  *oldest = internal::LoadOldest(s.storage);
  if (*oldest > s.length || s.length - *oldest > s.desc.capacity) return Status::kInvalidArgument;
  if (s.desc.window == 0 && *oldest != 0) return Status::kInvalidArgument;
  if (s.storage_size < KvCacheStorageSize(s.desc)) return Status::kWorkspaceTooSmall;
  return Status::kOk;
}

// Whether a CheckCacheState status comes before the caller's own shape and argument checks: all but a short
// storage, which comes after them (kWorkspaceTooSmall, attention_checks.h's order).
bool BeforeCallersChecks(Status state_status) {
  return state_status != Status::kOk && state_status != Status::kWorkspaceTooSmall;
}

}  // namespace

size_t KvCacheStorageSize(const KvCacheDesc& desc) noexcept {
  return KvCacheStorageBytes(desc.type, desc.num_kv_heads, desc.head_dim, desc.value_dim, desc.capacity, desc.window);
}

Status KvCache::Init(const KvCacheDesc& desc, void* storage, size_t storage_size) noexcept {
  if (storage == nullptr) return Status::kNullPointer;
  Status status = CheckCacheShape(desc);
  if (status != Status::kOk) return status;
  status = CheckCacheArguments(desc);
  if (status != Status::kOk) return status;
  if (storage_size < KvCacheStorageSize(desc)) return Status::kWorkspaceTooSmall;
  internal::StoreOldest(storage, 0);
  state_ = internal::KvCacheState{desc, storage, storage_size, 0};
  return Status::kOk;
}

size_t KvCache::OldestPosition() const noexcept {
  uint64_t oldest = 0;
  return CheckCacheState(state_, &oldest) == Status::kOk ? static_cast<size_t>(oldest) : state_.length;
}

HWY_EXPORT(KvStorePositions);
HWY_EXPORT(KvStorableValues);

Status KvCache::Append(const float* k, const float* v, size_t n) noexcept {
  if (state_.storage == nullptr || (n != 0 && (k == nullptr || v == nullptr))) return Status::kNullPointer;
  uint64_t oldest;
  const Status state_status = CheckCacheState(state_, &oldest);
  if (BeforeCallersChecks(state_status)) return state_status;
  const KvCacheDesc& d = state_.desc;
  size_t k_bytes, v_bytes;
  if (!internal::FloatBytes(n, d.num_kv_heads, d.head_dim, &k_bytes) ||
      !internal::FloatBytes(n, d.num_kv_heads, d.value_dim, &v_bytes) || n > SIZE_MAX - state_.length) {
    return Status::kInvalidShape;
  }
  const KvLayout l = internal::MakeKvLayout(d);
  // A ring stores only the last `capacity` of the positions; the others are neither stored nor checked.
  const size_t skip = d.window != 0 && n > d.capacity ? n - d.capacity : 0;
  if (n != 0 && d.type != KvType::kF32 &&
      (!EDGEATTN_DISPATCH(KvStorableValues)(d.type, k + skip * l.k_row, (n - skip) * l.k_row) ||
       !EDGEATTN_DISPATCH(KvStorableValues)(d.type, v + skip * l.v_row, (n - skip) * l.v_row))) {
    return Status::kInvalidArgument;
  }
  if (state_status != Status::kOk || n == 0) return state_status;
  if (d.window == 0 && n > d.capacity - state_.length) return Status::kCapacity;
  const internal::ByteRange storage_range = internal::RangeOf(state_.storage, KvCacheStorageSize(d));
  if (internal::Overlap(storage_range, internal::RangeOf(k, k_bytes)) ||
      internal::Overlap(storage_range, internal::RangeOf(v, v_bytes))) {
    return Status::kOverlap;
  }
  unsigned char* storage = static_cast<unsigned char*>(state_.storage);
  if (d.type != KvType::kF32) {
    EDGEATTN_DISPATCH(KvStorePositions)
    (l, storage, state_.length + skip, n - skip, k + skip * l.k_row, v + skip * l.v_row);
  } else {
    for (size_t j = skip; j < n; ++j) {
      internal::StorePosition(l, storage, state_.length + j, k + j * l.k_row, v + j * l.v_row);
    }
  }
  const size_t length = state_.length + n;
  if (length - oldest > d.capacity) internal::StoreOldest(storage, length - d.capacity);
  state_.length = length;
  return Status::kOk;
}

Status KvCache::Truncate(size_t length) noexcept {
  uint64_t oldest;
  const Status status = CheckCacheState(state_, &oldest);
  if (BeforeCallersChecks(status)) return status;
  if (length > state_.length || length < oldest) return Status::kInvalidArgument;
  if (status != Status::kOk) return status;
  state_.length = length;
  return Status::kOk;
}

Status KvCache::Read(size_t position, float* k, float* v) const noexcept {
  if (k == nullptr || v == nullptr) return Status::kNullPointer;
  uint64_t oldest;
  const Status status = CheckCacheState(state_, &oldest);
  if (BeforeCallersChecks(status)) return status;
  const KvCacheDesc& d = state_.desc;
  if (position < oldest || position >= state_.length) return Status::kInvalidArgument;
  if (status != Status::kOk) return status;
  const KvLayout l = internal::MakeKvLayout(d);
  const internal::ByteRange k_range = internal::RangeOf(k, l.k_row * sizeof(float));
  const internal::ByteRange v_range = internal::RangeOf(v, l.v_row * sizeof(float));
  const internal::ByteRange storage_range = internal::RangeOf(state_.storage, KvCacheStorageSize(d));
  if (internal::Overlap(k_range, v_range) || internal::Overlap(k_range, storage_range) ||
      internal::Overlap(v_range, storage_range)) {
    return Status::kOverlap;
  }
  const unsigned char* storage = static_cast<const unsigned char*>(state_.storage);
  for (size_t g = 0; g < d.num_kv_heads; ++g) {
    internal::LoadHeadRow(l, storage, position % d.capacity, g, internal::KvSide::kKey, k + g * d.head_dim);
    internal::LoadHeadRow(l, storage, position % d.capacity, g, internal::KvSide::kValue, v + g * d.value_dim);
  }
  return Status::kOk;
}

namespace {

size_t WorkspaceBytes(const AttentionDesc& desc, const KvCacheDesc& c) {
  return AttentionCachedWorkspaceBytes(desc.q_len, desc.num_heads, c.num_kv_heads, c.head_dim, c.value_dim, c.capacity,
                                       c.window);
}

// The descriptor against the cache, without the cache's length: shape, then arguments.
Status CheckCachedDesc(const AttentionDesc& desc, const internal::KvCacheState& s) {
  if (desc.q_len == 0 || desc.head_dim == 0 || desc.value_dim == 0 || desc.num_heads == 0) {
    return Status::kInvalidShape;
  }
  size_t bytes;
  if (!internal::FloatBytes(desc.q_len, desc.num_heads, desc.head_dim, &bytes) ||
      !internal::FloatBytes(desc.q_len, desc.num_heads, desc.value_dim, &bytes)) {
    return Status::kInvalidShape;
  }
  const KvCacheDesc& c = s.desc;
  if (desc.num_heads % c.num_kv_heads == 0 && WorkspaceBytes(desc, c) == 0) return Status::kInvalidShape;
  return Status::kOk;
}

Status CheckCachedArguments(const AttentionDesc& desc, const internal::KvCacheState& s) {
  const KvCacheDesc& c = s.desc;
  const size_t kv_heads = desc.num_kv_heads == 0 ? desc.num_heads : desc.num_kv_heads;
  if (desc.kv_len != 0 || desc.head_dim != c.head_dim || desc.value_dim != c.value_dim || kv_heads != c.num_kv_heads ||
      desc.num_heads % kv_heads != 0 || desc.additive_mask != nullptr) {
    return Status::kInvalidArgument;
  }
  return internal::CheckScaleAndMask(desc);
}

// The call's problem from the descriptor and the cache, without pointers: shape, the cache's state, arguments.
Status CheckCachedProblem(const AttentionDesc& desc, const internal::KvCacheState& s, internal::KvAttentionProblem* p) {
  uint64_t oldest = 0;
  Status status = CheckCacheShape(s.desc);
  if (status == Status::kOk) status = CheckCachedDesc(desc, s);
  if (status != Status::kOk) return status;
  // What the cache can answer (its length; positions still held), where the mask kind says which are seen.
  const Status state_status = CheckCacheState(s, &oldest);
  // A short storage (kWorkspaceTooSmall) still tells the length and, past its header, the first held position.
  const bool state_known = state_status == Status::kOk || state_status == Status::kWorkspaceTooSmall;
  const bool known_mask = desc.mask == MaskKind::kNone || desc.mask == MaskKind::kCausal;
  // An empty cache is a shape error whatever the mask kind (an unknown kind is only an argument error, later).
  if (state_known && s.length == 0) return Status::kInvalidShape;
  if (state_known && known_mask) {
    if (desc.mask == MaskKind::kCausal && desc.q_len > s.length) return Status::kInvalidShape;
    p->layout = internal::MakeKvLayout(s.desc);
    p->length = s.length;
    p->q_len = desc.q_len;
    p->causal = desc.mask == MaskKind::kCausal;
    size_t lo, hi;
    internal::KvVisible(*p, 0, &lo, &hi);  // the first query sees the oldest positions
    if (lo < oldest) return Status::kInvalidShape;
  }
  if (BeforeCallersChecks(state_status)) return state_status;
  status = CheckCachedArguments(desc, s);
  if (status != Status::kOk) return status;
  if (state_status != Status::kOk) return state_status;
  p->storage = static_cast<const unsigned char*>(s.storage);
  p->num_heads = desc.num_heads;
  p->group = desc.num_heads / s.desc.num_kv_heads;
  p->scale = internal::ResolvedScale(desc.scale, desc.head_dim);
  return Status::kOk;
}

// The work split of a valid call (attention_split.h over kv heads and the visible positions); kInvalidShape when
// its count or shared bytes overflow size_t.
Status SplitOf(const internal::KvAttentionProblem& p, internal::PartGrid* grid, internal::SharedLayout* layout) {
  size_t first_lo, last_hi, unused;
  internal::KvVisible(p, 0, &first_lo, &unused);
  internal::KvVisible(p, p.q_len - 1, &unused, &last_hi);
  *grid = internal::MakePartGrid(p.layout.heads, p.q_len, last_hi - first_lo, false, p.causal);
  *layout = internal::MakeSharedLayout(p.num_heads * p.q_len, grid->chunks, p.layout.value_dim);
  return grid->count == 0 || (grid->chunks > 1 && layout->bytes == 0) ? Status::kInvalidShape : Status::kOk;
}

Status CheckCachedSplit(const AttentionDesc& desc, const KvCache& cache, internal::KvAttentionProblem* p,
                        internal::PartGrid* grid, internal::SharedLayout* layout) {
  const internal::KvCacheState& s = cache.state();
  if (s.storage == nullptr) return Status::kNullPointer;
  const Status status = CheckCachedProblem(desc, s, p);
  return status != Status::kOk ? status : SplitOf(*p, grid, layout);
}

// AttentionCached's checks (attention_checks.h gives the order); with split != null those of a part. Not inlined:
// its locals (the split's grid and layout, the byte ranges) leave the stack before the kernels run (Cortex-M: the
// documented 1 KiB worst case).
HWY_NOINLINE Status CheckCached(const AttentionDesc& desc, const float* q, const KvCache& cache, const float* out,
                                const void* workspace, size_t workspace_size, internal::KvAttentionProblem* p,
                                const internal::SplitArgs* split = nullptr) {
  const internal::KvCacheState& s = cache.state();
  if (q == nullptr || out == nullptr || s.storage == nullptr) return Status::kNullPointer;
  Status status = CheckCachedProblem(desc, s, p);
  if (status != Status::kOk) return status;
  internal::PartGrid grid{};
  internal::SharedLayout layout{};
  if (split != nullptr) {
    status = SplitOf(*p, &grid, &layout);
    if (status != Status::kOk) return status;
  }
  // Both products fit: CheckCachedDesc checked them.
  const size_t q_bytes = desc.q_len * desc.num_heads * desc.head_dim * sizeof(float);
  const size_t out_bytes = desc.q_len * desc.num_heads * desc.value_dim * sizeof(float);
  using internal::RangeOf;
  const internal::CallBuffers buffers{RangeOf(out, out_bytes),
                                      workspace,
                                      workspace_size,
                                      WorkspaceBytes(desc, s.desc),
                                      split,
                                      grid.count,
                                      layout.bytes};
  const internal::ByteRange inputs[] = {RangeOf(q, q_bytes), RangeOf(s.storage, KvCacheStorageSize(s.desc))};
  return internal::CheckCallBuffers(buffers, inputs, 2);
}

}  // namespace

HWY_EXPORT(KvAttentionForward);
HWY_EXPORT(KvAttentionPartForward);
HWY_EXPORT(KvAttentionFinishForward);
HWY_EXPORT(KvRouteOf);

size_t AttentionCachedWorkspaceSize(const AttentionDesc& desc, const KvCache& cache) noexcept {
  const internal::KvCacheState& s = cache.state();
  if (CheckCacheShape(s.desc) != Status::kOk || CheckCacheArguments(s.desc) != Status::kOk ||
      CheckCachedDesc(desc, s) != Status::kOk || CheckCachedArguments(desc, s) != Status::kOk) {
    return 0;
  }
  return WorkspaceBytes(desc, s.desc);
}

Status AttentionCached(const AttentionDesc& desc, const float* q, const KvCache& cache, float* out, void* workspace,
                       size_t workspace_size) noexcept {
  internal::KvAttentionProblem p{};
  const Status status = CheckCached(desc, q, cache, out, workspace, workspace_size, &p);
  if (status == Status::kOk) EDGEATTN_DISPATCH(KvAttentionForward)(p, q, out, internal::AlignedScratch(workspace));
  return status;
}

size_t AttentionCachedPartCount(const AttentionDesc& desc, const KvCache& cache) noexcept {
  internal::KvAttentionProblem p{};
  internal::PartGrid grid;
  internal::SharedLayout layout;
  return CheckCachedSplit(desc, cache, &p, &grid, &layout) == Status::kOk ? grid.count : 0;
}

size_t AttentionCachedSharedSize(const AttentionDesc& desc, const KvCache& cache) noexcept {
  internal::KvAttentionProblem p{};
  internal::PartGrid grid;
  internal::SharedLayout layout;
  return CheckCachedSplit(desc, cache, &p, &grid, &layout) == Status::kOk ? layout.bytes : 0;
}

Status AttentionCachedPart(const AttentionDesc& desc, size_t part, const float* q, const KvCache& cache, float* out,
                           void* shared, size_t shared_size, void* workspace, size_t workspace_size) noexcept {
  internal::KvAttentionProblem p{};
  const internal::SplitArgs split{part, shared, shared_size};
  const Status status = CheckCached(desc, q, cache, out, workspace, workspace_size, &p, &split);
  if (status == Status::kOk) {
    EDGEATTN_DISPATCH(KvAttentionPartForward)
    (p, part, q, out, shared == nullptr ? nullptr : internal::AlignedScratch(shared),
     internal::AlignedScratch(workspace));
  }
  return status;
}

Status AttentionCachedFinish(const AttentionDesc& desc, const KvCache& cache, void* shared, size_t shared_size,
                             float* out) noexcept {
  if (out == nullptr || cache.state().storage == nullptr) return Status::kNullPointer;
  internal::KvAttentionProblem p{};
  internal::PartGrid grid;
  internal::SharedLayout layout;
  Status status = CheckCachedSplit(desc, cache, &p, &grid, &layout);
  if (status != Status::kOk) return status;
  const size_t out_bytes = desc.q_len * desc.num_heads * desc.value_dim * sizeof(float);  // checked: it fits
  bool work;
  status = internal::CheckFinishBuffers(internal::RangeOf(out, out_bytes), shared, shared_size, layout.bytes, &work);
  if (work) EDGEATTN_DISPATCH(KvAttentionFinishForward)(p, internal::AlignedScratch(shared), out);
  return status;
}

namespace internal {

KvRoute KvRouteForTest(const AttentionDesc& desc, const KvCache& cache) noexcept {
  KvAttentionProblem p{};
  if (CheckCachedProblem(desc, cache.state(), &p) != Status::kOk) return KvRoute::kScalarRows;
  return EDGEATTN_DISPATCH(KvRouteOf)(p);
}

}  // namespace internal

namespace scalar {

size_t AttentionCachedWorkspaceSize(const AttentionDesc& desc, const KvCache& cache) noexcept {
  return edgeattn::AttentionCachedWorkspaceSize(desc, cache);
}

Status AttentionCached(const AttentionDesc& desc, const float* q, const KvCache& cache, float* out, void* workspace,
                       size_t workspace_size) noexcept {
  internal::KvAttentionProblem p{};
  const Status status = CheckCached(desc, q, cache, out, workspace, workspace_size, &p);
  if (status == Status::kOk) internal::KvAttentionScalar(p, q, out, internal::AlignedScratch(workspace));
  return status;
}

}  // namespace scalar
}  // namespace edgeattn
#endif  // HWY_ONCE
