// SPDX-License-Identifier: Apache-2.0
// Sampling with run.c's rules; the softmax is edgeattn's.
#include "llama2_sampler.h"

#include <math.h>

#include "llama2_internal.h"
#include "llama2_sort.h"

namespace llama2 {
namespace {

size_t Argmax(const float* x, size_t n) {
  size_t best = 0;
  for (size_t i = 1; i < n; ++i) {
    if (x[i] > x[best]) best = i;
  }
  return best;
}

// The first token whose cumulative probability exceeds coin (the last one when rounding leaves the sum short).
size_t SampleAll(const float* p, size_t n, float coin) {
  float cdf = 0.0f;
  for (size_t i = 0; i < n; ++i) {
    cdf += p[i];
    if (coin < cdf) return i;
  }
  return n - 1;
}

// Nucleus sampling: tokens with probability >= (1 - top_p) / (n - 1) (the others cannot be in the nucleus: at most
// n - 1 of them, they add up to less than 1 - top_p), most likely first (ties: the lower token), cut after the
// first whose cumulative probability exceeds top_p, then a draw of coin times that cumulative probability.
size_t SampleTopP(const float* p, size_t n, float top_p, uint32_t* candidates, float coin) {
  const float cutoff = (1.0f - top_p) / static_cast<float>(n - 1);
  size_t count = 0;
  for (size_t i = 0; i < n; ++i) {
    if (p[i] >= cutoff) candidates[count++] = static_cast<uint32_t>(i);
  }
  if (count == 0) return Argmax(p, n);  // NaN probabilities
  SortIndices(candidates, count, [p](uint32_t a, uint32_t b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
  float cumulative = 0.0f;
  size_t last = count - 1;
  for (size_t i = 0; i < count; ++i) {
    cumulative += p[candidates[i]];
    if (cumulative > top_p) {
      last = i;
      break;
    }
  }
  const float r = coin * cumulative;
  float cdf = 0.0f;
  for (size_t i = 0; i <= last; ++i) {
    cdf += p[candidates[i]];
    if (r < cdf) return candidates[i];
  }
  return candidates[last];
}

}  // namespace

uint32_t RandomU32(uint64_t* state) noexcept {
  // xorshift* (Marsaglia's xorshift64 with a multiplicative output), the generator of llama2.c's run.c.
  *state ^= *state >> 12;
  *state ^= *state << 25;
  *state ^= *state >> 27;
  return static_cast<uint32_t>((*state * 0x2545F4914F6CDD1Dull) >> 32);
}

float RandomF32(uint64_t* state) noexcept { return static_cast<float>(RandomU32(state) >> 8) / 16777216.0f; }

size_t SamplerArenaBytes(size_t vocab_size) noexcept {
  return vocab_size > SIZE_MAX / 8 - 1 ? 0 : vocab_size * (sizeof(float) + sizeof(uint32_t)) + 4;
}

Status InitSampler(Sampler* sampler, size_t vocab_size, float temperature, float top_p, uint64_t seed, void* arena,
                   size_t arena_bytes) noexcept {
  if (sampler == nullptr || arena == nullptr || vocab_size == 0 || !(temperature >= 0.0f) || !isfinite(temperature) ||
      !isfinite(top_p) || seed == 0) {
    return Status::kBadArgument;
  }
  if (arena_bytes < SamplerArenaBytes(vocab_size)) return Status::kArenaTooSmall;
  unsigned char* base = internal::AlignUp(arena, 4);
  Sampler s;
  s.vocab_size = vocab_size;
  s.temperature = temperature;
  s.top_p = top_p;
  s.rng_state = seed;
  s.probabilities = internal::BytesAs<float>(base);
  s.candidates = internal::BytesAs<uint32_t>(s.probabilities + vocab_size);
  *sampler = s;
  return Status::kOk;
}

int Sample(Sampler* s, const float* logits) noexcept {
  const size_t n = s->vocab_size;
  if (s->temperature == 0.0f || n == 1) return static_cast<int>(Argmax(logits, n));
  for (size_t i = 0; i < n; ++i) s->probabilities[i] = logits[i] / s->temperature;
  if (edgeattn::Softmax(s->probabilities, s->probabilities, 1, n) != edgeattn::Status::kOk) return 0;
  const float coin = RandomF32(&s->rng_state);
  const size_t token = s->top_p <= 0.0f || s->top_p >= 1.0f
                           ? SampleAll(s->probabilities, n, coin)
                           : SampleTopP(s->probabilities, n, s->top_p, s->candidates, coin);
  return static_cast<int>(token);
}

}  // namespace llama2
