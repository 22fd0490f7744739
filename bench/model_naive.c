/* SPDX-License-Identifier: Apache-2.0 */
/* A first implementation of llama2.c's forward pass (bench/model_naive.h): one token, plain loops. Compiled twice,
 * REAL = float (this file) and REAL = double (model_naive_f64.c, through NAIVE_REAL and NAIVE_NAME). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model_naive.h"

#ifndef NAIVE_REAL
#define NAIVE_REAL float
#define NAIVE_NAME(x) naive_llama##x
#define NAIVE_SQRT sqrtf
#define NAIVE_EXP expf
#define NAIVE_POW powf
#define NAIVE_COS cosf
#define NAIVE_SIN sinf
#endif
typedef NAIVE_REAL real;

struct NAIVE_NAME() {
  int dim, hidden, layers, heads, kv_heads, vocab, seq_len, positions, head_dim, kv_dim;
  const float *embedding, *rms_att, *wq, *wk, *wv, *wo, *rms_ffn, *w1, *w2, *w3, *rms_final, *wcls;
  real *key_cache, *value_cache; /* [layers][positions][kv_dim] */
  real *x, *xb, *xb2, *hb, *hb2, *q, *scores, *logits;
};
typedef struct NAIVE_NAME() model;

/* y[i] = sum_j w[i][j] x[j], w [rows][cols] */
static void matmul(real* y, const real* x, const float* w, int rows, int cols) {
  for (int i = 0; i < rows; i++) {
    real sum = 0;
    for (int j = 0; j < cols; j++) sum += (real)w[(size_t)i * (size_t)cols + (size_t)j] * x[j];
    y[i] = sum;
  }
}

static void rmsnorm(real* out, const real* x, const float* weight, int n) {
  real ss = 0;
  for (int i = 0; i < n; i++) ss += x[i] * x[i];
  ss = (real)1 / NAIVE_SQRT(ss / (real)n + (real)1e-5f);
  for (int i = 0; i < n; i++) out[i] = x[i] * ss * (real)weight[i];
}

static void softmax(real* x, int n) {
  real max = x[0], sum = 0;
  for (int i = 1; i < n; i++) max = x[i] > max ? x[i] : max;
  for (int i = 0; i < n; i++) sum += (x[i] = NAIVE_EXP(x[i] - max));
  for (int i = 0; i < n; i++) x[i] /= sum;
}

/* Rotates pairs (2i, 2i+1) of each head by pos * 10000^(-2i/head_dim). */
static void rope(real* v, int width, int head_dim, int pos) {
  for (int i = 0; i < width; i += 2) {
    const real angle = (real)pos * NAIVE_POW((real)10000, -(real)(i % head_dim) / (real)head_dim);
    const real c = NAIVE_COS(angle), s = NAIVE_SIN(angle), a = v[i], b = v[i + 1];
    v[i] = a * c - b * s;
    v[i + 1] = a * s + b * c;
  }
}

static void attention(model* m, int layer, int pos) {
  const int group = m->heads / m->kv_heads;
  const real scale = (real)1 / NAIVE_SQRT((real)m->head_dim);
  const size_t base = (size_t)layer * (size_t)m->positions * (size_t)m->kv_dim;
  for (int h = 0; h < m->heads; h++) {
    const real* q = m->q + h * m->head_dim;
    const int kv_head = h / group;
    for (int t = 0; t <= pos; t++) {
      const real* k = m->key_cache + base + (size_t)t * (size_t)m->kv_dim + (size_t)(kv_head * m->head_dim);
      real score = 0;
      for (int i = 0; i < m->head_dim; i++) score += q[i] * k[i];
      m->scores[t] = score * scale;
    }
    softmax(m->scores, pos + 1);
    real* out = m->xb + h * m->head_dim;
    for (int i = 0; i < m->head_dim; i++) out[i] = 0;
    for (int t = 0; t <= pos; t++) {
      const real* v = m->value_cache + base + (size_t)t * (size_t)m->kv_dim + (size_t)(kv_head * m->head_dim);
      for (int i = 0; i < m->head_dim; i++) out[i] += m->scores[t] * v[i];
    }
  }
}

const real* NAIVE_NAME(_forward)(model* m, int token, int pos) {
  const int dim = m->dim, hidden = m->hidden, kv_dim = m->kv_dim;
  for (int i = 0; i < dim; i++) m->x[i] = (real)m->embedding[(size_t)token * (size_t)dim + (size_t)i];
  for (int l = 0; l < m->layers; l++) {
    const size_t dd = (size_t)dim * (size_t)dim, kd = (size_t)kv_dim * (size_t)dim, hd = (size_t)hidden * (size_t)dim;
    rmsnorm(m->xb, m->x, m->rms_att + (size_t)l * (size_t)dim, dim);
    real* k = m->key_cache + ((size_t)l * (size_t)m->positions + (size_t)pos) * (size_t)kv_dim;
    real* v = m->value_cache + ((size_t)l * (size_t)m->positions + (size_t)pos) * (size_t)kv_dim;
    matmul(m->q, m->xb, m->wq + l * dd, dim, dim);
    matmul(k, m->xb, m->wk + l * kd, kv_dim, dim);
    matmul(v, m->xb, m->wv + l * kd, kv_dim, dim);
    rope(m->q, dim, m->head_dim, pos);
    rope(k, kv_dim, m->head_dim, pos);
    attention(m, l, pos);
    matmul(m->xb2, m->xb, m->wo + l * dd, dim, dim);
    for (int i = 0; i < dim; i++) m->x[i] += m->xb2[i];
    rmsnorm(m->xb, m->x, m->rms_ffn + (size_t)l * (size_t)dim, dim);
    matmul(m->hb, m->xb, m->w1 + l * hd, hidden, dim);
    matmul(m->hb2, m->xb, m->w3 + l * hd, hidden, dim);
    for (int i = 0; i < hidden; i++) m->hb[i] = m->hb[i] / ((real)1 + NAIVE_EXP(-m->hb[i])) * m->hb2[i];
    matmul(m->xb, m->hb, m->w2 + l * hd, dim, hidden);
    for (int i = 0; i < dim; i++) m->x[i] += m->xb[i];
  }
  rmsnorm(m->x, m->x, m->rms_final, dim);
  matmul(m->logits, m->x, m->wcls, m->vocab, dim);
  return m->logits;
}

void NAIVE_NAME(_delete)(model* m) {
  if (m == NULL) return;
  free(m->key_cache);
  free(m->value_cache);
  free(m->x);
  free(m);
}

model* NAIVE_NAME(_new)(const void* file, size_t size, int positions) {
  int32_t h[7];
  if (size < sizeof(h)) return NULL;
  memcpy(h, file, sizeof(h));
  model* m = (model*)calloc(1, sizeof(model));
  if (m == NULL) return NULL;
  m->dim = h[0], m->hidden = h[1], m->layers = h[2], m->heads = h[3], m->kv_heads = h[4];
  m->vocab = abs(h[5]), m->seq_len = h[6], m->positions = positions;
  m->head_dim = m->dim / m->heads, m->kv_dim = m->kv_heads * m->head_dim;
  const size_t dim = (size_t)m->dim, layers = (size_t)m->layers, kv = (size_t)m->kv_dim, hidden = (size_t)m->hidden;
  const float* p = (const float*)file + 7;
  m->embedding = p, p += (size_t)m->vocab * dim;
  m->rms_att = p, p += layers * dim;
  m->wq = p, p += layers * dim * dim;
  m->wk = p, p += layers * kv * dim;
  m->wv = p, p += layers * kv * dim;
  m->wo = p, p += layers * dim * dim;
  m->rms_ffn = p, p += layers * dim;
  m->w1 = p, p += layers * hidden * dim;
  m->w2 = p, p += layers * hidden * dim;
  m->w3 = p, p += layers * hidden * dim;
  m->rms_final = p, p += dim;
  p += (size_t)m->seq_len * (size_t)m->head_dim; /* the legacy RoPE tables */
  m->wcls = h[5] > 0 ? m->embedding : p;
  const size_t cache = layers * (size_t)positions * kv;
  m->key_cache = (real*)malloc(cache * sizeof(real));
  m->value_cache = (real*)malloc(cache * sizeof(real));
  m->x = (real*)malloc((4 * dim + 2 * hidden + (size_t)positions + (size_t)m->vocab) * sizeof(real));
  if (m->key_cache == NULL || m->value_cache == NULL || m->x == NULL) {
    NAIVE_NAME(_delete)(m);
    return NULL;
  }
  m->xb = m->x + dim, m->xb2 = m->xb + dim, m->q = m->xb2 + dim, m->hb = m->q + dim, m->hb2 = m->hb + hidden;
  m->scores = m->hb2 + hidden, m->logits = m->scores + positions;
  return m;
}
