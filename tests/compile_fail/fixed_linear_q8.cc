// SPDX-License-Identifier: Apache-2.0
// Built twice per case by tests/CMakeLists.txt: with INVALID=1 it must not compile (a static_assert in
// FixedLinearQ8 fires), with INVALID=0 the same declaration with a valid shape must compile.
#include "edgeattn/linear_q8.h"

#if CASE_ZERO_SIZE
static edgeattn::FixedLinearQ8<1, INVALID ? 0 : 32, 8, 32> layer;
#elif CASE_GROUP_NOT_DIVIDING
static edgeattn::FixedLinearQ8<1, 96, 8, INVALID ? 64 : 32> layer;
#elif CASE_GROUP_TOO_LARGE
static edgeattn::FixedLinearQ8<1, 2 * 65536, 8, INVALID ? 2 * 65536 : 65536> layer;
#endif

int main() { return decltype(layer)::kWorkspaceBytes > 0 ? 0 : 1; }
