// SPDX-License-Identifier: Apache-2.0
// Dot entry points: argument checks, then the scalar loop or the dispatched SIMD kernel.
#include <stddef.h>

#include "edgeattn/dot.h"
#include "lib/common/checks.h"
#include "lib/common/dispatch.h"
#include "lib/dot/dot_scalar.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/dot/dot.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/common/backend-inl.h"
#include "lib/dot/dot-inl.h"

#if HWY_ONCE
namespace edgeattn {
namespace {

Status CheckDot(const float* a, const float* b, size_t n, const float* result) {
  // With n = 0 the arrays are not read and may be null (empty containers); result is always written.
  if (result == nullptr || (n != 0 && (a == nullptr || b == nullptr))) return Status::kNullPointer;
  // A wrapped byte count would shrink the ranges the overlap check sees.
  size_t bytes = 0;
  if (!internal::FloatBytes(n, 1, 1, &bytes)) return Status::kInvalidShape;
  const internal::ByteRange out = internal::RangeOf(result, sizeof(float));
  if (internal::Overlap(out, internal::RangeOf(a, bytes)) || internal::Overlap(out, internal::RangeOf(b, bytes))) {
    return Status::kOverlap;
  }
  return Status::kOk;
}

}  // namespace

HWY_EXPORT(DotArrays);

Status Dot(const float* a, const float* b, size_t n, float* result) noexcept {
  const Status status = CheckDot(a, b, n, result);
  if (status == Status::kOk) EDGEATTN_DISPATCH(DotArrays)(a, b, n, result);
  return status;
}

namespace scalar {
Status Dot(const float* a, const float* b, size_t n, float* result) noexcept {
  const Status status = CheckDot(a, b, n, result);
  if (status == Status::kOk) *result = internal::DotScalar(a, b, n);
  return status;
}
}  // namespace scalar

}  // namespace edgeattn
#endif  // HWY_ONCE
