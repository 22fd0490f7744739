// SPDX-License-Identifier: Apache-2.0
// RMSNorm and LayerNorm entry points: argument checks, then the row driver with the scalar or the dispatched
// SIMD passes.
#include <stddef.h>

#include "edgeattn/norm.h"
#include "lib/common/checks.h"
#include "lib/common/dispatch.h"
#include "lib/common/float_util.h"
#include "lib/norm/norm_scalar.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/norm/norm.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/common/backend-inl.h"
#include "lib/norm/norm-inl.h"

#if HWY_ONCE
namespace edgeattn {
namespace {

Status CheckNorm(const float* x, size_t rows, size_t cols, const float* weight, const float* bias, float eps,
                 const float* y) {
  if (x == nullptr || y == nullptr) return Status::kNullPointer;
  size_t bytes = 0;
  if (rows == 0 || cols == 0 || !internal::FloatBytes(rows, cols, 1, &bytes)) return Status::kInvalidShape;
  if (!internal::IsFinite(eps) || eps < 0.0f) return Status::kInvalidArgument;
  const internal::ByteRange y_range = internal::RangeOf(y, bytes);
  if (internal::PartialOverlap(y_range, internal::RangeOf(x, bytes)) ||
      internal::Overlap(y_range, internal::RangeOf(weight, weight != nullptr ? cols * sizeof(float) : 0)) ||
      internal::Overlap(y_range, internal::RangeOf(bias, bias != nullptr ? cols * sizeof(float) : 0))) {
    return Status::kOverlap;
  }
  return Status::kOk;
}

}  // namespace

HWY_EXPORT(RmsNormRowsSimd);
HWY_EXPORT(LayerNormRowsSimd);

Status RmsNorm(const float* x, size_t rows, size_t cols, const float* weight, float eps, float* y) noexcept {
  const Status status = CheckNorm(x, rows, cols, weight, nullptr, eps, y);
  if (status == Status::kOk) EDGEATTN_DISPATCH(RmsNormRowsSimd)(x, rows, cols, weight, eps, y);
  return status;
}

Status LayerNorm(const float* x, size_t rows, size_t cols, const float* weight, const float* bias, float eps,
                 float* y) noexcept {
  const Status status = CheckNorm(x, rows, cols, weight, bias, eps, y);
  if (status == Status::kOk) EDGEATTN_DISPATCH(LayerNormRowsSimd)(x, rows, cols, weight, bias, eps, y);
  return status;
}

namespace scalar {
Status RmsNorm(const float* x, size_t rows, size_t cols, const float* weight, float eps, float* y) noexcept {
  const Status status = CheckNorm(x, rows, cols, weight, nullptr, eps, y);
  if (status == Status::kOk) internal::RmsNormRows<internal::NormScalarPasses>(x, rows, cols, weight, eps, y);
  return status;
}

Status LayerNorm(const float* x, size_t rows, size_t cols, const float* weight, const float* bias, float eps,
                 float* y) noexcept {
  const Status status = CheckNorm(x, rows, cols, weight, bias, eps, y);
  if (status == Status::kOk) {
    internal::LayerNormRows<internal::NormScalarPasses>(x, rows, cols, weight, bias, eps, y);
  }
  return status;
}
}  // namespace scalar

}  // namespace edgeattn
#endif  // HWY_ONCE
