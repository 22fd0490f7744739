/* SPDX-License-Identifier: Apache-2.0 */
/* One attention call spread over the application's own threads (issue 20's work split), from the C API only.
 *
 *   split_threads [N]      N threads (default 4, at most 64)
 *
 * The library starts no thread: it cuts a call into parts (edgeattn_attention_part_count), any thread runs any
 * part with its own workspace, and after every part has returned one thread combines them
 * (edgeattn_attention_finish). This program does that with POSIX threads for
 *   - a prefill: 96 queries against 96 keys, 8 query heads over 2 KV heads, causal; the threads take part
 *     indices from a shared atomic counter (parts are numbered heaviest first, so the counter balances);
 *   - a decode step: one query per head, 8 query heads over 2 KV heads, against an f16 KV cache of 2000
 *     positions (parts: KV heads x chunks of keys); thread t runs parts t, t + N, t + 2N, ... (a static partition, as
 * an RTOS task per core could). Both meet at a pthread_barrier_t; the thread the barrier elects calls finish. Each
 * result is compared bit for bit with the single call (edgeattn_attention, edgeattn_attention_cached) and with a
 * double-precision reference; the program prints "split_threads: OK" or the mismatch, and exits non-zero on any
 * failure. Valid C11 (<stdatomic.h>) with POSIX threads. */
#define _POSIX_C_SOURCE 200809L /* pthread_barrier_t under -std=c11 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgeattn/edgeattn.h"

#define MAX_THREADS 64

/* ---- Inputs: a small counter-based generator, uniform in [-1, 1). */
static float uniform(uint32_t* state) {
  *state = *state * 1664525u + 1013904223u;
  return (float)((int32_t)(*state >> 8) - (1 << 23)) * 0x1p-23f;
}
static void fill(float* x, size_t n, uint32_t seed) {
  size_t i;
  for (i = 0; i < n; ++i) x[i] = uniform(&seed);
}

/* ---- One call's split, shared by the threads. */
typedef struct split_job {
  const edgeattn_attention_desc* desc;
  const edgeattn_kv_cache* cache; /* NULL: edgeattn_attention_part on q, k, v; else the cached call */
  const float *q, *k, *v;
  float* out;
  void* shared; /* the partial results of key-split parts; its size from ..._shared_size */
  size_t shared_size;
  size_t part_count;
  size_t threads;
  int use_counter;    /* 1: parts from `next`; 0: static partition by thread index */
  atomic_size_t next; /* the next part to hand out */
  atomic_int failed;  /* the first part status other than EDGEATTN_OK */
  pthread_barrier_t barrier;
  edgeattn_status finish_status;
} split_job;

typedef struct worker {
  split_job* job;
  size_t index;
  void* workspace; /* this thread's own: edgeattn_attention[_cached]_workspace_size bytes */
  size_t workspace_size;
  pthread_t thread;
} worker;

static void run_part(split_job* job, worker* w, size_t part) {
  edgeattn_status s;
  if (job->cache == NULL) {
    s = edgeattn_attention_part(job->desc, part, job->q, job->k, job->v, job->out, job->shared, job->shared_size,
                                w->workspace, w->workspace_size);
  } else {
    s = edgeattn_attention_cached_part(job->desc, part, job->q, job->cache, job->out, job->shared, job->shared_size,
                                       w->workspace, w->workspace_size);
  }
  if (s != EDGEATTN_OK) {
    int expected = EDGEATTN_OK;
    atomic_compare_exchange_strong(&job->failed, &expected, (int)s);
  }
}

static void* work(void* arg) {
  worker* w = (worker*)arg;
  split_job* job = w->job;
  size_t part;
  if (job->use_counter) {
    while ((part = atomic_fetch_add(&job->next, 1)) < job->part_count) run_part(job, w, part);
  } else {
    for (part = w->index; part < job->part_count; part += job->threads) run_part(job, w, part);
  }
  /* Every part has returned once every thread is past the barrier; the one thread it elects combines them. */
  if (pthread_barrier_wait(&job->barrier) == PTHREAD_BARRIER_SERIAL_THREAD) {
    if (atomic_load(&job->failed) != EDGEATTN_OK) {
      job->finish_status = (edgeattn_status)atomic_load(&job->failed);
    } else if (job->cache == NULL) {
      job->finish_status = edgeattn_attention_finish(job->desc, job->shared, job->shared_size, job->out);
    } else {
      job->finish_status =
          edgeattn_attention_cached_finish(job->desc, job->cache, job->shared, job->shared_size, job->out);
    }
  }
  return NULL;
}

/* Runs the job on `threads` threads (this one included) and returns the status of the parts and of finish. */
static edgeattn_status run_split(split_job* job, worker* workers, size_t threads) {
  size_t t;
  job->threads = threads;
  atomic_init(&job->next, 0);
  atomic_init(&job->failed, EDGEATTN_OK);
  job->finish_status = EDGEATTN_OK;
  if (pthread_barrier_init(&job->barrier, NULL, (unsigned)threads) != 0) return EDGEATTN_ERROR_INVALID_ARGUMENT;
  for (t = 0; t < threads; ++t) {
    workers[t].job = job;
    workers[t].index = t;
  }
  for (t = 1; t < threads; ++t) {
    if (pthread_create(&workers[t].thread, NULL, work, &workers[t]) != 0) {
      fprintf(stderr, "FAIL: pthread_create\n");
      exit(1);
    }
  }
  work(&workers[0]);
  for (t = 1; t < threads; ++t) pthread_join(workers[t].thread, NULL);
  pthread_barrier_destroy(&job->barrier);
  return job->finish_status;
}

/* ---- The double reference: out = softmax(q k^T / sqrt(d)) v per query head, causal bottom-right aligned,
   query head h reading KV head h / (heads / kv_heads). Returns the largest relative L2 error of a row of got. */
static double reference_error(const float* q, const float* k, const float* v, size_t q_len, size_t kv_len, size_t heads,
                              size_t kv_heads, size_t dim, const float* got) {
  double worst = 0;
  double* s = (double*)malloc(kv_len * sizeof(double));
  size_t i, h, j, c;
  if (s == NULL) return INFINITY;
  for (i = 0; i < q_len; ++i) {
    const size_t visible = i + kv_len - q_len + 1;
    for (h = 0; h < heads; ++h) {
      const size_t g = h / (heads / kv_heads);
      const float* qr = q + (i * heads + h) * dim;
      double m = -INFINITY, sum = 0, err = 0, norm = 0;
      for (j = 0; j < visible; ++j) {
        double dot = 0;
        for (c = 0; c < dim; ++c) dot += (double)qr[c] * k[(j * kv_heads + g) * dim + c];
        s[j] = dot / sqrt((double)dim);
        if (s[j] > m) m = s[j];
      }
      for (j = 0; j < visible; ++j) sum += (s[j] = exp(s[j] - m));
      for (c = 0; c < dim; ++c) {
        double o = 0, d;
        for (j = 0; j < visible; ++j) o += s[j] / sum * v[(j * kv_heads + g) * dim + c];
        d = got[(i * heads + h) * dim + c] - o;
        err += d * d;
        norm += o * o;
      }
      {
        const double e = sqrt(err / norm);
        if (!(e <= worst)) worst = e != e ? INFINITY : e; /* a NaN anywhere is the worst error */
      }
    }
  }
  free(s);
  return worst;
}

/* A relative L2 error per row far above attention's (about 5e-7 on such data) is a wrong result. */
#define TOLERANCE 1e-5

static int report(const char* what, size_t threads, size_t parts, edgeattn_status split_status,
                  edgeattn_status single_status, const float* split, const float* single, size_t n, double error) {
  if (split_status != EDGEATTN_OK || single_status != EDGEATTN_OK) {
    printf("%s: FAIL: split %s, single call %s\n", what, edgeattn_status_string(split_status),
           edgeattn_status_string(single_status));
    return 1;
  }
  if (memcmp(split, single, n * sizeof(float)) != 0) {
    printf("%s over %zu thread%s (%zu parts): FAIL: the output differs from the single call's\n", what, threads,
           threads == 1 ? "" : "s", parts);
    return 1;
  }
  printf("%s over %zu thread%s (%zu parts): bit-identical to the single call, relative error %.2e -> %s\n", what,
         threads, threads == 1 ? "" : "s", parts, error, error <= TOLERANCE ? "OK" : "FAIL");
  return error <= TOLERANCE ? 0 : 1;
}

/* Prefill. */
#define P_LEN 96
#define P_HEADS 8
#define P_KV_HEADS 2
#define P_DIM 32
static float pq[P_LEN * P_HEADS * P_DIM], pk[P_LEN * P_KV_HEADS * P_DIM], pv[P_LEN * P_KV_HEADS * P_DIM];
static float p_split[P_LEN * P_HEADS * P_DIM], p_single[P_LEN * P_HEADS * P_DIM];

/* Decode. */
#define D_LEN 2000
#define D_CAPACITY 2048
#define D_HEADS 8
#define D_KV_HEADS 2
#define D_DIM 64
static float dq[D_HEADS * D_DIM], dk[D_LEN * D_KV_HEADS * D_DIM], dv[D_LEN * D_KV_HEADS * D_DIM];
static float stored_k[D_LEN * D_KV_HEADS * D_DIM], stored_v[D_LEN * D_KV_HEADS * D_DIM];
static float d_split[D_HEADS * D_DIM], d_single[D_HEADS * D_DIM];

int main(int argc, char** argv) {
  size_t threads = 4, t, ws_size, p;
  int failures = 0;
  worker workers[MAX_THREADS];
  split_job job;
  edgeattn_attention_desc desc;
  edgeattn_kv_cache_desc cache_desc;
  edgeattn_kv_cache cache;
  void* storage;
  void* single_ws;
  edgeattn_status split_status, single_status;

  if (argc > 1) {
    char* end;
    const long n = strtol(argv[1], &end, 10);
    if (*end != '\0' || n < 1 || n > MAX_THREADS) {
      fprintf(stderr, "usage: %s [threads, 1..%d]\n", argv[0], MAX_THREADS);
      return 2;
    }
    threads = (size_t)n;
  }

  /* ---- Prefill: parts from an atomic counter. */
  fill(pq, sizeof(pq) / sizeof(float), 1);
  fill(pk, sizeof(pk) / sizeof(float), 2);
  fill(pv, sizeof(pv) / sizeof(float), 3);
  memset(&desc, 0, sizeof(desc));
  desc.q_len = desc.kv_len = P_LEN;
  desc.head_dim = desc.value_dim = P_DIM;
  desc.num_heads = P_HEADS;
  desc.num_kv_heads = P_KV_HEADS;
  desc.mask = EDGEATTN_MASK_CAUSAL;
  ws_size = edgeattn_attention_workspace_size(&desc);
  memset(&job, 0, sizeof(job));
  job.desc = &desc;
  job.q = pq;
  job.k = pk;
  job.v = pv;
  job.out = p_split;
  job.part_count = edgeattn_attention_part_count(&desc);
  job.shared_size = edgeattn_attention_shared_size(&desc);
  job.shared = job.shared_size ? malloc(job.shared_size) : NULL;
  job.use_counter = 1;
  for (t = 0; t < threads; ++t) {
    workers[t].workspace_size = ws_size;
    workers[t].workspace = malloc(ws_size ? ws_size : 1);
  }
  single_ws = malloc(ws_size ? ws_size : 1);
  if (job.part_count == 0 || (job.shared_size && job.shared == NULL) || single_ws == NULL) {
    printf("prefill: FAIL: no parts or out of memory\n");
    return 1;
  }
  split_status = run_split(&job, workers, threads);
  single_status = edgeattn_attention(&desc, pq, pk, pv, p_single, single_ws, ws_size);
  failures += report("prefill", threads, job.part_count, split_status, single_status, p_split, p_single,
                     sizeof(p_split) / sizeof(float),
                     reference_error(pq, pk, pv, P_LEN, P_LEN, P_HEADS, P_KV_HEADS, P_DIM, p_split));
  free(job.shared);
  free(single_ws);
  for (t = 0; t < threads; ++t) free(workers[t].workspace);

  /* ---- Decode against an f16 cache: a static partition of the parts. */
  memset(&cache_desc, 0, sizeof(cache_desc));
  cache_desc.type = EDGEATTN_KV_F16;
  cache_desc.num_kv_heads = D_KV_HEADS;
  cache_desc.head_dim = cache_desc.value_dim = D_DIM;
  cache_desc.capacity = D_CAPACITY;
  storage = malloc(edgeattn_kv_cache_storage_size(&cache_desc));
  fill(dq, sizeof(dq) / sizeof(float), 4);
  fill(dk, sizeof(dk) / sizeof(float), 5);
  fill(dv, sizeof(dv) / sizeof(float), 6);
  if (storage == NULL ||
      edgeattn_kv_cache_init(&cache, &cache_desc, storage, edgeattn_kv_cache_storage_size(&cache_desc)) !=
          EDGEATTN_OK ||
      edgeattn_kv_cache_append(&cache, dk, dv, D_LEN) != EDGEATTN_OK) {
    printf("decode: FAIL: cache setup\n");
    return 1;
  }
  /* The reference attends to what the cache holds: K and V rounded to f16. */
  for (p = 0; p < D_LEN; ++p) {
    if (edgeattn_kv_cache_read(&cache, p, &stored_k[p * D_KV_HEADS * D_DIM], &stored_v[p * D_KV_HEADS * D_DIM]) !=
        EDGEATTN_OK) {
      printf("decode: FAIL: cache read\n");
      return 1;
    }
  }
  memset(&desc, 0, sizeof(desc));
  desc.q_len = 1;
  desc.kv_len = 0; /* the cache decides */
  desc.head_dim = desc.value_dim = D_DIM;
  desc.num_heads = D_HEADS;
  desc.num_kv_heads = D_KV_HEADS;
  desc.mask = EDGEATTN_MASK_CAUSAL;
  ws_size = edgeattn_attention_cached_workspace_size(&desc, &cache);
  memset(&job, 0, sizeof(job));
  job.desc = &desc;
  job.cache = &cache;
  job.q = dq;
  job.out = d_split;
  job.part_count = edgeattn_attention_cached_part_count(&desc, &cache);
  job.shared_size = edgeattn_attention_cached_shared_size(&desc, &cache);
  job.shared = job.shared_size ? malloc(job.shared_size) : NULL;
  job.use_counter = 0;
  for (t = 0; t < threads; ++t) {
    workers[t].workspace_size = ws_size;
    workers[t].workspace = malloc(ws_size ? ws_size : 1);
  }
  single_ws = malloc(ws_size ? ws_size : 1);
  if (job.part_count == 0 || (job.shared_size && job.shared == NULL) || single_ws == NULL) {
    printf("decode: FAIL: no parts or out of memory\n");
    return 1;
  }
  split_status = run_split(&job, workers, threads);
  single_status = edgeattn_attention_cached(&desc, dq, &cache, d_single, single_ws, ws_size);
  failures += report("decode", threads, job.part_count, split_status, single_status, d_split, d_single,
                     sizeof(d_split) / sizeof(float),
                     reference_error(dq, stored_k, stored_v, 1, D_LEN, D_HEADS, D_KV_HEADS, D_DIM, d_split));
  free(job.shared);
  free(single_ws);
  for (t = 0; t < threads; ++t) free(workers[t].workspace);
  free(storage);

  printf(failures ? "split_threads: FAIL\n" : "split_threads: OK\n");
  return failures ? 1 : 0;
}
