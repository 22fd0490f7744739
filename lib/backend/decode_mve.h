// SPDX-License-Identifier: Apache-2.0
// The decode path's steps on Helium (MVE) (lib/attention/decode-inl.h, DecodeKernels): the scores of a tile of keys,
// the tile's max, the online-softmax step and P·V of the tile into the output rows, K and V rows in any storage
// format (F32, F16, Q8: formats_mve.h, read in registers with the values the converted f32 rows hold, so both KV
// cache routes give the same bits). Contract: attention.h's bound, whose terms the tiled path's arithmetic meets
// (4-lane partial sums, fused multiply-adds, the exp of softmax_mve.h); MVE flushes subnormals, so its underflow
// term is the flush-to-zero form. Each query head is computed on its own with the same operations for any number
// of heads GH sharing a KV head, so a head's bits do not depend on GH. Tails are predicated: nothing past a row's
// last column or a tile's last score is read or written.
#ifndef EDGEATTN_LIB_BACKEND_DECODE_MVE_H_
#define EDGEATTN_LIB_BACKEND_DECODE_MVE_H_

#include <float.h>
#include <stddef.h>
#include <string.h>

#include <type_traits>

#include "lib/backend/formats_mve.h"
#include "lib/common/float_util.h"
#include "lib/common/mve.h"
#include "lib/common/row_source.h"
#include "lib/exp/exp_scalar.h"
#include "lib/linear/linear_mve.h"
#include "lib/softmax/softmax_mve.h"

#if EDGEATTN_MVE_FLOAT
namespace edgeattn {
namespace mve {

// Whether format Fmt's scores loop (kScoresOutOfLine) and P·V loops (kPvOutOfLine) run out of line. clang-14
// hoists the vector constants of F16's conversion (HalfToFloatMve) out of a loop and spills them: inlined into
// DecodeScoresMve they took a 416-byte frame, into DecodePvMve 272 bytes; and it inlines P·V's whole blocks into
// DecodePvMve but calls the rest's block, so two loops' frames were on the stack at once. Both on AttentionCached's
// deepest stack path, past the 1 KiB bound. Out of line, each loop's frame is off the stack when the loop returns.
// GCC keeps all of them inline: out of line, its F32 P·V loop cost a third more instructions per decode step, and a
// call per pass of four keys costs the d = 8 rows' scores 47% more.
#if defined(__clang__)
template <class Fmt>
constexpr bool kScoresOutOfLine = std::is_same_v<Fmt, F16RowsMve>;
template <class Fmt>
constexpr bool kPvOutOfLine = true;
#else
template <class Fmt>
constexpr bool kScoresOutOfLine = false;
template <class Fmt>
constexpr bool kPvOutOfLine = false;
#endif

// kKeys dot products of q_row with stored rows of n elements (the scales: Q8's, else unread): DotRowPtrs's
// operations in its order on the rows' values (4-lane partial sums, one VFMA per vector, SumLanes), the query
// vector loaded once for all of them. F32 rows take DotRowPtrs itself (post-indexed loads, linear_mve.h).
template <class Fmt, size_t kKeys, bool kVector>
__attribute__((always_inline)) inline void DotStoredRows(const float* q_row, const unsigned char* const* rows,
                                                         const float* scales, size_t n, float* dots) {
  if constexpr (std::is_same_v<Fmt, F32RowsMve>) {
    const float* f[kKeys];
    for (size_t k = 0; k < kKeys; ++k) f[k] = FloatRow(rows[k]);
    return DotRowPtrs<kKeys>(q_row, f, n, dots);
  }
  float32x4_t acc[kKeys];
  for (size_t k = 0; k < kKeys; ++k) acc[k] = vdupq_n_f32(0.0f);
  size_t c = 0;
  for (; c + kLanes <= n; c += kLanes) {
    const float32x4_t xv = vldrwq_f32(q_row + c);
    for (size_t k = 0; k < kKeys; ++k) {
      acc[k] = vfmaq_f32(acc[k], xv, Fmt::template Load<kVector>(rows[k], c, kLanes, scales[k]));
    }
  }
  if (c < n) {
    const float32x4_t xv = LoadTail(q_row + c, n - c);
    for (size_t k = 0; k < kKeys; ++k) {
      acc[k] = vfmaq_f32(acc[k], xv, Fmt::template Load<kVector>(rows[k], c, n - c, scales[k]));
    }
  }
  for (size_t k = 0; k < kKeys; ++k) dots[k] = SumLanes(acc[k]);
}

template <class Fmt, size_t kKeys, bool kVector>
__attribute__((noinline)) void DotStoredRowsOutOfLine(const float* q_row, const unsigned char* const* rows,
                                                      const float* scales, size_t n, float* dots) {
  DotStoredRows<Fmt, kKeys, kVector>(q_row, rows, scales, n, dots);
}

// Rows t .. t + kKeys - 1 of k and their scales; returns whether all of them take vector loads.
template <class Fmt, size_t kKeys>
inline bool KeyRows(const internal::RowSource& k, size_t t, const unsigned char** rows, float* scales) {
  bool vector = true;
  for (size_t j = 0; j < kKeys; ++j) {
    rows[j] = k.Row(t + j);
    scales[j] = Fmt::kScaled ? k.Scale(t + j) : 0.0f;
    vector = vector && Fmt::VectorLoads(scales[j]);
  }
  return vector;
}

// s[h][t] = (q[h] . k_t) * scale for kKeys keys from t and GH heads.
// Inlined into DecodeScoresMve (clang-14 kept it out of line: its frame and its caller's both on the stack).
template <class Fmt, size_t kKeys, size_t GH>
__attribute__((always_inline)) inline void ScoresOfKeys(const float* const* q, const internal::RowSource& k, size_t t,
                                                        size_t head_dim, float scale, float* const* s) {
  const unsigned char* rows[kKeys];
  float scales[kKeys];
  float dots[kKeys];
  const bool vector = KeyRows<Fmt, kKeys>(k, t, rows, scales);
  for (size_t h = 0; h < GH; ++h) {
    if constexpr (kScoresOutOfLine<Fmt>) {  // an unscaled format: vector loads
      DotStoredRowsOutOfLine<Fmt, kKeys, true>(q[h], rows, scales, head_dim, dots);
    } else if (!Fmt::kScaled || vector) {  // an unscaled format always takes vector loads
      DotStoredRows<Fmt, kKeys, true>(q[h], rows, scales, head_dim, dots);
    } else {
      // A row read element by element (a Q8 row with a subnormal scale: rare) one key at a time: kKeys such
      // accumulators spilled into a 144-byte frame under clang-14, on the deepest stack path (each key's dot has
      // the same bits either way).
      for (size_t j = 0; j < kKeys; ++j) DotStoredRows<Fmt, 1, false>(q[h], rows + j, scales + j, head_dim, dots + j);
    }
    for (size_t j = 0; j < kKeys; ++j) s[h][t + j] = dots[j] * scale;
  }
}

// s[h][t] = (q[h] . k_t) * scale for t < nb and GH heads, k's rows in format Fmt (formats_mve.h): kKeys keys per pass
// over a query row, so each query vector load feeds kKeys VFMAs. Four F32 keys spill some of the pass's state (a
// 152-byte frame, 96 with two keys) for 6% fewer instructions per decode step (docs/performance.md, step H1); F16's
// conversion needs registers of its own, so it takes two. Out of line, as DecodePvMve: inlined, their registers grew
// the decode drivers' frames (the 1 KiB stack bound).
template <class Fmt, size_t GH>
__attribute__((noinline)) void DecodeScoresMve(const float* const* q, const internal::RowSource& k, size_t head_dim,
                                               size_t nb, float scale, float* const* s) {
  constexpr size_t kKeys = Fmt::kKeysPerPass;
  size_t t = 0;
  for (; t + kKeys <= nb; t += kKeys) ScoresOfKeys<Fmt, kKeys, GH>(q, k, t, head_dim, scale, s);
  for (; t < nb; ++t) ScoresOfKeys<Fmt, 1, GH>(q, k, t, head_dim, scale, s);
}

// Columns [c, c + lanes_total) of one head's output, (kVectors - 1) kLanes < lanes_total <= kVectors kLanes, in
// kVectors accumulators (the last predicated when short): per V row j (in order, through the ring's two runs; rows
// in format Fmt) acc += p[j] v_j, then out = out alpha + acc (a later tile) or acc. kFull: lanes_total = kVectors
// kLanes (a whole block: no predicates).
template <class Fmt, size_t kVectors, bool kFull>
__attribute__((always_inline)) inline void PvColumnsMve(const float* p, size_t n, const internal::RowSource& v,
                                                        float* out, size_t c, size_t lanes_total, float alpha,
                                                        bool rescale) {
  if constexpr (kFull) lanes_total = kVectors * kLanes;
  float32x4_t acc[kVectors];
  for (size_t k = 0; k < kVectors; ++k) acc[k] = vdupq_n_f32(0.0f);
  const size_t wrap = v.Wrap(n);
  for (size_t run = 0; run < 2; ++run) {
    const size_t begin = run == 0 ? 0 : wrap, end = run == 0 ? wrap : n;
    const unsigned char* row = (run == 0 ? v.Row(0) : v.base) + c * Fmt::kBytes;
    const unsigned char* scale_at = Fmt::kScaled ? (run == 0 ? v.ScalePtr(0) : v.scale) : nullptr;
    for (size_t j = begin; j < end; ++j, row += v.row_bytes) {
      float scale = 0.0f;
      if constexpr (Fmt::kScaled) memcpy(&scale, scale_at, sizeof(scale)), scale_at += v.scale_bytes;
      const bool vector = Fmt::VectorLoads(scale);
      for (size_t k = 0; k < kVectors; ++k) {
        const size_t lanes = lanes_total - k * kLanes < kLanes ? lanes_total - k * kLanes : kLanes;
        const float32x4_t x = vector ? Fmt::template Load<true>(row, k * kLanes, lanes, scale)
                                     : Fmt::template Load<false>(row, k * kLanes, lanes, scale);
        acc[k] = vfmaq_n_f32(acc[k], x, p[j]);
      }
    }
  }
  for (size_t k = 0; k < kVectors; ++k) {
    const size_t lanes = lanes_total - k * kLanes < kLanes ? lanes_total - k * kLanes : kLanes;
    float* o = out + c + k * kLanes;
    float32x4_t y = acc[k];
    if (rescale) y = vfmaq_n_f32(y, LoadLanes(o, lanes), alpha);
    StoreLanes(o, y, lanes);
  }
}

template <class Fmt, size_t kVectors, bool kFull>
__attribute__((noinline)) void PvColumnsMveOutOfLine(const float* p, size_t n, const internal::RowSource& v, float* out,
                                                     size_t c, size_t lanes_total, float alpha, bool rescale) {
  PvColumnsMve<Fmt, kVectors, kFull>(p, n, v, out, c, lanes_total, alpha, rescale);
}

// PvColumnsMve, out of line where kPvOutOfLine says so.
template <class Fmt, size_t kVectors, bool kFull>
inline void PvColumns(const float* p, size_t n, const internal::RowSource& v, float* out, size_t c, size_t lanes_total,
                      float alpha, bool rescale) {
  if constexpr (kPvOutOfLine<Fmt>) {
    PvColumnsMveOutOfLine<Fmt, kVectors, kFull>(p, n, v, out, c, lanes_total, alpha, rescale);
  } else {
    PvColumnsMve<Fmt, kVectors, kFull>(p, n, v, out, c, lanes_total, alpha, rescale);
  }
}

// The last rest (0 < rest <= kVectors kLanes) columns from c: one block of 1 to kVectors vectors.
template <class Fmt, size_t kVectors>
inline void PvRestMve(const float* p, size_t n, const internal::RowSource& v, float* out, size_t c, size_t rest,
                      float alpha, bool rescale) {
  if constexpr (kVectors > 1) {
    if (rest <= (kVectors - 1) * kLanes) return PvRestMve<Fmt, kVectors - 1>(p, n, v, out, c, rest, alpha, rescale);
  }
  PvColumns<Fmt, kVectors, false>(p, n, v, out, c, rest, alpha, rescale);
}

// out[h][c] = (rescale ? out[h][c] alpha[h] : 0) + sum_{j < n} p[h][j] v_j[c] for c < width, GH heads, v's rows in
// format Fmt: blocks of Fmt::kVectorsPerPass vectors of columns (accumulators, the V row's vectors loaded once per
// key), then the rest in one block of fewer.
template <class Fmt, size_t GH>
__attribute__((noinline)) void DecodePvMve(const float* const* p, size_t n, const internal::RowSource& v,
                                           float* const* out, size_t width, const float* alpha, bool rescale) {
  constexpr size_t kBlock = Fmt::kVectorsPerPass * kLanes;
  for (size_t h = 0; h < GH; ++h) {
    size_t c = 0;
    for (; c + kBlock <= width; c += kBlock) {
      PvColumns<Fmt, Fmt::kVectorsPerPass, true>(p[h], n, v, out[h], c, kBlock, alpha[h], rescale);
    }
    if (c < width) PvRestMve<Fmt, Fmt::kVectorsPerPass>(p[h], n, v, out[h], c, width - c, alpha[h], rescale);
  }
}

// The largest of the n >= 1 scores in s, or NaN if one of them is not finite (decode-inl.h, DecodeTileMax). A
// non-finite score is found by its bits: |x| as an unsigned integer at least infinity's (mve.h: no float comparison
// decides a NaN lane); VMAXNM ignores NaN lanes, so the float max is only read when every lane was finite.
inline float DecodeTileMaxMve(const float* s, size_t n) {
  const float32x4_t lowest = vdupq_n_f32(-FLT_MAX);
  const uint32x4_t magnitude_mask = vdupq_n_u32(0x7FFFFFFFu);
  float32x4_t m = lowest;
  uint32x4_t magnitude = vdupq_n_u32(0);
  size_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    const float32x4_t x = vldrwq_f32(s + j);
    magnitude = vmaxq_u32(magnitude, vandq_u32(vreinterpretq_u32_f32(x), magnitude_mask));
    m = vmaxnmq_f32(m, x);
  }
  if (j < n) {  // lanes past the scores load as +0: their magnitude is 0, and they keep m's lanes
    const float32x4_t x = LoadTail(s + j, n - j);
    magnitude = vmaxq_u32(magnitude, vandq_u32(vreinterpretq_u32_f32(x), magnitude_mask));
    m = vpselq_f32(vmaxnmq_f32(m, x), m, FirstLanes(n - j));
  }
  if (vmaxvq_u32(0, magnitude) >= 0x7F800000u) return internal::kQuietNaN;
  return vmaxnmvq_f32(-FLT_MAX, m);
}

// e^(x - m) of a tile's scores x <= m (finite), neg_m = -m: softmax_mve.h's ExpMinusMax (the rounding of x - m
// folded in by 2Sum, the reduction of ExpScaledBy64, +0 below kShiftedMinArg) with P(r) by Horner's scheme, which
// exp_scalar.h measures at 1.08 ULP against Estrin's 1.19. It holds one vector constant where Estrin's holds three:
// with the reduction's, the 2Sum's and the loop's vectors, Estrin's kept GCC's loop spilling constants to the stack.
inline float32x4_t DecodeWeightMve(float32x4_t x, float32x4_t neg_m) {
  using C = internal::ExpConstants;
  const float32x4_t d = vaddq_f32(x, neg_m);
  const float32x4_t bb = vsubq_f32(d, x);
  const float32x4_t d_lo = vaddq_f32(vsubq_f32(x, vsubq_f32(d, bb)), vsubq_f32(neg_m, bb));
  const float32x4_t t = vfmaq_n_f32(vdupq_n_f32(C::kRoundMagicBiased), d, C::kLog2e);
  const float32x4_t n_float = vsubq_n_f32(t, C::kRoundMagicBiased);
  const float32x4_t r = vaddq_f32(vfmaq_n_f32(d, n_float, -C::kLn2Hi), vfmaq_n_f32(d_lo, n_float, -C::kLn2Lo));
  const float32x4_t s = AsFloat(vshlq_n_s32(AsInt(t), 23));  // 2^(n+64)
  const float32x4_t e = vmulq_n_f32(vfmaq_f32(s, vmulq_f32(s, r), ExpPolynomial(r)), C::kTwoToMinus64);
  static_assert(C::kShiftedMinArg == -87.3365478515625f, "0xC2AEAC50 is the bit pattern of kShiftedMinArg");
  const mve_pred16_t tiny = vcmphiq_u32(vreinterpretq_u32_f32(d), vdupq_n_u32(0xC2AEAC50u));
  return vpselq_f32(vdupq_n_f32(0.0f), e, tiny);
}

// The online-softmax step of one head after a tile of nb finite scores s (decode-inl.h, DecodeSoftmaxStep, whose
// contract this keeps): s becomes the weights e^(s - m_new) with the rounding of s - m_new folded in (softmax_mve.h,
// ExpMinusMax), summed in four lanes and the lanes combined as SumLanes does; m and l updated; returns alpha =
// e^(m_old - m_new) (0 on the first tile). MVE rounds to nearest whatever the caller's mode, so the exp's range
// reduction is to nearest with or without kToNearest; alpha and l, one value each, stay on the scalar FPU as on
// every path. Out of line: one copy, called once per head and tile.
__attribute__((noinline)) inline float DecodeSoftmaxStepMve(float* s, size_t nb, float tile_max, bool first, float& m,
                                                            float& l) {
  const float m_new = tile_max > m ? tile_max : m;
  const float alpha = first ? 0.0f : internal::ExpRr2P6Shifted(m - m_new, internal::TwoSumError(m, -m_new, m - m_new));
  const float32x4_t neg_m = vdupq_n_f32(-m_new);
  float32x4_t sum = vdupq_n_f32(0.0f);
  size_t j = 0;
  for (; j + kLanes <= nb; j += kLanes) {
    const float32x4_t e = DecodeWeightMve(vldrwq_f32(s + j), neg_m);
    vstrwq_f32(s + j, e);
    sum = vaddq_f32(sum, e);
  }
  if (j < nb) {  // lanes past the scores are -inf (the predicated load's zeros replaced): e^-inf = +0
    const float32x4_t x = vpselq_f32(LoadTail(s + j, nb - j), vdupq_n_f32(-internal::kInfinity), FirstLanes(nb - j));
    const float32x4_t e = DecodeWeightMve(x, neg_m);
    StoreTail(s + j, e, nb - j);
    sum = vaddq_f32(sum, e);
  }
  const float tile_sum = SumLanes(sum);
  l = first ? tile_sum : l * alpha + tile_sum;
  m = m_new;
  return alpha;
}

}  // namespace mve
}  // namespace edgeattn
#endif  // EDGEATTN_MVE_FLOAT

#endif  // EDGEATTN_LIB_BACKEND_DECODE_MVE_H_
