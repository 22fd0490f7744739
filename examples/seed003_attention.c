/* SPDX-License-Identifier: Apache-2.0 */
/* Seed 003's general attention: four one-hot words, integer projection weights, scaled dot-product attention. */
#include <stdio.h>

#include "edgeattn/edgeattn.h"

int main(void) {
  const float words[4][3] = {{1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {0, 0, 1}};
  const float w_q[3][3] = {{2, 0, 2}, {2, 0, 0}, {2, 1, 2}};
  const float w_k[3][3] = {{2, 2, 2}, {0, 2, 1}, {0, 1, 1}};
  const float w_v[3][3] = {{1, 1, 0}, {0, 1, 1}, {0, 0, 0}};
  float q[4][3], k[4][3], v[4][3], out[4][3];
  unsigned char workspace[256]; /* or: malloc(edgeattn_attention_workspace_size(&desc)) */
  edgeattn_attention_desc desc = {0};
  edgeattn_status status;
  int i;

  /* Q = words @ W_Q, K = words @ W_K, V = words @ W_V (weights stored [in][out], no bias). */
  edgeattn_linear(&words[0][0], 4, 3, &w_q[0][0], NULL, 3, &q[0][0]);
  edgeattn_linear(&words[0][0], 4, 3, &w_k[0][0], NULL, 3, &k[0][0]);
  edgeattn_linear(&words[0][0], 4, 3, &w_v[0][0], NULL, 3, &v[0][0]);

  desc.q_len = 4;
  desc.kv_len = 4;
  desc.head_dim = 3;
  desc.value_dim = 3;
  desc.num_heads = 1;             /* num_kv_heads = 0: same as num_heads */
  desc.scale = 0.0f;              /* 0: 1/sqrt(head_dim) */
  desc.mask = EDGEATTN_MASK_NONE; /* EDGEATTN_MASK_CAUSAL for a decoder */

  if (edgeattn_attention_workspace_size(&desc) > sizeof(workspace)) return 1;
  status = edgeattn_attention(&desc, &q[0][0], &k[0][0], &v[0][0], &out[0][0], workspace, sizeof(workspace));
  if (status != EDGEATTN_OK) {
    fprintf(stderr, "edgeattn: %s\n", edgeattn_status_string(status));
    return 1;
  }
  for (i = 0; i < 4; ++i) printf("%.5f %.5f %.5f\n", out[i][0], out[i][1], out[i][2]);
  return 0;
}
