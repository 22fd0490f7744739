// SPDX-License-Identifier: Apache-2.0
// Two whole transformer layers composed from edgeattn's kernels and checked against PyTorch (float64) on every path:
// Whisper's pre-norm encoder layer (nn.TransformerEncoderLayer, norm_first) and a llama-style decoder layer (RMSNorm,
// grouped-query projections, interleaved RoPE, causal attention over a K/V cache, SwiGLU), the decoder as a prefill
// and then one token at a time. The golden outputs are tests/data/block_encoder.h and block_decoder.h, written by
// tools/gen_block_golden.py; the weights and inputs come from the script's counter-based generator, ported below.
#include <gtest/gtest.h>
#include <stddef.h>
#include <stdint.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "tests/data/block_decoder.h"
#include "tests/data/block_encoder.h"
#include "tests/test_util.h"

// The decoder attends over edgeattn's KV cache (issue 18) where the library has it, and over plain K/V arrays with
// causal masking always.
#if __has_include("edgeattn/kv_cache.h")
#define EDGEATTN_BLOCK_TEST_KV_CACHE 1
#else
#define EDGEATTN_BLOCK_TEST_KV_CACHE 0
#endif

namespace edgeattn_test {
namespace {

using edgeattn::Activation;
using edgeattn::AttentionDesc;
using edgeattn::MaskKind;

// Relative L2 error per output row against PyTorch's float64 layer computed on the same float32 weights and
// inputs. The layers are float32 arithmetic throughout: every kernel's bound is a small multiple of u = 6e-8 of its
// output scale (linear: about sqrt(fan_in) * u on random data, at most fan_in * u; the norms a few u; GELU and SiLU
// 6 ULP; attention about 5e-7 per row), and the random weights, scaled by 1/sqrt(fan_in), keep every stage's gain
// near 1, so a row's error is a few times 1e-7 (the worst measured per case is printed). 1e-5 leaves an order of
// magnitude for platforms without FMA and the boards' scalar float arithmetic, and still catches the smallest
// mistake tried (TheComparisonCatchesAWrongLayer: GELU's tanh form in place of erf is 3.8e-5 off on the tiny
// encoder; measured on x86-64, the worst correct row is 4.6e-7, on the SCALAR target of the Whisper-tiny encoder).
constexpr double kRowTolerance = 1e-5;

// ---------------------------------------------------------------------------------------------------------
// The generator of tools/gen_block_golden.py, bit for bit: the MurmurHash3 finaliser of a counter, 16 bits of it
// as u in [-1, 1), scaled exactly (every value is a float).
float GeneratorU(uint32_t seed, uint32_t tensor, uint32_t index) {
  uint32_t s = seed + 0x9E3779B9u * (tensor + 1u) + 0x85EBCA6Bu * (index + 1u);
  s ^= s >> 16;
  s *= 0x85EBCA6Bu;
  s ^= s >> 13;
  s *= 0xC2B2AE35u;
  s ^= s >> 16;
  return static_cast<float>(static_cast<int32_t>(s >> 16) - 32768) * 0x1p-15f;
}

enum class Kind { kWeight, kNormWeight, kNormBias, kInput };

// Tensor `tensor` of the layer with this seed, n elements; kWeight is u * 2^-k.
std::vector<float> Generate(uint32_t seed, int tensor, size_t n, Kind kind, int k = 0) {
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) {
    const float u = GeneratorU(seed, static_cast<uint32_t>(tensor), static_cast<uint32_t>(i));
    switch (kind) {
      case Kind::kWeight:
        out[i] = std::ldexp(u, -k);
        break;
      case Kind::kNormWeight:
        out[i] = 1.0f + u * 0.25f;
        break;
      case Kind::kNormBias:
        out[i] = u * 0.25f;
        break;
      case Kind::kInput:
        out[i] = u;
        break;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// One path's kernels: the scalar reference implementation or the dispatched SIMD entry points (the fixture forces
// the target).
struct Kernels {
  Status (*layer_norm)(const float*, size_t, size_t, const float*, const float*, float, float*);
  Status (*rms_norm)(const float*, size_t, size_t, const float*, float, float*);
  Status (*linear_transposed)(const float*, size_t, size_t, const float*, const float*, size_t, float*);
  Status (*rope)(const edgeattn::RopeDesc&, float*, size_t, size_t);
  Status (*activation_apply)(const float*, float*, size_t, Activation);
  Status (*gated_activation)(const float*, const float*, float*, size_t, Activation);
  Status (*add)(const float*, const float*, float*, size_t);
  size_t (*attention_workspace_size)(const AttentionDesc&);
  Status (*attention)(const AttentionDesc&, const float*, const float*, const float*, float*, void*, size_t);
#if EDGEATTN_BLOCK_TEST_KV_CACHE
  size_t (*attention_cached_workspace_size)(const AttentionDesc&, const edgeattn::KvCache&);
  Status (*attention_cached)(const AttentionDesc&, const float*, const edgeattn::KvCache&, float*, void*, size_t);
#endif
};

const Kernels kScalarKernels = {
    edgeattn::scalar::LayerNorm,
    edgeattn::scalar::RmsNorm,
    edgeattn::scalar::LinearTransposed,
    edgeattn::scalar::Rope,
    edgeattn::scalar::ActivationApply,
    edgeattn::scalar::GatedActivation,
    edgeattn::scalar::Add,
    edgeattn::scalar::AttentionWorkspaceSize,
    edgeattn::scalar::Attention,
#if EDGEATTN_BLOCK_TEST_KV_CACHE
    edgeattn::scalar::AttentionCachedWorkspaceSize,
    edgeattn::scalar::AttentionCached,
#endif
};
const Kernels kSimdKernels = {
    edgeattn::LayerNorm,
    edgeattn::RmsNorm,
    edgeattn::LinearTransposed,
    edgeattn::Rope,
    edgeattn::ActivationApply,
    edgeattn::GatedActivation,
    edgeattn::Add,
    edgeattn::AttentionWorkspaceSize,
    edgeattn::Attention,
#if EDGEATTN_BLOCK_TEST_KV_CACHE
    edgeattn::AttentionCachedWorkspaceSize,
    edgeattn::AttentionCached,
#endif
};

#define BLOCK_CHECK_OK(call)                                                                         \
  do {                                                                                               \
    const Status status_ = (call);                                                                   \
    if (status_ != Status::kOk)                                                                      \
      return ::testing::AssertionFailure() << #call << " gave status " << static_cast<int>(status_); \
  } while (0)

// Every row of got [rows][cols] within kRowTolerance (relative L2) of want; *worst gets the largest row error.
::testing::AssertionResult RowsMatch(const float* got, const double* want, size_t rows, size_t cols, double* worst) {
  for (size_t r = 0; r < rows; ++r) {
    double err = 0, norm = 0;
    for (size_t c = 0; c < cols; ++c) {
      const double d = static_cast<double>(got[r * cols + c]) - want[r * cols + c];
      err += d * d;
      norm += want[r * cols + c] * want[r * cols + c];
    }
    const double rel = std::sqrt(err / norm);
    if (!(rel <= kRowTolerance)) {
      return ::testing::AssertionFailure() << "row " << r << ": relative L2 error " << rel << " > " << kRowTolerance;
    }
    *worst = std::max(*worst, rel);
  }
  return ::testing::AssertionSuccess();
}

void PrintWorst(const char* what, double worst) {
  std::printf("[ measured ] %s: worst row relative L2 error %.3g (tolerance %.0e)\n", what, worst, kRowTolerance);
}

// ---------------------------------------------------------------------------------------------------------
// Encoder layer, pre-norm (Whisper): x + Attn(LN1(x)); then h + Linear2(GELU(Linear1(LN2(h)))).
struct EncoderShape {
  size_t d, heads, ffn, seq;
  int k_in, k_out, k_l1, k_l2;  // weight scales 2^-k of in_proj, out_proj, linear1, linear2 (and their biases)
  const double* output;         // [seq][d]
  const float* first_weights;   // the first four of in_proj_weight
};

struct EncoderWeights {
  std::vector<float> in_w, in_b, out_w, out_b, l1_w, l1_b, l2_w, l2_b, n1_w, n1_b, n2_w, n2_b, x;
  explicit EncoderWeights(const EncoderShape& s) {
    const uint32_t seed = BLOCK_ENCODER_SEED;
    in_w = Generate(seed, BLOCK_ENCODER_TENSOR_SELF_ATTN_IN_PROJ_WEIGHT, 3 * s.d * s.d, Kind::kWeight, s.k_in);
    in_b = Generate(seed, BLOCK_ENCODER_TENSOR_SELF_ATTN_IN_PROJ_BIAS, 3 * s.d, Kind::kWeight, s.k_in);
    out_w = Generate(seed, BLOCK_ENCODER_TENSOR_SELF_ATTN_OUT_PROJ_WEIGHT, s.d * s.d, Kind::kWeight, s.k_out);
    out_b = Generate(seed, BLOCK_ENCODER_TENSOR_SELF_ATTN_OUT_PROJ_BIAS, s.d, Kind::kWeight, s.k_out);
    l1_w = Generate(seed, BLOCK_ENCODER_TENSOR_LINEAR1_WEIGHT, s.ffn * s.d, Kind::kWeight, s.k_l1);
    l1_b = Generate(seed, BLOCK_ENCODER_TENSOR_LINEAR1_BIAS, s.ffn, Kind::kWeight, s.k_l1);
    l2_w = Generate(seed, BLOCK_ENCODER_TENSOR_LINEAR2_WEIGHT, s.d * s.ffn, Kind::kWeight, s.k_l2);
    l2_b = Generate(seed, BLOCK_ENCODER_TENSOR_LINEAR2_BIAS, s.d, Kind::kWeight, s.k_l2);
    n1_w = Generate(seed, BLOCK_ENCODER_TENSOR_NORM1_WEIGHT, s.d, Kind::kNormWeight);
    n1_b = Generate(seed, BLOCK_ENCODER_TENSOR_NORM1_BIAS, s.d, Kind::kNormBias);
    n2_w = Generate(seed, BLOCK_ENCODER_TENSOR_NORM2_WEIGHT, s.d, Kind::kNormWeight);
    n2_b = Generate(seed, BLOCK_ENCODER_TENSOR_NORM2_BIAS, s.d, Kind::kNormBias);
    x = Generate(seed, BLOCK_ENCODER_TENSOR_INPUT, s.seq * s.d, Kind::kInput);
  }
};

// PyTorch's LayerNorm default.
constexpr float kLayerNormEps = 1e-5f;

::testing::AssertionResult RunEncoder(const Kernels& k, const EncoderShape& s, const EncoderWeights& w, float* y) {
  const size_t n = s.seq * s.d;
  std::vector<float> h(n), q(n), key(n), value(n), att(n), h1(n), f(s.seq * s.ffn);
  // Self-attention block. in_proj_weight is [3d][d]: rows 0..d-1 project Q, d..2d-1 K, 2d..3d-1 V, each a
  // contiguous [d][d] block in nn.Linear's [out][in] layout, so three calls give Q, K and V in attention's layout.
  BLOCK_CHECK_OK(k.layer_norm(w.x.data(), s.seq, s.d, w.n1_w.data(), w.n1_b.data(), kLayerNormEps, h.data()));
  float* qkv[3] = {q.data(), key.data(), value.data()};
  for (size_t i = 0; i < 3; ++i) {
    BLOCK_CHECK_OK(
        k.linear_transposed(h.data(), s.seq, s.d, w.in_w.data() + i * s.d * s.d, w.in_b.data() + i * s.d, s.d, qkv[i]));
  }
  const AttentionDesc desc = MakeDesc(s.seq, s.seq, s.d / s.heads, s.d / s.heads, MaskKind::kNone, s.heads);
  std::vector<unsigned char> workspace(k.attention_workspace_size(desc));
  BLOCK_CHECK_OK(k.attention(desc, q.data(), key.data(), value.data(), att.data(), workspace.data(), workspace.size()));
  BLOCK_CHECK_OK(k.linear_transposed(att.data(), s.seq, s.d, w.out_w.data(), w.out_b.data(), s.d, h.data()));
  BLOCK_CHECK_OK(k.add(w.x.data(), h.data(), h1.data(), n));
  // Feed-forward block, GELU in erf form (nn.TransformerEncoderLayer's activation="gelu").
  BLOCK_CHECK_OK(k.layer_norm(h1.data(), s.seq, s.d, w.n2_w.data(), w.n2_b.data(), kLayerNormEps, h.data()));
  BLOCK_CHECK_OK(k.linear_transposed(h.data(), s.seq, s.d, w.l1_w.data(), w.l1_b.data(), s.ffn, f.data()));
  BLOCK_CHECK_OK(k.activation_apply(f.data(), f.data(), f.size(), Activation::kGeluErf));
  BLOCK_CHECK_OK(k.linear_transposed(f.data(), s.seq, s.ffn, w.l2_w.data(), w.l2_b.data(), s.d, h.data()));
  BLOCK_CHECK_OK(k.add(h1.data(), h.data(), y, n));
  return ::testing::AssertionSuccess();
}

// ---------------------------------------------------------------------------------------------------------
// Decoder layer, llama2.c's: x + Wo Attn(RoPE(Wq RMS(x)), cache); then h + W2 (SiLU(W1 RMS(h)) * W3 RMS(h)).
struct DecoderShape {
  size_t dim, heads, kv_heads, hd, hidden, prefill, steps;
  int k_wq, k_wk, k_wv, k_wo, k_w1, k_w2, k_w3;
  const double* output;        // [prefill + steps][dim]
  const float* first_weights;  // the first four of wq
  size_t total() const { return prefill + steps; }
};

struct DecoderWeights {
  std::vector<float> attention_norm, wq, wk, wv, wo, ffn_norm, w1, w2, w3, x;
  explicit DecoderWeights(const DecoderShape& s) {
    const uint32_t seed = BLOCK_DECODER_SEED;
    const size_t q_width = s.heads * s.hd, kv_width = s.kv_heads * s.hd;
    attention_norm = Generate(seed, BLOCK_DECODER_TENSOR_ATTENTION_NORM, s.dim, Kind::kNormWeight);
    wq = Generate(seed, BLOCK_DECODER_TENSOR_WQ, q_width * s.dim, Kind::kWeight, s.k_wq);
    wk = Generate(seed, BLOCK_DECODER_TENSOR_WK, kv_width * s.dim, Kind::kWeight, s.k_wk);
    wv = Generate(seed, BLOCK_DECODER_TENSOR_WV, kv_width * s.dim, Kind::kWeight, s.k_wv);
    wo = Generate(seed, BLOCK_DECODER_TENSOR_WO, s.dim * q_width, Kind::kWeight, s.k_wo);
    ffn_norm = Generate(seed, BLOCK_DECODER_TENSOR_FFN_NORM, s.dim, Kind::kNormWeight);
    w1 = Generate(seed, BLOCK_DECODER_TENSOR_W1, s.hidden * s.dim, Kind::kWeight, s.k_w1);
    w2 = Generate(seed, BLOCK_DECODER_TENSOR_W2, s.dim * s.hidden, Kind::kWeight, s.k_w2);
    w3 = Generate(seed, BLOCK_DECODER_TENSOR_W3, s.hidden * s.dim, Kind::kWeight, s.k_w3);
    x = Generate(seed, BLOCK_DECODER_TENSOR_INPUT, s.total() * s.dim, Kind::kInput);
  }
};

// Where the decoder keeps K and V: plain arrays [positions][kv_heads][hd] passed whole to edgeattn_attention with
// causal masking (bottom-right aligned, so the new queries see every earlier position and themselves), or an F32
// KvCache with edgeattn_attention_cached.
enum class KvStore { kArrays, kCache };

class Decoder {
 public:
  Decoder(const Kernels& k, const DecoderShape& s, const DecoderWeights& w, KvStore store)
      : k_(k), s_(s), w_(w), store_(store), keys_(s.total() * s.kv_heads * s.hd), values_(keys_.size()) {}

  ::testing::AssertionResult Init() {
#if EDGEATTN_BLOCK_TEST_KV_CACHE
    if (store_ == KvStore::kCache) {
      edgeattn::KvCacheDesc d;
      d.type = edgeattn::KvType::kF32;
      d.num_kv_heads = s_.kv_heads;
      d.head_dim = s_.hd;
      d.value_dim = s_.hd;
      d.capacity = s_.total();
      cache_storage_.resize(edgeattn::KvCacheStorageSize(d));
      BLOCK_CHECK_OK(cache_.Init(d, cache_storage_.data(), cache_storage_.size()));
    }
#endif
    return ::testing::AssertionSuccess();
  }

  // The layer on the next `tokens` tokens x [tokens][dim] (positions length() ..), y [tokens][dim].
  ::testing::AssertionResult Forward(const float* x, size_t tokens, float* y) {
    const size_t first = length_, q_width = s_.heads * s_.hd, kv_width = s_.kv_heads * s_.hd;
    std::vector<float> h(tokens * s_.dim), q(tokens * q_width), att(tokens * q_width), h1(tokens * s_.dim);
    std::vector<float> gate(tokens * s_.hidden), up(tokens * s_.hidden);
    float* key = keys_.data() + first * kv_width;  // the new positions' K and V, appended below
    float* value = values_.data() + first * kv_width;
    BLOCK_CHECK_OK(k_.rms_norm(x, tokens, s_.dim, w_.attention_norm.data(), BLOCK_DECODER_RMS_EPS, h.data()));
    BLOCK_CHECK_OK(k_.linear_transposed(h.data(), tokens, s_.dim, w_.wq.data(), nullptr, q_width, q.data()));
    BLOCK_CHECK_OK(k_.linear_transposed(h.data(), tokens, s_.dim, w_.wk.data(), nullptr, kv_width, key));
    BLOCK_CHECK_OK(k_.linear_transposed(h.data(), tokens, s_.dim, w_.wv.data(), nullptr, kv_width, value));
    edgeattn::RopeDesc rope;
    rope.head_dim = s_.hd;
    rope.base = BLOCK_DECODER_ROPE_BASE;
    rope.layout = edgeattn::RopeLayout::kInterleaved;  // llama2.c's pairs (2i, 2i+1)
    rope.num_heads = s_.heads;
    BLOCK_CHECK_OK(k_.rope(rope, q.data(), tokens, first));
    rope.num_heads = s_.kv_heads;
    BLOCK_CHECK_OK(k_.rope(rope, key, tokens, first));
    length_ += tokens;
    AttentionDesc desc = MakeDesc(tokens, length_, s_.hd, s_.hd, MaskKind::kCausal, s_.heads, s_.kv_heads);
    if (store_ == KvStore::kArrays) {
      std::vector<unsigned char> workspace(k_.attention_workspace_size(desc));
      BLOCK_CHECK_OK(
          k_.attention(desc, q.data(), keys_.data(), values_.data(), att.data(), workspace.data(), workspace.size()));
    } else {
#if EDGEATTN_BLOCK_TEST_KV_CACHE
      BLOCK_CHECK_OK(cache_.Append(key, value, tokens));
      desc.kv_len = 0;  // the cache decides
      std::vector<unsigned char> workspace(k_.attention_cached_workspace_size(desc, cache_));
      BLOCK_CHECK_OK(k_.attention_cached(desc, q.data(), cache_, att.data(), workspace.data(), workspace.size()));
#else
      return ::testing::AssertionFailure() << "no KV cache in this library";
#endif
    }
    BLOCK_CHECK_OK(k_.linear_transposed(att.data(), tokens, q_width, w_.wo.data(), nullptr, s_.dim, h.data()));
    BLOCK_CHECK_OK(k_.add(x, h.data(), h1.data(), h1.size()));
    // SwiGLU: gate = W1 h, up = W3 h, silu(gate) * up in place of gate, then W2.
    BLOCK_CHECK_OK(k_.rms_norm(h1.data(), tokens, s_.dim, w_.ffn_norm.data(), BLOCK_DECODER_RMS_EPS, h.data()));
    BLOCK_CHECK_OK(k_.linear_transposed(h.data(), tokens, s_.dim, w_.w1.data(), nullptr, s_.hidden, gate.data()));
    BLOCK_CHECK_OK(k_.linear_transposed(h.data(), tokens, s_.dim, w_.w3.data(), nullptr, s_.hidden, up.data()));
    BLOCK_CHECK_OK(k_.gated_activation(gate.data(), up.data(), gate.data(), gate.size(), Activation::kSilu));
    BLOCK_CHECK_OK(k_.linear_transposed(gate.data(), tokens, s_.hidden, w_.w2.data(), nullptr, s_.dim, h.data()));
    BLOCK_CHECK_OK(k_.add(h1.data(), h.data(), y, h.size()));
    return ::testing::AssertionSuccess();
  }

 private:
  const Kernels& k_;
  const DecoderShape& s_;
  const DecoderWeights& w_;
  KvStore store_;
  size_t length_ = 0;
  std::vector<float> keys_, values_;  // every position's K (after RoPE) and V
#if EDGEATTN_BLOCK_TEST_KV_CACHE
  std::vector<unsigned char> cache_storage_;
  edgeattn::KvCache cache_;
#endif
};

// The prefill (in `chunks` calls of nearly equal size), then one token per call; every token's output against
// PyTorch's. Rows of the prefill and of each decode step are checked as they come, so a failure names the step.
::testing::AssertionResult RunDecoder(const Kernels& k, const DecoderShape& s, KvStore store, size_t chunks,
                                      double* worst) {
  const DecoderWeights w(s);
  Decoder decoder(k, s, w, store);
  if (auto r = decoder.Init(); !r) return r;
  std::vector<float> y(s.total() * s.dim);
  size_t done = 0;
  for (size_t c = 0; c < chunks; ++c) {
    const size_t end = s.prefill * (c + 1) / chunks;
    if (auto r = decoder.Forward(w.x.data() + done * s.dim, end - done, y.data() + done * s.dim); !r) return r;
    done = end;
  }
  if (auto r = RowsMatch(y.data(), s.output, s.prefill, s.dim, worst); !r) return r << " (prefill)";
  for (size_t t = s.prefill; t < s.total(); ++t) {
    if (auto r = decoder.Forward(w.x.data() + t * s.dim, 1, y.data() + t * s.dim); !r)
      return r << " (step " << t << ")";
    if (auto r = RowsMatch(y.data() + t * s.dim, s.output + t * s.dim, 1, s.dim, worst); !r) {
      return r << " (decode step " << t - s.prefill << ", position " << t << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

// ---------------------------------------------------------------------------------------------------------
#define BLOCK_ENCODER_SHAPE(P)                                                                                 \
  EncoderShape {                                                                                               \
    P##_D_MODEL, P##_HEADS, P##_FFN, P##_SEQ, P##_K_SELF_ATTN_IN_PROJ_WEIGHT, P##_K_SELF_ATTN_OUT_PROJ_WEIGHT, \
        P##_K_LINEAR1_WEIGHT, P##_K_LINEAR2_WEIGHT, nullptr, nullptr                                           \
  }
#define BLOCK_DECODER_SHAPE(P)                                                                                  \
  DecoderShape {                                                                                                \
    P##_DIM, P##_HEADS, P##_KV_HEADS, P##_HD, P##_HIDDEN, P##_PREFILL, P##_STEPS, P##_K_WQ, P##_K_WK, P##_K_WV, \
        P##_K_WO, P##_K_W1, P##_K_W2, P##_K_W3, nullptr, nullptr                                                \
  }

EncoderShape EncoderTiny() {
  EncoderShape s = BLOCK_ENCODER_SHAPE(BLOCK_ENCODER_TINY);
  s.output = &block_encoder_tiny_output[0][0];
  s.first_weights = block_encoder_tiny_first_weights;
  return s;
}
EncoderShape EncoderSmall() {
  EncoderShape s = BLOCK_ENCODER_SHAPE(BLOCK_ENCODER_SMALL);
  s.output = &block_encoder_small_output[0][0];
  s.first_weights = block_encoder_small_first_weights;
  return s;
}
DecoderShape DecoderTiny() {
  DecoderShape s = BLOCK_DECODER_SHAPE(BLOCK_DECODER_TINY);
  s.output = &block_decoder_tiny_output[0][0];
  s.first_weights = block_decoder_tiny_first_weights;
  return s;
}
DecoderShape DecoderStories260k() {
  DecoderShape s = BLOCK_DECODER_SHAPE(BLOCK_DECODER_STORIES260K);
  s.output = &block_decoder_stories260k_output[0][0];
  s.first_weights = block_decoder_stories260k_first_weights;
  return s;
}
#if !EDGEATTN_TEST_SMALL_MEMORY
EncoderShape EncoderWhisperTiny() {
  EncoderShape s = BLOCK_ENCODER_SHAPE(BLOCK_ENCODER_WHISPER_TINY);
  s.output = &block_encoder_whisper_tiny_output[0][0];
  s.first_weights = block_encoder_whisper_tiny_first_weights;
  return s;
}
DecoderShape DecoderStories15m() {
  DecoderShape s = BLOCK_DECODER_SHAPE(BLOCK_DECODER_STORIES15M);
  s.output = &block_decoder_stories15m_output[0][0];
  s.first_weights = block_decoder_stories15m_first_weights;
  return s;
}
#endif

class BlockTest : public PathTest {
 protected:
  const Kernels& kernels() const { return IsScalarPath() ? kScalarKernels : kSimdKernels; }

  void CheckEncoder(const EncoderShape& s, const char* name) {
    const EncoderWeights w(s);
    std::vector<float> y(s.seq * s.d);
    ASSERT_TRUE(RunEncoder(kernels(), s, w, y.data()));
    double worst = 0;
    EXPECT_TRUE(RowsMatch(y.data(), s.output, s.seq, s.d, &worst)) << name;
    PrintWorst(name, worst);
  }

  void CheckDecoder(const DecoderShape& s, const char* name) {
    double worst = 0;
    EXPECT_TRUE(RunDecoder(kernels(), s, KvStore::kArrays, 1, &worst)) << name << ", K/V arrays";
#if EDGEATTN_BLOCK_TEST_KV_CACHE
    EXPECT_TRUE(RunDecoder(kernels(), s, KvStore::kCache, 1, &worst)) << name << ", KV cache";
    // The same prefill in two chunks: the second chunk's queries see the first chunk's cached positions.
    EXPECT_TRUE(RunDecoder(kernels(), s, KvStore::kCache, 2, &worst)) << name << ", KV cache, chunked prefill";
#endif
    PrintWorst(name, worst);
  }
};
EDGEATTN_INSTANTIATE_PATHS(BlockTest);

// The port of the generator gives the script's numbers (else every comparison below would fail for that reason).
TEST_P(BlockTest, GeneratorPortMatchesTheScript) {
  for (const EncoderShape& e : {EncoderTiny(), EncoderSmall()}) {
    const std::vector<float> in_w = Generate(BLOCK_ENCODER_SEED, 0, 4, Kind::kWeight, e.k_in);
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(in_w[i], e.first_weights[i]) << i;
  }
  for (const DecoderShape& d : {DecoderTiny(), DecoderStories260k()}) {
    const std::vector<float> wq = Generate(BLOCK_DECODER_SEED, BLOCK_DECODER_TENSOR_WQ, 4, Kind::kWeight, d.k_wq);
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(wq[i], d.first_weights[i]) << i;
  }
#if !EDGEATTN_TEST_SMALL_MEMORY
  const EncoderShape w = EncoderWhisperTiny();
  const std::vector<float> whisper = Generate(BLOCK_ENCODER_SEED, 0, 4, Kind::kWeight, w.k_in);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(whisper[i], w.first_weights[i]) << i;
#endif
}

TEST_P(BlockTest, EncoderLayerTinyMatchesPyTorch) { CheckEncoder(EncoderTiny(), "encoder tiny (d 8, 2 heads)"); }

TEST_P(BlockTest, EncoderLayerSmallMatchesPyTorch) {
  CheckEncoder(EncoderSmall(), "encoder small (d 64, 4 heads, FFN 256)");
}

TEST_P(BlockTest, DecoderLayerTinyPrefillAndDecodeMatchPyTorch) {
  CheckDecoder(DecoderTiny(), "decoder tiny (dim 16, 4 heads over 2 KV heads)");
}

TEST_P(BlockTest, DecoderLayerStories260kPrefillAndDecodeMatchPyTorch) {
  CheckDecoder(DecoderStories260k(), "decoder stories260K layer (dim 64, 8 heads over 4 KV heads, hidden 172)");
}

#if !EDGEATTN_TEST_SMALL_MEMORY
TEST_P(BlockTest, EncoderLayerWhisperTinyMatchesPyTorch) {
  CheckEncoder(EncoderWhisperTiny(), "encoder Whisper-tiny (d 384, 6 heads, FFN 1536)");
}

TEST_P(BlockTest, DecoderLayerStories15mPrefillAndDecodeMatchPyTorch) {
  CheckDecoder(DecoderStories15m(), "decoder stories15M layer (dim 288, 6 heads, hidden 768)");
}
#endif

// A wrong layer must fail the comparison: GELU's tanh form in place of erf, RoPE's half layout in place of
// interleaved pairs (the two mistakes the issue names), each moves the output far beyond the tolerance.
TEST_P(BlockTest, TheComparisonCatchesAWrongLayer) {
  Kernels wrong = kernels();
  wrong.activation_apply = [](const float* x, float* y, size_t n, Activation) {
    return edgeattn::scalar::ActivationApply(x, y, n, Activation::kGeluTanh);
  };
  const EncoderShape e = EncoderTiny();
  const EncoderWeights ew(e);
  std::vector<float> y(e.seq * e.d);
  ASSERT_TRUE(RunEncoder(wrong, e, ew, y.data()));
  double worst = 0;
  const ::testing::AssertionResult tanh_form = RowsMatch(y.data(), e.output, e.seq, e.d, &worst);
  EXPECT_FALSE(tanh_form);
  std::printf("[ measured ] encoder tiny with GELU's tanh form: %s\n", tanh_form.message());

  wrong = kernels();
  wrong.rope = [](const edgeattn::RopeDesc& desc, float* x, size_t seq_len, size_t first_position) {
    edgeattn::RopeDesc half = desc;
    half.layout = edgeattn::RopeLayout::kHalf;
    return edgeattn::scalar::Rope(half, x, seq_len, first_position);
  };
  const ::testing::AssertionResult half_layout = RunDecoder(wrong, DecoderTiny(), KvStore::kArrays, 1, &worst);
  EXPECT_FALSE(half_layout);
  std::printf("[ measured ] decoder tiny with RoPE's half layout: %s\n", half_layout.message());
}

}  // namespace
}  // namespace edgeattn_test
