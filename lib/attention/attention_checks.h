// SPDX-License-Identifier: Apache-2.0
// The checks every attention entry point shares (Attention, AttentionPart, AttentionFinish and their AttentionCached
// twins), so that the errors come in one order, written once:
//   1. kNullPointer      the inputs and out (the cache's storage for AttentionCached);
//   2. kInvalidShape     the descriptor's sizes (and the cache's length), then the split's grid fitting in size_t;
//   3. kInvalidArgument  the descriptor's arguments (CheckScaleAndMask: its scale and mask rules; the callers add
//                        their own: num_kv_heads, the cache's widths), then a part index past the grid;
//   4. kWorkspaceTooSmall the workspace, then the shared buffer of a part or a finish;
//   5. kNullPointer      a workspace, or a shared buffer that must exist, that is null (checked after its size: a
//                        call whose buffer is too small is told so first);
//   6. kOverlap          the matrix of CheckCallBuffers: out, the workspace and shared pairwise disjoint and
//                        disjoint from every input (a finish: out and shared).
#ifndef EDGEATTN_LIB_ATTENTION_ATTENTION_CHECKS_H_
#define EDGEATTN_LIB_ATTENTION_ATTENTION_CHECKS_H_

#include <stddef.h>

#include "edgeattn/attention.h"
#include "lib/common/checks.h"
#include "lib/common/float_util.h"

namespace edgeattn {
namespace internal {

// The descriptor's scale (0: the default 1/sqrt(head_dim), else finite and > 0; the negated test also catches NaN)
// and its mask kind (kNone or kCausal): kInvalidArgument, else kOk.
inline Status CheckScaleAndMask(const AttentionDesc& desc) {
  if (!(desc.scale >= 0.0f) || !IsFinite(desc.scale)) return Status::kInvalidArgument;
  if (desc.mask != MaskKind::kNone && desc.mask != MaskKind::kCausal) return Status::kInvalidArgument;
  return Status::kOk;
}

// A part's arguments (AttentionPart, AttentionCachedPart); null for the single call.
struct SplitArgs {
  size_t part;
  const void* shared;
  size_t shared_size;
};

// What a call writes and reads besides its inputs, sized for a valid problem: steps 3 (the part index) to 6 above.
struct CallBuffers {
  ByteRange out;
  const void* workspace;
  size_t workspace_size;   // the caller's
  size_t workspace_bytes;  // the call's need
  const SplitArgs* split;  // null: the single call
  size_t part_count;       // a part's grid
  size_t shared_bytes;     // a part's shared need (0: the grid has one chunk, no buffer)
};

inline Status CheckCallBuffers(const CallBuffers& b, const ByteRange* inputs, size_t num_inputs) {
  if (b.split != nullptr && b.split->part >= b.part_count) return Status::kInvalidArgument;
  if (b.workspace_size < b.workspace_bytes) return Status::kWorkspaceTooSmall;
  if (b.split != nullptr && b.split->shared_size < b.shared_bytes) return Status::kWorkspaceTooSmall;
  if (b.workspace == nullptr) return Status::kNullPointer;
  if (b.split != nullptr && b.shared_bytes != 0 && b.split->shared == nullptr) return Status::kNullPointer;
  const ByteRange ws = RangeOf(b.workspace, b.workspace_bytes);
  const ByteRange shared = RangeOf(b.split != nullptr ? b.split->shared : nullptr, b.shared_bytes);
  if (Overlap(b.out, ws) || Overlap(shared, b.out) || Overlap(shared, ws)) return Status::kOverlap;
  for (size_t i = 0; i < num_inputs; ++i) {
    if (Overlap(b.out, inputs[i]) || Overlap(ws, inputs[i]) || Overlap(shared, inputs[i])) return Status::kOverlap;
  }
  return Status::kOk;
}

// A finish's buffers after its problem and grid are valid: *work is set when there are partials to combine (a
// grid of one chunk has none: kOk with nothing to do).
inline Status CheckFinishBuffers(ByteRange out, const void* shared, size_t shared_size, size_t shared_bytes,
                                 bool* work) {
  *work = false;
  if (shared_size < shared_bytes) return Status::kWorkspaceTooSmall;
  if (shared_bytes == 0) return Status::kOk;
  if (shared == nullptr) return Status::kNullPointer;
  if (Overlap(out, RangeOf(shared, shared_bytes))) return Status::kOverlap;
  *work = true;
  return Status::kOk;
}

}  // namespace internal
}  // namespace edgeattn

#endif  // EDGEATTN_LIB_ATTENTION_ATTENTION_CHECKS_H_
