// The one dispatch point of the library's entry points (docs/architecture.md, "Backends"): every public function
// reaches its SIMD code through EDGEATTN_DISPATCH(Fn)(args), Fn exported once per module with HWY_EXPORT(Fn).
// Without a backend this is Highway's HWY_DYNAMIC_DISPATCH (the best target the CPU runs, or the one a test
// forces; the static target in static-dispatch builds). Use it inside HWY_ONCE, with Fn unqualified, from the
// namespace that holds HWY_EXPORT(Fn).
#ifndef EDGEATTN_LIB_COMMON_DISPATCH_H_
#define EDGEATTN_LIB_COMMON_DISPATCH_H_

#include "lib/common/arch.h"

#define EDGEATTN_DISPATCH(FN) HWY_DYNAMIC_DISPATCH(FN)

namespace edgeattn {
namespace internal {
// For tests: whether the code EDGEATTN_DISPATCH selects now (a forced target included) runs on a vector unit
// that flushes subnormal floats (lib/common/vector_unit-inl.h, kVectorFlushesSubnormals).
bool DispatchedVectorFlushesSubnormals() noexcept;
}  // namespace internal
}  // namespace edgeattn

#endif  // EDGEATTN_LIB_COMMON_DISPATCH_H_
