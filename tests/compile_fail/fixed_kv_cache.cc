// SPDX-License-Identifier: Apache-2.0
// Built twice per case by tests/CMakeLists.txt: with INVALID=1 it must not compile (a static_assert in
// FixedKvCache fires), with INVALID=0 the same declaration with a valid shape must compile.
#include "edgeattn/kv_cache.h"

#if CASE_WINDOW_BEYOND_CAPACITY
static edgeattn::FixedKvCache<8, 1, 4, 4, edgeattn::KvType::kF16, INVALID ? 9 : 8> cache;
#elif CASE_ZERO_CAPACITY
static edgeattn::FixedKvCache<INVALID ? 0 : 1, 1, 4> cache;
#elif CASE_ZERO_HEAD_WIDTH
static edgeattn::FixedKvCache<8, 1, INVALID ? 0 : 4> cache;
#elif CASE_UNKNOWN_TYPE
static edgeattn::FixedKvCache<8, 1, 4, 4, static_cast<edgeattn::KvType>(INVALID ? 3 : 2)> cache;
#endif

int main() { return cache.length() == 0 && decltype(cache)::kStorageBytes > 0 ? 0 : 1; }
