// SPDX-License-Identifier: Apache-2.0
// The plain-loop baseline of the narrow-head rows (narrow_heads_bench.cc), in a file of its own: it is compiled
// like llama2.c's fast build (-Ofast -march=native), and only C library calls cross its boundary, so none of the
// suite's inline functions is instantiated under -ffast-math (the linker could keep that copy for every file).
#ifndef EDGEATTN_BENCH_NARROW_HEADS_BENCH_H_
#define EDGEATTN_BENCH_NARROW_HEADS_BENCH_H_

#include <stddef.h>

namespace edgeattn_bench {

// A KV cache's storage as kv_cache.h lays it out: a 16-byte header, the K region [n][kv_heads][dim], the V region,
// and for Q8 (element_bytes 1) the scales [n][kv_heads][2] (K's, V's); element_bytes 4 is f32, 2 is f16.
struct PlainLoopCache {
  const unsigned char* storage;
  size_t element_bytes, n, kv_heads, dim;
};

// llama2.c's run.c attention, as a first implementation writes it: for q_len causal queries at the end of the cache
// (query i at position n - q_len + i), each of num_heads query heads (groups of num_heads / kv_heads share a kv
// head): a dot product with every visible key, scaled by 1/sqrt(dim); softmax with the max subtracted and expf;
// the weighted sum of the values. q and out [q_len][num_heads][dim]; att holds n floats.
void PlainLoopAttention(const PlainLoopCache& cache, const float* q, size_t q_len, size_t num_heads, float* att,
                        float* out);

}  // namespace edgeattn_bench

#endif  // EDGEATTN_BENCH_NARROW_HEADS_BENCH_H_
