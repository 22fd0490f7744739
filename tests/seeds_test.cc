// SPDX-License-Identifier: Apache-2.0
// Golden values from the seed notebooks (tests/data/), on every path, through the runtime and fixed-shape APIs.
#include <gtest/gtest.h>

#include <cmath>

#include "edgeattn/edgeattn.hpp"
#include "tests/data/seed_001.h"
#include "tests/data/seed_002.h"
#include "tests/data/seed_003.h"
#include "tests/test_util.h"

namespace edgeattn_test {
namespace {

using edgeattn::AttentionDesc;
using edgeattn::MaskKind;

class SeedsTest : public PathTest {};
EDGEATTN_INSTANTIATE_PATHS(SeedsTest);

// Seed 001's inputs were printed with 8 decimals and are rounded again to float here (relative 6e-8); with
// sum |q k| / sqrt(8) <= 5 that moves a score by up to 3e-7, a weight or an output by a little more. 2e-6 is
// that with margin; the library's own error is below 1e-6 here.
constexpr double kSeed001Tolerance = 2e-6;

TEST_P(SeedsTest, Seed001ScaledScores) {
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) {
      float dot = 0;
      ASSERT_EQ(api().dot(seed001_q[i], seed001_k[j], 8, &dot), Status::kOk);
      EXPECT_NEAR(dot / std::sqrt(8.0), seed001_scaled[i][j], kSeed001Tolerance) << i << "," << j;
    }
  }
}

// Attention and its weights on one path, with a stack workspace.
::testing::AssertionResult AttentionAndWeights(const Api& api, const AttentionDesc& d, const float* q, const float* k,
                                               const float* v, float* weights, float* out) {
  unsigned char ws[512];
  if (api.attention_workspace_size(d) > sizeof(ws)) return ::testing::AssertionFailure() << "workspace";
  if (api.attention_weights(d, q, k, weights) != Status::kOk) return ::testing::AssertionFailure() << "weights";
  if (api.attention(d, q, k, v, out, ws, sizeof(ws)) != Status::kOk) return ::testing::AssertionFailure() << "out";
  return ::testing::AssertionSuccess();
}

TEST_P(SeedsTest, Seed001CausalWeightsAndOutput) {
  const AttentionDesc d = MakeDesc(4, 4, 8, 8, MaskKind::kCausal);  // scale 0: 1/sqrt(8) as in the notebook
  float weights[4][4], out[4][8];
  ASSERT_TRUE(
      AttentionAndWeights(api(), d, &seed001_q[0][0], &seed001_k[0][0], &seed001_v[0][0], &weights[0][0], &out[0][0]));
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) {
      if (j > i) {
        EXPECT_EQ(weights[i][j], 0.0f) << "masked weight " << i << "," << j;
      } else {
        EXPECT_NEAR(weights[i][j], seed001_causal_weights[i][j], kSeed001Tolerance) << i << "," << j;
      }
    }
    for (int c = 0; c < 8; ++c) EXPECT_NEAR(out[i][c], seed001_causal_output[i][c], kSeed001Tolerance) << i << "," << c;
  }
  // The first query sees only the first key: its output is V[0] exactly.
  for (int c = 0; c < 8; ++c) EXPECT_EQ(out[0][c], seed001_v[0][c]);
}

TEST_P(SeedsTest, Seed001ThroughTheFixedShapeApi) {
  static edgeattn::FixedAttention<4, 4, 8, 8, 1, 1, MaskKind::kCausal> attention;
  static float out[4][8];
  ASSERT_EQ(IsScalarPath() ? attention.RunScalar(seed001_q, seed001_k, seed001_v, out)
                           : attention.Run(seed001_q, seed001_k, seed001_v, out),
            Status::kOk);
  for (int i = 0; i < 4; ++i) {
    for (int c = 0; c < 8; ++c) EXPECT_NEAR(out[i][c], seed001_causal_output[i][c], kSeed001Tolerance);
  }
}

// Seed 002: projections of its (printed) attention input, then row-wise attention on scores of ~1e4.
TEST_P(SeedsTest, Seed002ProjectionsAndLargeScoreAttention) {
  float q[3][4], k[3][4], v[3][4];
  ASSERT_EQ(api().linear(&seed002_attention_input[0][0], 3, 4, &seed002_qw[0][0], nullptr, 4, &q[0][0]), Status::kOk);
  ASSERT_EQ(api().linear(&seed002_attention_input[0][0], 3, 4, &seed002_kw[0][0], nullptr, 4, &k[0][0]), Status::kOk);
  ASSERT_EQ(api().linear(&seed002_attention_input[0][0], 3, 4, &seed002_vw[0][0], nullptr, 4, &v[0][0]), Status::kOk);
  // The inputs (~10) rounded to float move each sum of |x w| <= 110 by up to 110 * 2^-24 = 6.6e-6, and the
  // result (~100) is itself rounded by up to 3.8e-6: 2e-5 covers both.
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 4; ++c) {
      EXPECT_NEAR(q[r][c], seed002_q[r][c], 2e-5);
      EXPECT_NEAR(k[r][c], seed002_k[r][c], 2e-5);
      EXPECT_NEAR(v[r][c], seed002_v[r][c], 2e-5);
    }
  }
  // From the notebook's printed Q and K (double precision): each row's top score, scaled by 1/sqrt(4), beats
  // the runner-up by more than 100, so e^-100 vanishes in float and the row's weights are exactly one-hot.
  int top[3];
  for (int i = 0; i < 3; ++i) {
    double s[3];
    for (int j = 0; j < 3; ++j) {
      s[j] = 0;
      for (int c = 0; c < 4; ++c) s[j] += seed002_q[i][c] * seed002_k[j][c] / 2;
    }
    top[i] = static_cast<int>(std::max_element(s, s + 3) - s);
    for (int j = 0; j < 3; ++j) {
      if (j != top[i]) ASSERT_GT(s[top[i]] - s[j], 100.0);
    }
  }
  float weights[3][3], out[3][4];
  ASSERT_TRUE(
      AttentionAndWeights(api(), MakeDesc(3, 3, 4, 4), &q[0][0], &k[0][0], &v[0][0], &weights[0][0], &out[0][0]));
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) EXPECT_EQ(weights[i][j], j == top[i] ? 1.0f : 0.0f) << i << "," << j;
    for (int c = 0; c < 4; ++c) EXPECT_EQ(out[i][c], v[top[i]][c]) << "row " << i << " is not V[" << top[i] << "]";
  }
}

// Seed 003: one-hot words, integer weight matrices, scale 1/sqrt(3), the notebook's printed attention.
TEST_P(SeedsTest, Seed003GeneralAttention) {
  float q[4][3], k[4][3], v[4][3];
  ASSERT_EQ(api().linear(&seed003_words[0][0], 4, 3, &seed003_wq[0][0], nullptr, 3, &q[0][0]), Status::kOk);
  ASSERT_EQ(api().linear(&seed003_words[0][0], 4, 3, &seed003_wk[0][0], nullptr, 3, &k[0][0]), Status::kOk);
  ASSERT_EQ(api().linear(&seed003_words[0][0], 4, 3, &seed003_wv[0][0], nullptr, 3, &v[0][0]), Status::kOk);
  float weights[4][4], out[4][3];
  ASSERT_TRUE(
      AttentionAndWeights(api(), MakeDesc(4, 4, 3, 3), &q[0][0], &k[0][0], &v[0][0], &weights[0][0], &out[0][0]));
  // Integer inputs are exact; the printed 8 decimals and the library's float error stay below 1e-6.
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(weights[0][j], seed003_first_word_weights[j], 1e-6);
  for (int i = 0; i < 4; ++i) {
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(out[i][c], seed003_attention[i][c], 1e-6) << i << "," << c;
  }
  static edgeattn::FixedAttention<4, 4, 3> fixed;
  static float fixed_out[4][3];
  ASSERT_EQ(IsScalarPath() ? fixed.RunScalar(q, k, v, fixed_out) : fixed.Run(q, k, v, fixed_out), Status::kOk);
  for (int i = 0; i < 4; ++i) {
    for (int c = 0; c < 3; ++c) EXPECT_EQ(fixed_out[i][c], out[i][c]);
  }
}

}  // namespace
}  // namespace edgeattn_test
