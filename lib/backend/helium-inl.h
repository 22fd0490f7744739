// SPDX-License-Identifier: Apache-2.0
// The HELIUM backend (docs/architecture.md, "Backends"): Helium (MVE float, Armv8.1-M: Cortex-M55, M85) kernels
// for the static target's entry points, selected by CMake's EDGEATTN_BACKEND=HELIUM (the cortex-m55 presets).
// Highway has no Helium target, so without this the M55 runs Highway's one-lane SCALAR (GCC) or EMU128 (clang)
// code, which costs more instructions than the plain scalar path. Each function here has the name and signature
// of the module's exported function (lib/<module>/<module>.cc, HWY_EXPORT) and forwards to the module's MVE
// kernel (lib/<module>/*_mve.h): the entry points check their arguments before they dispatch, so a kernel only
// sees valid problems. The decode path of Attention and AttentionCached runs its steps on MVE (DecodeKernels:
// scores, tile max, online softmax, P·V; F32, F16 and Q8 rows), and so does the row path (RowKernels: calls with an
// additive mask, every call under a directed rounding mode, AttentionWeights); what this file does not declare
// (Rope with computed angles, positional encoding, the tiled path) is the static target's Highway code
// (lib/common/backend-inl.h). MVE's float instructions flush subnormals and round to nearest whatever the FPSCR says
// (lib/common/mve.h): the kernels' bounds are the flush-to-zero forms the headers state, and tests ask
// DispatchedVectorFlushesSubnormals.
#ifndef EDGEATTN_LIB_BACKEND_HELIUM_INL_H_
#define EDGEATTN_LIB_BACKEND_HELIUM_INL_H_

#include <stddef.h>

#include <type_traits>

#include "hwy/highway.h"
#include "lib/activation/activation_mve.h"
#include "lib/attention/decode-inl.h"
#include "lib/backend/decode_mve.h"
#include "lib/backend/formats_mve.h"
#include "lib/backend/row_mve.h"
#include "lib/common/mve.h"
#include "lib/common/row_source.h"
#include "lib/dot/dot_mve.h"
#include "lib/exp/exp_mve.h"
#include "lib/linear/linear_mve.h"
#include "lib/linear_q8/linear_q8_mve.h"
#include "lib/norm/norm_mve.h"
#include "lib/rope/rope_mve.h"
#include "lib/softmax/softmax_mve.h"

#if !EDGEATTN_MVE_FLOAT
#error "the HELIUM backend needs MVE floating point (-mcpu=cortex-m55 without -mfpu; lib/common/arch.h)"
#endif

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace backend {

constexpr bool kVectorFlushesSubnormals = true;  // MVE float flushes subnormal inputs and results

inline void DotArrays(const float* a, const float* b, size_t n, float* result) { mve::DotArraysMve(a, b, n, result); }

inline void ExpArray(const float* in, float* out, size_t n) { mve::ExpArrayMve(in, out, n); }

inline void SoftmaxRows(const float* in, float* out, size_t rows, size_t cols) {
  mve::SoftmaxRowsMve(in, out, rows, cols);
}

inline void RmsNormRowsSimd(const float* x, size_t rows, size_t cols, const float* weight, float eps, float* y) {
  mve::RmsNormRowsMve(x, rows, cols, weight, eps, y);
}

inline void LayerNormRowsSimd(const float* x, size_t rows, size_t cols, const float* weight, const float* bias,
                              float eps, float* y) {
  mve::LayerNormRowsMve(x, rows, cols, weight, bias, eps, y);
}

inline void ActivationArray(const float* x, float* y, size_t n, Activation act) {
  mve::ActivationArrayMve(x, y, n, act);
}

inline void GatedActivationArray(const float* gate, const float* up, float* y, size_t n, Activation act) {
  mve::GatedActivationArrayMve(gate, up, y, n, act);
}

inline void AddArrays(const float* a, const float* b, float* y, size_t n) { mve::AddArraysMve(a, b, y, n); }

inline void RopeWithTableRows(const internal::RopeProblem& p, const float* table, size_t table_first_position, float* x,
                              size_t seq_len, size_t first_position) {
  mve::RopeWithTableMve(p, table, table_first_position, x, seq_len, first_position);
}

inline void LinearRows(const float* x, size_t rows, size_t in, const float* w, const float* bias, size_t out,
                       float* y) {
  mve::LinearMve(x, rows, in, w, bias, out, y);
}

inline void LinearTransposedRows(const float* x, size_t rows, size_t in, const float* w, const float* bias, size_t out,
                                 size_t o_begin, size_t o_end, float* y) {
  mve::LinearTransposedMve(x, rows, in, w, bias, out, o_begin, o_end, y);
}

inline void LinearQ8Rows(const internal::LinearQ8Problem& p) { mve::LinearQ8Mve(p); }

inline void LinearQ8F32Rows(const internal::LinearQ8Problem& p) { mve::LinearQ8F32Mve(p); }

// The row path's kernels on MVE (lib/backend/row_mve.h).
using RowKernels = mve::RowKernelsMve;

// The MVE reader (lib/backend/formats_mve.h) of each storage format.
template <class Format>
using MveRows =
    std::conditional_t<std::is_same_v<Format, F16Format>, mve::F16RowsMve,
                       std::conditional_t<std::is_same_v<Format, Q8Format>, mve::Q8RowsMve, mve::F32RowsMve>>;

// The decode path's steps on MVE: scores, the tile's max, the online-softmax step and P·V. kFormatsInRegisters:
// Scores and Pv read F16 and Q8 rows in registers (the KV cache's fused route), as they read F32 rows; a misaligned
// cache takes the converted route to f32 tiles, with the same bits. kFusedHeads 1: the fused route runs a group's
// query heads one at a time, as the converted route does. Sharing a K or V vector between heads would need each
// head's accumulators beside the pass's, more than MVE's eight Q registers hold, and the four-head tile step's
// arrays and the wider kernels' spills put AttentionCached past the 1 KiB stack bound (measured: 1440 bytes).
struct DecodeKernels : ::edgeattn::HWY_NAMESPACE::DecodeKernels {
  static constexpr bool kFormatsInRegisters = true;
  static constexpr size_t kFusedHeads = 1;
  template <class Format, size_t GH, class D>
  static void Scores(D d, const float* const* q, const internal::RowSource& k, size_t head_dim, size_t nb, float scale,
                     float* const* s) {
    static_cast<void>(d);  // Highway's tag: unused by the MVE kernels
    mve::DecodeScoresMve<MveRows<Format>, GH>(q, k, head_dim, nb, scale, s);
  }
  template <class D>
  static float TileMax(D d, const float* s, size_t n) {
    static_cast<void>(d);
    return mve::DecodeTileMaxMve(s, n);
  }
  template <bool kToNearest = true, class D>
  static float SoftmaxStep(D d, float* s, size_t nb, float tile_max, bool first, float& m, float& l) {
    static_cast<void>(d);
    return mve::DecodeSoftmaxStepMve(s, nb, tile_max, first, m, l);
  }
  template <class Format, size_t GH, class D>
  static void Pv(D d, const float* const* p, size_t n, const internal::RowSource& v, float* const* out, size_t width,
                 const float* alpha, bool rescale) {
    static_cast<void>(d);
    mve::DecodePvMve<MveRows<Format>, GH>(p, n, v, out, width, alpha, rescale);
  }
};

}  // namespace backend
}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // EDGEATTN_LIB_BACKEND_HELIUM_INL_H_
