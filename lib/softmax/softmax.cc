// SPDX-License-Identifier: Apache-2.0
// Softmax entry points: argument checks, then the scalar rows or the dispatched SIMD rows.
#include <stddef.h>

#include "edgeattn/softmax.h"
#include "lib/common/checks.h"
#include "lib/common/dispatch.h"
#include "lib/softmax/softmax_scalar.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/softmax/softmax.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/common/backend-inl.h"
#include "lib/softmax/softmax-inl.h"

#if HWY_ONCE
namespace edgeattn {
namespace {

Status CheckSoftmax(const float* in, const float* out, size_t rows, size_t cols) {
  if (in == nullptr || out == nullptr) return Status::kNullPointer;
  size_t bytes = 0;
  if (rows == 0 || cols == 0 || !internal::FloatBytes(rows, cols, 1, &bytes)) return Status::kInvalidShape;
  if (internal::PartialOverlap(internal::RangeOf(in, bytes), internal::RangeOf(out, bytes))) return Status::kOverlap;
  return Status::kOk;
}

}  // namespace

HWY_EXPORT(SoftmaxRows);

Status Softmax(const float* in, float* out, size_t rows, size_t cols) noexcept {
  const Status status = CheckSoftmax(in, out, rows, cols);
  if (status == Status::kOk) EDGEATTN_DISPATCH(SoftmaxRows)(in, out, rows, cols);
  return status;
}

namespace scalar {
Status Softmax(const float* in, float* out, size_t rows, size_t cols) noexcept {
  const Status status = CheckSoftmax(in, out, rows, cols);
  if (status != Status::kOk) return status;
  for (size_t r = 0; r < rows; ++r) internal::SoftmaxRowScalar(in + r * cols, out + r * cols, cols);
  return Status::kOk;
}
}  // namespace scalar

}  // namespace edgeattn
#endif  // HWY_ONCE
