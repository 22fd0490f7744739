// SPDX-License-Identifier: Apache-2.0
// KV cache: caller-owned storage of the keys and values of past positions, in f32, f16 or int8, and attention
// of new queries against it (prefill in chunks, then token-by-token decoding). No allocation: the storage and
// the workspace come from the caller, sized by constexpr functions so that firmware can reserve them statically.
#ifndef EDGEATTN_KV_CACHE_H_
#define EDGEATTN_KV_CACHE_H_

#include <stddef.h>
#include <stdint.h>

#include "edgeattn/attention.h"
#include "edgeattn/status.h"

namespace edgeattn {

// How the cache stores each element (same values as the C API's edgeattn_kv_type).
enum class KvType : int {
  kF32 = 0,  // float32 as given: 4 bytes per element
  // IEEE binary16, round to nearest even, subnormals kept; the conversion is integer code, so every target stores
  // the same bits. 2 bytes per element. |stored - x| <= half an f16 ULP of x (2^-25 below 2^-14).
  kF16 = 1,
  // int8, symmetric, one float scale per (position, kv head) for K and one for V: scale = max|row| / 127 (a
  // float division), q = round-to-nearest-even(x / scale) (a float division, then rounding to an integer),
  // clamped to [-127, 127]; an all-zero row has scale 0 and q = 0. Read back as q * scale (a float product).
  // 1 byte per element + 8 bytes per (position, kv head). |stored - x| <= scale/2 * (1 + 2^-14) + 2^-126.
  kQ8 = 2,
};

// Shape of a cache (same fields and rules as the C API's edgeattn_kv_cache_desc).
struct KvCacheDesc {
  KvType type = KvType::kF32;
  size_t num_kv_heads = 1;  // >= 1
  size_t head_dim = 0;      // >= 1, width of each key head
  size_t value_dim = 0;     // >= 1, width of each value head
  size_t capacity = 0;      // >= 1, positions held at once
  // 0: linear cache (appending past capacity is kCapacity). 1..capacity: sliding window: a query sees at most
  // the last `window` positions up to its own, and the storage is a ring (position p in slot p % capacity), so
  // appending never runs out.
  size_t window = 0;
};

namespace internal {
constexpr size_t kKvHeaderBytes = 16;  // the first held position (a uint64), then padding
constexpr size_t KvElementBytes(KvType type) {
  return type == KvType::kF32 ? 4 : type == KvType::kF16 ? 2 : type == KvType::kQ8 ? 1 : 0;
}
// a * b, or 0 if either is 0 or the product overflows size_t.
constexpr size_t KvMul(size_t a, size_t b) { return a == 0 || b == 0 || a > SIZE_MAX / b ? 0 : a * b; }
constexpr size_t KvAdd(size_t a, size_t b) { return a == 0 || b == 0 || a > SIZE_MAX - b ? 0 : a + b; }
// Bytes per position: K and V of every kv head, plus the two Q8 scales per kv head; 0 for an invalid shape.
constexpr size_t KvPositionBytes(KvType type, size_t heads, size_t head_dim, size_t value_dim) {
  return type == KvType::kQ8 ? KvAdd(KvMul(heads, KvAdd(head_dim, value_dim)), KvMul(heads, 2 * sizeof(float)))
                             : KvMul(KvMul(heads, KvAdd(head_dim, value_dim)), KvElementBytes(type));
}
}  // namespace internal

// Storage bytes of a cache: a 16-byte header (the first held position: a ring truncated below its last
// `capacity` positions holds fewer), then the K region [capacity][num_kv_heads][head_dim], the V region
// [capacity][num_kv_heads][value_dim] and, for kQ8, the scales [capacity][num_kv_heads][2] (K's, V's), slot
// p % capacity for position p. 0 if the shape is invalid (a zero size, an unknown type, window > capacity) or
// overflows size_t. Any alignment.
constexpr size_t KvCacheStorageBytes(KvType type, size_t num_kv_heads, size_t head_dim, size_t value_dim,
                                     size_t capacity, size_t window = 0) noexcept {
  return window > capacity
             ? 0
             : internal::KvAdd(
                   internal::kKvHeaderBytes,
                   internal::KvMul(capacity, internal::KvPositionBytes(type, num_kv_heads, head_dim, value_dim)));
}
size_t KvCacheStorageSize(const KvCacheDesc& desc) noexcept;

namespace internal {
// The state of a cache: what the C API's edgeattn_kv_cache holds.
struct KvCacheState {
  KvCacheDesc desc;
  void* storage;
  size_t storage_size;
  size_t length;
};
}  // namespace internal

// A cache over caller storage (not owned; the storage must outlive the cache). Copying a KvCache copies the
// view, not the storage: two copies appending to one storage corrupt each other.
//
// Rules of every call: an error returns its status and changes nothing (length, stored positions, outputs).
// Errors come in the order kNullPointer, kInvalidShape, kInvalidArgument, kWorkspaceTooSmall, kCapacity, kOverlap.
// Reading (Read, AttentionCached) from several threads at once is safe; Append and Truncate are not concurrent
// with anything else on the same cache. The cache keeps no pointer into the caller's K/V arrays.
class KvCache {
 public:
  constexpr KvCache() noexcept : state_{KvCacheDesc{}, nullptr, 0, 0} {}
  constexpr explicit KvCache(const internal::KvCacheState& state) noexcept : state_(state) {}

  // Checks the shape (kInvalidShape: a zero size or overflowing byte count; kInvalidArgument: unknown type,
  // window > capacity; kWorkspaceTooSmall: storage_size < KvCacheStorageSize(desc)) and starts empty. storage: any
  // alignment. A cache whose storage_size was later made too small (by hand, through the state or the C struct)
  // answers every call with kWorkspaceTooSmall, after that call's own shape and argument errors.
  [[nodiscard]] Status Init(const KvCacheDesc& desc, void* storage, size_t storage_size) noexcept;

  // Appends n positions: k [n][num_kv_heads][head_dim], v [n][num_kv_heads][value_dim], positions length ..
  // length + n - 1. n = 0 is OK (k and v may be null). The whole call is validated before anything is stored:
  // kInvalidArgument for an F16 cache and a finite |x| >= 65520 (it would round to infinity), or a Q8 cache and
  // a non-finite x; kCapacity when a linear cache would exceed its capacity; kOverlap when k or v overlaps the
  // storage. A ring keeps the last `capacity` positions, also of one append of more than capacity positions.
  // +-inf and NaN are stored as such in F32 and F16.
  [[nodiscard]] Status Append(const float* k, const float* v, size_t n) noexcept;

  // Keeps positions < length (length <= this->length(), else kInvalidArgument). In a ring only positions still
  // held can be kept: length below OldestPosition() is kInvalidArgument. The positions kept stay held.
  [[nodiscard]] Status Truncate(size_t length) noexcept;

  // One held position, converted back to float as the cache stores it (what attention computes with):
  // k [num_kv_heads][head_dim], v [num_kv_heads][value_dim]. kInvalidArgument for a position not held;
  // kOverlap if k and v overlap each other or the storage.
  [[nodiscard]] Status Read(size_t position, float* k, float* v) const noexcept;

  size_t length() const noexcept { return state_.length; }  // positions appended (not reduced by the window)
  size_t OldestPosition() const noexcept;                   // first held position (length() when empty)
  const KvCacheDesc& desc() const noexcept { return state_.desc; }
  const internal::KvCacheState& state() const noexcept { return state_; }

 private:
  internal::KvCacheState state_;
};

namespace internal {
constexpr size_t kKvScalarTile = 32;   // keys per tile of the scalar path (attention_driver.h's kKeyBlock)
constexpr size_t kKvDecodeTile = 256;  // keys per tile of the SIMD path (the decode path's kDecodeTile)
constexpr size_t KvMin(size_t a, size_t b) { return a < b ? a : b; }
// The larger of two counts, 0 (overflow) if either is 0.
constexpr size_t KvMax(size_t a, size_t b) { return a == 0 || b == 0 ? 0 : a < b ? b : a; }
constexpr size_t KvRound16(size_t x) { return x == 0 || x > SIZE_MAX - 15 ? 0 : (x + 15) / 16 * 16; }
// Floats of the online softmax's running max and sum per (query row, query head) of a kv head's group (SIMD path),
// rounded up to 64 bytes; the scalar path leaves them unused, so that one workspace size serves both.
constexpr size_t KvStateFloats(size_t q_len, size_t group) { return KvRound16(KvMul(KvMul(q_len, group), 2)); }
// Floats of workspace with one key chunk: the state above, then the larger of the scalar path's needs (a row's
// scores: at most window, or capacity, keys; a tile of 32 keys of K and of V; one output row) and the SIMD path's (a
// tile of up to 256 positions of K, of V and of weights: a call's positions are all held, so at most capacity).
constexpr size_t KvWorkspaceFloatsOneChunk(size_t q_len, size_t group, size_t head_dim, size_t value_dim,
                                           size_t capacity, size_t window) {
  return KvAdd(
      KvStateFloats(q_len, group),
      KvMax(KvAdd(KvAdd(window != 0 ? window : capacity,
                        KvMul(KvMin(kKvScalarTile, window != 0 ? window : capacity), KvAdd(head_dim, value_dim))),
                  value_dim),
            KvMul(KvMin(kKvDecodeTile, capacity), KvAdd(KvAdd(head_dim, value_dim), 1))));
}
// Floats a call split into key chunks (attention.h, the work split) needs on top: per (query row, query head of the
// group) the combined state (4 floats) and one chunk's partial output row. Only for fewer than
// kAttentionTiledMinQueries queries whose visible positions can exceed one chunk (at most window + q_len - 1 of them
// with a window, capacity without); 0 otherwise (and 0 on overflow, like the counts above).
constexpr bool KvMayChunk(size_t q_len, size_t capacity, size_t window) {
  return q_len < kAttentionTiledMinQueries && (window != 0 ? window + q_len - 1 : capacity) > kAttentionKeyChunk;
}
constexpr size_t KvChunkFloats(size_t q_len, size_t group, size_t value_dim) {
  return KvAdd(KvRound16(KvMul(KvMul(q_len, group), 4)), KvMul(KvMul(q_len, group), value_dim));
}
constexpr size_t KvWorkspaceFloats(size_t q_len, size_t group, size_t head_dim, size_t value_dim, size_t capacity,
                                   size_t window) {
  return KvMayChunk(q_len, capacity, window)
             ? KvAdd(KvWorkspaceFloatsOneChunk(q_len, group, head_dim, value_dim, capacity, window),
                     KvChunkFloats(q_len, group, value_dim))
             : KvWorkspaceFloatsOneChunk(q_len, group, head_dim, value_dim, capacity, window);
}
}  // namespace internal

// Workspace bytes of AttentionCached for q_len queries of num_heads heads against a cache of this shape (the same
// for every path; it does not depend on the cache's length); 0 if a size is 0, num_kv_heads does not divide
// num_heads, or the count overflows size_t.
constexpr size_t AttentionCachedWorkspaceBytes(size_t q_len, size_t num_heads, size_t num_kv_heads, size_t head_dim,
                                               size_t value_dim, size_t capacity, size_t window = 0) noexcept {
  return q_len == 0 || num_heads == 0 || num_kv_heads == 0 || num_heads % num_kv_heads != 0 || head_dim == 0 ||
                 value_dim == 0 || capacity == 0 ||
                 internal::KvWorkspaceFloats(q_len, num_heads / num_kv_heads, head_dim, value_dim, capacity, window) ==
                     0 ||
                 internal::KvWorkspaceFloats(q_len, num_heads / num_kv_heads, head_dim, value_dim, capacity, window) >
                     internal::kMaxWorkspaceFloats
             ? 0
             : internal::KvWorkspaceFloats(q_len, num_heads / num_kv_heads, head_dim, value_dim, capacity, window) *
                       sizeof(float) +
                   kWorkspaceAlignment;
}

// Bytes of workspace AttentionCached needs; 0 if desc or the cache is invalid (AttentionCached then reports why).
size_t AttentionCachedWorkspaceSize(const AttentionDesc& desc, const KvCache& cache) noexcept;

// Attention of desc.q_len new queries, q [q_len][num_heads][head_dim], against the positions the cache holds;
// out [q_len][num_heads][value_dim]. desc: kv_len = 0 (the cache decides), head_dim and value_dim equal the
// cache's, num_kv_heads equals the cache's (or 0 when num_heads equals it), additive_mask null.
//  - MaskKind::kCausal: the queries are the last q_len positions appended (q_len <= length); query i, at
//    position length - q_len + i, sees the positions up to its own and within the window.
//  - MaskKind::kNone: the queries are not positions of the cache (cross-attention to a cached encoder output);
//    every query sees the last min(window, length) positions (all of them when window = 0).
// Errors: kNullPointer; kInvalidShape (a zero size, an overflowing byte count, an empty cache, q_len > length
// with kCausal, a visible position no longer held: in a ring, a chunk longer than capacity - window + 1 or a
// cache truncated below its window); kInvalidArgument (kv_len != 0, a head or width mismatch, a non-null
// additive mask, the scale and mask rules of Attention); kWorkspaceTooSmall; kOverlap (out overlapping q, the
// storage or the workspace; the workspace overlapping q or the storage).
//
// Numerics: those of Attention on the values the cache stores (what Read returns), so attention.h's bound holds
// with the stored K and V; storage rounding is the only extra error (kF16: half an f16 ULP per element, kQ8:
// scale/2 per element; on N(0,1) data, 256 keys, d = 64, the relative L2 error of a row against attention on the
// unrounded f32 inputs measures about 3e-4 for F16 and 7e-3 for Q8; tests/kv_cache_test.cc, StorageErrorEndToEnd,
// asserts 1e-3 and 2e-2).
// Bits (what a caller can rely on; how the SIMD path's routes deliver it: docs/architecture.md, "KV cache routes"):
//  - scalar::AttentionCached on an F32 cache without window gives scalar::Attention's bits on the same K and V;
//  - the SIMD path on an F32 cache without window, fewer than kAttentionTiledMinQueries queries, gives the bits of
//    Attention's decode path (taken for more than one vector of keys) on rows whose scores are finite;
//  - an F16 or Q8 cache gives the bits of an F32 cache holding the values Read returns, on the same path;
//  - results depend on which positions a call sees, never on where a ring keeps them: a ring and a linear cache
//    that hold the same visible positions give bit-identical outputs, and so do its work split's parts
//    (AttentionCachedPart) and the single call.
// ("Bits" of a NaN output mean only that it is NaN: where two caches take different routes, F32 storage at a
// misaligned address and at an aligned one, a NaN in V can reach an output through another order of operations, and
// IEEE arithmetic leaves the sign and payload of the NaN that propagates to that order.) A query whose scores hold a
// NaN or an infinity follows softmax.h's rules (NaN: the row is NaN; +inf scores share the row); a position a query
// does not see never reaches its row. Under a directed rounding mode attention.h's directed-mode bound holds (the
// SIMD path then computes each row's softmax with an exp that steps its reduction to nearest); F16 storage is
// integer code (the same bits in every mode), Q8's divisions round in the caller's mode (its integer rounding does
// not). Threads: any number of calls on one cache at once (the cache is only read). Stack: within the library's
// Cortex-M budget (README, "Footprint": 1 KiB per call, checked by the stack report); everything that grows with
// the shape is in the workspace.
[[nodiscard]] Status AttentionCached(const AttentionDesc& desc, const float* q, const KvCache& cache, float* out,
                                     void* workspace, size_t workspace_size) noexcept;

// Work split of AttentionCached for the application's threads (attention.h, AttentionPartCount, for the promise
// and the rules): parts = (kv head g, block of kAttentionRowBlock query rows, chunk of kAttentionKeyChunk
// positions), one row block when q_len < kAttentionTiledMinQueries and several chunks only then. A part reads each
// tile of its kv head once and runs every query head of the group on it, as the single call does. The chunks are
// counted in logical positions from the first position the call sees, in steps of kAttentionKeyChunk (two of the
// cache's 256-position tiles), so a ring and a linear cache that hold the same visible positions give identical bits,
// and an F32 cache without window keeps giving the bits of Attention's decode path. The count and the shared size
// depend on the shape and on the cache's length and window, never on a thread count, the scale or the stored
// values; 0 if desc or the cache is invalid. Each part takes a workspace of AttentionCachedWorkspaceSize(desc, cache)
// bytes. The cache must not change between the first part and AttentionCachedFinish.
size_t AttentionCachedPartCount(const AttentionDesc& desc, const KvCache& cache) noexcept;
size_t AttentionCachedSharedSize(const AttentionDesc& desc, const KvCache& cache) noexcept;
// Errors: AttentionCached's in its order; kInvalidArgument also for a bad part index; kWorkspaceTooSmall for a
// workspace or a shared buffer too small; kOverlap also for shared overlapping q, out, the storage or the workspace.
[[nodiscard]] Status AttentionCachedPart(const AttentionDesc& desc, size_t part, const float* q, const KvCache& cache,
                                         float* out, void* shared, size_t shared_size, void* workspace,
                                         size_t workspace_size) noexcept;
[[nodiscard]] Status AttentionCachedFinish(const AttentionDesc& desc, const KvCache& cache, void* shared,
                                           size_t shared_size, float* out) noexcept;

namespace scalar {
size_t AttentionCachedWorkspaceSize(const AttentionDesc& desc, const KvCache& cache) noexcept;
[[nodiscard]] Status AttentionCached(const AttentionDesc& desc, const float* q, const KvCache& cache, float* out,
                                     void* workspace, size_t workspace_size) noexcept;
}  // namespace scalar

// A cache whose storage is a member: firmware keeps the whole object in static storage (constant-initialised,
// no constructor runs at startup):
//
//   static edgeattn::FixedKvCache<256, 1, 64, 64, edgeattn::KvType::kF16, 128> cache;
//   cache.Append(k, v, 1);  ...  edgeattn::AttentionCached(desc, q, cache.cache(), out, ws, sizeof ws);
//
// Invalid shapes are rejected by static_assert. It is ready on construction (no Init); not copyable (the view
// points into the object).
template <size_t Capacity, size_t KvHeads, size_t HeadDim, size_t ValueDim = HeadDim, KvType kType = KvType::kF32,
          size_t Window = 0>
class FixedKvCache {
  static_assert(Capacity >= 1, "capacity must be >= 1");
  static_assert(KvHeads >= 1, "num_kv_heads must be >= 1");
  static_assert(HeadDim >= 1 && ValueDim >= 1, "head widths must be >= 1");
  static_assert(kType == KvType::kF32 || kType == KvType::kF16 || kType == KvType::kQ8, "unknown KV type");
  static_assert(Window <= Capacity, "window must be <= capacity");
  static_assert(KvCacheStorageBytes(kType, KvHeads, HeadDim, ValueDim, Capacity, Window) != 0,
                "cache too large for size_t");

 public:
  static constexpr size_t kStorageBytes = KvCacheStorageBytes(kType, KvHeads, HeadDim, ValueDim, Capacity, Window);
  // Workspace bytes of AttentionCached on this cache for q_len queries of num_heads heads.
  static constexpr size_t WorkspaceBytes(size_t q_len, size_t num_heads = KvHeads) noexcept {
    return AttentionCachedWorkspaceBytes(q_len, num_heads, KvHeads, HeadDim, ValueDim, Capacity, Window);
  }
  static constexpr KvCacheDesc Desc() noexcept {
    KvCacheDesc d;
    d.type = kType;
    d.num_kv_heads = KvHeads;
    d.head_dim = HeadDim;
    d.value_dim = ValueDim;
    d.capacity = Capacity;
    d.window = Window;
    return d;
  }

  // The header (first held position 0) is all-zero bytes, so zero-initialised storage is an empty cache.
  constexpr FixedKvCache() noexcept : storage_{}, cache_(internal::KvCacheState{Desc(), storage_, kStorageBytes, 0}) {}
  FixedKvCache(const FixedKvCache&) = delete;
  FixedKvCache& operator=(const FixedKvCache&) = delete;

  KvCache& cache() noexcept { return cache_; }
  const KvCache& cache() const noexcept { return cache_; }
  [[nodiscard]] Status Append(const float* k, const float* v, size_t n) noexcept { return cache_.Append(k, v, n); }
  [[nodiscard]] Status Truncate(size_t length) noexcept { return cache_.Truncate(length); }
  [[nodiscard]] Status Read(size_t position, float* k, float* v) const noexcept { return cache_.Read(position, k, v); }
  size_t length() const noexcept { return cache_.length(); }

 private:
  alignas(kWorkspaceAlignment) unsigned char storage_[kStorageBytes];
  KvCache cache_;
};

}  // namespace edgeattn

#endif  // EDGEATTN_KV_CACHE_H_
