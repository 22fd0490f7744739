// SPDX-License-Identifier: Apache-2.0
// Fuzzes the transformer-block kernels on both paths: RmsNorm and LayerNorm (norm.h), ActivationApply,
// GatedActivation and Add (activation.h), Rope and RopeTableFill / RopeWithTable (rope.h) and LinearTransposed
// (linear.h). Random shapes and values (NaN, infinities, subnormals, huge and tiny rows), valid and invalid
// arguments, in-place calls where the header allows them and partial overlaps where it does not. Statuses come
// from each header's contract, in its order; on error no output byte changes; on success nothing is written
// outside the output (canaries) and every element is checked against a long-double reference with the header's
// bound, special rows and values against the header's rules.
#include <stdint.h>

#include "tests/fuzz/fuzz_util.h"

namespace {

using edgeattn::Status;
using edgeattn_fuzz::FuzzTarget;

constexpr float kCanary = -1234.5f;
constexpr size_t kGuard = 8;  // canary floats after every output

const char* g_path = "";

// ULP of the float nearest to `exact` (2^-149 in the subnormal range).
double Ulp(long double exact) {
  const float f = std::fabs(static_cast<float>(exact));
  if (!(f >= FLT_MIN)) return 0x1p-149;
  int e;
  std::frexp(f, &e);
  return std::ldexp(1.0, e - 24);
}

bool Mul(size_t a, size_t b, size_t* r) { return !__builtin_mul_overflow(a, b, r); }

bool FitsFloats(size_t a, size_t b) {
  size_t r;
  return Mul(a, b, &r) && Mul(r, sizeof(float), &r);
}

// A value: mostly in [-range, range], sometimes special (NaN, infinities, subnormals, huge) per the input.
float Value(FuzzedDataProvider& data, float range, bool specials) {
  if (specials) return edgeattn_fuzz::ConsumeFloat(data, range);
  return data.ConsumeFloatingPointInRange<float>(-range, range);
}

// An arena holding inputs and an output with canaries, so that in-place and overlapping calls use one buffer.
struct Arena {
  std::vector<float> v;
  explicit Arena(size_t n) : v(n + kGuard, kCanary) {}
  float* at(size_t i) { return v.data() + i; }
};

bool AllFinite(const float* x, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) return false;
  }
  return true;
}

// ---- Norms ----
void FuzzNorm(FuzzedDataProvider& data, bool layer, int path) {
  const size_t rows = data.ConsumeIntegralInRange<size_t>(0, 4);
  const size_t cols = data.ConsumeIntegralInRange<size_t>(0, 70);
  const bool huge = data.ConsumeIntegralInRange<int>(0, 30) == 0;
  const size_t call_rows = huge ? SIZE_MAX / data.ConsumeIntegralInRange<size_t>(1, 4) : rows;
  const int scale_kind = data.ConsumeIntegralInRange<int>(0, 5);  // 0: tiny rows, 1: huge rows, 2: mean >> spread
  const bool specials = data.ConsumeIntegralInRange<int>(0, 4) == 0;
  const bool with_weight = data.ConsumeBool(), with_bias = layer && data.ConsumeBool();
  float eps;
  switch (data.ConsumeIntegralInRange<int>(0, 9)) {
    case 0:
      eps = -1e-5f;
      break;
    case 1:
      eps = data.ConsumeBool() ? NAN : INFINITY;
      break;
    case 2:
    case 3:
      eps = 0.0f;
      break;
    default:
      eps = data.ConsumeFloatingPointInRange<float>(0.0f, 1e-3f);
  }
  const int alias = data.ConsumeIntegralInRange<int>(0, 6);       // 0: y == x, 1: y = x + 1, 2: y overlaps weight
  const int null_kind = data.ConsumeIntegralInRange<int>(0, 30);  // 0: x, 1: y
  const size_t n = rows * cols;
  // Layout: x [n], weight [cols], bias [cols], y [n] (+ canaries).
  Arena a(n + 2 * cols + n + 1);
  float* x = a.at(0);
  float* w = a.at(n);
  float* b = a.at(n + cols);
  float* y = a.at(n + 2 * cols);
  const float mult = scale_kind == 0 ? 0x1p-140f : scale_kind == 1 ? 0x1p100f : 1.0f;
  const float offset = scale_kind == 2 ? data.ConsumeFloatingPointInRange<float>(-1e4f, 1e4f) : 0.0f;
  const bool constant_row = data.ConsumeIntegralInRange<int>(0, 8) == 0;
  for (size_t i = 0; i < n; ++i) {
    x[i] = constant_row && i % cols != 0 ? x[i - i % cols] : Value(data, 3, specials) * mult + offset;
  }
  for (size_t j = 0; j < cols; ++j) w[j] = data.ConsumeFloatingPointInRange<float>(-2, 2);
  for (size_t j = 0; j < cols; ++j) b[j] = data.ConsumeFloatingPointInRange<float>(-2, 2);
  bool overlap = false;
  if (alias == 0) y = x;
  if (alias == 1 && n >= 2) y = x + 1, overlap = true;
  if (alias == 2 && with_weight && cols >= 1) y = w, overlap = true;
  const float* xp = null_kind == 0 ? nullptr : x;
  float* yp = null_kind == 1 ? nullptr : y;
  const std::vector<float> before = a.v;

  Status expected;
  if (xp == nullptr || yp == nullptr) {
    expected = Status::kNullPointer;
  } else if (call_rows == 0 || cols == 0 || !FitsFloats(call_rows, cols)) {
    expected = Status::kInvalidShape;
  } else if (!(eps >= 0.0f) || std::isinf(eps)) {
    expected = Status::kInvalidArgument;
  } else if (huge) {
    return;  // a shape that fits size_t but no buffer: the caller would be lying about x and y
  } else if (overlap) {
    expected = Status::kOverlap;
  } else {
    expected = Status::kOk;
  }
  const float* wp = with_weight ? w : nullptr;
  const float* bp = with_bias ? b : nullptr;
  Status s;
  if (layer) {
    s = path == 0 ? edgeattn::LayerNorm(xp, call_rows, cols, wp, bp, eps, yp)
                  : edgeattn::scalar::LayerNorm(xp, call_rows, cols, wp, bp, eps, yp);
  } else {
    s = path == 0 ? edgeattn::RmsNorm(xp, call_rows, cols, wp, eps, yp)
                  : edgeattn::scalar::RmsNorm(xp, call_rows, cols, wp, eps, yp);
  }
  const char* name = layer ? "LayerNorm" : "RmsNorm";
  FUZZ_CHECK(s == expected, "%s %s(rows %zu cols %zu eps %g alias %d null %d): status %d, expected %d", g_path, name,
             call_rows, cols, static_cast<double>(eps), alias, null_kind, static_cast<int>(s),
             static_cast<int>(expected));
  if (s != Status::kOk) {
    FUZZ_CHECK(edgeattn_fuzz::SameBits(a.v, before), "%s %s (status %d): something was written", g_path, name,
               static_cast<int>(s));
    return;
  }
  // Nothing but y changed.
  for (size_t i = 0; i < a.v.size(); ++i) {
    const bool in_y = a.v.data() + i >= y && a.v.data() + i < y + n;
    if (!in_y) {
      FUZZ_CHECK(std::memcmp(&a.v[i], &before[i], 4) == 0, "%s %s: float %zu outside y written", g_path, name, i);
    }
  }
  const float* x0 = before.data();  // the inputs as they were (y may have been x)
  const double u = 0x1p-24;
  for (size_t r = 0; r < rows; ++r) {
    const float* xr = x0 + r * cols;
    const float* yr = y + r * cols;
    if (!AllFinite(xr, cols)) {
      for (size_t j = 0; j < cols; ++j) {
        FUZZ_CHECK(std::isnan(yr[j]), "%s %s: row %zu holds inf/NaN, y[%zu] = %a", g_path, name, r, j, yr[j]);
      }
      continue;
    }
    long double max_abs = 0;
    for (size_t j = 0; j < cols; ++j) max_abs = std::max(max_abs, std::fabs(static_cast<long double>(xr[j])));
    if (!layer) {
      long double ss = 0;
      for (size_t j = 0; j < cols; ++j) ss += static_cast<long double>(xr[j]) * xr[j];
      const long double ms = ss / cols + eps;
      for (size_t j = 0; j < cols; ++j) {
        const double wj = with_weight ? w[j] : 1.0;
        if (ms == 0) {
          FUZZ_CHECK(yr[j] == 0.0f, "%s RmsNorm: all-zero row %zu with eps 0: y[%zu] = %a", g_path, r, j, yr[j]);
          continue;
        }
        const long double exact = xr[j] / std::sqrt(ms) * wj;
        if (std::fabs(exact) > 1e38L) continue;
        // + 2^-150: norm.h's underflow term scales with |w|, but the output's own rounding into the subnormal
        // range is off by up to 2^-150 whatever w is (found by this harness; tests/README.md, Fuzzing).
        const double bound = (static_cast<double>(cols) / 2 + 4) * u * static_cast<double>(std::fabs(exact)) +
                             static_cast<double>(cols + 2) * 0x1p-149 * std::fabs(wj) + 0x1p-150;
        FUZZ_CHECK(std::fabs(yr[j] - exact) <= bound, "%s RmsNorm: y[%zu][%zu] = %a, exact %La, bound %g (cols %zu)",
                   g_path, r, j, yr[j], exact, bound, cols);
      }
      continue;
    }
    if (max_abs > 0x1p126L) continue;  // norm.h: the LayerNorm bound is stated for |x| <= 2^126
    // Mean by compensated summation in long double (64-bit significand): far below the bound's 2^-46 term.
    long double sum = 0, comp = 0;
    for (size_t j = 0; j < cols; ++j) {
      const long double t = sum + xr[j];
      comp += std::fabs(sum) >= std::fabs(static_cast<long double>(xr[j])) ? (sum - t) + xr[j] : (xr[j] - t) + sum;
      sum = t;
    }
    const long double mu = (sum + comp) / cols;
    long double var = 0;
    for (size_t j = 0; j < cols; ++j) var += (xr[j] - mu) * (xr[j] - mu);
    var /= cols;
    for (size_t j = 0; j < cols; ++j) {
      const double wj = with_weight ? w[j] : 1.0;
      const double bj = with_bias ? b[j] : 0.0;
      if (var + eps == 0) {
        FUZZ_CHECK(yr[j] == static_cast<float>(bj), "%s LayerNorm: constant row %zu with eps 0: y[%zu] = %a, bias %a",
                   g_path, r, j, yr[j], bj);
        continue;
      }
      const long double rho = 1 / std::sqrt(var + eps);
      const long double exact = (xr[j] - mu) * rho * wj + bj;
      if (std::fabs(exact) > 1e38L || rho > 1e300L) continue;
      const double bound = std::fabs(wj) * static_cast<double>(rho) *
                               ((static_cast<double>(cols) / 2 + 7) * u * static_cast<double>(std::fabs(xr[j] - mu)) +
                                static_cast<double>(cols + 8) * 0x1p-46 * static_cast<double>(max_abs)) +
                           u * static_cast<double>(std::fabs(exact)) +
                           static_cast<double>(cols + 2) * 0x1p-149 * std::fabs(wj) * (1 + static_cast<double>(rho)) +
                           0x1p-150;
      FUZZ_CHECK(std::fabs(yr[j] - exact) <= bound,
                 "%s LayerNorm: y[%zu][%zu] = %a, exact %La, bound %g (cols %zu, mean %La)", g_path, r, j, yr[j], exact,
                 bound, cols, mu);
    }
  }
}

// ---- Activations ----
// act(x) in long double, written from the definitions (the sigmoid forms avoid cancellation for x < 0).
long double ActExact(int act, long double x) {
  switch (act) {
    case 0:
      return x * 0.5L * std::erfc(-x / std::sqrt(2.0L));
    case 1: {
      const long double t = std::sqrt(2.0L / 3.14159265358979323846264338327950288L) * (x + 0.044715L * x * x * x);
      return x / (1 + std::exp(-2 * t));  // 0.5 x (1 + tanh t) = x / (1 + e^-2t)
    }
    case 2:
      return x / (1 + std::exp(-x));
    default:
      return x > 0 ? x : 0;
  }
}
constexpr double kActUlps[4] = {6, 5, 5, 0};
constexpr float kActZeroBelow[3] = {-15.0f, -11.0f, -120.0f};  // activation.h: -0 at and below these

// The header's rules for one element of ActivationApply.
void CheckAct(int act, float x, float got, const char* what, size_t i) {
  if (std::isnan(x)) {
    FUZZ_CHECK(std::isnan(got), "%s %s act %d: NaN gives %a at %zu", g_path, what, act, got, i);
    return;
  }
  if (act == 3) {
    const float want = x > 0 ? x : 0.0f;
    FUZZ_CHECK(std::memcmp(&got, &want, 4) == 0, "%s %s ReLU(%a) = %a at %zu", g_path, what, x, got, i);
    return;
  }
  const float neg_zero = -0.0f;
  if (x == -INFINITY || x == 0.0f || (x <= kActZeroBelow[act])) {
    const float want = x == 0.0f ? x : neg_zero;
    FUZZ_CHECK(std::memcmp(&got, &want, 4) == 0, "%s %s act %d (%a) = %a at %zu, expected %a", g_path, what, act, x,
               got, i, want);
    return;
  }
  if (x == INFINITY) {
    FUZZ_CHECK(got == INFINITY, "%s %s act %d (+inf) = %a at %zu", g_path, what, act, got, i);
    return;
  }
  const long double exact = ActExact(act, x);
  if (std::fabs(static_cast<float>(exact)) >= FLT_MIN) {
    FUZZ_CHECK(std::fabs(got - exact) <= kActUlps[act] * Ulp(exact), "%s %s act %d (%a) = %a at %zu, exact %La", g_path,
               what, act, x, got, i, exact);
  } else {
    FUZZ_CHECK(std::fabs(got) <= FLT_MIN && (got == 0.0f || std::signbit(got) == std::signbit(x)),
               "%s %s act %d (%a) = %a at %zu, exact %La (below FLT_MIN)", g_path, what, act, x, got, i, exact);
  }
}

void FuzzActivation(FuzzedDataProvider& data, int kind, int path) {  // kind 0: apply, 1: gated, 2: add
  const size_t n = data.ConsumeIntegralInRange<size_t>(0, 70);
  const bool huge = data.ConsumeIntegralInRange<int>(0, 30) == 0;
  const size_t call_n = huge ? SIZE_MAX / data.ConsumeIntegralInRange<size_t>(1, 4) : n;
  const int act_raw = data.ConsumeIntegralInRange<int>(0, 12);
  const int act = act_raw <= 3 ? act_raw : act_raw <= 10 ? act_raw % 4 : act_raw == 11 ? 4 : -1;
  const float range = data.PickValueInArray({3.0f, 20.0f, 100.0f, 1e30f});
  const bool specials = data.ConsumeBool();
  // alias 0: none, 1: y == first input, 2: y == second input, 3: partial overlap with the first, 4: with the second
  const int alias = data.ConsumeIntegralInRange<int>(0, 6);
  const int null_kind = data.ConsumeIntegralInRange<int>(0, 24);  // 0..2: one of the pointers
  Arena a(3 * n + 2);
  float* in0 = a.at(0);
  float* in1 = a.at(n + 1);
  float* y = a.at(2 * n + 2);
  for (size_t i = 0; i < n; ++i) in0[i] = Value(data, range, specials);
  for (size_t i = 0; i < n; ++i) in1[i] = Value(data, kind == 2 ? range : 3.0f, specials);
  const int inputs = kind == 0 ? 1 : 2;
  bool overlap = false;
  if (alias == 1) y = in0;
  if (alias == 2 && inputs == 2) y = in1;
  if (alias == 3 && n >= 2) y = in0 + 1, overlap = true;
  if (alias == 4 && n >= 2 && inputs == 2) y = in1 + 1, overlap = true;
  const float* p0 = null_kind == 0 ? nullptr : in0;
  const float* p1 = null_kind == 1 ? nullptr : in1;
  float* yp = null_kind == 2 ? nullptr : y;
  const bool null = p0 == nullptr || yp == nullptr || (inputs == 2 && p1 == nullptr);
  const std::vector<float> before = a.v;

  Status expected;
  if (null && call_n != 0) {
    expected = Status::kNullPointer;
  } else if (!FitsFloats(call_n, 1)) {
    expected = Status::kInvalidShape;
  } else if (kind != 2 && (act < 0 || act > 3)) {
    expected = Status::kInvalidArgument;
  } else if (huge) {
    return;  // fits size_t, but no buffer can hold it
  } else if (overlap) {
    expected = Status::kOverlap;
  } else {
    expected = Status::kOk;
  }
  const edgeattn::Activation ea = static_cast<edgeattn::Activation>(act);
  Status s;
  if (kind == 0) {
    s = path == 0 ? edgeattn::ActivationApply(p0, yp, call_n, ea)
                  : edgeattn::scalar::ActivationApply(p0, yp, call_n, ea);
  } else if (kind == 1) {
    s = path == 0 ? edgeattn::GatedActivation(p0, p1, yp, call_n, ea)
                  : edgeattn::scalar::GatedActivation(p0, p1, yp, call_n, ea);
  } else {
    s = path == 0 ? edgeattn::Add(p0, p1, yp, call_n) : edgeattn::scalar::Add(p0, p1, yp, call_n);
  }
  static const char* const kNames[] = {"ActivationApply", "GatedActivation", "Add"};
  FUZZ_CHECK(s == expected, "%s %s(n %zu act %d alias %d null %d): status %d, expected %d", g_path, kNames[kind],
             call_n, act, alias, null_kind, static_cast<int>(s), static_cast<int>(expected));
  if (s != Status::kOk) {
    FUZZ_CHECK(edgeattn_fuzz::SameBits(a.v, before), "%s %s (status %d): something was written", g_path, kNames[kind],
               static_cast<int>(s));
    return;
  }
  for (size_t i = 0; i < a.v.size(); ++i) {
    const bool in_y = a.v.data() + i >= y && a.v.data() + i < y + n;
    if (!in_y) {
      FUZZ_CHECK(std::memcmp(&a.v[i], &before[i], 4) == 0, "%s %s: float %zu outside y written", g_path, kNames[kind],
                 i);
    }
  }
  const float* x0 = before.data();
  const float* g0 = x0 + (in0 - a.at(0));
  const float* u0 = x0 + (in1 - a.at(0));
  for (size_t i = 0; i < n; ++i) {
    if (kind == 0) {
      CheckAct(act, g0[i], y[i], kNames[0], i);
    } else if (kind == 2) {
      volatile float sum = g0[i];  // one IEEE addition in the harness, to nearest, no contraction
      sum = sum + u0[i];
      const float want = sum;
      FUZZ_CHECK(std::isnan(want) ? std::isnan(y[i]) : std::memcmp(&want, &y[i], 4) == 0,
                 "%s Add: %a + %a = %a, expected %a", g_path, g0[i], u0[i], y[i], want);
    } else {
      const float gate = g0[i], up = u0[i];
      if (!std::isfinite(gate) || !std::isfinite(up)) continue;
      const long double ag = ActExact(act, gate);
      const long double exact = ag * up;
      if (std::fabs(exact) > 1e38L) continue;
      if (act == 3 || std::fabs(static_cast<float>(ag)) >= FLT_MIN) {
        const double bound = kActUlps[act] * Ulp(ag) * std::fabs(up) +
                             (std::fabs(static_cast<float>(exact)) >= FLT_MIN ? Ulp(exact) / 2 : 0x1p-150);
        FUZZ_CHECK(std::fabs(y[i] - exact) <= bound, "%s GatedActivation act %d: (%a, %a) -> %a, exact %La", g_path,
                   act, gate, up, y[i], exact);
      } else {
        // act(gate) below FLT_MIN: the header's rule for act (a value of magnitude <= FLT_MIN), times up.
        FUZZ_CHECK(std::fabs(y[i]) <= FLT_MIN * std::fabs(up) * (1 + 0x1p-23) + 0x1p-149,
                   "%s GatedActivation act %d: (%a, %a) -> %a, act(gate) below FLT_MIN", g_path, act, gate, up, y[i]);
      }
    }
  }
}

// ---- RoPE ----
constexpr size_t kMaxPositions = size_t{1} << 24;

void FuzzRope(FuzzedDataProvider& data, bool table, int path) {
  edgeattn::RopeDesc d;
  d.num_heads = data.ConsumeIntegralInRange<size_t>(0, 3);
  d.head_dim = data.ConsumeIntegralInRange<size_t>(0, 40);
  d.rotary_dim = data.ConsumeIntegralInRange<int>(0, 2) == 0 ? 0 : data.ConsumeIntegralInRange<size_t>(0, 42);
  switch (data.ConsumeIntegralInRange<int>(0, 9)) {
    case 0:
      d.base = data.PickValueInArray({1.0f, 0.5f, -2.0f, NAN, INFINITY});
      break;
    case 1:
    case 2:
      d.base = data.ConsumeFloatingPointInRange<float>(1.0001f, 1e6f);
      break;
    default:
      d.base = 0.0f;
  }
  const int layout = data.ConsumeIntegralInRange<int>(0, 12);
  d.layout = static_cast<edgeattn::RopeLayout>(layout < 6 ? 0 : layout < 12 ? 1 : 2);
  const size_t seq = data.ConsumeIntegralInRange<size_t>(0, 5);
  const bool huge = data.ConsumeIntegralInRange<int>(0, 30) == 0;
  const size_t call_seq = huge ? SIZE_MAX / data.ConsumeIntegralInRange<size_t>(1, 4) : seq;
  size_t first;
  switch (data.ConsumeIntegralInRange<int>(0, 5)) {
    case 0:
      first = kMaxPositions - data.ConsumeIntegralInRange<size_t>(0, 8);  // the end of the valid range
      break;
    case 1:
      first = data.ConsumeBool() ? SIZE_MAX - data.ConsumeIntegralInRange<size_t>(0, 3) : kMaxPositions + 1;
      break;
    case 2:
      first = data.ConsumeIntegralInRange<size_t>(0, kMaxPositions);
      break;
    default:
      first = data.ConsumeIntegralInRange<size_t>(0, 100);
  }
  const float range = data.PickValueInArray({1.0f, 3.0f, 1e20f});
  const bool specials = data.ConsumeIntegralInRange<int>(0, 4) == 0;
  const int null_kind = data.ConsumeIntegralInRange<int>(0, 30);  // 0: x, 1: table data
  const size_t n = seq * d.num_heads * d.head_dim;
  const size_t rd = d.rotary_dim == 0 ? d.head_dim : d.rotary_dim;
  // The table: its own rotary_dim (usually the descriptor's), its positions (usually covering the call).
  size_t t_rd = rd, t_first = first, t_positions = std::max<size_t>(seq, 1);
  if (table) {
    if (data.ConsumeIntegralInRange<int>(0, 10) == 0) t_rd = data.ConsumeIntegralInRange<size_t>(0, 42);
    if (data.ConsumeIntegralInRange<int>(0, 10) == 0) t_first = first + data.ConsumeIntegralInRange<size_t>(0, 2) - 1;
    if (data.ConsumeIntegralInRange<int>(0, 10) == 0) t_positions = data.ConsumeIntegralInRange<size_t>(0, 6);
    if (t_first > kMaxPositions || t_positions > 8 || t_rd > 42) t_first = 0, t_positions = 1;
  }
  const bool overlap_table = table && data.ConsumeIntegralInRange<int>(0, 20) == 0;
  const bool fill_huge_base = table && data.ConsumeIntegralInRange<int>(0, 20) == 0;
  // The fill gets a valid base unless chosen otherwise; RopeWithTable does not read desc.base (any value).
  const bool desc_base_ok = d.base == 0.0f || (std::isfinite(d.base) && d.base > 1.0f);
  const float fill_base = fill_huge_base ? data.PickValueInArray({1.0f, NAN, -1.0f}) : desc_base_ok ? d.base : 0.0f;

  // The table fill, itself a call under test.
  const size_t t_floats = t_positions * t_rd;
  Arena a(n + t_floats + 1);
  float* x = a.at(0);
  float* tab = a.at(n + 1);
  for (size_t i = 0; i < n; ++i) x[i] = Value(data, range, specials);
  if (table) {
    Status expected_fill;
    const bool base_ok = fill_base == 0.0f || (std::isfinite(fill_base) && fill_base > 1.0f);
    if (t_positions == 0 || !FitsFloats(t_positions, t_rd)) {
      expected_fill = Status::kInvalidShape;
    } else if (t_rd == 0 || t_rd % 2 != 0 || !base_ok || t_first + t_positions > kMaxPositions) {
      expected_fill = Status::kInvalidArgument;
    } else {
      expected_fill = Status::kOk;
    }
    const std::vector<float> before = a.v;
    const Status s = edgeattn::RopeTableFill(t_rd, fill_base, t_first, t_positions, tab);
    FUZZ_CHECK(s == expected_fill, "RopeTableFill(rd %zu base %g first %zu positions %zu): status %d, expected %d",
               t_rd, static_cast<double>(fill_base), t_first, t_positions, static_cast<int>(s),
               static_cast<int>(expected_fill));
    FUZZ_CHECK(edgeattn::RopeTableFill(t_rd, fill_base, t_first, t_positions, nullptr) == Status::kNullPointer,
               "RopeTableFill(NULL)");
    if (s != Status::kOk) {
      FUZZ_CHECK(edgeattn_fuzz::SameBits(a.v, before), "RopeTableFill (status %d) wrote", static_cast<int>(s));
      return;  // no usable table
    }
    for (size_t i = 0; i < a.v.size(); ++i) {
      if (a.v.data() + i < tab || a.v.data() + i >= tab + t_floats) {
        FUZZ_CHECK(std::memcmp(&a.v[i], &before[i], 4) == 0, "RopeTableFill wrote outside the table");
      }
    }
    const long double base = fill_base == 0.0f ? 10000.0L : fill_base;
    for (size_t r = 0; r < t_positions; ++r) {
      const long double p = static_cast<long double>(t_first + r);
      for (size_t i = 0; i < t_rd / 2; ++i) {
        const long double angle = p * std::pow(base, -static_cast<long double>(2 * i) / t_rd);
        const long double c = std::cos(angle), sn = std::sin(angle);
        const double slack = (static_cast<double>(p) + 1) * 0x1p-46;
        FUZZ_CHECK(std::fabs(tab[r * t_rd + 2 * i] - c) <= Ulp(c) / 2 + slack &&
                       std::fabs(tab[r * t_rd + 2 * i + 1] - sn) <= Ulp(sn) / 2 + slack,
                   "RopeTableFill: position %zu pair %zu = (%a, %a), exact (%La, %La)", t_first + r, i,
                   tab[r * t_rd + 2 * i], tab[r * t_rd + 2 * i + 1], c, sn);
      }
    }
  }

  float* xp = null_kind == 0 ? nullptr : x;
  if (overlap_table && n != 0) xp = tab;  // x overlapping the table
  const bool base_ok = d.base == 0.0f || (std::isfinite(d.base) && d.base > 1.0f);
  Status expected;
  if (xp == nullptr || (table && null_kind == 1)) {
    expected = Status::kNullPointer;
  } else if (d.num_heads == 0 || d.head_dim == 0 || call_seq == 0 || !FitsFloats(d.num_heads, d.head_dim) ||
             !FitsFloats(call_seq, d.num_heads * d.head_dim)) {
    expected = Status::kInvalidShape;
  } else if (rd % 2 != 0 || rd > d.head_dim || (!table && !base_ok) || layout == 12 || first > kMaxPositions ||
             call_seq > kMaxPositions - first ||
             (table && (t_rd != rd || first < t_first || first - t_first + call_seq > t_positions))) {
    expected = Status::kInvalidArgument;
  } else if (huge) {
    return;
  } else if (table && overlap_table && n != 0) {
    expected = Status::kOverlap;
  } else {
    expected = Status::kOk;
  }
  edgeattn::RopeTableView view{null_kind == 1 ? nullptr : tab, t_rd, t_first, t_positions};
  const std::vector<float> before = a.v;
  Status s;
  if (table) {
    s = path == 0 ? edgeattn::RopeWithTable(d, view, xp, call_seq, first)
                  : edgeattn::scalar::RopeWithTable(d, view, xp, call_seq, first);
  } else {
    s = path == 0 ? edgeattn::Rope(d, xp, call_seq, first) : edgeattn::scalar::Rope(d, xp, call_seq, first);
  }
  const char* name = table ? "RopeWithTable" : "Rope";
  FUZZ_CHECK(s == expected,
             "%s %s(heads %zu dim %zu rotary %zu base %g layout %d seq %zu first %zu; table rd %zu first %zu n %zu, "
             "null %d overlap %d): status %d, expected %d",
             g_path, name, d.num_heads, d.head_dim, d.rotary_dim, static_cast<double>(d.base), layout, call_seq, first,
             t_rd, t_first, t_positions, null_kind, overlap_table, static_cast<int>(s), static_cast<int>(expected));
  if (s != Status::kOk) {
    FUZZ_CHECK(edgeattn_fuzz::SameBits(a.v, before), "%s %s (status %d): something was written", g_path, name,
               static_cast<int>(s));
    return;
  }
  for (size_t i = n; i < a.v.size(); ++i) {
    FUZZ_CHECK(std::memcmp(&a.v[i], &before[i], 4) == 0, "%s %s: float %zu past x written", g_path, name, i);
  }
  const float angle_base = table ? fill_base : d.base;  // the table's angles, not desc.base
  const long double base = angle_base == 0.0f ? 10000.0L : angle_base;
  const size_t half = rd / 2;
  for (size_t t = 0; t < seq; ++t) {
    const long double p = static_cast<long double>(first + t);
    for (size_t h = 0; h < d.num_heads; ++h) {
      const float* x0 = before.data() + (t * d.num_heads + h) * d.head_dim;
      const float* x1 = x + (t * d.num_heads + h) * d.head_dim;
      for (size_t j = rd; j < d.head_dim; ++j) {
        FUZZ_CHECK(std::memcmp(&x0[j], &x1[j], 4) == 0, "%s %s: pass-through element %zu changed", g_path, name, j);
      }
      for (size_t i = 0; i < half; ++i) {
        const size_t ia = layout < 6 ? 2 * i : i, ib = layout < 6 ? 2 * i + 1 : i + half;
        const float xa = x0[ia], xb = x0[ib];
        if (!std::isfinite(xa) || !std::isfinite(xb)) continue;
        const long double angle = p * std::pow(base, -static_cast<long double>(2 * i) / rd);
        const long double c = std::cos(angle), sn = std::sin(angle);
        const long double ea = xa * c - xb * sn, eb = xb * c + xa * sn;
        const double mag = std::fabs(static_cast<double>(xa)) + std::fabs(static_cast<double>(xb));
        if (mag > 1e38) continue;
        const double pos_term = (static_cast<double>(p) + 1) * (table ? 0x1p-46 : 0x1p-44) * mag;
        // Table variant: + 3 * 2^-150, the two products and the sum rounding in the subnormal range (rope.h's
        // term since this harness found it missing; tests/README.md, Fuzzing).
        const double table_underflow = 3 * 0x1p-150;
        const double bound_a = table ? 3 * 0x1p-24 * mag + pos_term + table_underflow : Ulp(ea) + pos_term;
        const double bound_b = table ? 3 * 0x1p-24 * mag + pos_term + table_underflow : Ulp(eb) + pos_term;
        FUZZ_CHECK(std::fabs(x1[ia] - ea) <= bound_a && std::fabs(x1[ib] - eb) <= bound_b,
                   "%s %s: p %zu pair %zu of (%a, %a) -> (%a, %a), exact (%La, %La), bounds %g %g", g_path, name,
                   first + t, i, xa, xb, x1[ia], x1[ib], ea, eb, bound_a, bound_b);
      }
    }
  }
}

// ---- LinearTransposed ----
void FuzzLinearTransposed(FuzzedDataProvider& data, int path) {
  const size_t rows = data.ConsumeIntegralInRange<size_t>(0, 5);
  const size_t in = data.ConsumeIntegralInRange<size_t>(0, 70);
  const size_t out = data.ConsumeIntegralInRange<size_t>(0, 40);
  const bool huge = data.ConsumeIntegralInRange<int>(0, 30) == 0;
  const size_t call_rows = huge ? SIZE_MAX / data.ConsumeIntegralInRange<size_t>(1, 4) : rows;
  const bool with_bias = data.ConsumeBool();
  const float range = data.PickValueInArray({3.0f, 100.0f, 1e-20f, 1e18f});
  const bool specials = data.ConsumeIntegralInRange<int>(0, 4) == 0;
  const int alias = data.ConsumeIntegralInRange<int>(0, 12);  // 1: y overlaps x, 2: weight, 3: bias
  const int null_kind = data.ConsumeIntegralInRange<int>(0, 30);
  Arena a(rows * in + out * in + out + rows * out);
  float* x = a.at(0);
  float* w = a.at(rows * in);
  float* b = a.at(rows * in + out * in);
  float* y = a.at(rows * in + out * in + out);
  for (size_t i = 0; i < rows * in; ++i) x[i] = Value(data, range, specials);
  for (size_t i = 0; i < out * in; ++i) w[i] = Value(data, 3, specials);
  for (size_t i = 0; i < out; ++i) b[i] = Value(data, range, specials);
  bool overlap = false;
  if (alias == 1 && rows * in >= 1 && rows * out >= 1) y = x + (rows * in) / 2, overlap = true;
  if (alias == 2 && out * in >= 1 && rows * out >= 1) y = w + (out * in) / 2, overlap = true;
  if (alias == 3 && with_bias && out >= 1 && rows * out >= 1) y = b, overlap = true;
  const float* xp = null_kind == 0 ? nullptr : x;
  const float* wp = null_kind == 1 ? nullptr : w;
  float* yp = null_kind == 2 ? nullptr : y;
  const float* bp = with_bias ? b : nullptr;
  Status expected;
  if (xp == nullptr || wp == nullptr || yp == nullptr) {
    expected = Status::kNullPointer;
  } else if (call_rows == 0 || in == 0 || out == 0 || !FitsFloats(call_rows, in) || !FitsFloats(call_rows, out) ||
             !FitsFloats(in, out)) {
    expected = Status::kInvalidShape;
  } else if (huge) {
    return;
  } else if (overlap) {
    expected = Status::kOverlap;
  } else {
    expected = Status::kOk;
  }
  const std::vector<float> before = a.v;
  const Status s = path == 0 ? edgeattn::LinearTransposed(xp, call_rows, in, wp, bp, out, yp)
                             : edgeattn::scalar::LinearTransposed(xp, call_rows, in, wp, bp, out, yp);
  FUZZ_CHECK(s == expected,
             "%s LinearTransposed(rows %zu in %zu out %zu bias %d alias %d null %d): status %d, "
             "expected %d",
             g_path, call_rows, in, out, with_bias, alias, null_kind, static_cast<int>(s), static_cast<int>(expected));
  if (s != Status::kOk) {
    FUZZ_CHECK(edgeattn_fuzz::SameBits(a.v, before), "%s LinearTransposed (status %d): something was written", g_path,
               static_cast<int>(s));
    return;
  }
  for (size_t i = 0; i < a.v.size(); ++i) {
    const bool in_y = a.v.data() + i >= y && a.v.data() + i < y + rows * out;
    if (!in_y)
      FUZZ_CHECK(std::memcmp(&a.v[i], &before[i], 4) == 0, "%s LinearTransposed: float %zu written", g_path, i);
  }
  const double nu = static_cast<double>(in + 1) * 0x1p-24;
  for (size_t r = 0; r < rows; ++r) {
    for (size_t o = 0; o < out; ++o) {
      long double exact = with_bias ? b[o] : 0.0f, magnitude = with_bias ? std::fabs(b[o]) : 0.0f;
      for (size_t i = 0; i < in; ++i) {
        exact += static_cast<long double>(x[r * in + i]) * w[o * in + i];
        magnitude += std::fabs(static_cast<long double>(x[r * in + i]) * w[o * in + i]);
      }
      if (!std::isfinite(static_cast<double>(magnitude)) || magnitude > 1e37L) continue;
      const float got = y[r * out + o];
      FUZZ_CHECK(std::fabs(got - exact) <=
                     nu / (1 - nu) * static_cast<double>(magnitude) + static_cast<double>(in + 1) * 0x1p-149,
                 "%s LinearTransposed: y[%zu][%zu] = %a, exact %La", g_path, r, o, got, exact);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  FuzzedDataProvider data(bytes, size);
  FuzzTarget target(data);
  const int kernel = data.ConsumeIntegralInRange<int>(0, 7);
  const int path = data.ConsumeIntegralInRange<int>(0, 1);
  g_path = path == 0 ? target.name() : "scalar path";
  switch (kernel) {
    case 0:
      FuzzNorm(data, false, path);
      break;
    case 1:
      FuzzNorm(data, true, path);
      break;
    case 2:
    case 3:
    case 4:
      FuzzActivation(data, kernel - 2, path);
      break;
    case 5:
      FuzzRope(data, false, path);
      break;
    case 6:
      FuzzRope(data, true, path);
      break;
    default:
      FuzzLinearTransposed(data, path);
  }
  return 0;
}
