// SPDX-License-Identifier: Apache-2.0
// The backend seam (docs/architecture.md, "Backends"): a SIMD backend that is not Highway (Helium on Cortex-M55 is
// the first planned) supplies kernels to the drivers of the static target, and every entry point reaches it through
// EDGEATTN_DISPATCH (lib/common/dispatch.h). A build has at most one: CMake's EDGEATTN_BACKEND=<name> defines
// EDGEATTN_BACKEND_HEADER, the backend's header (included by lib/common/backend-inl.h in the static target's pass),
// and EDGEATTN_BACKEND_NAME.
#ifndef EDGEATTN_LIB_COMMON_BACKEND_H_
#define EDGEATTN_LIB_COMMON_BACKEND_H_

#ifdef EDGEATTN_BACKEND_HEADER
#define EDGEATTN_HAS_BACKEND 1
#ifndef EDGEATTN_BACKEND_NAME
#error "a backend has a name: define EDGEATTN_BACKEND_NAME with EDGEATTN_BACKEND_HEADER"
#endif
#else
#define EDGEATTN_HAS_BACKEND 0
#endif
// EDGEATTN_BACKEND_SWITCHABLE=1 (the test double's build): tests can turn the backend off and run the static
// target's Highway code in its place, which the library then also contains, behind a flag in .data. Otherwise (the
// HELIUM builds) the backend always runs: the entry points call its functions directly, and the Highway code it
// replaces is not compiled into the archive (a firmware would carry both: +20 KB of the M55 firmware example).
#ifndef EDGEATTN_BACKEND_SWITCHABLE
#define EDGEATTN_BACKEND_SWITCHABLE 0
#endif

namespace edgeattn {
namespace internal {

// Whether the backend's kernels run: with a backend, true unless a test turned them off (switchable builds only);
// without one, false.
bool BackendEnabled() noexcept;
// For tests only, never while another thread calls the library: run the backend's kernels (true) or Highway's on
// every target (false). No effect without a backend, or in a build whose backend is not switchable.
void SetBackendEnabledForTest(bool enabled) noexcept;
// The backend's name; "" without one.
const char* BackendName() noexcept;

}  // namespace internal
}  // namespace edgeattn

#endif  // EDGEATTN_LIB_COMMON_BACKEND_H_
