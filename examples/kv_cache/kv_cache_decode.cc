// SPDX-License-Identifier: Apache-2.0
// Token-by-token decoding with a KV cache in static storage: a prompt of 12 tokens prefilled in two chunks, then
// 40 tokens decoded one at a time through a sliding window of 32 positions kept in a ring of 48 (so the ring
// wraps and old positions leave the window), with 4 query heads sharing one f16 K/V head (grouped-query
// attention). Every step is checked against a float64 attention over the values the cache stores (read back with
// Read), written here from the definition. Prints the worst difference and "-> PASS", or exits non-zero.
//
// No heap: the cache (FixedKvCache), the workspace and every tensor are static. Runs on every platform the tests
// run on, the Cortex-M boards included (ctest kv_cache_example).
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "edgeattn/edgeattn.hpp"

namespace {

constexpr size_t kCapacity = 48;
constexpr size_t kWindow = 32;
constexpr size_t kHeads = 4;
constexpr size_t kKvHeads = 1;
constexpr size_t kDim = 16;
constexpr size_t kPrompt = 12;
constexpr size_t kTokens = kPrompt + 40;
constexpr size_t kMaxChunk = 8;

using Cache = edgeattn::FixedKvCache<kCapacity, kKvHeads, kDim, kDim, edgeattn::KvType::kF16, kWindow>;
Cache g_cache;
alignas(64) unsigned char g_workspace[Cache::WorkspaceBytes(kMaxChunk, kHeads)];
float g_q[kMaxChunk][kHeads][kDim];
float g_k[kMaxChunk][kKvHeads][kDim];
float g_v[kMaxChunk][kKvHeads][kDim];
float g_out[kMaxChunk][kHeads][kDim];
float g_stored_k[kCapacity][kKvHeads][kDim];
float g_stored_v[kCapacity][kKvHeads][kDim];

// Deterministic inputs in [-1, 1): a 32-bit linear congruential generator (the model's projections stand-in).
uint32_t g_state = 12345u;
float NextInput() {
  g_state = g_state * 1664525u + 1013904223u;
  return static_cast<float>(g_state >> 8) * (2.0f / 16777216.0f) - 1.0f;
}

void MakeToken(size_t row) {
  for (size_t h = 0; h < kHeads; ++h) {
    for (size_t c = 0; c < kDim; ++c) g_q[row][h][c] = NextInput() * 2.0f;
  }
  for (size_t c = 0; c < kDim; ++c) g_k[row][0][c] = NextInput();
  for (size_t c = 0; c < kDim; ++c) g_v[row][0][c] = NextInput();
}

// Worst |out - reference| / (1 + |reference|) of a chunk of n queries, the last n positions of the cache.
double CheckChunk(size_t n, bool* ok) {
  const size_t length = g_cache.length();
  double worst = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const size_t position = length - n + i;
    const size_t lo = position + 1 > kWindow ? position + 1 - kWindow : 0;
    for (size_t p = lo; p <= position; ++p) {
      if (g_cache.Read(p, &g_stored_k[p - lo][0][0], &g_stored_v[p - lo][0][0]) != edgeattn::Status::kOk) {
        *ok = false;
        return 1.0;
      }
    }
    for (size_t h = 0; h < kHeads; ++h) {
      double scores[kWindow], max_score = -HUGE_VAL, sum = 0.0;
      const size_t count = position + 1 - lo;
      for (size_t j = 0; j < count; ++j) {
        double dot = 0.0;
        for (size_t c = 0; c < kDim; ++c) dot += static_cast<double>(g_q[i][h][c]) * g_stored_k[j][0][c];
        scores[j] = dot / sqrt(static_cast<double>(kDim));
        max_score = scores[j] > max_score ? scores[j] : max_score;
      }
      for (size_t j = 0; j < count; ++j) sum += (scores[j] = exp(scores[j] - max_score));
      for (size_t c = 0; c < kDim; ++c) {
        double expected = 0.0;
        for (size_t j = 0; j < count; ++j) expected += scores[j] / sum * g_stored_v[j][0][c];
        const double error = fabs(static_cast<double>(g_out[i][h][c]) - expected) / (1.0 + fabs(expected));
        worst = error > worst ? error : worst;
      }
    }
  }
  return worst;
}

bool Step(size_t n, double* worst) {
  edgeattn::AttentionDesc desc;
  desc.q_len = n;
  desc.kv_len = 0;
  desc.head_dim = kDim;
  desc.value_dim = kDim;
  desc.num_heads = kHeads;
  desc.num_kv_heads = kKvHeads;
  desc.mask = edgeattn::MaskKind::kCausal;
  edgeattn::Status status = g_cache.Append(&g_k[0][0][0], &g_v[0][0][0], n);
  if (status == edgeattn::Status::kOk) {
    status = edgeattn::AttentionCached(desc, &g_q[0][0][0], g_cache.cache(), &g_out[0][0][0], g_workspace,
                                       sizeof(g_workspace));
  }
  if (status != edgeattn::Status::kOk) {
    printf("step at length %u failed: %s\n", static_cast<unsigned>(g_cache.length()), edgeattn::StatusString(status));
    return false;
  }
  bool ok = true;
  const double error = CheckChunk(n, &ok);
  *worst = error > *worst ? error : *worst;
  return ok;
}

}  // namespace

int main() {
  printf("edgeattn %s KV cache example, SIMD target %s, cache %u bytes\n", edgeattn::Version(), edgeattn::SimdTarget(),
         static_cast<unsigned>(Cache::kStorageBytes));
  double worst = 0.0;
  // Prefill: the prompt in chunks of 8 and 4.
  const size_t chunks[] = {kMaxChunk, kPrompt - kMaxChunk};
  for (size_t chunk : chunks) {
    for (size_t r = 0; r < chunk; ++r) MakeToken(r);
    if (!Step(chunk, &worst)) return 2;
  }
  // Decode: one token at a time (the next token's K/V come from the previous step in a real model).
  for (size_t t = kPrompt; t < kTokens; ++t) {
    MakeToken(0);
    if (!Step(1, &worst)) return 2;
  }
  printf("last token, head 0: %9.5f %9.5f %9.5f %9.5f\n", static_cast<double>(g_out[0][0][0]),
         static_cast<double>(g_out[0][0][1]), static_cast<double>(g_out[0][0][2]), static_cast<double>(g_out[0][0][3]));
  // attention.h's bound on the stored values is a few float ULPs here (about 1e-7 relative); 1e-5 leaves room
  // and still catches any real error.
  const bool pass = worst <= 1e-5 && g_cache.length() == kTokens;
  printf("%u positions, worst relative difference from the float64 reference %.3g -> %s\n",
         static_cast<unsigned>(g_cache.length()), worst, pass ? "PASS" : "FAIL");
  return pass ? 0 : 1;
}
