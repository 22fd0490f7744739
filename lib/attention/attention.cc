// SPDX-License-Identifier: Apache-2.0
// Attention entry points: descriptor and buffer checks, then the scalar or the dispatched SIMD kernels.
#include <math.h>
#include <stddef.h>

#include "edgeattn/attention.h"
#include "lib/attention/attention_checks.h"
#include "lib/attention/attention_driver.h"
#include "lib/attention/attention_path.h"
#include "lib/attention/attention_scalar.h"
#include "lib/attention/attention_split.h"
#include "lib/common/checks.h"
#include "lib/common/dispatch.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/attention/attention.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/attention/attention-inl.h"

#if HWY_ONCE
namespace edgeattn {
namespace {

// Byte counts of every array a descriptor implies.
struct AttentionBytes {
  size_t q, k, v, out, mask, weights;
};

// What a call uses besides its inputs: Attention an output and a workspace, AttentionWeights the weights. Only
// the arrays a call uses limit its shape (a weights count that overflows size_t does not stop Attention).
enum class Uses { kOutAndWorkspace, kWeights };

// The internal problem of a descriptor: num_kv_heads and the scale resolved (the scale by ResolvedScale, the one
// place it is resolved).
internal::AttentionProblem ProblemOf(const AttentionDesc& desc) {
  internal::AttentionProblem problem;
  problem.q_len = desc.q_len;
  problem.kv_len = desc.kv_len;
  problem.head_dim = desc.head_dim;
  problem.value_dim = desc.value_dim;
  problem.num_heads = desc.num_heads;
  problem.num_kv_heads = desc.num_kv_heads == 0 ? desc.num_heads : desc.num_kv_heads;
  problem.scale = internal::ResolvedScale(desc.scale, desc.head_dim);
  problem.causal = desc.mask == MaskKind::kCausal;
  problem.mask = desc.additive_mask;
  return problem;
}

// Shape and argument checks of the descriptor alone; fills problem and bytes when it is valid.
Status CheckDesc(const AttentionDesc& desc, Uses uses, internal::AttentionProblem* problem, AttentionBytes* bytes) {
  const size_t kv_heads = desc.num_kv_heads == 0 ? desc.num_heads : desc.num_kv_heads;
  if (desc.q_len == 0 || desc.kv_len == 0 || desc.head_dim == 0 || desc.value_dim == 0 || desc.num_heads == 0) {
    return Status::kInvalidShape;
  }
  if (!internal::FloatBytes(desc.q_len, desc.num_heads, desc.head_dim, &bytes->q) ||
      !internal::FloatBytes(desc.kv_len, kv_heads, desc.head_dim, &bytes->k) ||
      !internal::FloatBytes(desc.kv_len, kv_heads, desc.value_dim, &bytes->v) ||
      !internal::FloatBytes(desc.q_len, desc.kv_len, 1, &bytes->mask)) {
    return Status::kInvalidShape;
  }
  bytes->out = bytes->weights = 0;
  if (uses == Uses::kOutAndWorkspace
          ? !internal::FloatBytes(desc.q_len, desc.num_heads, desc.value_dim, &bytes->out) ||
                AttentionWorkspaceBytes(desc.q_len, desc.kv_len, desc.head_dim, desc.value_dim) == 0
          : !internal::FloatBytes(desc.num_heads, desc.q_len, desc.kv_len, &bytes->weights)) {
    return Status::kInvalidShape;
  }
  if (desc.num_heads % kv_heads != 0) return Status::kInvalidArgument;
  const Status status = internal::CheckScaleAndMask(desc);
  if (status != Status::kOk) return status;
  if (desc.additive_mask == nullptr) bytes->mask = 0;
  *problem = ProblemOf(desc);
  return Status::kOk;
}

// The work split of a valid descriptor (attention_split.h); its count is 0 when it overflows size_t.
internal::PartGrid GridOf(const AttentionDesc& desc) {
  return internal::MakePartGrid(desc.num_heads, desc.q_len, desc.kv_len, desc.additive_mask != nullptr,
                                desc.mask == MaskKind::kCausal);
}

internal::SharedLayout SharedLayoutOf(const AttentionDesc& desc, const internal::PartGrid& grid) {
  return internal::MakeSharedLayout(desc.num_heads * desc.q_len, grid.chunks, desc.value_dim);
}

// The split's own shape limit: its part count and shared bytes fit in size_t.
bool SplitFits(const AttentionDesc& desc, internal::PartGrid* grid, internal::SharedLayout* layout) {
  *grid = GridOf(desc);
  *layout = SharedLayoutOf(desc, *grid);
  return grid->count != 0 && (grid->chunks == 1 || layout->bytes != 0);
}

// Attention's checks (attention_checks.h gives the order); with split != null, those of part split->part.
Status CheckAttention(const AttentionDesc& desc, const float* q, const float* k, const float* v, const float* out,
                      const void* workspace, size_t workspace_size, internal::AttentionProblem* problem,
                      const internal::SplitArgs* split = nullptr) {
  if (q == nullptr || k == nullptr || v == nullptr || out == nullptr) return Status::kNullPointer;
  AttentionBytes bytes;
  const Status status = CheckDesc(desc, Uses::kOutAndWorkspace, problem, &bytes);
  if (status != Status::kOk) return status;
  internal::PartGrid grid{};
  internal::SharedLayout layout{};
  if (split != nullptr && !SplitFits(desc, &grid, &layout)) return Status::kInvalidShape;
  using internal::RangeOf;
  const internal::CallBuffers buffers{RangeOf(out, bytes.out),
                                      workspace,
                                      workspace_size,
                                      AttentionWorkspaceBytes(desc.q_len, desc.kv_len, desc.head_dim, desc.value_dim),
                                      split,
                                      grid.count,
                                      layout.bytes};
  const internal::ByteRange inputs[] = {RangeOf(q, bytes.q), RangeOf(k, bytes.k), RangeOf(v, bytes.v),
                                        RangeOf(desc.additive_mask, bytes.mask)};
  return internal::CheckCallBuffers(buffers, inputs, 4);
}

Status CheckWeights(const AttentionDesc& desc, const float* q, const float* k, const float* weights,
                    internal::AttentionProblem* problem) {
  if (q == nullptr || k == nullptr || weights == nullptr) return Status::kNullPointer;
  AttentionBytes bytes;
  const Status status = CheckDesc(desc, Uses::kWeights, problem, &bytes);
  if (status != Status::kOk) return status;
  using internal::Overlap;
  using internal::RangeOf;
  const internal::ByteRange w_range = RangeOf(weights, bytes.weights);
  if (Overlap(w_range, RangeOf(q, bytes.q)) || Overlap(w_range, RangeOf(k, bytes.k)) ||
      Overlap(w_range, RangeOf(desc.additive_mask, bytes.mask))) {
    return Status::kOverlap;
  }
  return Status::kOk;
}

}  // namespace

HWY_EXPORT(AttentionForward);
HWY_EXPORT(AttentionWeightsForward);
HWY_EXPORT(AttentionPathOf);
HWY_EXPORT(AttentionPartForward);
HWY_EXPORT(AttentionFinishForward);

size_t AttentionWorkspaceSize(const AttentionDesc& desc) noexcept {
  internal::AttentionProblem problem;
  AttentionBytes bytes;
  return CheckDesc(desc, Uses::kOutAndWorkspace, &problem, &bytes) == Status::kOk
             ? AttentionWorkspaceBytes(desc.q_len, desc.kv_len, desc.head_dim, desc.value_dim)
             : 0;
}

Status Attention(const AttentionDesc& desc, const float* q, const float* k, const float* v, float* out, void* workspace,
                 size_t workspace_size) noexcept {
  internal::AttentionProblem problem;
  const Status status = CheckAttention(desc, q, k, v, out, workspace, workspace_size, &problem);
  if (status == Status::kOk) {
    EDGEATTN_DISPATCH(AttentionForward)(problem, q, k, v, out, internal::AlignedScratch(workspace));
  }
  return status;
}

namespace {
// The split of a valid descriptor whose shared buffer fits in size_t; false otherwise.
bool ValidSplit(const AttentionDesc& desc, internal::PartGrid* grid, internal::SharedLayout* layout) {
  internal::AttentionProblem problem;
  AttentionBytes bytes;
  return CheckDesc(desc, Uses::kOutAndWorkspace, &problem, &bytes) == Status::kOk && SplitFits(desc, grid, layout);
}
}  // namespace

size_t AttentionPartCount(const AttentionDesc& desc) noexcept {
  internal::PartGrid grid;
  internal::SharedLayout layout;
  return ValidSplit(desc, &grid, &layout) ? grid.count : 0;
}

size_t AttentionSharedSize(const AttentionDesc& desc) noexcept {
  internal::PartGrid grid;
  internal::SharedLayout layout;
  return ValidSplit(desc, &grid, &layout) ? layout.bytes : 0;
}

Status AttentionPart(const AttentionDesc& desc, size_t part, const float* q, const float* k, const float* v, float* out,
                     void* shared, size_t shared_size, void* workspace, size_t workspace_size) noexcept {
  internal::AttentionProblem problem;
  const internal::SplitArgs split{part, shared, shared_size};
  const Status status = CheckAttention(desc, q, k, v, out, workspace, workspace_size, &problem, &split);
  if (status == Status::kOk) {
    EDGEATTN_DISPATCH(AttentionPartForward)
    (problem, part, q, k, v, out, shared == nullptr ? nullptr : internal::AlignedScratch(shared),
     internal::AlignedScratch(workspace));
  }
  return status;
}

Status AttentionFinish(const AttentionDesc& desc, void* shared, size_t shared_size, float* out) noexcept {
  if (out == nullptr) return Status::kNullPointer;
  internal::AttentionProblem problem;
  AttentionBytes bytes;
  Status status = CheckDesc(desc, Uses::kOutAndWorkspace, &problem, &bytes);
  if (status != Status::kOk) return status;
  internal::PartGrid grid;
  internal::SharedLayout layout;
  if (!SplitFits(desc, &grid, &layout)) return Status::kInvalidShape;
  bool work;
  status = internal::CheckFinishBuffers(internal::RangeOf(out, bytes.out), shared, shared_size, layout.bytes, &work);
  if (work) EDGEATTN_DISPATCH(AttentionFinishForward)(problem, internal::AlignedScratch(shared), out);
  return status;
}

namespace internal {

float ResolvedScale(float scale, size_t head_dim) noexcept {
  if (!(scale >= 0.0f) || !IsFinite(scale) || head_dim == 0) return 0.0f;
  return scale != 0.0f ? scale : 1.0f / sqrtf(static_cast<float>(head_dim));
}

Status AttentionFixedShape(const AttentionDesc& desc, const float* q, const float* k, const float* v, float* out,
                           void* workspace) noexcept {
  // The shape passed FixedAttention's static_asserts (every byte count fits in size_t, num_kv_heads >= 1
  // divides num_heads, a known mask kind) and desc.scale is resolved; out can still alias an input of the same
  // array type, and the mask comes from the caller.
  const size_t k_row = desc.num_kv_heads * sizeof(float);
  const ByteRange out_range = RangeOf(out, desc.q_len * desc.num_heads * desc.value_dim * sizeof(float));
  const ByteRange inputs[] = {
      RangeOf(q, desc.q_len * desc.num_heads * desc.head_dim * sizeof(float)),
      RangeOf(k, desc.kv_len * desc.head_dim * k_row), RangeOf(v, desc.kv_len * desc.value_dim * k_row),
      RangeOf(desc.additive_mask, desc.additive_mask == nullptr ? 0 : desc.q_len * desc.kv_len * sizeof(float))};
  for (const ByteRange& in : inputs) {
    if (Overlap(out_range, in)) return Status::kOverlap;
  }
  EDGEATTN_DISPATCH(AttentionForward)(ProblemOf(desc), q, k, v, out, AlignedScratch(workspace));
  return Status::kOk;
}

AttentionPath AttentionPathForTest(const AttentionDesc& desc) noexcept {
  AttentionProblem problem;
  AttentionBytes bytes;
  if (CheckDesc(desc, Uses::kOutAndWorkspace, &problem, &bytes) != Status::kOk) return AttentionPath::kRow;
  return EDGEATTN_DISPATCH(AttentionPathOf)(problem);
}

}  // namespace internal

Status AttentionWeights(const AttentionDesc& desc, const float* q, const float* k, float* weights) noexcept {
  internal::AttentionProblem problem;
  const Status status = CheckWeights(desc, q, k, weights, &problem);
  if (status == Status::kOk) EDGEATTN_DISPATCH(AttentionWeightsForward)(problem, q, k, weights);
  return status;
}

namespace scalar {

size_t AttentionWorkspaceSize(const AttentionDesc& desc) noexcept { return edgeattn::AttentionWorkspaceSize(desc); }

Status Attention(const AttentionDesc& desc, const float* q, const float* k, const float* v, float* out, void* workspace,
                 size_t workspace_size) noexcept {
  internal::AttentionProblem problem;
  const Status status = CheckAttention(desc, q, k, v, out, workspace, workspace_size, &problem);
  if (status == Status::kOk) {
    internal::AttentionRows<internal::ScalarAttentionKernels>(problem, q, k, v, out,
                                                              internal::AlignedScratch(workspace));
  }
  return status;
}

Status AttentionWeights(const AttentionDesc& desc, const float* q, const float* k, float* weights) noexcept {
  internal::AttentionProblem problem;
  const Status status = CheckWeights(desc, q, k, weights, &problem);
  if (status == Status::kOk) internal::AttentionWeightRows<internal::ScalarAttentionKernels>(problem, q, k, weights);
  return status;
}

}  // namespace scalar
}  // namespace edgeattn
#endif  // HWY_ONCE
