// SPDX-License-Identifier: Apache-2.0
// The one dispatch point of the library's entry points (docs/architecture.md, "Backends"): every public function
// reaches its SIMD code through EDGEATTN_DISPATCH(Fn)(args), Fn exported once per module with HWY_EXPORT(Fn). It is
// Highway's HWY_DYNAMIC_DISPATCH (the best target the CPU runs, or the one a test forces; the static target in
// static-dispatch builds), or, in a build with a backend while it is enabled, the static target's backend::Fn
// (lib/common/backend-inl.h: the backend's Fn, or Highway's where the backend supplies none). Use it inside HWY_ONCE,
// with Fn unqualified, from the namespace that holds HWY_EXPORT(Fn), in a file that includes backend-inl.h.
#ifndef EDGEATTN_LIB_COMMON_DISPATCH_H_
#define EDGEATTN_LIB_COMMON_DISPATCH_H_

#include "lib/common/arch.h"
#include "lib/common/backend.h"

#if EDGEATTN_HAS_BACKEND && EDGEATTN_BACKEND_SWITCHABLE
// BackendOr below: two calls of known functions, not a call of `(c ? f : g)`, which GCC compiles as an indirect call
// that the stack check (tools/stack_report.py) cannot follow.
#define EDGEATTN_DISPATCH(FN)                                           \
  ::edgeattn::internal::BackendOr<decltype(&HWY_STATIC_DISPATCH(FN))> { \
    &HWY_STATIC_DISPATCH(backend::FN), HWY_DYNAMIC_DISPATCH(FN)         \
  }
#elif EDGEATTN_HAS_BACKEND
#define EDGEATTN_DISPATCH(FN) HWY_STATIC_DISPATCH(backend::FN)
#else
#define EDGEATTN_DISPATCH(FN) HWY_DYNAMIC_DISPATCH(FN)
#endif

namespace edgeattn {
namespace internal {
#if EDGEATTN_HAS_BACKEND && EDGEATTN_BACKEND_SWITCHABLE
template <class Fn>
struct BackendOr;
// Calls the backend's function while it is enabled, else Highway's; the parameters are the exported function's, so
// the arguments convert as in a direct call. Both pointers are constants where the macro is expanded: after inlining,
// the calls are direct.
template <class R, class... Args>
struct BackendOr<R (*)(Args...)> {
  R (*backend)(Args...);
  R (*highway)(Args...);
  R operator()(Args... args) const {
    if (BackendEnabled()) return backend(args...);
    return highway(args...);
  }
};
#endif
// For tests: whether the code EDGEATTN_DISPATCH selects now (a forced target included) runs on a vector unit
// that flushes subnormal floats (lib/common/vector_unit-inl.h, kVectorFlushesSubnormals).
bool DispatchedVectorFlushesSubnormals() noexcept;
}  // namespace internal
}  // namespace edgeattn

#endif  // EDGEATTN_LIB_COMMON_DISPATCH_H_
