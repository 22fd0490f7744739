// SPDX-License-Identifier: Apache-2.0
// Small pieces the module's files share (not API).
#ifndef EDGEATTN_EXAMPLES_LLAMA_LLAMA2_INTERNAL_H_
#define EDGEATTN_EXAMPLES_LLAMA_LLAMA2_INTERNAL_H_

#include <stddef.h>
#include <stdint.h>

#include <type_traits>

#include "llama2.h"

namespace llama2 {
namespace internal {

// The first address at or after p that is a multiple of alignment (a power of two); callers keep alignment - 1
// bytes of slack in their size functions.
inline unsigned char* AlignUp(void* p, size_t alignment) {
  unsigned char* b = static_cast<unsigned char*>(p);
  return b + (alignment - reinterpret_cast<uintptr_t>(b) % alignment) % alignment;
}

// p as a T*, where the caller has checked the alignment (the readers check every float array's offset; the arena
// aligns every buffer): through void*, which says so to -Wcast-align (32-bit Arm warns on a direct cast).
template <typename T, typename Byte>
T* BytesAs(Byte* p) {
  return static_cast<T*>(
      static_cast<typename std::conditional<std::is_const<Byte>::value, const void, void>::type*>(p));
}

// The model's causal self-attention over kv_len keys (0: the cache's) for q_len queries.
inline edgeattn::AttentionDesc AttentionShape(const Config& c, size_t q_len, size_t kv_len) {
  edgeattn::AttentionDesc d;
  d.q_len = q_len;
  d.kv_len = kv_len;
  d.head_dim = c.head_dim;
  d.value_dim = c.head_dim;
  d.num_heads = c.n_heads;
  d.num_kv_heads = c.n_kv_heads;         // query head h reads K/V head h / (n_heads / n_kv_heads), as llama2.c
  d.mask = edgeattn::MaskKind::kCausal;  // the queries are the last q_len positions appended
  return d;
}

}  // namespace internal
}  // namespace llama2

#endif  // EDGEATTN_EXAMPLES_LLAMA_LLAMA2_INTERNAL_H_
