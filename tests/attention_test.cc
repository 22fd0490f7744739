// SPDX-License-Identifier: Apache-2.0
// Attention: the documented componentwise bound against a double reference on every path over random shapes,
// masks and head layouts; masking semantics; workspace and descriptor checks; compile-time shapes.
#include "edgeattn/attention.h"

#include <gtest/gtest.h>
#include <stdint.h>

#include <cfloat>
#include <cmath>
#include <vector>

#include "hwy/targets.h"
#include "lib/attention/attention_path.h"
#include "lib/common/mve.h"
#include "tests/reference.h"
#include "tests/test_util.h"

namespace edgeattn_test {
namespace {

using edgeattn::AttentionDesc;
using edgeattn::MaskKind;

class AttentionTest : public PathTest {};
EDGEATTN_INSTANTIATE_PATHS(AttentionTest);

size_t KvHeads(const AttentionDesc& d) { return d.num_kv_heads == 0 ? d.num_heads : d.num_kv_heads; }

// Inputs of one attention problem, in guarded misaligned buffers.
struct Problem {
  AttentionDesc desc;
  GuardedBuffer q, k, v, mask;
  Problem(const AttentionDesc& d, size_t misalign)
      : desc(d),
        q(d.q_len * d.num_heads * d.head_dim, misalign),
        k(d.kv_len * KvHeads(d) * d.head_dim, (misalign + 1) % 4),
        v(d.kv_len * KvHeads(d) * d.value_dim, (misalign + 2) % 4),
        mask(d.q_len * d.kv_len, (misalign + 3) % 4) {}
  // Every K and V head of key j set to value.
  void SetKey(size_t j, float value) {
    const size_t kv_heads = KvHeads(desc);
    for (size_t c = 0; c < kv_heads * desc.head_dim; ++c) k[j * kv_heads * desc.head_dim + c] = value;
    for (size_t c = 0; c < kv_heads * desc.value_dim; ++c) v[j * kv_heads * desc.value_dim + c] = value;
  }
  void Randomize(Rng& rng, float sigma = 1.0f) {
    for (size_t i = 0; i < q.size(); ++i) q[i] = rng.Normal(sigma);
    for (size_t i = 0; i < k.size(); ++i) k[i] = rng.Normal(sigma);
    for (size_t i = 0; i < v.size(); ++i) v[i] = rng.Normal();
  }
};

enum class AdditiveMask { kNone, kZeroOrMinusInf, kFiniteBias };

// Runs attention and attention weights on one path and checks both against the documented bounds.
void CheckProblem(const Api& api, Problem& p, const char* what) {
  const AttentionDesc& d = p.desc;
  const size_t out_size = d.q_len * d.num_heads * d.value_dim;
  GuardedBuffer out(out_size, 1), weights(d.num_heads * d.q_len * d.kv_len, 2);
  out.Fill(kNaN);
  weights.Fill(kNaN);
  const size_t ws_size = api.attention_workspace_size(d);
  ASSERT_EQ(ws_size, edgeattn::AttentionWorkspaceBytes(d.q_len, d.kv_len, d.head_dim, d.value_dim));
  std::vector<unsigned char> ws(ws_size + 3);
  ASSERT_EQ(api.attention(d, p.q.data(), p.k.data(), p.v.data(), out.data(), ws.data() + 3, ws_size), Status::kOk)
      << what;
  ASSERT_EQ(api.attention_weights(d, p.q.data(), p.k.data(), weights.data()), Status::kOk) << what;
  for (size_t i = 0; i < d.q_len; ++i) {
    for (size_t h = 0; h < d.num_heads; ++h) {
      const RefAttentionRow ref = RefAttention(d, p.q.data(), p.k.data(), p.v.data(), i, h);
      for (size_t c = 0; c < d.value_dim; ++c) {
        const float got = out[(i * d.num_heads + h) * d.value_dim + c];
        ASSERT_LE(std::fabs(got - ref.out[c]), ref.bound[c])
            << what << " Lq=" << d.q_len << " Lk=" << d.kv_len << " dk=" << d.head_dim << " dv=" << d.value_dim
            << " heads=" << d.num_heads << "/" << KvHeads(d) << " row " << i << " head " << h << " col " << c << " got "
            << got << " exact " << ref.out[c];
      }
      for (size_t j = 0; j < d.kv_len; ++j) {
        const float got = weights[(h * d.q_len + i) * d.kv_len + j];
        const double exact = ref.weights[j];
        if (exact == 0.0) {
          ASSERT_EQ(Bits(got), Bits(0.0f)) << what << " a masked weight must be exactly +0";
        } else {
          ASSERT_LE(std::fabs(got - exact), exact * (2 * ref.sigma + kSoftmaxEta) + FLT_MIN)
              << what << " weight [" << h << "][" << i << "][" << j << "]";
        }
      }
    }
  }
  EXPECT_TRUE(out.GuardsIntact() && weights.GuardsIntact() && p.q.GuardsIntact() && p.k.GuardsIntact() &&
              p.v.GuardsIntact() && p.mask.GuardsIntact());
}

TEST_P(AttentionTest, RandomShapesMasksAndHeadLayouts) {
  Rng rng;
  const size_t lengths[] = {1, 2, 3, 4, 5, 8, 9, 17, 33};
  const size_t widths[] = {1, 3, 8, 16, 17, 33, 64};
  const size_t head_layouts[][2] = {{1, 1}, {2, 2}, {4, 2}, {4, 1}, {3, 3}};
  size_t cases = 0;
  for (size_t lq : lengths) {
    for (size_t lk : lengths) {
      for (int variant = 0; variant < 3; ++variant) {
        AttentionDesc d;
        d.q_len = lq;
        d.kv_len = lk;
        d.head_dim = widths[rng.Index(7)];
        d.value_dim = widths[rng.Index(7)];
        const auto& layout = head_layouts[rng.Index(5)];
        d.num_heads = layout[0];
        d.num_kv_heads = rng.Bernoulli(0.5) && layout[0] == layout[1] ? 0 : layout[1];
        d.scale = rng.Bernoulli(0.5) ? 0.0f : rng.Uniform(0.05f, 1.0f);
        d.mask = rng.Bernoulli(0.5) ? MaskKind::kCausal : MaskKind::kNone;
        const auto additive = static_cast<AdditiveMask>(variant);
        Problem p(d, cases % 4);
        p.Randomize(rng, rng.Bernoulli(0.3) ? 3.0f : 1.0f);
        if (additive != AdditiveMask::kNone) {
          for (size_t t = 0; t < p.mask.size(); ++t) {
            p.mask[t] = additive == AdditiveMask::kFiniteBias ? rng.Normal(2.0f) : (rng.Bernoulli(0.3) ? -kInf : 0.0f);
          }
          p.desc.additive_mask = p.mask.data();
        }
        CheckProblem(api(), p,
                     additive == AdditiveMask::kNone         ? "no additive mask"
                     : additive == AdditiveMask::kFiniteBias ? "finite bias"
                                                             : "0/-inf mask");
        ++cases;
      }
    }
  }
  RecordProperty("cases", std::to_string(cases));
}

// Under wide emulated SVE (WideSveEmulated) 130 instead of 256: still several query blocks and key tiles, and a tail.
TEST_P(AttentionTest, ModelSizedShapes) {
  Rng rng;
  const size_t largest = WideSveEmulated() ? 130 : 256;
  for (size_t l : {size_t{64}, largest}) {
    for (size_t dim : {64, 128}) {
      for (MaskKind mask : {MaskKind::kNone, MaskKind::kCausal}) {
        const AttentionDesc d = MakeDesc(l, l, dim, dim, mask);
        Problem p(d, 0);
        p.Randomize(rng);
        CheckProblem(api(), p, "model sized");
      }
    }
  }
}

// On random N(0,1) data the error is far inside the bound: relative L2 error per output row <= 1e-6, measured
// against the size of what the row averages, ||sum_j p_j |v_j| ||, which is ||out|| when nothing cancels.
// (Against ||out|| itself the ratio is unbounded: rows whose values cancel to ~0 exist for any L.)
TEST_P(AttentionTest, RelativeL2ErrorPerRowOnRandomData) {
  Rng rng;
  double worst = 0, worst_vs_out = 0;
  // The last two: decode rows in 4 and 8 key chunks (attention.h, the work split), 2 queries each. Under wide
  // emulated SVE (WideSveEmulated) 160 rows instead of 512, which take nearly all of its time there.
  const size_t square = WideSveEmulated() ? 160 : 512;
  for (size_t l : {size_t{4}, size_t{64}, square, size_t{1537}, size_t{4096}}) {
    for (size_t dim : {8, 64, 128}) {
      if (l > 512 && dim != (l == 1537 ? 64 : 8)) continue;  // one width each: K and V under 1 MiB (4 MiB boards)
      const size_t lq = l > 512 ? 2 : l;
      const AttentionDesc d = MakeDesc(lq, l, dim, dim, l == 64 ? MaskKind::kCausal : MaskKind::kNone);
      Problem p(d, 0);
      p.Randomize(rng);
      std::vector<float> out(lq * dim);
      std::vector<unsigned char> ws(api().attention_workspace_size(d));
      ASSERT_EQ(api().attention(d, p.q.data(), p.k.data(), p.v.data(), out.data(), ws.data(), ws.size()), Status::kOk);
      for (size_t i = 0; i < lq; ++i) {
        const RefAttentionRow ref = RefAttention(d, p.q.data(), p.k.data(), p.v.data(), i, 0);
        double err = 0, norm = 0, size = 0;
        for (size_t c = 0; c < dim; ++c) {
          double magnitude = 0;
          for (size_t j = 0; j < l; ++j) magnitude += ref.weights[j] * std::fabs(p.v[j * dim + c]);
          err += (out[i * dim + c] - ref.out[c]) * (out[i * dim + c] - ref.out[c]);
          norm += ref.out[c] * ref.out[c];
          size += magnitude * magnitude;
        }
        worst = std::max(worst, std::sqrt(err / size));
        worst_vs_out = std::max(worst_vs_out, std::sqrt(err / norm));
      }
    }
  }
  std::printf("%s: worst relative L2 error per row: %.3g against sum p|v|, %.3g against |out|\n",
              TargetName(GetParam()), worst, worst_vs_out);
  RecordProperty("worst_relative_l2", std::to_string(worst));
  EXPECT_LE(worst, 1e-6);
}

// Computes attention on one path into a fresh vector (workspace sized by the API).
std::vector<float> RunAttention(const Api& api, const AttentionDesc& d, const float* q, const float* k,
                                const float* v) {
  std::vector<float> out(d.q_len * d.num_heads * d.value_dim, kNaN);
  std::vector<unsigned char> ws(api.attention_workspace_size(d));
  EXPECT_EQ(api.attention(d, q, k, v, out.data(), ws.data(), ws.size()), Status::kOk);
  return out;
}

TEST_P(AttentionTest, MaskedKeysAreNeverRead) {
  Rng rng;
  // 4 queries, 6 keys, causal (query i sees keys <= i + 2) and an additive mask hiding key 1 from everyone.
  const AttentionDesc d = MakeDesc(4, 6, 5, 7, MaskKind::kCausal);
  Problem p(d, 0);
  p.Randomize(rng);
  for (size_t i = 0; i < 4; ++i) {
    for (size_t j = 0; j < 6; ++j) p.mask[i * 6 + j] = j == 1 ? -kInf : 0.0f;
  }
  p.desc.additive_mask = p.mask.data();
  // Key 1 is masked for every query, key 5 for queries 0..2 (causal). Poison key 1's K and V with NaN: no
  // query may see it. Key 5 is visible to query 3, so it stays finite.
  p.SetKey(1, kNaN);
  const std::vector<float> poisoned = RunAttention(api(), p.desc, p.q.data(), p.k.data(), p.v.data());
  for (float o : poisoned) EXPECT_TRUE(std::isfinite(o)) << "a masked key's NaN reached the output";
  // The same problem with key 1 zeroed gives the same bits: masked keys contribute nothing at all.
  p.SetKey(1, 0.0f);
  EXPECT_EQ(BitsOf(poisoned), BitsOf(RunAttention(api(), p.desc, p.q.data(), p.k.data(), p.v.data())));

  // Causal only: the last key is in the future of query 0 of a square problem; NaN there must not reach it.
  const AttentionDesc sq = MakeDesc(4, 4, 5, 7, MaskKind::kCausal);
  Problem s(sq, 1);
  s.Randomize(rng);
  s.SetKey(3, kNaN);
  const std::vector<float> out = RunAttention(api(), sq, s.q.data(), s.k.data(), s.v.data());
  for (size_t i = 0; i < 3; ++i) {
    for (size_t c = 0; c < sq.value_dim; ++c) EXPECT_TRUE(std::isfinite(out[i * sq.value_dim + c])) << i;
  }
  for (size_t c = 0; c < sq.value_dim; ++c) EXPECT_TRUE(std::isnan(out[3 * sq.value_dim + c])) << "query 3 sees key 3";
}

// The tiled path (no additive mask, q_len >= kAttentionTiledMinQueries) works on blocks of queries against
// tiles of keys: a key masked for one row of a block is visible to later rows of it and is read for them, but
// must never be multiplied into a row that does not see it. 40 queries span two blocks on every target. The
// decode path (3 queries) streams each row's visible keys only: a NaN in a key only the last query sees stays
// out of the others.
// A NaN in a key a row does not see (causal) never reaches that row, on the tiled, decode, small and packed
// paths: with the key's k and v poisoned (its scores are NaN) and with only its v (the scores are finite, and
// paths that share vectors between rows must not multiply the key's v into rows that do not see it).
TEST_P(AttentionTest, FutureKeysNeverReachARowOnEveryPath) {
  Rng rng;
  struct Case {
    size_t q_len, kv_len, first_seer, value_dim;
  };
  for (const Case& t :
       {Case{40, 40, 21, 7}, Case{40, 100, 21, 7}, Case{3, 100, 2, 7}, Case{3, 66, 1, 7}, Case{4, 4, 1, 7},
        Case{4, 4, 2, 3}, Case{4, 4, 3, 8}, Case{3, 4, 1, 2}, Case{9, 4, 6, 4}, Case{4, 4, 1, 40}, Case{6, 6, 3, 5}}) {
    for (bool v_only : {false, true}) {
      const AttentionDesc d = MakeDesc(t.q_len, t.kv_len, 9, t.value_dim, MaskKind::kCausal);
      Problem p(d, 1);
      p.Randomize(rng);
      const size_t poisoned_key = t.kv_len - t.q_len + t.first_seer;  // seen by queries first_seer.. only
      if (v_only) {
        for (size_t c = 0; c < d.value_dim; ++c) p.v[poisoned_key * d.value_dim + c] = kNaN;
      } else {
        p.SetKey(poisoned_key, kNaN);
      }
      const std::vector<float> out = RunAttention(api(), d, p.q.data(), p.k.data(), p.v.data());
      for (size_t i = 0; i < t.q_len; ++i) {
        for (size_t c = 0; c < d.value_dim; ++c) {
          EXPECT_EQ(std::isnan(out[i * d.value_dim + c]), i >= t.first_seer)
              << "q_len " << t.q_len << " kv_len " << t.kv_len << " query " << i << " v only " << v_only;
        }
      }
    }
  }
}

// Scores that are NaN or +inf follow the softmax rules of the row path on the other paths too: the tiled path
// (q_len >= kAttentionTiledMinQueries) and the decode path (fewer queries, keys beyond a vector) recompute such
// a row alone, the small and packed_small paths (kv_len <= lanes) compute it with the row path's kernels. A NaN
// score makes its row NaN; +inf scores share the row; other rows are untouched.
TEST_P(AttentionTest, NonFiniteScoresFollowTheSoftmaxRulesOnEveryPath) {
  struct Case {
    size_t q_len, kv_len, inf_query, key_a, key_b, nan_query;
  };
  // The small path runs rows in pairs: {3, 4, ...} puts the +inf row first in a pair and the NaN row alone,
  // {4, 4, ...} both second in a pair.
  for (const Case& t :
       {Case{20, 70, 3, 10, 50, 17}, Case{3, 4, 0, 1, 3, 2}, Case{4, 4, 1, 0, 2, 3}, Case{3, 70, 0, 10, 66, 2},
        Case{3, 1100, 0, 10, 1050, 2}}) {  // the last: +inf keys in the first and the third key chunk
    Rng rng;
    const AttentionDesc d = MakeDesc(t.q_len, t.kv_len, 6, 5);
    Problem p(d, 0);
    p.Randomize(rng);
    // inf_query meets key_a and key_b with overflowing scores (+inf): they share the row.
    for (size_t c = 0; c < d.head_dim; ++c) {
      p.q[t.inf_query * d.head_dim + c] = 1e20f;
      p.k[t.key_a * d.head_dim + c] = 1e20f;
      p.k[t.key_b * d.head_dim + c] = 1e20f;
    }
    p.q[t.nan_query * d.head_dim + 2] = kNaN;  // its row is NaN
    const std::vector<float> out = RunAttention(api(), d, p.q.data(), p.k.data(), p.v.data());
    for (size_t c = 0; c < d.value_dim; ++c) {
      const float expected = 0.5f * p.v[t.key_a * d.value_dim + c] + 0.5f * p.v[t.key_b * d.value_dim + c];
      EXPECT_NEAR(out[t.inf_query * d.value_dim + c], expected, 1e-6f * (std::fabs(expected) + 1)) << c;
      EXPECT_TRUE(std::isnan(out[t.nan_query * d.value_dim + c])) << c;
    }
    // Every other row is finite and within the bound of its own (finite) scores.
    for (size_t i = 0; i < d.q_len; ++i) {
      if (i == t.inf_query || i == t.nan_query) continue;
      const RefAttentionRow ref = RefAttention(d, p.q.data(), p.k.data(), p.v.data(), i, 0);
      for (size_t c = 0; c < d.value_dim; ++c) {
        EXPECT_LE(std::fabs(out[i * d.value_dim + c] - ref.out[c]), ref.bound[c])
            << "q_len " << t.q_len << " row " << i << " col " << c;
      }
    }
  }
}

TEST_P(AttentionTest, RowsThatSeeNoKeyOutputZeros) {
  Rng rng;
  // Causal with Lq > Lk: queries 0 and 1 see nothing (j <= i - 2).
  const AttentionDesc d = MakeDesc(5, 3, 4, 4, MaskKind::kCausal, 2);
  Problem p(d, 0);
  p.Randomize(rng);
  const std::vector<float> out = RunAttention(api(), d, p.q.data(), p.k.data(), p.v.data());
  for (size_t t = 0; t < 2 * 2 * 4; ++t) EXPECT_EQ(Bits(out[t]), Bits(0.0f)) << t;
  for (size_t t = 2 * 2 * 4; t < out.size(); ++t) EXPECT_TRUE(std::isfinite(out[t]));
  std::vector<float> w(2 * 5 * 3, kNaN);
  ASSERT_EQ(api().attention_weights(d, p.q.data(), p.k.data(), w.data()), Status::kOk);
  for (size_t h = 0; h < 2; ++h) {
    for (size_t j = 0; j < 3; ++j) EXPECT_EQ(Bits(w[(h * 5 + 0) * 3 + j]), Bits(0.0f));
    EXPECT_EQ(w[(h * 5 + 2) * 3 + 0], 1.0f) << "query 2 sees only key 0";
  }

  // An additive mask of only -inf: every row sees nothing.
  AttentionDesc all = d;
  all.mask = MaskKind::kNone;
  Problem m(all, 0);
  m.Randomize(rng);
  m.mask.Fill(-kInf);
  all.additive_mask = m.mask.data();
  for (float o : RunAttention(api(), all, m.q.data(), m.k.data(), m.v.data())) EXPECT_EQ(Bits(o), Bits(0.0f));
}

// +inf in the additive mask follows softmax's rule: that key takes the whole row, so the output is its V row.
TEST_P(AttentionTest, PlusInfinityInTheMaskTakesTheWholeRow) {
  Rng rng;
  AttentionDesc d = MakeDesc(2, 5, 4, 6);
  Problem p(d, 0);
  p.Randomize(rng);
  p.mask.Fill(0.0f);
  p.mask[0 * 5 + 2] = kInf;  // query 0: key 2 has +inf
  p.mask[1 * 5 + 1] = kInf;  // query 1: keys 1 and 4 have +inf, and share
  p.mask[1 * 5 + 4] = kInf;
  d.additive_mask = p.mask.data();
  const std::vector<float> out = RunAttention(api(), d, p.q.data(), p.k.data(), p.v.data());
  std::vector<float> w(2 * 5);
  ASSERT_EQ(api().attention_weights(d, p.q.data(), p.k.data(), w.data()), Status::kOk);
  for (size_t c = 0; c < 6; ++c) EXPECT_EQ(out[c], p.v[2 * 6 + c]);
  EXPECT_EQ(w[2], 1.0f);
  EXPECT_EQ(w[5 + 1], 0.5f);
  EXPECT_EQ(w[5 + 4], 0.5f);
  EXPECT_EQ(w[5 + 0], 0.0f);
}

// One key: its weight is 1 and the output is its V row exactly (or zeros where causality hides it).
TEST_P(AttentionTest, SingleKeyGivesItsValue) {
  Rng rng;
  for (MaskKind mask : {MaskKind::kNone, MaskKind::kCausal}) {
    const AttentionDesc d = MakeDesc(3, 1, 7, 9, mask, 2, 1);
    Problem p(d, 0);
    p.Randomize(rng);
    const std::vector<float> out = RunAttention(api(), d, p.q.data(), p.k.data(), p.v.data());
    for (size_t i = 0; i < 3; ++i) {
      // Causal, Lq = 3 > Lk = 1: query i sees the key iff 0 <= i - 2.
      const bool sees = mask == MaskKind::kNone || i == 2;
      for (size_t h = 0; h < 2; ++h) {
        for (size_t c = 0; c < 9; ++c) EXPECT_EQ(out[(i * 2 + h) * 9 + c], sees ? p.v[c] : 0.0f) << i << "," << h;
      }
    }
  }
}

// Bottom-right causal alignment is the explicit additive mask j <= i + Lk - Lq: the causal output is within the
// bound of the reference computed with that explicit mask (the paths may round differently: with Lq < 8 and
// Lk > lanes causal takes the decode path, the explicit mask the row path).
TEST_P(AttentionTest, CausalIsBottomRightAligned) {
  Rng rng;
  for (size_t lq : {1, 2, 5, 7}) {
    const AttentionDesc d = MakeDesc(lq, 5, 3, 18, MaskKind::kCausal);
    Problem p(d, 0);
    p.Randomize(rng);
    for (size_t i = 0; i < lq; ++i) {
      for (size_t j = 0; j < 5; ++j) p.mask[i * 5 + j] = j + lq <= i + 5 ? 0.0f : -kInf;
    }
    AttentionDesc explicit_mask = d;
    explicit_mask.mask = MaskKind::kNone;
    explicit_mask.additive_mask = p.mask.data();
    const std::vector<float> out = RunAttention(api(), d, p.q.data(), p.k.data(), p.v.data());
    for (size_t i = 0; i < lq; ++i) {
      const RefAttentionRow ref = RefAttention(explicit_mask, p.q.data(), p.k.data(), p.v.data(), i, 0);
      for (size_t c = 0; c < d.value_dim; ++c) {
        EXPECT_LE(std::fabs(out[i * d.value_dim + c] - ref.out[c]), ref.bound[c]) << "Lq=" << lq << " row " << i;
      }
    }
  }
}

// The decode path (no additive mask, q_len < kAttentionTiledMinQueries) streams keys in tiles of 256 with an
// online softmax: lengths around and across tile edges, odd head widths, grouped heads, and keys that grow along
// the cache so that the running max moves in later tiles (every tile rescales the earlier sum).
TEST_P(AttentionTest, DecodeShapesAcrossKeyTiles) {
  Rng rng;
  const size_t head_layouts[][2] = {{1, 1}, {4, 2}, {3, 1}};
  size_t cases = 0;
  for (size_t lq : {1, 3, 7}) {
    // Tiles of 256 keys, scored eight at a time: tails of every length below 8, one to three tiles.
    // Beyond kAttentionKeyChunk = 512 keys the rows run in key chunks combined at the end (attention.h, the work
    // split): one chunk boundary, a chunk of one key, three chunks.
    for (size_t lk : {6, 63, 64, 65, 129, 255, 256, 257, 300, 517, 1024, 1025, 1537}) {
      const size_t dims[] = {5, 16, 64, 130};
      const size_t widths = lk > 1000 ? 2 : lk > 300 ? 3 : 4;  // the widest heads only below 300 keys (4 MiB boards)
      const size_t dk = dims[rng.Index(widths)], dv = dims[rng.Index(widths)];
      const auto& layout = head_layouts[rng.Index(3)];
      for (MaskKind mask : {MaskKind::kNone, MaskKind::kCausal}) {
        const AttentionDesc d = MakeDesc(lq, lk, dk, dv, mask, layout[0], layout[1]);
        Problem p(d, cases % 4);
        p.Randomize(rng);
        if (rng.Bernoulli(0.5)) {
          const size_t row = layout[1] * dk;
          for (size_t j = 0; j < lk; ++j) {
            for (size_t c = 0; c < row; ++c) p.k[j * row + c] *= 0.5f + 2.0f * static_cast<float>(j) / lk;
          }
        }
        CheckProblem(api(), p, "decode");
        ++cases;
      }
    }
  }
  RecordProperty("cases", std::to_string(cases));
}

// Grouped-query attention equals multi-head attention with each K/V head repeated for its query heads.
TEST_P(AttentionTest, GroupedQueryEqualsRepeatedKvHeads) {
  Rng rng;
  for (size_t kv_heads : {1, 2, 3}) {
    const AttentionDesc d = MakeDesc(4, 9, 6, 5, MaskKind::kCausal, 6, kv_heads);
    Problem p(d, 0);
    p.Randomize(rng);
    const size_t group = 6 / kv_heads;
    std::vector<float> k_full(9 * 6 * 6), v_full(9 * 6 * 5);
    for (size_t j = 0; j < 9; ++j) {
      for (size_t h = 0; h < 6; ++h) {
        for (size_t c = 0; c < 6; ++c) k_full[(j * 6 + h) * 6 + c] = p.k[(j * kv_heads + h / group) * 6 + c];
        for (size_t c = 0; c < 5; ++c) v_full[(j * 6 + h) * 5 + c] = p.v[(j * kv_heads + h / group) * 5 + c];
      }
    }
    AttentionDesc full = d;
    full.num_kv_heads = 6;
    EXPECT_EQ(BitsOf(RunAttention(api(), d, p.q.data(), p.k.data(), p.v.data())),
              BitsOf(RunAttention(api(), full, p.q.data(), k_full.data(), v_full.data())))
        << "kv_heads=" << kv_heads;
  }
}

TEST_P(AttentionTest, WorkspaceSizeAlignmentAndShortfall) {
  Rng rng;
  const AttentionDesc d = MakeDesc(3, 37, 8, 8);
  Problem p(d, 0);
  p.Randomize(rng);
  const size_t need = api().attention_workspace_size(d);
  EXPECT_EQ(need, edgeattn::AttentionWorkspaceBytes(3, 37, 8, 8));
  EXPECT_GE(need, 37 * sizeof(float));
  const std::vector<float> reference = RunAttention(api(), d, p.q.data(), p.k.data(), p.v.data());
  std::vector<unsigned char> ws(need + 64);
  std::vector<float> out(3 * 8);
  for (size_t offset = 0; offset < 64; offset += 7) {
    ASSERT_EQ(api().attention(d, p.q.data(), p.k.data(), p.v.data(), out.data(), ws.data() + offset, need),
              Status::kOk);
    EXPECT_EQ(BitsOf(out), BitsOf(reference)) << "workspace at offset " << offset;
  }
  std::fill(out.begin(), out.end(), 7.0f);
  EXPECT_EQ(api().attention(d, p.q.data(), p.k.data(), p.v.data(), out.data(), ws.data(), need - 1),
            Status::kWorkspaceTooSmall);
  EXPECT_EQ(api().attention(d, p.q.data(), p.k.data(), p.v.data(), out.data(), ws.data(), 0),
            Status::kWorkspaceTooSmall);
  EXPECT_EQ(api().attention(d, p.q.data(), p.k.data(), p.v.data(), out.data(), nullptr, need), Status::kNullPointer);
  for (float o : out) EXPECT_EQ(o, 7.0f);
}

TEST_P(AttentionTest, InvalidDescriptorsLeaveOutputsUntouched) {
  float q[64] = {}, k[64] = {}, v[64] = {}, out[64], weights[64];
  std::fill(std::begin(out), std::end(out), 7.0f);
  std::fill(std::begin(weights), std::end(weights), 7.0f);
  alignas(64) unsigned char ws[1024];
  const AttentionDesc good = MakeDesc(2, 2, 2, 2, MaskKind::kNone, 2, 1);
  ASSERT_EQ(api().attention(good, q, k, v, out, ws, sizeof(ws)), Status::kOk);
  std::fill(std::begin(out), std::end(out), 7.0f);

  struct Case {
    const char* name;
    void (*edit)(AttentionDesc&);
    Status expected;
  };
  const Case cases[] = {
      {"q_len 0", [](AttentionDesc& d) { d.q_len = 0; }, Status::kInvalidShape},
      {"kv_len 0", [](AttentionDesc& d) { d.kv_len = 0; }, Status::kInvalidShape},
      {"head_dim 0", [](AttentionDesc& d) { d.head_dim = 0; }, Status::kInvalidShape},
      {"value_dim 0", [](AttentionDesc& d) { d.value_dim = 0; }, Status::kInvalidShape},
      {"num_heads 0", [](AttentionDesc& d) { d.num_heads = 0; }, Status::kInvalidShape},
      {"q bytes overflow", [](AttentionDesc& d) { d.q_len = SIZE_MAX / 4; }, Status::kInvalidShape},
      {"k bytes overflow", [](AttentionDesc& d) { d.kv_len = SIZE_MAX / 8 + 1; }, Status::kInvalidShape},
      {"v bytes overflow", [](AttentionDesc& d) { d.value_dim = SIZE_MAX / 2; }, Status::kInvalidShape},
      {"weights overflow", [](AttentionDesc& d) { d.q_len = d.kv_len = size_t{1} << (sizeof(size_t) * 4); },
       Status::kInvalidShape},
      {"heads % kv_heads", [](AttentionDesc& d) { d.num_heads = 6, d.num_kv_heads = 4; }, Status::kInvalidArgument},
      {"kv_heads > heads", [](AttentionDesc& d) { d.num_kv_heads = 4; }, Status::kInvalidArgument},
      {"scale NaN", [](AttentionDesc& d) { d.scale = kNaN; }, Status::kInvalidArgument},
      {"scale +inf", [](AttentionDesc& d) { d.scale = kInf; }, Status::kInvalidArgument},
      {"scale -inf", [](AttentionDesc& d) { d.scale = -kInf; }, Status::kInvalidArgument},
      {"scale negative", [](AttentionDesc& d) { d.scale = -0.5f; }, Status::kInvalidArgument},
      {"mask kind", [](AttentionDesc& d) { d.mask = static_cast<MaskKind>(7); }, Status::kInvalidArgument},
  };
  for (const Case& c : cases) {
    AttentionDesc d = good;
    c.edit(d);
    EXPECT_EQ(api().attention(d, q, k, v, out, ws, sizeof(ws)), c.expected) << c.name;
    EXPECT_EQ(api().attention_weights(d, q, k, weights), c.expected) << c.name;
    EXPECT_EQ(api().attention_workspace_size(d), 0u) << c.name;
  }
  // kv_len whose arrays fit in size_t but whose workspace (kv_len floats plus alignment slack) does not: a shape
  // error for Attention, which takes a workspace; AttentionWeights has none, so its next check speaks.
  AttentionDesc d = MakeDesc(1, SIZE_MAX / sizeof(float), 1, 1);
  d.scale = -1.0f;
  EXPECT_EQ(api().attention(d, q, k, v, out, ws, sizeof(ws)), Status::kInvalidShape);
  EXPECT_EQ(api().attention_workspace_size(d), 0u);
  EXPECT_EQ(api().attention_weights(d, q, k, weights), Status::kInvalidArgument);
  for (float o : out) EXPECT_EQ(o, 7.0f);
  for (float w : weights) EXPECT_EQ(w, 7.0f);
}

TEST_P(AttentionTest, NullPointersAndOverlapsLeaveOutputsUntouched) {
  const AttentionDesc d = MakeDesc(2, 3, 4, 4);
  float buf[128] = {};
  float* q = buf;          // 8 floats
  float* k = buf + 8;      // 12
  float* v = buf + 20;     // 12
  float* mask = buf + 32;  // 6
  float out[8];
  float weights[6];
  std::fill(std::begin(out), std::end(out), 7.0f);
  std::fill(std::begin(weights), std::end(weights), 7.0f);
  alignas(64) unsigned char ws[256];
  const size_t need = api().attention_workspace_size(d);
  ASSERT_LE(need, sizeof(ws));
  EXPECT_EQ(api().attention(d, nullptr, k, v, out, ws, need), Status::kNullPointer);
  EXPECT_EQ(api().attention(d, q, nullptr, v, out, ws, need), Status::kNullPointer);
  EXPECT_EQ(api().attention(d, q, k, nullptr, out, ws, need), Status::kNullPointer);
  EXPECT_EQ(api().attention(d, q, k, v, nullptr, ws, need), Status::kNullPointer);
  EXPECT_EQ(api().attention_weights(d, nullptr, k, weights), Status::kNullPointer);
  EXPECT_EQ(api().attention_weights(d, q, nullptr, weights), Status::kNullPointer);
  EXPECT_EQ(api().attention_weights(d, q, k, nullptr), Status::kNullPointer);
  for (float o : out) EXPECT_EQ(o, 7.0f);
  for (float w : weights) EXPECT_EQ(w, 7.0f);

  // Outputs inside inputs (exact aliasing included), workspace inside inputs or outputs.
  AttentionDesc dm = d;
  dm.additive_mask = mask;
  float* out_in_buf = buf + 40;
  EXPECT_EQ(api().attention(d, q, k, v, q, ws, need), Status::kOverlap);
  EXPECT_EQ(api().attention(d, q, k, v, k + 4, ws, need), Status::kOverlap);
  EXPECT_EQ(api().attention(d, q, k, v, v + 11, ws, need), Status::kOverlap);
  EXPECT_EQ(api().attention(dm, q, k, v, mask + 5, ws, need), Status::kOverlap);
  EXPECT_EQ(api().attention(d, q, k, v, out_in_buf, out_in_buf + 4, need), Status::kOverlap);
  EXPECT_EQ(api().attention(d, q, k, v, out_in_buf, k + 2, need), Status::kOverlap);
  EXPECT_EQ(api().attention_weights(d, q, k, q + 7), Status::kOverlap);
  EXPECT_EQ(api().attention_weights(dm, q, k, mask), Status::kOverlap);
  for (size_t t = 0; t < 40; ++t) EXPECT_EQ(buf[t], 0.0f) << t;
  for (size_t t = 40; t < 128; ++t) EXPECT_EQ(buf[t], 0.0f) << t;
}

// ---------------------------------------------------------------------------------------------------------
// Compile-time shapes: the same bits as the runtime API on the same path, a constexpr workspace, static storage.

using SeedShape = edgeattn::FixedAttention<4, 4, 8, 8, 1, 1, MaskKind::kCausal>;
static SeedShape g_static_attention;  // constant-initialised: no constructor runs at startup

template <class Fixed, size_t Lq, size_t Lk, size_t Dk, size_t Dv, size_t H, size_t Hkv>
void CheckFixedMatchesRuntime(bool scalar, Rng& rng, Fixed& fixed, bool with_mask) {
  static float q[Lq][H * Dk], k[Lk][Hkv * Dk], v[Lk][Hkv * Dv], out[Lq][H * Dv], mask[Lq][Lk], w[H][Lq][Lk];
  for (auto& row : q)
    for (float& x : row) x = rng.Normal();
  for (auto& row : k)
    for (float& x : row) x = rng.Normal();
  for (auto& row : v)
    for (float& x : row) x = rng.Normal();
  for (auto& row : mask)
    for (float& x : row) x = rng.Bernoulli(0.2) ? -kInf : rng.Normal();
  const typename Fixed::Mask* m = with_mask ? &mask : nullptr;
  ASSERT_EQ(scalar ? fixed.RunScalar(q, k, v, out, m) : fixed.Run(q, k, v, out, m), Status::kOk);
  const edgeattn::AttentionDesc d = fixed.Desc(m);
  EXPECT_EQ(d.q_len, Lq);
  EXPECT_EQ(d.num_kv_heads, Hkv);
  const Api& api = scalar ? ScalarApi() : SimdApi();
  const std::vector<float> runtime = RunAttention(api, d, &q[0][0], &k[0][0], &v[0][0]);
  EXPECT_EQ(BitsOf(std::vector<float>(&out[0][0], &out[0][0] + Lq * H * Dv)), BitsOf(runtime));
  ASSERT_EQ(scalar ? fixed.AttentionWeightsScalar(q, k, w, m) : fixed.AttentionWeights(q, k, w, m), Status::kOk);
  std::vector<float> runtime_w(H * Lq * Lk);
  ASSERT_EQ(api.attention_weights(d, &q[0][0], &k[0][0], runtime_w.data()), Status::kOk);
  EXPECT_EQ(BitsOf(std::vector<float>(&w[0][0][0], &w[0][0][0] + H * Lq * Lk)), BitsOf(runtime_w));
}

TEST_P(AttentionTest, FixedShapesMatchTheRuntimeApi) {
  Rng rng;
  static_assert(SeedShape::kWorkspaceBytes == edgeattn::AttentionWorkspaceBytes(4, 4, 8, 8), "constexpr workspace");
  for (bool with_mask : {false, true}) {
    CheckFixedMatchesRuntime<SeedShape, 4, 4, 8, 8, 1, 1>(IsScalarPath(), rng, g_static_attention, with_mask);
    static edgeattn::FixedAttention<3, 7, 16, 5, 4, 2, MaskKind::kCausal> gqa(0.25f);
    CheckFixedMatchesRuntime<decltype(gqa), 3, 7, 16, 5, 4, 2>(IsScalarPath(), rng, gqa, with_mask);
    static edgeattn::FixedAttention<12, 12, 8, 8, 1, 1, MaskKind::kCausal> tiled;  // q_len >= 8: tiled path
    CheckFixedMatchesRuntime<decltype(tiled), 12, 12, 8, 8, 1, 1>(IsScalarPath(), rng, tiled, with_mask);
    static edgeattn::FixedAttention<1, 33, 64, 64, 2, 1> decode;
    CheckFixedMatchesRuntime<decltype(decode), 1, 33, 64, 64, 2, 1>(IsScalarPath(), rng, decode, with_mask);
    // Two key chunks: the workspace holds the chunk's partial row too (AttentionWorkspaceBytes' value_dim).
    static edgeattn::FixedAttention<2, 600, 8, 12, 2, 1> chunked;
    static_assert(decltype(chunked)::kWorkspaceBytes == (600 + 12) * sizeof(float) + edgeattn::kWorkspaceAlignment,
                  "chunked decode workspace");
    CheckFixedMatchesRuntime<decltype(chunked), 2, 600, 8, 12, 2, 1>(IsScalarPath(), rng, chunked, with_mask);
  }
}

TEST_P(AttentionTest, FixedShapeWithInvalidScaleReportsIt) {
  static edgeattn::FixedAttention<2, 2, 2> bad(-1.0f);
  static float q[2][2], k[2][2], v[2][2], out[2][2] = {{7, 7}, {7, 7}};
  EXPECT_EQ(IsScalarPath() ? bad.RunScalar(q, k, v, out) : bad.Run(q, k, v, out), Status::kInvalidArgument);
  EXPECT_EQ(out[1][1], 7.0f);
  // A second call still reports it (Run resolves the scale once, on a valid first call only).
  EXPECT_EQ(IsScalarPath() ? bad.RunScalar(q, k, v, out) : bad.Run(q, k, v, out), Status::kInvalidArgument);
  EXPECT_EQ(out[1][1], 7.0f);
}

// Run skips the shape checks the static_asserts made, but not the overlap check: out may alias an input of
// the same array type. Inputs and outputs are left untouched.
TEST_P(AttentionTest, FixedShapeOverlapIsReported) {
  static edgeattn::FixedAttention<2, 2, 2> attn;
  static float q[2][2] = {{1, 2}, {3, 4}}, k[2][2] = {{5, 6}, {7, 8}}, v[2][2] = {{9, 10}, {11, 12}};
  for (float(*alias)[2][2] : {&q, &k, &v}) {
    const float before = (*alias)[1][1];
    EXPECT_EQ(IsScalarPath() ? attn.RunScalar(q, k, v, *alias) : attn.Run(q, k, v, *alias), Status::kOverlap);
    EXPECT_EQ((*alias)[1][1], before);
  }
  float mask[2][2] = {{0, 0}, {0, 0}};
  float(*as_out)[2][2] = &mask;
  EXPECT_EQ(IsScalarPath() ? attn.RunScalar(q, k, v, *as_out, &mask) : attn.Run(q, k, v, *as_out, &mask),
            Status::kOverlap);
  float out[2][2] = {{7, 7}, {7, 7}};
  EXPECT_EQ(IsScalarPath() ? attn.RunScalar(q, k, v, out) : attn.Run(q, k, v, out), Status::kOk);
  EXPECT_NE(out[1][1], 7.0f);
}

}  // namespace
}  // namespace edgeattn_test

namespace edgeattn_test {
namespace {

using edgeattn::internal::AttentionPath;
using edgeattn::internal::AttentionPathForTest;
using edgeattn::internal::AttentionPathName;

// Which path each representative shape takes on each SIMD target (the scalar API always takes the row path), so
// that a change of thresholds cannot move a case to another path unnoticed (docs/performance.md, The attention
// paths).
class AttentionPathTest : public PathTest {
 protected:
  // Floats per vector of the target, 0 where it is not known at compile time (SVE, RVV).
  size_t Lanes() const {
    const Path t = Target();
#if HWY_ARCH_X86
    if (t == HWY_AVX3 || t == HWY_AVX3_DL) return 16;
    if (t == HWY_AVX2) return 8;
    if (t == HWY_SSE4 || t == HWY_SSSE3) return 4;
#endif
#if HWY_ARCH_ARM_A64 || HWY_ARCH_ARM_V7
    if (t == HWY_NEON) return 4;
#endif
    if (t == HWY_EMU128) return 4;
    if (t == HWY_SCALAR) return 1;
    return 0;
  }
  // The small paths are off on SCALAR and EMU128 (microcontrollers' stack budget).
  bool SmallOff() const { return Target() == HWY_SCALAR || Target() == HWY_EMU128; }
  bool PackedSmallOn() const {
#if HWY_ARCH_X86
    return Target() <= HWY_AVX2;
#else
    return false;
#endif
  }
  // The tiled path's shapes: the HELIUM backend runs them on its MVE row kernels (lib/backend/row_mve.h).
  AttentionPath Tiled() const {
#if EDGEATTN_MVE_FLOAT
    if (GetParam() == kBackendPath) return AttentionPath::kRow;
#endif
    return AttentionPath::kTiled;
  }
  void ExpectPath(const edgeattn::AttentionDesc& d, AttentionPath expected) {
    if (IsScalarPath()) return;  // one path: the row kernels
    const AttentionPath got = AttentionPathForTest(d);
    EXPECT_EQ(got, expected) << "Lq=" << d.q_len << " Lk=" << d.kv_len << " dk=" << d.head_dim << " takes "
                             << AttentionPathName(got) << ", expected " << AttentionPathName(expected);
  }
};
EDGEATTN_INSTANTIATE_PATHS(AttentionPathTest);

TEST(AttentionPathNameTest, NamesMatchTheFilesTestsAndBenchmarks) {
  EXPECT_STREQ(AttentionPathName(AttentionPath::kRow), "row");
  EXPECT_STREQ(AttentionPathName(AttentionPath::kTiled), "tiled");
  EXPECT_STREQ(AttentionPathName(AttentionPath::kDecode), "decode");
  EXPECT_STREQ(AttentionPathName(AttentionPath::kSmall), "small");
  EXPECT_STREQ(AttentionPathName(AttentionPath::kPackedSmall), "packed_small");
}

TEST_P(AttentionPathTest, TiledForLongPrefill) {
  ExpectPath(MakeDesc(256, 256, 64, 64), Tiled());
  ExpectPath(MakeDesc(256, 256, 64, 64, MaskKind::kCausal, 8, 2), Tiled());
  ExpectPath(MakeDesc(edgeattn::kAttentionTiledMinQueries, 100, 16, 16), Tiled());
}

TEST_P(AttentionPathTest, DecodeForFewQueriesAgainstALongCache) {
  ExpectPath(MakeDesc(1, 4096, 128, 128), AttentionPath::kDecode);
  ExpectPath(MakeDesc(1, 4096, 128, 128, MaskKind::kCausal, 32, 8), AttentionPath::kDecode);
  ExpectPath(MakeDesc(edgeattn::kAttentionTiledMinQueries - 1, 300, 64, 64), AttentionPath::kDecode);
}

TEST_P(AttentionPathTest, DecodeForManyQueriesWhenKeyCountsAreNotExactInFloat) {
  ExpectPath(MakeDesc(16, size_t{1} << 24, 1, 1), AttentionPath::kDecode);
}

TEST_P(AttentionPathTest, RowForAnAdditiveMask) {
  const float bias[1] = {0.0f};  // only its address is used: the hook reads no array
  for (size_t q_len : {1, 16, 256}) {
    AttentionDesc d = MakeDesc(q_len, 100, 64, 64);
    d.additive_mask = bias;
    ExpectPath(d, AttentionPath::kRow);
  }
}

TEST_P(AttentionPathTest, SmallOrPackedSmallForFewKeys) {
  const float bias[1] = {0.0f};
  AttentionDesc masked = MakeDesc(4, 4, 8, 8);
  masked.additive_mask = bias;
  if (SmallOff()) {
    ExpectPath(MakeDesc(4, 4, 8, 8), AttentionPath::kDecode);
    ExpectPath(MakeDesc(16, 4, 8, 8), Tiled());
    ExpectPath(masked, AttentionPath::kRow);
    return;
  }
  ExpectPath(MakeDesc(4, 4, 8, 8), PackedSmallOn() ? AttentionPath::kPackedSmall : AttentionPath::kSmall);
  ExpectPath(MakeDesc(16, 2, 8, 8, MaskKind::kNone, 2),
             PackedSmallOn() ? AttentionPath::kPackedSmall : AttentionPath::kSmall);
  ExpectPath(masked, AttentionPath::kSmall);  // packed_small takes no additive mask
}

// packed_small's group max assumes every row sees a key: causal calls with kv_len < q_len go to the small path.
TEST_P(AttentionPathTest, SmallWhenACausalRowSeesNoKey) {
  if (SmallOff()) return ExpectPath(MakeDesc(5, 3, 4, 4, MaskKind::kCausal), AttentionPath::kDecode);
  ExpectPath(MakeDesc(5, 3, 4, 4, MaskKind::kCausal), AttentionPath::kSmall);
}

TEST_P(AttentionPathTest, SmallUpToOneVectorOfKeys) {
  const size_t lanes = Lanes();
  if (lanes == 0 || SmallOff()) GTEST_SKIP() << "vector length not fixed at compile time, or no small path";
  ExpectPath(MakeDesc(3, lanes, 256 / lanes, 8), AttentionPath::kSmall);
  ExpectPath(MakeDesc(3, lanes + 1, 8, 8), AttentionPath::kDecode);            // one key more than a vector
  ExpectPath(MakeDesc(3, lanes, 256 / lanes + 1, 8), AttentionPath::kDecode);  // K^T too wide for the stack
  ExpectPath(MakeDesc(20, lanes + 1, 8, 8), Tiled());
}

// The small and packed_small paths finish a row (packed_small: a block of rows) whose scores are NaN or +inf inside
// the path (with the row path's kernels) instead of handing the whole call to another path: the NaN row is NaN,
// the +inf row shares its +inf keys, and every other row (block) keeps the bits it has in the same call without
// the non-finite scores.
TEST_P(AttentionPathTest, SmallAndPackedSmallKeepNonFiniteScoresInTheirRows) {
  Rng rng;
  for (size_t kv_len : {2, 4}) {
    for (size_t q_len : {3, 4, 9}) {
      for (bool with_mask : {false, true}) {
        AttentionDesc d = MakeDesc(q_len, kv_len, 6, 5);
        Problem p(d, 0);
        p.Randomize(rng);
        p.mask.Fill(0.0f);
        if (with_mask) d.additive_mask = p.mask.data();
        // packed_small finishes a whole block of lanes / 4 rows with the row path's kernels
        size_t block = 1;
        if (!IsScalarPath()) {
          const AttentionPath path = AttentionPathForTest(d);
          if (path != AttentionPath::kSmall && path != AttentionPath::kPackedSmall) continue;
          if (path == AttentionPath::kPackedSmall) block = Lanes() / 4;
          if (block == 0) continue;
        }
        // Keys 0 and kv_len - 1 of 1e20: with the query of 1e20 their scores overflow to +inf.
        std::vector<float> k(p.k.data(), p.k.data() + p.k.size());
        for (size_t c = 0; c < d.head_dim; ++c) k[c] = k[(kv_len - 1) * d.head_dim + c] = 1e20f;
        const std::vector<float> clean = RunAttention(api(), d, p.q.data(), k.data(), p.v.data());
        const size_t inf_query = 1, nan_query = q_len - 1;
        std::vector<float> q(p.q.data(), p.q.data() + p.q.size());
        for (size_t c = 0; c < d.head_dim; ++c) q[inf_query * d.head_dim + c] = 1e20f;
        q[nan_query * d.head_dim + 2] = kNaN;
        const std::vector<float> out = RunAttention(api(), d, q.data(), k.data(), p.v.data());
        for (size_t c = 0; c < d.value_dim; ++c) {
          const float expected = 0.5f * p.v[c] + 0.5f * p.v[(kv_len - 1) * d.value_dim + c];
          EXPECT_NEAR(out[inf_query * d.value_dim + c], expected, 1e-6f * (std::fabs(expected) + 1)) << c;
          EXPECT_TRUE(std::isnan(out[nan_query * d.value_dim + c])) << c;
        }
        // The other rows' scores are finite (at most about 1e21) and their inputs unchanged.
        for (size_t i = 0; i < q_len; ++i) {
          if (i / block == inf_query / block || i / block == nan_query / block) continue;
          for (size_t c = 0; c < d.value_dim; ++c) {
            EXPECT_EQ(Bits(out[i * d.value_dim + c]), Bits(clean[i * d.value_dim + c]))
                << "Lq=" << q_len << " Lk=" << kv_len << " mask " << with_mask << " row " << i << " col " << c;
          }
        }
      }
    }
  }
}

// The weights array (num_heads x q_len x kv_len floats) limits AttentionWeights' shapes only: Attention never
// writes weights, so a shape whose weights count overflows size_t while its own arrays fit is valid for it.
TEST_P(AttentionTest, WeightsCountLimitsOnlyAttentionWeights) {
  // sizeof, not SIZE_MAX >> 32: a shift by the full width is undefined, and clang-14 folds it to nonzero.
  if (sizeof(size_t) < 8) GTEST_SKIP() << "needs 64-bit size_t";
  // 16 x 2^30 x 2^30 weights: 2^66 bytes; q, out 2^36 bytes, k, v and the workspace 2^32.
  const size_t n = size_t{1} << 30;
  const AttentionDesc d = MakeDesc(n, n, 1, 1, MaskKind::kNone, 16, 1);
  EXPECT_EQ(api().attention_workspace_size(d), edgeattn::AttentionWorkspaceBytes(n, n, 1, 1));
  EXPECT_NE(api().attention_workspace_size(d), 0u);
  float q = 0, k = 0, v = 0, out = 7, weights = 7;
  unsigned char ws[64];
  // The workspace is short: reported after the shape checks, before any array is read.
  EXPECT_EQ(api().attention(d, &q, &k, &v, &out, ws, sizeof ws), Status::kWorkspaceTooSmall);
  EXPECT_EQ(api().attention_weights(d, &q, &k, &weights), Status::kInvalidShape);
  EXPECT_EQ(out, 7.0f);
  EXPECT_EQ(weights, 7.0f);
}

}  // namespace
}  // namespace edgeattn_test
