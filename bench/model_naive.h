/* SPDX-License-Identifier: Apache-2.0 */
/* The baseline of the model rows (bench/model_bench.cc): a llama2.c decoder written the way a first
 * implementation is, plain C loops over a version 0 checkpoint in memory, one token per call, compiled with
 * -O3 -march=native and nothing else. model_naive_f64.c compiles the same code in double precision: the reference
 * every implementation's logits are checked against before it is timed. */
#ifndef EDGEATTN_BENCH_MODEL_NAIVE_H_
#define EDGEATTN_BENCH_MODEL_NAIVE_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct naive_llama naive_llama;         /* float weights and float arithmetic */
typedef struct naive_llama_f64 naive_llama_f64; /* the same weights, double arithmetic */

/* A model over the version 0 file at `file` (used in place), with KV caches of `positions` positions; NULL if
   the file is not version 0 or memory is short (the baseline allocates, as a first implementation does). */
naive_llama* naive_llama_new(const void* file, size_t size, int positions);
void naive_llama_delete(naive_llama* m);
/* The logits [vocab] of `token` at position `pos` (0 <= pos < positions; positions before it already run). */
const float* naive_llama_forward(naive_llama* m, int token, int pos);

naive_llama_f64* naive_llama_f64_new(const void* file, size_t size, int positions);
void naive_llama_f64_delete(naive_llama_f64* m);
const double* naive_llama_f64_forward(naive_llama_f64* m, int token, int pos);

#ifdef __cplusplus
}
#endif

#endif /* EDGEATTN_BENCH_MODEL_NAIVE_H_ */
