// The fused decode steps' shared pieces (DecodeScores' eight-slot reduction, DecodePv's stores) and, on targets
// with 32 vector registers and 16-float vectors, their kernels for four query heads with 16 accumulators
// (docs/performance.md, step K3). kv_cache_fused-inl.h runs them; its header says which arithmetic they keep.

#if defined(EDGEATTN_LIB_KV_CACHE_KV_CACHE_FUSED16_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_KV_CACHE_KV_CACHE_FUSED16_INL_H_
#undef EDGEATTN_LIB_KV_CACHE_KV_CACHE_FUSED16_INL_H_
#else
#define EDGEATTN_LIB_KV_CACHE_KV_CACHE_FUSED16_INL_H_
#endif

#include <stddef.h>

#include "hwy/highway.h"
#include "lib/attention/decode-inl.h"
#include "lib/common/simd_tail-inl.h"
#include "lib/kv_cache/kv_cache_load-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// DecodeScores' reduction of eight accumulators into their eight scores times scale (sums[0 .. 8)): every
// slot's lanes are summed by the same tree, whichever slot it is.
template <class D, class V>
HWY_INLINE void KvFusedReduce8(D d, V a0, V a1, V a2, V a3, V a4, V a5, V a6, V a7, V vscale, float* sums) {
  const size_t N = hn::Lanes(d);
  const auto b0 = PairSums(d, PairSums(d, a0, a1), PairSums(d, a2, a3));
  const auto b1 = PairSums(d, PairSums(d, a4, a5), PairSums(d, a6, a7));
  if (N == 4) {
    hn::Store(hn::Mul(b0, vscale), d, sums);
    hn::Store(hn::Mul(b1, vscale), d, sums + 4);
  } else {
    auto w = PairSums(d, b0, b1);
    for (size_t parts = N / 8; parts > 1; parts /= 2) w = PairSums(d, w, w);
    hn::Store(hn::Mul(w, vscale), d, sums);
  }
}

// Targets with 32 vector registers and AVX-512's 16-float vectors hold 16 accumulators besides the loaded
// vectors: with four query heads the scores take four keys per pass (each K vector feeds four products, each Q
// vector four) and P·V four column vectors of each V row per pass (two passes over a d = 128 tile where eight
// accumulators take four, each a strided stream of misses from memory). AVX2 and ARMv7 have 16 registers;
// AArch64 has 32 but is not measured here (docs/performance.md, step K3).
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
constexpr bool kKvFused16 = true;
#else
constexpr bool kKvFused16 = false;
#endif

// a_i += w_i x, i = 0..3: in P·V, x one column vector of a V row and w_i the four heads' weights; in the
// scores, x one head's Q vector and w_i the vectors of four keys.
template <class V>
HWY_INLINE void KvFusedFma4(V x, V w0, V w1, V w2, V w3, V& a0, V& a1, V& a2, V& a3) {
  a0 = hn::MulAdd(w0, x, a0), a1 = hn::MulAdd(w1, x, a1), a2 = hn::MulAdd(w2, x, a2), a3 = hn::MulAdd(w3, x, a3);
}

// KvFusedScores' eight-key passes for four query heads with 16 accumulators (kKvFused16): slot t<h><u> holds
// head h and key j + u, the same chain over the columns as KvFusedScores' slot of that (head, key), and each
// set of eight slots (keys j, j + 1 and keys j + 2, j + 3) is reduced as KvFusedScores reduces its eight, so
// the bits are the same. Keys [0, n8), n8 a multiple of 8; returns n8.
template <int kKind, class D>
HWY_INLINE size_t KvFusedScores4x16(D d, const float* const* q, const KvFusedRows& k, size_t head_dim, size_t n8,
                                    hn::Vec<D> vscale, float* const* s) {
  const size_t N = hn::Lanes(d);
  for (size_t j = 0; j < n8; j += 4) {
    const unsigned char* r0 = k.Row(j), *r1 = k.Row(j + 1), *r2 = k.Row(j + 2), *r3 = k.Row(j + 3);
    const float c0 = kKind == kKvFusedQ8 ? k.Scale(j) : 0.0f, c1 = kKind == kKvFusedQ8 ? k.Scale(j + 1) : 0.0f;
    const float c2 = kKind == kKvFusedQ8 ? k.Scale(j + 2) : 0.0f, c3 = kKind == kKvFusedQ8 ? k.Scale(j + 3) : 0.0f;
    auto t00 = hn::Zero(d), t01 = hn::Zero(d), t02 = hn::Zero(d), t03 = hn::Zero(d);
    auto t10 = hn::Zero(d), t11 = hn::Zero(d), t12 = hn::Zero(d), t13 = hn::Zero(d);
    auto t20 = hn::Zero(d), t21 = hn::Zero(d), t22 = hn::Zero(d), t23 = hn::Zero(d);
    auto t30 = hn::Zero(d), t31 = hn::Zero(d), t32 = hn::Zero(d), t33 = hn::Zero(d);
    for (size_t c = 0; c < head_dim; c += N) {
      const size_t lanes = head_dim - c < N ? head_dim - c : N;
      const auto x0 = KvFusedLoad<kKind>(d, r0, c, lanes, hn::Set(d, c0), c0);
      const auto x1 = KvFusedLoad<kKind>(d, r1, c, lanes, hn::Set(d, c1), c1);
      const auto x2 = KvFusedLoad<kKind>(d, r2, c, lanes, hn::Set(d, c2), c2);
      const auto x3 = KvFusedLoad<kKind>(d, r3, c, lanes, hn::Set(d, c3), c3);
      const auto q0 = KvFusedLoadQ(d, q[0] + c, lanes), q1 = KvFusedLoadQ(d, q[1] + c, lanes);
      const auto q2 = KvFusedLoadQ(d, q[2] + c, lanes), q3 = KvFusedLoadQ(d, q[3] + c, lanes);
      KvFusedFma4(q0, x0, x1, x2, x3, t00, t01, t02, t03);
      KvFusedFma4(q1, x0, x1, x2, x3, t10, t11, t12, t13);
      KvFusedFma4(q2, x0, x1, x2, x3, t20, t21, t22, t23);
      KvFusedFma4(q3, x0, x1, x2, x3, t30, t31, t32, t33);
    }
    // KvFusedScores' slots for keys (j, j + 1), then (j + 2, j + 3): slot 2 h + u.
    HWY_ALIGN float sums[2][hn::MaxLanes(D()) < 8 ? 8 : hn::MaxLanes(D())];
    KvFusedReduce8(d, t00, t01, t10, t11, t20, t21, t30, t31, vscale, sums[0]);
    KvFusedReduce8(d, t02, t03, t12, t13, t22, t23, t32, t33, vscale, sums[1]);
    for (size_t h = 0; h < 4; ++h) {
      s[h][j] = sums[0][2 * h], s[h][j + 1] = sums[0][2 * h + 1];
      s[h][j + 2] = sums[1][2 * h], s[h][j + 3] = sums[1][2 * h + 1];
    }
  }
  return n8;
}

// One output vector of out + c (lanes columns) from accumulator x: DecodePv's store (first: the row's first tile,
// the accumulator as it is; tail: PvRow's, whose first tile adds the zero-filled row).
template <class D>
HWY_INLINE void KvFusedStore(D d, hn::Vec<D> x, float* o, size_t lanes, float alpha, bool rescale, bool tail) {
  if (rescale) {
    x = hn::MulAdd(KvFusedLoadQ(d, o, lanes), hn::Set(d, alpha), x);
  } else if (tail) {
    x = hn::Add(hn::Zero(d), x);
  }
  if (lanes == hn::Lanes(d)) {
    hn::StoreU(x, d, o);
  } else {
    StoreTail(d, x, o, lanes);
  }
}

// Four whole column vectors of one head's output row, o .. o + 4 N (KvFusedStore of each).
template <class D>
HWY_INLINE void KvFusedStore4(D d, hn::Vec<D> x0, hn::Vec<D> x1, hn::Vec<D> x2, hn::Vec<D> x3, float* o, float alpha,
                              bool rescale) {
  const size_t N = hn::Lanes(d);
  KvFusedStore(d, x0, o, N, alpha, rescale, false), KvFusedStore(d, x1, o + N, N, alpha, rescale, false);
  KvFusedStore(d, x2, o + 2 * N, N, alpha, rescale, false), KvFusedStore(d, x3, o + 3 * N, N, alpha, rescale, false);
}

// DecodePv's 8- and 4-vector column blocks for four query heads with 16 accumulators (kKvFused16): each
// accumulator is the chain of one (head, column vector) over the keys in order (4-vector block: one for the
// even keys, one for the odd), as in KvFusedPv, so the bits are the same. Returns the first column not done.
template <int kKind, class D>
HWY_INLINE size_t KvFusedPv4x16(D d, const float* const* p, size_t n, const KvFusedRows& v, float* const* out,
                                size_t width, const float* alpha, bool rescale) {
  const size_t N = hn::Lanes(d);
  const size_t wrap = v.Wrap(n);
  size_t c = 0;
  const size_t wide_end = width - width % (8 * N);
  for (; c < wide_end; c += 4 * N) {  // accumulator a<h><t>: head h, column vector c + t N
    auto a00 = hn::Zero(d), a01 = hn::Zero(d), a02 = hn::Zero(d), a03 = hn::Zero(d);
    auto a10 = hn::Zero(d), a11 = hn::Zero(d), a12 = hn::Zero(d), a13 = hn::Zero(d);
    auto a20 = hn::Zero(d), a21 = hn::Zero(d), a22 = hn::Zero(d), a23 = hn::Zero(d);
    auto a30 = hn::Zero(d), a31 = hn::Zero(d), a32 = hn::Zero(d), a33 = hn::Zero(d);
    const unsigned char* row = v.Row(0);
    const unsigned char* sp = v.ScalePtr(0);
    for (size_t j = 0; j < n; ++j, row += v.row_bytes, sp += v.scale_bytes) {
      if (j == wrap) row = v.base, sp = v.scale;  // the ring's slot 0
      const float sc = KvFusedScaleAt<kKind>(sp);
      const auto vs = hn::Set(d, sc);
      const auto w0 = hn::Set(d, p[0][j]), w1 = hn::Set(d, p[1][j]), w2 = hn::Set(d, p[2][j]);
      const auto w3 = hn::Set(d, p[3][j]);
      const auto x0 = KvFusedLoad<kKind>(d, row, c, N, vs, sc), x1 = KvFusedLoad<kKind>(d, row, c + N, N, vs, sc);
      const auto x2 = KvFusedLoad<kKind>(d, row, c + 2 * N, N, vs, sc);
      const auto x3 = KvFusedLoad<kKind>(d, row, c + 3 * N, N, vs, sc);
      KvFusedFma4(x0, w0, w1, w2, w3, a00, a10, a20, a30);
      KvFusedFma4(x1, w0, w1, w2, w3, a01, a11, a21, a31);
      KvFusedFma4(x2, w0, w1, w2, w3, a02, a12, a22, a32);
      KvFusedFma4(x3, w0, w1, w2, w3, a03, a13, a23, a33);
    }
    KvFusedStore4(d, a00, a01, a02, a03, out[0] + c, alpha[0], rescale);
    KvFusedStore4(d, a10, a11, a12, a13, out[1] + c, alpha[1], rescale);
    KvFusedStore4(d, a20, a21, a22, a23, out[2] + c, alpha[2], rescale);
    KvFusedStore4(d, a30, a31, a32, a33, out[3] + c, alpha[3], rescale);
  }
  const size_t mid_end = width - c >= 4 * N ? c + 4 * N : c;
  for (; c < mid_end; c += 2 * N) {  // e<h><t>: head h, column vector c + t N, even keys; o<h><t>: odd keys
    auto e00 = hn::Zero(d), e01 = hn::Zero(d), e10 = hn::Zero(d), e11 = hn::Zero(d);
    auto e20 = hn::Zero(d), e21 = hn::Zero(d), e30 = hn::Zero(d), e31 = hn::Zero(d);
    auto o00 = hn::Zero(d), o01 = hn::Zero(d), o10 = hn::Zero(d), o11 = hn::Zero(d);
    auto o20 = hn::Zero(d), o21 = hn::Zero(d), o30 = hn::Zero(d), o31 = hn::Zero(d);
    const unsigned char* row = v.Row(0);
    const unsigned char* sp = v.ScalePtr(0);
    for (size_t j = 0; j < n; ++j, row += v.row_bytes, sp += v.scale_bytes) {
      if (j == wrap) row = v.base, sp = v.scale;  // the ring's slot 0
      const float sc = KvFusedScaleAt<kKind>(sp);
      const auto vs = hn::Set(d, sc);
      const auto w0 = hn::Set(d, p[0][j]), w1 = hn::Set(d, p[1][j]), w2 = hn::Set(d, p[2][j]);
      const auto w3 = hn::Set(d, p[3][j]);
      const auto x0 = KvFusedLoad<kKind>(d, row, c, N, vs, sc), x1 = KvFusedLoad<kKind>(d, row, c + N, N, vs, sc);
      if ((j & 1) == 0) {
        KvFusedFma4(x0, w0, w1, w2, w3, e00, e10, e20, e30);
        KvFusedFma4(x1, w0, w1, w2, w3, e01, e11, e21, e31);
      } else {
        KvFusedFma4(x0, w0, w1, w2, w3, o00, o10, o20, o30);
        KvFusedFma4(x1, w0, w1, w2, w3, o01, o11, o21, o31);
      }
    }
    KvFusedStore(d, hn::Add(e00, o00), out[0] + c, N, alpha[0], rescale, false);
    KvFusedStore(d, hn::Add(e01, o01), out[0] + c + N, N, alpha[0], rescale, false);
    KvFusedStore(d, hn::Add(e10, o10), out[1] + c, N, alpha[1], rescale, false);
    KvFusedStore(d, hn::Add(e11, o11), out[1] + c + N, N, alpha[1], rescale, false);
    KvFusedStore(d, hn::Add(e20, o20), out[2] + c, N, alpha[2], rescale, false);
    KvFusedStore(d, hn::Add(e21, o21), out[2] + c + N, N, alpha[2], rescale, false);
    KvFusedStore(d, hn::Add(e30, o30), out[3] + c, N, alpha[3], rescale, false);
    KvFusedStore(d, hn::Add(e31, o31), out[3] + c + N, N, alpha[3], rescale, false);
  }
  return c;
}

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle
