// SPDX-License-Identifier: Apache-2.0
// Linear and linear_transposed entry points: argument checks (W holds in * out floats in either layout, so one
// check serves both), then the scalar loops or the dispatched SIMD kernel.
#include <stddef.h>

#include "edgeattn/linear.h"
#include "lib/common/checks.h"
#include "lib/common/dispatch.h"
#include "lib/linear/linear_scalar.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/linear/linear.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/common/backend-inl.h"
#include "lib/linear/linear-inl.h"

#if HWY_ONCE
namespace edgeattn {
namespace {

Status CheckLinear(const float* x, size_t rows, size_t in, const float* w, const float* bias, size_t out,
                   const float* y) {
  if (x == nullptr || w == nullptr || y == nullptr) return Status::kNullPointer;
  size_t x_bytes = 0, w_bytes = 0, y_bytes = 0;
  if (rows == 0 || in == 0 || out == 0 || !internal::FloatBytes(rows, in, 1, &x_bytes) ||
      !internal::FloatBytes(in, out, 1, &w_bytes) || !internal::FloatBytes(rows, out, 1, &y_bytes)) {
    return Status::kInvalidShape;
  }
  const internal::ByteRange y_range = internal::RangeOf(y, y_bytes);
  if (internal::Overlap(y_range, internal::RangeOf(x, x_bytes)) ||
      internal::Overlap(y_range, internal::RangeOf(w, w_bytes)) ||
      internal::Overlap(y_range, internal::RangeOf(bias, bias != nullptr ? out * sizeof(float) : 0))) {
    return Status::kOverlap;
  }
  return Status::kOk;
}

// Float parts repeat no setup (linear_q8's parts each quantise x): 64 outputs per part are enough to pay for
// handing a part to a thread.
constexpr size_t kLinearPartMinOutputs = 64;

}  // namespace

HWY_EXPORT(LinearRows);
HWY_EXPORT(LinearTransposedRows);

Status Linear(const float* x, size_t rows, size_t in_features, const float* weight, const float* bias,
              size_t out_features, float* y) noexcept {
  const Status status = CheckLinear(x, rows, in_features, weight, bias, out_features, y);
  if (status == Status::kOk) EDGEATTN_DISPATCH(LinearRows)(x, rows, in_features, weight, bias, out_features, y);
  return status;
}

Status LinearTransposed(const float* x, size_t rows, size_t in_features, const float* weight, const float* bias,
                        size_t out_features, float* y) noexcept {
  const Status status = CheckLinear(x, rows, in_features, weight, bias, out_features, y);
  if (status == Status::kOk) {
    EDGEATTN_DISPATCH(LinearTransposedRows)(x, rows, in_features, weight, bias, out_features, 0, out_features, y);
  }
  return status;
}

size_t LinearTransposedPartCount(size_t rows, size_t in_features, size_t out_features) noexcept {
  size_t bytes = 0;
  if (rows == 0 || in_features == 0 || out_features == 0 || !internal::FloatBytes(rows, in_features, 1, &bytes) ||
      !internal::FloatBytes(in_features, out_features, 1, &bytes) ||
      !internal::FloatBytes(rows, out_features, 1, &bytes)) {
    return 0;
  }
  const size_t per_part = internal::OutputPartSize(out_features, kLinearPartMinOutputs);
  return (out_features + per_part - 1) / per_part;
}

Status LinearTransposedPart(const float* x, size_t rows, size_t in_features, const float* weight, const float* bias,
                            size_t out_features, size_t part, float* y) noexcept {
  Status status = CheckLinear(x, rows, in_features, weight, bias, out_features, y);
  if (status == Status::kOk && part >= LinearTransposedPartCount(rows, in_features, out_features)) {
    status = Status::kInvalidArgument;
  }
  if (status == Status::kOk) {
    const size_t per_part = internal::OutputPartSize(out_features, kLinearPartMinOutputs);
    const size_t first = part * per_part, end = out_features - first < per_part ? out_features : first + per_part;
    EDGEATTN_DISPATCH(LinearTransposedRows)(x, rows, in_features, weight, bias, out_features, first, end, y);
  }
  return status;
}

namespace scalar {
Status Linear(const float* x, size_t rows, size_t in_features, const float* weight, const float* bias,
              size_t out_features, float* y) noexcept {
  const Status status = CheckLinear(x, rows, in_features, weight, bias, out_features, y);
  if (status == Status::kOk) internal::LinearScalar(x, rows, in_features, weight, bias, out_features, y);
  return status;
}

Status LinearTransposed(const float* x, size_t rows, size_t in_features, const float* weight, const float* bias,
                        size_t out_features, float* y) noexcept {
  const Status status = CheckLinear(x, rows, in_features, weight, bias, out_features, y);
  if (status == Status::kOk) internal::LinearTransposedScalar(x, rows, in_features, weight, bias, out_features, y);
  return status;
}
}  // namespace scalar

}  // namespace edgeattn
#endif  // HWY_ONCE
