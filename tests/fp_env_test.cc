// SPDX-License-Identifier: Apache-2.0
// Every kernel in the caller's floating-point environment: the four IEEE rounding directions, flush-to-zero
// and denormals-are-zero, set in the control register around each call (x86 MXCSR; AArch64 FPCR; ARMv7-A and
// Cortex-M FPSCR), on every path. Special values must come out exactly as the headers document; the error
// bounds must hold as the headers state them for that environment; the control register must read the same
// after each call as before it (the library neither changes nor "restores" it).
//
// The file is compiled with -frounding-math, and the register writes are volatile asm with a memory clobber,
// so no floating-point operation of the test moves across a mode change. References are computed after the
// default environment is back.
#include <float.h>
#include <stdint.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "tests/fp_env.h"
#include "tests/reference.h"
#include "tests/test_util.h"

namespace edgeattn_test {
namespace {

std::vector<FpEnv> Environments() {
  std::vector<FpEnv> envs;
  if (!kHasFpControl) return {FpEnv{kToNearest, false, false}};
  for (int r = 0; r < 4; ++r) {
    const Rounding rounding = static_cast<Rounding>(r);
    envs.push_back({rounding, false, false});
    envs.push_back({rounding, true, false});
    if (kHasDenormalsAreZero) {
      envs.push_back({rounding, false, true});
      envs.push_back({rounding, true, true});
    }
  }
  return envs;
}

// Runs fn() with env set, checks that the call left the control register as it found it, restores the
// default environment.
template <class Fn>
void RunIn(const FpEnv& env, const char* what, Fn fn) {
  const uint64_t saved = ReadControl();
  const uint64_t wanted = ControlFor(saved, env);
  WriteControl(wanted);
  const uint64_t before = ReadControl();
  fn();
  const uint64_t after = ReadControl();
  WriteControl(saved);
  EXPECT_EQ(before, wanted) << "the environment " << env.Name() << " could not be set";
  EXPECT_EQ(after, before) << what << " changed the FP control register under " << env.Name();
}

// The bounds the headers state for an environment: directed rounding doubles the unit roundoff.
double UnitRoundoff(const FpEnv& env) { return env.Directed() ? 0x1p-23 : 0x1p-24; }
double ExpUlpBound(const FpEnv&) { return 2.0; }                                 // exp.h: the same in every environment
double SoftmaxUlpBound(const FpEnv& env) { return env.Directed() ? 8.0 : 4.0; }  // softmax.h

// Sample counts: dense on native runs, lighter under emulation and on boards.
#if EDGEATTN_TEST_SMALL_MEMORY
constexpr size_t kExpSamples = 1 << 10;
constexpr size_t kRows = 16;
#else
constexpr size_t kExpSamples = 1 << 14;
constexpr size_t kRows = 256;
#endif

class FpEnvTest : public PathTest {};

bool IsPositiveZero(float f) { return Bits(f) == 0u; }

// ---------------------------------------------------------------------------------------------------------
// exp
TEST_P(FpEnvTest, ExpSpecialValuesAreExactInEveryEnvironment) {
  Rng rng;
  struct Case {
    float x;
    enum { kInf, kZero, kNaN, kOne, kTiny } want;
  };
  const Case cases[] = {
      {kInf, Case::kInf},     {89.0f, Case::kInf},    {88.72284f, Case::kInf}, {1e30f, Case::kInf},
      {FLT_MAX, Case::kInf},  {-kInf, Case::kZero},   {-FLT_MAX, Case::kZero}, {-1e30f, Case::kZero},
      {-200.0f, Case::kZero}, {-104.5f, Case::kZero}, {kNaN, Case::kNaN},      {-kNaN, Case::kNaN},
      {0.0f, Case::kOne},     {-0.0f, Case::kOne},    {-90.0f, Case::kTiny},   {-100.0f, Case::kTiny},
      {-103.9f, Case::kTiny}, {-87.5f, Case::kTiny},
  };
  for (const FpEnv& env : Environments()) {
    for (size_t n : {size_t{1}, size_t{5}, size_t{16}, size_t{33}, size_t{kMaxTailTestLength}}) {
      for (const Case& c : cases) {
        // The special value among in-range values, at a random index: it sends its vectors down the general
        // path while the rest of the array takes the fast one.
        std::vector<float> in(n), out(n, 7.0f);
        for (float& x : in) x = rng.Uniform(-80.0f, 40.0f);
        const size_t at = rng.Index(n);
        in[at] = c.x;
        RunIn(env, "Exp", [&] { EXPECT_EQ(api().exp(in.data(), out.data(), n), Status::kOk); });
        const float y = out[at];
        const std::string where = "exp(" + std::to_string(c.x) + ") = " + std::to_string(y) + " under " + env.Name();
        switch (c.want) {
          case Case::kInf:
            EXPECT_EQ(Bits(y), Bits(kInf)) << where;
            break;
          case Case::kZero:
            EXPECT_TRUE(IsPositiveZero(y)) << where;
            break;
          case Case::kNaN:
            EXPECT_TRUE(std::isnan(y)) << where;
            break;
          case Case::kOne:
            EXPECT_EQ(y, 1.0f) << where;
            break;
          case Case::kTiny:  // below FLT_MIN: +0 or the positive subnormal, never negative, never above FLT_MIN
            EXPECT_TRUE(IsPositiveZero(y) || (y > 0.0f && y <= FLT_MIN)) << where;
            if (env.flush_to_zero) EXPECT_TRUE(IsPositiveZero(y)) << where;
            break;
        }
      }
    }
  }
}

// Dense random samples of the domain where e^x is a normal float, three ways: the fast range [-87, 43] (whole
// arrays of it take the fast path), the whole normal range (mostly the general path), and short tails.
TEST_P(FpEnvTest, ExpErrorBoundHoldsInEveryEnvironment) {
  Rng rng;
  for (const FpEnv& env : Environments()) {
    double worst = 0;
    float worst_x = 0;
    for (int kind = 0; kind < 3; ++kind) {
      const float lo = kind == 0 ? -87.0f : -87.33f;
      const float hi = kind == 0 ? 43.0f : 88.72f;
      const size_t n = kind == 2 ? 1 + rng.Index(kMaxTailTestLength) : kExpSamples;
      const size_t repeats = kind == 2 ? 64 : 1;
      for (size_t rep = 0; rep < repeats; ++rep) {
        std::vector<float> in(n), out(n);
        for (float& x : in) x = rng.Uniform(lo, hi);
        // The domain's edges and the points where round(x log2 e) changes, where |r| is largest.
        in[0] = hi;
        if (n > 2) in[1] = lo;
        if (n > 3) in[2] = static_cast<float>(std::log(2.0) * (static_cast<double>(rng.Index(200)) - 99.5));
        RunIn(env, "Exp", [&] { EXPECT_EQ(api().exp(in.data(), out.data(), n), Status::kOk); });
        for (size_t i = 0; i < n; ++i) {
          const double exact = std::exp(static_cast<double>(in[i]));
          if (exact < static_cast<double>(FLT_MIN) || exact > static_cast<double>(FLT_MAX)) continue;
          const double e = UlpError(out[i], exact);
          if (!(e <= worst)) {
            worst = e;
            worst_x = in[i];
          }
        }
      }
    }
    std::printf("fp-env exp %-26s max %.3f ULP (at x = %.9g)\n", env.Name().c_str(), worst,
                static_cast<double>(worst_x));
    RecordProperty("exp_max_ulp_" + env.Name(), std::to_string(worst));
    EXPECT_LE(worst, ExpUlpBound(env)) << env.Name() << " at x = " << worst_x;
  }
}

// ---------------------------------------------------------------------------------------------------------
// softmax
TEST_P(FpEnvTest, SoftmaxSpecialRowsAreExactInEveryEnvironment) {
  Rng rng;
  for (const FpEnv& env : Environments()) {
    for (size_t n : {size_t{1}, size_t{4}, size_t{16}, size_t{21}, size_t{kMaxTailTestLength}}) {
      const std::string where = " (n = " + std::to_string(n) + ", " + env.Name() + ")";
      std::vector<float> in(n), out(n);
      auto run = [&] {
        RunIn(env, "Softmax", [&] { EXPECT_EQ(api().softmax(in.data(), out.data(), 1, n), Status::kOk); });
      };

      // Fully masked: all zeros.
      std::fill(in.begin(), in.end(), -kInf);
      run();
      for (float y : out) EXPECT_TRUE(IsPositiveZero(y)) << "all -inf" << where;

      // One NaN: all NaN.
      for (float& x : in) x = rng.Normal(3.0f);
      in[rng.Index(n)] = kNaN;
      run();
      for (float y : out) EXPECT_TRUE(std::isnan(y)) << "NaN row" << where;

      // Huge logits: the exact one-hot answer; -inf entries exactly 0.
      for (float& x : in) x = rng.Uniform(-1e4f, 1e4f);
      const size_t top = rng.Index(n);
      for (size_t j = 0; j < n; ++j) {
        if (j != top && in[j] > -100.0f) in[j] = -kInf;
      }
      in[top] = n > 2 ? 1e4f : FLT_MAX;
      if (n > 3) in[(top + 1) % n] = -FLT_MAX;
      run();
      for (size_t j = 0; j < n; ++j) {
        if (j == top) {
          EXPECT_EQ(out[j], 1.0f) << "one-hot" << where;
        } else {
          EXPECT_TRUE(IsPositiveZero(out[j])) << "one-hot, entry " << j << " = " << out[j] << where;
        }
      }

      // +inf entries share the row; the rest is 0. Equal entries: exactly 1/n for n a power of two.
      for (float& x : in) x = rng.Normal(3.0f);
      in[0] = kInf;
      in[n - 1] = kInf;
      run();
      const float share = n == 1 ? 1.0f : 0.5f;
      for (size_t j = 0; j < n; ++j) {
        if (j == 0 || j == n - 1) {
          EXPECT_EQ(out[j], share) << "+inf" << where;
        } else {
          EXPECT_TRUE(IsPositiveZero(out[j])) << "+inf row, entry " << j << where;
        }
      }
      if ((n & (n - 1)) == 0) {
        std::fill(in.begin(), in.end(), rng.Normal(100.0f));
        run();
        for (float y : out) EXPECT_EQ(y, 1.0f / static_cast<float>(n)) << "equal entries" << where;
      }
    }
  }
}

TEST_P(FpEnvTest, SoftmaxErrorBoundHoldsInEveryEnvironment) {
  Rng rng;
  for (const FpEnv& env : Environments()) {
    double worst = 0;
    for (size_t r = 0; r < kRows; ++r) {
      const size_t n = 1 + rng.Index(r % 4 == 0 ? 300 : kMaxTailTestLength);
      std::vector<float> in(n), out(n);
      const int kind = static_cast<int>(r % 3);
      for (float& x : in) x = kind == 0 ? rng.Normal(1.0f) : kind == 1 ? rng.Uniform(-30.0f, 30.0f) : rng.Normal(8.0f);
      RunIn(env, "Softmax", [&] { EXPECT_EQ(api().softmax(in.data(), out.data(), 1, n), Status::kOk); });
      const std::vector<double> ref = RefSoftmaxRow(in.data(), n);
      for (size_t j = 0; j < n; ++j) {
        const double exact = ref[j];
        if (exact >= static_cast<double>(FLT_MIN)) {
          worst = std::max(worst, UlpError(out[j], exact));
        } else {
          EXPECT_LE(std::fabs(static_cast<double>(out[j]) - exact), static_cast<double>(FLT_MIN)) << env.Name();
          EXPECT_GE(out[j], 0.0f);
        }
      }
    }
    std::printf("fp-env softmax %-22s max %.3f ULP\n", env.Name().c_str(), worst);
    RecordProperty("softmax_max_ulp_" + env.Name(), std::to_string(worst));
    EXPECT_LE(worst, SoftmaxUlpBound(env)) << env.Name();
  }
}

// ---------------------------------------------------------------------------------------------------------
// attention: shapes that take each SIMD path (attention.h): small/packed, decode, tiled, and the row path
// (additive mask).
struct Shape {
  size_t q_len, kv_len, head_dim;
  bool additive_mask;
};
// The last: a decode shape in three key chunks (attention.h, the work split), whose single call runs the chunks and
// their combine in every environment.
const Shape kShapes[] = {{2, 3, 8, false},    {3, 12, 8, false}, {2, 40, 16, false},
                         {20, 37, 16, false}, {5, 20, 8, true},  {2, 1100, 8, false}};

struct AttentionCase {
  edgeattn::AttentionDesc desc;
  std::vector<float> q, k, v, mask;
  explicit AttentionCase(const Shape& s) : desc(MakeDesc(s.q_len, s.kv_len, s.head_dim, s.head_dim)) {
    q.assign(s.q_len * s.head_dim, 0.0f);
    k.assign(s.kv_len * s.head_dim, 0.0f);
    v.assign(s.kv_len * s.head_dim, 0.0f);
    if (s.additive_mask) {
      mask.assign(s.q_len * s.kv_len, 0.0f);
      desc.additive_mask = mask.data();
    }
  }
};

TEST_P(FpEnvTest, AttentionSpecialRowsAreExactInEveryEnvironment) {
  Rng rng;
  for (const FpEnv& env : Environments()) {
    for (const Shape& s : kShapes) {
      AttentionCase c(s);
      const size_t d = s.head_dim;
      for (float& x : c.v) x = rng.Normal();
      for (float& x : c.q) x = rng.Normal();
      for (float& x : c.k) x = rng.Normal();
      // Row 0 is one-hot on key `hot`: its score is 1e4 above the others (which stay within a few units).
      const size_t hot = rng.Index(s.kv_len);
      c.desc.scale = 1.0f;
      for (size_t t = 0; t < d; ++t) c.q[t] = t == 0 ? 100.0f : 0.0f;
      for (size_t j = 0; j < s.kv_len; ++j) c.k[j * d] = j == hot ? 100.0f : 0.0f;
      // Row 1 has a NaN query element: that row is NaN.
      c.q[1 * d + rng.Index(d)] = kNaN;
      // With a mask: row 2 sees no key (all zeros), row 3 has one +inf score among others (the +inf key gets
      // weight 1).
      size_t inf_key = 0;
      if (s.additive_mask) {
        for (size_t j = 0; j < s.kv_len; ++j) c.mask[2 * s.kv_len + j] = -kInf;
        inf_key = rng.Index(s.kv_len);
        c.mask[3 * s.kv_len + inf_key] = kInf;
      }
      const std::string where = " (" + std::to_string(s.q_len) + "x" + std::to_string(s.kv_len) + "x" +
                                std::to_string(d) + (s.additive_mask ? " masked" : "") + ", " + env.Name() + ")";
      std::vector<float> out(s.q_len * d, 7.0f), weights(s.q_len * s.kv_len, 7.0f);
      std::vector<float> work(api().attention_workspace_size(c.desc) / sizeof(float) + 1);
      RunIn(env, "Attention", [&] {
        EXPECT_EQ(api().attention(c.desc, c.q.data(), c.k.data(), c.v.data(), out.data(), work.data(),
                                  work.size() * sizeof(float)),
                  Status::kOk);
      });
      RunIn(env, "AttentionWeights",
            [&] { EXPECT_EQ(api().attention_weights(c.desc, c.q.data(), c.k.data(), weights.data()), Status::kOk); });
      for (size_t t = 0; t < d; ++t) EXPECT_EQ(Bits(out[t]), Bits(c.v[hot * d + t])) << "one-hot row" << where;
      for (size_t j = 0; j < s.kv_len; ++j) {
        EXPECT_EQ(Bits(weights[j]), Bits(j == hot ? 1.0f : 0.0f)) << "one-hot weights, key " << j << where;
      }
      for (size_t t = 0; t < d; ++t) EXPECT_TRUE(std::isnan(out[d + t])) << "NaN row" << where;
      for (size_t j = 0; j < s.kv_len; ++j) EXPECT_TRUE(std::isnan(weights[s.kv_len + j])) << "NaN weights" << where;
      if (s.additive_mask) {
        for (size_t t = 0; t < d; ++t) EXPECT_TRUE(IsPositiveZero(out[2 * d + t])) << "masked row" << where;
        for (size_t j = 0; j < s.kv_len; ++j) {
          EXPECT_TRUE(IsPositiveZero(weights[2 * s.kv_len + j])) << "masked weights" << where;
          EXPECT_EQ(Bits(weights[3 * s.kv_len + j]), Bits(j == inf_key ? 1.0f : 0.0f)) << "+inf weights" << where;
        }
        for (size_t t = 0; t < d; ++t)
          EXPECT_EQ(Bits(out[3 * d + t]), Bits(c.v[inf_key * d + t])) << "+inf row" << where;
      }
    }
  }
}

TEST_P(FpEnvTest, AttentionErrorBoundHoldsInEveryEnvironment) {
  Rng rng;
  for (const FpEnv& env : Environments()) {
    // attention.h: the bound with u = 2^-23 and eta = 2^-20 under a directed mode (twice the default one) on
    // every path: the SIMD path runs such calls on the row path, whose exp steps its reduction to nearest.
    const double factor = env.Directed() ? 2.0 : 1.0;
    double worst = 0;  // error / bound
    for (const Shape& s : kShapes) {
      AttentionCase c(s);
      c.desc.mask = s.additive_mask ? edgeattn::MaskKind::kNone : edgeattn::MaskKind::kCausal;
      for (float& x : c.q) x = rng.Normal();
      for (float& x : c.k) x = rng.Normal();
      for (float& x : c.v) x = rng.Normal();
      for (float& x : c.mask) x = rng.Bernoulli(0.2) ? -kInf : rng.Normal();
      std::vector<float> out(s.q_len * s.head_dim), weights(s.q_len * s.kv_len);
      std::vector<float> work(api().attention_workspace_size(c.desc) / sizeof(float) + 1);
      RunIn(env, "Attention", [&] {
        EXPECT_EQ(api().attention(c.desc, c.q.data(), c.k.data(), c.v.data(), out.data(), work.data(),
                                  work.size() * sizeof(float)),
                  Status::kOk);
      });
      RunIn(env, "AttentionWeights",
            [&] { EXPECT_EQ(api().attention_weights(c.desc, c.q.data(), c.k.data(), weights.data()), Status::kOk); });
      for (size_t i = 0; i < s.q_len; ++i) {
        const RefAttentionRow ref = RefAttention(c.desc, c.q.data(), c.k.data(), c.v.data(), i, 0);
        for (size_t t = 0; t < s.head_dim; ++t) {
          const double err = std::fabs(static_cast<double>(out[i * s.head_dim + t]) - ref.out[t]);
          const double bound = factor * ref.bound[t];
          worst = std::max(worst, bound > 0 ? err / bound : (err > 0 ? 1e9 : 0.0));
        }
        // Weights: softmax of the computed scores, whose error sigma moves each weight by up to 2 sigma.
        for (size_t j = 0; j < s.kv_len; ++j) {
          const double w = ref.weights[j];
          const double err = std::fabs(static_cast<double>(weights[i * s.kv_len + j]) - w);
          const double bound = factor * (2 * ref.sigma * w + kSoftmaxEta * w) + static_cast<double>(FLT_MIN);
          EXPECT_LE(err, bound) << "weights row " << i << " key " << j << " under " << env.Name();
        }
      }
    }
    std::printf("fp-env attention %-20s max error / bound %.3f\n", env.Name().c_str(), worst);
    EXPECT_LE(worst, 1.0) << env.Name();
  }
}

// The work split in every environment: the parts and finish, run in the environment of the single call, give its
// bits (special rows included: the one-hot, NaN and +inf rows above), for Attention and for AttentionCached (an F32
// cache, a decode step over three chunks and a prefill over row blocks).
TEST_P(FpEnvTest, SplitGivesTheSingleCallsBitsInEveryEnvironment) {
  if (IsScalarPath()) GTEST_SKIP() << "the work split runs the dispatched SIMD path";
  Rng rng;
  const Shape shapes[] = {{2, 1100, 8, false}, {40, 37, 16, false}, {5, 20, 8, true}, {3, 12, 8, false}};
  for (const FpEnv& env : Environments()) {
    for (const Shape& s : shapes) {
      AttentionCase c(s);
      c.desc.mask = edgeattn::MaskKind::kCausal;
      for (float& x : c.q) x = rng.Normal();
      for (float& x : c.k) x = rng.Normal();
      for (float& x : c.v) x = rng.Normal();
      for (float& x : c.mask) x = rng.Bernoulli(0.2) ? -kInf : rng.Normal();
      c.q[rng.Index(c.q.size())] = rng.Bernoulli(0.5) ? kNaN : kInf;  // one special row
      const size_t out_size = s.q_len * s.head_dim;
      std::vector<float> single(out_size, 7.0f), split(out_size, 5.0f);
      std::vector<float> work(edgeattn::AttentionWorkspaceSize(c.desc) / sizeof(float) + 1);
      std::vector<float> shared(edgeattn::AttentionSharedSize(c.desc) / sizeof(float) + 1);
      const size_t parts = edgeattn::AttentionPartCount(c.desc);
      RunIn(env, "Attention split", [&] {
        EXPECT_EQ(edgeattn::Attention(c.desc, c.q.data(), c.k.data(), c.v.data(), single.data(), work.data(),
                                      work.size() * sizeof(float)),
                  Status::kOk);
        for (size_t part = parts; part-- > 0;) {
          EXPECT_EQ(
              edgeattn::AttentionPart(c.desc, part, c.q.data(), c.k.data(), c.v.data(), split.data(), shared.data(),
                                      shared.size() * sizeof(float), work.data(), work.size() * sizeof(float)),
              Status::kOk);
        }
        EXPECT_EQ(edgeattn::AttentionFinish(c.desc, shared.data(), shared.size() * sizeof(float), split.data()),
                  Status::kOk);
      });
      for (size_t t = 0; t < out_size; ++t) {
        ASSERT_EQ(Bits(split[t]), Bits(single[t]))
            << s.q_len << "x" << s.kv_len << " element " << t << " under " << env.Name();
      }
    }
    // The cached split: an F32 cache of 1100 positions, a decode step of 2 queries (3 chunks) and 9 (row blocks).
    edgeattn::KvCacheDesc cd;
    cd.type = edgeattn::KvType::kF32;
    cd.num_kv_heads = 1;
    cd.head_dim = 8;
    cd.value_dim = 8;
    cd.capacity = 1100;
    cd.window = 0;
    std::vector<unsigned char> storage(edgeattn::KvCacheStorageSize(cd));
    edgeattn::KvCache cache;
    ASSERT_EQ(cache.Init(cd, storage.data(), storage.size()), Status::kOk);
    std::vector<float> k(1100 * 8), v(1100 * 8);
    for (float& x : k) x = rng.Normal();
    for (float& x : v) x = rng.Normal();
    k[rng.Index(k.size())] = kInf;
    ASSERT_EQ(cache.Append(k.data(), v.data(), 1100), Status::kOk);
    for (size_t q_len : {2, 9}) {
      edgeattn::AttentionDesc d = MakeDesc(q_len, 0, 8, 8, edgeattn::MaskKind::kCausal, 2, 1);
      std::vector<float> q(q_len * 2 * 8), single(q_len * 2 * 8, 7.0f), split(q_len * 2 * 8, 5.0f);
      for (float& x : q) x = rng.Normal();
      std::vector<float> work(edgeattn::AttentionCachedWorkspaceSize(d, cache) / sizeof(float) + 1);
      std::vector<float> shared(edgeattn::AttentionCachedSharedSize(d, cache) / sizeof(float) + 1);
      const size_t parts = edgeattn::AttentionCachedPartCount(d, cache);
      RunIn(env, "AttentionCached split", [&] {
        EXPECT_EQ(edgeattn::AttentionCached(d, q.data(), cache, single.data(), work.data(), work.size() * 4),
                  Status::kOk);
        for (size_t part = 0; part < parts; ++part) {
          EXPECT_EQ(edgeattn::AttentionCachedPart(d, part, q.data(), cache, split.data(), shared.data(),
                                                  shared.size() * 4, work.data(), work.size() * 4),
                    Status::kOk);
        }
        EXPECT_EQ(edgeattn::AttentionCachedFinish(d, cache, shared.data(), shared.size() * 4, split.data()),
                  Status::kOk);
      });
      for (size_t t = 0; t < single.size(); ++t) {
        ASSERT_EQ(Bits(split[t]), Bits(single[t]))
            << "cached q_len " << q_len << " element " << t << " under " << env.Name();
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// dot, linear, positional encoding
double GammaBound(size_t n, double u, double abs_sum, const FpEnv& env) {
  const double nu = static_cast<double>(n) * u;
  // dot.h: gradual underflow adds n * 2^-149; flushing to zero n * 2^-126.
  const double underflow = env.flush_to_zero || env.denormals_are_zero ? 0x1p-126 : 0x1p-149;
  return nu / (1 - nu) * abs_sum + static_cast<double>(n) * underflow;
}

TEST_P(FpEnvTest, DotAndLinearInEveryEnvironment) {
  Rng rng;
  for (const FpEnv& env : Environments()) {
    const double u = UnitRoundoff(env);
    for (size_t n : {size_t{1}, size_t{7}, size_t{16}, size_t{kMaxTailTestLength}, size_t{300}}) {
      std::vector<float> a(n), b(n);
      for (float& x : a) x = rng.Normal();
      for (float& x : b) x = rng.Normal();
      float result = 0;
      RunIn(env, "Dot", [&] { EXPECT_EQ(api().dot(a.data(), b.data(), n, &result), Status::kOk); });
      double exact = 0, abs_sum = 0;
      for (size_t i = 0; i < n; ++i) {
        exact += static_cast<double>(a[i]) * static_cast<double>(b[i]);
        abs_sum += std::fabs(static_cast<double>(a[i]) * static_cast<double>(b[i]));
      }
      EXPECT_LE(std::fabs(static_cast<double>(result) - exact), GammaBound(n, u, abs_sum, env))
          << "dot n = " << n << " under " << env.Name();
      // Special values propagate: +inf times a positive number is +inf, a NaN is NaN.
      a[rng.Index(n)] = kInf;
      for (float& x : b) x = std::fabs(x) + 1.0f;
      for (float& x : a) x = std::isinf(x) ? x : std::fabs(x);
      RunIn(env, "Dot", [&] { EXPECT_EQ(api().dot(a.data(), b.data(), n, &result), Status::kOk); });
      EXPECT_EQ(Bits(result), Bits(kInf)) << "dot with +inf, n = " << n << " under " << env.Name();
      a[rng.Index(n)] = kNaN;
      RunIn(env, "Dot", [&] { EXPECT_EQ(api().dot(a.data(), b.data(), n, &result), Status::kOk); });
      EXPECT_TRUE(std::isnan(result)) << "dot with NaN under " << env.Name();
    }
    // linear: rows x in -> out, bound with in_features + 1 terms (the bias).
    const size_t rows = 3, in_f = 37, out_f = 21;
    std::vector<float> x(rows * in_f), w(in_f * out_f), bias(out_f), y(rows * out_f);
    for (float& v : x) v = rng.Normal();
    for (float& v : w) v = rng.Normal();
    for (float& v : bias) v = rng.Normal();
    x[5] = kNaN;  // row 0 all NaN
    RunIn(env, "Linear",
          [&] { EXPECT_EQ(api().linear(x.data(), rows, in_f, w.data(), bias.data(), out_f, y.data()), Status::kOk); });
    for (size_t r = 0; r < rows; ++r) {
      for (size_t o = 0; o < out_f; ++o) {
        double exact = bias[o], abs_sum = std::fabs(static_cast<double>(bias[o]));
        for (size_t i = 0; i < in_f; ++i) {
          const double p = static_cast<double>(x[r * in_f + i]) * static_cast<double>(w[i * out_f + o]);
          exact += p;
          abs_sum += std::fabs(p);
        }
        if (r == 0) {
          EXPECT_TRUE(std::isnan(y[o])) << "linear NaN row under " << env.Name();
        } else {
          EXPECT_LE(std::fabs(static_cast<double>(y[r * out_f + o]) - exact), GammaBound(in_f + 1, u, abs_sum, env))
              << "linear row " << r << " col " << o << " under " << env.Name();
        }
      }
    }
  }
}

TEST_P(FpEnvTest, PositionalEncodingInEveryEnvironment) {
  Rng rng;
  for (const FpEnv& env : Environments()) {
    double worst = 0;  // error / bound
    for (size_t first : {size_t{0}, size_t{1000}, size_t{(1u << 24) - 40}}) {
      const size_t seq = 9, d_model = 37;
      std::vector<float> x(seq * d_model), y;
      for (float& v : x) v = rng.Normal();
      y = x;
      RunIn(env, "AddPositionalEncoding",
            [&] { EXPECT_EQ(api().add_positional_encoding(y.data(), seq, d_model, first), Status::kOk); });
      for (size_t r = 0; r < seq; ++r) {
        const double p = static_cast<double>(first + r);
        for (size_t c = 0; c < d_model; ++c) {
          const size_t pair = c / 2;
          const double angle = p / std::pow(10000.0, static_cast<double>(2 * pair) / static_cast<double>(d_model));
          const double exact =
              static_cast<double>(x[r * d_model + c]) + (c % 2 == 0 ? std::sin(angle) : std::cos(angle));
          const float got = y[r * d_model + c];
          // positional_encoding.h: 1 ULP(out) + (p + 1) 2^-46, in every environment; the pow/sin/cos of the
          // reference add a few 1e-16 * angle.
          const double ulp = std::fabs(exact) >= static_cast<double>(FLT_MIN) ? UlpOf(exact) : 0x1p-149;
          const double bound = ulp + (p + 1) * 0x1p-46 + angle * 1e-15;
          worst = std::max(worst, std::fabs(static_cast<double>(got) - exact) / bound);
        }
      }
    }
    std::printf("fp-env positional encoding %-10s max error / bound %.3f\n", env.Name().c_str(), worst);
    EXPECT_LE(worst, 1.0) << env.Name();
  }
}

// RoPE: the SIMD path reads the rounding mode once per call and, under a directed mode, steps its range
// reductions to the nearest integer as the scalar loop does; the bound of rope.h must hold in every environment.
TEST_P(FpEnvTest, RopeInEveryEnvironment) {
  Rng rng;
  for (const FpEnv& env : Environments()) {
    double worst = 0;  // error / bound
    for (edgeattn::RopeLayout layout : {edgeattn::RopeLayout::kInterleaved, edgeattn::RopeLayout::kHalf}) {
      for (size_t first : {size_t{0}, size_t{1000}, size_t{(1u << 24) - 40}}) {
        edgeattn::RopeDesc desc;
        desc.num_heads = 2;
        desc.head_dim = 38;
        desc.rotary_dim = 34;
        desc.base = 10000.0f;
        desc.layout = layout;
        const size_t seq = 9, stride = desc.num_heads * desc.head_dim, rotary = desc.rotary_dim;
        std::vector<float> x(seq * stride), y;
        for (float& v : x) v = rng.Normal();
        y = x;
        RunIn(env, "Rope", [&] { EXPECT_EQ(api().rope(desc, y.data(), seq, first), Status::kOk); });
        for (size_t t = 0; t < seq; ++t) {
          const size_t p = first + t;
          for (size_t h = 0; h < desc.num_heads; ++h) {
            const size_t offset = t * stride + h * desc.head_dim;
            for (size_t i = 0; i < rotary / 2; ++i) {
              const size_t ia = layout == edgeattn::RopeLayout::kHalf ? i : 2 * i;
              const size_t ib = layout == edgeattn::RopeLayout::kHalf ? i + rotary / 2 : 2 * i + 1;
              const long double angle =
                  static_cast<long double>(p) *
                  std::pow(10000.0L, -static_cast<long double>(2 * i) / static_cast<long double>(rotary));
              const long double c = std::cos(angle), s = std::sin(angle);
              const long double xa = x[offset + ia], xb = x[offset + ib];
              const long double exact[2] = {xa * c - xb * s, xb * c + xa * s};
              const float got[2] = {y[offset + ia], y[offset + ib]};
              for (int k = 0; k < 2; ++k) {
                // rope.h: 1 ULP(exact) + (p + 1) 2^-44 (|x_a| + |x_b|); a result flushed to zero adds 2^-126.
                const double drift =
                    static_cast<double>(p + 1) * 0x1p-44 * static_cast<double>(std::fabs(xa) + std::fabs(xb));
                const double bound = UlpOf(static_cast<double>(exact[k])) + drift + 0x1p-126;
                const double err = static_cast<double>(std::fabs(static_cast<long double>(got[k]) - exact[k]));
                worst = std::max(worst, err / bound);
              }
            }
            for (size_t j = rotary; j < desc.head_dim; ++j) {
              EXPECT_EQ(Bits(y[offset + j]), Bits(x[offset + j])) << "pass-through under " << env.Name();
            }
          }
        }
      }
    }
    std::printf("fp-env rope %-10s max error / bound %.3f\n", env.Name().c_str(), worst);
    EXPECT_LE(worst, 1.0) << env.Name();
  }
}

// The test's own machinery: each environment really is set (the hardware or emulator models it).
TEST(FpEnvMachinery, EnvironmentsTakeEffect) {
  if (!kHasFpControl) GTEST_SKIP() << "no FP control register on this platform";
  volatile float one = 1.0f, third = 1.0f / 3.0f;
  for (const FpEnv& env : Environments()) {
    // volatile stores: clang 14 does not honour -frounding-math and would otherwise sink the two additions past
    // RunIn's restore of the control register (the memory clobber there orders only memory accesses).
    volatile float up = 0, down = 0;
    RunIn(env, "nothing", [&] {
      up = one + third * 0x1p-23f;     // 1 + 1/3 ulp
      down = -one - third * 0x1p-23f;  // -1 - 1/3 ulp
    });
    const bool rounds_up = up > 1.0f, rounds_down = down < -1.0f;
    EXPECT_EQ(rounds_up, env.rounding == kUpward) << env.Name();
    EXPECT_EQ(rounds_down, env.rounding == kDownward) << env.Name();
  }
}

EDGEATTN_INSTANTIATE_PATHS(FpEnvTest);

}  // namespace
}  // namespace edgeattn_test
