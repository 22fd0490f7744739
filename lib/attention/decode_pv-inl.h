// SPDX-License-Identifier: Apache-2.0
// The decode steps' P·V (docs/performance.md, decode path, steps 17 and K3): a tile's weights times its V rows, read
// from a row source in any storage format (lib/common/formats-inl.h), into the output rows of GH query heads that
// share each loaded V vector. Each accumulator is the chain of one (head, column vector) over the keys in order, in
// the same column blocks for every GH and format (eight vectors, one accumulator each; then four, even and odd keys
// apart; then one vector at a time; a head of at most half an AVX-512 vector: four chains, keys j mod 4), so each
// head gets the bits it gets alone on an F32 source holding the values the format reads back.

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

// A ring's tile is two runs of consecutive slots: rows [0, Wrap(n)) from Row(0), rows [Wrap(n), n) from slot 0
// (plain rows: one run). The loops below walk each run by pointer steps and test nothing per row; their bodies are
// functions, not lambdas, because GCC left lambdas out of line here (their calls cost up to 2x) where Highway's
// HWY_INLINE forces functions inline.
struct RowRun {
  size_t begin, end;  // rows
  const unsigned char* row;
  const unsigned char* sp;
};

inline RowRun FirstRun(const internal::RowSource& v, size_t n) { return RowRun{0, v.Wrap(n), v.Row(0), v.ScalePtr(0)}; }
inline RowRun SecondRun(const internal::RowSource& v, size_t n) { return RowRun{v.Wrap(n), n, v.base, v.scale}; }

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

// Accumulator `slot` of a block whose heads own CB column vectors each: head slot / CB, column vector slot % CB.
template <size_t CB, class D>
HWY_INLINE void PvStoreSlot(D d, hn::Vec<D> x, size_t slot, float* const* out, size_t c, const float* alpha,
                            bool rescale) {
  const size_t h = slot / CB;
  PvStore(d, x, out[h] + c + (slot % CB) * hn::Lanes(d), hn::Lanes(d), alpha[h], rescale, false);
}

// Row j's contribution to the wide block's eight accumulators (slot h (8 / GH) + t: head h, column vector t); row
// points at the block's first column.
template <class Format, size_t GH, class D, class V>
HWY_INLINE void PvWideKey(D d, const float* const* p, size_t j, const unsigned char* row, float sc, V& a0, V& a1, V& a2,
                          V& a3, V& a4, V& a5, V& a6, V& a7) {
  const size_t N = hn::Lanes(d);
  const V vs = hn::Set(d, sc);
  const V p0 = hn::Set(d, p[0][j]);
  V x0 = LoadRowVec<Format>(d, row, 0, N, vs, sc), x1 = LoadRowVec<Format>(d, row, N, N, vs, sc);
  if constexpr (GH == 4) {
    const V p1 = hn::Set(d, p[1][j]), p2 = hn::Set(d, p[2][j]), p3 = hn::Set(d, p[3][j]);
    a0 = hn::MulAdd(p0, x0, a0), a1 = hn::MulAdd(p0, x1, a1), a2 = hn::MulAdd(p1, x0, a2);
    a3 = hn::MulAdd(p1, x1, a3), a4 = hn::MulAdd(p2, x0, a4), a5 = hn::MulAdd(p2, x1, a5);
    a6 = hn::MulAdd(p3, x0, a6), a7 = hn::MulAdd(p3, x1, a7);
    return;
  }
  V x2 = LoadRowVec<Format>(d, row, 2 * N, N, vs, sc), x3 = LoadRowVec<Format>(d, row, 3 * N, N, vs, sc);
  if constexpr (GH == 2) {
    const V p1 = hn::Set(d, p[1][j]);
    a0 = hn::MulAdd(p0, x0, a0), a1 = hn::MulAdd(p0, x1, a1), a2 = hn::MulAdd(p0, x2, a2);
    a3 = hn::MulAdd(p0, x3, a3), a4 = hn::MulAdd(p1, x0, a4), a5 = hn::MulAdd(p1, x1, a5);
    a6 = hn::MulAdd(p1, x2, a6), a7 = hn::MulAdd(p1, x3, a7);
    return;
  }
  a0 = hn::MulAdd(p0, x0, a0), a1 = hn::MulAdd(p0, x1, a1), a2 = hn::MulAdd(p0, x2, a2);
  a3 = hn::MulAdd(p0, x3, a3);
  x0 = LoadRowVec<Format>(d, row, 4 * N, N, vs, sc), x1 = LoadRowVec<Format>(d, row, 5 * N, N, vs, sc);
  x2 = LoadRowVec<Format>(d, row, 6 * N, N, vs, sc), x3 = LoadRowVec<Format>(d, row, 7 * N, N, vs, sc);
  a4 = hn::MulAdd(p0, x0, a4), a5 = hn::MulAdd(p0, x1, a5), a6 = hn::MulAdd(p0, x2, a6);
  a7 = hn::MulAdd(p0, x3, a7);
}

// The rows of one run into the wide block's accumulators.
template <class Format, size_t GH, class D, class V>
HWY_INLINE void PvWideRun(D d, const float* const* p, const RowRun& run, const internal::RowSource& v, size_t c, V& a0,
                          V& a1, V& a2, V& a3, V& a4, V& a5, V& a6, V& a7) {
  // Columns from c: the loads' offsets become constants (a register per column vector otherwise).
  const unsigned char* row = run.row + c * Format::kBytes;
  const unsigned char* sp = run.sp;
  const size_t sb = Format::kScaled ? v.scale_bytes : 0;  // 0: no step where there is no scale to read
  for (size_t j = run.begin; j < run.end; ++j, row += v.row_bytes, sp += sb) {
    PvWideKey<Format, GH>(d, p, j, row, RowScaleAt<Format>(sp), a0, a1, a2, a3, a4, a5, a6, a7);
  }
}

// Columns [c, c + 8 N): 8 / GH column vectors for each of GH heads, one accumulator each, so a V row of a wide head
// is read in one pass (docs/performance.md, step 17).
template <class Format, size_t GH, class D>
HWY_INLINE void PvWideBlock(D d, const float* const* p, size_t n, const internal::RowSource& v, float* const* out,
                            size_t c, const float* alpha, bool rescale) {
  using V = hn::Vec<D>;
  V a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  V a4 = hn::Zero(d), a5 = hn::Zero(d), a6 = hn::Zero(d), a7 = hn::Zero(d);
  PvWideRun<Format, GH>(d, p, FirstRun(v, n), v, c, a0, a1, a2, a3, a4, a5, a6, a7);
  PvWideRun<Format, GH>(d, p, SecondRun(v, n), v, c, a0, a1, a2, a3, a4, a5, a6, a7);
  constexpr size_t CB = 8 / GH;
  PvStoreSlot<CB>(d, a0, 0, out, c, alpha, rescale), PvStoreSlot<CB>(d, a1, 1, out, c, alpha, rescale);
  PvStoreSlot<CB>(d, a2, 2, out, c, alpha, rescale), PvStoreSlot<CB>(d, a3, 3, out, c, alpha, rescale);
  PvStoreSlot<CB>(d, a4, 4, out, c, alpha, rescale), PvStoreSlot<CB>(d, a5, 5, out, c, alpha, rescale);
  PvStoreSlot<CB>(d, a6, 6, out, c, alpha, rescale), PvStoreSlot<CB>(d, a7, 7, out, c, alpha, rescale);
}

// Row j's contribution to four column vectors (row at the first) of GH heads in four accumulators (slot
// h (4 / GH) + t).
template <class Format, size_t GH, class D, class V>
HWY_INLINE void PvMidKey(D d, const float* const* p, size_t j, const unsigned char* row, float sc, V& a0, V& a1, V& a2,
                         V& a3) {
  const size_t N = hn::Lanes(d);
  const V vs = hn::Set(d, sc);
  const V w0 = hn::Set(d, p[0][j]);
  const V x0 = LoadRowVec<Format>(d, row, 0, N, vs, sc);
  if constexpr (GH == 4) {
    Fma4(x0, w0, hn::Set(d, p[1][j]), hn::Set(d, p[2][j]), hn::Set(d, p[3][j]), a0, a1, a2, a3);
    return;
  }
  const V x1 = LoadRowVec<Format>(d, row, N, N, vs, sc);
  if constexpr (GH == 2) {
    const V w1 = hn::Set(d, p[1][j]);
    a0 = hn::MulAdd(w0, x0, a0), a1 = hn::MulAdd(w0, x1, a1), a2 = hn::MulAdd(w1, x0, a2);
    a3 = hn::MulAdd(w1, x1, a3);
    return;
  }
  a0 = hn::MulAdd(w0, x0, a0), a1 = hn::MulAdd(w0, x1, a1);
  a2 = hn::MulAdd(w0, LoadRowVec<Format>(d, row, 2 * N, N, vs, sc), a2);
  a3 = hn::MulAdd(w0, LoadRowVec<Format>(d, row, 3 * N, N, vs, sc), a3);
}

// The rows of one run into the 4-vector block: even rows into a, odd rows into b, in pairs (no branch per row picks
// the accumulators; a run may start at an odd row).
template <class Format, size_t GH, class D, class V>
HWY_INLINE void PvMidRun(D d, const float* const* p, const RowRun& run, const internal::RowSource& v, size_t c, V& a0,
                         V& a1, V& a2, V& a3, V& b0, V& b1, V& b2, V& b3) {
  // Columns from c: the loads' offsets become constants (a register per column vector otherwise).
  const unsigned char* row = run.row + c * Format::kBytes;
  const unsigned char* sp = run.sp;
  const size_t sb = Format::kScaled ? v.scale_bytes : 0;  // 0: no step where there is no scale to read
  size_t j = run.begin;
  if (j < run.end && (j & 1) != 0) {
    PvMidKey<Format, GH>(d, p, j++, row, RowScaleAt<Format>(sp), b0, b1, b2, b3);
    row += v.row_bytes, sp += sb;
  }
  for (; j + 2 <= run.end; j += 2, row += 2 * v.row_bytes, sp += 2 * sb) {
    PvMidKey<Format, GH>(d, p, j, row, RowScaleAt<Format>(sp), a0, a1, a2, a3);
    PvMidKey<Format, GH>(d, p, j + 1, row + v.row_bytes, RowScaleAt<Format>(sp + sb), b0, b1, b2, b3);
  }
  if (j < run.end) PvMidKey<Format, GH>(d, p, j, row, RowScaleAt<Format>(sp), a0, a1, a2, a3);
}

// Columns [c, c + 4 N): two accumulators per (head, column vector), one for the even rows and one for the odd, so
// eight independent FMA chains run.
template <class Format, size_t GH, class D>
HWY_INLINE void PvMidBlock(D d, const float* const* p, size_t n, const internal::RowSource& v, float* const* out,
                           size_t c, const float* alpha, bool rescale) {
  using V = hn::Vec<D>;
  V a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  V b0 = hn::Zero(d), b1 = hn::Zero(d), b2 = hn::Zero(d), b3 = hn::Zero(d);
  PvMidRun<Format, GH>(d, p, FirstRun(v, n), v, c, a0, a1, a2, a3, b0, b1, b2, b3);
  PvMidRun<Format, GH>(d, p, SecondRun(v, n), v, c, a0, a1, a2, a3, b0, b1, b2, b3);
  constexpr size_t CB = 4 / GH;
  PvStoreSlot<CB>(d, hn::Add(a0, b0), 0, out, c, alpha, rescale);
  PvStoreSlot<CB>(d, hn::Add(a1, b1), 1, out, c, alpha, rescale);
  PvStoreSlot<CB>(d, hn::Add(a2, b2), 2, out, c, alpha, rescale);
  PvStoreSlot<CB>(d, hn::Add(a3, b3), 3, out, c, alpha, rescale);
}

// Row j's contribution to the one-vector columns (lanes of them from row) of GH heads: a<h> for head h.
template <class Format, size_t GH, class D, class V>
HWY_INLINE void PvRestKey(D d, const float* const* p, size_t j, const unsigned char* row, float sc, size_t lanes, V& a0,
                          V& a1, V& a2, V& a3) {
  const V x = LoadRowVec<Format>(d, row, 0, lanes, hn::Set(d, sc), sc);
  a0 = hn::MulAdd(hn::Set(d, p[0][j]), x, a0);
  if constexpr (GH >= 2) a1 = hn::MulAdd(hn::Set(d, p[1][j]), x, a1);
  if constexpr (GH >= 4) a2 = hn::MulAdd(hn::Set(d, p[2][j]), x, a2), a3 = hn::MulAdd(hn::Set(d, p[3][j]), x, a3);
}

// The rows of one run into the one-vector columns [c, c + lanes): even rows into a, odd rows into b (PvMidRun's
// pairs), so a narrow head's P·V runs two FMA chains per head, not one four-cycle chain per row.
template <class Format, size_t GH, class D, class V>
HWY_INLINE void PvRestRun(D d, const float* const* p, const RowRun& run, const internal::RowSource& v, size_t c,
                          size_t lanes, V& a0, V& a1, V& a2, V& a3, V& b0, V& b1, V& b2, V& b3) {
  // Columns from c: the loads' offsets become constants (a register per column vector otherwise).
  const unsigned char* row = run.row + c * Format::kBytes;
  const unsigned char* sp = run.sp;
  const size_t sb = Format::kScaled ? v.scale_bytes : 0;  // 0: no step where there is no scale to read
  size_t j = run.begin;
  if (j < run.end && (j & 1) != 0) {
    PvRestKey<Format, GH>(d, p, j++, row, RowScaleAt<Format>(sp), lanes, b0, b1, b2, b3);
    row += v.row_bytes, sp += sb;
  }
  for (; j + 2 <= run.end; j += 2, row += 2 * v.row_bytes, sp += 2 * sb) {
    PvRestKey<Format, GH>(d, p, j, row, RowScaleAt<Format>(sp), lanes, a0, a1, a2, a3);
    PvRestKey<Format, GH>(d, p, j + 1, row + v.row_bytes, RowScaleAt<Format>(sp + sb), lanes, b0, b1, b2, b3);
  }
  if (j < run.end) PvRestKey<Format, GH>(d, p, j, row, RowScaleAt<Format>(sp), lanes, a0, a1, a2, a3);
}

// Columns [c, width) one vector at a time, two accumulators per head (even and odd rows, added at the end).
template <class Format, size_t GH, class D>
HWY_INLINE void PvRestColumns(D d, const float* const* p, size_t n, const internal::RowSource& v, float* const* out,
                              size_t c, size_t width, const float* alpha, bool rescale) {
  using V = hn::Vec<D>;
  const size_t N = hn::Lanes(d);
  for (; c < width; c += N) {
    const size_t lanes = width - c < N ? width - c : N;
    V a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
    V b0 = hn::Zero(d), b1 = hn::Zero(d), b2 = hn::Zero(d), b3 = hn::Zero(d);
    for (const RowRun& run : {FirstRun(v, n), SecondRun(v, n)}) {  // a loop: one copy of the run's code
      PvRestRun<Format, GH>(d, p, run, v, c, lanes, a0, a1, a2, a3, b0, b1, b2, b3);
    }
    PvStore(d, hn::Add(a0, b0), out[0] + c, lanes, alpha[0], rescale, true);
    if constexpr (GH >= 2) PvStore(d, hn::Add(a1, b1), out[1] + c, lanes, alpha[1], rescale, true);
    if constexpr (GH >= 4) {
      PvStore(d, hn::Add(a2, b2), out[2] + c, lanes, alpha[2], rescale, true);
      PvStore(d, hn::Add(a3, b3), out[3] + c, lanes, alpha[3], rescale, true);
    }
  }
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// Narrow heads on half vectors (DecodeOnHalves, width <= 8 on AVX-512): four FMA chains per head, row j into chain
// j mod 4 (c<k><h>: chain k, head h), whichever run of a ring's tile holds it, summed as (c0 + c2) + (c1 + c3) (as
// lib/kv_cache/kv_pair_lanes-inl.h repeats it, for the same bits). Two
// chains per head (PvRestColumns) left the pass on the FMA latency, 4 cycles per two rows and head: the d = 8 rows
// with an F16 cache took 11-14% longer (docs/performance.md, "Narrow heads on an Intel host").
template <class Format, size_t GH, class D, class V>
HWY_INLINE void PvNarrowRow(D d, const float* const* p, size_t j, const unsigned char* row, float sc, size_t lanes,
                            V& c00, V& c01, V& c02, V& c03, V& c10, V& c11, V& c12, V& c13, V& c20, V& c21, V& c22,
                            V& c23, V& c30, V& c31, V& c32, V& c33) {
  switch (j & 3) {
    case 0:
      return PvRestKey<Format, GH>(d, p, j, row, sc, lanes, c00, c01, c02, c03);
    case 1:
      return PvRestKey<Format, GH>(d, p, j, row, sc, lanes, c10, c11, c12, c13);
    case 2:
      return PvRestKey<Format, GH>(d, p, j, row, sc, lanes, c20, c21, c22, c23);
    default:
      return PvRestKey<Format, GH>(d, p, j, row, sc, lanes, c30, c31, c32, c33);
  }
}

template <class Format, size_t GH, class D>
HWY_INLINE void PvNarrowColumns(D d, const float* const* p, size_t n, const internal::RowSource& v, float* const* out,
                                size_t width, const float* alpha, bool rescale) {
  using V = hn::Vec<D>;
  V c00 = hn::Zero(d), c01 = hn::Zero(d), c02 = hn::Zero(d), c03 = hn::Zero(d);
  V c10 = hn::Zero(d), c11 = hn::Zero(d), c12 = hn::Zero(d), c13 = hn::Zero(d);
  V c20 = hn::Zero(d), c21 = hn::Zero(d), c22 = hn::Zero(d), c23 = hn::Zero(d);
  V c30 = hn::Zero(d), c31 = hn::Zero(d), c32 = hn::Zero(d), c33 = hn::Zero(d);
  const size_t sb = Format::kScaled ? v.scale_bytes : 0;         // 0: no step where there is no scale to read
  for (const RowRun& run : {FirstRun(v, n), SecondRun(v, n)}) {  // a loop: one copy of the run's code
    const unsigned char* row = run.row;
    const unsigned char* sp = run.sp;
    size_t j = run.begin;
    for (; j < run.end && (j & 3) != 0; ++j, row += v.row_bytes, sp += sb) {
      PvNarrowRow<Format, GH>(d, p, j, row, RowScaleAt<Format>(sp), width, c00, c01, c02, c03, c10, c11, c12, c13, c20,
                              c21, c22, c23, c30, c31, c32, c33);
    }
    for (; j + 4 <= run.end; j += 4, row += 4 * v.row_bytes, sp += 4 * sb) {
      PvRestKey<Format, GH>(d, p, j, row, RowScaleAt<Format>(sp), width, c00, c01, c02, c03);
      PvRestKey<Format, GH>(d, p, j + 1, row + v.row_bytes, RowScaleAt<Format>(sp + sb), width, c10, c11, c12, c13);
      PvRestKey<Format, GH>(d, p, j + 2, row + 2 * v.row_bytes, RowScaleAt<Format>(sp + 2 * sb), width, c20, c21, c22,
                            c23);
      PvRestKey<Format, GH>(d, p, j + 3, row + 3 * v.row_bytes, RowScaleAt<Format>(sp + 3 * sb), width, c30, c31, c32,
                            c33);
    }
    for (; j < run.end; ++j, row += v.row_bytes, sp += sb) {
      PvNarrowRow<Format, GH>(d, p, j, row, RowScaleAt<Format>(sp), width, c00, c01, c02, c03, c10, c11, c12, c13, c20,
                              c21, c22, c23, c30, c31, c32, c33);
    }
  }
  const auto sum = [&](V x0, V x1, V x2, V x3) { return hn::Add(hn::Add(x0, x2), hn::Add(x1, x3)); };
  PvStore(d, sum(c00, c10, c20, c30), out[0], width, alpha[0], rescale, true);
  if constexpr (GH >= 2) PvStore(d, sum(c01, c11, c21, c31), out[1], width, alpha[1], rescale, true);
  if constexpr (GH >= 4) {
    PvStore(d, sum(c02, c12, c22, c32), out[2], width, alpha[2], rescale, true);
    PvStore(d, sum(c03, c13, c23, c33), out[3], width, alpha[3], rescale, true);
  }
}
#endif  // HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3

#if HWY_TARGET != HWY_SCALAR
// Row j's contribution to two column vectors (row at the first) of four heads: x<h><t>, head h and column vector t.
template <class Format, class D, class V>
HWY_INLINE void Pv8Key(D d, const float* const* p, size_t j, const unsigned char* row, float sc, V& x00, V& x01, V& x10,
                       V& x11, V& x20, V& x21, V& x30, V& x31) {
  const size_t N = hn::Lanes(d);
  const V vs = hn::Set(d, sc);
  const V w0 = hn::Set(d, p[0][j]), w1 = hn::Set(d, p[1][j]), w2 = hn::Set(d, p[2][j]), w3 = hn::Set(d, p[3][j]);
  Fma4(LoadRowVec<Format>(d, row, 0, N, vs, sc), w0, w1, w2, w3, x00, x10, x20, x30);
  Fma4(LoadRowVec<Format>(d, row, N, N, vs, sc), w0, w1, w2, w3, x01, x11, x21, x31);
}

// Row j's contribution to columns [0, 4 N) of row (offset to the block's columns) of four heads: x<h><t>, head h and
// column vector t; the weights broadcast once for the four column vectors.
template <class Format, class D, class V>
HWY_INLINE void Pv16Key(D d, const float* const* p, size_t j, const unsigned char* row, float sc, V& x00, V& x01,
                        V& x02, V& x03, V& x10, V& x11, V& x12, V& x13, V& x20, V& x21, V& x22, V& x23, V& x30, V& x31,
                        V& x32, V& x33) {
  const size_t N = hn::Lanes(d);
  const V vs = hn::Set(d, sc);
  const V w0 = hn::Set(d, p[0][j]), w1 = hn::Set(d, p[1][j]), w2 = hn::Set(d, p[2][j]), w3 = hn::Set(d, p[3][j]);
  Fma4(LoadRowVec<Format>(d, row, 0, N, vs, sc), w0, w1, w2, w3, x00, x10, x20, x30);
  Fma4(LoadRowVec<Format>(d, row, N, N, vs, sc), w0, w1, w2, w3, x01, x11, x21, x31);
  Fma4(LoadRowVec<Format>(d, row, 2 * N, N, vs, sc), w0, w1, w2, w3, x02, x12, x22, x32);
  Fma4(LoadRowVec<Format>(d, row, 3 * N, N, vs, sc), w0, w1, w2, w3, x03, x13, x23, x33);
}

// Two or four whole column vectors of head h's output from o = out[h] + c (PvStore of each).
template <class D, class V>
HWY_INLINE void PvStore2(D d, float* o, V x0, V x1, float alpha, bool rescale) {
  PvStore(d, x0, o, hn::Lanes(d), alpha, rescale, false);
  PvStore(d, x1, o + hn::Lanes(d), hn::Lanes(d), alpha, rescale, false);
}
template <class D, class V>
HWY_INLINE void PvStore4(D d, float* o, V x0, V x1, V x2, V x3, float alpha, bool rescale) {
  PvStore2(d, o, x0, x1, alpha, rescale);
  PvStore2(d, o + 2 * hn::Lanes(d), x2, x3, alpha, rescale);
}

// The rows of one run into the 16 accumulators of a four-head pass: K = 4 column vectors (the 8-vector blocks'
// halves: x<h><t>, head h, column vector t), or K = 2 (the 4-vector block: x<h>0, x<h>1 the even rows, x<h>2, x<h>3
// the odd, in pairs as PvMidRun).
template <size_t K, class Format, class D, class V>
HWY_INLINE void Pv16Run(D d, const float* const* p, const RowRun& run, const internal::RowSource& v, size_t c, V& x00,
                        V& x01, V& x02, V& x03, V& x10, V& x11, V& x12, V& x13, V& x20, V& x21, V& x22, V& x23, V& x30,
                        V& x31, V& x32, V& x33, const RowsAhead& ahead) {
  // Columns from c: the loads' offsets become constants (a register per column vector otherwise).
  const unsigned char* row = run.row + c * Format::kBytes;
  const unsigned char* sp = run.sp;
  const size_t sb = Format::kScaled ? v.scale_bytes : 0;  // 0: no step where there is no scale to read
  size_t j = run.begin;
  if constexpr (K == 4) {
    for (; j < run.end; ++j, row += v.row_bytes, sp += sb) {
      if (ahead.rows != 0 && j + ahead.rows < run.end) ahead.Request(row + ahead.rows * v.row_bytes);
      Pv16Key<Format>(d, p, j, row, RowScaleAt<Format>(sp), x00, x01, x02, x03, x10, x11, x12, x13, x20, x21, x22, x23,
                      x30, x31, x32, x33);
    }
    return;
  }
  if (j < run.end && (j & 1) != 0) {
    Pv8Key<Format>(d, p, j++, row, RowScaleAt<Format>(sp), x02, x03, x12, x13, x22, x23, x32, x33);
    row += v.row_bytes, sp += sb;
  }
  for (; j + 2 <= run.end; j += 2, row += 2 * v.row_bytes, sp += 2 * sb) {
    if (ahead.rows != 0 && j + ahead.rows + 2 <= run.end) {
      ahead.Request(row + ahead.rows * v.row_bytes), ahead.Request(row + (ahead.rows + 1) * v.row_bytes);
    }
    Pv8Key<Format>(d, p, j, row, RowScaleAt<Format>(sp), x00, x01, x10, x11, x20, x21, x30, x31);
    Pv8Key<Format>(d, p, j + 1, row + v.row_bytes, RowScaleAt<Format>(sp + sb), x02, x03, x12, x13, x22, x23, x32, x33);
  }
  if (j < run.end) Pv8Key<Format>(d, p, j, row, RowScaleAt<Format>(sp), x00, x01, x10, x11, x20, x21, x30, x31);
}

// DecodePv's 8- and 4-vector column blocks for four query heads with 16 accumulators (kDecode16): each accumulator
// is the chain of one (head, column vector) over the rows in order (4-vector block: one for the even rows, one for
// the odd), as in PvWideBlock and PvMidBlock, so the bits are the same. Returns the first column not done.
template <class Format, class D>
HWY_INLINE size_t DecodePv4x16(D d, const float* const* p, size_t n, const internal::RowSource& v, float* const* out,
                               size_t width, const float* alpha, bool rescale) {
  using V = hn::Vec<D>;
  const size_t N = hn::Lanes(d);
  size_t c = 0;
  const size_t wide_end = width - width % (8 * N), mid_end = width - wide_end >= 4 * N ? wide_end + 4 * N : wide_end;
  const RowsAhead first = RowsAheadOf(width * Format::kBytes);  // the first block's pass requests whole rows
  for (; c < mid_end; c += c < wide_end ? 4 * N : 2 * N) {
    const RowsAhead ahead = c == 0 ? first : RowsAhead{};
    V a00 = hn::Zero(d), a01 = hn::Zero(d), a02 = hn::Zero(d), a03 = hn::Zero(d);
    V a10 = hn::Zero(d), a11 = hn::Zero(d), a12 = hn::Zero(d), a13 = hn::Zero(d);
    V a20 = hn::Zero(d), a21 = hn::Zero(d), a22 = hn::Zero(d), a23 = hn::Zero(d);
    V a30 = hn::Zero(d), a31 = hn::Zero(d), a32 = hn::Zero(d), a33 = hn::Zero(d);
    if (c < wide_end) {
      for (const RowRun& run : {FirstRun(v, n), SecondRun(v, n)}) {
        Pv16Run<4, Format>(d, p, run, v, c, a00, a01, a02, a03, a10, a11, a12, a13, a20, a21, a22, a23, a30, a31, a32,
                           a33, ahead);
      }
      PvStore4(d, out[0] + c, a00, a01, a02, a03, alpha[0], rescale);
      PvStore4(d, out[1] + c, a10, a11, a12, a13, alpha[1], rescale);
      PvStore4(d, out[2] + c, a20, a21, a22, a23, alpha[2], rescale);
      PvStore4(d, out[3] + c, a30, a31, a32, a33, alpha[3], rescale);
      continue;
    }
    for (const RowRun& run : {FirstRun(v, n), SecondRun(v, n)}) {
      Pv16Run<2, Format>(d, p, run, v, c, a00, a01, a02, a03, a10, a11, a12, a13, a20, a21, a22, a23, a30, a31, a32,
                         a33, ahead);
    }
    PvStore2(d, out[0] + c, hn::Add(a00, a02), hn::Add(a01, a03), alpha[0], rescale);
    PvStore2(d, out[1] + c, hn::Add(a10, a12), hn::Add(a11, a13), alpha[1], rescale);
    PvStore2(d, out[2] + c, hn::Add(a20, a22), hn::Add(a21, a23), alpha[2], rescale);
    PvStore2(d, out[3] + c, hn::Add(a30, a32), hn::Add(a31, a33), alpha[3], rescale);
  }
  return c;
}
#endif  // HWY_TARGET != HWY_SCALAR

// out[h][c] = (rescale ? out[h][c] alpha[h] : 0) + sum_{j < n} p[h][j] v_j[c] for c < width, GH (1, 2 or 4) heads.
template <class Format, size_t GH, class D>
HWY_INLINE void DecodePv(D d, const float* const* p, size_t n, const internal::RowSource& v, float* const* out,
                         size_t width, const float* alpha, bool rescale) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  if constexpr (DecodeOnHalves<D>()) {  // decode_scores-inl.h: a head within one half vector
    if (2 * width <= hn::Lanes(d))
      return PvNarrowColumns<Format, GH>(hn::Half<D>(), p, n, v, out, width, alpha, rescale);
  }
#endif
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
