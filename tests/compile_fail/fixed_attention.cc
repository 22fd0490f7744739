// SPDX-License-Identifier: Apache-2.0
// Built twice per case by tests/CMakeLists.txt: with INVALID=1 it must not compile (a static_assert in
// FixedAttention fires), with INVALID=0 the same declaration with a valid shape must compile.
#include "edgeattn/attention.h"

#if CASE_HEADS_NOT_MULTIPLE
// 6 query heads cannot share 4 K/V heads.
static edgeattn::FixedAttention<4, 4, 8, 8, 6, INVALID ? 4 : 3> attention;
#elif CASE_ZERO_LENGTH
static edgeattn::FixedAttention<INVALID ? 0 : 1, 4, 8> attention;
#elif CASE_ZERO_WIDTH
static edgeattn::FixedAttention<4, 4, INVALID ? 0 : 8> attention;
#endif

int main() {
  static float q[decltype(attention)::kWorkspaceBytes > 0 ? 1 : 1];
  (void)q;
  return 0;
}
