// SPDX-License-Identifier: Apache-2.0
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
// relative error below 2^-46.5 for any float base). The bound holds in every rounding mode (the reductions modulo
// ln2 and pi/2 step to the nearest integer under a directed mode) and with flush-to-zero (plus 2^-126 where a
// result is flushed). The SIMD path computes sin and cos on double vectors, once per (token, pair) for all heads;
// targets without double vectors (ARMv7 NEON) run the scalar loop. On cores without a double-precision FPU
// (Cortex-M4) the double arithmetic is software-emulated: about a hundred double operations per (token, pair),
// shared by all heads.
// Errors: kNullPointer (x null), kInvalidShape (num_heads, head_dim or seq_len 0, or a byte count overflows),
// kInvalidArgument (rotary_dim odd or > head_dim, head_dim odd with rotary_dim 0, base not finite or <= 1 other
// than 0, an unknown layout, first_position + seq_len > kMaxPositions).
[[nodiscard]] Status Rope(const RopeDesc& desc, float* x, size_t seq_len, size_t first_position) noexcept;

// ---- Table variant, for cores without a double-precision FPU (Cortex-M4: the double arithmetic above is
// software-emulated): the cos and sin of every (position, pair) angle precomputed once, at start-up
// (RopeTableFill) or at compile time (MakeRopeTable, a constexpr table that a firmware keeps in flash), and
// RopeWithTable rotating with float arithmetic only.
// Table layout: `rotary_dim` floats per position, cos and sin of pair i at [2i] and [2i + 1]; row r holds
// position table_first_position + r.
struct RopeTableView {
  const float* data = nullptr;
  size_t rotary_dim = 0;  // even, >= 2; must equal the descriptor's rotary dimension
  size_t first_position = 0;
  size_t positions = 0;  // rows
};

// Floats a table of `positions` rows needs.
constexpr size_t RopeTableFloats(size_t positions, size_t rotary_dim) { return positions * rotary_dim; }

// Fills table [positions][rotary_dim] for positions first_position ... with the values of MakeRopeTable: cos and
// sin evaluated in double precision as Rope does (to about 2^-50 + p * 2^-50) and rounded once to float, so each
// entry is within 0.5 ULP + (p + 1) * 2^-46 of the exact value. base as in RopeDesc (0 = 10000).
// Errors: kNullPointer, kInvalidShape (positions 0 or a byte count overflows), kInvalidArgument (rotary_dim 0 or
// odd, base not finite or <= 1 other than 0, first_position + positions > kMaxPositions).
[[nodiscard]] Status RopeTableFill(size_t rotary_dim, float base, size_t first_position, size_t positions,
                                   float* table) noexcept;

// Rope with the angles from `table` (desc.base is not read: the table holds the angles). Float arithmetic:
// x_a' = x_a * c - x_b * s, x_b' = x_b * c + x_a * s, each product and sum rounded, with c, s the table's floats:
//   |x' - exact| <= 3 * u * (|x_a| + |x_b|) + (p + 1) * 2^-46 * (|x_a| + |x_b|) + 3 * 2^-150,   u = 2^-24
// (the last term: the two products and the sum rounded in the subnormal range; 3 * 2^-126 on SIMD units that flush
// subnormals to zero, e.g. the Cortex-M55's Helium, where a subnormal x or table value also reads as 0).
// Errors: kNullPointer (x or table.data null), kInvalidShape (as Rope), kInvalidArgument (as Rope, or
// table.rotary_dim other than the descriptor's rotary dimension, or a position of the call outside the table).
// kOverlap: x overlaps the table.
[[nodiscard]] Status RopeWithTable(const RopeDesc& desc, const RopeTableView& table, float* x, size_t seq_len,
                                   size_t first_position) noexcept;

// A compile-time table for positions [0, kPositions) (GCC and Clang evaluate about 10^3 operations per entry;
// raise -fconstexpr-ops-limit for tables of more than about 10^5 entries).
template <size_t kPositions, size_t kRotaryDim>
struct RopeTable {
  static_assert(kPositions >= 1 && kPositions <= kMaxPositions, "positions must be in [1, 2^24]");
  static_assert(kRotaryDim >= 2 && kRotaryDim % 2 == 0, "rotary_dim must be even and >= 2");
  float data[kPositions * kRotaryDim];
  constexpr RopeTableView View() const { return RopeTableView{data, kRotaryDim, 0, kPositions}; }
};

namespace rope_detail {
// Double-precision log, exp, sin and cos in constexpr form (no bit casts): the same steps as the library's own
// runtime helpers (lib/rope/rope_scalar.h, lib/positional_encoding/positional_encoding_scalar.h).
constexpr double kLn2Hi = 0x1.62e42fee00000p-1;
constexpr double kLn2Lo = 1.9082149292705877e-10;
constexpr double kPiOver2A = 0x1.921fb54000000p+0;
constexpr double kPiOver2B = 0x1.10b4612000000p-30;
constexpr double kPiOver2C = -0x1.676733ae8fe48p-60;

constexpr long long Nearest(double v) { return static_cast<long long>(v < 0 ? v - 0.5 : v + 0.5); }

// ln(v), v finite and > 1.
constexpr double Log(double v) {
  long long e = 0;
  while (v >= 2.0) v *= 0.5, ++e;
  if (v > 1.4142135623730951) v *= 0.5, ++e;
  const double z = (v - 1.0) / (v + 1.0), z2 = z * z;
  double series = 0.0;
  for (int k = 23; k >= 3; k -= 2) series = series * z2 + 1.0 / k;
  const double n = static_cast<double>(e);
  return (n * kLn2Hi + 2.0 * (z + z * z2 * series)) + n * kLn2Lo;
}

// e^t for t in [-89, 0].
constexpr double Exp(double t) {
  const long long n = Nearest(t * 1.4426950408889634);
  const double r = (t - static_cast<double>(n) * kLn2Hi) - static_cast<double>(n) * kLn2Lo;
  double p = 0.0, inverse_factorial[14] = {};
  inverse_factorial[0] = 1.0;
  for (int k = 1; k < 14; ++k) inverse_factorial[k] = inverse_factorial[k - 1] / k;
  for (int k = 13; k >= 0; --k) p = p * r + inverse_factorial[k];
  for (long long k = 0; k < -n; ++k) p *= 0.5;
  for (long long k = 0; k < n; ++k) p *= 2.0;
  return p;
}

// cos and sin of an angle in [0, 2^24 * pi/2).
constexpr void SinCos(double angle, double* sin_out, double* cos_out) {
  const long long k = Nearest(angle * 0.6366197723675814);
  const double kd = static_cast<double>(k);
  const double r = ((angle - kd * kPiOver2A) - kd * kPiOver2B) - kd * kPiOver2C;
  const double z = r * r;
  // sin r = r - r^3/3! + ... - r^15/15!, cos r = 1 - r^2/2! + ... + r^16/16!, Horner in z from the top.
  double s = 0.0, c = 0.0, f = 1.0;
  double inverse_factorial[17] = {};
  inverse_factorial[0] = 1.0;
  for (int j = 1; j < 17; ++j) inverse_factorial[j] = (f /= j);
  for (int j = 15; j >= 3; j -= 2) s = s * z + ((j / 2) % 2 != 0 ? -inverse_factorial[j] : inverse_factorial[j]);
  for (int j = 16; j >= 2; j -= 2) c = c * z + ((j / 2) % 2 != 0 ? -inverse_factorial[j] : inverse_factorial[j]);
  const double sr = r + r * z * s, cr = 1.0 + z * c;
  const long long q = k & 3;
  const double sin_abs = (q & 1) != 0 ? cr : sr, cos_abs = (q & 1) != 0 ? sr : cr;
  *sin_out = (q & 2) != 0 ? -sin_abs : sin_abs;
  *cos_out = ((q + 1) & 2) != 0 ? -cos_abs : cos_abs;
}

// Row `position` of a table: cos and sin of position * base^(-2i/rotary_dim), rounded to float.
constexpr void FillRow(double log_base, size_t rotary_dim, size_t position, float* row) {
  for (size_t i = 0; i < rotary_dim / 2; ++i) {
    const double w = i == 0 ? 1.0 : Exp(-(static_cast<double>(2 * i) * log_base) / static_cast<double>(rotary_dim));
    double s = 0.0, c = 0.0;
    SinCos(static_cast<double>(position) * w, &s, &c);
    row[2 * i] = static_cast<float>(c);
    row[2 * i + 1] = static_cast<float>(s);
  }
}
}  // namespace rope_detail

// constexpr RopeTable<512, 64> kTable = MakeRopeTable<512, 64>(10000.0f);  // in flash
template <size_t kPositions, size_t kRotaryDim>
constexpr RopeTable<kPositions, kRotaryDim> MakeRopeTable(float base = 10000.0f) {
  RopeTable<kPositions, kRotaryDim> table{};
  const double log_base = rope_detail::Log(static_cast<double>(base));
  for (size_t p = 0; p < kPositions; ++p) rope_detail::FillRow(log_base, kRotaryDim, p, table.data + p * kRotaryDim);
  return table;
}

namespace scalar {
[[nodiscard]] Status Rope(const RopeDesc& desc, float* x, size_t seq_len, size_t first_position) noexcept;
[[nodiscard]] Status RopeWithTable(const RopeDesc& desc, const RopeTableView& table, float* x, size_t seq_len,
                                   size_t first_position) noexcept;
}  // namespace scalar

}  // namespace edgeattn

#endif  // EDGEATTN_ROPE_H_
