// SPDX-License-Identifier: Apache-2.0
// The narrow-head rows' plain-loop baseline (narrow_heads_bench.h). C library calls only (expf, sqrtf, memcpy):
// see the header for why.
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "bench/narrow_heads_bench.h"

namespace edgeattn_bench {
namespace {

// binary16 -> float by bit arithmetic (no F16C), as a first implementation writes it.
float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16, exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else {  // zero or subnormal: mantissa * 2^-24
    const float f = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    memcpy(&bits, &f, sizeof(bits));
    bits |= sign;
  }
  float out;
  memcpy(&out, &bits, sizeof(out));
  return out;
}

// Element c of K (side 0) or V (side 1) of position t, kv head kv.
inline float At(const PlainLoopCache& m, size_t side, size_t t, size_t kv, size_t c) {
  const size_t index = (t * m.kv_heads + kv) * m.dim + c, region = m.n * m.kv_heads * m.dim;
  const unsigned char* p = m.storage + 16;
  if (m.element_bytes == 4) {
    float x;
    memcpy(&x, p + 4 * (side * region + index), sizeof(x));
    return x;
  }
  if (m.element_bytes == 2) {
    uint16_t h;
    memcpy(&h, p + 2 * (side * region + index), sizeof(h));
    return HalfToFloat(h);
  }
  float scale;
  memcpy(&scale, p + 2 * region + 4 * (2 * (t * m.kv_heads + kv) + side), sizeof(scale));
  return static_cast<float>(static_cast<int8_t>(p[side * region + index])) * scale;
}

}  // namespace

void PlainLoopAttention(const PlainLoopCache& cache, const float* q, size_t q_len, size_t num_heads, float* att,
                        float* out) {
  const size_t dim = cache.dim, group = num_heads / cache.kv_heads;
  for (size_t i = 0; i < q_len; ++i) {
    const size_t visible = cache.n - q_len + i + 1;
    for (size_t h = 0; h < num_heads; ++h) {
      const float* qh = q + (i * num_heads + h) * dim;
      for (size_t t = 0; t < visible; ++t) {
        float score = 0.0f;
        for (size_t c = 0; c < dim; ++c) score += qh[c] * At(cache, 0, t, h / group, c);
        att[t] = score / sqrtf(static_cast<float>(dim));
      }
      float max = att[0];
      for (size_t t = 1; t < visible; ++t) max = att[t] > max ? att[t] : max;
      float sum = 0.0f;
      for (size_t t = 0; t < visible; ++t) {
        att[t] = expf(att[t] - max);
        sum += att[t];
      }
      for (size_t t = 0; t < visible; ++t) att[t] /= sum;
      float* oh = out + (i * num_heads + h) * dim;
      for (size_t c = 0; c < dim; ++c) oh[c] = 0.0f;
      for (size_t t = 0; t < visible; ++t) {
        for (size_t c = 0; c < dim; ++c) oh[c] += att[t] * At(cache, 1, t, h / group, c);
      }
    }
  }
}

}  // namespace edgeattn_bench
