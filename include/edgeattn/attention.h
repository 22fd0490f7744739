// SPDX-License-Identifier: Apache-2.0
// Scaled dot-product attention: out = softmax(Q K^T * scale + M) V, runtime and compile-time shapes.
#ifndef EDGEATTN_ATTENTION_H_
#define EDGEATTN_ATTENTION_H_

#include <stddef.h>
#include <stdint.h>

#include "edgeattn/status.h"

namespace edgeattn {

enum class MaskKind : int {
  kNone = 0,
  // Bottom-right aligned: query i sees key j iff j <= i + kv_len - q_len. With q_len == kv_len this is the
  // lower-triangular mask of the seeds; with q_len < kv_len the last query sees every key (decoding against
  // a KV cache); with q_len > kv_len the first q_len - kv_len queries see no key and output zeros.
  kCausal = 1,
};

// Shapes and options of one attention call. Layouts are dense row-major:
//   q [q_len][num_heads][head_dim]        k [kv_len][num_kv_heads][head_dim]
//   v [kv_len][num_kv_heads][value_dim]   out [q_len][num_heads][value_dim]
//   additive_mask [q_len][kv_len] (shared by all heads)    weights [num_heads][q_len][kv_len]
// Query head h reads K/V head h / (num_heads / num_kv_heads) (grouped-query attention; num_kv_heads = 1 is
// multi-query attention).
struct AttentionDesc {
  size_t q_len = 0;         // >= 1
  size_t kv_len = 0;        // >= 1
  size_t head_dim = 0;      // d_k >= 1
  size_t value_dim = 0;     // d_v >= 1
  size_t num_heads = 1;     // >= 1
  size_t num_kv_heads = 0;  // 0 means num_heads; otherwise >= 1 and divides num_heads
  float scale = 0.0f;       // 0 means 1/sqrt(head_dim); otherwise finite and > 0
  MaskKind mask = MaskKind::kNone;
  // Null, or q_len*kv_len floats added to every head's scaled scores. 0 keeps a key, -inf masks it, any
  // finite value is a bias. +inf or NaN entries follow the softmax rules (softmax.h) for that row.
  const float* additive_mask = nullptr;
};

// Alignment the kernels give their scratch inside the caller's workspace.
constexpr size_t kWorkspaceAlignment = 64;

// Attention has five SIMD paths, chosen from the shape before anything is written (the scalar path is always the
// row path): packed_small (at most 4 keys, x86 AVX2 and AVX-512), small (every key in one vector, not on the
// SCALAR/EMU128 targets), row (an additive mask), tiled (at least kAttentionTiledMinQueries queries) and decode
// (otherwise). Which shape takes which, and how each works: docs/architecture.md; what limits each and its figures:
// docs/performance.md, The attention paths. What a caller sees of them: every path stays within the bound below,
// and the decode path, for fewer than kAttentionTiledMinQueries queries over more than kAttentionKeyChunk keys, runs
// a row's keys in chunks of kAttentionKeyChunk whose partial results are combined in chunk order (the work split's
// parts compute the same chunks; see AttentionPartCount). A row whose scores hold a NaN or an infinity follows the
// softmax rules (softmax.h) on every path.
constexpr size_t kAttentionTiledMinQueries = 8;

// The work split's grid (AttentionPartCount): query rows in blocks of kAttentionRowBlock (a multiple of every
// target's tiled block, so each part runs its path's own blocks unchanged), and, for decode shapes (fewer than
// kAttentionTiledMinQueries queries, no additive mask), keys in chunks of kAttentionKeyChunk (two decode tiles).
constexpr size_t kAttentionRowBlock = 32;
constexpr size_t kAttentionKeyChunk = 512;

namespace internal {
constexpr size_t kMaxWorkspaceFloats = (SIZE_MAX - kWorkspaceAlignment) / sizeof(float);
constexpr size_t TiledQueries(size_t q_len) { return q_len <= 16 ? 16 : 32; }
constexpr size_t TiledKeys(size_t kv_len) { return kv_len < 64 ? kv_len : 64; }
// Floats of the tiled path: a block's transposed queries, its tile of scores, two per-query vectors.
constexpr size_t TiledFloats(size_t q_len, size_t kv_len, size_t head_dim) {
  return q_len < kAttentionTiledMinQueries              ? 0
         : head_dim > kMaxWorkspaceFloats / 32 - 64 - 2 ? kMaxWorkspaceFloats + 1
                                                        : TiledQueries(q_len) * (head_dim + TiledKeys(kv_len) + 2);
}
// Floats of the row and decode paths: a row's scores (kv_len), and with key chunks (KeyChunks > 1) one chunk's
// partial output row (value_dim) after the chunk's scores.
constexpr size_t RowFloats(size_t q_len, size_t kv_len, size_t value_dim) {
  return !(q_len < kAttentionTiledMinQueries && kv_len > kAttentionKeyChunk) ? kv_len
         : value_dim > kMaxWorkspaceFloats - kv_len                          ? kMaxWorkspaceFloats + 1
                                                                             : kv_len + value_dim;
}
constexpr size_t WorkspaceFloats(size_t q_len, size_t kv_len, size_t head_dim, size_t value_dim) {
  return RowFloats(q_len, kv_len, value_dim) > TiledFloats(q_len, kv_len, head_dim)
             ? RowFloats(q_len, kv_len, value_dim)
             : TiledFloats(q_len, kv_len, head_dim);
}
}  // namespace internal

// Workspace bytes for a shape: the larger of the paths' needs (so that one size serves with and without an
// additive mask), plus alignment slack; 0 if it overflows size_t. constexpr so that compile-time shapes can
// reserve it statically; the runtime size function returns the same. value_dim matters only for decode shapes
// split into key chunks (q_len < kAttentionTiledMinQueries, kv_len > kAttentionKeyChunk).
constexpr size_t AttentionWorkspaceBytes(size_t q_len, size_t kv_len, size_t head_dim, size_t value_dim) noexcept {
  return internal::WorkspaceFloats(q_len, kv_len, head_dim, value_dim) > internal::kMaxWorkspaceFloats
             ? 0
             : internal::WorkspaceFloats(q_len, kv_len, head_dim, value_dim) * sizeof(float) + kWorkspaceAlignment;
}

// Bytes of workspace Attention needs; 0 if desc is invalid (Attention then reports why).
size_t AttentionWorkspaceSize(const AttentionDesc& desc) noexcept;

// out = softmax(q k^T * scale + additive_mask) v per query head, with causal masking if desc.mask says so.
// Masked keys (causal, or -inf in additive_mask) are skipped: a key masked for a query never enters that query's
// row, so a NaN there cannot reach it; a key masked for every query is never read from v, nor from k except on
// the small path, which copies every key of a head and discards the masked scores (the tiled path reads a
// causally masked key when a later query of the same block sees it). A query row that sees no key
// outputs zeros. Any alignment; workspace of at least AttentionWorkspaceSize(desc) bytes, any alignment. Not
// allowed: out overlapping q, k, v, the mask or the workspace; the workspace overlapping an input.
// Speed: rows that start on 64-byte boundaries are fastest; q, k, v and out 16 bytes off a 64-byte boundary
// measured 15-19% slower at L = 16 and 64, d = 64 on an AVX-512 core (docs/performance.md, step 12).
//
// Error bound, per output element c of query row (i, h), with s_j, p_j, o_c the exact scores, weights and
// output computed from the float inputs, J the set of keys the row sees, u = 2^-24:
//   |out_c - o_c| <= 2*sigma * sum_{j in J} p_j |v_jc - o_c| + (eta + (9|J|/8 + 1)*u) * sum_{j in J} p_j |v_jc|
//                    + FLT_MIN * sum_{j in J} |v_jc| + (|J| + 1) * 2^-149
//   sigma = (head_dim + 2)*u * max_{j in J} (scale * sum_t |q_t k_jt| + |M_ij|)   (error of the scores)
//   eta   = 2^-21                                                                 (softmax: 4 ULP relative)
// to first order in u (the last term: gradual underflow of the products, the sums and the output itself, which
// can be subnormal). The first term is the conditioning of softmax (score errors move weight between keys,
// which matters as far as v_j differs from the output); the second is rounding of the weights and of the
// weighted sum. The row path sums keys in blocks of 32, the tiled path in tiles of 64 keys and the decode path
// in tiles of 256 within chunks of 512 keys, the chunks' partial sums then combined in order; their online
// softmax rescales a row's earlier sum by e^(m_old - m_new) at most once per tile or chunk boundary (at most
// |J|/64 times, <= 6u each: the |J|/8 above). Typical errors grow far slower than |J|: on random N(0,1) data with L <=
// 512 and head widths up to 128, the relative L2 error per row, measured against ||sum_j p_j |v_j| || (= ||out|| when
// nothing cancels), is at most about 2e-7 on the row path and 5e-7 on the tiled path; the tests assert 1e-6.
// The bound assumes rounding to nearest and holds with flush-to-zero on; under a directed rounding mode it
// holds with u = 2^-23 and eta = 2^-20 on every path: the SIMD path reads the rounding mode once per call and,
// when it is not to nearest, runs every shape on the row path (whose softmax steps its exp's range reduction
// to nearest; the small, decode and tiled loops keep the default environment's instructions, which round it
// in the caller's mode), except shapes with several key chunks, which run their chunks with the decode path's
// steps and an exp that steps its reduction to nearest, so that the work split's parts can match the single
// call in any one mode. AttentionWeights is the row path. Masked rows, NaN rows and one-hot rows are exact in
// every mode.
// Errors: kNullPointer, kInvalidShape (a zero size; a byte count overflows), kInvalidArgument (scale negative
// or not finite; num_kv_heads does not divide num_heads; mask kind unknown), kWorkspaceTooSmall, kOverlap.
[[nodiscard]] Status Attention(const AttentionDesc& desc, const float* q, const float* k, const float* v, float* out,
                               void* workspace, size_t workspace_size) noexcept;

// The softmax weights of Attention, weights [num_heads][q_len][kv_len]: masked entries are exactly 0, a row
// that sees no key is all zeros, each row is the softmax of its visible scores (softmax.h's bound applies to
// the scores as computed, whose error is sigma above). No workspace. weights must not overlap q, k or the mask.
[[nodiscard]] Status AttentionWeights(const AttentionDesc& desc, const float* q, const float* k,
                                      float* weights) noexcept;

// ---- Work split for the application's own threads (the library starts none). One call is cut into parts by the
// shape alone (q_len, kv_len, head_dim, value_dim, num_heads, num_kv_heads, the mask kind, whether an additive
// mask is given; never a thread count, the scale, the mask's values or the SIMD target):
//   part = (query head h, block of kAttentionRowBlock query rows, chunk of kAttentionKeyChunk keys)
// with one row block when q_len < kAttentionTiledMinQueries, and several key chunks only when q_len <
// kAttentionTiledMinQueries, there is no additive mask and kv_len > kAttentionKeyChunk (decode shapes: every
// target runs them on the decode path). Parts are numbered heaviest first: causal, the later row blocks (which see
// more keys) first; then head, then chunk. Threads that each take the next index from a shared atomic counter
// therefore finish close together.
// The promise: running every part (any thread, any order, concurrently) and then AttentionFinish gives output
// bit-identical to Attention (the SIMD entry point, not scalar::Attention) when the parts and the single call run
// in the same floating-point environment; a NaN output is NaN in both, its sign and payload not promised (where
// V holds NaN and infinities, which NaN propagates depends on the order of its operations, which the compiler may
// arrange differently in the single call's and a part's copy of the same steps: kv_cache.h says the same). The
// single call runs the same chunks and the same combine as the parts: key chunks cost it one rescale of value_dim
// floats per chunk boundary (docs/performance.md, The work split).
// Under a directed rounding mode each part (and the single call) follows the rule of attention.h's bound: shapes
// with one key chunk run the row path on their rows, chunked shapes compute every chunk with the decode steps whose
// exp steps its range reduction to nearest; parts run in different modes give results within the bound but not
// the same bits.

// Parts of desc's call (>= 1); 0 if desc is invalid.
size_t AttentionPartCount(const AttentionDesc& desc) noexcept;
// Bytes every part and AttentionFinish share for key chunks' partial results (any alignment, contents on entry
// irrelevant); 0 when the parts split only heads and rows, and 0 if desc is invalid. With C chunks:
// num_heads * q_len * (4 * C + (C - 1) * value_dim) floats plus alignment slack.
size_t AttentionSharedSize(const AttentionDesc& desc) noexcept;
// Runs part `part` of the call (0 <= part < AttentionPartCount(desc)). Each thread passes its own workspace of
// AttentionWorkspaceSize(desc) bytes; all pass the same shared buffer of AttentionSharedSize(desc) bytes (null
// allowed when that is 0). A part writes only its rows of its head in out (chunk 0 of a chunked shape: the
// chunk's unnormalised partial row, which AttentionFinish completes) and its own slots of shared. Errors, nothing
// written: Attention's, in its order; kInvalidArgument also for part >= AttentionPartCount(desc);
// kWorkspaceTooSmall for a workspace or a shared buffer too small; kOverlap also for shared overlapping q, k, v,
// the mask, out or the workspace.
[[nodiscard]] Status AttentionPart(const AttentionDesc& desc, size_t part, const float* q, const float* k,
                                   const float* v, float* out, void* shared, size_t shared_size, void* workspace,
                                   size_t workspace_size) noexcept;
// After every part has returned: combines the key chunks' partial results in chunk order into out (the same
// combine the single call runs). With a shared size of 0 it only checks its arguments (kNullPointer for a null
// out; desc's kInvalidShape / kInvalidArgument) and returns kOk. Errors: kNullPointer, kInvalidShape,
// kInvalidArgument, kWorkspaceTooSmall (shared too small), kOverlap (out overlapping shared).
[[nodiscard]] Status AttentionFinish(const AttentionDesc& desc, void* shared, size_t shared_size, float* out) noexcept;

namespace scalar {
size_t AttentionWorkspaceSize(const AttentionDesc& desc) noexcept;
[[nodiscard]] Status Attention(const AttentionDesc& desc, const float* q, const float* k, const float* v, float* out,
                               void* workspace, size_t workspace_size) noexcept;
[[nodiscard]] Status AttentionWeights(const AttentionDesc& desc, const float* q, const float* k,
                                      float* weights) noexcept;
}  // namespace scalar

namespace internal {
// FixedAttention's parts (not for direct use). The scale Attention uses: 1/sqrt(head_dim) for 0, scale itself if
// finite and > 0, and 0 for an invalid scale.
float ResolvedScale(float scale, size_t head_dim) noexcept;
// Attention for a descriptor whose shape passed FixedAttention's static_asserts and whose scale is resolved
// (finite, > 0), with a workspace of AttentionWorkspaceBytes: checks only that out does not overlap an input.
[[nodiscard]] Status AttentionFixedShape(const AttentionDesc& desc, const float* q, const float* k, const float* v,
                                         float* out, void* workspace) noexcept;
}  // namespace internal

// Attention over shapes fixed at compile time, owning its workspace so that firmware can keep the whole
// object in static storage (constant-initialised, no constructor runs at startup):
//
//   static edgeattn::FixedAttention<4, 4, 8, 8, 1, 1, edgeattn::MaskKind::kCausal> attn;
//   static float q[4][8], k[4][8], v[4][8], out[4][8];
//   edgeattn::Status s = attn.Run(q, k, v, out);
//
// Buffers are typed arrays, so a buffer of the wrong shape does not compile; invalid shapes are rejected by
// static_assert. Run skips the runtime API's shape checks (done at compile time) and resolves the scale once,
// on its first call; it checks only that out does not overlap an input (kOverlap) and the scale
// (kInvalidArgument). Same kernels, contract and bound as the runtime API; RunScalar and the weights
// functions forward to the runtime API with a constant descriptor. Run uses the object's workspace (and sets
// its resolved scale): one object must not run on two threads at once (AttentionWeights needs no workspace
// and is const).
template <size_t QLen, size_t KvLen, size_t HeadDim, size_t ValueDim = HeadDim, size_t NumHeads = 1,
          size_t NumKvHeads = NumHeads, MaskKind kMask = MaskKind::kNone>
class FixedAttention {
  static_assert(QLen >= 1 && KvLen >= 1, "sequence lengths must be >= 1");
  static_assert(HeadDim >= 1 && ValueDim >= 1, "head widths must be >= 1");
  static_assert(NumHeads >= 1 && NumKvHeads >= 1, "head counts must be >= 1");
  static_assert(NumHeads % NumKvHeads == 0, "num_heads must be a multiple of num_kv_heads");
  static_assert(kMask == MaskKind::kNone || kMask == MaskKind::kCausal, "unknown mask kind");
  static constexpr bool FitsInBytes(size_t a, size_t b, size_t c) { return a <= SIZE_MAX / sizeof(float) / b / c; }
  static_assert(FitsInBytes(QLen, NumHeads, HeadDim) && FitsInBytes(KvLen, NumKvHeads, HeadDim) &&
                    FitsInBytes(KvLen, NumKvHeads, ValueDim) && FitsInBytes(QLen, NumHeads, ValueDim) &&
                    FitsInBytes(NumHeads, QLen, KvLen) && AttentionWorkspaceBytes(QLen, KvLen, HeadDim, ValueDim) != 0,
                "shape too large for size_t");

 public:
  using Query = float[QLen][NumHeads * HeadDim];
  using Key = float[KvLen][NumKvHeads * HeadDim];
  using Value = float[KvLen][NumKvHeads * ValueDim];
  using Output = float[QLen][NumHeads * ValueDim];
  using Mask = float[QLen][KvLen];
  using Weights = float[NumHeads][QLen][KvLen];

  static constexpr size_t kWorkspaceBytes = AttentionWorkspaceBytes(QLen, KvLen, HeadDim, ValueDim);

  // scale 0 means 1/sqrt(HeadDim); a negative or non-finite scale makes Run return kInvalidArgument.
  constexpr explicit FixedAttention(float scale = 0.0f) noexcept : scale_(scale), workspace_{} {}

  constexpr AttentionDesc Desc(const Mask* additive_mask = nullptr) const noexcept {
    AttentionDesc d;
    d.q_len = QLen;
    d.kv_len = KvLen;
    d.head_dim = HeadDim;
    d.value_dim = ValueDim;
    d.num_heads = NumHeads;
    d.num_kv_heads = NumKvHeads;
    d.scale = scale_;
    d.mask = kMask;
    d.additive_mask = additive_mask == nullptr ? nullptr : &(*additive_mask)[0][0];
    return d;
  }

  [[nodiscard]] Status Run(const Query& q, const Key& k, const Value& v, Output& out,
                           const Mask* additive_mask = nullptr) noexcept {
    if (!(resolved_scale_ > 0.0f)) {
      resolved_scale_ = internal::ResolvedScale(scale_, HeadDim);
      if (!(resolved_scale_ > 0.0f)) return Status::kInvalidArgument;
    }
    AttentionDesc d = Desc(additive_mask);
    d.scale = resolved_scale_;
    return internal::AttentionFixedShape(d, &q[0][0], &k[0][0], &v[0][0], &out[0][0], workspace_);
  }
  [[nodiscard]] Status RunScalar(const Query& q, const Key& k, const Value& v, Output& out,
                                 const Mask* additive_mask = nullptr) noexcept {
    return scalar::Attention(Desc(additive_mask), &q[0][0], &k[0][0], &v[0][0], &out[0][0], workspace_,
                             kWorkspaceBytes);
  }
  [[nodiscard]] Status AttentionWeights(const Query& q, const Key& k, Weights& weights,
                                        const Mask* additive_mask = nullptr) const noexcept {
    return edgeattn::AttentionWeights(Desc(additive_mask), &q[0][0], &k[0][0], &weights[0][0][0]);
  }
  [[nodiscard]] Status AttentionWeightsScalar(const Query& q, const Key& k, Weights& weights,
                                              const Mask* additive_mask = nullptr) const noexcept {
    return scalar::AttentionWeights(Desc(additive_mask), &q[0][0], &k[0][0], &weights[0][0][0]);
  }

 private:
  float scale_;
  float resolved_scale_ = 0.0f;  // set by the first Run (0: not yet, or scale_ is invalid)
  alignas(kWorkspaceAlignment) unsigned char workspace_[kWorkspaceBytes];
};

}  // namespace edgeattn

#endif  // EDGEATTN_ATTENTION_H_
