/* SPDX-License-Identifier: Apache-2.0 */
/* A C99 program written against edgeattn's C API only: results and status codes of every function, the
 * seed notebooks' answers, masking, and "outputs untouched on error". Exit code 0 if all checks pass.
 * Built in-tree (ctest c_api) and by separate CMake projects that find the library with find_package or
 * add_subdirectory (ctest consumer_*). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../data/seed_001.h"
#include "../data/seed_002.h"
#include "../data/seed_003.h"
#include "edgeattn/edgeattn.h"

static int g_failures = 0;
static int g_checks = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    ++g_checks;                                                                \
    if (!(cond)) {                                                             \
      ++g_failures;                                                            \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)
#define CHECK_STATUS(call, expected) CHECK((call) == (expected))
#define CHECK_NEAR(a, b, tol) CHECK(fabs((double)(a) - (double)(b)) <= (tol))

static float inf_f(void) { return (float)INFINITY; }
static float nan_f(void) { return (float)NAN; }

static int all_equal(const float* x, size_t n, float value) {
  size_t i;
  for (i = 0; i < n; ++i) {
    if (memcmp(&x[i], &value, sizeof(float)) != 0) return 0;
  }
  return 1;
}

static edgeattn_attention_desc make_desc(size_t lq, size_t lk, size_t dk, size_t dv) {
  edgeattn_attention_desc d;
  memset(&d, 0, sizeof(d));
  d.q_len = lq;
  d.kv_len = lk;
  d.head_dim = dk;
  d.value_dim = dv;
  d.num_heads = 1;
  d.num_kv_heads = 0;
  d.scale = 0.0f;
  d.mask = EDGEATTN_MASK_NONE;
  d.additive_mask = NULL;
  return d;
}

static void check_library(void) {
  int s;
  CHECK(strlen(edgeattn_version()) >= 5);
  CHECK(strlen(edgeattn_simd_target()) > 0);
  printf("edgeattn %s, SIMD target %s\n", edgeattn_version(), edgeattn_simd_target());
  for (s = EDGEATTN_OK; s <= EDGEATTN_ERROR_CAPACITY; ++s) {
    CHECK(strcmp(edgeattn_status_string((edgeattn_status)s), "unknown status") != 0);
  }
  CHECK(strcmp(edgeattn_status_string((edgeattn_status)42), "unknown status") == 0);
}

static void check_exp(void) {
  float in[6], out[6];
  size_t i;
  in[0] = -inf_f();
  in[1] = inf_f();
  in[2] = nan_f();
  in[3] = 0.0f;
  in[4] = 1.0f;
  in[5] = -10.0f;
  CHECK_STATUS(edgeattn_exp(in, out, 6), EDGEATTN_OK);
  CHECK(out[0] == 0.0f && !signbit(out[0]));
  CHECK(isinf(out[1]) && out[1] > 0);
  CHECK(isnan(out[2]));
  CHECK(out[3] == 1.0f);
  CHECK_NEAR(out[4], exp(1.0), 2.5e-7 * exp(1.0));
  CHECK_NEAR(out[5], exp(-10.0), 2.5e-7 * exp(-10.0));
  CHECK_STATUS(edgeattn_exp(in, in, 6), EDGEATTN_OK); /* in place */
  for (i = 3; i < 6; ++i) CHECK(in[i] == out[i]);
  CHECK_STATUS(edgeattn_exp(in, in, 0), EDGEATTN_OK);
  CHECK_STATUS(edgeattn_exp(NULL, out, 1), EDGEATTN_ERROR_NULL_POINTER);
  CHECK_STATUS(edgeattn_exp(NULL, NULL, 0), EDGEATTN_OK);
  CHECK_STATUS(edgeattn_exp(in, out + 1, 1), EDGEATTN_OK); /* disjoint */
  out[2] = 5.0f;
  CHECK_STATUS(edgeattn_exp(out, out + 1, 3), EDGEATTN_ERROR_OVERLAP);
  CHECK(out[2] == 5.0f);
}

static void check_dot(void) {
  float a[19], b[19], result = 7.0f;
  double expected = 0;
  int i;
  for (i = 0; i < 19; ++i) {
    a[i] = (float)(i - 9);
    b[i] = (float)(i % 5);
    expected += (double)a[i] * b[i];
  }
  CHECK_STATUS(edgeattn_dot(a, b, 19, &result), EDGEATTN_OK);
  CHECK(result == (float)expected);
  CHECK_STATUS(edgeattn_dot(a, b, 0, &result), EDGEATTN_OK);
  CHECK(result == 0.0f);
  result = 7.0f;
  CHECK_STATUS(edgeattn_dot(NULL, b, 3, &result), EDGEATTN_ERROR_NULL_POINTER);
  CHECK_STATUS(edgeattn_dot(a, b, 3, NULL), EDGEATTN_ERROR_NULL_POINTER);
  CHECK(result == 7.0f);
  CHECK_STATUS(edgeattn_dot(a, b, 19, &a[4]), EDGEATTN_ERROR_OVERLAP);
  CHECK(a[4] == -5.0f);
}

static void check_softmax(void) {
  float rows[4][4] = {{1, 2, 3, 4}, {0, 0, 0, 0}, {0, 0, 0, 0}, {1e4f, 5e3f, -1e4f, 0}};
  float out[4][4];
  float big[2][3];
  float buf[8] = {9, 9, 9, 9, 9, 9, 9, 9};
  double sum = 0;
  int j;
  rows[1][0] = rows[1][1] = rows[1][2] = rows[1][3] = -inf_f();
  rows[2][2] = nan_f();
  CHECK_STATUS(edgeattn_softmax(&rows[0][0], &out[0][0], 4, 4), EDGEATTN_OK);
  for (j = 0; j < 4; ++j) sum += out[0][j];
  CHECK_NEAR(sum, 1.0, 3e-7);
  CHECK_NEAR(out[0][3], exp(0.0) / (exp(-3.0) + exp(-2.0) + exp(-1.0) + 1.0), 3e-7);
  CHECK(all_equal(out[1], 4, 0.0f)); /* all -inf: zeros, not NaN */
  for (j = 0; j < 4; ++j) CHECK(isnan(out[2][j]));
  CHECK(out[3][0] == 1.0f && out[3][1] == 0.0f && out[3][2] == 0.0f && out[3][3] == 0.0f);
  /* in place, +inf */
  big[0][0] = 1.0f;
  big[0][1] = inf_f();
  big[0][2] = 3.0f;
  big[1][0] = -1.0f;
  big[1][1] = -2.0f;
  big[1][2] = -3.0f;
  CHECK_STATUS(edgeattn_softmax(&big[0][0], &big[0][0], 2, 3), EDGEATTN_OK);
  CHECK(big[0][0] == 0.0f && big[0][1] == 1.0f && big[0][2] == 0.0f);
  CHECK(big[1][0] > big[1][1] && big[1][1] > big[1][2]);
  CHECK_STATUS(edgeattn_softmax(NULL, buf, 1, 4), EDGEATTN_ERROR_NULL_POINTER);
  CHECK_STATUS(edgeattn_softmax(buf, buf, 0, 4), EDGEATTN_ERROR_INVALID_SHAPE);
  CHECK_STATUS(edgeattn_softmax(buf, buf, 2, 0), EDGEATTN_ERROR_INVALID_SHAPE);
  CHECK_STATUS(edgeattn_softmax(buf, buf, SIZE_MAX / 2, 2), EDGEATTN_ERROR_INVALID_SHAPE);
  CHECK_STATUS(edgeattn_softmax(buf, buf + 2, 1, 4), EDGEATTN_ERROR_OVERLAP);
  CHECK(all_equal(buf, 8, 9.0f));
}

static void check_linear(void) {
  float q[4][3], y[2][2] = {{7, 7}, {7, 7}};
  const float x[2][3] = {{1, 2, 3}, {4, 5, 6}};
  const float w[3][2] = {{1, 0}, {0, 1}, {1, 1}};
  const float bias[2] = {0.5f, -0.5f};
  int r, c;
  CHECK_STATUS(edgeattn_linear(&seed003_words[0][0], 4, 3, &seed003_wq[0][0], NULL, 3, &q[0][0]), EDGEATTN_OK);
  /* word 3 = [1, 1, 0]: rows 0 + 1 of W_Q */
  for (c = 0; c < 3; ++c) CHECK(q[2][c] == seed003_wq[0][c] + seed003_wq[1][c]);
  CHECK_STATUS(edgeattn_linear(&x[0][0], 2, 3, &w[0][0], bias, 2, &y[0][0]), EDGEATTN_OK);
  CHECK(y[0][0] == 4.5f && y[0][1] == 4.5f && y[1][0] == 10.5f && y[1][1] == 10.5f);
  for (r = 0; r < 2; ++r) y[r][0] = y[r][1] = 7.0f;
  CHECK_STATUS(edgeattn_linear(NULL, 2, 3, &w[0][0], bias, 2, &y[0][0]), EDGEATTN_ERROR_NULL_POINTER);
  CHECK_STATUS(edgeattn_linear(&x[0][0], 0, 3, &w[0][0], bias, 2, &y[0][0]), EDGEATTN_ERROR_INVALID_SHAPE);
  CHECK_STATUS(edgeattn_linear(&x[0][0], SIZE_MAX / 4, 3, &w[0][0], bias, 2, &y[0][0]), EDGEATTN_ERROR_INVALID_SHAPE);
  CHECK_STATUS(edgeattn_linear(&y[0][0], 1, 2, &w[0][0], NULL, 2, &y[0][0] + 1), EDGEATTN_ERROR_OVERLAP);
  CHECK(all_equal(&y[0][0], 4, 7.0f));
}

static void check_positional_encoding(void) {
  float x[2][5];
  int j;
  memset(x, 0, sizeof(x));
  CHECK_STATUS(edgeattn_add_positional_encoding(&x[0][0], 2, 5, 1), EDGEATTN_OK);
  /* position 1, d = 5: pairs i = 0, 1, 2 with angles 1, 10000^(-2/5), 10000^(-4/5); the odd last column is a sine */
  CHECK_NEAR(x[0][0], sin(1.0), 1e-7);
  CHECK_NEAR(x[0][1], cos(1.0), 1e-7);
  CHECK_NEAR(x[0][2], sin(pow(10000.0, -0.4)), 1e-7);
  CHECK_NEAR(x[0][3], cos(pow(10000.0, -0.4)), 1e-7);
  CHECK_NEAR(x[0][4], sin(pow(10000.0, -0.8)), 1e-7);
  CHECK_NEAR(x[1][0], sin(2.0), 1e-7);
  CHECK_NEAR(x[1][4], sin(2.0 * pow(10000.0, -0.8)), 1e-7);
  for (j = 0; j < 5; ++j) x[0][j] = 3.0f;
  CHECK_STATUS(edgeattn_add_positional_encoding(NULL, 1, 5, 0), EDGEATTN_ERROR_NULL_POINTER);
  CHECK_STATUS(edgeattn_add_positional_encoding(&x[0][0], 0, 5, 0), EDGEATTN_ERROR_INVALID_SHAPE);
  CHECK_STATUS(edgeattn_add_positional_encoding(&x[0][0], 1, 5, (size_t)1 << 24), EDGEATTN_ERROR_INVALID_ARGUMENT);
  CHECK(all_equal(x[0], 5, 3.0f));
}

static void check_norms(void) {
  const float x[2][4] = {{1, 2, 3, 4}, {10000, 10001, 10002, 10003}};
  const float weight[4] = {1, 2, 1, 1};
  const float bias[4] = {0, 0, 0, 1};
  float y[2][4], z[2][4];
  double mean_square = (1.0 + 4 + 9 + 16) / 4;
  int j;
  CHECK_STATUS(edgeattn_rms_norm(&x[0][0], 2, 4, weight, 0.0f, &y[0][0]), EDGEATTN_OK);
  for (j = 0; j < 4; ++j) CHECK_NEAR(y[0][j], x[0][j] / sqrt(mean_square) * weight[j], 1e-6);
  /* Both rows have variance 1.25: the offset row gives the same output to float accuracy. */
  CHECK_STATUS(edgeattn_layer_norm(&x[0][0], 2, 4, weight, bias, 0.0f, &y[0][0]), EDGEATTN_OK);
  for (j = 0; j < 4; ++j) {
    CHECK_NEAR(y[0][j], (j - 1.5) / sqrt(1.25) * weight[j] + bias[j], 1e-6);
    CHECK_NEAR(y[1][j], y[0][j], 1e-6);
  }
  memcpy(z, x, sizeof(z));
  CHECK_STATUS(edgeattn_layer_norm(&z[0][0], 2, 4, NULL, NULL, 1e-5f, &z[0][0]), EDGEATTN_OK); /* in place */
  CHECK_NEAR(z[0][3], 1.5 / sqrt(1.25 + 1e-5), 1e-6);
  for (j = 0; j < 4; ++j) y[0][j] = y[1][j] = 7.0f;
  CHECK_STATUS(edgeattn_rms_norm(NULL, 2, 4, NULL, 0.0f, &y[0][0]), EDGEATTN_ERROR_NULL_POINTER);
  CHECK_STATUS(edgeattn_rms_norm(&x[0][0], 0, 4, NULL, 0.0f, &y[0][0]), EDGEATTN_ERROR_INVALID_SHAPE);
  CHECK_STATUS(edgeattn_rms_norm(&x[0][0], 2, 4, NULL, -1.0f, &y[0][0]), EDGEATTN_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(edgeattn_layer_norm(&x[0][0], 2, 4, NULL, NULL, nan_f(), &y[0][0]), EDGEATTN_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(edgeattn_layer_norm(&x[0][0], 2, 4, NULL, NULL, inf_f(), &y[0][0]), EDGEATTN_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(edgeattn_layer_norm(&z[0][0], 1, 4, NULL, NULL, 0.0f, &z[0][1]), EDGEATTN_ERROR_OVERLAP);
  CHECK(all_equal(&y[0][0], 8, 7.0f));
}

static void check_rope(void) {
  edgeattn_rope_desc desc;
  float x[2][4] = {{1, 0, 0, 1}, {1, 0, 0, 1}}, keep[2][4];
  desc.num_heads = 1;
  desc.head_dim = 4;
  desc.rotary_dim = 0;
  desc.base = 0.0f;
  desc.layout = EDGEATTN_ROPE_INTERLEAVED;
  /* token 0 at position 1: pair 0 turns by 1 rad, pair 1 by 10000^(-1/2) = 0.01 rad; token 1 at position 2 */
  CHECK_STATUS(edgeattn_rope(&desc, &x[0][0], 2, 1), EDGEATTN_OK);
  CHECK_NEAR(x[0][0], cos(1.0), 1e-7);
  CHECK_NEAR(x[0][1], sin(1.0), 1e-7);
  CHECK_NEAR(x[0][2], -sin(0.01), 1e-7);
  CHECK_NEAR(x[0][3], cos(0.01), 1e-7);
  CHECK_NEAR(x[1][0], cos(2.0), 1e-7);
  CHECK_NEAR(x[1][1], sin(2.0), 1e-7);
  /* The half layout pairs (0, 2) and (1, 3). */
  x[0][0] = 1, x[0][1] = 0, x[0][2] = 0, x[0][3] = 0;
  desc.layout = EDGEATTN_ROPE_HALF;
  CHECK_STATUS(edgeattn_rope(&desc, &x[0][0], 1, 1), EDGEATTN_OK);
  CHECK_NEAR(x[0][0], cos(1.0), 1e-7);
  CHECK_NEAR(x[0][2], sin(1.0), 1e-7);
  CHECK(x[0][1] == 0.0f && x[0][3] == 0.0f);
  memcpy(keep, x, sizeof(keep));
  CHECK_STATUS(edgeattn_rope(NULL, &x[0][0], 1, 0), EDGEATTN_ERROR_NULL_POINTER);
  CHECK_STATUS(edgeattn_rope(&desc, NULL, 1, 0), EDGEATTN_ERROR_NULL_POINTER);
  CHECK_STATUS(edgeattn_rope(&desc, &x[0][0], 0, 0), EDGEATTN_ERROR_INVALID_SHAPE);
  CHECK_STATUS(edgeattn_rope(&desc, &x[0][0], 1, (size_t)1 << 24), EDGEATTN_ERROR_INVALID_ARGUMENT);
  desc.rotary_dim = 3;
  CHECK_STATUS(edgeattn_rope(&desc, &x[0][0], 1, 0), EDGEATTN_ERROR_INVALID_ARGUMENT);
  desc.rotary_dim = 2;
  desc.base = 1.0f;
  CHECK_STATUS(edgeattn_rope(&desc, &x[0][0], 1, 0), EDGEATTN_ERROR_INVALID_ARGUMENT);
  desc.base = 0.0f;
  desc.layout = (edgeattn_rope_layout)7;
  CHECK_STATUS(edgeattn_rope(&desc, &x[0][0], 1, 0), EDGEATTN_ERROR_INVALID_ARGUMENT);
  CHECK(memcmp(keep, x, sizeof(keep)) == 0);
}

static void check_rope_table(void) {
  edgeattn_rope_desc desc;
  edgeattn_rope_table table;
  float rows[3][4], x[4] = {1, 0, 0, 1}, y[4] = {1, 0, 0, 1};
  desc.num_heads = 1;
  desc.head_dim = 4;
  desc.rotary_dim = 0;
  desc.base = 0.0f;
  desc.layout = EDGEATTN_ROPE_INTERLEAVED;
  CHECK_STATUS(edgeattn_rope_table_fill(4, 0.0f, 5, 3, &rows[0][0]), EDGEATTN_OK); /* positions 5, 6, 7 */
  CHECK_NEAR(rows[1][0], cos(6.0), 1e-7);
  CHECK_NEAR(rows[1][1], sin(6.0), 1e-7);
  CHECK_NEAR(rows[1][3], sin(0.06), 1e-7);
  table.data = &rows[0][0];
  table.rotary_dim = 4;
  table.first_position = 5;
  table.positions = 3;
  CHECK_STATUS(edgeattn_rope_with_table(&desc, &table, x, 1, 6), EDGEATTN_OK);
  CHECK_STATUS(edgeattn_rope(&desc, y, 1, 6), EDGEATTN_OK);
  CHECK_NEAR(x[0], y[0], 3e-7);
  CHECK_NEAR(x[1], y[1], 3e-7);
  CHECK_NEAR(x[2], y[2], 3e-7);
  CHECK_NEAR(x[3], y[3], 3e-7);
  CHECK_STATUS(edgeattn_rope_with_table(&desc, NULL, x, 1, 6), EDGEATTN_ERROR_NULL_POINTER);
  CHECK_STATUS(edgeattn_rope_with_table(&desc, &table, x, 1, 8), EDGEATTN_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(edgeattn_rope_table_fill(3, 0.0f, 0, 1, &rows[0][0]), EDGEATTN_ERROR_INVALID_ARGUMENT);
}

static void check_linear_transposed(void) {
  const float x[2][3] = {{1, 2, 3}, {4, 5, 6}};
  const float w[2][3] = {{1, 0, 1}, {0, 1, 1}}; /* [out][in]: the transpose of check_linear's W */
  const float bias[2] = {0.5f, -0.5f};
  float y[2][2] = {{7, 7}, {7, 7}};
  CHECK_STATUS(edgeattn_linear_transposed(&x[0][0], 2, 3, &w[0][0], bias, 2, &y[0][0]), EDGEATTN_OK);
  CHECK(y[0][0] == 4.5f && y[0][1] == 4.5f && y[1][0] == 10.5f && y[1][1] == 10.5f);
  y[0][0] = y[0][1] = y[1][0] = y[1][1] = 7.0f;
  CHECK_STATUS(edgeattn_linear_transposed(NULL, 2, 3, &w[0][0], bias, 2, &y[0][0]), EDGEATTN_ERROR_NULL_POINTER);
  CHECK_STATUS(edgeattn_linear_transposed(&x[0][0], 2, 0, &w[0][0], bias, 2, &y[0][0]), EDGEATTN_ERROR_INVALID_SHAPE);
  CHECK_STATUS(edgeattn_linear_transposed(&y[0][0], 1, 2, &w[0][0], NULL, 2, &y[0][0] + 1), EDGEATTN_ERROR_OVERLAP);
  CHECK(all_equal(&y[0][0], 4, 7.0f));
}

static void check_linear_q8(void) {
  /* W[o][i] = q[o][i] * scale[o][i / 4]: every product and sum below is exact. */
  const int8_t q[2][4] = {{1, 2, 3, 4}, {-1, 0, 1, 0}};
  const float scale[2] = {0.5f, 2.0f};
  const float w_float[2][4] = {{1.0f, -1.0f, 0.0f, 0.25f}, {0, 0, 0, 0}};
  edgeattn_q8_matrix m;
  float x[4] = {127.0f, 0.0f, 0.0f, 0.0f}, ones[4] = {1, 1, 1, 1}, y[2] = {7, 7};
  static unsigned char ws[16384];
  int8_t wq[8];
  float wscale[2];
  size_t ws_size, parts, p;
  m.q = &q[0][0];
  m.scale = scale;
  m.out_features = 2;
  m.in_features = 4;
  m.group_size = 4;
  ws_size = edgeattn_linear_q8_workspace_size(1, &m, EDGEATTN_Q8_ACT_Q8);
  CHECK(ws_size > 0 && ws_size <= sizeof(ws));
  CHECK(edgeattn_linear_q8_workspace_size(1, &m, EDGEATTN_Q8_ACT_F32) == 0);
  CHECK_STATUS(edgeattn_linear_q8(x, 1, &m, NULL, EDGEATTN_Q8_ACT_Q8, y, ws, ws_size), EDGEATTN_OK);
  CHECK(y[0] == 63.5f && y[1] == -254.0f);
  CHECK_STATUS(edgeattn_linear_q8(ones, 1, &m, scale, EDGEATTN_Q8_ACT_F32, y, NULL, 0), EDGEATTN_OK);
  CHECK(y[0] == 5.5f && y[1] == 2.0f);
  parts = edgeattn_linear_q8_part_count(1, &m);
  CHECK(parts == 1);
  y[0] = y[1] = 7.0f;
  for (p = 0; p < parts; ++p) {
    CHECK_STATUS(edgeattn_linear_q8_part(x, 1, &m, NULL, EDGEATTN_Q8_ACT_Q8, p, y, ws, ws_size), EDGEATTN_OK);
  }
  CHECK(y[0] == 63.5f && y[1] == -254.0f);
  y[0] = y[1] = 7.0f;
  CHECK_STATUS(edgeattn_linear_q8_part_range(x, 1, &m, NULL, EDGEATTN_Q8_ACT_Q8, 0, parts, y, ws, ws_size),
               EDGEATTN_OK);
  CHECK(y[0] == 63.5f && y[1] == -254.0f);
  y[0] = y[1] = 7.0f;
  CHECK_STATUS(edgeattn_linear_q8_part_range(x, 1, &m, NULL, EDGEATTN_Q8_ACT_Q8, 0, 0, y, ws, ws_size),
               EDGEATTN_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(edgeattn_linear_q8_part_range(x, 1, &m, NULL, EDGEATTN_Q8_ACT_Q8, 1, parts, y, ws, ws_size),
               EDGEATTN_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(edgeattn_linear_q8_part_range(x, 1, NULL, NULL, EDGEATTN_Q8_ACT_Q8, 0, 1, y, ws, ws_size),
               EDGEATTN_ERROR_NULL_POINTER);
  CHECK(all_equal(y, 2, 7.0f));
  CHECK_STATUS(edgeattn_linear_q8(x, 1, NULL, NULL, EDGEATTN_Q8_ACT_Q8, y, ws, ws_size), EDGEATTN_ERROR_NULL_POINTER);
  CHECK_STATUS(edgeattn_linear_q8(x, 0, &m, NULL, EDGEATTN_Q8_ACT_Q8, y, ws, ws_size), EDGEATTN_ERROR_INVALID_SHAPE);
  CHECK_STATUS(edgeattn_linear_q8(x, 1, &m, NULL, (edgeattn_q8_activations)7, y, ws, ws_size),
               EDGEATTN_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(edgeattn_linear_q8(x, 1, &m, NULL, EDGEATTN_Q8_ACT_Q8, y, ws, ws_size - 1),
               EDGEATTN_ERROR_WORKSPACE_TOO_SMALL);
  CHECK_STATUS(edgeattn_linear_q8(x, 1, &m, NULL, EDGEATTN_Q8_ACT_Q8, x + 1, ws, ws_size), EDGEATTN_ERROR_OVERLAP);
  CHECK_STATUS(edgeattn_linear_q8_part(x, 1, &m, NULL, EDGEATTN_Q8_ACT_Q8, 1, y, ws, ws_size),
               EDGEATTN_ERROR_INVALID_ARGUMENT);
  CHECK(all_equal(y, 2, 7.0f));
  /* The quantiser: max|w| / 127 per group; an all-zero group has scale 0 and q 0. */
  CHECK_STATUS(edgeattn_q8_quantize(&w_float[0][0], 2, 4, 4, wq, wscale), EDGEATTN_OK);
  CHECK(wscale[0] == 1.0f / 127.0f && wscale[1] == 0.0f);
  CHECK(wq[0] == 127 && wq[1] == -127 && wq[2] == 0 && wq[4] == 0 && wq[7] == 0);
  CHECK_STATUS(edgeattn_q8_quantize(&w_float[0][0], 2, 4, 3, wq, wscale), EDGEATTN_ERROR_INVALID_SHAPE);
  /* The float weights' split. */
  CHECK(edgeattn_linear_transposed_part_count(1, 4, 2) == 1);
  CHECK_STATUS(edgeattn_linear_transposed_part(ones, 1, 4, &w_float[0][0], NULL, 2, 0, y), EDGEATTN_OK);
  CHECK(y[0] == 0.25f && y[1] == 0.0f);
  CHECK_STATUS(edgeattn_linear_transposed_part(ones, 1, 4, &w_float[0][0], NULL, 2, 1, y),
               EDGEATTN_ERROR_INVALID_ARGUMENT);
}

static void check_attention_seeds(void) {
  float q[4][3], k[4][3], v[4][3], out[4][3], weights[4][4], out8[4][8], q2[3][4], k2[3][4], v2[3][4], out2[3][4];
  unsigned char workspace[512];
  edgeattn_attention_desc d = make_desc(4, 4, 3, 3);
  size_t need;
  int i, j, c;
  /* Seed 003 */
  CHECK_STATUS(edgeattn_linear(&seed003_words[0][0], 4, 3, &seed003_wq[0][0], NULL, 3, &q[0][0]), EDGEATTN_OK);
  CHECK_STATUS(edgeattn_linear(&seed003_words[0][0], 4, 3, &seed003_wk[0][0], NULL, 3, &k[0][0]), EDGEATTN_OK);
  CHECK_STATUS(edgeattn_linear(&seed003_words[0][0], 4, 3, &seed003_wv[0][0], NULL, 3, &v[0][0]), EDGEATTN_OK);
  need = edgeattn_attention_workspace_size(&d);
  CHECK(need > 0 && need <= sizeof(workspace));
  CHECK_STATUS(edgeattn_attention(&d, &q[0][0], &k[0][0], &v[0][0], &out[0][0], workspace, need), EDGEATTN_OK);
  CHECK_STATUS(edgeattn_attention_weights(&d, &q[0][0], &k[0][0], &weights[0][0]), EDGEATTN_OK);
  for (i = 0; i < 4; ++i) {
    for (c = 0; c < 3; ++c) CHECK_NEAR(out[i][c], seed003_attention[i][c], 1e-6);
    CHECK_NEAR(weights[0][i], seed003_first_word_weights[i], 1e-6);
  }
  /* Seed 001, causal */
  d = make_desc(4, 4, 8, 8);
  d.mask = EDGEATTN_MASK_CAUSAL;
  CHECK_STATUS(edgeattn_attention(&d, &seed001_q[0][0], &seed001_k[0][0], &seed001_v[0][0], &out8[0][0], workspace,
                                  sizeof(workspace)),
               EDGEATTN_OK);
  CHECK_STATUS(edgeattn_attention_weights(&d, &seed001_q[0][0], &seed001_k[0][0], &weights[0][0]), EDGEATTN_OK);
  for (i = 0; i < 4; ++i) {
    for (c = 0; c < 8; ++c) CHECK_NEAR(out8[i][c], seed001_causal_output[i][c], 2e-6);
    for (j = 0; j < 4; ++j) CHECK_NEAR(weights[i][j], seed001_causal_weights[i][j], 2e-6);
  }
  for (i = 0; i < 4; ++i) {
    double dot = 0;
    for (c = 0; c < 8; ++c) dot += (double)seed001_q[i][c] * seed001_k[i][c];
    CHECK_NEAR(dot / sqrt(8.0), seed001_scaled[i][i], 2e-6);
  }
  /* Seed 002: scores ~1e4, row-wise softmax is one-hot on key 1 for every row (see seeds_test.cc) */
  CHECK_STATUS(edgeattn_linear(&seed002_attention_input[0][0], 3, 4, &seed002_qw[0][0], NULL, 4, &q2[0][0]),
               EDGEATTN_OK);
  CHECK_STATUS(edgeattn_linear(&seed002_attention_input[0][0], 3, 4, &seed002_kw[0][0], NULL, 4, &k2[0][0]),
               EDGEATTN_OK);
  CHECK_STATUS(edgeattn_linear(&seed002_attention_input[0][0], 3, 4, &seed002_vw[0][0], NULL, 4, &v2[0][0]),
               EDGEATTN_OK);
  for (i = 0; i < 3; ++i) {
    for (c = 0; c < 4; ++c) {
      CHECK_NEAR(q2[i][c], seed002_q[i][c], 2e-5); /* float rounding of ~100, see seeds_test.cc */
      CHECK_NEAR(k2[i][c], seed002_k[i][c], 2e-5);
      CHECK_NEAR(v2[i][c], seed002_v[i][c], 2e-5);
    }
  }
  d = make_desc(3, 3, 4, 4);
  CHECK_STATUS(edgeattn_attention(&d, &q2[0][0], &k2[0][0], &v2[0][0], &out2[0][0], workspace, sizeof(workspace)),
               EDGEATTN_OK);
  for (i = 0; i < 3; ++i) {
    for (c = 0; c < 4; ++c) CHECK(out2[i][c] == v2[1][c]);
  }
}

static void check_attention_masks_and_heads(void) {
  /* 2 query heads sharing 1 K/V head, 3 queries against 5 keys, causal: query i sees keys j <= i + 2. */
  float q[3][2][4], k[5][1][4], v[5][1][2], out[3][2][2], mask[3][5], weights[2][3][5];
  unsigned char workspace[256];
  edgeattn_attention_desc d = make_desc(3, 5, 4, 2);
  int i, j, c;
  for (i = 0; i < 3; ++i)
    for (j = 0; j < 2; ++j)
      for (c = 0; c < 4; ++c) q[i][j][c] = (float)((i + 2 * j + c) % 3) - 1.0f;
  for (j = 0; j < 5; ++j) {
    for (c = 0; c < 4; ++c) k[j][0][c] = (float)((j * c) % 4) * 0.5f;
    v[j][0][0] = (float)j;
    v[j][0][1] = 1.0f;
  }
  d.num_heads = 2;
  d.num_kv_heads = 1;
  d.mask = EDGEATTN_MASK_CAUSAL;
  /* Key 4 is in the future of queries 0 and 1; poison it, only query 2 may see it. */
  k[4][0][0] = nan_f();
  v[4][0][1] = nan_f();
  CHECK_STATUS(
      edgeattn_attention(&d, &q[0][0][0], &k[0][0][0], &v[0][0][0], &out[0][0][0], workspace, sizeof(workspace)),
      EDGEATTN_OK);
  for (i = 0; i < 2; ++i)
    for (j = 0; j < 2; ++j) CHECK(!isnan(out[i][j][0]) && fabs(out[i][j][1] - 1.0) < 1e-6); /* weights sum to 1 */
  CHECK(isnan(out[2][0][1]));
  /* Additive mask hiding key 4 from everyone: now nothing is NaN; also -inf everywhere in row 0 gives zeros. */
  for (i = 0; i < 3; ++i)
    for (j = 0; j < 5; ++j) mask[i][j] = (i == 0 || j == 4) ? -inf_f() : 0.0f;
  d.additive_mask = &mask[0][0];
  CHECK_STATUS(
      edgeattn_attention(&d, &q[0][0][0], &k[0][0][0], &v[0][0][0], &out[0][0][0], workspace, sizeof(workspace)),
      EDGEATTN_OK);
  CHECK(all_equal(&out[0][0][0], 4, 0.0f));
  for (i = 1; i < 3; ++i)
    for (j = 0; j < 2; ++j) CHECK(!isnan(out[i][j][0]) && !isnan(out[i][j][1]));
  CHECK_STATUS(edgeattn_attention_weights(&d, &q[0][0][0], &k[0][0][0], &weights[0][0][0]), EDGEATTN_OK);
  for (i = 0; i < 2; ++i) {
    CHECK(all_equal(weights[i][0], 5, 0.0f));
    CHECK(weights[i][1][4] == 0.0f && weights[i][2][4] == 0.0f);
  }
  /* Decoding: one query against the whole cache sees every key under the causal mask. */
  d = make_desc(1, 5, 4, 2);
  d.mask = EDGEATTN_MASK_CAUSAL;
  k[4][0][0] = 1.0f;
  v[4][0][1] = 1.0f;
  CHECK_STATUS(edgeattn_attention_weights(&d, &q[2][0][0], &k[0][0][0], &weights[0][0][0]), EDGEATTN_OK);
  for (j = 0; j < 5; ++j) CHECK(weights[0][0][j] > 0.0f);
}

static void check_attention_errors(void) {
  float q[16] = {0}, k[16] = {0}, v[16] = {0}, out[16];
  unsigned char workspace[256];
  edgeattn_attention_desc good = make_desc(2, 2, 2, 2), d;
  size_t need = edgeattn_attention_workspace_size(&good);
  int i;
  for (i = 0; i < 16; ++i) out[i] = 7.0f;
  CHECK_STATUS(edgeattn_attention(NULL, q, k, v, out, workspace, need), EDGEATTN_ERROR_NULL_POINTER);
  CHECK_STATUS(edgeattn_attention_weights(NULL, q, k, out), EDGEATTN_ERROR_NULL_POINTER);
  CHECK(edgeattn_attention_workspace_size(NULL) == 0);
  CHECK_STATUS(edgeattn_attention(&good, NULL, k, v, out, workspace, need), EDGEATTN_ERROR_NULL_POINTER);
  CHECK_STATUS(edgeattn_attention(&good, q, k, v, out, NULL, need), EDGEATTN_ERROR_NULL_POINTER);
  CHECK_STATUS(edgeattn_attention(&good, q, k, v, out, workspace, need - 1), EDGEATTN_ERROR_WORKSPACE_TOO_SMALL);
  d = good;
  d.q_len = 0;
  CHECK_STATUS(edgeattn_attention(&d, q, k, v, out, workspace, need), EDGEATTN_ERROR_INVALID_SHAPE);
  CHECK(edgeattn_attention_workspace_size(&d) == 0);
  d = good;
  d.head_dim = SIZE_MAX / 2;
  CHECK_STATUS(edgeattn_attention(&d, q, k, v, out, workspace, need), EDGEATTN_ERROR_INVALID_SHAPE);
  d = good;
  d.num_heads = 3;
  d.num_kv_heads = 2;
  CHECK_STATUS(edgeattn_attention(&d, q, k, v, out, workspace, need), EDGEATTN_ERROR_INVALID_ARGUMENT);
  d = good;
  d.scale = nan_f();
  CHECK_STATUS(edgeattn_attention(&d, q, k, v, out, workspace, need), EDGEATTN_ERROR_INVALID_ARGUMENT);
  d.scale = inf_f();
  CHECK_STATUS(edgeattn_attention(&d, q, k, v, out, workspace, need), EDGEATTN_ERROR_INVALID_ARGUMENT);
  d.scale = -1.0f;
  CHECK_STATUS(edgeattn_attention_weights(&d, q, k, out), EDGEATTN_ERROR_INVALID_ARGUMENT);
  d = good;
  d.mask = (edgeattn_mask_kind)5;
  CHECK_STATUS(edgeattn_attention(&d, q, k, v, out, workspace, need), EDGEATTN_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(edgeattn_attention(&good, q, k, v, q + 2, workspace, need), EDGEATTN_ERROR_OVERLAP);
  CHECK_STATUS(edgeattn_attention(&good, q, k, v, out, (unsigned char*)(v + 4) - 8, need), EDGEATTN_ERROR_OVERLAP);
  CHECK_STATUS(edgeattn_attention_weights(&good, q, k, k + 3), EDGEATTN_ERROR_OVERLAP);
  CHECK(all_equal(out, 16, 7.0f));
  CHECK(all_equal(q, 16, 0.0f) && all_equal(k, 16, 0.0f) && all_equal(v, 16, 0.0f));
}

static void check_activation(void) {
  float x[5], y[5], up[5];
  size_t i;
  x[0] = -inf_f();
  x[1] = inf_f();
  x[2] = nan_f();
  x[3] = 1.0f;
  x[4] = -2.0f;
  CHECK_STATUS(edgeattn_activation_apply(x, y, 5, EDGEATTN_ACT_GELU_ERF), EDGEATTN_OK);
  CHECK(y[0] == 0.0f && isinf(y[1]) && y[1] > 0 && isnan(y[2]));
  CHECK_NEAR(y[3], 0.8413447460685429, 1e-6);   /* 1 * Phi(1) */
  CHECK_NEAR(y[4], -0.04550026389635842, 1e-7); /* -2 * Phi(-2) */
  CHECK_STATUS(edgeattn_activation_apply(x, y, 5, EDGEATTN_ACT_GELU_TANH), EDGEATTN_OK);
  CHECK_NEAR(y[3], 0.8411919906082768, 1e-6);
  CHECK_STATUS(edgeattn_activation_apply(x, y, 5, EDGEATTN_ACT_RELU), EDGEATTN_OK);
  CHECK(y[0] == 0.0f && isnan(y[2]) && y[3] == 1.0f && y[4] == 0.0f);
  for (i = 0; i < 5; ++i) up[i] = 2.0f;
  CHECK_STATUS(edgeattn_gated_activation(x + 3, up, y, 2, EDGEATTN_ACT_SILU), EDGEATTN_OK);
  CHECK_NEAR(y[0], 2.0 * 0.7310585786300049, 2e-6); /* 2 * silu(1) */
  CHECK_NEAR(y[1], 2.0 * -0.23840584404423515, 1e-6);
  CHECK_STATUS(edgeattn_activation_apply(x, x, 5, EDGEATTN_ACT_SILU), EDGEATTN_OK); /* in place */
  CHECK_STATUS(edgeattn_add(up, up, y, 5), EDGEATTN_OK);
  CHECK(all_equal(y, 5, 4.0f));
  CHECK_STATUS(edgeattn_activation_apply(NULL, NULL, 0, EDGEATTN_ACT_RELU), EDGEATTN_OK);
  CHECK_STATUS(edgeattn_activation_apply(NULL, y, 1, EDGEATTN_ACT_RELU), EDGEATTN_ERROR_NULL_POINTER);
  CHECK_STATUS(edgeattn_activation_apply(up, y, 5, (edgeattn_activation)7), EDGEATTN_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(edgeattn_gated_activation(up, up + 1, up, 4, EDGEATTN_ACT_SILU), EDGEATTN_ERROR_OVERLAP);
  CHECK_STATUS(edgeattn_add(up, y, up + 1, 4), EDGEATTN_ERROR_OVERLAP);
  CHECK(all_equal(y, 5, 4.0f) && all_equal(up, 5, 2.0f));
}

/* The KV cache: a linear F32 cache gives edgeattn_attention's results on the same K/V; a ring keeps the last
   positions; F16 and Q8 store within their rounding; every error status, with nothing changed. */
static void check_kv_cache(void) {
  edgeattn_kv_cache_desc cd;
  edgeattn_kv_cache cache, ring, copy;
  edgeattn_attention_desc d;
  static unsigned char storage[4096], ring_storage[2048], workspace[8192];
  static float k[12][2][4], v[12][2][3], q[3][4][4], out[3][4][3], direct[3][4][3], kr[2][4], vr[2][3];
  size_t need, i, j, c;
  for (i = 0; i < 12; ++i) {
    for (j = 0; j < 2; ++j) {
      for (c = 0; c < 4; ++c) k[i][j][c] = (float)sin(0.7 * (double)(i * 8 + j * 4 + c));
      for (c = 0; c < 3; ++c) v[i][j][c] = (float)cos(0.3 * (double)(i * 6 + j * 3 + c));
    }
  }
  for (i = 0; i < 3; ++i) {
    for (j = 0; j < 4; ++j) {
      for (c = 0; c < 4; ++c) q[i][j][c] = (float)sin(1.3 * (double)(i * 16 + j * 4 + c) + 0.5);
    }
  }
  memset(&cd, 0, sizeof(cd));
  cd.type = EDGEATTN_KV_F32;
  cd.num_kv_heads = 2;
  cd.head_dim = 4;
  cd.value_dim = 3;
  cd.capacity = 12;
  cd.window = 0;
  need = edgeattn_kv_cache_storage_size(&cd);
  CHECK(need == 16 + 12 * 2 * 7 * 4);
  CHECK_STATUS(edgeattn_kv_cache_init(&cache, &cd, NULL, need), EDGEATTN_ERROR_NULL_POINTER);
  CHECK_STATUS(edgeattn_kv_cache_init(&cache, &cd, storage, need - 1), EDGEATTN_ERROR_WORKSPACE_TOO_SMALL);
  CHECK_STATUS(edgeattn_kv_cache_init(&cache, &cd, storage, need), EDGEATTN_OK);
  CHECK_STATUS(edgeattn_kv_cache_append(&cache, NULL, NULL, 0), EDGEATTN_OK);
  CHECK_STATUS(edgeattn_kv_cache_append(&cache, &k[0][0][0], &v[0][0][0], 10), EDGEATTN_OK);
  CHECK(cache.length == 10);
  CHECK_STATUS(edgeattn_kv_cache_append(&cache, &k[0][0][0], &v[0][0][0], 3), EDGEATTN_ERROR_CAPACITY);
  CHECK(cache.length == 10);

  /* Prefill's last chunk of 3 queries, causal, 4 query heads on 2 kv heads: edgeattn_attention on the same K/V. */
  d = make_desc(3, 0, 4, 3);
  d.num_heads = 4;
  d.num_kv_heads = 2;
  d.mask = EDGEATTN_MASK_CAUSAL;
  need = edgeattn_attention_cached_workspace_size(&d, &cache);
  CHECK(need > 0 && need <= sizeof(workspace));
  CHECK_STATUS(edgeattn_attention_cached(&d, &q[0][0][0], &cache, &out[0][0][0], workspace, need), EDGEATTN_OK);
  d.kv_len = 10;
  CHECK_STATUS(
      edgeattn_attention(&d, &q[0][0][0], &k[0][0][0], &v[0][0][0], &direct[0][0][0], workspace, sizeof(workspace)),
      EDGEATTN_OK);
  for (i = 0; i < 3 * 4 * 3; ++i) CHECK_NEAR((&out[0][0][0])[i], (&direct[0][0][0])[i], 1e-6);
  CHECK_STATUS(edgeattn_attention_cached(&d, &q[0][0][0], &cache, &out[0][0][0], workspace, need),
               EDGEATTN_ERROR_INVALID_ARGUMENT); /* kv_len != 0 */
  d.kv_len = 0;
  CHECK_STATUS(edgeattn_attention_cached(&d, &q[0][0][0], &cache, &out[0][0][0], workspace, need - 1),
               EDGEATTN_ERROR_WORKSPACE_TOO_SMALL);
  CHECK_STATUS(edgeattn_attention_cached(&d, &q[0][0][0], &cache, (float*)storage, workspace, need),
               EDGEATTN_ERROR_OVERLAP);
  CHECK_STATUS(edgeattn_attention_cached(NULL, &q[0][0][0], &cache, &out[0][0][0], workspace, need),
               EDGEATTN_ERROR_NULL_POINTER);
  CHECK_STATUS(edgeattn_kv_cache_read(&cache, 9, &kr[0][0], &vr[0][0]), EDGEATTN_OK);
  CHECK(memcmp(kr, k[9], sizeof(kr)) == 0 && memcmp(vr, v[9], sizeof(vr)) == 0);
  CHECK_STATUS(edgeattn_kv_cache_read(&cache, 10, &kr[0][0], &vr[0][0]), EDGEATTN_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(edgeattn_kv_cache_truncate(&cache, 11), EDGEATTN_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(edgeattn_kv_cache_truncate(&cache, 4), EDGEATTN_OK);
  CHECK(cache.length == 4);
  copy = cache;
  copy.length = 0;
  d.q_len = 1;
  CHECK_STATUS(edgeattn_attention_cached(&d, &q[0][0][0], &copy, &out[0][0][0], workspace, need),
               EDGEATTN_ERROR_INVALID_SHAPE); /* empty cache */

  /* A ring of 4 positions with a window of 3 and the same decode step on a linear cache holding only the three
     visible positions: bit-identical. F16 storage within half an f16 ULP (|x| <= 1 here: 2^-12). */
  cd.type = EDGEATTN_KV_F16;
  cd.capacity = 4;
  cd.window = 3;
  CHECK(edgeattn_kv_cache_storage_size(&cd) <= sizeof(ring_storage));
  CHECK_STATUS(edgeattn_kv_cache_init(&ring, &cd, ring_storage, sizeof(ring_storage)), EDGEATTN_OK);
  CHECK_STATUS(edgeattn_kv_cache_append(&ring, &k[0][0][0], &v[0][0][0], 12), EDGEATTN_OK);
  CHECK_STATUS(edgeattn_kv_cache_read(&ring, 7, &kr[0][0], &vr[0][0]), EDGEATTN_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(edgeattn_kv_cache_read(&ring, 11, &kr[0][0], &vr[0][0]), EDGEATTN_OK);
  for (c = 0; c < 4; ++c) CHECK_NEAR(kr[1][c], k[11][1][c], 0x1p-12);
  cd.capacity = 3;
  cd.window = 0;
  CHECK_STATUS(edgeattn_kv_cache_init(&cache, &cd, storage, sizeof(storage)), EDGEATTN_OK);
  CHECK_STATUS(edgeattn_kv_cache_append(&cache, &k[9][0][0], &v[9][0][0], 3), EDGEATTN_OK);
  CHECK_STATUS(edgeattn_attention_cached(&d, &q[0][0][0], &ring, &out[0][0][0], workspace, need), EDGEATTN_OK);
  CHECK_STATUS(edgeattn_attention_cached(&d, &q[0][0][0], &cache, &direct[0][0][0], workspace, need), EDGEATTN_OK);
  CHECK(memcmp(out[0], direct[0], sizeof(out[0])) == 0);

  /* F16 overflow and Q8 non-finite values are INVALID_ARGUMENT and store nothing. */
  k[0][0][0] = 65520.0f;
  CHECK_STATUS(edgeattn_kv_cache_append(&ring, &k[0][0][0], &v[0][0][0], 1), EDGEATTN_ERROR_INVALID_ARGUMENT);
  CHECK(ring.length == 12);
  cd.type = EDGEATTN_KV_Q8;
  CHECK_STATUS(edgeattn_kv_cache_init(&cache, &cd, storage, sizeof(storage)), EDGEATTN_OK);
  k[0][0][0] = nan_f();
  CHECK_STATUS(edgeattn_kv_cache_append(&cache, &k[0][0][0], &v[0][0][0], 1), EDGEATTN_ERROR_INVALID_ARGUMENT);
  CHECK(cache.length == 0);
  cd.type = (edgeattn_kv_type)9;
  CHECK(edgeattn_kv_cache_storage_size(&cd) == 0);
  CHECK_STATUS(edgeattn_kv_cache_init(&cache, &cd, storage, sizeof(storage)), EDGEATTN_ERROR_INVALID_ARGUMENT);
}

int main(void) {
  check_library();
  check_exp();
  check_dot();
  check_softmax();
  check_linear();
  check_positional_encoding();
  check_norms();
  check_rope();
  check_rope_table();
  check_linear_transposed();
  check_linear_q8();
  check_attention_seeds();
  check_attention_masks_and_heads();
  check_attention_errors();
  check_activation();
  check_kv_cache();
  printf("%d checks, %d failed\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
