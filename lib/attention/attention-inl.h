// Attention row kernels on Highway vectors (the SIMD policy for attention_driver.h).

#if defined(EDGEATTN_LIB_ATTENTION_ATTENTION_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_ATTENTION_ATTENTION_INL_H_
#undef EDGEATTN_LIB_ATTENTION_ATTENTION_INL_H_
#else
#define EDGEATTN_LIB_ATTENTION_ATTENTION_INL_H_
#endif

#include <float.h>
#include <stddef.h>
#include <stdint.h>

#include "hwy/highway.h"
#include "lib/attention/attention_driver.h"
#include "lib/common/simd_tail-inl.h"
#include "lib/dot/dot-inl.h"
#include "lib/exp/exp_scalar.h"
#include "lib/softmax/softmax-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

struct SimdAttentionKernels {
  static void Scores(const float* q, const float* k, size_t k_stride, size_t head_dim, size_t n, float scale,
                     const float* mask_row, float* scores) {
    const hn::ScalableTag<float> d;
    for (size_t j = 0; j < n; ++j) {
      if (internal::KeyMasked(mask_row, j)) {
        scores[j] = -internal::kInfinity;
        continue;
      }
      float s = Dot(d, q, k + j * k_stride, head_dim) * scale;
      if (mask_row != nullptr) s += mask_row[j];
      scores[j] = s;
    }
  }

  static void SoftmaxRow(const float* in, float* out, size_t n) { HWY_NAMESPACE::SoftmaxRow(in, out, n); }

  // Output columns stay in registers across all keys: four vectors per pass, then one, then the tail. Keys
  // in blocks of kKeyBlock, each block's partial sums added to the totals (see kKeyBlock).
  static void WeightedSum(const float* p, size_t n, const float* v, size_t v_stride, const float* mask_row, float* out,
                          size_t value_dim) {
    const hn::ScalableTag<float> d;
    const size_t N = hn::Lanes(d);
    size_t c = 0;
    for (; c + 4 * N <= value_dim; c += 4 * N) {
      auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
      for (size_t j0 = 0; j0 < n; j0 += internal::kKeyBlock) {
        const size_t j_end = n - j0 < internal::kKeyBlock ? n : j0 + internal::kKeyBlock;
        auto b0 = hn::Zero(d), b1 = hn::Zero(d), b2 = hn::Zero(d), b3 = hn::Zero(d);
        for (size_t j = j0; j < j_end; ++j) {
          if (internal::KeyMasked(mask_row, j)) continue;
          const auto pj = hn::Set(d, p[j]);
          const float* v_row = v + j * v_stride + c;
          b0 = hn::MulAdd(pj, hn::LoadU(d, v_row), b0);
          b1 = hn::MulAdd(pj, hn::LoadU(d, v_row + N), b1);
          b2 = hn::MulAdd(pj, hn::LoadU(d, v_row + 2 * N), b2);
          b3 = hn::MulAdd(pj, hn::LoadU(d, v_row + 3 * N), b3);
        }
        a0 = hn::Add(a0, b0);
        a1 = hn::Add(a1, b1);
        a2 = hn::Add(a2, b2);
        a3 = hn::Add(a3, b3);
      }
      hn::StoreU(a0, d, out + c);
      hn::StoreU(a1, d, out + c + N);
      hn::StoreU(a2, d, out + c + 2 * N);
      hn::StoreU(a3, d, out + c + 3 * N);
    }
    for (; c < value_dim; c += N) {
      const size_t width = value_dim - c < N ? value_dim - c : N;
      auto a = hn::Zero(d);
      for (size_t j0 = 0; j0 < n; j0 += internal::kKeyBlock) {
        const size_t j_end = n - j0 < internal::kKeyBlock ? n : j0 + internal::kKeyBlock;
        auto b = hn::Zero(d);
        for (size_t j = j0; j < j_end; ++j) {
          if (internal::KeyMasked(mask_row, j)) continue;
          const float* v_row = v + j * v_stride + c;
          b = hn::MulAdd(hn::Set(d, p[j]), width == N ? hn::LoadU(d, v_row) : LoadTail(d, v_row, width), b);
        }
        a = hn::Add(a, b);
      }
      if (width == N) {
        hn::StoreU(a, d, out + c);
      } else {
        StoreTail(d, a, out + c, width);
      }
    }
  }
};

// ---------------------------------------------------------------------------------------------------------
// Tiled path (no additive mask, q_len >= kAttentionTiledMinQueries): a block of up to 2 vectors of queries
// against tiles of up to 64 keys.
//
// Scores are computed transposed: lane r of a vector is query i0 + r, so Q^T of the block is packed once (the
// queries pre-multiplied by scale) and each key's elements are broadcast. Four keys by two query vectors keep
// eight accumulators in registers with no horizontal reduction; the causal mask, the row maxima and the online
// softmax's running max m and sum l are all lane-wise. The tile's weights p = e^(s - m) go to the workspace
// (Q^T and p: O(block x (head_dim + tile)) floats, independent of L), and P V accumulates into the output rows,
// four rows by four vectors of columns per pass: each row's earlier sum is rescaled by e^(m_old - m_new) in
// the same instruction that adds the tile. After the last tile the rows are divided by l. Key tiles past the
// block's last visible key (causal) are never touched; keys a row does not see are never multiplied into it.
// A row whose scores hold a NaN or +inf is recomputed by TiledRowFallback, which follows the softmax rules.
using TiledTag = hn::CappedTag<float, 16>;  // at most 16 lanes: the workspace formula assumes blocks <= 32

struct TiledProblem {
  const internal::AttentionProblem* p;
  const float* q;  // query head h of row 0
  const float* k;  // kv head g of key 0
  const float* v;
  float* out;  // query head h of row 0
  size_t q_stride, k_stride, v_stride, out_stride;
  size_t key_tile;
  float* qt;     // [head_dim][QB]
  float* pt;     // [key_tile][QB]
  float* alpha;  // [QB]
  float* lsum;   // [QB]
};

// Row i of a block whose scores were not all finite (or -inf): recomputed key by key without workspace,
// with the rules of the row path (softmax.h): a NaN score makes the row NaN, +inf scores share the row.
inline void TiledRowFallback(const TiledProblem& t, size_t i) {
  const internal::AttentionProblem& p = *t.p;
  const hn::ScalableTag<float> d;
  const size_t n = internal::VisibleKeys(p, i);
  const float* q_row = t.q + i * t.q_stride;
  float* out_row = t.out + i * t.out_stride;
  float m = -internal::kInfinity;
  size_t num_pos_inf = 0;
  bool has_nan = false;
  for (size_t j = 0; j < n; ++j) {
    const float s = Dot(d, q_row, t.k + j * t.k_stride, p.head_dim) * p.scale;
    has_nan |= s != s;
    num_pos_inf += s == internal::kInfinity ? 1 : 0;
    m = s > m ? s : m;
  }
  if (has_nan) return internal::FillRow(out_row, p.value_dim, internal::kQuietNaN);
  const bool all_minus_inf = num_pos_inf == 0 && !(m > -internal::kInfinity);  // every weight is 0
  float total = 0.0f;
  if (num_pos_inf == 0 && !all_minus_inf) {
    for (size_t j = 0; j < n; ++j) {
      const float x = Dot(d, q_row, t.k + j * t.k_stride, p.head_dim) * p.scale;
      total += internal::ExpRr2P6Shifted(x - m, internal::TwoSumError(x, -m, x - m));
    }
  }
  internal::FillRow(out_row, p.value_dim, 0.0f);
  for (size_t j = 0; j < n; ++j) {
    const float x = Dot(d, q_row, t.k + j * t.k_stride, p.head_dim) * p.scale;
    const float w = all_minus_inf      ? 0.0f
                    : num_pos_inf != 0 ? (x == internal::kInfinity ? 1.0f / static_cast<float>(num_pos_inf) : 0.0f)
                                       : internal::ExpRr2P6Shifted(x - m, internal::TwoSumError(x, -m, x - m)) / total;
    const float* v_row = t.v + j * t.v_stride;
    for (size_t c = 0; c < p.value_dim; ++c) out_row[c] += w * v_row[c];
  }
}

// x / l for the online softmax's sum l >= 1 (see DivideRow): vl = l, vinv = 1/l in every lane.
template <class D, class V = hn::VFromD<D>>
HWY_INLINE V DivideVec(D d, V x, V vl, V vinv) {
  (void)d;
#if HWY_NATIVE_FMA
  const V q = hn::Mul(x, vinv);
  return hn::MulAdd(hn::NegMulAdd(q, vl, x), vinv, q);
#else
  (void)vinv;
  return hn::Div(x, vl);
#endif
}

// out_row[c] = out_row[c] * alpha + sum_{j in [j_begin, j_end)} w_j v_j[c] for c in [0, width), where
// w_j = w[(j - j0) * qb]. With rescale false, out_row[c] += the sum instead; with overwrite, out_row[c] = the
// sum (out_row is not read: a block's first tile).
template <class D>
HWY_INLINE void TiledPvRow(D d, const float* w, size_t qb, size_t j0, size_t j_begin, size_t j_end, const float* v,
                           size_t v_stride, float* out_row, size_t width, float alpha, bool rescale,
                           bool overwrite = false) {
  const size_t N = hn::Lanes(d);
  const auto va = hn::Set(d, alpha);
  for (size_t c = 0; c < width; c += N) {
    const size_t lanes = width - c < N ? width - c : N;
    auto acc = hn::Zero(d);
    for (size_t j = j_begin; j < j_end; ++j) {
      const float* v_row = v + j * v_stride + c;
      acc = hn::MulAdd(hn::Set(d, w[(j - j0) * qb]), lanes == N ? hn::LoadU(d, v_row) : LoadTail(d, v_row, lanes), acc);
    }
    const auto old = overwrite ? acc : lanes == N ? hn::LoadU(d, out_row + c) : LoadTail(d, out_row + c, lanes);
    const auto sum = overwrite ? acc : rescale ? hn::MulAdd(old, va, acc) : hn::Add(old, acc);
    if (lanes == N) {
      hn::StoreU(sum, d, out_row + c);
    } else {
      StoreTail(d, sum, out_row + c, lanes);
    }
  }
}

// Four rows (r0..r0+3 of the block) by four vectors of columns starting at c, keys [j0, j_end) of the tile.
template <class D>
// first: the block's first tile (the rows are written, not read); divide: the last tile, and these four rows
// see no other keys of it: the rows are divided by their l (t.lsum) as they are stored.
HWY_INLINE void TiledPv4x4(D d, const TiledProblem& t, size_t qb, size_t r0, size_t row0, size_t c, size_t j0,
                           size_t j_end, bool first, bool divide) {
  const size_t N = hn::Lanes(d);
  auto a00 = hn::Zero(d), a01 = hn::Zero(d), a02 = hn::Zero(d), a03 = hn::Zero(d);
  auto a10 = hn::Zero(d), a11 = hn::Zero(d), a12 = hn::Zero(d), a13 = hn::Zero(d);
  auto a20 = hn::Zero(d), a21 = hn::Zero(d), a22 = hn::Zero(d), a23 = hn::Zero(d);
  auto a30 = hn::Zero(d), a31 = hn::Zero(d), a32 = hn::Zero(d), a33 = hn::Zero(d);
  const float* w = t.pt + r0;
  for (size_t j = j0; j < j_end; ++j) {
    const float* v_row = t.v + j * t.v_stride + c;
    const float* wj = w + (j - j0) * qb;
    const auto v0 = hn::LoadU(d, v_row), v1 = hn::LoadU(d, v_row + N), v2 = hn::LoadU(d, v_row + 2 * N),
               v3 = hn::LoadU(d, v_row + 3 * N);
    const auto w0 = hn::Set(d, wj[0]), w1 = hn::Set(d, wj[1]), w2 = hn::Set(d, wj[2]), w3 = hn::Set(d, wj[3]);
    a00 = hn::MulAdd(w0, v0, a00), a01 = hn::MulAdd(w0, v1, a01), a02 = hn::MulAdd(w0, v2, a02);
    a03 = hn::MulAdd(w0, v3, a03);
    a10 = hn::MulAdd(w1, v0, a10), a11 = hn::MulAdd(w1, v1, a11), a12 = hn::MulAdd(w1, v2, a12);
    a13 = hn::MulAdd(w1, v3, a13);
    a20 = hn::MulAdd(w2, v0, a20), a21 = hn::MulAdd(w2, v1, a21), a22 = hn::MulAdd(w2, v2, a22);
    a23 = hn::MulAdd(w2, v3, a23);
    a30 = hn::MulAdd(w3, v0, a30), a31 = hn::MulAdd(w3, v1, a31), a32 = hn::MulAdd(w3, v2, a32);
    a33 = hn::MulAdd(w3, v3, a33);
  }
#define EDGEATTN_PV_STORE(R, A0, A1, A2, A3)                                                   \
  do {                                                                                         \
    float* o = t.out + (row0 + R) * t.out_stride + c;                                          \
    auto x0 = A0, x1 = A1, x2 = A2, x3 = A3;                                                   \
    if (!first) {                                                                              \
      const auto al = hn::Set(d, t.alpha[r0 + R]);                                             \
      x0 = hn::MulAdd(hn::LoadU(d, o), al, x0), x1 = hn::MulAdd(hn::LoadU(d, o + N), al, x1);  \
      x2 = hn::MulAdd(hn::LoadU(d, o + 2 * N), al, x2);                                        \
      x3 = hn::MulAdd(hn::LoadU(d, o + 3 * N), al, x3);                                        \
    }                                                                                          \
    const float l = t.lsum[r0 + R];                                                            \
    if (divide && l != 0.0f) {                                                                 \
      const auto vl = hn::Set(d, l), vinv = hn::Set(d, 1.0f / l);                              \
      x0 = DivideVec(d, x0, vl, vinv), x1 = DivideVec(d, x1, vl, vinv);                        \
      x2 = DivideVec(d, x2, vl, vinv), x3 = DivideVec(d, x3, vl, vinv);                        \
    }                                                                                          \
    hn::StoreU(x0, d, o), hn::StoreU(x1, d, o + N), hn::StoreU(x2, d, o + 2 * N);              \
    hn::StoreU(x3, d, o + 3 * N);                                                              \
  } while (0)
  EDGEATTN_PV_STORE(0, a00, a01, a02, a03);
  EDGEATTN_PV_STORE(1, a10, a11, a12, a13);
  EDGEATTN_PV_STORE(2, a20, a21, a22, a23);
  EDGEATTN_PV_STORE(3, a30, a31, a32, a33);
#undef EDGEATTN_PV_STORE
}

// Causal mask, NaN/+inf detection, tile max and store of one vector of scores (key j, query lanes of vis).
template <class D, class V, class VI, class M>
HWY_INLINE void TiledFinishScore(D d, V s, size_t j, VI vis, float* dst, V& tile_max, M& bad) {
  const hn::RebindToSigned<D> di;
  const auto seen = hn::RebindMask(d, hn::Lt(hn::Set(di, static_cast<int32_t>(j)), vis));
  s = hn::IfThenElse(seen, s, hn::Set(d, -internal::kInfinity));
  bad = hn::Or(bad, hn::Not(hn::Lt(s, hn::Set(d, internal::kInfinity))));
  tile_max = hn::Max(tile_max, s);
  hn::StoreU(s, d, dst);
}

// Online-softmax update of one query vector after a tile of n scores: p = e^(s - m_new) in place, returns
// alpha = e^(m_old - m_new); m and l updated. A lane that has seen no key yet keeps m = -inf and p = 0.
template <class D, class V>
HWY_INLINE V TiledSoftmaxUpdate(D d, float* pt, size_t qb, size_t n, V tile_max, V& m, V& l) {
  const auto neg_inf = hn::Set(d, -internal::kInfinity);
  const V m_new = hn::Max(m, tile_max);
  const V neg_ref = hn::Neg(hn::IfThenZeroElse(hn::Eq(m_new, neg_inf), m_new));
  const V alpha = ExpMinusMax(d, m, neg_ref);
  V sum0 = hn::Zero(d), sum1 = hn::Zero(d);
  size_t j = 0;
  for (; j + 2 <= n; j += 2) {
    const V p0 = ExpMinusMax(d, hn::LoadU(d, pt + j * qb), neg_ref);
    const V p1 = ExpMinusMax(d, hn::LoadU(d, pt + (j + 1) * qb), neg_ref);
    hn::StoreU(p0, d, pt + j * qb);
    hn::StoreU(p1, d, pt + (j + 1) * qb);
    sum0 = hn::Add(sum0, p0);
    sum1 = hn::Add(sum1, p1);
  }
  if (j < n) {
    const V p0 = ExpMinusMax(d, hn::LoadU(d, pt + j * qb), neg_ref);
    hn::StoreU(p0, d, pt + j * qb);
    sum0 = hn::Add(sum0, p0);
  }
  m = m_new;
  l = hn::MulAdd(l, alpha, hn::Add(sum0, sum1));
  return alpha;
}

// Packing Q^T: N x N squares transposed in registers. The gathers this replaced (one per column of Q^T) are
// microcode-assisted on some x86 cores and took a third of an L = 16 call (docs/performance.md, step 9).
// Off on SCALAR (one lane) and EMU128 (no permutes; small-stack targets), where scalar copies pack Q^T.
#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
constexpr bool kTiledTranspose = false;
template <class D>
void TransposeScaledSquares(D, const float*, size_t, size_t, size_t, float, float*, size_t) {}
#else
constexpr bool kTiledTranspose = true;
constexpr size_t kTransposeLanes = HWY_MAX_BYTES / sizeof(float) < 16 ? HWY_MAX_BYTES / sizeof(float) : 16;

// dst[c * dst_stride + r] = src[r * src_stride + c] * scale for rows r < rows and columns c < cols, both
// multiples of the lane count N (full vectors of d: ConcatEven/ConcatOdd are exact only on full vectors).
// One square is log2(N) rounds over its N rows: row i of a round's output takes the even lanes of input
// rows 2i and 2i+1, row i + N/2 their odd lanes. Each round rotates the bits of (row, lane) by one place, so
// after log2(N) rounds element (r, c) of the square sits in lane r of row c. Bitwise the products the scalar
// copy would store. Fixed-width targets keep a square in registers; SVE's (and RVV's) vectors cannot form arrays, so
// there each round goes through a buffer on the stack.
#if HWY_TARGET == HWY_SVE || HWY_TARGET == HWY_SVE2 || HWY_TARGET == HWY_SVE_256 || HWY_TARGET == HWY_SVE2_128 || \
    HWY_TARGET == HWY_RVV
template <class D>
HWY_INLINE void TransposeScaledSquare(D d, const float* in, size_t in_stride, float scale, float* out,
                                      size_t out_stride) {
  const size_t N = hn::Lanes(d);
  const size_t half = N / 2;
  HWY_ALIGN float buf[2][kTransposeLanes * kTransposeLanes];
  const auto vscale = hn::Set(d, scale);
  size_t round = 0;
  for (size_t width = N; width > 1; width /= 2, ++round) {
    const bool first = width == N, last = width == 2;
    float* dst = last ? out : buf[round & 1];
    const size_t dst_stride = last ? out_stride : N;
    for (size_t i = 0; i < half; ++i) {
      auto lo = hn::LoadU(d, in + 2 * i * in_stride), hi = hn::LoadU(d, in + (2 * i + 1) * in_stride);
      if (first) lo = hn::Mul(lo, vscale), hi = hn::Mul(hi, vscale);
      hn::StoreU(hn::ConcatEven(d, hi, lo), d, dst + i * dst_stride);
      hn::StoreU(hn::ConcatOdd(d, hi, lo), d, dst + (i + half) * dst_stride);
    }
    in = dst;
    in_stride = N;
  }
}
#else
template <class D>
HWY_INLINE void TransposeScaledSquare(D d, const float* in, size_t in_stride, float scale, float* out,
                                      size_t out_stride) {
  constexpr size_t kN = hn::MaxLanes(D());
  using V = hn::Vec<D>;
  const auto vscale = hn::Set(d, scale);
  V a[kN], b[kN];
  for (size_t i = 0; i < kN; ++i) a[i] = hn::Mul(hn::LoadU(d, in + i * in_stride), vscale);
  for (size_t width = kN; width > 1; width /= 2) {
    for (size_t i = 0; i < kN / 2; ++i) {
      b[i] = hn::ConcatEven(d, a[2 * i + 1], a[2 * i]);
      b[i + kN / 2] = hn::ConcatOdd(d, a[2 * i + 1], a[2 * i]);
    }
    for (size_t i = 0; i < kN; ++i) a[i] = b[i];
  }
  for (size_t i = 0; i < kN; ++i) hn::StoreU(a[i], d, out + i * out_stride);
}
#endif

template <class D>
HWY_NOINLINE void TransposeScaledSquares(D d, const float* src, size_t src_stride, size_t rows, size_t cols,
                                         float scale, float* dst, size_t dst_stride) {
  const size_t N = hn::Lanes(d);
  for (size_t r0 = 0; r0 < rows; r0 += N) {
    for (size_t c0 = 0; c0 < cols; c0 += N) {
      TransposeScaledSquare(d, src + r0 * src_stride + c0, src_stride, scale, dst + c0 * dst_stride + r0, dst_stride);
    }
  }
}
#endif

// out_row[c] /= l for c < width, 1 <= l < 2^24 (the online softmax's sum: the key at the running max adds
// e^0). With FMA: one reciprocal per row and, per vector, q = x (1/l) corrected once, q += (x - q l) (1/l),
// the residual exact (Markstein's correction step: the result is x / l correctly rounded; 0 differences from
// a division in 2e8 random pairs with 1 <= l < 2^24). A vector division costs 10-16 cycles per vector on
// AVX-512 cores: 14% of an L = 16 call (docs/performance.md, step 9). Without FMA the residual is not exact:
// those targets divide.
template <class D>
HWY_INLINE void DivideRow(D d, float* out_row, size_t width, float l) {
  const size_t N = hn::Lanes(d);
  const auto vl = hn::Set(d, l), vinv = hn::Set(d, 1.0f / l);
  for (size_t c = 0; c < width; c += N) {
    const size_t lanes = width - c < N ? width - c : N;
    const auto x = lanes == N ? hn::LoadU(d, out_row + c) : LoadTail(d, out_row + c, lanes);
    const auto quotient = DivideVec(d, x, vl, vinv);
    if (lanes == N) {
      hn::StoreU(quotient, d, out_row + c);
    } else {
      StoreTail(d, quotient, out_row + c, lanes);
    }
  }
}

// One block of nb queries (rows i0.. of the head) over all its visible keys; kTwo: two query vectors.
template <bool kTwo>
void TiledBlock(const TiledProblem& t, size_t i0, size_t nb) {
  const internal::AttentionProblem& p = *t.p;
  const TiledTag d;
  const hn::RebindToSigned<TiledTag> di;
  const size_t N = hn::Lanes(d);
  const size_t qb = kTwo ? 2 * N : N;
  const size_t head_dim = p.head_dim;

  // Q^T of the block, scaled; padding lanes are 0. Visible key counts per lane (0 for padding lanes).
  const bool squares = kTiledTranspose && nb == qb && hn::Lanes(d) == hn::Lanes(hn::ScalableTag<float>());
  const size_t c_squares = squares ? head_dim - head_dim % N : 0;  // columns packed by TransposeScaledSquares
  if (squares) TransposeScaledSquares(d, t.q + i0 * t.q_stride, t.q_stride, nb, c_squares, p.scale, t.qt, qb);
  for (size_t r = 0; r < qb; ++r) {
    if (r < nb) {
      const float* q_row = t.q + (i0 + r) * t.q_stride;
      for (size_t c = c_squares; c < head_dim; ++c) t.qt[c * qb + r] = q_row[c] * p.scale;
    } else {
      for (size_t c = 0; c < head_dim; ++c) t.qt[c * qb + r] = 0.0f;
    }
    t.lsum[r] = r < nb ? static_cast<float>(internal::VisibleKeys(p, i0 + r)) : 0.0f;  // exact: kv_len < 2^24
  }
  const auto vis0 = hn::ConvertTo(di, hn::LoadU(d, t.lsum));
  const auto vis1 = kTwo ? hn::ConvertTo(di, hn::LoadU(d, t.lsum + N)) : vis0;
  const size_t n_block = internal::VisibleKeys(p, i0 + nb - 1);  // the last row sees the most keys
  if (n_block == 0) {  // no row of the block sees a key (causal, q_len > kv_len)
    for (size_t r = 0; r < nb; ++r) internal::FillRow(t.out + (i0 + r) * t.out_stride, p.value_dim, 0.0f);
    return;
  }
  // The first tile writes the output rows (nothing to zero first); on the last, groups of four rows that see
  // no other key of it are divided by l as they are stored (no second pass over them).
  uint32_t divided = 0;  // bit r: row r is divided (qb <= 32)
  const auto neg_inf = hn::Set(d, -internal::kInfinity);
  auto m0 = neg_inf, m1 = neg_inf, l0 = hn::Zero(d), l1 = hn::Zero(d);
  auto bad = hn::FirstN(d, 0);
  for (size_t j0 = 0; j0 < n_block; j0 += t.key_tile) {
    const size_t j1 = n_block - j0 < t.key_tile ? n_block : j0 + t.key_tile;
    auto tmax0 = neg_inf, tmax1 = neg_inf;
    size_t j = j0;
    // Eight keys per pass: eight FMA chains for one query vector, sixteen for two (eight leave the FMA units
    // idle whenever one chain waits on a load; steps 4 and 9).
    for (; j + 8 <= j1; j += 8) {
      const float* k0 = t.k + j * t.k_stride;
      const size_t ks = t.k_stride;
      auto s00 = hn::Zero(d), s10 = hn::Zero(d), s20 = hn::Zero(d), s30 = hn::Zero(d);
      auto s40 = hn::Zero(d), s50 = hn::Zero(d), s60 = hn::Zero(d), s70 = hn::Zero(d);
      auto s01 = hn::Zero(d), s11 = hn::Zero(d), s21 = hn::Zero(d), s31 = hn::Zero(d);
      auto s41 = hn::Zero(d), s51 = hn::Zero(d), s61 = hn::Zero(d), s71 = hn::Zero(d);
      for (size_t c = 0; c < head_dim; ++c) {
        const auto q0 = hn::LoadU(d, t.qt + c * qb);
        const auto b0 = hn::Set(d, k0[c]), b1 = hn::Set(d, k0[ks + c]);
        const auto b2 = hn::Set(d, k0[2 * ks + c]), b3 = hn::Set(d, k0[3 * ks + c]);
        const auto b4 = hn::Set(d, k0[4 * ks + c]), b5 = hn::Set(d, k0[5 * ks + c]);
        const auto b6 = hn::Set(d, k0[6 * ks + c]), b7 = hn::Set(d, k0[7 * ks + c]);
        s00 = hn::MulAdd(q0, b0, s00), s10 = hn::MulAdd(q0, b1, s10);
        s20 = hn::MulAdd(q0, b2, s20), s30 = hn::MulAdd(q0, b3, s30);
        s40 = hn::MulAdd(q0, b4, s40), s50 = hn::MulAdd(q0, b5, s50);
        s60 = hn::MulAdd(q0, b6, s60), s70 = hn::MulAdd(q0, b7, s70);
        if constexpr (kTwo) {
          const auto q1 = hn::LoadU(d, t.qt + c * qb + N);
          s01 = hn::MulAdd(q1, b0, s01), s11 = hn::MulAdd(q1, b1, s11);
          s21 = hn::MulAdd(q1, b2, s21), s31 = hn::MulAdd(q1, b3, s31);
          s41 = hn::MulAdd(q1, b4, s41), s51 = hn::MulAdd(q1, b5, s51);
          s61 = hn::MulAdd(q1, b6, s61), s71 = hn::MulAdd(q1, b7, s71);
        }
      }
      float* dst = t.pt + (j - j0) * qb;
      TiledFinishScore(d, s00, j, vis0, dst, tmax0, bad);
      TiledFinishScore(d, s10, j + 1, vis0, dst + qb, tmax0, bad);
      TiledFinishScore(d, s20, j + 2, vis0, dst + 2 * qb, tmax0, bad);
      TiledFinishScore(d, s30, j + 3, vis0, dst + 3 * qb, tmax0, bad);
      TiledFinishScore(d, s40, j + 4, vis0, dst + 4 * qb, tmax0, bad);
      TiledFinishScore(d, s50, j + 5, vis0, dst + 5 * qb, tmax0, bad);
      TiledFinishScore(d, s60, j + 6, vis0, dst + 6 * qb, tmax0, bad);
      TiledFinishScore(d, s70, j + 7, vis0, dst + 7 * qb, tmax0, bad);
      if constexpr (kTwo) {
        TiledFinishScore(d, s01, j, vis1, dst + N, tmax1, bad);
        TiledFinishScore(d, s11, j + 1, vis1, dst + qb + N, tmax1, bad);
        TiledFinishScore(d, s21, j + 2, vis1, dst + 2 * qb + N, tmax1, bad);
        TiledFinishScore(d, s31, j + 3, vis1, dst + 3 * qb + N, tmax1, bad);
        TiledFinishScore(d, s41, j + 4, vis1, dst + 4 * qb + N, tmax1, bad);
        TiledFinishScore(d, s51, j + 5, vis1, dst + 5 * qb + N, tmax1, bad);
        TiledFinishScore(d, s61, j + 6, vis1, dst + 6 * qb + N, tmax1, bad);
        TiledFinishScore(d, s71, j + 7, vis1, dst + 7 * qb + N, tmax1, bad);
      }
    }
    // Four keys (the rest of the tile; eight chains for two query vectors).
    for (; j + 4 <= j1; j += 4) {
      const float* k0 = t.k + j * t.k_stride;
      const float* k1 = k0 + t.k_stride;
      const float* k2 = k1 + t.k_stride;
      const float* k3 = k2 + t.k_stride;
      auto s00 = hn::Zero(d), s10 = hn::Zero(d), s20 = hn::Zero(d), s30 = hn::Zero(d);
      auto s01 = hn::Zero(d), s11 = hn::Zero(d), s21 = hn::Zero(d), s31 = hn::Zero(d);
      for (size_t c = 0; c < head_dim; ++c) {
        const auto b0 = hn::Set(d, k0[c]), b1 = hn::Set(d, k1[c]), b2 = hn::Set(d, k2[c]), b3 = hn::Set(d, k3[c]);
        const auto q0 = hn::LoadU(d, t.qt + c * qb);
        s00 = hn::MulAdd(q0, b0, s00), s10 = hn::MulAdd(q0, b1, s10);
        s20 = hn::MulAdd(q0, b2, s20), s30 = hn::MulAdd(q0, b3, s30);
        if constexpr (kTwo) {
          const auto q1 = hn::LoadU(d, t.qt + c * qb + N);
          s01 = hn::MulAdd(q1, b0, s01), s11 = hn::MulAdd(q1, b1, s11);
          s21 = hn::MulAdd(q1, b2, s21), s31 = hn::MulAdd(q1, b3, s31);
        }
      }
      float* dst = t.pt + (j - j0) * qb;
      TiledFinishScore(d, s00, j, vis0, dst, tmax0, bad);
      TiledFinishScore(d, s10, j + 1, vis0, dst + qb, tmax0, bad);
      TiledFinishScore(d, s20, j + 2, vis0, dst + 2 * qb, tmax0, bad);
      TiledFinishScore(d, s30, j + 3, vis0, dst + 3 * qb, tmax0, bad);
      if constexpr (kTwo) {
        TiledFinishScore(d, s01, j, vis1, dst + N, tmax1, bad);
        TiledFinishScore(d, s11, j + 1, vis1, dst + qb + N, tmax1, bad);
        TiledFinishScore(d, s21, j + 2, vis1, dst + 2 * qb + N, tmax1, bad);
        TiledFinishScore(d, s31, j + 3, vis1, dst + 3 * qb + N, tmax1, bad);
      }
    }
    for (; j < j1; ++j) {
      const float* k0 = t.k + j * t.k_stride;
      auto s0 = hn::Zero(d), s1 = hn::Zero(d);
      for (size_t c = 0; c < head_dim; ++c) {
        const auto b0 = hn::Set(d, k0[c]);
        s0 = hn::MulAdd(hn::LoadU(d, t.qt + c * qb), b0, s0);
        if (kTwo) s1 = hn::MulAdd(hn::LoadU(d, t.qt + c * qb + N), b0, s1);
      }
      float* dst = t.pt + (j - j0) * qb;
      TiledFinishScore(d, s0, j, vis0, dst, tmax0, bad);
      if (kTwo) TiledFinishScore(d, s1, j, vis1, dst + N, tmax1, bad);
    }

    hn::StoreU(TiledSoftmaxUpdate(d, t.pt, qb, j1 - j0, tmax0, m0, l0), d, t.alpha);
    if (kTwo) hn::StoreU(TiledSoftmaxUpdate(d, t.pt + N, qb, j1 - j0, tmax1, m1, l1), d, t.alpha + N);
    const bool first = j0 == 0, last = j1 == n_block;
    if (last) {
      hn::StoreU(l0, d, t.lsum);
      if (kTwo) hn::StoreU(l1, d, t.lsum + N);
    }

    // P V. A row multiplies only the keys it sees: [j0, min(j1, visible)).
    const size_t full = p.value_dim / (4 * N) * (4 * N);
    size_t r = 0;
    for (; r + 4 <= nb; r += 4) {
      size_t end[4];
      for (size_t x = 0; x < 4; ++x) {
        const size_t n_row = internal::VisibleKeys(p, i0 + r + x);
        end[x] = n_row < j0 ? j0 : (n_row < j1 ? n_row : j1);
      }
      const size_t common = end[0];  // rows see more keys further down the block
      // every row of the group sees the same keys (not causal, or past it) and no column is left over
      const bool divide = last && end[3] == common && full == p.value_dim;
      if (divide) divided |= uint32_t{15} << r;
      for (size_t c = 0; c < full; c += 4 * N) {
        TiledPv4x4(d, t, qb, r, i0 + r, c, j0, common, first, divide);
        for (size_t x = 1; x < 4; ++x) {
          if (end[x] == common) continue;
          TiledPvRow(d, t.pt + r + x, qb, j0, common, end[x], t.v + c, t.v_stride,
                     t.out + (i0 + r + x) * t.out_stride + c, 4 * N, 1.0f, false);
        }
      }
      if (full < p.value_dim) {
        for (size_t x = 0; x < 4; ++x) {
          TiledPvRow(d, t.pt + r + x, qb, j0, j0, end[x], t.v + full, t.v_stride,
                     t.out + (i0 + r + x) * t.out_stride + full, p.value_dim - full, t.alpha[r + x], true, first);
        }
      }
    }
    for (; r < nb; ++r) {
      const size_t n_row = internal::VisibleKeys(p, i0 + r);
      const size_t end = n_row < j0 ? j0 : (n_row < j1 ? n_row : j1);
      TiledPvRow(d, t.pt + r, qb, j0, j0, end, t.v, t.v_stride, t.out + (i0 + r) * t.out_stride, p.value_dim,
                 t.alpha[r], true, first);
    }
  }

  // Divide by l (rows that saw no key stay 0); recompute rows that met a NaN or +inf score.
  hn::StoreU(l0, d, t.lsum);
  if (kTwo) hn::StoreU(l1, d, t.lsum + N);
  hn::StoreU(hn::IfThenElseZero(bad, hn::Set(d, 1.0f)), d, t.alpha);
  // (bad is one mask over both vectors' lanes ORed together: a flagged lane is checked in both halves)
  if (kTwo) hn::StoreU(hn::IfThenElseZero(bad, hn::Set(d, 1.0f)), d, t.alpha + N);
  const auto any_bad = !hn::AllFalse(d, bad);
  for (size_t r = 0; r < nb; ++r) {
    float* out_row = t.out + (i0 + r) * t.out_stride;
    if (any_bad && t.alpha[r] != 0.0f) {
      TiledRowFallback(t, i0 + r);
      continue;
    }
    if (t.lsum[r] != 0.0f && ((divided >> r) & 1) == 0) DivideRow(d, out_row, p.value_dim, t.lsum[r]);
  }
}

inline void TiledAttention(const internal::AttentionProblem& p, const float* q, const float* k, const float* v,
                           float* out, float* ws) {
  const TiledTag d;
  const size_t N = hn::Lanes(d);
  const bool two = p.q_len > N;
  const size_t qb = two ? 2 * N : N;
  TiledProblem t;
  t.p = &p;
  t.q_stride = p.num_heads * p.head_dim;
  t.k_stride = p.num_kv_heads * p.head_dim;
  t.v_stride = p.num_kv_heads * p.value_dim;
  t.out_stride = p.num_heads * p.value_dim;
  t.key_tile = internal::TiledKeys(p.kv_len);
  t.qt = ws;
  t.pt = t.qt + p.head_dim * qb;
  t.alpha = t.pt + t.key_tile * qb;
  t.lsum = t.alpha + qb;
  const size_t group = p.num_heads / p.num_kv_heads;
  for (size_t h = 0; h < p.num_heads; ++h) {
    const size_t g = h / group;
    t.q = q + h * p.head_dim;
    t.k = k + g * p.head_dim;
    t.v = v + g * p.value_dim;
    t.out = out + h * p.value_dim;
    for (size_t i0 = 0; i0 < p.q_len; i0 += qb) {
      const size_t nb = p.q_len - i0 < qb ? p.q_len - i0 : qb;
      if (two) {
        TiledBlock<true>(t, i0, nb);
      } else {
        TiledBlock<false>(t, i0, nb);
      }
    }
  }
}

// ---- Decode path: fewer than kAttentionTiledMinQueries queries, no additive mask (decoding against a KV
// cache). The row path spends most of such a call on per-key overhead: a general-length dot product with
// its loop tails and horizontal sum per key, the row's scores stored, reloaded for the softmax and again
// for P V, and K and V streamed in two separate passes. Here each query row streams its keys once in tiles
// of kDecodeTile: the scores of a tile (eight keys at a time, one accumulator vector per key), an online
// softmax across tiles (the tiled path's: the row's earlier output and sum rescaled by e^(m_old - m_new) at
// most once per tile), and P V of the tile into the output row (four vectors of columns at a time, two
// accumulators each), so a tile's K rows and V rows are read back to back. The numerics are the tiled path's
// with a one-query block, so attention.h's bound holds unchanged. A tile with a non-finite score (NaN, an
// infinity) hands the row to TiledRowFallback, which follows the softmax rules.
// Keys per online-softmax step. The workspace holds kv_len floats (the row path's need), so a tile of up to 256
// keys costs no extra memory; 256 rather than 64 halves cold calls' time per key lost between the tile's K and V
// streams and amortises each tile's serial softmax step (docs/performance.md, step 13).
constexpr size_t kDecodeTile = 256;

#if HWY_TARGET != HWY_SCALAR
// Pairwise sums of neighbouring lanes: the lower half of the result holds a's, the upper half b's.
template <class D, class V = hn::VFromD<D>>
HWY_INLINE V PairSums(D d, V a, V b) {
  return hn::Add(hn::ConcatEven(d, b, a), hn::ConcatOdd(d, b, a));
}
#endif

// Scores of keys [0, n) (n <= kDecodeTile) against q_row, times scale, into s.
// Eight keys at a time, one accumulator vector per key; the eight are reduced together by a transposing tree
// (PairSums: log2(N) levels, each halving the partial sums per key) into one vector of eight scores, instead
// of eight horizontal reductions (docs/performance.md, step 13).
template <class D>
HWY_INLINE void DecodeScores(D d, const float* q_row, const float* k, size_t k_stride, size_t head_dim, size_t n,
                             float scale, float* s) {
  size_t j = 0;
#if HWY_TARGET != HWY_SCALAR
  const size_t N = hn::Lanes(d);
  const size_t full = head_dim - head_dim % N;
  const size_t rest = head_dim - full;
  const auto vscale = hn::Set(d, scale);
  for (; N >= 4 && j + 8 <= n; j += 8) {
    const float* k0 = k + j * k_stride;
    const size_t ks = k_stride;
    auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
    auto a4 = hn::Zero(d), a5 = hn::Zero(d), a6 = hn::Zero(d), a7 = hn::Zero(d);
    for (size_t c = 0; c < full; c += N) {
      const auto qc = hn::LoadU(d, q_row + c);
      const float* kc = k0 + c;
      a0 = hn::MulAdd(qc, hn::LoadU(d, kc), a0);
      a1 = hn::MulAdd(qc, hn::LoadU(d, kc + ks), a1);
      a2 = hn::MulAdd(qc, hn::LoadU(d, kc + 2 * ks), a2);
      a3 = hn::MulAdd(qc, hn::LoadU(d, kc + 3 * ks), a3);
      a4 = hn::MulAdd(qc, hn::LoadU(d, kc + 4 * ks), a4);
      a5 = hn::MulAdd(qc, hn::LoadU(d, kc + 5 * ks), a5);
      a6 = hn::MulAdd(qc, hn::LoadU(d, kc + 6 * ks), a6);
      a7 = hn::MulAdd(qc, hn::LoadU(d, kc + 7 * ks), a7);
    }
    if (rest != 0) {
      const auto qc = LoadTail(d, q_row + full, rest);  // lanes past head_dim are 0 in q and in k
      const float* kc = k0 + full;
      a0 = hn::MulAdd(qc, LoadTail(d, kc, rest), a0);
      a1 = hn::MulAdd(qc, LoadTail(d, kc + ks, rest), a1);
      a2 = hn::MulAdd(qc, LoadTail(d, kc + 2 * ks, rest), a2);
      a3 = hn::MulAdd(qc, LoadTail(d, kc + 3 * ks, rest), a3);
      a4 = hn::MulAdd(qc, LoadTail(d, kc + 4 * ks, rest), a4);
      a5 = hn::MulAdd(qc, LoadTail(d, kc + 5 * ks, rest), a5);
      a6 = hn::MulAdd(qc, LoadTail(d, kc + 6 * ks, rest), a6);
      a7 = hn::MulAdd(qc, LoadTail(d, kc + 7 * ks, rest), a7);
    }
    // Level 1: keys (0,1), (2,3), (4,5), (6,7), N/2 partial sums each; level 2: four keys per vector.
    const auto b0 = PairSums(d, PairSums(d, a0, a1), PairSums(d, a2, a3));
    const auto b1 = PairSums(d, PairSums(d, a4, a5), PairSums(d, a6, a7));
    if (N == 4) {  // one sum per key already: keys 0..3 in b0, 4..7 in b1
      hn::StoreU(hn::Mul(b0, vscale), d, s + j);
      hn::StoreU(hn::Mul(b1, vscale), d, s + j + 4);
      continue;
    }
    auto w = PairSums(d, b0, b1);  // eight keys, N/8 partial sums each
    for (size_t parts = N / 8; parts > 1; parts /= 2) w = PairSums(d, w, w);
    w = hn::Mul(w, vscale);
    if (N == 8) {
      hn::StoreU(w, d, s + j);
    } else {
      StoreTail(d, w, s + j, 8);
    }
  }
#endif
  for (; j < n; ++j) s[j] = Dot(d, q_row, k + j * k_stride, head_dim) * scale;
}

// Largest of the n >= 1 scores in s, or NaN if one of them is not finite (NaN or an infinity).
template <class D>
HWY_INLINE float DecodeTileMax(D d, const float* s, size_t n) {
  const size_t N = hn::Lanes(d);
  const auto lowest = hn::Set(d, -FLT_MAX);
  const auto inf = hn::Set(d, internal::kInfinity);
  auto m = lowest;
  auto bad = hn::Not(hn::Lt(m, inf));  // all false
  size_t j = 0;
  for (; j + N <= n; j += N) {
    const auto x = hn::LoadU(d, s + j);
    bad = hn::Or(bad, hn::Not(hn::Lt(hn::Abs(x), inf)));  // |x| < inf rejects NaN and both infinities
    m = hn::Max(m, x);
  }
  if (j < n) {
    const auto x = hn::IfThenElse(hn::FirstN(d, n - j), LoadTail(d, s + j, n - j), lowest);
    bad = hn::Or(bad, hn::Not(hn::Lt(hn::Abs(x), inf)));
    m = hn::Max(m, x);
  }
  if (!hn::AllFalse(d, bad)) return internal::kQuietNaN;
  // Every lane is finite here (EMU128's MaxOfLanes, which starts from -FLT_MAX, is then exact too).
  return hn::GetLane(hn::MaxOfLanes(d, m));
}

// out_row[c] = (rescale ? out_row[c] * alpha : 0) + sum_{j < n} p_j v_j[c] for c < width.
template <class D>
HWY_INLINE void DecodePv(D d, const float* p, size_t n, const float* v, size_t v_stride, float* out_row, size_t width,
                         float alpha, bool rescale) {
  const size_t N = hn::Lanes(d);
  const auto va = hn::Set(d, alpha);
  size_t c = 0;
  for (; c + 8 * N <= width; c += 8 * N) {
    // Wide rows (d = 128 on AVX-512): eight column vectors, one accumulator each, so that a V row is read in
    // one pass instead of two (docs/performance.md, step 17).
    auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
    auto a4 = hn::Zero(d), a5 = hn::Zero(d), a6 = hn::Zero(d), a7 = hn::Zero(d);
    for (size_t j = 0; j < n; ++j) {
      const float* r0 = v + j * v_stride + c;
      const auto p0 = hn::Set(d, p[j]);
      a0 = hn::MulAdd(p0, hn::LoadU(d, r0), a0);
      a1 = hn::MulAdd(p0, hn::LoadU(d, r0 + N), a1);
      a2 = hn::MulAdd(p0, hn::LoadU(d, r0 + 2 * N), a2);
      a3 = hn::MulAdd(p0, hn::LoadU(d, r0 + 3 * N), a3);
      a4 = hn::MulAdd(p0, hn::LoadU(d, r0 + 4 * N), a4);
      a5 = hn::MulAdd(p0, hn::LoadU(d, r0 + 5 * N), a5);
      a6 = hn::MulAdd(p0, hn::LoadU(d, r0 + 6 * N), a6);
      a7 = hn::MulAdd(p0, hn::LoadU(d, r0 + 7 * N), a7);
    }
    float* o = out_row + c;
    if (rescale) {
      a0 = hn::MulAdd(hn::LoadU(d, o), va, a0), a1 = hn::MulAdd(hn::LoadU(d, o + N), va, a1);
      a2 = hn::MulAdd(hn::LoadU(d, o + 2 * N), va, a2), a3 = hn::MulAdd(hn::LoadU(d, o + 3 * N), va, a3);
      a4 = hn::MulAdd(hn::LoadU(d, o + 4 * N), va, a4), a5 = hn::MulAdd(hn::LoadU(d, o + 5 * N), va, a5);
      a6 = hn::MulAdd(hn::LoadU(d, o + 6 * N), va, a6), a7 = hn::MulAdd(hn::LoadU(d, o + 7 * N), va, a7);
    }
    hn::StoreU(a0, d, o), hn::StoreU(a1, d, o + N), hn::StoreU(a2, d, o + 2 * N), hn::StoreU(a3, d, o + 3 * N);
    hn::StoreU(a4, d, o + 4 * N), hn::StoreU(a5, d, o + 5 * N), hn::StoreU(a6, d, o + 6 * N);
    hn::StoreU(a7, d, o + 7 * N);
  }
  for (; c + 4 * N <= width; c += 4 * N) {
    // Two accumulators per column vector (even and odd keys): eight independent FMA chains.
    auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
    auto b0 = hn::Zero(d), b1 = hn::Zero(d), b2 = hn::Zero(d), b3 = hn::Zero(d);
    size_t j = 0;
    for (; j + 2 <= n; j += 2) {
      const float* r0 = v + j * v_stride + c;
      const float* r1 = r0 + v_stride;
      const auto p0 = hn::Set(d, p[j]), p1 = hn::Set(d, p[j + 1]);
      a0 = hn::MulAdd(p0, hn::LoadU(d, r0), a0);
      a1 = hn::MulAdd(p0, hn::LoadU(d, r0 + N), a1);
      a2 = hn::MulAdd(p0, hn::LoadU(d, r0 + 2 * N), a2);
      a3 = hn::MulAdd(p0, hn::LoadU(d, r0 + 3 * N), a3);
      b0 = hn::MulAdd(p1, hn::LoadU(d, r1), b0);
      b1 = hn::MulAdd(p1, hn::LoadU(d, r1 + N), b1);
      b2 = hn::MulAdd(p1, hn::LoadU(d, r1 + 2 * N), b2);
      b3 = hn::MulAdd(p1, hn::LoadU(d, r1 + 3 * N), b3);
    }
    if (j < n) {
      const float* r0 = v + j * v_stride + c;
      const auto p0 = hn::Set(d, p[j]);
      a0 = hn::MulAdd(p0, hn::LoadU(d, r0), a0);
      a1 = hn::MulAdd(p0, hn::LoadU(d, r0 + N), a1);
      a2 = hn::MulAdd(p0, hn::LoadU(d, r0 + 2 * N), a2);
      a3 = hn::MulAdd(p0, hn::LoadU(d, r0 + 3 * N), a3);
    }
    a0 = hn::Add(a0, b0), a1 = hn::Add(a1, b1), a2 = hn::Add(a2, b2), a3 = hn::Add(a3, b3);
    float* o = out_row + c;
    if (rescale) {
      a0 = hn::MulAdd(hn::LoadU(d, o), va, a0), a1 = hn::MulAdd(hn::LoadU(d, o + N), va, a1);
      a2 = hn::MulAdd(hn::LoadU(d, o + 2 * N), va, a2), a3 = hn::MulAdd(hn::LoadU(d, o + 3 * N), va, a3);
    }
    hn::StoreU(a0, d, o), hn::StoreU(a1, d, o + N), hn::StoreU(a2, d, o + 2 * N), hn::StoreU(a3, d, o + 3 * N);
  }
  if (c < width) {
    if (!rescale) internal::FillRow(out_row + c, width - c, 0.0f);
    TiledPvRow(d, p, 1, 0, 0, n, v + c, v_stride, out_row + c, width - c, alpha, rescale);
  }
}

// Query row i of head h (t.q, t.k, t.v, t.out point at that head); s: min(kv_len, kDecodeTile) floats of workspace.
template <class D>
HWY_INLINE void DecodeRow(D d, const TiledProblem& t, size_t i, float* s) {
  const internal::AttentionProblem& p = *t.p;
  const size_t N = hn::Lanes(d);
  const size_t n = internal::VisibleKeys(p, i);
  const float* q_row = t.q + i * t.q_stride;
  float* out_row = t.out + i * t.out_stride;
  if (n == 0) return internal::FillRow(out_row, p.value_dim, 0.0f);
  float m = -internal::kInfinity, l = 0.0f;
  for (size_t j0 = 0; j0 < n; j0 += kDecodeTile) {
    const size_t nb = n - j0 < kDecodeTile ? n - j0 : kDecodeTile;
    const float* k_tile = t.k + j0 * t.k_stride;
    DecodeScores(d, q_row, k_tile, t.k_stride, p.head_dim, nb, p.scale, s);
    const float tile_max = DecodeTileMax(d, s, nb);
    if (tile_max != tile_max) return TiledRowFallback(t, i);
    const float m_new = tile_max > m ? tile_max : m;
    // Scores are finite here, so m_new is too; alpha = e^(m - m_new) with the rounding of the difference folded
    // in, as for every weight (0 for the first tile: m = -inf).
    const float alpha =
        j0 == 0 ? 0.0f : internal::ExpRr2P6Shifted(m - m_new, internal::TwoSumError(m, -m_new, m - m_new));
    const auto neg_m = hn::Set(d, -m_new);
    auto sum = hn::Zero(d);
    size_t j = 0;
    for (; j + N <= nb; j += N) {
      const auto e = ExpMinusMax(d, hn::LoadU(d, s + j), neg_m);
      hn::StoreU(e, d, s + j);
      sum = hn::Add(sum, e);
    }
    if (j < nb) {
      const auto x =
          hn::IfThenElse(hn::FirstN(d, nb - j), LoadTail(d, s + j, nb - j), hn::Set(d, -internal::kInfinity));
      const auto e = ExpMinusMax(d, x, neg_m);  // padding lanes: e^-inf = 0
      StoreTail(d, e, s + j, nb - j);
      sum = hn::Add(sum, e);
    }
    const float tile_sum = hn::GetLane(hn::SumOfLanes(d, sum));
    l = j0 == 0 ? tile_sum : l * alpha + tile_sum;
    m = m_new;
    DecodePv(d, s, nb, t.v + j0 * t.v_stride, t.v_stride, out_row, p.value_dim, alpha, j0 != 0);
  }
  DivideRow(d, out_row, p.value_dim, l);  // l >= 1: the key at the running max contributes e^0
}

inline void DecodeAttention(const internal::AttentionProblem& p, const float* q, const float* k, const float* v,
                            float* out, float* s) {
  const hn::ScalableTag<float> d;
  TiledProblem t{};
  t.p = &p;
  t.q_stride = p.num_heads * p.head_dim;
  t.k_stride = p.num_kv_heads * p.head_dim;
  t.v_stride = p.num_kv_heads * p.value_dim;
  t.out_stride = p.num_heads * p.value_dim;
  const size_t group = p.num_heads / p.num_kv_heads;
  for (size_t h = 0; h < p.num_heads; ++h) {
    const size_t g = h / group;
    t.q = q + h * p.head_dim;
    t.k = k + g * p.head_dim;
    t.v = v + g * p.value_dim;
    t.out = out + h * p.value_dim;
    for (size_t i = 0; i < p.q_len; ++i) DecodeRow(d, t, i, s);
  }
}

// ---------------------------------------------------------------------------------------------------------
// ---- Small path: every key of a row fits in one vector (kv_len <= lanes).
//
// The row path spends a tiny row's time in latency, not arithmetic: the scores go to the workspace and come
// back three times (masked stores do not forward to the loads behind them), and every row reduces its dot
// products one key at a time. Here K^T of the head (head_dim vectors of kv_len lanes, on the stack) is
// copied once per KV head; a query's scores are head_dim FMAs into one vector (queries pre-scaled, as on the
// tiled path), and its softmax runs in that register with the row path's operations (exp with the rounding of
// s - m folded in, double or compensated sum, corrected division). An additive mask is added to the scores as on
// the row path, and P V skips the keys it masks (a NaN in such a key's v never enters the row; its k is
// copied, but its score is replaced by -inf). Rows go two at a time: each row is one chain of dependent
// operations (scores, horizontal max, exp, horizontal sum, division, P V: about 150 cycles), and two independent
// chains side by side overlap (L = 4, d = 8: 206 -> 177 ns; docs/performance.md, step 11). P V takes each
// weight from its lane by a permute instead of a store and reload. The numerics are the row path's, so
// attention.h's bound holds unchanged. A row whose scores hold a NaN or an infinity makes SmallAttention
// return false before the caller's row path recomputes the whole call (outputs never alias inputs).
// Stack floats for K^T (head_dim * lanes must fit). Off on the SCALAR and EMU128 targets (microcontrollers: one
// lane, or emulated vectors), whose stack budget (tests/stack_usage) the 1 KiB would break.
#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
constexpr size_t kSmallKtFloats = 1;
#else
constexpr size_t kSmallKtFloats = 256;
#endif

inline bool SmallAttentionApplies(const internal::AttentionProblem& p) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  return kSmallKtFloats > 1 && p.kv_len <= N && p.head_dim <= kSmallKtFloats / N;
}

// The stages of one row of the small path. Scores of query row q_row against K^T (head_dim vectors of N lanes), queries
// pre-scaled.
template <class D>
HWY_INLINE hn::Vec<D> SmallScores(D d, const float* q_row, const float* kt, size_t head_dim, float scale) {
  const size_t N = hn::Lanes(d);
  auto s = hn::Zero(d);
  for (size_t c = 0; c < head_dim; ++c) s = hn::MulAdd(hn::Set(d, q_row[c] * scale), hn::Load(d, kt + c * N), s);
  return s;
}

// The additive mask (a key whose bias is -inf is masked) and the keys past n: -inf. Returns false when no key
// of the row is left (the row is 0).
template <class D>
HWY_INLINE bool SmallMask(D d, const float* mask_row, size_t kv_len, size_t n, hn::Vec<D>& s) {
  const auto neg_inf = hn::Set(d, -internal::kInfinity);
  if (mask_row != nullptr) {
    const auto bias = LoadTail(d, mask_row, kv_len);
    const auto masked = hn::Eq(bias, neg_inf);
    if (hn::AllTrue(d, hn::Or(masked, hn::Not(hn::FirstN(d, n))))) return false;
    s = hn::IfThenElse(masked, neg_inf, hn::Add(s, bias));
  }
  s = hn::IfThenElse(hn::FirstN(d, n), s, neg_inf);
  return true;
}

// Softmax weights of a row of scores (the row path's operations); ok becomes false when the scores hold a NaN or
// an infinity (the caller's row path then recomputes the call).
template <class D>
HWY_INLINE hn::Vec<D> SmallWeights(D d, hn::Vec<D> s, bool& ok) {
  const float m = hn::GetLane(hn::MaxOfLanes(d, s));
  const auto e = ExpMinusMax(d, s, hn::Set(d, -m));
  const RowSumD<D> ds;
  auto acc0 = hn::Zero(ds), acc1 = hn::Zero(ds);
  RowSumAdd(d, e, acc0, acc1);
  const float total = RowSumTotal(d, acc0, acc1);
  ok = ok && internal::IsFinite(m) && total > 0.0f;  // total: NaN among the scores
  const auto vtotal = hn::Set(d, total);
  const auto vinv = hn::Set(d, 1.0f / total);
  const auto quotient = hn::Mul(e, vinv);
  return hn::MulAdd(hn::NegMulAdd(quotient, vtotal, e), vinv, quotient);
}

// out_row = sum over the row's unmasked keys j < n of w_j v_j; w_j is lane j of w (a lane permute: no store of
// the weights and reload of each).
template <class D>
HWY_INLINE void SmallPv(D d, hn::Vec<D> w, size_t n, const float* mask_row, const float* v_head, size_t v_stride,
                        size_t value_dim, float* out_row) {
  const size_t N = hn::Lanes(d);
  const hn::RebindToSigned<D> di;
  for (size_t c = 0; c < value_dim; c += N) {
    const size_t width = value_dim - c < N ? value_dim - c : N;
    auto a = hn::Zero(d);
    for (size_t j = 0; j < n; ++j) {
      if (internal::KeyMasked(mask_row, j)) continue;
      const float* v_row = v_head + j * v_stride + c;
      const auto wj = hn::TableLookupLanes(w, hn::IndicesFromVec(d, hn::Set(di, static_cast<int32_t>(j))));
      a = hn::MulAdd(wj, width == N ? hn::LoadU(d, v_row) : LoadTail(d, v_row, width), a);
    }
    if (width == N) {
      hn::StoreU(a, d, out_row + c);
    } else {
      StoreTail(d, a, out_row + c, width);
    }
  }
}

inline bool SmallAttention(const internal::AttentionProblem& p, const float* q, const float* k, const float* v,
                           float* out) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const size_t group = p.num_heads / p.num_kv_heads;
  const size_t q_stride = p.num_heads * p.head_dim;
  const size_t k_stride = p.num_kv_heads * p.head_dim;
  const size_t v_stride = p.num_kv_heads * p.value_dim;
  const size_t out_stride = p.num_heads * p.value_dim;
  HWY_ALIGN float kt[kSmallKtFloats];
  for (size_t g = 0; g < p.num_kv_heads; ++g) {
    // K^T by scalar copies: on this suite's Xeon a 16-lane gather cost more than the rest of a 4x4 call
    // (microcode-assisted gathers). Padding lanes are 0; their scores are replaced by -inf below.
    for (size_t c = 0; c < p.head_dim; ++c) hn::Store(hn::Zero(d), d, kt + c * N);
    for (size_t j = 0; j < p.kv_len; ++j) {
      const float* k_row = k + j * k_stride + g * p.head_dim;
      for (size_t c = 0; c < p.head_dim; ++c) kt[c * N + j] = k_row[c];
    }
    const float* v_head = v + g * p.value_dim;
    for (size_t h = g * group; h < (g + 1) * group; ++h) {
      const auto row = [&](size_t i, float*& out_row, const float*& mask_row, size_t& n, hn::Vec<decltype(d)>& s) {
        n = internal::VisibleKeys(p, i);
        out_row = out + i * out_stride + h * p.value_dim;
        mask_row = p.mask != nullptr ? p.mask + i * p.kv_len : nullptr;
        s = SmallScores(d, q + i * q_stride + h * p.head_dim, kt, p.head_dim, p.scale);
        if (n != 0 && SmallMask(d, mask_row, p.kv_len, n, s)) return true;
        internal::FillRow(out_row, p.value_dim, 0.0f);  // the row sees no key
        return false;
      };
      // Two rows at a time: their chains (scores, max, exp, sum, division, P V) are independent, and side by
      // side in one block the core overlaps them. An odd last row goes alone (its partner's chain runs on zeros
      // and is discarded).
      for (size_t i = 0; i < p.q_len; i += 2) {
        float *out0, *out1 = nullptr;
        const float *mask0, *mask1 = nullptr;
        size_t n0, n1 = 0;
        hn::Vec<decltype(d)> s0, s1 = hn::Zero(d);
        const bool live0 = row(i, out0, mask0, n0, s0);
        const bool live1 = i + 1 < p.q_len && row(i + 1, out1, mask1, n1, s1);
        bool ok0 = true, ok1 = true;
        const auto w0 = SmallWeights(d, s0, ok0);
        const auto w1 = SmallWeights(d, s1, ok1);
        if ((live0 && !ok0) || (live1 && !ok1)) return false;
        if (live0) SmallPv(d, w0, n0, mask0, v_head, v_stride, p.value_dim, out0);
        if (live1) SmallPv(d, w1, n1, mask1, v_head, v_stride, p.value_dim, out1);
      }
    }
  }
  return true;
}

// ---- Packed small path (x86 AVX2 and AVX-512): at most 4 keys, no additive mask. One vector holds the scores
// of N/4 query rows (lane 4r + j: row i0 + r of the block, key j), so the softmax of four rows (AVX-512; two on
// AVX2) is one chain of vector operations instead of one chain per row (each about 150 cycles, of which the
// horizontal max, sum and per-row exp are most). The scores are N dot products reduced together by the
// transposing PairSums tree (no K^T to copy: the copy's scalar stores, reloaded as vectors, stalled
// store-to-load forwarding); the group max and the group sums are butterflies inside each group of four lanes
// (the sums in double, as on the row path); exp with the rounding of s - m folded in and the corrected
// division are the row path's. P V takes each weight from its lane by a permute. The numerics are the row
// path's (the scores' summation order differs, within sigma's (head_dim + 2)u), so attention.h's bound holds.
// A block whose scores hold a NaN or an infinity, and a causal call whose first row sees no key, return false:
// the caller's next path recomputes the whole call (outputs never alias inputs).
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
constexpr bool kPackedSmall = true;
#else
constexpr bool kPackedSmall = false;
#endif

inline bool PackedSmallApplies(const internal::AttentionProblem& p) {
  return kPackedSmall && p.kv_len <= 4 && p.mask == nullptr;
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
inline bool PackedSmallAttention(const internal::AttentionProblem& p, const float* q, const float* k, const float* v,
                                 float* out) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const hn::Half<decltype(d)> dh;
  const hn::Repartition<double, decltype(d)> dd;  // N/2 doubles
  using V = hn::Vec<decltype(d)>;
  constexpr size_t N = hn::MaxLanes(d);  // 8 or 16: two or four rows per vector
  constexpr size_t R = N / 4;
  if (p.causal && p.kv_len < p.q_len) return false;  // the first row would see no key (caller's path zeroes it)
  const size_t group = p.num_heads / p.num_kv_heads;
  const size_t q_stride = p.num_heads * p.head_dim;
  const size_t k_stride = p.num_kv_heads * p.head_dim;
  const size_t v_stride = p.num_kv_heads * p.value_dim;
  const size_t out_stride = p.num_heads * p.value_dim;
  // Lane 4r + j: key j = lane & 3, row r = lane >> 2. Causal: key j visible to row i0 + r iff
  // j - r <= i0 + kv_len - q_len (bottom-right aligned); j - r lies in [-3, 3], so the offset is clamped to [-4, 4].
  const auto lane = hn::Iota(di, 0);
  const auto key = hn::And(lane, hn::Set(di, 3));
  const auto key_minus_row = hn::Sub(key, hn::ShiftRight<2>(lane));
  const auto key_exists = hn::RebindMask(d, hn::Lt(key, hn::Set(di, static_cast<int32_t>(p.kv_len))));
  const auto neg_inf = hn::Set(d, -internal::kInfinity);
  const auto inf = hn::Set(d, internal::kInfinity);
  const auto vscale = hn::Set(d, p.scale);
  const auto one = hn::Set(d, 1.0f);
  const auto upper_row = hn::IfThenZeroElse(hn::FirstN(di, N / 2), hn::Set(di, 4));  // +4 in the upper half
  for (size_t h = 0; h < p.num_heads; ++h) {
    const size_t g = h / group;
    const float* q_head = q + h * p.head_dim;
    const float* k_head = k + g * p.head_dim;
    const float* v_head = v + g * p.value_dim;
    for (size_t i0 = 0; i0 < p.q_len; i0 += R) {
      const size_t rows = p.q_len - i0 < R ? p.q_len - i0 : R;
      // Dot products: acc[4r + j] += q_r * k_j over head_dim in vectors (rows past q_len and keys past kv_len
      // are zeros).
      V acc[N];
      size_t inputs = N;
      if (2 * p.head_dim <= N) {
        // Narrow heads: two dot products per vector, [q_r | q_r] * [k_2u | k_2u+1] (lower | upper half): N/2
        // vectors and one level less of the tree, which leaves input t's two sums in lanes 2t and 2t + 1, that
        // is lane 4r + j for t = 2r + u, j = 2u or 2u + 1.
        inputs = N / 2;
        hn::Vec<decltype(dh)> kh[4];
        for (size_t j = 0; j < 4; ++j) {
          kh[j] = j >= p.kv_len ? hn::Zero(dh) : LoadTail(dh, k_head + j * k_stride, p.head_dim);
        }
        const V k01 = hn::Combine(d, kh[1], kh[0]), k23 = hn::Combine(d, kh[3], kh[2]);
        for (size_t r = 0; r < R; ++r) {
          const auto qh = r >= rows ? hn::Zero(dh) : LoadTail(dh, q_head + (i0 + r) * q_stride, p.head_dim);
          const V q2 = hn::Combine(d, qh, qh);
          acc[2 * r] = hn::Mul(q2, k01);
          acc[2 * r + 1] = hn::Mul(q2, k23);
        }
      } else {
        for (size_t t = 0; t < N; ++t) acc[t] = hn::Zero(d);
      }
      for (size_t c = 0; inputs == N && c < p.head_dim; c += N) {
        const size_t width = p.head_dim - c < N ? p.head_dim - c : N;
        V kc[4], qc[R];
        for (size_t j = 0; j < 4; ++j) {
          const float* k_row = k_head + j * k_stride + c;
          kc[j] = j >= p.kv_len ? hn::Zero(d) : width == N ? hn::LoadU(d, k_row) : LoadTail(d, k_row, width);
        }
        for (size_t r = 0; r < R; ++r) {
          const float* q_row = q_head + (i0 + r) * q_stride + c;
          qc[r] = r >= rows ? hn::Zero(d) : width == N ? hn::LoadU(d, q_row) : LoadTail(d, q_row, width);
        }
        for (size_t r = 0; r < R; ++r) {
          for (size_t j = 0; j < 4; ++j) acc[4 * r + j] = hn::MulAdd(qc[r], kc[j], acc[4 * r + j]);
        }
      }
      // N vectors of partial sums -> one vector of N scores (PairSums keeps the order of its inputs).
      for (size_t n = inputs; n > 1; n /= 2) {
        for (size_t t = 0; t < n / 2; ++t) acc[t] = PairSums(d, acc[2 * t], acc[2 * t + 1]);
      }
      V s = hn::Mul(acc[0], vscale);
      auto valid = key_exists;
      if (p.causal) {
        const int64_t offset = static_cast<int64_t>(i0 + p.kv_len) - static_cast<int64_t>(p.q_len);
        const int32_t limit = static_cast<int32_t>(offset < -4 ? -4 : offset > 4 ? 4 : offset) + 1;
        valid = hn::And(valid, hn::RebindMask(d, hn::Lt(key_minus_row, hn::Set(di, limit))));
      }
      if (!hn::AllTrue(d, hn::Or(hn::Not(valid), hn::Lt(hn::Abs(s), inf)))) return false;  // NaN or inf
      s = hn::IfThenElse(valid, s, neg_inf);
      // Max of each group of four lanes, in every lane of the group (every row sees key 0: finite).
      auto m = hn::Max(s, hn::Shuffle2301(s));
      m = hn::Max(m, hn::Shuffle1032(m));
      const V e = ExpMinusMax(d, s, hn::Neg(m));  // masked lanes: e^-inf = 0
      // Group sums in double: lanes 4r..4r+3 of e are the four doubles of a 256-bit half.
      auto lo = hn::PromoteTo(dd, hn::LowerHalf(dh, e));
      auto hi = hn::PromoteTo(dd, hn::UpperHalf(dh, e));
      lo = hn::Add(lo, hn::Shuffle01(lo));
      hi = hn::Add(hi, hn::Shuffle01(hi));
      lo = hn::Add(lo, hn::SwapAdjacentBlocks(lo));
      hi = hn::Add(hi, hn::SwapAdjacentBlocks(hi));
      const V total = hn::Combine(d, hn::DemoteTo(dh, hi), hn::DemoteTo(dh, lo));
      const V inv = hn::Div(one, total);
      const V quotient = hn::Mul(e, inv);
      const V w = hn::MulAdd(hn::NegMulAdd(quotient, total, e), inv, quotient);
      // P V over the keys each row sees. Narrow rows (value_dim <= N/2): two rows per vector, [row r | row r+1]
      // += [w_rj | w_r+1,j] * [v_j | v_j]; a key that only row r + 1 sees (causal) enters as [0 | v_j], so that
      // a NaN in the v of a key row r does not see never reaches row r (its weight there is 0, but 0 * NaN is not).
      if (2 * p.value_dim <= N) {
        const size_t n_block = internal::VisibleKeys(p, i0 + rows - 1);  // rows further down see more keys
        hn::Vec<decltype(dh)> vh[4];
        for (size_t j = 0; j < n_block; ++j) vh[j] = LoadTail(dh, v_head + j * v_stride, p.value_dim);
        for (size_t r = 0; r < rows; r += 2) {
          const bool pair = r + 1 < rows;
          const size_t n_lo = internal::VisibleKeys(p, i0 + r);
          const size_t n_hi = pair ? internal::VisibleKeys(p, i0 + r + 1) : n_lo;
          auto a = hn::Zero(d);
          for (size_t j = 0; j < n_hi; ++j) {
            const auto idx = hn::Add(hn::Set(di, static_cast<int32_t>(4 * r + j)), upper_row);
            const V wv = hn::TableLookupLanes(w, hn::IndicesFromVec(d, idx));
            a = hn::MulAdd(wv, hn::Combine(d, vh[j], j < n_lo ? vh[j] : hn::Zero(dh)), a);
          }
          float* out_row = out + (i0 + r) * out_stride + h * p.value_dim;
          StoreTail(dh, hn::LowerHalf(dh, a), out_row, p.value_dim);
          if (pair) StoreTail(dh, hn::UpperHalf(dh, a), out_row + out_stride, p.value_dim);
        }
        continue;
      }
      for (size_t r = 0; r < rows; ++r) {
        const size_t n = internal::VisibleKeys(p, i0 + r);
        float* out_row = out + (i0 + r) * out_stride + h * p.value_dim;
        V wj[4];
        for (size_t j = 0; j < n; ++j) {
          wj[j] = hn::TableLookupLanes(w, hn::IndicesFromVec(d, hn::Set(di, static_cast<int32_t>(4 * r + j))));
        }
        for (size_t c = 0; c < p.value_dim; c += N) {
          const size_t width = p.value_dim - c < N ? p.value_dim - c : N;
          auto a = hn::Zero(d);
          for (size_t j = 0; j < n; ++j) {
            const float* v_row = v_head + j * v_stride + c;
            a = hn::MulAdd(wj[j], width == N ? hn::LoadU(d, v_row) : LoadTail(d, v_row, width), a);
          }
          if (width == N) {
            hn::StoreU(a, d, out_row + c);
          } else {
            StoreTail(d, a, out_row + c, width);
          }
        }
      }
    }
  }
  return true;
}
#else
inline bool PackedSmallAttention(const internal::AttentionProblem&, const float*, const float*, const float*, float*) {
  return false;
}
#endif

inline void AttentionForward(const internal::AttentionProblem& p, const float* q, const float* k, const float* v,
                             float* out, float* scores) {
  if (PackedSmallApplies(p) && PackedSmallAttention(p, q, k, v, out)) return;
  if (SmallAttentionApplies(p) && SmallAttention(p, q, k, v, out)) return;
  if (p.mask == nullptr && p.q_len >= kAttentionTiledMinQueries && p.kv_len < (size_t{1} << 24)) {
    return TiledAttention(p, q, k, v, out, scores);
  }
  if (p.mask == nullptr) return DecodeAttention(p, q, k, v, out, scores);
  internal::AttentionRows<SimdAttentionKernels>(p, q, k, v, out, scores);
}

inline void AttentionWeightsForward(const internal::AttentionProblem& p, const float* q, const float* k,
                                    float* weights) {
  internal::AttentionWeightRows<SimdAttentionKernels>(p, q, k, weights);
}

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle
