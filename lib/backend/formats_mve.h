// SPDX-License-Identifier: Apache-2.0
// The KV cache's storage formats read into Helium (MVE) registers for the decode kernels (decode_mve.h): the MVE
// counterparts of lib/common/{f32,f16,q8}-inl.h with formats-inl.h's contract. Load<kVector>(row, c, lanes, scale)
// gives `lanes` (1 .. 4) elements of a stored row from column c as floats, lane by lane the value Element (the
// scalar read) returns, and +0 in the lanes past them; a tail is a predicated load, so nothing past the row is read.
// kVector is VectorLoads(scale) of the row, asked once per row (or pass of rows) rather than per vector. So a kernel
// over these formats gives the bits it gives on an F32 row holding those values (the converted route's).
// kKeysPerPass and kVectorsPerPass: the keys of a scores pass and the column vectors of a P·V pass, as many as MVE's
// eight Q registers hold beside the format's conversion without spilling much (frames: the 1 KiB stack bound).
#ifndef EDGEATTN_LIB_BACKEND_FORMATS_MVE_H_
#define EDGEATTN_LIB_BACKEND_FORMATS_MVE_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lib/common/f16.h"
#include "lib/common/mve.h"
#include "lib/common/q8.h"

#if EDGEATTN_MVE_FLOAT
namespace edgeattn {
namespace mve {

inline const float* FloatRow(const unsigned char* row) {
  return static_cast<const float*>(static_cast<const void*>(row));  // rows of floats are 4-byte aligned
}

// The formats without a row scale: every row is read by vectors.
struct UnscaledRowsMve {
  static constexpr bool kScaled = false;
  static bool VectorLoads(float /*scale*/) { return true; }
};

struct F32RowsMve : UnscaledRowsMve {
  static constexpr size_t kBytes = 4, kKeysPerPass = 4, kVectorsPerPass = 4;
  template <bool kVector>
  static float32x4_t Load(const unsigned char* row, size_t c, size_t lanes, float /*scale*/) {
    return LoadLanes(FloatRow(row) + c, lanes);
  }
};

// binary16 bits (one per 32-bit lane) to floats, exactly and without float arithmetic on a subnormal (which MVE
// would flush): a normal half's exponent re-biased by an integer add (twice for infinities and NaNs, which get the
// all-ones exponent), a subnormal half m (and a zero) converted as the fixed-point number m 2^-24 (VCVT with 24
// fraction bits: exact, and the result is a normal float or 0), the sign put back last. No predicates: GCC 12 moves
// each through a core register (VMRS, SXTH, VMSR) and a VPST; masks from shifts take one instruction each.
// VCVTB.F32.F16 would take one instruction, but whether MVE flushes a subnormal half it converts (FZ16 in its
// standard FPSCR value) is not something QEMU can show for the hardware.
inline float32x4_t HalfToFloatMve(uint32x4_t h) {
  const uint32x4_t h15 = vandq_u32(h, vdupq_n_u32(0x7FFFu));
  const uint32x4_t sign = vshlq_n_u32(veorq_u32(h, h15), 16);
  const uint32x4_t special = vshrq_n_u32(vaddq_n_u32(h15, 0x0400u), 15);  // 1 for infinities and NaNs (>= 0x7C00)
  const uint32x4_t bits = vmlaq_n_u32(vaddq_n_u32(vshlq_n_u32(h15, 13), 112u << 23), special, 112u << 23);
  const uint32x4_t tiny =  // all ones for zeros and subnormals (h15 < 0x400)
      vreinterpretq_u32_s32(vshrq_n_s32(vreinterpretq_s32_u32(vsubq_n_u32(h15, 0x0400u)), 31));
  const uint32x4_t fixed = vreinterpretq_u32_f32(vcvtq_n_f32_u32(h15, 24));
  return vreinterpretq_f32_u32(vorrq_u32(vorrq_u32(vandq_u32(fixed, tiny), vbicq_u32(bits, tiny)), sign));
}

// Rows 2-byte aligned (the fused route's storage check).
struct F16RowsMve : UnscaledRowsMve {
  static constexpr size_t kBytes = 2, kKeysPerPass = 2, kVectorsPerPass = 2;
  template <bool kVector>
  static float32x4_t Load(const unsigned char* row, size_t c, size_t lanes, float /*scale*/) {
    const uint16_t* p = static_cast<const uint16_t*>(static_cast<const void*>(row)) + c;
    return HalfToFloatMve(lanes == kLanes ? vldrhq_u32(p) : vldrhq_z_u32(p, FirstLanes(lanes)));
  }
};

// q * scale per lane: int8 widened by the load, converted exactly, one product each. A subnormal scale (a row whose
// max |x| is below 127 * 2^-126) would flush in VMUL where the scalar product keeps it: such rows are read element
// by element on the FPU (q8-inl.h, VectorLoads). With a normal scale every product is 0 or at least the scale, a
// normal float, so MVE's products are the FPU's.
struct Q8RowsMve {
  static constexpr size_t kBytes = 1, kKeysPerPass = 4, kVectorsPerPass = 4;
  static constexpr bool kScaled = true;  // one float scale per row
  // Scales are never negative: 0 < scale < FLT_MIN as one unsigned comparison of the bits, in core registers.
  static bool VectorLoads(float scale) {
    uint32_t bits;
    memcpy(&bits, &scale, sizeof(bits));
    return bits - 1u >= 0x007FFFFFu;
  }
  template <bool kVector>
  static float32x4_t Load(const unsigned char* row, size_t c, size_t lanes, float scale) {
    if (!kVector) return ElementByElement(row, c, lanes, scale);
    const int8_t* p = static_cast<const int8_t*>(static_cast<const void*>(row)) + c;
    const int32x4_t q = lanes == kLanes ? vldrbq_s32(p) : vldrbq_z_s32(p, FirstLanes(lanes));
    return vmulq_n_f32(vcvtq_f32_s32(q), scale);
  }
  // Out of line (rows with a subnormal scale are rare): inlined, its scalar steps took registers and stack from the
  // kernels' vector loops (clang-14: PvColumnsMve's frame 240 bytes, AttentionCached past the 1 KiB stack bound).
  __attribute__((noinline)) static float32x4_t ElementByElement(const unsigned char* row, size_t c, size_t lanes,
                                                                float scale) {
    float32x4_t v = vdupq_n_f32(0.0f);
    v = vsetq_lane_f32(internal::LoadQ8Element(row, c, scale), v, 0);
    if (lanes > 1) v = vsetq_lane_f32(internal::LoadQ8Element(row, c + 1, scale), v, 1);
    if (lanes > 2) v = vsetq_lane_f32(internal::LoadQ8Element(row, c + 2, scale), v, 2);
    if (lanes > 3) v = vsetq_lane_f32(internal::LoadQ8Element(row, c + 3, scale), v, 3);
    return v;
  }
};

}  // namespace mve
}  // namespace edgeattn
#endif  // EDGEATTN_MVE_FLOAT

#endif  // EDGEATTN_LIB_BACKEND_FORMATS_MVE_H_
