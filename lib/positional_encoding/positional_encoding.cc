// SPDX-License-Identifier: Apache-2.0
// Positional-encoding entry points: argument checks, then the scalar loop or the dispatched SIMD loop.
#include <stddef.h>

#include "edgeattn/positional_encoding.h"
#include "lib/common/checks.h"
#include "lib/common/dispatch.h"
#include "lib/positional_encoding/positional_encoding_scalar.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/positional_encoding/positional_encoding.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/common/backend-inl.h"
#include "lib/positional_encoding/positional_encoding-inl.h"

#if HWY_ONCE
namespace edgeattn {
namespace {

Status CheckPositionalEncoding(const float* x, size_t seq_len, size_t d_model, size_t first_position) {
  if (x == nullptr) return Status::kNullPointer;
  size_t bytes = 0;
  if (seq_len == 0 || d_model == 0 || !internal::FloatBytes(seq_len, d_model, 1, &bytes)) return Status::kInvalidShape;
  if (seq_len > kMaxPositions || first_position > kMaxPositions - seq_len) return Status::kInvalidArgument;
  return Status::kOk;
}

}  // namespace

HWY_EXPORT(AddPositionalEncodingRows);

Status AddPositionalEncoding(float* x, size_t seq_len, size_t d_model, size_t first_position) noexcept {
  const Status status = CheckPositionalEncoding(x, seq_len, d_model, first_position);
  if (status == Status::kOk) EDGEATTN_DISPATCH(AddPositionalEncodingRows)(x, seq_len, d_model, first_position);
  return status;
}

namespace scalar {
Status AddPositionalEncoding(float* x, size_t seq_len, size_t d_model, size_t first_position) noexcept {
  const Status status = CheckPositionalEncoding(x, seq_len, d_model, first_position);
  if (status == Status::kOk) internal::AddPositionalEncodingScalar(x, seq_len, d_model, first_position);
  return status;
}
}  // namespace scalar

}  // namespace edgeattn
#endif  // HWY_ONCE
