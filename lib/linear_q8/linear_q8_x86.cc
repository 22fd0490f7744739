// SPDX-License-Identifier: Apache-2.0
// linear_q8's x86 int8 kernel: AVX512-VNNI (vpdpbusd), outputs in lanes, behind a run-time check. It also runs
// the finish step (Q8KernelFinishes): each group's int sums go from registers straight into the float steps.
//
// vpdpbusd multiplies unsigned by signed bytes and adds each lane's four products into an int32 lane. For
// signed weights times signed activations the weights go in as w ^ 0x80 = w + 128 (unsigned, and exact for any
// int8, -128 included) and the quantised activations as they are; the sum then holds 128 * sum(qx) too, so each
// group's sum starts at the row's x_offset = -128 * sum(qx) (computed once per row when x is quantised). int32
// lanes wrap, and the final sum fits: |qx| <= 127 and group_size <= kQ8MaxGroupSize.
//
// Three layouts here (the rows of a block go through transposed panels: linear_q8_x86_rows.cc), the finish with
// outputs in lanes in each:
//  - one row (decode, group_size % 16 == 0): each output's 64 bytes against the same 64 bytes of x, and the 16
//    vectors of partial sums reduced with outputs in lanes.
//  - one row with group_size 32 or 64 (Q8StreamRow, the decode of a model): the same reduction over 16 chunks in
//    address order, so that W is read as one stream; the products go through the workspace and are transposed
//    into outputs-in-lanes for the finish's additions.
//  - one row with group_size 4 (DecodeGroupsOf4): an output's 16 groups in one vpdpbusd, their products with
//    groups in lanes, then one transpose to outputs in lanes.
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lib/linear_q8/linear_q8_kernels.h"

#if EDGEATTN_Q8_X86_KERNELS
#include "lib/linear_q8/linear_q8_x86.h"

namespace edgeattn {
namespace internal {
namespace {

// How far ahead of a window the stream kernel requests W's lines (into L1), each line beside the load of the
// chunk it is ahead of: sixteen requests in a row (one window's lines at once) filled the core's misses in flight
// and stalled the loop (docs/performance.md, "Requests beside the loads"). 8 KiB ran at least as fast as 4 KiB,
// 12 and 16 KiB slower; requests into L2 slower still.
constexpr size_t kQ8StreamAheadBytes = 8192;

using q8x86::FinishGroup;
using q8x86::OutputMask;
using q8x86::StartAccumulator;
using q8x86::StoreAccumulator;
using q8x86::Transpose16x16;

// ---- One row (decode): no transpose. Each output's 64 bytes go through vpdpbusd with the same 64 bytes of x,
// and the 16 vectors of partial sums are reduced to one vector per 16-byte piece of the chunk, outputs in lanes:
// unpack and add dwords, then qwords, within 128-bit lanes (each lane then holds four outputs' sums over its
// piece), then a 4 x 4 transpose of the 128-bit lanes. About 100 instructions per 16 outputs x 64 inputs
// against the transpose's 150; the pieces are added into the group's sum (group_size % 16 == 0).
EDGEATTN_AVX512VNNI inline void ReducePieces(__m512i r[16], __m512i piece[4]) {
  __m512i a[8], q[4];
  for (int k = 0; k < 16; k += 2) {
    a[k / 2] = _mm512_add_epi32(_mm512_unpacklo_epi32(r[k], r[k + 1]), _mm512_unpackhi_epi32(r[k], r[k + 1]));
  }
  for (int g = 0; g < 4; ++g) {  // outputs 4g .. 4g + 3: a[2g] holds 4g, 4g + 1; a[2g + 1] holds 4g + 2, 4g + 3
    q[g] =
        _mm512_add_epi32(_mm512_unpacklo_epi64(a[2 * g], a[2 * g + 1]), _mm512_unpackhi_epi64(a[2 * g], a[2 * g + 1]));
  }
  const __m512i t0 = _mm512_shuffle_i32x4(q[0], q[1], 0x44), t1 = _mm512_shuffle_i32x4(q[0], q[1], 0xEE);
  const __m512i t2 = _mm512_shuffle_i32x4(q[2], q[3], 0x44), t3 = _mm512_shuffle_i32x4(q[2], q[3], 0xEE);
  piece[0] = _mm512_shuffle_i32x4(t0, t2, 0x88), piece[1] = _mm512_shuffle_i32x4(t0, t2, 0xDD);
  piece[2] = _mm512_shuffle_i32x4(t1, t3, 0x88), piece[3] = _mm512_shuffle_i32x4(t1, t3, 0xDD);
}

// The chunk at i0 of the 16 rows (kTail: its first `mask` bytes, the rest zero) as four pieces.
template <bool kTail>
EDGEATTN_AVX512VNNI inline void ChunkPieces(const int8_t* const row[16], const int8_t* x, size_t i0, __mmask64 mask,
                                            __m512i piece[4]) {
  const __m512i offset = _mm512_set1_epi8(static_cast<char>(0x80));
  const __m512i xv = kTail ? _mm512_maskz_loadu_epi8(mask, x + i0) : _mm512_loadu_si512(x + i0);
  __m512i r[16];
  for (size_t k = 0; k < 16; ++k) {
    const __m512i w = kTail ? _mm512_maskz_loadu_epi8(mask, row[k] + i0) : _mm512_loadu_si512(row[k] + i0);
    r[k] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_xor_si512(w, offset), xv);
  }
  ReducePieces(r, piece);
}

// A group's int sum, piece by piece, finished into the row's float accumulator when its last piece is in.
struct DecodeState {
  __m512 acc;
  __m512i sum;
  size_t group, left;
};

EDGEATTN_AVX512VNNI inline void AddPieces(const Q8SumsBlock& b, const __m512i piece[4], size_t count, DecodeState& st) {
  const size_t per_group = b.group_size / 16;
  for (size_t l = 0; l < count; ++l) {
    st.sum = _mm512_add_epi32(st.sum, piece[l]);
    if (--st.left != 0) continue;
    const __m512 scale = _mm512_load_ps(b.scale_tile + st.group * kQ8BlockOutputs);
    st.acc = FinishGroup(st.acc, st.sum, scale, _mm512_set1_ps(b.sx[st.group]));
    ++st.group;
    st.left = per_group;
    if (st.group < b.groups) st.sum = _mm512_set1_epi32(b.x_offset[st.group]);
  }
}

EDGEATTN_AVX512VNNI void DecodeReduced(const Q8SumsBlock& b) {
  q8x86::PackScales(b.scale, b.scale_stride, b.outputs, b.groups, b.scale_tile, kQ8BlockOutputs);
  const int8_t* row[16];
  for (size_t k = 0; k < 16; ++k) row[k] = b.w + (k < b.outputs ? k : b.outputs - 1) * b.w_stride;
  const size_t n = b.groups * b.group_size, full = n / 64 * 64;
  DecodeState st{StartAccumulator(b, 0), _mm512_set1_epi32(b.x_offset[0]), 0, b.group_size / 16};
  __m512i piece[4];
  for (size_t i0 = 0; i0 < full; i0 += 64) {
    if (b.prefetch != nullptr) {  // 16 lines ahead for the 16 this chunk reads (of 16 n bytes)
      const char* ahead = reinterpret_cast<const char*>(b.prefetch) + 16 * i0;
      for (size_t j = 0; j < 16 * 64; j += 64) {
        if (b.prefetch_to_l1) {
          _mm_prefetch(ahead + j, _MM_HINT_T0);
        } else {
          _mm_prefetch(ahead + j, _MM_HINT_T1);
        }
      }
    }
    ChunkPieces<false>(row, b.x, i0, 0, piece);
    AddPieces(b, piece, 4, st);
  }
  if (full < n) {
    ChunkPieces<true>(row, b.x, full, (__mmask64{1} << (n - full)) - 1, piece);
    AddPieces(b, piece, (n - full) / 16, st);
  }
  StoreAccumulator(b, 0, st.acc);
}

// ---- One row as one stream (Q8StreamRow): a block of 16 outputs is 16 * in contiguous bytes, read from first to
// last in windows of 16 chunks of 64 bytes. A window's chunks go through vpdpbusd with their bytes of x and are
// reduced as DecodeReduced reduces 16 outputs' chunks, but here the lanes are the window's chunks: piece p of
// lane j is the sum over bytes 16p .. 16p + 15 of chunk j. A group of 64 is one chunk; a group of 32 half of one.
// The chunks may straddle rows (a group never does), so x's bytes for a window at row offset xo are xr[xo ..
// xo + 1023], which the wrap after the row keeps contiguous.

constexpr size_t kStreamWindow = 16 * 64;

// One window's chunks j < full whole, chunk `full` its first 32 bytes when `half` (then full < 16), the rest 0.
// `ahead` (or null): the lines to request, one beside each chunk's load.
template <bool kTail>
EDGEATTN_AVX512VNNI inline void StreamWindow(const int8_t* w, const int8_t* x, size_t full, bool half, __m512i piece[4],
                                             const char* ahead = nullptr) {
  const __m512i offset = _mm512_set1_epi8(static_cast<char>(0x80));
  __m512i r[16];
#pragma GCC unroll 16
  for (size_t j = 0; j < 16; ++j) {
    if (!kTail && ahead != nullptr) _mm_prefetch(ahead + 64 * j, _MM_HINT_T0);
    if (!kTail || j < full) {
      const __m512i wv = _mm512_xor_si512(_mm512_loadu_si512(w + 64 * j), offset);
      r[j] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), wv, _mm512_loadu_si512(x + 64 * j));
    } else if (j == full && half) {
      const __mmask64 m = 0xFFFFFFFFull;
      const __m512i wv = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, w + 64 * j), offset);
      r[j] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), wv, _mm512_maskz_loadu_epi8(m, x + 64 * j));
    } else {
      r[j] = _mm512_setzero_si512();
    }
  }
  ReducePieces(r, piece);
}

// 16 flattened groups' products ((float)(s + offset) * scale) * sx, lanes [0, valid) stored at out.
EDGEATTN_AVX512VNNI inline void StreamProducts16(__m512i s, const int32_t* off, const float* scale, const float* sx,
                                                 size_t valid, float* out) {
  s = _mm512_add_epi32(s, _mm512_loadu_si512(off));
  if (valid >= 16) {
    const __m512 t = _mm512_mul_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(s), _mm512_loadu_ps(scale)), _mm512_loadu_ps(sx));
    _mm512_storeu_ps(out, t);
    return;
  }
  const __mmask16 m = static_cast<__mmask16>((1u << valid) - 1);  // the other lanes: scale 0, product 0
  const __m512 t =
      _mm512_mul_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(s), _mm512_maskz_loadu_ps(m, scale)), _mm512_loadu_ps(sx));
  _mm512_mask_storeu_ps(out, m, t);
}

// A window's groups (16 at group 64, 32 at group 32) from its pieces: flattened group f (of the block) at f,
// `valid` of them real.
template <size_t kGroup>
EDGEATTN_AVX512VNNI inline void StreamGroups(const Q8StreamRow& r, const __m512i piece[4], const float* scale, size_t f,
                                             size_t g_in_row, size_t valid) {
  const int32_t* off = r.offr + g_in_row;
  const float* sx = r.sxr + g_in_row;
  if (kGroup == 64) {
    const __m512i s = _mm512_add_epi32(_mm512_add_epi32(piece[0], piece[1]), _mm512_add_epi32(piece[2], piece[3]));
    StreamProducts16(s, off, scale + f, sx, valid, r.products + f);
    return;
  }
  const __m512i even = _mm512_add_epi32(piece[0], piece[1]), odd = _mm512_add_epi32(piece[2], piece[3]);
  const __m512i lo_idx = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  const __m512i hi_idx = _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8);
  StreamProducts16(_mm512_permutex2var_epi32(even, lo_idx, odd), off, scale + f, sx, valid, r.products + f);
  if (valid > 16) {
    StreamProducts16(_mm512_permutex2var_epi32(even, hi_idx, odd), off + 16, scale + f + 16, sx + 16, valid - 16,
                     r.products + f + 16);
  }
}

// Outputs o .. o + count - 1: acc = 0, then + products[k][g] for g in order, lanes = outputs (lanes past count
// repeat the last output); y = bias ? acc + bias : acc.
EDGEATTN_AVX512VNNI inline void StreamFinish(const Q8StreamRow& r, size_t o, size_t count) {
  const size_t groups = r.groups;
  __m512 acc = _mm512_setzero_ps();
  for (size_t g0 = 0; g0 < groups; g0 += 16) {
    const size_t ng = groups - g0 < 16 ? groups - g0 : 16;
    const __mmask16 m = static_cast<__mmask16>((1u << ng) - 1);
    __m512i t[16];
    for (size_t k = 0; k < 16; ++k) {
      const float* row = r.products + (k < count ? k : count - 1) * groups + g0;
      t[k] = _mm512_castps_si512(_mm512_maskz_loadu_ps(m, row));
    }
    Transpose16x16(t);
#pragma GCC unroll 16
    for (size_t j = 0; j < 16; ++j) {
      if (j < ng) acc = _mm512_add_ps(acc, _mm512_castsi512_ps(t[j]));
    }
  }
  const __mmask16 out = OutputMask(count);
  if (r.bias != nullptr) acc = _mm512_add_ps(acc, _mm512_maskz_loadu_ps(out, r.bias + o));
  _mm512_mask_storeu_ps(r.y + o, out, acc);
}

template <size_t kGroup>
EDGEATTN_AVX512VNNI void StreamRow(const Q8StreamRow& r) {
  const size_t in = r.in, groups = r.groups;
  const int8_t* w_end = r.w + r.outputs * in;
  const float* scale_end = r.scale + r.outputs * groups;
  for (size_t o = 0; o < r.outputs; o += 16) {
    const size_t count = r.outputs - o < 16 ? r.outputs - o : 16;
    const int8_t* w = r.w + o * in;
    const float* scale = r.scale + o * groups;
    const size_t bytes = count * in;
    size_t c = 0, xo = 0;  // the window's byte in the block, and in the row
    __m512i piece[4];
    for (; c + kStreamWindow <= bytes; c += kStreamWindow) {
      const int8_t* p = w + c;
      const char* ahead = nullptr;  // the window's lines kQ8StreamAheadBytes on, one beside each chunk's load
      if (w_end - p > static_cast<ptrdiff_t>(kQ8StreamAheadBytes + kStreamWindow)) {
        ahead = reinterpret_cast<const char*>(p) + kQ8StreamAheadBytes;
        // The scales of the window as far ahead (the next block's follow this one's).
        const float* s = scale + (c + kQ8StreamAheadBytes) / kGroup;
        if (scale_end - s > static_cast<ptrdiff_t>(kStreamWindow / kGroup)) {
          for (size_t j = 0; j < kStreamWindow / kGroup * sizeof(float); j += 64)
            _mm_prefetch(reinterpret_cast<const char*>(s) + j, _MM_HINT_T0);
        }
      }
      StreamWindow<false>(p, r.xr + xo, 16, false, piece, ahead);
      StreamGroups<kGroup>(r, piece, scale, c / kGroup, xo / kGroup, kStreamWindow / kGroup);
      xo += kStreamWindow;
      while (xo >= in) xo -= in;
    }
    if (c < bytes) {
      const size_t left = bytes - c;
      StreamWindow<true>(w + c, r.xr + xo, left / 64, left % 64 != 0, piece);
      StreamGroups<kGroup>(r, piece, scale, c / kGroup, xo / kGroup, left / kGroup);
    }
    StreamFinish(r, o, count);
  }
}

// ---- One row, groups of 4 (the TinyStories-260K shape: dim 64 and hidden 172 share no larger power of two): a
// block's 16 groups are 64 bytes, so one vpdpbusd of an output's row with x gives its 16 group sums in lanes,
// started at the groups' offsets. Its products ((float)s * scale) * sx follow with groups in lanes (the output's
// scales are contiguous), and one transpose of the 16 outputs' products puts outputs in lanes for the additions in
// group order: the finish's operations in its order, so the same bits. No panel and no scale tile to pack: for a
// one-row call the packing had cost as much as the sums (docs/performance.md, "Small matrices").
EDGEATTN_AVX512VNNI void DecodeGroupsOf4(const Q8SumsBlock& b) {
  const size_t groups = b.groups;  // <= 16
  const __mmask16 group_mask = OutputMask(groups);
  const __mmask64 byte_mask = groups >= 16 ? ~__mmask64{0} : (__mmask64{1} << (4 * groups)) - 1;
  const __m512i offset = _mm512_set1_epi8(static_cast<char>(0x80));
  const __m512i xv = _mm512_maskz_loadu_epi8(byte_mask, b.x);
  const __m512i start = _mm512_maskz_loadu_epi32(group_mask, b.x_offset);
  const __m512 sx = _mm512_maskz_loadu_ps(group_mask, b.sx);
  __m512i t[16];
#pragma GCC unroll 16
  for (size_t k = 0; k < 16; ++k) {
    const size_t row = k < b.outputs ? k : b.outputs - 1;
    const __m512i w = _mm512_xor_si512(_mm512_maskz_loadu_epi8(byte_mask, b.w + row * b.w_stride), offset);
    const __m512i s = _mm512_dpbusd_epi32(start, w, xv);  // lanes past `groups`: 0 + 128 * 0
    const __m512 scale = _mm512_maskz_loadu_ps(group_mask, b.scale + row * b.scale_stride);
    t[k] = _mm512_castps_si512(_mm512_mul_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(s), scale), sx));
  }
  Transpose16x16(t);  // t[j]: group j's products, outputs in lanes
  __m512 acc = StartAccumulator(b, 0);
#pragma GCC unroll 16
  for (size_t j = 0; j < 16; ++j) {
    if (j < groups) acc = _mm512_add_ps(acc, _mm512_castsi512_ps(t[j]));
  }
  StoreAccumulator(b, 0, acc);
}

}  // namespace

void Q8StreamRowAvx512Vnni(const Q8StreamRow& r) noexcept {
  if (r.group_size == 64) {
    StreamRow<64>(r);
  } else {
    StreamRow<32>(r);
  }
}

void Q8SumsAvx512Vnni(const Q8SumsBlock& b) noexcept {
  // A block that packs and has one row is a call with one row: no later block needs the panel.
  if (b.pack && b.rows == 1 && b.outputs <= kQ8BlockOutputs && b.group_size % 16 == 0) {
    DecodeReduced(b);
    return;
  }
  if (b.pack && b.rows == 1 && b.outputs <= kQ8BlockOutputs && b.group_size == 4 && b.groups <= 16) {
    DecodeGroupsOf4(b);
    return;
  }
  Q8PanelRowsAvx512Vnni(b);
}

void Q8SumsAvxVnni(const Q8SumsBlock& b) noexcept { (void)b; }

}  // namespace internal
}  // namespace edgeattn

#else  // not x86-64

namespace edgeattn {
namespace internal {
void Q8SumsAvx512Vnni(const Q8SumsBlock& b) noexcept { (void)b; }
void Q8SumsAvxVnni(const Q8SumsBlock& b) noexcept { (void)b; }
void Q8StreamRowAvx512Vnni(const Q8StreamRow& r) noexcept { (void)r; }
}  // namespace internal
}  // namespace edgeattn

#endif
