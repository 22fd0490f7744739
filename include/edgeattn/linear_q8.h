// SPDX-License-Identifier: Apache-2.0
// Linear layers with int8 weights in the llama2.c (runq.c) / ggml Q8_0 scheme: W[o][i] = q[o][i] * scale[o][g],
// g = i / group_size, symmetric int8 with one float scale per group of group_size inputs, quantised by the KV
// cache's Q8 rule (one implementation, lib/common/q8.h). The C API (edgeattn.h) is the same contract.
#ifndef EDGEATTN_LINEAR_Q8_H_
#define EDGEATTN_LINEAR_Q8_H_

#include <stddef.h>
#include <stdint.h>

#include "edgeattn/linear.h"
#include "edgeattn/status.h"

namespace edgeattn {

// A quantised matrix [out_features][in_features] (PyTorch / llama2.c layout), used in place (same fields as the
// C API's edgeattn_q8_matrix). Valid: q and scale non-null, every size >= 1, group_size divides in_features,
// group_size <= kQ8MaxGroupSize, in_features / group_size <= 2^27 (int32 gather indices), byte counts fit size_t.
struct Q8Matrix {
  const int8_t* q = nullptr;     // [out_features][in_features], used as given (the quantiser writes -127..127)
  const float* scale = nullptr;  // [out_features][in_features / group_size], used as given (IEEE rules)
  size_t out_features = 0;
  size_t in_features = 0;
  size_t group_size = 0;  // llama2.c and ggml files use 32 or 64
};

// The int32 limit of ACT_Q8: a group sum of |qx| <= 127 times |q| <= 128 ("used as given" allows -128), computed
// on x86 VNNI as (q + 128) * qx (u8 x s8) before the offset is removed, must fit int32:
// 65536 * 255 * 127 < 2^31. A larger group_size is kInvalidShape for LinearQ8 (both modes: one rule for a valid
// matrix), not for Q8Quantize.
constexpr size_t kQ8MaxGroupSize = 65536;

// How LinearQ8 treats x (same values as the C API's edgeattn_q8_activations).
enum class Q8Activations : int {
  // x stays float: each output is a float dot product of x with the dequantised row.
  kF32 = 0,
  // x quantised per group (the rule of Q8Quantize), exact int32 dot per group (runq.c, ggml q8_0).
  kQ8 = 1,
};

// w [out_features][in_features] -> q, scale, the KV cache's Q8 rule per group of group_size inputs: scale =
// max|w_g| / 127 (a float division; 0 for an all-zero group), q = w / scale (a float division) rounded to nearest,
// ties to even, clamped to [-127, 127] (0 where scale is 0). The divisions round in the caller's rounding mode;
// the rounding to an integer is always to nearest even. |q * scale - w| <= scale / 2 * (1 + 2^-14) + 2^-126 (the
// KV cache's bound, kv_cache.h). Errors, nothing written: kNullPointer; kInvalidShape (a zero size, group_size not
// dividing in_features, byte counts overflowing size_t); kInvalidArgument (a non-finite w); kOverlap (q or scale
// overlapping w or each other).
[[nodiscard]] Status Q8Quantize(const float* w, size_t out_features, size_t in_features, size_t group_size, int8_t* q,
                                float* scale) noexcept;

namespace internal {
// Workspace bytes (any alignment) of LinearQ8 for `rows` rows; 0 for ACT_F32 and for an invalid shape. ACT_Q8:
// the quantised rows (rows * in bytes), their scales and group sums (8 bytes per row and group), a 5 KiB block
// (the int32 sums and the scales of 16 outputs x 16 groups), the block's weights repacked for the int8
// instructions (16 * max(512, group_size) bytes), 64 bytes to align them. x86-64 builds with group_size 32 or 64
// add what the one-row kernel that reads W as one stream needs (Q8StreamExtraBytes): the quantised rows' first
// KiB, and their first 32 group scales and sums, again after them, and one block's products (16 outputs x groups
// floats, 64-byte aligned).
constexpr size_t kLinearQ8BlockBytes = 5120;
#if defined(__x86_64__)
constexpr bool kQ8StreamBuild = true;
#else
constexpr bool kQ8StreamBuild = false;
#endif
constexpr bool Q8StreamLayout(size_t group_size) { return kQ8StreamBuild && (group_size == 32 || group_size == 64); }
constexpr size_t kQ8StreamWrapBytes = 1024;  // one 16-chunk window of 64 bytes
constexpr size_t kQ8StreamWrapGroups = 32;   // its groups at group_size 32
constexpr size_t Q8StreamExtraBytes(size_t groups) {
  return kQ8StreamWrapBytes + 2 * kQ8StreamWrapGroups * 4 + 64 + 16 * 4 * groups;
}
constexpr size_t LinearQ8WorkspaceBytes(size_t rows, size_t in_features, size_t group_size, Q8Activations act) {
  if (act != Q8Activations::kQ8 || rows == 0 || in_features == 0 || group_size == 0 || group_size > kQ8MaxGroupSize ||
      in_features % group_size != 0 || rows > SIZE_MAX / in_features) {
    return 0;
  }
  const size_t groups = in_features / group_size;
  if (rows > SIZE_MAX / 8 / groups) return 0;
  const size_t fixed = kLinearQ8BlockBytes + 16 * (group_size > 512 ? group_size : 512) + 64;
  const size_t per_rows = rows * in_features;
  if (per_rows > SIZE_MAX - fixed || rows * groups * 8 > SIZE_MAX - fixed - per_rows) return 0;
  const size_t plain = fixed + per_rows + rows * groups * 8;
  if (!Q8StreamLayout(group_size)) return plain;
  if (groups > (SIZE_MAX - 4096) / 64 || Q8StreamExtraBytes(groups) > SIZE_MAX - plain) return 0;
  return plain + Q8StreamExtraBytes(groups);
}
}  // namespace internal

// Bytes of workspace LinearQ8 and LinearQ8Part need for `rows` rows: 0 for an invalid matrix or rows = 0, and 0 for
// ACT_F32 (which needs none; the workspace may then be null). Depends only on rows, in_features, group_size, act.
size_t LinearQ8WorkspaceSize(size_t rows, const Q8Matrix& w, Q8Activations act) noexcept;

// y[r][o] = bias[o] + sum_i x[r][i] * W[o][i]: x [rows][in_features], bias null or [out_features], y
// [rows][out_features].
// kQ8, exactly, with the same bits on every target and path, in the caller's rounding mode: per row r and group g,
//   x's group is quantised by Q8Quantize's rule -> qx, sx[r][g]; s_g = sum over the group of qx[i] * q[o][i],
//   exact in int32; acc = 0.0f; for g = 0, 1, ...: acc = acc + ((float)s_g * scale[o][g]) * sx[r][g];
//   y[r][o] = bias ? acc + bias[o] : acc; each step one float operation rounded once (no fused multiply-add).
//   A non-finite x is kInvalidArgument. NaN and inf scales or biases follow IEEE arithmetic through the formula.
//   The result against the exact product with the float x and the dequantised weights: the quantisation of x
//   (|qx * sx - x| <= sx / 2 * (1 + 2^-14) + 2^-126 per element) and the float steps
//   (gamma(groups + 1) * (sum_g |s_g * scale_g * sx_g| + |bias|), gamma(n) = n u / (1 - n u)).
// kF32: x used as given (IEEE propagation as LinearTransposed). With W[o][i] = q[o][i] * scale[o][g] taken
// exactly, while nothing overflows (the paths sum x * q per group, then scale: a group whose sum of |x * q|
// overflows float gives inf or NaN even where its scale is small or 0):
//   |y - exact| <= gamma(in_features + groups + 2) * (sum_i |x[r][i] * W[o][i]| + |bias[o]|)
//                  + (in_features + 2 * groups + 2) * 2^-149,
//   u = 2^-24 rounding to nearest (2^-23 under a directed mode); the last term is gradual underflow
//   ((in_features + 2 * groups + 2) * 2^-126 on SIMD units that flush subnormals to zero, e.g. ARMv7 NEON).
// Errors in the common order, nothing written: kNullPointer (x, w.q, w.scale or y null; a null workspace where one
// is needed, checked with its size after the arguments); kInvalidShape (rows 0, an invalid matrix, overflowing sizes);
// kInvalidArgument (an unknown act; a non-finite x with kQ8); kWorkspaceTooSmall (workspace_size below
// LinearQ8WorkspaceSize); kOverlap (y overlapping x, q, scale, bias or the workspace). Threads: reentrant; the
// workspace is the caller's, one per concurrent call. Stack: under 1 KiB on every target (the x86 VNNI kernel keeps a 1
// KiB transposed block on the stack; the Cortex-M builds never run it).
[[nodiscard]] Status LinearQ8(const float* x, size_t rows, const Q8Matrix& w, const float* bias, Q8Activations act,
                              float* y, void* workspace, size_t workspace_size) noexcept;

// The work split for the application's threads: parts are blocks of output features, counted from the shape only
// (0 for invalid arguments). Two or more rows: multiples of 16 outputs, at least 512 each, at most 16 parts. One
// row (a decode step): out is shared by the largest power of two P <= 16 with out / P >= 128, each part
// ceil(out / P) rounded up to a multiple of 16 outputs, the last one shorter (so 288 outputs make 2 parts of 144,
// 768 make 4 of 192, 32000 make 16 of 2000). Part p writes y[r][o] for its outputs and every row, in any order, on
// any thread, each part with its own workspace of LinearQ8WorkspaceSize bytes (every part quantises all rows of x
// itself: few, large parts keep that cost small); all parts together write exactly the bits of LinearQ8. LinearQ8Part
// has LinearQ8's errors, in its order (its overlap check covers all of y), and kInvalidArgument for part >=
// LinearQ8PartCount(rows, w).
size_t LinearQ8PartCount(size_t rows, const Q8Matrix& w) noexcept;
[[nodiscard]] Status LinearQ8Part(const float* x, size_t rows, const Q8Matrix& w, const float* bias, Q8Activations act,
                                  size_t part, float* y, void* workspace, size_t workspace_size) noexcept;

// Parts [first_part, first_part + part_count) as one call: the bits those parts write one by one, with x quantised
// once instead of once per part. For an application with fewer threads than parts: thread t of T runs parts
// [P * t / T, P * (t + 1) / T) of the P = LinearQ8PartCount(rows, w), one call each (on one row, quantising x and
// the call's checks cost about what 16 outputs of W do). Errors as LinearQ8Part's, with kInvalidArgument for
// part_count 0 or first_part + part_count > LinearQ8PartCount(rows, w).
[[nodiscard]] Status LinearQ8PartRange(const float* x, size_t rows, const Q8Matrix& w, const float* bias,
                                       Q8Activations act, size_t first_part, size_t part_count, float* y,
                                       void* workspace, size_t workspace_size) noexcept;

namespace scalar {
[[nodiscard]] Status Q8Quantize(const float* w, size_t out_features, size_t in_features, size_t group_size, int8_t* q,
                                float* scale) noexcept;
[[nodiscard]] Status LinearQ8(const float* x, size_t rows, const Q8Matrix& w, const float* bias, Q8Activations act,
                              float* y, void* workspace, size_t workspace_size) noexcept;
}  // namespace scalar

// LinearQ8 over shapes fixed at compile time, owning its workspace (static storage, constant-initialised):
//
//   static edgeattn::FixedLinearQ8<1, 288, 768, 32> ffn_up;
//   edgeattn::Status s = ffn_up.Run(x, w, bias, edgeattn::Q8Activations::kQ8, y);
//
// The matrix's shape must equal the template's (else kInvalidShape). One object must not run on two threads at
// once (the workspace is the object's).
template <size_t Rows, size_t In, size_t Out, size_t Group>
class FixedLinearQ8 {
  static_assert(Rows >= 1 && In >= 1 && Out >= 1, "sizes must be >= 1");
  static_assert(Group >= 1 && In % Group == 0, "group_size must divide in_features");
  static_assert(Group <= kQ8MaxGroupSize, "group_size above kQ8MaxGroupSize");
  static_assert(internal::LinearQ8WorkspaceBytes(Rows, In, Group, Q8Activations::kQ8) != 0, "shape too large");

 public:
  static constexpr size_t kWorkspaceBytes = internal::LinearQ8WorkspaceBytes(Rows, In, Group, Q8Activations::kQ8);
  using Input = float[Rows][In];
  using Output = float[Rows][Out];

  [[nodiscard]] Status Run(const Input& x, const Q8Matrix& w, const float* bias, Q8Activations act,
                           Output& y) noexcept {
    if (w.q == nullptr || w.scale == nullptr) return Status::kNullPointer;
    if (w.in_features != In || w.out_features != Out || w.group_size != Group) return Status::kInvalidShape;
    return LinearQ8(&x[0][0], Rows, w, bias, act, &y[0][0], workspace_, kWorkspaceBytes);
  }

 private:
  unsigned char workspace_[kWorkspaceBytes] = {};
};

}  // namespace edgeattn

#endif  // EDGEATTN_LINEAR_Q8_H_
