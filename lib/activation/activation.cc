// SPDX-License-Identifier: Apache-2.0
// Activation, gated activation and add entry points: argument checks, then the scalar loop or the dispatched
// SIMD loop.
#include <stddef.h>

#include "edgeattn/activation.h"
#include "lib/activation/activation_scalar.h"
#include "lib/common/checks.h"
#include "lib/common/dispatch.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/activation/activation.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/activation/activation-inl.h"
#include "lib/common/backend-inl.h"

#if HWY_ONCE
namespace edgeattn {
namespace {

bool KnownActivation(Activation act) {
  switch (act) {
    case Activation::kGeluErf:
    case Activation::kGeluTanh:
    case Activation::kSilu:
    case Activation::kRelu:
      return true;
  }
  return false;
}

// One output y of n floats computed from inputs in0 and (optionally, null) in1, elementwise: y may be either
// input exactly, nothing else. n = 0 reads and writes nothing, so null arrays (empty containers) are fine.
Status CheckElementwise(const float* in0, const float* in1, bool has_in1, const float* y, size_t n) {
  if (n == 0) return Status::kOk;
  if (in0 == nullptr || (has_in1 && in1 == nullptr) || y == nullptr) return Status::kNullPointer;
  size_t bytes = 0;
  if (!internal::FloatBytes(n, 1, 1, &bytes)) return Status::kInvalidShape;
  return Status::kOk;
}

Status CheckOverlap(const float* in0, const float* in1, const float* y, size_t n) {
  if (n == 0) return Status::kOk;
  const size_t bytes = n * sizeof(float);
  const internal::ByteRange out = internal::RangeOf(y, bytes);
  if (internal::PartialOverlap(internal::RangeOf(in0, bytes), out) ||
      (in1 != nullptr && internal::PartialOverlap(internal::RangeOf(in1, bytes), out))) {
    return Status::kOverlap;
  }
  return Status::kOk;
}

Status CheckActivation(const float* in0, const float* in1, bool has_in1, const float* y, size_t n, Activation act) {
  const Status status = CheckElementwise(in0, in1, has_in1, y, n);
  if (status != Status::kOk) return status;
  if (!KnownActivation(act)) return Status::kInvalidArgument;
  return CheckOverlap(in0, in1, y, n);
}

Status CheckAdd(const float* a, const float* b, const float* y, size_t n) {
  const Status status = CheckElementwise(a, b, true, y, n);
  if (status != Status::kOk) return status;
  return CheckOverlap(a, b, y, n);
}

}  // namespace

HWY_EXPORT(ActivationArray);
HWY_EXPORT(GatedActivationArray);
HWY_EXPORT(AddArrays);

Status ActivationApply(const float* x, float* y, size_t n, Activation act) noexcept {
  const Status status = CheckActivation(x, nullptr, false, y, n, act);
  if (status == Status::kOk && n != 0) EDGEATTN_DISPATCH(ActivationArray)(x, y, n, act);
  return status;
}

Status GatedActivation(const float* gate, const float* up, float* y, size_t n, Activation act) noexcept {
  const Status status = CheckActivation(gate, up, true, y, n, act);
  if (status == Status::kOk && n != 0) EDGEATTN_DISPATCH(GatedActivationArray)(gate, up, y, n, act);
  return status;
}

Status Add(const float* a, const float* b, float* y, size_t n) noexcept {
  const Status status = CheckAdd(a, b, y, n);
  if (status == Status::kOk && n != 0) EDGEATTN_DISPATCH(AddArrays)(a, b, y, n);
  return status;
}

namespace scalar {

Status ActivationApply(const float* x, float* y, size_t n, Activation act) noexcept {
  const Status status = CheckActivation(x, nullptr, false, y, n, act);
  if (status != Status::kOk) return status;
  internal::ActivationArrayScalar(x, y, n, act);
  return Status::kOk;
}

Status GatedActivation(const float* gate, const float* up, float* y, size_t n, Activation act) noexcept {
  const Status status = CheckActivation(gate, up, true, y, n, act);
  if (status != Status::kOk) return status;
  internal::GatedActivationArrayScalar(gate, up, y, n, act);
  return Status::kOk;
}

Status Add(const float* a, const float* b, float* y, size_t n) noexcept {
  const Status status = CheckAdd(a, b, y, n);
  if (status != Status::kOk) return status;
  internal::AddArraysScalar(a, b, y, n);
  return Status::kOk;
}

}  // namespace scalar

}  // namespace edgeattn
#endif  // HWY_ONCE
