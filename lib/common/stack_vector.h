// SPDX-License-Identifier: Apache-2.0
// The stack a kernel may spend on a buffer that holds one vector (masked tails, lane reductions).
#ifndef EDGEATTN_LIB_COMMON_STACK_VECTOR_H_
#define EDGEATTN_LIB_COMMON_STACK_VECTOR_H_

#include <stddef.h>

namespace edgeattn {
namespace internal {

// 256 bytes: SVE's architectural maximum vector (2048 bits); x86 and NEON vectors are at most 64. HWY_MAX_BYTES
// is not a usable size: on RVV it is 64 KiB (LMUL 8 of the largest legal registers), which sized by it would put
// 64 KiB per buffer on a firmware stack. Kernels with a one-vector buffer use a tag capped at this many bytes
// and size the buffer by the tag's MaxLanes; each buffer static_asserts the bound for the target it is
// compiled for.
constexpr size_t kMaxStackVectorBytes = 256;

}  // namespace internal
}  // namespace edgeattn

#endif  // EDGEATTN_LIB_COMMON_STACK_VECTOR_H_
