// SPDX-License-Identifier: Apache-2.0
// A backend for testing the seam (docs/architecture.md, "Backends"): what a hand-written backend header looks like,
// with kernels that are the static target's own, counted. It supplies a subset: the decode path's Scores and Pv
// (DecodeKernels, deriving from Highway's); the rest of every entry point falls back to Highway's static target.
// Included by lib/common/backend-inl.h in the static target's pass only, when the build defines
// EDGEATTN_BACKEND_HEADER to this file (tests/CMakeLists.txt, edgeattn_backend_double).
#ifndef EDGEATTN_TESTS_BACKEND_DOUBLE_BACKEND_DOUBLE_INL_H_
#define EDGEATTN_TESTS_BACKEND_DOUBLE_BACKEND_DOUBLE_INL_H_

#include <stddef.h>

#include "hwy/highway.h"
#include "lib/attention/decode-inl.h"
#include "lib/common/row_source.h"
#include "tests/backend_double/backend_double.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace backend {

struct DecodeKernels : ::edgeattn::HWY_NAMESPACE::DecodeKernels {
  using Highway = ::edgeattn::HWY_NAMESPACE::DecodeKernels;
  template <class Format, size_t GH, class D>
  static void Scores(D d, const float* const* q, const internal::RowSource& k, size_t head_dim, size_t nb, float scale,
                     float* const* s) {
    edgeattn_test::g_double_scores_calls.fetch_add(1, std::memory_order_relaxed);
    Highway::Scores<Format, GH>(d, q, k, head_dim, nb, scale, s);
  }
  template <class Format, size_t GH, class D>
  static void Pv(D d, const float* const* p, size_t n, const internal::RowSource& v, float* const* out, size_t width,
                 const float* alpha, bool rescale) {
    edgeattn_test::g_double_pv_calls.fetch_add(1, std::memory_order_relaxed);
    Highway::Pv<Format, GH>(d, p, n, v, out, width, alpha, rescale);
  }
};

}  // namespace backend
}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // EDGEATTN_TESTS_BACKEND_DOUBLE_BACKEND_DOUBLE_INL_H_
