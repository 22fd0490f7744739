// SPDX-License-Identifier: Apache-2.0
// The backend namespace of each target (lib/common/backend.h; docs/architecture.md, "Backends"). EDGEATTN_DISPATCH
// calls edgeattn::<static target>::backend::Fn while a backend is enabled. Qualified lookup of backend::Fn finds the
// backend's own Fn when its header declares one there, and otherwise, through the using-directive below, the
// target's Highway Fn: a backend supplies a subset of functions and kernel policies (a struct named as Highway's,
// e.g. DecodeKernels, deriving from it and replacing some of its steps), and the rest is the static target's.
// Every module includes this file after its kernels (the drivers' backend wrappers name backend::<policy>).

#if defined(EDGEATTN_LIB_COMMON_BACKEND_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_COMMON_BACKEND_INL_H_
#undef EDGEATTN_LIB_COMMON_BACKEND_INL_H_
#else
#define EDGEATTN_LIB_COMMON_BACKEND_INL_H_
#endif

#include "hwy/highway.h"
#include "lib/common/backend.h"

// No HWY_BEFORE_NAMESPACE: the region would hold no function, and clang warns of an unused target attribute
// (-Wpragma-clang-attribute, an error in -Werror builds with -march=native).
namespace edgeattn {
namespace HWY_NAMESPACE {
namespace backend {
using namespace ::edgeattn::HWY_NAMESPACE;  // NOLINT(google-build-using-namespace): the fallback, see above
}  // namespace backend
}  // namespace HWY_NAMESPACE
}  // namespace edgeattn

#if EDGEATTN_HAS_BACKEND && HWY_TARGET == HWY_STATIC_TARGET
#include EDGEATTN_BACKEND_HEADER
#endif

#endif  // include guard toggle
