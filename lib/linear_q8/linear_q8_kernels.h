// SPDX-License-Identifier: Apache-2.0
// linear_q8's int8 group-sum kernels: the one piece a backend replaces. Every kernel computes the same exact
// int32 sums, so the variant never changes a bit of the output; the float steps (linear_q8-inl.h) are shared.
//   kPortable    Highway int16 multiply-add (PromoteTo + ReorderWidenMulAccumulate) on the dispatched target
//   kAvx512Vnni  x86 AVX512-VNNI vpdpbusd, 16 outputs per instruction (linear_q8_x86.cc)
//   kAvxVnni     x86 AVX-VNNI vpdpbusd on 256 bits, 8 outputs per instruction (linear_q8_x86.cc)
//   kDotprod     AArch64 dotprod sdot, 4 outputs per instruction (linear_q8_arm.cc)
// The instruction kernels need group_size % 4 == 0 (they take inputs four at a time); other group sizes run
// kPortable. The Cortex-M builds run kPortable on Highway's SCALAR target (the microcontroller issue adds MVE
// and SMLAD kernels here).
#ifndef EDGEATTN_LIB_LINEAR_Q8_LINEAR_Q8_KERNELS_H_
#define EDGEATTN_LIB_LINEAR_Q8_LINEAR_Q8_KERNELS_H_

#include <stddef.h>
#include <stdint.h>

#include <type_traits>

#include "edgeattn/linear_q8.h"

// Where the instruction kernels are compiled, derived once. x86-64: GCC and clang both compile AVX512-VNNI code
// per function (a target attribute). AArch64: GCC compiles dotprod per function; clang 14's arm_neon.h declares
// vdotq_s32 only when the build's flags enable dotprod (-march=armv8.2-a+dotprod or later).
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define EDGEATTN_Q8_X86_KERNELS 1
#else
#define EDGEATTN_Q8_X86_KERNELS 0
#endif
#if defined(__aarch64__) && (defined(__ARM_FEATURE_DOTPROD) || (defined(__GNUC__) && !defined(__clang__)))
#define EDGEATTN_Q8_DOTPROD_KERNEL 1
#else
#define EDGEATTN_Q8_DOTPROD_KERNEL 0
#endif

namespace edgeattn {
namespace internal {

// A block is up to 16 outputs x 4 rows x 16 groups: its sums and the block's scales (16 groups x 16 outputs)
// fill kLinearQ8BlockBytes of the workspace.
constexpr size_t kQ8BlockOutputs = 16;
constexpr size_t kQ8BlockRows = 4;
constexpr size_t kQ8BlockGroups = 16;
static_assert((kQ8BlockRows + 1) * kQ8BlockGroups * kQ8BlockOutputs * sizeof(int32_t) == kLinearQ8BlockBytes,
              "the sums block is the workspace's fixed part");

// s[r][j][k] = sum over the inputs i of group g0 + j of w[k][i] * x[r][i], exact, for r < rows, j < groups,
// k < outputs (lanes k >= outputs hold anything). Rows of w past `outputs` are never read.
// A wide block (Q8WideBlocks: the AVX512-VNNI kernel, which finishes itself, on two rows or more) has up to
// kQ8WideBlockOutputs outputs and Q8WideBlockGroups groups: its panels then fill the same Q8PanelBytes, and its
// scale tile, [groups][kQ8WideBlockOutputs] when it has more than 16 outputs, the same kQ8BlockGroups x 16 floats.
struct Q8SumsBlock {
  const int8_t* w;          // output o's row, at the first input of group g0
  size_t w_stride;          // bytes from one output's row to the next (in_features)
  size_t outputs;           // 1 .. kQ8BlockOutputs (kQ8WideBlockOutputs in a wide block)
  const int8_t* x;          // quantised row r0, at group g0
  size_t x_stride;          // in_features
  const int32_t* x_offset;  // row r0's -128 * sum of qx over group g0 (the VNNI kernel's offset, its sums' start)
  size_t x_offset_stride;   // groups
  size_t rows;              // 1 .. kQ8BlockRows
  size_t group_size;
  size_t groups;  // 1 .. kQ8BlockGroups
  int32_t* s;     // [kQ8BlockRows][kQ8BlockGroups][kQ8BlockOutputs], 64-byte aligned
  // The block's weights in the kernel's own layout (16 * groups * group_size bytes, 64-byte aligned): written
  // when `pack` is set (the first block of rows), read as they are by the blocks of rows after it.
  unsigned char* panel;
  bool pack;
  // Also when `pack` is set: scale_tile[j][k] = scale[k][j] (output o + k's scale of group g0 + j; outputs past
  // `outputs` repeat the last), the finish step's scales with outputs in lanes.
  const float* scale;   // output o's scales, at group g0
  size_t scale_stride;  // groups
  float* scale_tile;    // [kQ8BlockGroups][kQ8BlockOutputs], 64-byte aligned
  // The finish step's operands, for a kernel that runs it itself (Q8KernelFinishes) with the int sums still in
  // registers: per row r < rows and output k < outputs, acc = first ? 0 : y[r][k]; per group j, in order,
  // acc = acc + ((float)s[r][j][k] * scale_tile[j][k]) * sx[r][j] (three operations, each rounded once); then
  // y[r][k] = bias ? acc + bias[k] : acc. The shared finish (linear_q8-inl.h) does exactly this otherwise.
  const float* sx;    // row r0's x scales, at group g0
  size_t sx_stride;   // groups
  float* y;           // row r0's outputs, at output o
  size_t y_stride;    // out_features
  const float* bias;  // at output o, where the block's groups end the row and a bias is given; else null
  bool first;         // g0 == 0: the accumulators start at zero
  // W a one-row kernel may request ahead while it runs, or null: 16 * groups * group_size bytes (the next 16
  // rows' share of this block's groups); only hints, inside W. Into L1 or L2 as lib/common/prefetch-inl.h's
  // NextRowsAhead chose.
  const int8_t* prefetch = nullptr;
  bool prefetch_to_l1 = false;
};

// One row of x (a decode call) against outputs [0, outputs) of W, read as one stream in address order
// (Q8StreamLayout: x86-64, group_size 32 or 64). Blocks of 16 consecutive rows of W are contiguous (16 * in
// bytes); the kernel reads each block from its first byte to its last, so a block's groups come in the flattened
// order f = k * groups + g (output k of the block, group g). Per flattened group it writes the product
// ((float)s * scale) * sx to `products` (in that order: products[k][g]), then per output adds them in group order
// with outputs in lanes: the contract's steps and order (linear_q8.h), each one IEEE operation.
struct Q8StreamRow {
  const int8_t* w;     // output 0's row
  const float* scale;  // output 0's scales (groups per row, rows contiguous)
  size_t outputs;      // >= 1
  size_t in, group_size, groups;
  // The quantised row with its first kQ8StreamWrapBytes bytes again after it (repeated if in is shorter): byte
  // i of the stream window at row offset j is xr[j + i]. Likewise the group scales and offsets, with
  // kQ8StreamWrapGroups more.
  const int8_t* xr;
  const float* sxr;
  const int32_t* offr;
  float* products;  // [16][groups], 64-byte aligned
  float* y;         // outputs [0, outputs)
  const float* bias;
};

// The scale tile element by element (kernels without a vector transpose).
inline void Q8FillScaleTile(const Q8SumsBlock& b) {
  for (size_t k = 0; k < kQ8BlockOutputs; ++k) {
    const float* scale = b.scale + (k < b.outputs ? k : b.outputs - 1) * b.scale_stride;
    for (size_t j = 0; j < b.groups; ++j) b.scale_tile[j * kQ8BlockOutputs + k] = scale[j];
  }
}

// Groups per block: up to 16, and at most 512 inputs unless one group is wider, so that the panel of a block
// stays within 16 * max(512, group_size) bytes (8 KiB for group sizes up to 512: L1-resident).
constexpr size_t Q8BlockGroups(size_t group_size) {
  return group_size >= 512 ? 1 : 512 / group_size < kQ8BlockGroups ? 512 / group_size : kQ8BlockGroups;
}
constexpr size_t Q8PanelBytes(size_t group_size) { return kQ8BlockOutputs * (group_size > 512 ? group_size : 512); }

// Wide blocks: 32 outputs over half the inputs (at most 256, at least one group of 32 .. 256 inputs), for the
// AVX512-VNNI kernel on two rows or more, where each broadcast of x then feeds two vpdpbusd
// (linear_q8_x86_rows.cc). One row keeps 16-output blocks (its kernels reduce 16 outputs at a time).
constexpr size_t kQ8WideBlockOutputs = 32;
constexpr size_t Q8WideBlockGroups(size_t group_size) { return 256 / group_size; }

// fn(std::integral_constant<size_t, rows>{}) for the block's 1 .. kQ8BlockRows rows: the instruction kernels keep
// one accumulator per row in registers, so the row count is a template argument.
template <class Fn>
inline void WithRowCount(size_t rows, Fn&& fn) {
  switch (rows) {
    case 1:
      return fn(std::integral_constant<size_t, 1>{});
    case 2:
      return fn(std::integral_constant<size_t, 2>{});
    case 3:
      return fn(std::integral_constant<size_t, 3>{});
    default:
      return fn(std::integral_constant<size_t, 4>{});
  }
}

enum class Q8Kernel : int { kPortable = 0, kAvx512Vnni = 1, kAvxVnni = 2, kDotprod = 3 };
constexpr int kQ8KernelCount = 4;
const char* Q8KernelName(Q8Kernel kernel) noexcept;
// Compiled into this build and supported by this CPU (kPortable always).
bool Q8KernelSupported(Q8Kernel kernel) noexcept;
// The kernels that run the finish step themselves (the float accumulators next to the int sums, in registers):
// the driver then skips its own.
constexpr bool Q8KernelFinishes(Q8Kernel kernel) { return kernel == Q8Kernel::kAvx512Vnni; }
// The kernel LinearQ8 runs for this group size: the first supported of kAvx512Vnni, kAvxVnni, kDotprod when
// group_size % 4 == 0, else kPortable.
Q8Kernel ChooseQ8Kernel(size_t group_size) noexcept;
// Whether LinearQ8 hands `kernel` wide blocks for `rows` rows (see Q8SumsBlock).
constexpr bool Q8WideBlocks(Q8Kernel kernel, size_t rows, size_t group_size) {
  return kernel == Q8Kernel::kAvx512Vnni && rows >= 2 && group_size % 4 == 0 && group_size >= 32 && group_size <= 256;
}

// The instruction kernels (each a no-op stub where its ISA is not compiled; never chosen there).
void Q8SumsAvx512Vnni(const Q8SumsBlock& b) noexcept;
void Q8SumsAvxVnni(const Q8SumsBlock& b) noexcept;
void Q8StreamRowAvx512Vnni(const Q8StreamRow& r) noexcept;
// The AVX512-VNNI kernel's blocks of rows, through transposed panels (linear_q8_x86_rows.cc; wide blocks too).
void Q8PanelRowsAvx512Vnni(const Q8SumsBlock& b) noexcept;
// `groups` consecutive groups of group_size (32 or 64) finite floats quantised by the Q8 rule (lib/common/q8.h)
// with AVX-512F, sixteen groups at a time with groups in lanes: q, scale[g] and offset[g] = -128 * the sum of the
// group's q. The same divisions, clamp and rounding as the Highway quantiser (q8_quantize-inl.h), and the max and
// the sums exact in any order, so the same bits. Run only where kAvx512Vnni runs (the CPU has AVX-512).
void Q8QuantizeGroupsAvx512(const float* x, size_t groups, size_t group_size, int8_t* q, float* scale,
                            int32_t* offset) noexcept;
void Q8SumsDotprod(const Q8SumsBlock& b) noexcept;

// LinearQ8 (SIMD entry point) with a given int8 kernel, for the tests and the fuzzer to run every variant this
// CPU has: kInvalidArgument if `kernel` is not supported or cannot take the group size; otherwise LinearQ8's
// statuses and bits.
[[nodiscard]] Status LinearQ8WithKernel(const float* x, size_t rows, const Q8Matrix& w, const float* bias,
                                        Q8Activations act, float* y, void* workspace, size_t workspace_size,
                                        Q8Kernel kernel) noexcept;

}  // namespace internal
}  // namespace edgeattn

#endif  // EDGEATTN_LIB_LINEAR_Q8_LINEAR_Q8_KERNELS_H_
