// Rotary position embedding (RoPE; Su et al., 2021), applied in place to query or key heads.
#ifndef EDGEATTN_ROPE_H_
#define EDGEATTN_ROPE_H_

#include <stddef.h>

#include "edgeattn/positional_encoding.h"  // kMaxPositions
#include "edgeattn/status.h"

namespace edgeattn {

// Which elements of a head form the rotated pairs. Same values as the C API's edgeattn_rope_layout.
enum class RopeLayout : int {
  kInterleaved = 0,  // pairs (2i, 2i+1): GPT-J, llama2.c, Meta's llama
  kHalf = 1,         // pairs (i, i + rotary_dim/2): GPT-NeoX, Hugging Face llama ("rotate_half")
};

struct RopeDesc {
  size_t num_heads = 0;
  size_t head_dim = 0;
  size_t rotary_dim = 0;  // 0 = head_dim; otherwise even and <= head_dim; elements from rotary_dim on pass through
  float base = 0.0f;      // 0 = 10000; otherwise finite and > 1
  RopeLayout layout = RopeLayout::kInterleaved;
};

// Rotates x [seq_len][num_heads][head_dim] in place. Token t is at position p = first_position + t; pair i
// (0 <= i < rotary_dim/2) of every head turns by the angle p * base^(-2i/rotary_dim):
//   x_a' = x_a cos - x_b sin,   x_b' = x_b cos + x_a sin,
// (x_a, x_b) = (x[2i], x[2i+1]) for kInterleaved, (x[i], x[i + rotary_dim/2]) for kHalf.
//
// The frequency base^(-2i/rotary_dim) is evaluated in double precision (own log and exp, no libm), the angle
// p * frequency is formed and reduced modulo pi/2 in double precision, so a long position keeps its low bits (a
// float product p * frequency is off by up to p * 2^-24 radians: 0.5 rad at p = 2^23), and sin/cos are the
// positional encoding's double-precision polynomials. The rotation is evaluated in double precision and rounded
// once to float. Error bound per output element, for every p < kMaxPositions (2^24):
//   |x' - exact| <= 1 ULP(exact) + (p + 1) * 2^-44 * (|x_a| + |x_b|),
// the second term being the double-precision frequency's error magnified by p (base^(-2i/rotary_dim) has a
// relative error below 2^-46.5 for any float base). The SIMD path computes sin and cos on double vectors, once per
// (token, pair) for all heads; targets without double vectors (ARMv7 NEON) run the scalar loop. On cores without
// a double-precision FPU (Cortex-M4) the double arithmetic is software-emulated: about a hundred double
// operations per (token, pair), shared by all heads.
// Errors: kNullPointer (x null), kInvalidShape (num_heads, head_dim or seq_len 0, or a byte count overflows),
// kInvalidArgument (rotary_dim odd or > head_dim, head_dim odd with rotary_dim 0, base not finite or <= 1 other
// than 0, an unknown layout, first_position + seq_len > kMaxPositions).
[[nodiscard]] Status Rope(const RopeDesc& desc, float* x, size_t seq_len, size_t first_position) noexcept;

namespace scalar {
[[nodiscard]] Status Rope(const RopeDesc& desc, float* x, size_t seq_len, size_t first_position) noexcept;
}  // namespace scalar

}  // namespace edgeattn

#endif  // EDGEATTN_ROPE_H_
