// The decode steps' P·V (docs/performance.md, decode path, steps 17 and K3): a tile's weights times its V rows, read
// from a row source in any storage format (lib/common/formats-inl.h), into the output rows of GH query heads that
// share each loaded V vector. Each accumulator is the chain of one (head, column vector) over the keys in order, in
// the same column blocks for every GH and format (eight vectors, one accumulator each; then four, even and odd keys
// apart; then one vector at a time), so each head gets the bits it gets alone on an F32 source holding the values
// the format reads back.

#if defined(EDGEATTN_LIB_ATTENTION_DECODE_PV_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_ATTENTION_DECODE_PV_INL_H_
#undef EDGEATTN_LIB_ATTENTION_DECODE_PV_INL_H_
#else
#define EDGEATTN_LIB_ATTENTION_DECODE_PV_INL_H_
#endif

#include <stddef.h>

#include "hwy/highway.h"
#include "lib/attention/decode_scores-inl.h"
#include "lib/common/formats-inl.h"
#include "lib/common/row_source.h"
#include "lib/common/simd_tail-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Calls key(j, row, scale) for the rows j = 0 .. n - 1 of v in order, as two runs of consecutive slots (before and
// after a ring's wrap), so the loops step a pointer and test nothing per row.
template <class Format, class Key>
HWY_INLINE void ForEachRow(const internal::RowSource& v, size_t n, Key key) {
  const size_t wrap = v.Wrap(n);
  const unsigned char* row = v.Row(0);
  const unsigned char* sp = v.ScalePtr(0);
  for (size_t j = 0; j < wrap; ++j, row += v.row_bytes, sp += v.scale_bytes) key(j, row, RowScaleAt<Format>(sp));
  row = v.base, sp = v.scale;  // the ring's slot 0
  for (size_t j = wrap; j < n; ++j, row += v.row_bytes, sp += v.scale_bytes) key(j, row, RowScaleAt<Format>(sp));
}

// As ForEachRow, rows with even j to even(...) and odd j to odd(...), in pairs inside a run, so that two sets of
// accumulators take alternate keys without a branch per row.
template <class Format, class Even, class Odd>
HWY_INLINE void ForEachRowAlternating(const internal::RowSource& v, size_t n, Even even, Odd odd) {
  const size_t wrap = v.Wrap(n);
  for (size_t run = 0; run < 2; ++run) {
    size_t j = run == 0 ? 0 : wrap;
    const size_t end = run == 0 ? wrap : n;
    const unsigned char* row = run == 0 ? v.Row(0) : v.base;
    const unsigned char* sp = run == 0 ? v.ScalePtr(0) : v.scale;
    if (j < end && (j & 1) != 0) odd(j++, row, RowScaleAt<Format>(sp)), row += v.row_bytes, sp += v.scale_bytes;
    for (; j + 2 <= end; j += 2, row += 2 * v.row_bytes, sp += 2 * v.scale_bytes) {
      even(j, row, RowScaleAt<Format>(sp));
      odd(j + 1, row + v.row_bytes, RowScaleAt<Format>(sp + v.scale_bytes));
    }
    if (j < end) even(j, row, RowScaleAt<Format>(sp));
  }
}

// One output vector (lanes columns at o) from accumulator x: rescale: o alpha + x (a later tile); else x as it is
// (a head's first tile), or 0 + x for the one-vector columns (as PvRow adds to its zero-filled row).
template <class D>
HWY_INLINE void PvStore(D d, hn::Vec<D> x, float* o, size_t lanes, float alpha, bool rescale, bool tail) {
  if (rescale) {
    x = hn::MulAdd(LoadVecN(d, o, lanes), hn::Set(d, alpha), x);
  } else if (tail) {
    x = hn::Add(hn::Zero(d), x);
  }
  if (lanes == hn::Lanes(d)) {
    hn::StoreU(x, d, o);
  } else {
    StoreTail(d, x, o, lanes);
  }
}

// Columns [c, c + 8 N): 8 / GH column vectors for each of GH heads, one accumulator each (slot h (8 / GH) + t:
// head h, column vector t), so a V row of a wide head is read in one pass (docs/performance.md, step 17).
template <class Format, size_t GH, class D>
HWY_INLINE void PvWideBlock(D d, const float* const* p, size_t n, const internal::RowSource& v, float* const* out,
                            size_t c, const float* alpha, bool rescale) {
  using V = hn::Vec<D>;
  constexpr size_t CB = 8 / GH;
  const size_t N = hn::Lanes(d);
  V a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  V a4 = hn::Zero(d), a5 = hn::Zero(d), a6 = hn::Zero(d), a7 = hn::Zero(d);
  ForEachRow<Format>(v, n, [&](size_t j, const unsigned char* row, float sc) {
    const V vs = hn::Set(d, sc);
    const auto x = [&](size_t t) { return LoadRowVec<Format>(d, row, c + t * N, N, vs, sc); };
    const V p0 = hn::Set(d, p[0][j]);
    if constexpr (GH == 1) {
      a0 = hn::MulAdd(p0, x(0), a0), a1 = hn::MulAdd(p0, x(1), a1), a2 = hn::MulAdd(p0, x(2), a2);
      a3 = hn::MulAdd(p0, x(3), a3), a4 = hn::MulAdd(p0, x(4), a4), a5 = hn::MulAdd(p0, x(5), a5);
      a6 = hn::MulAdd(p0, x(6), a6), a7 = hn::MulAdd(p0, x(7), a7);
    } else if constexpr (GH == 2) {
      const V p1 = hn::Set(d, p[1][j]);
      const V x0 = x(0), x1 = x(1), x2 = x(2), x3 = x(3);
      a0 = hn::MulAdd(p0, x0, a0), a1 = hn::MulAdd(p0, x1, a1), a2 = hn::MulAdd(p0, x2, a2);
      a3 = hn::MulAdd(p0, x3, a3), a4 = hn::MulAdd(p1, x0, a4), a5 = hn::MulAdd(p1, x1, a5);
      a6 = hn::MulAdd(p1, x2, a6), a7 = hn::MulAdd(p1, x3, a7);
    } else {
      const V p1 = hn::Set(d, p[1][j]), p2 = hn::Set(d, p[2][j]), p3 = hn::Set(d, p[3][j]);
      const V x0 = x(0), x1 = x(1);
      a0 = hn::MulAdd(p0, x0, a0), a1 = hn::MulAdd(p0, x1, a1), a2 = hn::MulAdd(p1, x0, a2);
      a3 = hn::MulAdd(p1, x1, a3), a4 = hn::MulAdd(p2, x0, a4), a5 = hn::MulAdd(p2, x1, a5);
      a6 = hn::MulAdd(p3, x0, a6), a7 = hn::MulAdd(p3, x1, a7);
    }
  });
  const auto store = [&](V x, size_t slot) {
    const size_t h = slot / CB;
    PvStore(d, x, out[h] + c + (slot % CB) * N, N, alpha[h], rescale, false);
  };
  store(a0, 0), store(a1, 1), store(a2, 2), store(a3, 3), store(a4, 4), store(a5, 5), store(a6, 6), store(a7, 7);
}

// Key j's contribution to columns [c, c + 4 N) of GH heads in four accumulators (slot h (4 / GH) + t).
template <class Format, size_t GH, class D, class V>
HWY_INLINE void PvMidKey(D d, const float* const* p, size_t j, const unsigned char* row, float sc, size_t c, V& a0,
                         V& a1, V& a2, V& a3) {
  const size_t N = hn::Lanes(d);
  const V vs = hn::Set(d, sc);
  const auto x = [&](size_t t) { return LoadRowVec<Format>(d, row, c + t * N, N, vs, sc); };
  const V w0 = hn::Set(d, p[0][j]);
  if constexpr (GH == 1) {
    a0 = hn::MulAdd(w0, x(0), a0), a1 = hn::MulAdd(w0, x(1), a1), a2 = hn::MulAdd(w0, x(2), a2);
    a3 = hn::MulAdd(w0, x(3), a3);
  } else if constexpr (GH == 2) {
    const V w1 = hn::Set(d, p[1][j]);
    const V x0 = x(0), x1 = x(1);
    a0 = hn::MulAdd(w0, x0, a0), a1 = hn::MulAdd(w0, x1, a1), a2 = hn::MulAdd(w1, x0, a2);
    a3 = hn::MulAdd(w1, x1, a3);
  } else {
    const V x0 = x(0);
    Fma4(x0, w0, hn::Set(d, p[1][j]), hn::Set(d, p[2][j]), hn::Set(d, p[3][j]), a0, a1, a2, a3);
  }
}

// Columns [c, c + 4 N): two accumulators per (head, column vector), one for the even keys and one for the odd, so
// eight independent FMA chains run.
template <class Format, size_t GH, class D>
HWY_INLINE void PvMidBlock(D d, const float* const* p, size_t n, const internal::RowSource& v, float* const* out,
                           size_t c, const float* alpha, bool rescale) {
  using V = hn::Vec<D>;
  constexpr size_t CB = 4 / GH;
  const size_t N = hn::Lanes(d);
  V a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  V b0 = hn::Zero(d), b1 = hn::Zero(d), b2 = hn::Zero(d), b3 = hn::Zero(d);
  ForEachRowAlternating<Format>(
      v, n,
      [&](size_t j, const unsigned char* row, float sc) { PvMidKey<Format, GH>(d, p, j, row, sc, c, a0, a1, a2, a3); },
      [&](size_t j, const unsigned char* row, float sc) { PvMidKey<Format, GH>(d, p, j, row, sc, c, b0, b1, b2, b3); });
  const auto store = [&](V x, size_t slot) {
    const size_t h = slot / CB;
    PvStore(d, x, out[h] + c + (slot % CB) * N, N, alpha[h], rescale, false);
  };
  store(hn::Add(a0, b0), 0), store(hn::Add(a1, b1), 1), store(hn::Add(a2, b2), 2), store(hn::Add(a3, b3), 3);
}

// Columns [c, width) one vector at a time, one accumulator per head (PvRow's arithmetic).
template <class Format, size_t GH, class D>
HWY_INLINE void PvRestColumns(D d, const float* const* p, size_t n, const internal::RowSource& v, float* const* out,
                              size_t c, size_t width, const float* alpha, bool rescale) {
  using V = hn::Vec<D>;
  const size_t N = hn::Lanes(d);
  for (; c < width; c += N) {
    const size_t lanes = width - c < N ? width - c : N;
    V a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
    ForEachRow<Format>(v, n, [&](size_t j, const unsigned char* row, float sc) {
      const V x = LoadRowVec<Format>(d, row, c, lanes, hn::Set(d, sc), sc);
      a0 = hn::MulAdd(hn::Set(d, p[0][j]), x, a0);
      if constexpr (GH >= 2) a1 = hn::MulAdd(hn::Set(d, p[1][j]), x, a1);
      if constexpr (GH >= 4) a2 = hn::MulAdd(hn::Set(d, p[2][j]), x, a2), a3 = hn::MulAdd(hn::Set(d, p[3][j]), x, a3);
    });
    PvStore(d, a0, out[0] + c, lanes, alpha[0], rescale, true);
    if constexpr (GH >= 2) PvStore(d, a1, out[1] + c, lanes, alpha[1], rescale, true);
    if constexpr (GH >= 4) {
      PvStore(d, a2, out[2] + c, lanes, alpha[2], rescale, true);
      PvStore(d, a3, out[3] + c, lanes, alpha[3], rescale, true);
    }
  }
}

#if HWY_TARGET != HWY_SCALAR
// The 8- and 4-vector column blocks for four query heads with 16 accumulators (kDecode16): each accumulator is the
// chain of one (head, column vector) over the keys in order (4-vector block: one for the even keys, one for the
// odd), as in PvWideBlock and PvMidBlock, so the bits are the same. Returns the first column not done.
template <class Format, class D>
HWY_INLINE size_t DecodePv4x16(D d, const float* const* p, size_t n, const internal::RowSource& v, float* const* out,
                               size_t width, const float* alpha, bool rescale) {
  using V = hn::Vec<D>;
  const size_t N = hn::Lanes(d);
  size_t c = 0;
  for (; c < width - width % (8 * N); c += 4 * N) {  // a<h><t>: head h, column vector c + t N
    V a00 = hn::Zero(d), a01 = hn::Zero(d), a02 = hn::Zero(d), a03 = hn::Zero(d);
    V a10 = hn::Zero(d), a11 = hn::Zero(d), a12 = hn::Zero(d), a13 = hn::Zero(d);
    V a20 = hn::Zero(d), a21 = hn::Zero(d), a22 = hn::Zero(d), a23 = hn::Zero(d);
    V a30 = hn::Zero(d), a31 = hn::Zero(d), a32 = hn::Zero(d), a33 = hn::Zero(d);
    ForEachRow<Format>(v, n, [&](size_t j, const unsigned char* row, float sc) {
      const V vs = hn::Set(d, sc);
      const V w0 = hn::Set(d, p[0][j]), w1 = hn::Set(d, p[1][j]), w2 = hn::Set(d, p[2][j]), w3 = hn::Set(d, p[3][j]);
      Fma4(LoadRowVec<Format>(d, row, c, N, vs, sc), w0, w1, w2, w3, a00, a10, a20, a30);
      Fma4(LoadRowVec<Format>(d, row, c + N, N, vs, sc), w0, w1, w2, w3, a01, a11, a21, a31);
      Fma4(LoadRowVec<Format>(d, row, c + 2 * N, N, vs, sc), w0, w1, w2, w3, a02, a12, a22, a32);
      Fma4(LoadRowVec<Format>(d, row, c + 3 * N, N, vs, sc), w0, w1, w2, w3, a03, a13, a23, a33);
    });
    const auto store4 = [&](size_t h, V x0, V x1, V x2, V x3) {
      float* o = out[h] + c;
      PvStore(d, x0, o, N, alpha[h], rescale, false), PvStore(d, x1, o + N, N, alpha[h], rescale, false);
      PvStore(d, x2, o + 2 * N, N, alpha[h], rescale, false), PvStore(d, x3, o + 3 * N, N, alpha[h], rescale, false);
    };
    store4(0, a00, a01, a02, a03), store4(1, a10, a11, a12, a13);
    store4(2, a20, a21, a22, a23), store4(3, a30, a31, a32, a33);
  }
  const size_t mid_end = width - c >= 4 * N ? c + 4 * N : c;
  for (; c < mid_end; c += 2 * N) {  // e<h><t>: head h, column vector c + t N, even keys; o<h><t>: odd keys
    V e00 = hn::Zero(d), e01 = hn::Zero(d), e10 = hn::Zero(d), e11 = hn::Zero(d);
    V e20 = hn::Zero(d), e21 = hn::Zero(d), e30 = hn::Zero(d), e31 = hn::Zero(d);
    V o00 = hn::Zero(d), o01 = hn::Zero(d), o10 = hn::Zero(d), o11 = hn::Zero(d);
    V o20 = hn::Zero(d), o21 = hn::Zero(d), o30 = hn::Zero(d), o31 = hn::Zero(d);
    const auto key = [&](size_t j, const unsigned char* row, float sc, V& x00, V& x01, V& x10, V& x11, V& x20,
                         V& x21, V& x30, V& x31) {
      const V vs = hn::Set(d, sc);
      const V w0 = hn::Set(d, p[0][j]), w1 = hn::Set(d, p[1][j]), w2 = hn::Set(d, p[2][j]), w3 = hn::Set(d, p[3][j]);
      Fma4(LoadRowVec<Format>(d, row, c, N, vs, sc), w0, w1, w2, w3, x00, x10, x20, x30);
      Fma4(LoadRowVec<Format>(d, row, c + N, N, vs, sc), w0, w1, w2, w3, x01, x11, x21, x31);
    };
    ForEachRowAlternating<Format>(
        v, n, [&](size_t j, const unsigned char* row, float sc) { key(j, row, sc, e00, e01, e10, e11, e20, e21, e30, e31); },
        [&](size_t j, const unsigned char* row, float sc) { key(j, row, sc, o00, o01, o10, o11, o20, o21, o30, o31); });
    const auto store2 = [&](size_t h, V x0, V x1) {
      PvStore(d, x0, out[h] + c, N, alpha[h], rescale, false), PvStore(d, x1, out[h] + c + N, N, alpha[h], rescale, false);
    };
    store2(0, hn::Add(e00, o00), hn::Add(e01, o01)), store2(1, hn::Add(e10, o10), hn::Add(e11, o11));
    store2(2, hn::Add(e20, o20), hn::Add(e21, o21)), store2(3, hn::Add(e30, o30), hn::Add(e31, o31));
  }
  return c;
}
#endif  // HWY_TARGET != HWY_SCALAR

// out[h][c] = (rescale ? out[h][c] alpha[h] : 0) + sum_{j < n} p[h][j] v_j[c] for c < width, GH (1, 2 or 4) heads.
template <class Format, size_t GH, class D>
HWY_NOINLINE void DecodePv(D d, const float* const* p, size_t n, const internal::RowSource& v, float* const* out,
                           size_t width, const float* alpha, bool rescale) {
  const size_t N = hn::Lanes(d);
  size_t c = 0;
#if HWY_TARGET != HWY_SCALAR
  if constexpr (GH == 4 && kDecode16) c = DecodePv4x16<Format>(d, p, n, v, out, width, alpha, rescale);
#endif
  for (; c < width - width % (8 * N); c += (8 / GH) * N) PvWideBlock<Format, GH>(d, p, n, v, out, c, alpha, rescale);
  if (width - c >= 4 * N) {
    for (const size_t end = c + 4 * N; c < end; c += (4 / GH) * N) {
      PvMidBlock<Format, GH>(d, p, n, v, out, c, alpha, rescale);
    }
  }
  PvRestColumns<Format, GH>(d, p, n, v, out, c, width, alpha, rescale);
}

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle
