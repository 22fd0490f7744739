// SPDX-License-Identifier: Apache-2.0
// The decode steps' scores (docs/performance.md, decode path; docs/architecture.md, the decode family): a tile's keys,
// read from a row source in any storage format (lib/common/formats-inl.h), against GH query heads that share each
// loaded key vector. Attention's decode path runs it with one head on plain f32 rows; the KV cache with up to four
// heads of a group on its stored rows (the fused route) or on a tile converted to f32 (the converted route). The
// arithmetic per (query head, key) is the same for every GH and format, so each head gets the bits it gets alone on
// an F32 source holding the values the format reads back.

#if defined(EDGEATTN_LIB_ATTENTION_DECODE_SCORES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_ATTENTION_DECODE_SCORES_INL_H_
#undef EDGEATTN_LIB_ATTENTION_DECODE_SCORES_INL_H_
#else
#define EDGEATTN_LIB_ATTENTION_DECODE_SCORES_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include <type_traits>

#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "lib/attention/shared-inl.h"
#include "lib/common/formats-inl.h"
#include "lib/common/row_source.h"
#include "lib/common/simd_tail-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Targets with 32 vector registers and AVX-512's 16-float vectors hold 16 accumulators besides the loaded vectors:
// with four query heads the scores take four keys per pass (each K vector feeds four products, each Q vector four)
// and P·V four column vectors of each V row per pass (two passes over a d = 128 tile where eight accumulators take
// four, each a strided stream of misses from memory). AVX2 and ARMv7 have 16 registers; AArch64 has 32 but is not
// measured here (docs/performance.md, step K3).
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
constexpr bool kDecode16 = true;
#else
constexpr bool kDecode16 = false;
#endif

// Narrow heads (docs/performance.md, issue 33 phase 2): a head of at most half a vector (d = 8 on AVX-512's 16
// floats) reads each K and V row as one half vector: its scores two keys per vector (DecodeScoresPaired), its P·V
// on half vectors (DecodePv). On whole vectors each row would fill half a register through a masked load (F32) or
// an element-by-element conversion through a buffer (F16, Q8: a store-forwarding stall per row), and the reduction
// would sum 8 zero lanes per key. x86 AVX3 only: where a vector holds fewer than 16 floats half a vector is too
// narrow to pay, and SVE is not measured here.
template <class D>
constexpr bool DecodeOnHalves() {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  return hn::MaxLanes(D()) >= 16;
#else
  return false;
#endif
}

// A decode pass's requests for the rows it reads next (docs/performance.md, "Rows requested ahead"). A tile's K rows
// and its V rows are each one stream, from DRAM on a cold call, and this core's hardware prefetchers stop at every
// 4 KiB page: a pass reading row j requests, into L1, the lines of row j + rows (about 4 KiB further on), within
// the run of rows it reads, so every line it reads was requested once. x86 SIMD targets only (measured there), and
// only the four-head passes (a KV cache's grouped heads: DecodeScores4x16, DecodePv4x16): in the one-head passes of
// Attention's decode path the requests cost hot calls 5-12% and gained an F32 cold call nothing.
struct RowsAhead {
  size_t rows = 0;   // how many rows ahead; 0: no requests
  size_t bytes = 0;  // of each row, from its first byte
  HWY_INLINE void Request(const unsigned char* row) const {
    const uintptr_t end = reinterpret_cast<uintptr_t>(row) + bytes;
    for (uintptr_t a = reinterpret_cast<uintptr_t>(row) & ~uintptr_t{63}; a < end; a += 64) {
      hwy::Prefetch(reinterpret_cast<const unsigned char*>(a));
    }
  }
};
HWY_INLINE RowsAhead RowsAheadOf(size_t row_bytes) {
#if HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
  constexpr size_t kAheadBytes = 4096;
  return RowsAhead{(kAheadBytes + row_bytes - 1) / row_bytes, row_bytes};
#else
  (void)row_bytes;
  return RowsAhead{};
#endif
}

#if HWY_TARGET != HWY_SCALAR

// The eight accumulators of an eight-slot pass reduced together into their eight sums times scale, at dst[0 .. 8):
// a transposing tree of pair sums (log2(N) levels, each halving the partial sums per slot) instead of eight
// horizontal reductions (docs/performance.md, step 13). Every slot's lanes are summed by the same tree.
// kWholeVector: dst holds max(8, N) floats and is read back at once, so the sums are stored as a whole vector (a
// scalar load from a masked store's bytes is not forwarded from the store buffer: a stall per load).
template <bool kWholeVector = false, class D, class V>
HWY_INLINE void Reduce8(D d, V a0, V a1, V a2, V a3, V a4, V a5, V a6, V a7, V vscale, float* dst) {
  const size_t N = hn::Lanes(d);
  const V b0 = PairSums(d, PairSums(d, a0, a1), PairSums(d, a2, a3));
  const V b1 = PairSums(d, PairSums(d, a4, a5), PairSums(d, a6, a7));
  if (N == 4) {  // one sum per slot already: slots 0..3 in b0, 4..7 in b1
    hn::StoreU(hn::Mul(b0, vscale), d, dst);
    hn::StoreU(hn::Mul(b1, vscale), d, dst + 4);
    return;
  }
  V w = PairSums(d, b0, b1);  // eight slots, N/8 partial sums each
  for (size_t parts = N / 8; parts > 1; parts /= 2) w = PairSums(d, w, w);
  if (N == 8 || kWholeVector) {
    hn::StoreU(hn::Mul(w, vscale), d, dst);
  } else {
    StoreTail(d, hn::Mul(w, vscale), dst, 8);
  }
}

// Where a pass's keys are: StridedKeys for a tile that does not wrap (key t at r0 + t row_bytes, so the compiler
// keeps t row_bytes in registers and steps one pointer over the columns, as a strided loop does; an array of
// offsets instead was vectorised by GCC and unpacked again per pass: 9% at d = 64), ListedKeys for a pass that
// straddles a ring's wrap. At(t, c): key t's columns from c.
template <class Format>
struct StridedKeys {
  const unsigned char* r0;
  size_t row_bytes;
  const unsigned char* At(size_t t, size_t c) const { return r0 + t * row_bytes + c * Format::kBytes; }
};
template <class Format, size_t KK>
struct ListedKeys {
  const unsigned char* r[KK];
  const unsigned char* At(size_t t, size_t c) const { return r[t] + c * Format::kBytes; }
};

// One column vector (columns [c, c + lanes)) of an eight-slot pass: slot h (8 / GH) + t += q[h] key t (its scale
// sc[t]), so each loaded key vector feeds GH products. No lambdas in these loops: GCC left them out of line, their
// calls costing up to 2x; HWY_INLINE forces functions inline.
template <class Format, size_t GH, class D, class V, class Keys>
HWY_INLINE void ScoreColumn(D d, const float* const* q, const Keys& keys, const float* sc, size_t c, size_t lanes,
                            V& a0, V& a1, V& a2, V& a3, V& a4, V& a5, V& a6, V& a7) {
  const V q0 = LoadVecN(d, q[0] + c, lanes);
  V x0 = LoadRowVec<Format>(d, keys.At(0, c), 0, lanes, hn::Set(d, sc[0]), sc[0]);
  V x1 = LoadRowVec<Format>(d, keys.At(1, c), 0, lanes, hn::Set(d, sc[1]), sc[1]);
  if constexpr (GH == 4) {
    const V q1 = LoadVecN(d, q[1] + c, lanes), q2 = LoadVecN(d, q[2] + c, lanes), q3 = LoadVecN(d, q[3] + c, lanes);
    a0 = hn::MulAdd(q0, x0, a0), a1 = hn::MulAdd(q0, x1, a1), a2 = hn::MulAdd(q1, x0, a2);
    a3 = hn::MulAdd(q1, x1, a3), a4 = hn::MulAdd(q2, x0, a4), a5 = hn::MulAdd(q2, x1, a5);
    a6 = hn::MulAdd(q3, x0, a6), a7 = hn::MulAdd(q3, x1, a7);
    return;
  }
  V x2 = LoadRowVec<Format>(d, keys.At(2, c), 0, lanes, hn::Set(d, sc[2]), sc[2]);
  V x3 = LoadRowVec<Format>(d, keys.At(3, c), 0, lanes, hn::Set(d, sc[3]), sc[3]);
  if constexpr (GH == 2) {
    const V q1 = LoadVecN(d, q[1] + c, lanes);
    a0 = hn::MulAdd(q0, x0, a0), a1 = hn::MulAdd(q0, x1, a1), a2 = hn::MulAdd(q0, x2, a2);
    a3 = hn::MulAdd(q0, x3, a3), a4 = hn::MulAdd(q1, x0, a4), a5 = hn::MulAdd(q1, x1, a5);
    a6 = hn::MulAdd(q1, x2, a6), a7 = hn::MulAdd(q1, x3, a7);
    return;
  }
  a0 = hn::MulAdd(q0, x0, a0), a1 = hn::MulAdd(q0, x1, a1), a2 = hn::MulAdd(q0, x2, a2);
  a3 = hn::MulAdd(q0, x3, a3);
  x0 = LoadRowVec<Format>(d, keys.At(4, c), 0, lanes, hn::Set(d, sc[4]), sc[4]);
  x1 = LoadRowVec<Format>(d, keys.At(5, c), 0, lanes, hn::Set(d, sc[5]), sc[5]);
  x2 = LoadRowVec<Format>(d, keys.At(6, c), 0, lanes, hn::Set(d, sc[6]), sc[6]);
  x3 = LoadRowVec<Format>(d, keys.At(7, c), 0, lanes, hn::Set(d, sc[7]), sc[7]);
  a4 = hn::MulAdd(q0, x0, a4), a5 = hn::MulAdd(q0, x1, a5), a6 = hn::MulAdd(q0, x2, a6);
  a7 = hn::MulAdd(q0, x3, a7);
}

// a_i += w_i x, i = 0..3: in P·V, x one column vector of a V row and w_i the four heads' weights; in the scores,
// x one head's Q vector and w_i the vectors of four keys.
template <class V>
HWY_INLINE void Fma4(V x, V w0, V w1, V w2, V w3, V& a0, V& a1, V& a2, V& a3) {
  a0 = hn::MulAdd(w0, x, a0), a1 = hn::MulAdd(w1, x, a1), a2 = hn::MulAdd(w2, x, a2), a3 = hn::MulAdd(w3, x, a3);
}

// One column vector (columns [c, c + lanes)) of a four-head, four-key pass: t<h><u> += q[h] key u (keys r[u],
// scales sc[u]): each K vector feeds four products, each Q vector four.
template <class Format, class D, class V>
HWY_INLINE void Score16Column(D d, const float* const* q, const unsigned char* const* r, const float* sc, size_t c,
                              size_t lanes, V& t00, V& t01, V& t02, V& t03, V& t10, V& t11, V& t12, V& t13, V& t20,
                              V& t21, V& t22, V& t23, V& t30, V& t31, V& t32, V& t33) {
  const V x0 = LoadRowVec<Format>(d, r[0], c, lanes, hn::Set(d, sc[0]), sc[0]);
  const V x1 = LoadRowVec<Format>(d, r[1], c, lanes, hn::Set(d, sc[1]), sc[1]);
  const V x2 = LoadRowVec<Format>(d, r[2], c, lanes, hn::Set(d, sc[2]), sc[2]);
  const V x3 = LoadRowVec<Format>(d, r[3], c, lanes, hn::Set(d, sc[3]), sc[3]);
  Fma4(LoadVecN(d, q[0] + c, lanes), x0, x1, x2, x3, t00, t01, t02, t03);
  Fma4(LoadVecN(d, q[1] + c, lanes), x0, x1, x2, x3, t10, t11, t12, t13);
  Fma4(LoadVecN(d, q[2] + c, lanes), x0, x1, x2, x3, t20, t21, t22, t23);
  Fma4(LoadVecN(d, q[3] + c, lanes), x0, x1, x2, x3, t30, t31, t32, t33);
}

// DecodeScores' eight-slot passes for four query heads with 16 accumulators (kDecode16): slot t<h><u> holds head h
// and key j + u, the same chain over the columns as DecodeScores' slot of that (head, key), and each set of eight
// slots (keys j, j + 1 and keys j + 2, j + 3) is reduced as DecodeScores reduces its eight, so the bits are the same.
// Keys [0, n8), n8 a multiple of 8; returns n8.
template <class Format, class D>
HWY_INLINE size_t DecodeScores4x16(D d, const float* const* q, const internal::RowSource& k, size_t head_dim, size_t n8,
                                   hn::Vec<D> vscale, float* const* s) {
  const size_t N = hn::Lanes(d);
  const size_t full = head_dim - head_dim % N;
  const RowsAhead ahead = RowsAheadOf(head_dim * Format::kBytes);
  // Requests up to the tile's last row (n8), by strides while the rows requested do not wrap around the ring.
  const size_t ahead_end = ahead.rows == 0 ? 0 : n8, strided_end = HWY_MIN(k.Wrap(n8), ahead_end);
  for (size_t j = 0; j < n8; j += 4) {
    const unsigned char* r[4];
    k.Rows(j, 4, r);
    if (j + ahead.rows + 4 <= strided_end) {
      const unsigned char* next = r[0] + ahead.rows * k.row_bytes;
      ahead.Request(next), ahead.Request(next + k.row_bytes);
      ahead.Request(next + 2 * k.row_bytes), ahead.Request(next + 3 * k.row_bytes);
    } else if (j + ahead.rows + 4 <= ahead_end) {
      const unsigned char* next[4];
      k.Rows(j + ahead.rows, 4, next);
      for (const unsigned char* row : next) ahead.Request(row);
    }
    float sc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    if constexpr (Format::kScaled) k.Scales(j, 4, sc);
    auto t00 = hn::Zero(d), t01 = hn::Zero(d), t02 = hn::Zero(d), t03 = hn::Zero(d);
    auto t10 = hn::Zero(d), t11 = hn::Zero(d), t12 = hn::Zero(d), t13 = hn::Zero(d);
    auto t20 = hn::Zero(d), t21 = hn::Zero(d), t22 = hn::Zero(d), t23 = hn::Zero(d);
    auto t30 = hn::Zero(d), t31 = hn::Zero(d), t32 = hn::Zero(d), t33 = hn::Zero(d);
    for (size_t c = 0; c < full; c += N) {
      Score16Column<Format>(d, q, r, sc, c, N, t00, t01, t02, t03, t10, t11, t12, t13, t20, t21, t22, t23, t30, t31,
                            t32, t33);
    }
    if (full < head_dim) {
      Score16Column<Format>(d, q, r, sc, full, head_dim - full, t00, t01, t02, t03, t10, t11, t12, t13, t20, t21, t22,
                            t23, t30, t31, t32, t33);
    }
    // DecodeScores' slots for keys (j, j + 1), then (j + 2, j + 3): slot 2 h + u.
    HWY_ALIGN float sums[2][hn::MaxLanes(D()) < 8 ? 8 : hn::MaxLanes(D())];
    Reduce8<true>(d, t00, t01, t10, t11, t20, t21, t30, t31, vscale, sums[0]);
    Reduce8<true>(d, t02, t03, t12, t13, t22, t23, t32, t33, vscale, sums[1]);
    for (size_t h = 0; h < 4; ++h) {
      s[h][j] = sums[0][2 * h], s[h][j + 1] = sums[0][2 * h + 1];
      s[h][j + 2] = sums[1][2 * h], s[h][j + 3] = sums[1][2 * h + 1];
    }
  }
  return n8;
}

// One eight-slot pass of DecodeScores: keys j .. j + 8 / GH - 1 (keys, scales sc[t]) against GH heads, reduced
// into s[h][j ..].
template <class Format, size_t GH, class D, class Keys>
HWY_INLINE void ScorePass(D d, const float* const* q, const Keys& keys, const float* sc, size_t head_dim,
                          hn::Vec<D> vscale, size_t j, float* const* s) {
  constexpr size_t KK = 8 / GH;
  const size_t N = hn::Lanes(d);
  const size_t full = head_dim - head_dim % N;
  auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  auto a4 = hn::Zero(d), a5 = hn::Zero(d), a6 = hn::Zero(d), a7 = hn::Zero(d);
  for (size_t c = 0; c < full; c += N) ScoreColumn<Format, GH>(d, q, keys, sc, c, N, a0, a1, a2, a3, a4, a5, a6, a7);
  if (full < head_dim) {  // lanes past head_dim are 0 in q and in the keys
    ScoreColumn<Format, GH>(d, q, keys, sc, full, head_dim - full, a0, a1, a2, a3, a4, a5, a6, a7);
  }
  if constexpr (GH == 1) {
    Reduce8(d, a0, a1, a2, a3, a4, a5, a6, a7, vscale, s[0] + j);
  } else {
    HWY_ALIGN float sums[hn::MaxLanes(D()) < 8 ? 8 : hn::MaxLanes(D())];
    Reduce8<true>(d, a0, a1, a2, a3, a4, a5, a6, a7, vscale, sums);
    for (size_t h = 0; h < GH; ++h) {
      for (size_t t = 0; t < KK; ++t) s[h][j + t] = sums[h * KK + t];
    }
  }
}

#endif  // HWY_TARGET != HWY_SCALAR

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// Keys t and t2 of a pass in one vector (head_dim <= half a vector): key t's columns in the lower half, key t2's in
// the upper, the lanes past head_dim 0 in each.
template <class Format, class D, class Keys>
HWY_INLINE hn::Vec<D> LoadKeyPair(D d, const Keys& keys, const float* sc, size_t t, size_t t2, size_t head_dim) {
  const hn::Half<D> dh;
  if constexpr (std::is_same_v<Format, Q8Format> || std::is_same_v<Format, F16Format>) {
    // A whole half of each key (d = 8: the TinyStories-260K shape): both rows' bytes in one register, converted as one
    // vector (F16: one conversion where two took two and an insert; Q8: one widening, one conversion and one
    // product by the two rows' scales where two of each and an insert ran). The same values lane by lane.
    if (head_dim == hn::Lanes(dh) && Format::VectorLoads(sc[t]) && Format::VectorLoads(sc[t2])) {
      if constexpr (std::is_same_v<Format, Q8Format>) {
        const __m128i lo = _mm_loadl_epi64(static_cast<const __m128i*>(static_cast<const void*>(keys.At(t, 0))));
        const __m128i both = _mm_castpd_si128(
            _mm_loadh_pd(_mm_castsi128_pd(lo), static_cast<const double*>(static_cast<const void*>(keys.At(t2, 0)))));
        const __m512 scales = _mm512_mask_broadcastss_ps(_mm512_set1_ps(sc[t]), 0xFF00, _mm_set_ss(sc[t2]));
        return hn::Vec<D>{_mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(both)), scales)};
      } else {
        const __m128i lo = _mm_loadu_si128(static_cast<const __m128i*>(static_cast<const void*>(keys.At(t, 0))));
        const __m128i hi = _mm_loadu_si128(static_cast<const __m128i*>(static_cast<const void*>(keys.At(t2, 0))));
        return hn::Vec<D>{_mm512_cvtph_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1))};
      }
    }
  }
  const auto lo = LoadRowVec<Format>(dh, keys.At(t, 0), 0, head_dim, hn::Set(dh, sc[t]), sc[t]);
  const auto hi = LoadRowVec<Format>(dh, keys.At(t2, 0), 0, head_dim, hn::Set(dh, sc[t2]), sc[t2]);
  return hn::Combine(d, hi, lo);
}

// Per 128-bit block, [a0 + a2, b0 + b2, a1 + a3, b1 + b3] (in-block unpacks, one cycle each).
template <class D, class V>
HWY_INLINE V BlockSums32(D d, V a, V b) {
  return hn::Add(hn::InterleaveLower(a, b), hn::InterleaveUpper(d, a, b));
}
// Per 128-bit block, [a0 + a2, a1 + a3, b0 + b2, b1 + b3] with the lanes taken in 64-bit pairs.
template <class D, class V>
HWY_INLINE V BlockSums64(D d, V a, V b) {
  const hn::Repartition<uint64_t, D> du;
  const auto a64 = hn::BitCast(du, a), b64 = hn::BitCast(du, b);
  return hn::Add(hn::BitCast(d, hn::InterleaveLower(a64, b64)), hn::BitCast(d, hn::InterleaveUpper(du, a64, b64)));
}

// The 16 sums of eight paired accumulators (each: a lower-half key and an upper-half key of 8 columns), lane
// 4 (2 g + k) + u for accumulator 4 g + u's key k (0 lower, 1 upper). In-block unpacks do the first two levels and
// one pair of cross-block shuffles the last, where three levels of PairSums took 14 cross-lane permutes, which
// bounded the pass. Each key's columns are summed ((c0 + c2) + (c1 + c3)) + ((c4 + c6) + (c5 + c7)), the same tree
// for every key, head and format (and in lib/kv_cache/kv_pair_lanes-inl.h, which must give these bits).
template <class D, class V>
HWY_INLINE V ReducePairs(D d, V a0, V a1, V a2, V a3, V a4, V a5, V a6, V a7) {
  static_assert(hn::MaxLanes(D()) == 16, "AVX-512's 16 floats: four 128-bit blocks");
  const V u = BlockSums64(d, BlockSums32(d, a0, a1), BlockSums32(d, a2, a3));
  const V v = BlockSums64(d, BlockSums32(d, a4, a5), BlockSums32(d, a6, a7));
  // Blocks 0 and 1 of u hold accumulators 0..3's lower keys (columns 0..3 and 4..7), blocks 2 and 3 their upper.
  return V{_mm512_add_ps(_mm512_shuffle_f32x4(u.raw, v.raw, _MM_SHUFFLE(2, 0, 2, 0)),
                         _mm512_shuffle_f32x4(u.raw, v.raw, _MM_SHUFFLE(3, 1, 3, 1)))};
}

// One pass of the paired scores: 16 / GH keys from j (8 when `half`, GH 1 only) against GH heads whose query rows
// sit in both halves of a vector, two keys per accumulator, placed so that ReducePairs leaves head h's keys in
// order at lanes [h 16 / GH, (h + 1) 16 / GH) (four heads: after one swap of 64-bit lanes): accumulator 4 h + u
// holds keys u and u + 4 (GH 2; GH 1: keys 8 g + u and 8 g + u + 4 in accumulator 4 g + u), accumulator 2 h + u keys
// u and u + 2 (GH 4).
template <class Format, size_t GH, class D, class Keys>
HWY_INLINE void ScorePairsPass(D d, hn::Vec<D> q0, hn::Vec<D> q1, hn::Vec<D> q2, hn::Vec<D> q3, const Keys& keys,
                               const float* sc, size_t head_dim, hn::Vec<D> vscale, bool half, float* const* s) {
  using V = hn::Vec<D>;
  const V z = hn::Zero(d);
  V a0, a1, a2, a3, a4 = z, a5 = z, a6 = z, a7 = z;
  if constexpr (GH == 4) {
    const V x0 = LoadKeyPair<Format>(d, keys, sc, 0, 2, head_dim),
            x1 = LoadKeyPair<Format>(d, keys, sc, 1, 3, head_dim);
    a0 = hn::MulAdd(q0, x0, z), a1 = hn::MulAdd(q0, x1, z), a2 = hn::MulAdd(q1, x0, z), a3 = hn::MulAdd(q1, x1, z);
    a4 = hn::MulAdd(q2, x0, z), a5 = hn::MulAdd(q2, x1, z), a6 = hn::MulAdd(q3, x0, z), a7 = hn::MulAdd(q3, x1, z);
  } else {
    const V x0 = LoadKeyPair<Format>(d, keys, sc, 0, 4, head_dim),
            x1 = LoadKeyPair<Format>(d, keys, sc, 1, 5, head_dim);
    const V x2 = LoadKeyPair<Format>(d, keys, sc, 2, 6, head_dim),
            x3 = LoadKeyPair<Format>(d, keys, sc, 3, 7, head_dim);
    a0 = hn::MulAdd(q0, x0, z), a1 = hn::MulAdd(q0, x1, z), a2 = hn::MulAdd(q0, x2, z), a3 = hn::MulAdd(q0, x3, z);
    if constexpr (GH == 2) {
      a4 = hn::MulAdd(q1, x0, z), a5 = hn::MulAdd(q1, x1, z), a6 = hn::MulAdd(q1, x2, z), a7 = hn::MulAdd(q1, x3, z);
    } else if (!half) {
      a4 = hn::MulAdd(q0, LoadKeyPair<Format>(d, keys, sc, 8, 12, head_dim), z);
      a5 = hn::MulAdd(q0, LoadKeyPair<Format>(d, keys, sc, 9, 13, head_dim), z);
      a6 = hn::MulAdd(q0, LoadKeyPair<Format>(d, keys, sc, 10, 14, head_dim), z);
      a7 = hn::MulAdd(q0, LoadKeyPair<Format>(d, keys, sc, 11, 15, head_dim), z);
    }
  }
  V w = hn::Mul(ReducePairs(d, a0, a1, a2, a3, a4, a5, a6, a7), vscale);
  const hn::Half<D> dh;
  const hn::Half<decltype(dh)> dq;
  if constexpr (GH == 1) {
    if (half) return hn::StoreU(hn::LowerHalf(dh, w), dh, s[0]);
    hn::StoreU(w, d, s[0]);
  } else if constexpr (GH == 2) {
    hn::StoreU(hn::LowerHalf(dh, w), dh, s[0]), hn::StoreU(hn::UpperHalf(dh, w), dh, s[1]);
  } else {
    // Lanes (h0 k0 k1, h1 k0 k1, h0 k2 k3, h1 k2 k3) in each half: swap the middle 64-bit lanes of each half.
    w = V{_mm512_castpd_ps(_mm512_permutex_pd(_mm512_castps_pd(w.raw), _MM_SHUFFLE(3, 1, 2, 0)))};
    const auto lo = hn::LowerHalf(dh, w), hi = hn::UpperHalf(dh, w);
    hn::StoreU(hn::LowerHalf(dq, lo), dq, s[0]), hn::StoreU(hn::UpperHalf(dq, lo), dq, s[1]);
    hn::StoreU(hn::LowerHalf(dq, hi), dq, s[2]), hn::StoreU(hn::UpperHalf(dq, hi), dq, s[3]);
  }
}

// DecodeScores for heads of at most half a vector (DecodeOnHalves): keys [0, nb - nb % 8) two per vector in passes
// of 16 / GH keys (the last 8 keys of a GH = 1 tile in a half pass), the others by RowDot on half vectors.
template <class Format, size_t GH, class D>
HWY_INLINE void DecodeScoresPaired(D d, const float* const* q, const internal::RowSource& k, size_t head_dim, size_t nb,
                                   float scale, float* const* s) {
  constexpr size_t KP = 16 / GH;
  const hn::Half<D> dh;
  const auto dup = [&](size_t h) {
    const auto x = LoadVecN(dh, q[h < GH ? h : 0], head_dim);
    return hn::Combine(d, x, x);
  };
  const auto q0 = dup(0), q1 = dup(1), q2 = dup(2), q3 = dup(3), vscale = hn::Set(d, scale);
  const size_t n8 = nb - nb % 8;
  float sc[KP] = {};
  float* sj[4] = {};
  size_t j = 0;
  for (; j < n8; j += KP) {
    const bool half = n8 - j < KP;                                             // GH 1 only: n8 - j is a multiple of 8
    if constexpr (Format::kScaled) k.Scales(j, GH == 1 && half ? 8 : KP, sc);  // half: GH 1 only
    for (size_t h = 0; h < GH; ++h) sj[h] = s[h] + j;
    ListedKeys<Format, KP> keys;
    k.Rows(j, half ? 8 : KP, keys.r);
    ScorePairsPass<Format, GH>(d, q0, q1, q2, q3, keys, sc, head_dim, vscale, half, sj);
    if (half) j -= 8;
  }
  for (; j < nb; ++j) {
    const unsigned char* row = k.Row(j);
    const float row_scale = Format::kScaled ? k.Scale(j) : 0.0f;
    for (size_t h = 0; h < GH; ++h) s[h][j] = RowDot<Format>(dh, q[h], row, head_dim, row_scale) * scale;
  }
}
#endif  // HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3

// Scores of GH (1, 2 or 4) query heads (q[h], into s[h]) against the tile's keys [0, nb) of k, times scale. Eight
// keys' worth of slots at a time, one accumulator vector per (head, key) slot, reduced together by Reduce8; the
// tile's last nb % 8 keys by RowDot (Dot's arithmetic), as are all keys on one-lane targets.
template <class Format, size_t GH, class D>
HWY_INLINE void DecodeScores(D d, const float* const* q, const internal::RowSource& k, size_t head_dim, size_t nb,
                             float scale, float* const* s) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  if constexpr (DecodeOnHalves<D>()) {
    if (2 * head_dim <= hn::Lanes(d)) return DecodeScoresPaired<Format, GH>(d, q, k, head_dim, nb, scale, s);
  }
#endif
  size_t j = 0;
#if HWY_TARGET != HWY_SCALAR
  constexpr size_t KK = 8 / GH;  // keys per pass
  const auto vscale = hn::Set(d, scale);
  const size_t n8 = hn::Lanes(d) >= 4 ? nb - nb % 8 : 0;
  if constexpr (GH == 4 && kDecode16) j = DecodeScores4x16<Format>(d, q, k, head_dim, n8, vscale, s);
  float sc[KK] = {};
  if (k.Wrap(nb) == nb) {  // no ring wrap in the tile
    StridedKeys<Format> keys{k.Row(j), k.row_bytes};
    for (; j < n8; j += KK, keys.r0 += KK * k.row_bytes) {
      if constexpr (Format::kScaled) k.Scales(j, KK, sc);
      ScorePass<Format, GH>(d, q, keys, sc, head_dim, vscale, j, s);
    }
  }
  for (; j < n8; j += KK) {  // a tile that wraps: each pass's rows where they are
    ListedKeys<Format, KK> keys;
    k.Rows(j, KK, keys.r);
    if constexpr (Format::kScaled) k.Scales(j, KK, sc);
    ScorePass<Format, GH>(d, q, keys, sc, head_dim, vscale, j, s);
  }
#endif
  for (; j < nb; ++j) {
    const unsigned char* row = k.Row(j);
    const float row_scale = Format::kScaled ? k.Scale(j) : 0.0f;
    for (size_t h = 0; h < GH; ++h) s[h][j] = RowDot<Format>(d, q[h], row, head_dim, row_scale) * scale;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle
