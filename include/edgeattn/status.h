// SPDX-License-Identifier: Apache-2.0
// edgeattn C++ API: status codes shared by every function.
#ifndef EDGEATTN_STATUS_H_
#define EDGEATTN_STATUS_H_

namespace edgeattn {

// Same values as the C API's edgeattn_status (checked by a static_assert in the library).
enum class Status : int {
  kOk = 0,
  kNullPointer = 1,        // a required pointer is null
  kInvalidShape = 2,       // a zero size where none is allowed, or sizes whose byte counts overflow size_t
  kInvalidArgument = 3,    // e.g. a non-finite or negative scale, num_heads not a multiple of num_kv_heads
  kWorkspaceTooSmall = 4,  // a caller buffer (workspace, shared buffer, KV cache storage) below its size function
  kOverlap = 5,            // an output overlaps an input where the function does not allow it
  kCapacity = 6,           // a linear KV cache (window 0) has no room for the positions being appended
};

// A short English description; "unknown status" for values outside the enum.
const char* StatusString(Status status) noexcept;

// Name of the Highway target the SIMD path runs on in this process ("AVX3", "NEON", "SCALAR", ...).
const char* SimdTarget() noexcept;

// "MAJOR.MINOR.PATCH".
const char* Version() noexcept;

}  // namespace edgeattn

#endif  // EDGEATTN_STATUS_H_
