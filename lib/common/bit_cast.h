// SPDX-License-Identifier: Apache-2.0
// Reinterpreting the bits of a float or double as an integer and back (memcpy: the defined way before C++20).
#ifndef EDGEATTN_LIB_COMMON_BIT_CAST_H_
#define EDGEATTN_LIB_COMMON_BIT_CAST_H_

#include <string.h>

namespace edgeattn {
namespace internal {

template <typename To, typename From>
inline To BitCastScalar(const From& from) {
  static_assert(sizeof(To) == sizeof(From), "bit casts keep the size");
  To to;
  memcpy(&to, &from, sizeof(to));
  return to;
}

}  // namespace internal
}  // namespace edgeattn

#endif  // EDGEATTN_LIB_COMMON_BIT_CAST_H_
