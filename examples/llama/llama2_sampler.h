// SPDX-License-Identifier: Apache-2.0
// Choosing the next token from the logits as llama2.c's run.c does: greedy at temperature 0; otherwise the logits
// divided by the temperature, a softmax, one draw from run.c's xorshift* generator, and sampling from the whole
// distribution (top-p <= 0 or >= 1) or from the smallest set of most likely tokens whose probabilities add up to
// more than top-p (nucleus sampling). The same seed gives the same draws as run.c; the chosen tokens match where
// the probabilities do. No allocation: the arena holds vocab_size floats and vocab_size uint32.
#ifndef EDGEATTN_EXAMPLES_LLAMA_LLAMA2_SAMPLER_H_
#define EDGEATTN_EXAMPLES_LLAMA_LLAMA2_SAMPLER_H_

#include <stddef.h>
#include <stdint.h>

#include "llama2.h"

namespace llama2 {

struct Sampler {
  size_t vocab_size = 0;
  float temperature = 0.0f;  // 0: greedy (the first of the largest logits)
  float top_p = 0.0f;
  uint64_t rng_state = 0;          // run.c's xorshift* state: the seed, not 0
  float* probabilities = nullptr;  // [vocab]
  uint32_t* candidates = nullptr;  // [vocab]
};

size_t SamplerArenaBytes(size_t vocab_size) noexcept;  // 0 on overflow

// kBadArgument: vocab_size 0, a temperature that is negative or not finite, top_p not finite, seed 0 (xorshift
// stays at 0); kArenaTooSmall.
[[nodiscard]] Status InitSampler(Sampler* sampler, size_t vocab_size, float temperature, float top_p, uint64_t seed,
                                 void* arena, size_t arena_bytes) noexcept;

// The next token for these logits [vocab_size] (not modified); always in [0, vocab_size), even for NaN logits.
int Sample(Sampler* sampler, const float* logits) noexcept;

// run.c's random_u32 and random_f32 (uniform in [0, 1) with 24 bits), on the sampler's state.
uint32_t RandomU32(uint64_t* state) noexcept;
float RandomF32(uint64_t* state) noexcept;

}  // namespace llama2

#endif  // EDGEATTN_EXAMPLES_LLAMA_LLAMA2_SAMPLER_H_
