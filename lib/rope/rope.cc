// SPDX-License-Identifier: Apache-2.0
// RoPE entry points: one function turns the descriptor into the validated problem, then the scalar loop or the
// dispatched SIMD loop.
#include <stddef.h>

#include "edgeattn/rope.h"
#include "lib/common/checks.h"
#include "lib/common/dispatch.h"
#include "lib/common/float_util.h"
#include "lib/rope/rope_scalar.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/rope/rope.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/common/backend-inl.h"
#include "lib/rope/rope-inl.h"

#if HWY_ONCE
namespace edgeattn {
namespace {

constexpr float kDefaultRopeBase = 10000.0f;
// ln(10000) by the runtime log's steps, evaluated at compile time (to nearest): a decode step calls Rope once per
// layer for q and once for k, and the log was a fifth of the call at d = 8.
constexpr double kLogDefaultRopeBase = rope_detail::Log(static_cast<double>(kDefaultRopeBase));

// read_base false (the table variant): desc.base is neither checked nor turned into log_base, as rope.h states
// (the table holds the angles; on cores without a double FPU the log would be software-emulated for nothing).
Status MakeRopeProblem(const RopeDesc& desc, const float* x, size_t seq_len, size_t first_position, bool read_base,
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
  if (read_base && (!internal::IsFinite(base) || !(base > 1.0f))) return Status::kInvalidArgument;
  const int layout = static_cast<int>(desc.layout);
  if (layout != static_cast<int>(RopeLayout::kInterleaved) && layout != static_cast<int>(RopeLayout::kHalf)) {
    return Status::kInvalidArgument;
  }
  if (seq_len > kMaxPositions || first_position > kMaxPositions - seq_len) return Status::kInvalidArgument;
  problem->num_heads = desc.num_heads;
  problem->head_dim = desc.head_dim;
  problem->rotary_dim = rotary_dim;
  if (!read_base) {
    problem->log_base = 0.0;
  } else {
    problem->log_base = base == kDefaultRopeBase ? kLogDefaultRopeBase : internal::LogDouble(static_cast<double>(base));
  }
  problem->half = desc.layout == RopeLayout::kHalf;
  return Status::kOk;
}

Status CheckRopeTable(size_t rotary_dim, float base, size_t first_position, size_t positions, const float* table) {
  if (table == nullptr) return Status::kNullPointer;
  size_t bytes = 0;
  if (positions == 0 || !internal::FloatBytes(positions, rotary_dim, 1, &bytes)) return Status::kInvalidShape;
  if (rotary_dim == 0 || rotary_dim % 2 != 0) return Status::kInvalidArgument;
  const float b = base != 0.0f ? base : kDefaultRopeBase;
  if (!internal::IsFinite(b) || !(b > 1.0f)) return Status::kInvalidArgument;
  if (positions > kMaxPositions || first_position > kMaxPositions - positions) return Status::kInvalidArgument;
  return Status::kOk;
}

// The table variant's checks; on success *problem holds the validated problem.
Status CheckRopeWithTable(const RopeDesc& desc, const RopeTableView& table, const float* x, size_t seq_len,
                          size_t first_position, internal::RopeProblem* problem_out) {
  if (x == nullptr || table.data == nullptr) return Status::kNullPointer;
  internal::RopeProblem problem;
  Status status = MakeRopeProblem(desc, x, seq_len, first_position, /*read_base=*/false, &problem);
  if (status != Status::kOk) return status;
  size_t table_bytes = 0;
  if (table.rotary_dim != problem.rotary_dim || table.first_position > first_position || table.positions < seq_len ||
      first_position - table.first_position > table.positions - seq_len ||
      !internal::FloatBytes(table.positions, table.rotary_dim, 1, &table_bytes)) {
    return Status::kInvalidArgument;
  }
  const size_t x_bytes = seq_len * desc.num_heads * desc.head_dim * sizeof(float);  // checked by MakeRopeProblem
  if (internal::Overlap(internal::RangeOf(x, x_bytes), internal::RangeOf(table.data, table_bytes))) {
    return Status::kOverlap;
  }
  *problem_out = problem;
  return Status::kOk;
}

}  // namespace

Status RopeTableFill(size_t rotary_dim, float base, size_t first_position, size_t positions, float* table) noexcept {
  const Status status = CheckRopeTable(rotary_dim, base, first_position, positions, table);
  if (status != Status::kOk) return status;
  const double log_base = rope_detail::Log(static_cast<double>(base != 0.0f ? base : kDefaultRopeBase));
  for (size_t r = 0; r < positions; ++r) {
    rope_detail::FillRow(log_base, rotary_dim, first_position + r, table + r * rotary_dim);
  }
  return Status::kOk;
}

HWY_EXPORT(RopeRows);
HWY_EXPORT(RopeWithTableRows);

Status RopeWithTable(const RopeDesc& desc, const RopeTableView& table, float* x, size_t seq_len,
                     size_t first_position) noexcept {
  internal::RopeProblem problem;
  const Status status = CheckRopeWithTable(desc, table, x, seq_len, first_position, &problem);
  if (status == Status::kOk) {
    EDGEATTN_DISPATCH(RopeWithTableRows)(problem, table.data, table.first_position, x, seq_len, first_position);
  }
  return status;
}

namespace scalar {
Status RopeWithTable(const RopeDesc& desc, const RopeTableView& table, float* x, size_t seq_len,
                     size_t first_position) noexcept {
  internal::RopeProblem problem;
  const Status status = CheckRopeWithTable(desc, table, x, seq_len, first_position, &problem);
  if (status == Status::kOk)
    internal::RopeWithTableScalar(problem, table.data, table.first_position, x, seq_len, first_position);
  return status;
}
}  // namespace scalar

Status Rope(const RopeDesc& desc, float* x, size_t seq_len, size_t first_position) noexcept {
  internal::RopeProblem problem;
  const Status status = MakeRopeProblem(desc, x, seq_len, first_position, /*read_base=*/true, &problem);
  if (status == Status::kOk) EDGEATTN_DISPATCH(RopeRows)(problem, x, seq_len, first_position);
  return status;
}

namespace scalar {
Status Rope(const RopeDesc& desc, float* x, size_t seq_len, size_t first_position) noexcept {
  internal::RopeProblem problem;
  const Status status = MakeRopeProblem(desc, x, seq_len, first_position, /*read_base=*/true, &problem);
  if (status == Status::kOk) internal::RopeScalar(problem, x, seq_len, first_position);
  return status;
}
}  // namespace scalar

}  // namespace edgeattn
#endif  // HWY_ONCE
