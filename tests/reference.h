// SPDX-License-Identifier: Apache-2.0
// Double-precision references, written from the mathematical definitions (not from the library's code),
// with the special-value rules the headers document.
#ifndef EDGEATTN_TESTS_REFERENCE_H_
#define EDGEATTN_TESTS_REFERENCE_H_

#include <stddef.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "edgeattn/attention.h"

namespace edgeattn_test {

// Softmax of one row of floats, in double. NaN anywhere: NaN. Max +inf: the +inf entries share 1. Max -inf:
// zeros. Otherwise exp(x - m) / sum.
inline std::vector<double> RefSoftmaxRow(const float* x, size_t n) {
  std::vector<double> out(n, 0.0);
  const double inf = std::numeric_limits<double>::infinity();
  bool nan = false;
  double m = -inf;
  size_t pos_inf = 0;
  for (size_t j = 0; j < n; ++j) {
    nan |= std::isnan(x[j]);
    m = std::max(m, static_cast<double>(x[j]));
    pos_inf += x[j] == std::numeric_limits<float>::infinity();
  }
  if (nan) return std::vector<double>(n, std::numeric_limits<double>::quiet_NaN());
  if (m == -inf) return out;
  if (m == inf) {
    for (size_t j = 0; j < n; ++j) out[j] = std::isinf(x[j]) && x[j] > 0 ? 1.0 / static_cast<double>(pos_inf) : 0.0;
    return out;
  }
  double sum = 0.0;
  for (size_t j = 0; j < n; ++j) sum += (out[j] = std::exp(static_cast<double>(x[j]) - m));
  for (double& o : out) o /= sum;
  return out;
}

// What the documentation promises for one attention query row (i, h), computed in double.
struct RefAttentionRow {
  std::vector<double> weights;  // [kv_len], 0 for keys the row does not see
  std::vector<double> out;      // [value_dim]
  std::vector<double> bound;    // [value_dim], the documented error bound of each output element
  double sigma = 0;             // bound on the error of the scores
};

// The documented bound constants (attention.h).
constexpr double kSoftmaxEta = 0x1p-21;  // softmax.h: 4 ULP, relative

inline RefAttentionRow RefAttention(const edgeattn::AttentionDesc& desc, const float* q, const float* k, const float* v,
                                    size_t i, size_t h) {
  const size_t kv_heads = desc.num_kv_heads == 0 ? desc.num_heads : desc.num_kv_heads;
  const size_t g = h / (desc.num_heads / kv_heads);
  const double scale = desc.scale != 0.0f ? desc.scale : 1.0 / std::sqrt(static_cast<double>(desc.head_dim));
  const double u = 0x1p-24;
  const float neg_inf = -std::numeric_limits<float>::infinity();
  RefAttentionRow row;
  row.weights.assign(desc.kv_len, 0.0);
  row.out.assign(desc.value_dim, 0.0);
  row.bound.assign(desc.value_dim, 0.0);

  // Keys the row sees: causal (bottom-right aligned) and not -inf in the additive mask.
  std::vector<size_t> keys;
  for (size_t j = 0; j < desc.kv_len; ++j) {
    const bool causal_ok = desc.mask != edgeattn::MaskKind::kCausal ||
                           static_cast<double>(j) <= static_cast<double>(i) + static_cast<double>(desc.kv_len) -
                                                         static_cast<double>(desc.q_len);
    const bool mask_ok = desc.additive_mask == nullptr || desc.additive_mask[i * desc.kv_len + j] != neg_inf;
    if (causal_ok && mask_ok) keys.push_back(j);
  }
  if (keys.empty()) return row;

  std::vector<double> scores(keys.size());
  double max_magnitude = 0;
  for (size_t t = 0; t < keys.size(); ++t) {
    const size_t j = keys[t];
    const float* qi = q + (i * desc.num_heads + h) * desc.head_dim;
    const float* kj = k + (j * kv_heads + g) * desc.head_dim;
    double dot = 0, dot_abs = 0;
    for (size_t c = 0; c < desc.head_dim; ++c) {
      dot += static_cast<double>(qi[c]) * kj[c];
      dot_abs += std::fabs(static_cast<double>(qi[c]) * kj[c]);
    }
    const double bias = desc.additive_mask != nullptr ? desc.additive_mask[i * desc.kv_len + j] : 0.0;
    scores[t] = dot * scale + bias;
    max_magnitude = std::max(max_magnitude, scale * dot_abs + std::fabs(bias));
  }
  row.sigma = static_cast<double>(desc.head_dim + 2) * u * max_magnitude;
  double m = *std::max_element(scores.begin(), scores.end());
  double sum = 0;
  for (double& s : scores) sum += (s = std::exp(s - m));
  for (size_t t = 0; t < keys.size(); ++t) row.weights[keys[t]] = scores[t] / sum;

  for (size_t c = 0; c < desc.value_dim; ++c) {
    double o = 0;
    for (size_t j : keys) o += row.weights[j] * v[(j * kv_heads + g) * desc.value_dim + c];
    row.out[c] = o;
    double spread = 0, magnitude = 0, plain = 0;
    for (size_t j : keys) {
      const double vj = v[(j * kv_heads + g) * desc.value_dim + c];
      spread += row.weights[j] * std::fabs(vj - o);
      magnitude += row.weights[j] * std::fabs(vj);
      plain += std::fabs(vj);
    }
    row.bound[c] = 2 * row.sigma * spread +
                   (kSoftmaxEta + (9.0 / 8.0 * static_cast<double>(keys.size()) + 1) * u) * magnitude +
                   static_cast<double>(std::numeric_limits<float>::min()) * plain +
                   (static_cast<double>(keys.size()) + 1) * 0x1p-149;  // gradual underflow, the output's included
  }
  return row;
}

}  // namespace edgeattn_test

#endif  // EDGEATTN_TESTS_REFERENCE_H_
