/* SPDX-License-Identifier: Apache-2.0 */
/* One Whisper-style encoder layer (pre-norm, as nn.TransformerEncoderLayer(..., activation="gelu", norm_first=True))
 * on a short sequence, from edgeattn's C API only: 8 tokens, d_model 64, 4 heads, feed-forward 256.
 *
 *   h = x + out_proj(attention(LayerNorm1(x) projected to Q, K, V))
 *   y = h + linear2(GELU(linear1(LayerNorm2(h))))
 *
 * The weights are stored as PyTorch stores them (nn.Linear: [out][in]; in_proj_weight: Q, K and V stacked, [3d][d]),
 * so a checkpoint's tensors can be used as they are. Here they are random, from the counter-based generator of
 * tools/gen_block_golden.py, and the result is compared with what PyTorch computes for the same layer
 * (tests/data/block_encoder.h, shape "small"). Every buffer is static; the program prints each token's first
 * outputs and "-> PASS" or "-> FAIL", and returns non-zero on failure. Runs on the hosted platforms and on the
 * Cortex-M boards under QEMU (printf by semihosting). Valid C99. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "edgeattn/edgeattn.h"
#include "tests/data/block_encoder.h"

#define SEQ BLOCK_ENCODER_SMALL_SEQ
#define D BLOCK_ENCODER_SMALL_D_MODEL
#define HEADS BLOCK_ENCODER_SMALL_HEADS
#define FFN BLOCK_ENCODER_SMALL_FFN

/* The layer's parameters, named as in PyTorch's state_dict. */
static float in_proj_weight[3 * D][D], in_proj_bias[3 * D];
static float out_proj_weight[D][D], out_proj_bias[D];
static float linear1_weight[FFN][D], linear1_bias[FFN];
static float linear2_weight[D][FFN], linear2_bias[D];
static float norm1_weight[D], norm1_bias[D], norm2_weight[D], norm2_bias[D];

/* Activations. */
static float x[SEQ][D], normed[SEQ][D], q[SEQ][D], k[SEQ][D], v[SEQ][D], attended[SEQ][D], h[SEQ][D];
static float ffn[SEQ][FFN], y[SEQ][D];
static unsigned char workspace[4096]; /* attention's scratch; checked against what it asks for below */

/* tools/gen_block_golden.py's generator: a hash of (tensor, index) scaled to [-1, 1), 16 bits, exact in float. */
static float generated(uint32_t tensor, uint32_t index) {
  uint32_t s = BLOCK_ENCODER_SEED + 0x9E3779B9u * (tensor + 1u) + 0x85EBCA6Bu * (index + 1u);
  s ^= s >> 16;
  s *= 0x85EBCA6Bu;
  s ^= s >> 13;
  s *= 0xC2B2AE35u;
  s ^= s >> 16;
  return (float)((int32_t)(s >> 16) - 32768) * 0x1p-15f;
}

/* Weights and biases: generated * 2^-k (k from the golden header); norm weights 1 + g/4, norm biases g/4. */
static void fill(float* t, size_t n, uint32_t tensor, int k) {
  size_t i;
  for (i = 0; i < n; ++i) t[i] = ldexpf(generated(tensor, (uint32_t)i), -k);
}
static void fill_norm(float* weight, float* bias, size_t n, uint32_t weight_tensor, uint32_t bias_tensor) {
  size_t i;
  for (i = 0; i < n; ++i) {
    weight[i] = 1.0f + generated(weight_tensor, (uint32_t)i) * 0.25f;
    bias[i] = generated(bias_tensor, (uint32_t)i) * 0.25f;
  }
}

static void load_layer(void) {
  fill(&in_proj_weight[0][0], 3 * D * D, BLOCK_ENCODER_TENSOR_SELF_ATTN_IN_PROJ_WEIGHT,
       BLOCK_ENCODER_SMALL_K_SELF_ATTN_IN_PROJ_WEIGHT);
  fill(in_proj_bias, 3 * D, BLOCK_ENCODER_TENSOR_SELF_ATTN_IN_PROJ_BIAS, BLOCK_ENCODER_SMALL_K_SELF_ATTN_IN_PROJ_BIAS);
  fill(&out_proj_weight[0][0], D * D, BLOCK_ENCODER_TENSOR_SELF_ATTN_OUT_PROJ_WEIGHT,
       BLOCK_ENCODER_SMALL_K_SELF_ATTN_OUT_PROJ_WEIGHT);
  fill(out_proj_bias, D, BLOCK_ENCODER_TENSOR_SELF_ATTN_OUT_PROJ_BIAS, BLOCK_ENCODER_SMALL_K_SELF_ATTN_OUT_PROJ_BIAS);
  fill(&linear1_weight[0][0], FFN * D, BLOCK_ENCODER_TENSOR_LINEAR1_WEIGHT, BLOCK_ENCODER_SMALL_K_LINEAR1_WEIGHT);
  fill(linear1_bias, FFN, BLOCK_ENCODER_TENSOR_LINEAR1_BIAS, BLOCK_ENCODER_SMALL_K_LINEAR1_BIAS);
  fill(&linear2_weight[0][0], D * FFN, BLOCK_ENCODER_TENSOR_LINEAR2_WEIGHT, BLOCK_ENCODER_SMALL_K_LINEAR2_WEIGHT);
  fill(linear2_bias, D, BLOCK_ENCODER_TENSOR_LINEAR2_BIAS, BLOCK_ENCODER_SMALL_K_LINEAR2_BIAS);
  fill_norm(norm1_weight, norm1_bias, D, BLOCK_ENCODER_TENSOR_NORM1_WEIGHT, BLOCK_ENCODER_TENSOR_NORM1_BIAS);
  fill_norm(norm2_weight, norm2_bias, D, BLOCK_ENCODER_TENSOR_NORM2_WEIGHT, BLOCK_ENCODER_TENSOR_NORM2_BIAS);
  fill(&x[0][0], SEQ * D, BLOCK_ENCODER_TENSOR_INPUT, 0); /* the input sequence */
}

static int check(edgeattn_status status, const char* step) {
  if (status == EDGEATTN_OK) return 1;
  printf("%s failed: %s -> FAIL\n", step, edgeattn_status_string(status));
  return 0;
}

static int encoder_layer(void) {
  const float eps = 1e-5f; /* PyTorch's LayerNorm default */
  edgeattn_attention_desc desc = {SEQ, SEQ, D / HEADS, D / HEADS, HEADS, 0, 0.0f, EDGEATTN_MASK_NONE, NULL};

  /* Self-attention block. The rows of in_proj_weight are Q's, then K's, then V's: three [D][D] projections. */
  if (!check(edgeattn_layer_norm(&x[0][0], SEQ, D, norm1_weight, norm1_bias, eps, &normed[0][0]), "norm1") ||
      !check(edgeattn_linear_transposed(&normed[0][0], SEQ, D, &in_proj_weight[0][0], &in_proj_bias[0], D, &q[0][0]),
             "q projection") ||
      !check(edgeattn_linear_transposed(&normed[0][0], SEQ, D, &in_proj_weight[D][0], &in_proj_bias[D], D, &k[0][0]),
             "k projection") ||
      !check(edgeattn_linear_transposed(&normed[0][0], SEQ, D, &in_proj_weight[2 * D][0], &in_proj_bias[2 * D], D,
                                        &v[0][0]),
             "v projection")) {
    return 0;
  }
  if (edgeattn_attention_workspace_size(&desc) > sizeof(workspace)) {
    printf("attention needs %u bytes of workspace -> FAIL\n", (unsigned)edgeattn_attention_workspace_size(&desc));
    return 0;
  }
  if (!check(edgeattn_attention(&desc, &q[0][0], &k[0][0], &v[0][0], &attended[0][0], workspace, sizeof(workspace)),
             "attention") ||
      !check(
          edgeattn_linear_transposed(&attended[0][0], SEQ, D, &out_proj_weight[0][0], out_proj_bias, D, &normed[0][0]),
          "out projection") ||
      !check(edgeattn_add(&x[0][0], &normed[0][0], &h[0][0], SEQ * D), "residual 1")) {
    return 0;
  }

  /* Feed-forward block, GELU in erf form (PyTorch's nn.GELU(), which Whisper uses). */
  return check(edgeattn_layer_norm(&h[0][0], SEQ, D, norm2_weight, norm2_bias, eps, &normed[0][0]), "norm2") &&
         check(edgeattn_linear_transposed(&normed[0][0], SEQ, D, &linear1_weight[0][0], linear1_bias, FFN, &ffn[0][0]),
               "linear1") &&
         check(edgeattn_activation_apply(&ffn[0][0], &ffn[0][0], SEQ * FFN, EDGEATTN_ACT_GELU_ERF), "gelu") &&
         check(edgeattn_linear_transposed(&ffn[0][0], SEQ, FFN, &linear2_weight[0][0], linear2_bias, D, &normed[0][0]),
               "linear2") &&
         check(edgeattn_add(&h[0][0], &normed[0][0], &y[0][0], SEQ * D), "residual 2");
}

int main(void) {
  double worst = 0.0;
  size_t t, c;
  printf("edgeattn %s encoder layer example (SIMD target %s): %d tokens, d_model %d, %d heads, FFN %d\n",
         edgeattn_version(), edgeattn_simd_target(), SEQ, D, HEADS, FFN);
  load_layer();
  if (!encoder_layer()) return 1;
  for (t = 0; t < SEQ; ++t) {
    double err = 0.0, norm = 0.0;
    for (c = 0; c < D; ++c) {
      const double d = (double)y[t][c] - block_encoder_small_output[t][c];
      err += d * d;
      norm += block_encoder_small_output[t][c] * block_encoder_small_output[t][c];
    }
    if (sqrt(err / norm) > worst) worst = sqrt(err / norm);
    printf("token %u: %9.5f %9.5f %9.5f %9.5f ...\n", (unsigned)t, (double)y[t][0], (double)y[t][1], (double)y[t][2],
           (double)y[t][3]);
  }
  /* float32 arithmetic against PyTorch's float64: about 1e-7 per row (tests/block_test.cc explains the 1e-5). */
  printf("largest relative L2 difference per token from PyTorch: %.2e -> %s\n", worst, worst <= 1e-5 ? "PASS" : "FAIL");
  return worst <= 1e-5 ? 0 : 1;
}
