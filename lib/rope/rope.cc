// RoPE entry points: one function turns the descriptor into the validated problem, then the scalar loop or the
// dispatched SIMD loop.
#include <stddef.h>

#include "edgeattn/rope.h"
#include "lib/common/checks.h"
#include "lib/common/float_util.h"
#include "lib/rope/rope_scalar.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/rope/rope.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/rope/rope-inl.h"

#if HWY_ONCE
namespace edgeattn {
namespace {

constexpr float kDefaultRopeBase = 10000.0f;

Status MakeRopeProblem(const RopeDesc& desc, const float* x, size_t seq_len, size_t first_position,
                       internal::RopeProblem* problem) {
  if (x == nullptr) return Status::kNullPointer;
  size_t bytes = 0;
  if (desc.num_heads == 0 || desc.head_dim == 0 || seq_len == 0 ||
      !internal::FloatBytes(seq_len, desc.num_heads, desc.head_dim, &bytes)) {
    return Status::kInvalidShape;
  }
  const size_t rotary_dim = desc.rotary_dim != 0 ? desc.rotary_dim : desc.head_dim;
  if (rotary_dim % 2 != 0 || rotary_dim > desc.head_dim) return Status::kInvalidArgument;
  const float base = desc.base != 0.0f ? desc.base : kDefaultRopeBase;
  if (!internal::IsFinite(base) || !(base > 1.0f)) return Status::kInvalidArgument;
  const int layout = static_cast<int>(desc.layout);
  if (layout != static_cast<int>(RopeLayout::kInterleaved) && layout != static_cast<int>(RopeLayout::kHalf)) {
    return Status::kInvalidArgument;
  }
  if (seq_len > kMaxPositions || first_position > kMaxPositions - seq_len) return Status::kInvalidArgument;
  problem->num_heads = desc.num_heads;
  problem->head_dim = desc.head_dim;
  problem->rotary_dim = rotary_dim;
  problem->log_base = internal::LogDouble(static_cast<double>(base));
  problem->half = desc.layout == RopeLayout::kHalf;
  return Status::kOk;
}

}  // namespace

HWY_EXPORT(RopeRows);

Status Rope(const RopeDesc& desc, float* x, size_t seq_len, size_t first_position) noexcept {
  internal::RopeProblem problem;
  const Status status = MakeRopeProblem(desc, x, seq_len, first_position, &problem);
  if (status == Status::kOk) HWY_DYNAMIC_DISPATCH(RopeRows)(problem, x, seq_len, first_position);
  return status;
}

namespace scalar {
Status Rope(const RopeDesc& desc, float* x, size_t seq_len, size_t first_position) noexcept {
  internal::RopeProblem problem;
  const Status status = MakeRopeProblem(desc, x, seq_len, first_position, &problem);
  if (status == Status::kOk) internal::RopeScalar(problem, x, seq_len, first_position);
  return status;
}
}  // namespace scalar

}  // namespace edgeattn
#endif  // HWY_ONCE
