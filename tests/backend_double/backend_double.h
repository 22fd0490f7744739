// SPDX-License-Identifier: Apache-2.0
// The test double's counters (tests/backend_double/backend_double-inl.h): how often its kernels ran. Shared by the
// library built with the double (edgeattn_backend_double) and its tests: one C++17 inline variable each.
#ifndef EDGEATTN_TESTS_BACKEND_DOUBLE_BACKEND_DOUBLE_H_
#define EDGEATTN_TESTS_BACKEND_DOUBLE_BACKEND_DOUBLE_H_

#include <stddef.h>

#include <atomic>

namespace edgeattn_test {

inline std::atomic<size_t> g_double_scores_calls{0};  // the double's DecodeKernels::Scores
inline std::atomic<size_t> g_double_pv_calls{0};      // its DecodeKernels::Pv

}  // namespace edgeattn_test

#endif  // EDGEATTN_TESTS_BACKEND_DOUBLE_BACKEND_DOUBLE_H_
