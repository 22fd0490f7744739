// Decode steps (q_len < kAttentionTiledMinQueries) against a KV cache, reading the stored bytes directly.
//
// Converting a tile to f32 in the workspace first (kv_cache-inl.h's TileRows) writes 2x (F16) or 4x (Q8) the
// stored bytes and reads them back once per query head, so the smaller format saved nothing (docs/performance.md,
// KV cache). Here each vector of K or V is converted in registers where it is used (F16: F16C's vcvtph2ps on
// x86, the exact integer HalfToFloat elsewhere; Q8: int8 -> int32 -> f32 times the row's scale: the product
// Read returns), and up to four query heads of a kv-head group share each converted vector, so GQA converts and
// reads each K/V element once per group. The arithmetic per (query head, key) and per (query head, output
// column) is the decode path's (decode-inl.h: DecodeScores' eight keys and transposing pair sums, its Dot for the
// tile's last n % 8 keys; DecodePv's column blocks of 8, 4 (even and odd keys) and the PvRow rest), so a query
// head gives the bits an F32 cache holding the same values gives, alone or in a group, wherever a ring keeps
// its rows. An F32 cache at a 4-byte aligned address takes the same kernels with plain loads: its GQA reads each
// vector once per group too, and its bits stay those of Attention's decode path.

#if defined(EDGEATTN_LIB_KV_CACHE_KV_CACHE_FUSED_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_KV_CACHE_KV_CACHE_FUSED_INL_H_
#undef EDGEATTN_LIB_KV_CACHE_KV_CACHE_FUSED_INL_H_
#else
#define EDGEATTN_LIB_KV_CACHE_KV_CACHE_FUSED_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include "hwy/highway.h"
#include "lib/attention/decode-inl.h"
#include "lib/common/simd_tail-inl.h"
#include "lib/kv_cache/kv_cache_fused16-inl.h"
#include "lib/kv_cache/kv_cache_load-inl.h"
#include "lib/kv_cache/kv_cache_scalar.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Scores of GH query heads (q[h], into s[h]) against the tile's keys [0, nb), times scale. Eight accumulators:
// slot h * (8 / GH) + t holds head h and key j + t, so each converted K vector feeds GH products.
template <int kKind, size_t GH, class D>
HWY_NOINLINE void KvFusedScores(D d, const float* const* q, const KvFusedRows& k, size_t head_dim, size_t nb,
                                float scale, float* const* s) {
  size_t j = 0;
#if HWY_TARGET != HWY_SCALAR
  constexpr size_t KK = 8 / GH;  // keys per pass
  const size_t N = hn::Lanes(d);
  const auto vscale = hn::Set(d, scale);
  const size_t n8 = N >= 4 ? nb - nb % 8 : 0;  // DecodeScores' eight-key passes; the rest by Dot
  if constexpr (GH == 4 && kKvFused16) j = KvFusedScores4x16<kKind>(d, q, k, head_dim, n8, vscale, s);
  for (; j < n8; j += KK) {
    const unsigned char* r[KK];
    float sc[KK];
    for (size_t t = 0; t < KK; ++t) {
      r[t] = k.Row(j + t);
      sc[t] = kKind == kKvFusedQ8 ? k.Scale(j + t) : 0.0f;
    }
    auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
    auto a4 = hn::Zero(d), a5 = hn::Zero(d), a6 = hn::Zero(d), a7 = hn::Zero(d);
    for (size_t c = 0; c < head_dim; c += N) {
      const size_t lanes = head_dim - c < N ? head_dim - c : N;
      if constexpr (GH == 1) {
        const auto q0 = KvFusedLoadQ(d, q[0] + c, lanes);
        a0 = hn::MulAdd(q0, KvFusedLoad<kKind>(d, r[0], c, lanes, hn::Set(d, sc[0]), sc[0]), a0);
        a1 = hn::MulAdd(q0, KvFusedLoad<kKind>(d, r[1], c, lanes, hn::Set(d, sc[1]), sc[1]), a1);
        a2 = hn::MulAdd(q0, KvFusedLoad<kKind>(d, r[2], c, lanes, hn::Set(d, sc[2]), sc[2]), a2);
        a3 = hn::MulAdd(q0, KvFusedLoad<kKind>(d, r[3], c, lanes, hn::Set(d, sc[3]), sc[3]), a3);
        a4 = hn::MulAdd(q0, KvFusedLoad<kKind>(d, r[4], c, lanes, hn::Set(d, sc[4]), sc[4]), a4);
        a5 = hn::MulAdd(q0, KvFusedLoad<kKind>(d, r[5], c, lanes, hn::Set(d, sc[5]), sc[5]), a5);
        a6 = hn::MulAdd(q0, KvFusedLoad<kKind>(d, r[6], c, lanes, hn::Set(d, sc[6]), sc[6]), a6);
        a7 = hn::MulAdd(q0, KvFusedLoad<kKind>(d, r[7], c, lanes, hn::Set(d, sc[7]), sc[7]), a7);
      } else if constexpr (GH == 2) {
        const auto q0 = KvFusedLoadQ(d, q[0] + c, lanes), q1 = KvFusedLoadQ(d, q[1] + c, lanes);
        const auto x0 = KvFusedLoad<kKind>(d, r[0], c, lanes, hn::Set(d, sc[0]), sc[0]);
        const auto x1 = KvFusedLoad<kKind>(d, r[1], c, lanes, hn::Set(d, sc[1]), sc[1]);
        const auto x2 = KvFusedLoad<kKind>(d, r[2], c, lanes, hn::Set(d, sc[2]), sc[2]);
        const auto x3 = KvFusedLoad<kKind>(d, r[3], c, lanes, hn::Set(d, sc[3]), sc[3]);
        a0 = hn::MulAdd(q0, x0, a0), a1 = hn::MulAdd(q0, x1, a1), a2 = hn::MulAdd(q0, x2, a2);
        a3 = hn::MulAdd(q0, x3, a3), a4 = hn::MulAdd(q1, x0, a4), a5 = hn::MulAdd(q1, x1, a5);
        a6 = hn::MulAdd(q1, x2, a6), a7 = hn::MulAdd(q1, x3, a7);
      } else {
        const auto q0 = KvFusedLoadQ(d, q[0] + c, lanes), q1 = KvFusedLoadQ(d, q[1] + c, lanes);
        const auto q2 = KvFusedLoadQ(d, q[2] + c, lanes), q3 = KvFusedLoadQ(d, q[3] + c, lanes);
        const auto x0 = KvFusedLoad<kKind>(d, r[0], c, lanes, hn::Set(d, sc[0]), sc[0]);
        const auto x1 = KvFusedLoad<kKind>(d, r[1], c, lanes, hn::Set(d, sc[1]), sc[1]);
        a0 = hn::MulAdd(q0, x0, a0), a1 = hn::MulAdd(q0, x1, a1), a2 = hn::MulAdd(q1, x0, a2);
        a3 = hn::MulAdd(q1, x1, a3), a4 = hn::MulAdd(q2, x0, a4), a5 = hn::MulAdd(q2, x1, a5);
        a6 = hn::MulAdd(q3, x0, a6), a7 = hn::MulAdd(q3, x1, a7);
      }
    }
    HWY_ALIGN float sums[hn::MaxLanes(D()) < 8 ? 8 : hn::MaxLanes(D())];
    KvFusedReduce8(d, a0, a1, a2, a3, a4, a5, a6, a7, vscale, sums);
    for (size_t h = 0; h < GH; ++h) {
      for (size_t t = 0; t < KK; ++t) s[h][j + t] = sums[h * KK + t];
    }
  }
#endif
  for (; j < nb; ++j) {
    const unsigned char* row = k.Row(j);
    const float sc = kKind == kKvFusedQ8 ? k.Scale(j) : 0.0f;
    for (size_t h = 0; h < GH; ++h) s[h][j] = KvFusedDot<kKind>(d, q[h], row, head_dim, sc) * scale;
  }
}

// DecodePv for GH query heads at once: out[h][c] = (rescale ? out[h][c] alpha[h] : 0) + sum_j p[h][j] v_j[c].
// Columns in DecodePv's blocks (8 vectors, one accumulator each; then 4, even and odd keys apart; then PvRow's
// one vector at a time), each block's vectors split among the heads so that eight chains run.
template <int kKind, size_t GH, class D>
HWY_NOINLINE void KvFusedPv(D d, const float* const* p, size_t n, const KvFusedRows& v, float* const* out,
                            size_t width, const float* alpha, bool rescale) {
  const size_t N = hn::Lanes(d);
  const size_t wrap = v.Wrap(n);
  size_t c = 0;
  if constexpr (GH == 4 && kKvFused16) c = KvFusedPv4x16<kKind>(d, p, n, v, out, width, alpha, rescale);
  const size_t wide_end = width - width % (8 * N);
  for (; c < wide_end; c += (8 / GH) * N) {  // one accumulator per column vector: slot h * (8 / GH) + t
    constexpr size_t CB = 8 / GH;
    auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
    auto a4 = hn::Zero(d), a5 = hn::Zero(d), a6 = hn::Zero(d), a7 = hn::Zero(d);
    const unsigned char* row = v.Row(0);
    const unsigned char* sp = v.ScalePtr(0);
    for (size_t j = 0; j < n; ++j, row += v.row_bytes, sp += v.scale_bytes) {
      if (j == wrap) row = v.base, sp = v.scale;  // the ring's slot 0
      const float sc = KvFusedScaleAt<kKind>(sp);
      const auto vs = hn::Set(d, sc);
      const auto p0 = hn::Set(d, p[0][j]);
      if constexpr (GH == 1) {
        a0 = hn::MulAdd(p0, KvFusedLoad<kKind>(d, row, c, N, vs, sc), a0);
        a1 = hn::MulAdd(p0, KvFusedLoad<kKind>(d, row, c + N, N, vs, sc), a1);
        a2 = hn::MulAdd(p0, KvFusedLoad<kKind>(d, row, c + 2 * N, N, vs, sc), a2);
        a3 = hn::MulAdd(p0, KvFusedLoad<kKind>(d, row, c + 3 * N, N, vs, sc), a3);
        a4 = hn::MulAdd(p0, KvFusedLoad<kKind>(d, row, c + 4 * N, N, vs, sc), a4);
        a5 = hn::MulAdd(p0, KvFusedLoad<kKind>(d, row, c + 5 * N, N, vs, sc), a5);
        a6 = hn::MulAdd(p0, KvFusedLoad<kKind>(d, row, c + 6 * N, N, vs, sc), a6);
        a7 = hn::MulAdd(p0, KvFusedLoad<kKind>(d, row, c + 7 * N, N, vs, sc), a7);
      } else if constexpr (GH == 2) {
        const auto p1 = hn::Set(d, p[1][j]);
        const auto x0 = KvFusedLoad<kKind>(d, row, c, N, vs, sc), x1 = KvFusedLoad<kKind>(d, row, c + N, N, vs, sc);
        const auto x2 = KvFusedLoad<kKind>(d, row, c + 2 * N, N, vs, sc);
        const auto x3 = KvFusedLoad<kKind>(d, row, c + 3 * N, N, vs, sc);
        a0 = hn::MulAdd(p0, x0, a0), a1 = hn::MulAdd(p0, x1, a1), a2 = hn::MulAdd(p0, x2, a2);
        a3 = hn::MulAdd(p0, x3, a3), a4 = hn::MulAdd(p1, x0, a4), a5 = hn::MulAdd(p1, x1, a5);
        a6 = hn::MulAdd(p1, x2, a6), a7 = hn::MulAdd(p1, x3, a7);
      } else {
        const auto p1 = hn::Set(d, p[1][j]), p2 = hn::Set(d, p[2][j]), p3 = hn::Set(d, p[3][j]);
        const auto x0 = KvFusedLoad<kKind>(d, row, c, N, vs, sc), x1 = KvFusedLoad<kKind>(d, row, c + N, N, vs, sc);
        a0 = hn::MulAdd(p0, x0, a0), a1 = hn::MulAdd(p0, x1, a1), a2 = hn::MulAdd(p1, x0, a2);
        a3 = hn::MulAdd(p1, x1, a3), a4 = hn::MulAdd(p2, x0, a4), a5 = hn::MulAdd(p2, x1, a5);
        a6 = hn::MulAdd(p3, x0, a6), a7 = hn::MulAdd(p3, x1, a7);
      }
    }
    KvFusedStore(d, a0, out[0] + c, N, alpha[0], rescale, false);
    KvFusedStore(d, a1, out[(1 / CB) % GH] + c + (1 % CB) * N, N, alpha[(1 / CB) % GH], rescale, false);
    KvFusedStore(d, a2, out[(2 / CB) % GH] + c + (2 % CB) * N, N, alpha[(2 / CB) % GH], rescale, false);
    KvFusedStore(d, a3, out[(3 / CB) % GH] + c + (3 % CB) * N, N, alpha[(3 / CB) % GH], rescale, false);
    KvFusedStore(d, a4, out[(4 / CB) % GH] + c + (4 % CB) * N, N, alpha[(4 / CB) % GH], rescale, false);
    KvFusedStore(d, a5, out[(5 / CB) % GH] + c + (5 % CB) * N, N, alpha[(5 / CB) % GH], rescale, false);
    KvFusedStore(d, a6, out[(6 / CB) % GH] + c + (6 % CB) * N, N, alpha[(6 / CB) % GH], rescale, false);
    KvFusedStore(d, a7, out[(7 / CB) % GH] + c + (7 % CB) * N, N, alpha[(7 / CB) % GH], rescale, false);
  }
  const size_t mid_end = width - c >= 4 * N ? c + 4 * N : c;
  for (; c < mid_end; c += (4 / GH) * N) {  // even keys in slot h * (4 / GH) + t, odd keys in 4 + that
    constexpr size_t CB = 4 / GH;
    auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
    auto b0 = hn::Zero(d), b1 = hn::Zero(d), b2 = hn::Zero(d), b3 = hn::Zero(d);
    const unsigned char* row = v.Row(0);
    const unsigned char* sp = v.ScalePtr(0);
    for (size_t j = 0; j < n; ++j, row += v.row_bytes, sp += v.scale_bytes) {
      if (j == wrap) row = v.base, sp = v.scale;  // the ring's slot 0
      const float sc = KvFusedScaleAt<kKind>(sp);
      const auto vs = hn::Set(d, sc);
      const auto w0 = hn::Set(d, p[0][j]);
      if constexpr (GH == 1) {
        const auto x0 = KvFusedLoad<kKind>(d, row, c, N, vs, sc), x1 = KvFusedLoad<kKind>(d, row, c + N, N, vs, sc);
        const auto x2 = KvFusedLoad<kKind>(d, row, c + 2 * N, N, vs, sc);
        const auto x3 = KvFusedLoad<kKind>(d, row, c + 3 * N, N, vs, sc);
        if ((j & 1) == 0) {
          a0 = hn::MulAdd(w0, x0, a0), a1 = hn::MulAdd(w0, x1, a1), a2 = hn::MulAdd(w0, x2, a2);
          a3 = hn::MulAdd(w0, x3, a3);
        } else {
          b0 = hn::MulAdd(w0, x0, b0), b1 = hn::MulAdd(w0, x1, b1), b2 = hn::MulAdd(w0, x2, b2);
          b3 = hn::MulAdd(w0, x3, b3);
        }
      } else if constexpr (GH == 2) {
        const auto w1 = hn::Set(d, p[1][j]);
        const auto x0 = KvFusedLoad<kKind>(d, row, c, N, vs, sc), x1 = KvFusedLoad<kKind>(d, row, c + N, N, vs, sc);
        if ((j & 1) == 0) {
          a0 = hn::MulAdd(w0, x0, a0), a1 = hn::MulAdd(w0, x1, a1), a2 = hn::MulAdd(w1, x0, a2);
          a3 = hn::MulAdd(w1, x1, a3);
        } else {
          b0 = hn::MulAdd(w0, x0, b0), b1 = hn::MulAdd(w0, x1, b1), b2 = hn::MulAdd(w1, x0, b2);
          b3 = hn::MulAdd(w1, x1, b3);
        }
      } else {
        const auto w1 = hn::Set(d, p[1][j]), w2 = hn::Set(d, p[2][j]), w3 = hn::Set(d, p[3][j]);
        const auto x0 = KvFusedLoad<kKind>(d, row, c, N, vs, sc);
        if ((j & 1) == 0) {
          a0 = hn::MulAdd(w0, x0, a0), a1 = hn::MulAdd(w1, x0, a1), a2 = hn::MulAdd(w2, x0, a2);
          a3 = hn::MulAdd(w3, x0, a3);
        } else {
          b0 = hn::MulAdd(w0, x0, b0), b1 = hn::MulAdd(w1, x0, b1), b2 = hn::MulAdd(w2, x0, b2);
          b3 = hn::MulAdd(w3, x0, b3);
        }
      }
    }
    a0 = hn::Add(a0, b0), a1 = hn::Add(a1, b1), a2 = hn::Add(a2, b2), a3 = hn::Add(a3, b3);
    KvFusedStore(d, a0, out[0] + c, N, alpha[0], rescale, false);
    KvFusedStore(d, a1, out[1 / CB] + c + (1 % CB) * N, N, alpha[1 / CB], rescale, false);
    KvFusedStore(d, a2, out[2 / CB] + c + (2 % CB) * N, N, alpha[2 / CB], rescale, false);
    KvFusedStore(d, a3, out[3 / CB] + c + (3 % CB) * N, N, alpha[3 / CB], rescale, false);
  }
  for (; c < width; c += N) {  // PvRow: one accumulator per head
    const size_t lanes = width - c < N ? width - c : N;
    auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
    const unsigned char* row = v.Row(0);
    const unsigned char* sp = v.ScalePtr(0);
    for (size_t j = 0; j < n; ++j, row += v.row_bytes, sp += v.scale_bytes) {
      if (j == wrap) row = v.base, sp = v.scale;  // the ring's slot 0
      const float sc = KvFusedScaleAt<kKind>(sp);
      const auto x = KvFusedLoad<kKind>(d, row, c, lanes, hn::Set(d, sc), sc);
      a0 = hn::MulAdd(hn::Set(d, p[0][j]), x, a0);
      if (GH >= 2) a1 = hn::MulAdd(hn::Set(d, p[GH >= 2 ? 1 : 0][j]), x, a1);
      if (GH >= 4) {
        a2 = hn::MulAdd(hn::Set(d, p[GH >= 4 ? 2 : 0][j]), x, a2);
        a3 = hn::MulAdd(hn::Set(d, p[GH >= 4 ? 3 : 0][j]), x, a3);
      }
    }
    KvFusedStore(d, a0, out[0] + c, lanes, alpha[0], rescale, true);
    if (GH >= 2) KvFusedStore(d, a1, out[GH >= 2 ? 1 : 0] + c, lanes, alpha[GH >= 2 ? 1 : 0], rescale, true);
    if (GH >= 4) {
      KvFusedStore(d, a2, out[GH >= 4 ? 2 : 0] + c, lanes, alpha[GH >= 4 ? 2 : 0], rescale, true);
      KvFusedStore(d, a3, out[GH >= 4 ? 3 : 0] + c, lanes, alpha[GH >= 4 ? 3 : 0], rescale, true);
    }
  }
}

// Query row i of a decode step, kv head g, the tile's positions [a, a + nb): scores, online-softmax step and P V
// of the group's heads whose state is not NaN (m, l: the row's states of the group; s: gh_max * kDecodeTile
// floats). A head meeting a non-finite score gets m = NaN and is recomputed by the caller, as in KvAttentionForward.
template <int kKind, class D, class AccOf>
HWY_INLINE void KvFusedTileRow(D d, const internal::KvAttentionProblem& p, const float* q, AccOf acc_of, size_t g,
                               size_t i, size_t a, size_t nb, float* m, float* l, float* s, size_t gh_max) {
  const internal::KvLayout& lay = p.layout;
  const KvFusedRows k = KvFusedRowsOf(p, g, 0, a), v = KvFusedRowsOf(p, g, 1, a);
  const size_t tile = internal::KvMin(kDecodeTile, lay.capacity);
  size_t r = 0;
  while (r < p.group) {
    size_t heads[4], count = 0;
    for (; r < p.group && count < gh_max; ++r) {
      if (m[r] == m[r]) heads[count++] = r;  // NaN: recomputed at the end
    }
    const float* q_rows[4] = {};
    float* s_rows[4] = {};
    float* out_rows[4] = {};
    float alpha[4] = {};
    for (size_t e = 0; e < count; ++e) {
      const size_t h = g * p.group + heads[e];
      q_rows[e] = q + (i * p.num_heads + h) * lay.head_dim;
      s_rows[e] = s + e * tile;
    }
    for (size_t e = 0; e < count;) {
      const size_t left = count - e;
      if (left >= 4) {
        KvFusedScores<kKind, 4>(d, q_rows + e, k, lay.head_dim, nb, p.scale, s_rows + e), e += 4;
      } else if (left >= 2) {
        KvFusedScores<kKind, 2>(d, q_rows + e, k, lay.head_dim, nb, p.scale, s_rows + e), e += 2;
      } else {
        KvFusedScores<kKind, 1>(d, q_rows + e, k, lay.head_dim, nb, p.scale, s_rows + e), e += 1;
      }
    }
    bool rescale = false;
    size_t live = 0;
    for (size_t e = 0; e < count; ++e) {
      const size_t state = heads[e];
      const float tile_max = DecodeTileMax(d, s_rows[e], nb);
      if (tile_max != tile_max) {
        m[state] = internal::kQuietNaN;
        continue;
      }
      rescale = m[state] > -internal::kInfinity;  // the same for every head of the row: the same positions
      s_rows[live] = s_rows[e];
      alpha[live] = DecodeSoftmaxStep(d, s_rows[e], nb, tile_max, !rescale, m[state], l[state]);
      out_rows[live++] = acc_of(i, state);
    }
    const float* p_rows[4] = {s_rows[0], s_rows[1], s_rows[2], s_rows[3]};  // the weights now
    for (size_t e = 0; e < live;) {
      const size_t left = live - e;
      if (left >= 4) {
        KvFusedPv<kKind, 4>(d, p_rows + e, nb, v, out_rows + e, lay.value_dim, alpha + e, rescale), e += 4;
      } else if (left >= 2) {
        KvFusedPv<kKind, 2>(d, p_rows + e, nb, v, out_rows + e, lay.value_dim, alpha + e, rescale), e += 2;
      } else {
        KvFusedPv<kKind, 1>(d, p_rows + e, nb, v, out_rows + e, lay.value_dim, alpha + e, rescale), e += 1;
      }
    }
  }
}

// Whether a decode step on this cache takes KvFusedTileRow, and the query heads it runs at once: four when
// the workspace's tile region (kDecodeTile * (head_dim + value_dim + 1) floats) holds four heads' scores.
// Not on HWY_SCALAR (the Cortex-M builds): one lane shares nothing between heads, and the kernels' code
// (four kinds by three group widths) would add tens of KiB of flash.
inline size_t KvFusedHeads(const internal::KvAttentionProblem& p) {
  if (HWY_TARGET == HWY_SCALAR || p.q_len >= kAttentionTiledMinQueries) return 0;
  // A misaligned F32 or F16 cache keeps the converting path (the same bits): a vector load of floats or
  // halves there is undefined behaviour, and an element-wise variant would only add code for storage the
  // caller misaligned.
  const size_t align = p.layout.type == KvType::kF32 ? sizeof(float) : p.layout.type == KvType::kF16 ? 2 : 1;
  if (reinterpret_cast<uintptr_t>(p.storage) % align != 0) return 0;
  return p.layout.head_dim + p.layout.value_dim + 1 >= 4 ? 4 : 2;
}

template <class D, class AccOf>
HWY_INLINE void KvFusedTileRowAny(D d, const internal::KvAttentionProblem& p, const float* q, AccOf acc_of, size_t g,
                                  size_t i, size_t a, size_t nb, float* m, float* l, float* s, size_t gh_max) {
#if HWY_TARGET == HWY_SCALAR
  (void)d, (void)p, (void)q, (void)acc_of, (void)g, (void)i, (void)a, (void)nb, (void)m, (void)l, (void)s, (void)gh_max;
#else
  if (p.layout.type == KvType::kQ8) return KvFusedTileRow<kKvFusedQ8>(d, p, q, acc_of, g, i, a, nb, m, l, s, gh_max);
  if (p.layout.type == KvType::kF32) return KvFusedTileRow<kKvFusedF32>(d, p, q, acc_of, g, i, a, nb, m, l, s, gh_max);
  KvFusedTileRow<kKvFusedF16>(d, p, q, acc_of, g, i, a, nb, m, l, s, gh_max);
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle
