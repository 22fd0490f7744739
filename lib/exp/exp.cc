// SPDX-License-Identifier: Apache-2.0
// Exp entry points: argument checks, then the scalar loop or the dispatched SIMD loop.
#include <stddef.h>

#include "edgeattn/exp.h"
#include "lib/common/checks.h"
#include "lib/common/dispatch.h"
#include "lib/exp/exp_scalar.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/exp/exp.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/common/backend-inl.h"
#include "lib/exp/exp-inl.h"

#if HWY_ONCE
namespace edgeattn {
#if defined(__GNUC__)
namespace internal {
bool RoundsToNearestOutOfLine() noexcept { return RoundsToNearest(); }
}  // namespace internal
#endif

namespace {

Status CheckExp(const float* in, const float* out, size_t n) {
  if (n == 0) return Status::kOk;  // nothing is read or written: null arrays (empty containers) are fine
  if (in == nullptr || out == nullptr) return Status::kNullPointer;
  // A wrapped byte count would shrink the ranges the overlap check sees. Only partial overlap is refused.
  size_t bytes = 0;
  if (!internal::FloatBytes(n, 1, 1, &bytes)) return Status::kInvalidShape;
  if (internal::PartialOverlap(internal::RangeOf(in, bytes), internal::RangeOf(out, bytes))) return Status::kOverlap;
  return Status::kOk;
}

}  // namespace

HWY_EXPORT(ExpArray);

Status Exp(const float* in, float* out, size_t n) noexcept {
  const Status status = CheckExp(in, out, n);
  if (status == Status::kOk && n != 0) EDGEATTN_DISPATCH(ExpArray)(in, out, n);
  return status;
}

namespace scalar {
Status Exp(const float* in, float* out, size_t n) noexcept {
  const Status status = CheckExp(in, out, n);
  if (status != Status::kOk) return status;
  internal::ExpArrayScalar(in, out, n);
  return Status::kOk;
}
}  // namespace scalar

}  // namespace edgeattn
#endif  // HWY_ONCE
