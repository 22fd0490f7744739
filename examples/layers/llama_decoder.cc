// SPDX-License-Identifier: Apache-2.0
// A tiny llama decoder that generates tokens greedily, firmware style: a random model in the shape of llama2.c's
// stories260K (dim 64, 5 layers, 8 query heads over 4 K/V heads, SwiGLU hidden 172, vocabulary 512, context 512),
// its weights const data computed by the compiler (.rodata: flash on a board), every other buffer static (the five
// layers' K/V caches are FixedKvCache objects in .bss), no heap.
//
// Per token, as llama2.c's forward(): embedding row; per layer RMSNorm, Q/K/V projections (weights [out][in]),
// RoPE on Q and K (interleaved pairs, llama2.c's layout), K and V appended to the layer's cache, causal attention
// of the new queries over the cache, output projection, residual, RMSNorm, SwiGLU feed-forward, residual; final
// RMSNorm and the classifier; the next token is the argmax. The prompt goes through in one prefill call, then one
// token per call.
//
// The weights come from tools/gen_block_golden.py's generator; that script runs the same model in float64 PyTorch
// and wrote the tokens it chooses to llama_decoder_expected.h (the smallest margin between the best and the
// second-best logit is 8e-4 of the largest, so float32 arithmetic on any platform chooses the same). The program
// prints the tokens and "-> PASS" if they are PyTorch's, else "-> FAIL" and a non-zero exit code. On the Cortex-M
// boards it runs under QEMU (printf by semihosting).
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "edgeattn/edgeattn.hpp"
#include "llama_decoder_expected.h"

namespace {

constexpr size_t kDim = LLAMA_DIM;
constexpr size_t kHeads = LLAMA_HEADS;
constexpr size_t kKvHeads = LLAMA_KV_HEADS;
constexpr size_t kHeadDim = LLAMA_HD;
constexpr size_t kHidden = LLAMA_HIDDEN;
constexpr size_t kLayers = LLAMA_LAYERS;
constexpr size_t kVocab = LLAMA_VOCAB;
constexpr size_t kContext = LLAMA_CONTEXT;
constexpr size_t kQWidth = kHeads * kHeadDim;
constexpr size_t kKvWidth = kKvHeads * kHeadDim;
constexpr size_t kPromptLength = LLAMA_PROMPT_LENGTH;
constexpr size_t kMaxChunk = kPromptLength;  // the largest number of tokens in one forward call
constexpr float kRmsEps = 1e-5f;             // llama2.c's

// ---- Weights: the script's generator evaluated at compile time. A hash of (tensor number, index) gives u in
// [-1, 1) with 16 significant bits; weights are u * 2^-k, norm weights 1 + u/4, the embedding u: all exact floats.
constexpr float Generated(uint32_t tensor, uint32_t index) {
  uint32_t s = LLAMA_SEED + 0x9E3779B9u * (tensor + 1u) + 0x85EBCA6Bu * (index + 1u);
  s ^= s >> 16;
  s *= 0x85EBCA6Bu;
  s ^= s >> 13;
  s *= 0xC2B2AE35u;
  s ^= s >> 16;
  return static_cast<float>(static_cast<int32_t>(s >> 16) - 32768) * 0x1p-15f;
}

template <size_t N>
struct Tensor {
  float v[N];
};

template <size_t N>
constexpr Tensor<N> Make(uint32_t tensor, int k) {  // u * 2^-k
  Tensor<N> t{};
  float scale = 1.0f;
  for (int i = 0; i < k; ++i) scale *= 0.5f;
  for (size_t i = 0; i < N; ++i) t.v[i] = Generated(tensor, static_cast<uint32_t>(i)) * scale;
  return t;
}
template <size_t N>
constexpr Tensor<N> MakeNormWeight(uint32_t tensor) {  // 1 + u/4
  Tensor<N> t{};
  for (size_t i = 0; i < N; ++i) t.v[i] = 1.0f + Generated(tensor, static_cast<uint32_t>(i)) * 0.25f;
  return t;
}

// One layer, llama2.c's names; matrices [out][in] as nn.Linear stores them.
struct Layer {
  Tensor<kDim> attention_norm;
  Tensor<kQWidth * kDim> wq;
  Tensor<kKvWidth * kDim> wk, wv;
  Tensor<kDim * kQWidth> wo;
  Tensor<kDim> ffn_norm;
  Tensor<kHidden * kDim> w1, w2, w3;  // gate, down ([dim][hidden]), up
};

// Tensor numbers: 0 the embedding, 1 + 9 l + j layer l's tensors in the order above, then the final norm and wcls.
constexpr Layer MakeLayer(uint32_t l) {
  const uint32_t t = 1 + 9 * l;
  return Layer{MakeNormWeight<kDim>(t),
               Make<kQWidth * kDim>(t + 1, LLAMA_K_WQ),
               Make<kKvWidth * kDim>(t + 2, LLAMA_K_WK),
               Make<kKvWidth * kDim>(t + 3, LLAMA_K_WV),
               Make<kDim * kQWidth>(t + 4, LLAMA_K_WO),
               MakeNormWeight<kDim>(t + 5),
               Make<kHidden * kDim>(t + 6, LLAMA_K_W1),
               Make<kHidden * kDim>(t + 7, LLAMA_K_W2),
               Make<kHidden * kDim>(t + 8, LLAMA_K_W3)};
}

constexpr Tensor<kVocab* kDim> kEmbedding = Make<kVocab * kDim>(0, 0);
constexpr Layer kLayer0 = MakeLayer(0), kLayer1 = MakeLayer(1), kLayer2 = MakeLayer(2), kLayer3 = MakeLayer(3),
                kLayer4 = MakeLayer(4);
constexpr const Layer* kModelLayers[kLayers] = {&kLayer0, &kLayer1, &kLayer2, &kLayer3, &kLayer4};
constexpr Tensor<kDim> kFinalNorm = MakeNormWeight<kDim>(1 + 9 * kLayers);
constexpr Tensor<kVocab* kDim> kClassifier = Make<kVocab * kDim>(2 + 9 * kLayers, LLAMA_K_WCLS);

// ---- State: everything static, sized at compile time.
using Cache = edgeattn::FixedKvCache<kContext, kKvHeads, kHeadDim>;  // F32, linear
Cache g_caches[kLayers];
constexpr size_t kWorkspaceBytes = Cache::WorkspaceBytes(kMaxChunk, kHeads) > Cache::WorkspaceBytes(1, kHeads)
                                       ? Cache::WorkspaceBytes(kMaxChunk, kHeads)
                                       : Cache::WorkspaceBytes(1, kHeads);
static_assert(kWorkspaceBytes != 0, "invalid attention shape");
unsigned char g_workspace[kWorkspaceBytes];
float g_x[kMaxChunk][kDim];  // the residual stream
float g_h[kMaxChunk][kDim];  // normed input of a block, then its output
float g_q[kMaxChunk][kQWidth], g_k[kMaxChunk][kKvWidth], g_v[kMaxChunk][kKvWidth], g_attended[kMaxChunk][kQWidth];
float g_gate[kMaxChunk][kHidden], g_up[kMaxChunk][kHidden];
float g_logits[kVocab];
int g_tokens[kContext];

bool Ok(edgeattn::Status status, const char* step) {
  if (status == edgeattn::Status::kOk) return true;
  printf("%s failed: %s -> FAIL\n", step, edgeattn::StatusString(status));
  return false;
}

// One decoder layer on the next n tokens of the residual stream g_x (positions cache.length() ..), in place.
bool LayerForward(const Layer& w, Cache& cache, size_t n) {
  using edgeattn::LinearTransposed;
  const size_t first_position = cache.length();
  edgeattn::RopeDesc rope;
  rope.head_dim = kHeadDim;
  rope.layout = edgeattn::RopeLayout::kInterleaved;  // pairs (2i, 2i+1), base 10000 (the default)
  edgeattn::AttentionDesc attention;
  attention.q_len = n;
  attention.kv_len = 0;  // the cache's
  attention.head_dim = kHeadDim;
  attention.value_dim = kHeadDim;
  attention.num_heads = kHeads;
  attention.num_kv_heads = kKvHeads;
  attention.mask = edgeattn::MaskKind::kCausal;  // the n queries are the n positions just appended

  // Attention block.
  if (!Ok(edgeattn::RmsNorm(&g_x[0][0], n, kDim, w.attention_norm.v, kRmsEps, &g_h[0][0]), "rms_norm") ||
      !Ok(LinearTransposed(&g_h[0][0], n, kDim, w.wq.v, nullptr, kQWidth, &g_q[0][0]), "wq") ||
      !Ok(LinearTransposed(&g_h[0][0], n, kDim, w.wk.v, nullptr, kKvWidth, &g_k[0][0]), "wk") ||
      !Ok(LinearTransposed(&g_h[0][0], n, kDim, w.wv.v, nullptr, kKvWidth, &g_v[0][0]), "wv")) {
    return false;
  }
  rope.num_heads = kHeads;
  if (!Ok(edgeattn::Rope(rope, &g_q[0][0], n, first_position), "rope q")) return false;
  rope.num_heads = kKvHeads;
  if (!Ok(edgeattn::Rope(rope, &g_k[0][0], n, first_position), "rope k") ||
      !Ok(cache.Append(&g_k[0][0], &g_v[0][0], n), "cache append") ||
      !Ok(edgeattn::AttentionCached(attention, &g_q[0][0], cache.cache(), &g_attended[0][0], g_workspace,
                                    sizeof(g_workspace)),
          "attention") ||
      !Ok(LinearTransposed(&g_attended[0][0], n, kQWidth, w.wo.v, nullptr, kDim, &g_h[0][0]), "wo") ||
      !Ok(edgeattn::Add(&g_x[0][0], &g_h[0][0], &g_x[0][0], n * kDim), "residual")) {
    return false;
  }
  // Feed-forward block: w2(silu(w1 h) * w3 h).
  return Ok(edgeattn::RmsNorm(&g_x[0][0], n, kDim, w.ffn_norm.v, kRmsEps, &g_h[0][0]), "rms_norm") &&
         Ok(LinearTransposed(&g_h[0][0], n, kDim, w.w1.v, nullptr, kHidden, &g_gate[0][0]), "w1") &&
         Ok(LinearTransposed(&g_h[0][0], n, kDim, w.w3.v, nullptr, kHidden, &g_up[0][0]), "w3") &&
         Ok(edgeattn::GatedActivation(&g_gate[0][0], &g_up[0][0], &g_gate[0][0], n * kHidden,
                                      edgeattn::Activation::kSilu),
            "swiglu") &&
         Ok(LinearTransposed(&g_gate[0][0], n, kHidden, w.w2.v, nullptr, kDim, &g_h[0][0]), "w2") &&
         Ok(edgeattn::Add(&g_x[0][0], &g_h[0][0], &g_x[0][0], n * kDim), "residual");
}

// The model on n new tokens; *next is the argmax of the last one's logits (-1 on an error).
bool Forward(const int* tokens, size_t n, int* next) {
  *next = -1;
  for (size_t t = 0; t < n; ++t) {
    for (size_t c = 0; c < kDim; ++c) g_x[t][c] = kEmbedding.v[static_cast<size_t>(tokens[t]) * kDim + c];
  }
  for (size_t l = 0; l < kLayers; ++l) {
    if (!LayerForward(*kModelLayers[l], g_caches[l], n)) return false;
  }
  if (!Ok(edgeattn::RmsNorm(g_x[n - 1], 1, kDim, kFinalNorm.v, kRmsEps, g_h[0]), "final rms_norm") ||
      !Ok(edgeattn::LinearTransposed(g_h[0], 1, kDim, kClassifier.v, nullptr, kVocab, g_logits), "classifier")) {
    return false;
  }
  size_t best = 0;
  for (size_t i = 1; i < kVocab; ++i) {
    if (g_logits[i] > g_logits[best]) best = i;
  }
  *next = static_cast<int>(best);
  return true;
}

}  // namespace

int main() {
  constexpr size_t kTotal = kPromptLength + LLAMA_GENERATE;
  static_assert(kTotal <= kContext, "the caches hold the whole sequence");
  printf(
      "edgeattn %s llama decoder example (SIMD target %s): stories260K shape, %u layers, %u prompt tokens, "
      "%u generated\n",
      edgeattn::Version(), edgeattn::SimdTarget(), static_cast<unsigned>(kLayers), static_cast<unsigned>(kPromptLength),
      static_cast<unsigned>(LLAMA_GENERATE));
  for (size_t t = 0; t < kPromptLength; ++t) g_tokens[t] = llama_prompt[t];
  int next = 0;
  if (!Forward(g_tokens, kPromptLength, &next)) return 1;  // prefill: the whole prompt in one call
  size_t length = kPromptLength;
  while (true) {
    g_tokens[length++] = next;
    if (length == kTotal) break;
    if (!Forward(&g_tokens[length - 1], 1, &next)) return 1;  // decode: one token against the caches
  }
  size_t matching = 0;
  while (matching < kTotal && g_tokens[matching] == llama_expected_tokens[matching]) ++matching;
  printf("tokens:");
  for (size_t t = 0; t < kTotal; ++t) printf(" %d", g_tokens[t]);
  printf("\n");
  if (matching != kTotal) {
    printf("token %u is %d, PyTorch chose %d -> FAIL\n", static_cast<unsigned>(matching), g_tokens[matching],
           llama_expected_tokens[matching]);
    return 1;
  }
  printf("all %u tokens are PyTorch's -> PASS\n", static_cast<unsigned>(kTotal));
  return 0;
}
