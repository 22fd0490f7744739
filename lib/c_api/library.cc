// SPDX-License-Identifier: Apache-2.0
// Library-wide queries: status strings, version, the SIMD target in use.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/c_api/library.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/targets.h"
#include "lib/common/backend-inl.h"
#include "lib/common/vector_unit-inl.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {

// The target this copy of the code was compiled for; dispatching to it tells which copy runs.
int64_t CompiledTarget() { return HWY_TARGET; }

bool VectorFlushesSubnormals() { return kVectorFlushesSubnormals; }

// A backend's vector unit (its namespace's kVectorFlushesSubnormals, else the target's).
namespace backend {
inline bool VectorFlushesSubnormals() { return kVectorFlushesSubnormals; }
}  // namespace backend

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "edgeattn/status.h"
#include "lib/common/dispatch.h"

#ifndef EDGEATTN_VERSION_STRING
#error "the build defines EDGEATTN_VERSION_STRING from the CMake project version"
#endif

namespace edgeattn {

HWY_EXPORT(CompiledTarget);
HWY_EXPORT(VectorFlushesSubnormals);

const char* StatusString(Status status) noexcept {
  switch (status) {
    case Status::kOk:
      return "ok";
    case Status::kNullPointer:
      return "a required pointer is null";
    case Status::kInvalidShape:
      return "invalid shape: a zero size where none is allowed, or sizes whose byte count overflows size_t";
    case Status::kInvalidArgument:
      return "invalid argument";
    case Status::kWorkspaceTooSmall:
      return "workspace too small";
    case Status::kOverlap:
      return "an output overlaps an input";
    case Status::kCapacity:
      return "the KV cache has no room for the positions being appended";
  }
  return "unknown status";
}

// With a backend enabled, its name: its kernels run on the static target.
const char* SimdTarget() noexcept {
  return internal::BackendEnabled() ? internal::BackendName() : hwy::TargetName(EDGEATTN_DISPATCH(CompiledTarget)());
}

const char* Version() noexcept { return EDGEATTN_VERSION_STRING; }

namespace internal {

bool DispatchedVectorFlushesSubnormals() noexcept { return EDGEATTN_DISPATCH(VectorFlushesSubnormals)(); }

#if EDGEATTN_HAS_BACKEND && EDGEATTN_BACKEND_SWITCHABLE
namespace {
bool g_backend_enabled = true;  // written by tests only, between calls
}  // namespace
bool BackendEnabled() noexcept { return g_backend_enabled; }
void SetBackendEnabledForTest(bool enabled) noexcept { g_backend_enabled = enabled; }
const char* BackendName() noexcept { return EDGEATTN_BACKEND_NAME; }
#elif EDGEATTN_HAS_BACKEND
bool BackendEnabled() noexcept { return true; }
void SetBackendEnabledForTest(bool) noexcept {}
const char* BackendName() noexcept { return EDGEATTN_BACKEND_NAME; }
#else
bool BackendEnabled() noexcept { return false; }
void SetBackendEnabledForTest(bool) noexcept {}
const char* BackendName() noexcept { return ""; }
#endif

}  // namespace internal

}  // namespace edgeattn
#endif  // HWY_ONCE
