// SPDX-License-Identifier: Apache-2.0
// linear_q8 entry points: the quantiser, the argument checks (one function turns the arguments into the internal
// problem), the work split over output features, and the dispatch of the SIMD kernels.
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "edgeattn/linear.h"
#include "edgeattn/linear_q8.h"
#include "lib/common/checks.h"
#include "lib/common/dispatch.h"
#include "lib/common/q8.h"
#include "lib/linear_q8/linear_q8_kernels.h"
#include "lib/linear_q8/linear_q8_scalar.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/linear_q8/linear_q8.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/common/backend-inl.h"
#include "lib/linear_q8/linear_q8-inl.h"

#if HWY_ONCE
namespace edgeattn {
namespace {

using internal::LinearQ8Problem;

// Every part quantises all of x itself: at least 512 outputs per part keep that repeated cost small where the
// kernel is compute-bound (two or more rows).
constexpr size_t kQ8PartMinOutputs = 512;

// One row (a decode step): the kernel streams W, and quantising x costs a few percent of 128 outputs' rows. The
// split is a power of two of equal parts (multiples of 16 outputs, at least 128, at most 16 parts), so that 2, 4 or
// 8 threads share even the small layers evenly: 288 outputs make two parts of 144 (with at least 512 per part they
// were one part, and 128-output parts would be 128, 128 and 32, one thread idle for a third of the call;
// docs/performance.md, "Two threads on a small model").
constexpr size_t kQ8RowPartMinOutputs = 128;

size_t Q8PartSize(size_t rows, size_t out) {
  if (rows != 1) return internal::OutputPartSize(out, kQ8PartMinOutputs);
  size_t parts = 1;
  while (parts < 16 && out / (2 * parts) >= kQ8RowPartMinOutputs) parts *= 2;
  return (out / parts + (out % parts != 0 ? 1 : 0) + 15) / 16 * 16;
}

// The finish step gathers the scales of 16 outputs with int32 indices up to 15 * groups.
constexpr size_t kQ8MaxGroups = (size_t{1} << 27);

// On the bits (all exponent bits set: inf or NaN), with no early exit, so that the compiler vectorizes it: no
// float operation (none of the caller's exception flags raised, no subnormal operands) and a few instructions per
// vector of x, where a float test per element cost more than a decode call's int8 kernel on short rows.
bool AllFinite(const float* x, size_t n) {
  uint32_t special = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t bits;
    memcpy(&bits, x + i, sizeof(bits));
    special |= static_cast<uint32_t>((bits & 0x7F800000u) == 0x7F800000u);
  }
  return special == 0;
}

// A valid matrix's shape (pointers aside): the sizes, the divisibility, the int32 limits, the byte counts.
bool ValidQ8Shape(size_t out, size_t in, size_t group_size, size_t* q_bytes, size_t* scale_bytes) {
  if (out == 0 || in == 0 || group_size == 0 || in % group_size != 0 || group_size > kQ8MaxGroupSize ||
      in / group_size > kQ8MaxGroups || out > SIZE_MAX / in) {
    return false;
  }
  *q_bytes = out * in;
  return internal::FloatBytes(out, in / group_size, 1, scale_bytes);
}

// Parts [first, first + count) of the split (LinearQ8Part: one; LinearQ8PartRange: several).
struct PartSpan {
  size_t first, count;
};

// LinearQ8's checks, in the common order, for the outputs of the parts in `span` (null: the whole call).
Status MakeQ8Problem(const float* x, size_t rows, const Q8Matrix& w, const float* bias, Q8Activations act,
                     const PartSpan* span, float* y, void* workspace, size_t workspace_size, LinearQ8Problem* p) {
  if (x == nullptr || y == nullptr || w.q == nullptr || w.scale == nullptr) return Status::kNullPointer;
  size_t q_bytes = 0, scale_bytes = 0, x_bytes = 0, y_bytes = 0;
  if (rows == 0 || !ValidQ8Shape(w.out_features, w.in_features, w.group_size, &q_bytes, &scale_bytes) ||
      !internal::FloatBytes(rows, w.in_features, 1, &x_bytes) ||
      !internal::FloatBytes(rows, w.out_features, 1, &y_bytes) ||
      internal::LinearQ8WorkspaceBytes(rows, w.in_features, w.group_size, Q8Activations::kQ8) == 0) {
    return Status::kInvalidShape;
  }
  int act_value;
  memcpy(&act_value, &act, sizeof(act_value));
  if (act_value != 0 && act_value != 1) return Status::kInvalidArgument;
  const size_t parts = LinearQ8PartCount(rows, w);
  if (span != nullptr && (span->count == 0 || span->count > parts || span->first > parts - span->count)) {
    return Status::kInvalidArgument;
  }
  if (act == Q8Activations::kQ8 && !AllFinite(x, rows * w.in_features)) return Status::kInvalidArgument;
  const size_t need = internal::LinearQ8WorkspaceBytes(rows, w.in_features, w.group_size, act);
  if (workspace_size < need) return Status::kWorkspaceTooSmall;
  if (need != 0 && workspace == nullptr) return Status::kNullPointer;
  const internal::ByteRange y_range = internal::RangeOf(y, y_bytes);
  const internal::ByteRange ws_range = internal::RangeOf(workspace, need);
  const internal::ByteRange inputs[] = {internal::RangeOf(x, x_bytes), internal::RangeOf(w.q, q_bytes),
                                        internal::RangeOf(w.scale, scale_bytes),
                                        internal::RangeOf(bias, bias != nullptr ? w.out_features * 4 : 0)};
  if (internal::Overlap(y_range, ws_range)) return Status::kOverlap;
  for (const internal::ByteRange& in : inputs) {
    if (internal::Overlap(y_range, in) || internal::Overlap(ws_range, in)) return Status::kOverlap;
  }
  // (first + count) * per_part <= parts * per_part, out_features rounded up by less than 16 per part: no overflow.
  const size_t per_part = span == nullptr ? w.out_features : Q8PartSize(rows, w.out_features);
  const size_t first = span == nullptr ? 0 : span->first * per_part;
  const size_t end = span == nullptr ? w.out_features : (span->first + span->count) * per_part;
  *p = LinearQ8Problem{x,
                       rows,
                       w,
                       bias,
                       y,
                       first,
                       end < w.out_features ? end : w.out_features,
                       static_cast<unsigned char*>(workspace),
                       internal::ChooseQ8Kernel(w.group_size)};
  return Status::kOk;
}

}  // namespace

HWY_EXPORT(LinearQ8Rows);
HWY_EXPORT(LinearQ8F32Rows);

Status Q8Quantize(const float* w, size_t out_features, size_t in_features, size_t group_size, int8_t* q,
                  float* scale) noexcept {
  if (w == nullptr || q == nullptr || scale == nullptr) return Status::kNullPointer;
  size_t w_bytes = 0, scale_bytes = 0;
  if (out_features == 0 || in_features == 0 || group_size == 0 || in_features % group_size != 0 ||
      !internal::FloatBytes(out_features, in_features, 1, &w_bytes) ||
      !internal::FloatBytes(out_features, in_features / group_size, 1, &scale_bytes)) {
    return Status::kInvalidShape;
  }
  const size_t n = out_features * in_features;
  if (!AllFinite(w, n)) return Status::kInvalidArgument;
  const internal::ByteRange w_range = internal::RangeOf(w, w_bytes), q_range = internal::RangeOf(q, n),
                            s_range = internal::RangeOf(scale, scale_bytes);
  if (internal::Overlap(q_range, w_range) || internal::Overlap(s_range, w_range) ||
      internal::Overlap(q_range, s_range)) {
    return Status::kOverlap;
  }
  for (size_t g = 0; g < n / group_size; ++g) {
    scale[g] = internal::Q8QuantizeGroup(w + g * group_size, group_size, q + g * group_size);
  }
  return Status::kOk;
}

size_t LinearQ8WorkspaceSize(size_t rows, const Q8Matrix& w, Q8Activations act) noexcept {
  size_t q_bytes = 0, scale_bytes = 0;
  if (rows == 0 || !ValidQ8Shape(w.out_features, w.in_features, w.group_size, &q_bytes, &scale_bytes)) return 0;
  return internal::LinearQ8WorkspaceBytes(rows, w.in_features, w.group_size, act);
}

size_t LinearQ8PartCount(size_t rows, const Q8Matrix& w) noexcept {
  size_t q_bytes = 0, scale_bytes = 0, x_bytes = 0, y_bytes = 0;
  if (rows == 0 || w.q == nullptr || w.scale == nullptr ||
      !ValidQ8Shape(w.out_features, w.in_features, w.group_size, &q_bytes, &scale_bytes) ||
      !internal::FloatBytes(rows, w.in_features, 1, &x_bytes) ||
      !internal::FloatBytes(rows, w.out_features, 1, &y_bytes)) {
    return 0;
  }
  const size_t per_part = Q8PartSize(rows, w.out_features);
  return (w.out_features + per_part - 1) / per_part;
}

namespace {
// The SIMD entry points' one body: checks, then the mode's dispatched driver (kernel < 0: the chooser's pick).
Status RunLinearQ8(const float* x, size_t rows, const Q8Matrix& w, const float* bias, Q8Activations act,
                   const PartSpan* span, float* y, void* workspace, size_t workspace_size, int kernel) {
  LinearQ8Problem p;
  const Status status = MakeQ8Problem(x, rows, w, bias, act, span, y, workspace, workspace_size, &p);
  if (status != Status::kOk) return status;
  if (kernel >= 0) {
    const auto k = static_cast<internal::Q8Kernel>(kernel);
    if (k != internal::Q8Kernel::kPortable && (!internal::Q8KernelSupported(k) || w.group_size % 4 != 0)) {
      return Status::kInvalidArgument;
    }
    p.kernel = k;
  }
  if (act == Q8Activations::kQ8) {
    EDGEATTN_DISPATCH(LinearQ8Rows)(p);
  } else {
    EDGEATTN_DISPATCH(LinearQ8F32Rows)(p);
  }
  return Status::kOk;
}
}  // namespace

namespace internal {
Status LinearQ8WithKernel(const float* x, size_t rows, const Q8Matrix& w, const float* bias, Q8Activations act,
                          float* y, void* workspace, size_t workspace_size, Q8Kernel kernel) noexcept {
  return RunLinearQ8(x, rows, w, bias, act, nullptr, y, workspace, workspace_size, static_cast<int>(kernel));
}
}  // namespace internal

Status LinearQ8Part(const float* x, size_t rows, const Q8Matrix& w, const float* bias, Q8Activations act, size_t part,
                    float* y, void* workspace, size_t workspace_size) noexcept {
  const PartSpan span{part, 1};
  return RunLinearQ8(x, rows, w, bias, act, &span, y, workspace, workspace_size, -1);
}

Status LinearQ8PartRange(const float* x, size_t rows, const Q8Matrix& w, const float* bias, Q8Activations act,
                         size_t first_part, size_t part_count, float* y, void* workspace,
                         size_t workspace_size) noexcept {
  const PartSpan span{first_part, part_count};
  return RunLinearQ8(x, rows, w, bias, act, &span, y, workspace, workspace_size, -1);
}

Status LinearQ8(const float* x, size_t rows, const Q8Matrix& w, const float* bias, Q8Activations act, float* y,
                void* workspace, size_t workspace_size) noexcept {
  return RunLinearQ8(x, rows, w, bias, act, nullptr, y, workspace, workspace_size, -1);
}

namespace scalar {
Status Q8Quantize(const float* w, size_t out_features, size_t in_features, size_t group_size, int8_t* q,
                  float* scale) noexcept {
  return edgeattn::Q8Quantize(w, out_features, in_features, group_size, q, scale);
}

Status LinearQ8(const float* x, size_t rows, const Q8Matrix& w, const float* bias, Q8Activations act, float* y,
                void* workspace, size_t workspace_size) noexcept {
  LinearQ8Problem p;
  const Status status = MakeQ8Problem(x, rows, w, bias, act, nullptr, y, workspace, workspace_size, &p);
  if (status != Status::kOk) return status;
  if (act == Q8Activations::kQ8) {
    internal::LinearQ8Scalar(p);
  } else {
    internal::LinearQ8F32Scalar(p);
  }
  return Status::kOk;
}
}  // namespace scalar

}  // namespace edgeattn
#endif  // HWY_ONCE
