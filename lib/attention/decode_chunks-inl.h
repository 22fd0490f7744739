// SPDX-License-Identifier: Apache-2.0
// The decode path's rows (docs/performance.md, decode path; attention.h, the work split): a row's keys in chunks
// of kAttentionKeyChunk, each chunk's partial result by decode-inl.h's tile steps, the partials combined in chunk
// order by one function for the single call and for the split's finish. Also the KV cache's (kv_cache-inl.h).

#if defined(EDGEATTN_LIB_ATTENTION_DECODE_CHUNKS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_ATTENTION_DECODE_CHUNKS_INL_H_
#undef EDGEATTN_LIB_ATTENTION_DECODE_CHUNKS_INL_H_
#else
#define EDGEATTN_LIB_ATTENTION_DECODE_CHUNKS_INL_H_
#endif

#include <stddef.h>

#include "hwy/highway.h"
#include "lib/attention/attention_driver.h"
#include "lib/attention/attention_split.h"
#include "lib/attention/decode-inl.h"
#include "lib/attention/shared-inl.h"
#include "lib/common/float_util.h"
#include "lib/common/formats-inl.h"
#include "lib/common/row_source.h"
#include "lib/common/simd_tail-inl.h"
#include "lib/exp/exp_scalar.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// ---- Key chunks (attention.h, the work split). A decode row's keys are cut into chunks of kAttentionKeyChunk keys
// (one chunk when the shape has one: kv_len <= kAttentionKeyChunk, or several queries); each chunk gives a partial
// result, the online softmax's state over its keys, and the partials are combined in chunk order by one function,
// DecodeCombine, which the single call and AttentionFinish both run. So the single call and the parts give the
// same bits, and with one chunk the row is the decode row of 0.2.0 (DecodeChunk's tiles, then the division).
static_assert(kAttentionKeyChunk % kDecodeTile == 0, "a key chunk is whole decode tiles");

// A row's partial result over one chunk of keys; the chunk's output row (acc) lives elsewhere: chunk 0's in the
// output row, the others' in the workspace (single call) or the shared buffer (parts). The softmax rules
// (softmax.h) are carried by the flags, since AttentionFinish has no q, k or v to recompute a row: a NaN score
// makes the row NaN; +inf scores share the row (acc then holds the sum of their V rows, pinf their count); -inf
// scores weigh 0; a row whose scores are all -inf outputs zeros (l = 0, acc unused).
struct DecodePartial {
  float m;      // largest finite score of the chunk; -inf: none
  float l;      // sum of e^(s_j - m) over the chunk's finite scores; 0: none (acc not written)
  size_t pinf;  // +inf scores
  bool nan;     // a NaN score
};

inline DecodePartial EmptyPartial() { return DecodePartial{-internal::kInfinity, 0.0f, 0, false}; }

// The chunk of nb keys (k and v at its first key) in two passes over its scores in s (nb floats): the flags, then,
// without +inf or NaN, one softmax step against the chunk's largest finite score and P V into acc. Taken for a
// chunk with a non-finite score, and for every chunk under a directed rounding mode (kToNearest false: the exp
// steps its range reduction to nearest, as the row path's softmax does).
template <class Kernels, bool kToNearest, class D>
HWY_NOINLINE DecodePartial DecodeChunkTwoPass(D d, const internal::AttentionProblem& p, const float* q_row,
                                              const float* k, size_t k_stride, const float* v, size_t v_stride,
                                              size_t nb, float* s, float* acc) {
  DecodePartial r = EmptyPartial();
  float* const s_rows[1] = {s};
  Kernels::template Scores<F32Format, 1>(d, &q_row, internal::PlainRows(k, k_stride), p.head_dim, nb, p.scale, s_rows);
  float m = -internal::kInfinity;
  for (size_t j = 0; j < nb; ++j) {
    const float x = s[j];
    if (x != x) {
      r.nan = true;
      return r;
    }
    r.pinf += x == internal::kInfinity ? 1 : 0;
    m = x > m && x < internal::kInfinity ? x : m;
  }
  if (r.pinf != 0) {
    internal::FillRow(acc, p.value_dim, 0.0f);
    for (size_t j = 0; j < nb; ++j) {
      if (s[j] != internal::kInfinity) continue;
      const float* v_row = v + j * v_stride;
      for (size_t c = 0; c < p.value_dim; ++c) acc[c] += v_row[c];
    }
    return r;
  }
  if (!(m > -internal::kInfinity)) return r;  // every score -inf: weight 0 each
  Kernels::template SoftmaxStep<kToNearest>(d, s, nb, m, true, r.m, r.l);
  const float* const p_rows[1] = {s};
  float* const out_rows[1] = {acc};
  const float alpha[1] = {0.0f};
  Kernels::template Pv<F32Format, 1>(d, p_rows, nb, internal::PlainRows(v, v_stride), out_rows, p.value_dim, alpha,
                                     false);
  return r;
}

// Row i of head h over its visible keys [j_begin, j_end) (j_begin < j_end), into acc. To nearest: the decode tiles'
// online softmax (the path's fast loop); a tile with a non-finite score restarts the chunk in two passes.
template <class Kernels, class D>
HWY_INLINE DecodePartial DecodeChunk(D d, const HeadView& t, size_t i, size_t j_begin, size_t j_end, float* s,
                                     float* acc, bool to_nearest) {
  const internal::AttentionProblem& p = *t.p;
  const float* q_row = t.q + i * t.q_stride;
  const float* k = t.k + j_begin * t.k_stride;
  const float* v = t.v + j_begin * t.v_stride;
  if (!to_nearest) {
    return DecodeChunkTwoPass<Kernels, false>(d, p, q_row, k, t.k_stride, v, t.v_stride, j_end - j_begin, s, acc);
  }
  DecodePartial r = EmptyPartial();
  const internal::RowSource ks = internal::PlainRows(k, t.k_stride), vs = internal::PlainRows(v, t.v_stride);
  const auto q_of = [q_row](size_t) { return q_row; };
  const auto out_of = [acc](size_t) { return acc; };
  TileRow<decltype(q_of), decltype(out_of)> row{1, &r.m, &r.l, q_of, out_of};
  const TileShape sh{p.head_dim, p.value_dim, p.scale, s, 0};
  for (size_t j0 = j_begin; j0 < j_end; j0 += kDecodeTile) {
    const size_t nb = j_end - j0 < kDecodeTile ? j_end - j0 : kDecodeTile;
    DecodeTile<Kernels, F32Format, 1>(d, row, ks.From(j0 - j_begin), vs.From(j0 - j_begin), nb, sh, 1);
    if (r.m != r.m) {
      return DecodeChunkTwoPass<Kernels, true>(d, p, q_row, k, t.k_stride, v, t.v_stride, j_end - j_begin, s, acc);
    }
  }
  return r;
}

// lanes <= Lanes(d) floats of a row.
template <class D>
HWY_INLINE hn::Vec<D> DecodeLoad(D d, const float* p, size_t lanes) {
  return lanes == hn::Lanes(d) ? hn::LoadU(d, p) : LoadTail(d, p, lanes);
}
template <class D>
HWY_INLINE void DecodeStore(D d, hn::Vec<D> x, float* p, size_t lanes) {
  if (lanes == hn::Lanes(d)) {
    hn::StoreU(x, d, p);
  } else {
    StoreTail(d, x, p, lanes);
  }
}

// Adds partial c (its row acc) to the row's state st (its row out_row): the one combine of the single call and of
// AttentionFinish. Finite partials: the online softmax's merge, out = out e^(m - m_new) + acc e^(m_c - m_new), one
// factor exactly 1; the exp (scalar) steps its range reduction to nearest in every mode. Not inlined: one copy per
// target, so that both callers run the same instructions.
template <class D>
HWY_NOINLINE void DecodeCombine(D d, DecodePartial& st, float* out_row, const DecodePartial& c, const float* acc,
                                size_t width) {
  const size_t N = hn::Lanes(d);
  if (st.nan) return;
  if (c.nan) {
    st.nan = true;
    return;
  }
  const bool add_inf = c.pinf != 0 && st.pinf != 0;
  const bool copy = c.pinf != 0 ? st.pinf == 0 : st.pinf == 0 && c.l != 0.0f && st.l == 0.0f;
  if (add_inf || copy) {
    for (size_t x = 0; x < width; x += N) {
      const size_t lanes = width - x < N ? width - x : N;
      const auto a = DecodeLoad(d, acc + x, lanes);
      DecodeStore(d, copy ? a : hn::Add(DecodeLoad(d, out_row + x, lanes), a), out_row + x, lanes);
    }
    if (c.pinf != 0) {
      st.pinf += c.pinf;
    } else {
      st.m = c.m;
      st.l = c.l;
    }
    return;
  }
  if (st.pinf != 0 || c.l == 0.0f) return;  // +inf already decides the row, or c saw only -inf scores
  const float m_new = c.m > st.m ? c.m : st.m;
  const float a =
      st.m == m_new ? 1.0f : internal::ExpRr2P6Shifted(st.m - m_new, internal::TwoSumError(st.m, -m_new, st.m - m_new));
  const float b =
      c.m == m_new ? 1.0f : internal::ExpRr2P6Shifted(c.m - m_new, internal::TwoSumError(c.m, -m_new, c.m - m_new));
  const auto va = hn::Set(d, a), vb = hn::Set(d, b);
  for (size_t x = 0; x < width; x += N) {
    const size_t lanes = width - x < N ? width - x : N;
    const auto o = DecodeLoad(d, out_row + x, lanes);
    DecodeStore(d, hn::MulAdd(o, va, hn::Mul(DecodeLoad(d, acc + x, lanes), vb)), out_row + x, lanes);
  }
  st.l = hn::GetLane(hn::MulAdd(hn::Set(d, st.l), va, hn::Mul(hn::Set(d, c.l), vb)));
  st.m = m_new;
}

// The row from its combined state: NaN; the +inf keys' V rows averaged; zeros (no key, or every score -inf); or the
// online softmax's sum divided by l (>= 1: the key at the running max contributes e^0).
template <class D>
HWY_INLINE void DecodeFinishRow(D d, const DecodePartial& st, float* out_row, size_t width) {
  if (st.nan) return internal::FillRow(out_row, width, internal::kQuietNaN);
  if (st.pinf != 0) return DivideRow(d, out_row, width, static_cast<float>(st.pinf));
  if (st.l == 0.0f) return internal::FillRow(out_row, width, 0.0f);
  DivideRow(d, out_row, width, st.l);
}

// The keys of row i in chunk c: [c C, min((c + 1) C, n)), C = kAttentionKeyChunk (with one chunk: all n).
inline void ChunkKeys(size_t n, size_t chunks, size_t c, size_t* j_begin, size_t* j_end) {
  if (chunks == 1) {
    *j_begin = 0;
    *j_end = n;
    return;
  }
  *j_begin = c * kAttentionKeyChunk;
  *j_end = n - *j_begin > kAttentionKeyChunk ? *j_begin + kAttentionKeyChunk : n;
  if (*j_begin > n) *j_end = *j_begin;
}

// Query row i of head h (t.q, t.k, t.v, t.out point at that head): its chunks in order, chunk 0 into the output row,
// the others into acc (value_dim floats of workspace) and combined. s: the workspace for a chunk's scores
// (min(kv_len, kAttentionKeyChunk) floats with several chunks, kv_len with one).
template <class Kernels, class D>
HWY_INLINE void DecodeRow(D d, const HeadView& t, size_t i, float* s, float* acc, size_t chunks, bool to_nearest) {
  const internal::AttentionProblem& p = *t.p;
  const size_t n = internal::VisibleKeys(p, i);
  float* out_row = t.out + i * t.out_stride;
  if (n == 0) return internal::FillRow(out_row, p.value_dim, 0.0f);
  DecodePartial st = EmptyPartial();
  for (size_t c = 0; c < chunks; ++c) {  // one call site of DecodeChunk: its tile loop is inlined once
    size_t j_begin, j_end;
    ChunkKeys(n, chunks, c, &j_begin, &j_end);
    if (j_begin >= j_end) break;  // the later chunks are empty too: combining them changes nothing
    const DecodePartial part = DecodeChunk<Kernels>(d, t, i, j_begin, j_end, s, c == 0 ? out_row : acc, to_nearest);
    if (c == 0) {
      st = part;
    } else {
      DecodeCombine(d, st, out_row, part, acc, p.value_dim);
    }
  }
  DecodeFinishRow(d, st, out_row, p.value_dim);
}

inline HeadView DecodeView(const internal::AttentionProblem& p) {
  HeadView t{};
  t.p = &p;
  t.q_stride = p.num_heads * p.head_dim;
  t.k_stride = p.num_kv_heads * p.head_dim;
  t.v_stride = p.num_kv_heads * p.value_dim;
  t.out_stride = p.num_heads * p.value_dim;
  return t;
}

inline void DecodeHead(const internal::AttentionProblem& p, HeadView& t, const float* q, const float* k, const float* v,
                       float* out, size_t h) {
  const size_t g = h / (p.num_heads / p.num_kv_heads);
  t.q = q + h * p.head_dim;
  t.k = k + g * p.head_dim;
  t.v = v + g * p.value_dim;
  t.out = out + h * p.value_dim;
}

// Heads and rows of `range`; chunks: the shape's key chunks (attention_split.h), whose partial rows go to
// ws + kAttentionKeyChunk when there are several.
template <class Kernels>
void DecodeAttention(const internal::AttentionProblem& p, const float* q, const float* k, const float* v, float* out,
                     float* s, const internal::AttentionRange& range, size_t chunks, bool to_nearest) {
  const hn::ScalableTag<float> d;
  HeadView t = DecodeView(p);
  float* acc = s + kAttentionKeyChunk;  // used only with several chunks: the workspace then holds kv_len + value_dim
  for (size_t h = range.h_begin; h < range.h_end; ++h) {
    DecodeHead(p, t, q, k, v, out, h);
    for (size_t i = range.i_begin; i < range.i_end; ++i) DecodeRow<Kernels>(d, t, i, s, acc, chunks, to_nearest);
  }
}

inline void StorePartial(const DecodePartial& r, float* header) {
  header[0] = r.m;
  header[1] = r.l;
  header[2] = static_cast<float>(r.pinf);  // <= kAttentionKeyChunk: exact
  header[3] = r.nan ? 1.0f : 0.0f;
}

inline DecodePartial LoadPartial(const float* header) {
  return DecodePartial{header[0], header[1], static_cast<size_t>(header[2]), header[3] != 0.0f};
}

// Part (head h, chunk c) of a chunked shape: every query row's partial over chunk c, its header in shared, its row
// in the output (c = 0) or in shared.
template <class Kernels>
void DecodeChunkPart(const internal::AttentionProblem& p, const float* q, const float* k, const float* v, float* out,
                     const internal::SharedLayout& layout, float* shared, float* s, size_t h, size_t c,
                     bool to_nearest) {
  const hn::ScalableTag<float> d;
  HeadView t = DecodeView(p);
  DecodeHead(p, t, q, k, v, out, h);
  for (size_t i = 0; i < p.q_len; ++i) {
    const size_t row = h * p.q_len + i;
    size_t j_begin, j_end;
    ChunkKeys(internal::VisibleKeys(p, i), layout.chunks, c, &j_begin, &j_end);
    float* acc = c == 0 ? t.out + i * t.out_stride : internal::PartialRow(layout, shared, row, c);
    const DecodePartial r =
        j_begin < j_end ? DecodeChunk<Kernels>(d, t, i, j_begin, j_end, s, acc, to_nearest) : EmptyPartial();
    StorePartial(r, internal::PartialHeader(layout, shared, row, c));
  }
}

// AttentionFinish of a chunked shape: each row's partials combined in chunk order, then finished.
// (Also AttentionCachedFinish's: out [q_len][num_heads][value_dim], shared rows h * q_len + i.)
inline void DecodeFinishChunks(size_t num_heads, size_t q_len, size_t value_dim, const internal::SharedLayout& layout,
                               float* shared, float* out) {
  const hn::ScalableTag<float> d;
  for (size_t h = 0; h < num_heads; ++h) {
    for (size_t i = 0; i < q_len; ++i) {
      const size_t row = h * q_len + i;
      float* out_row = out + (i * num_heads + h) * value_dim;
      DecodePartial st = LoadPartial(internal::PartialHeader(layout, shared, row, 0));
      for (size_t c = 1; c < layout.chunks; ++c) {
        const DecodePartial part = LoadPartial(internal::PartialHeader(layout, shared, row, c));
        DecodeCombine(d, st, out_row, part, internal::PartialRow(layout, shared, row, c), value_dim);
      }
      DecodeFinishRow(d, st, out_row, value_dim);
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle
