// SPDX-License-Identifier: Apache-2.0
// Activation family benchmarks: GELU (erf and tanh forms), SiLU, ReLU, the gated form (SwiGLU) and the residual
// add over 4096 floats, edgeattn's scalar path against its SIMD path. Each result is checked against a double
// reference before it is timed (bench_util.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "bench/activation_bench.h"
#include "bench/bench_util.h"
#include "edgeattn/activation.h"
#include "edgeattn/status.h"

namespace edgeattn_bench {

using edgeattn::Activation;
using edgeattn::Status;

namespace {

struct ActivationCase {
  const char* name;
  Activation act;
};
constexpr ActivationCase kCases[] = {{"gelu_erf", Activation::kGeluErf},
                                     {"gelu_tanh", Activation::kGeluTanh},
                                     {"silu", Activation::kSilu},
                                     {"relu", Activation::kRelu}};

double Reference(Activation act, double x) {
  switch (act) {
    case Activation::kGeluErf:
      return x * 0.5 * std::erfc(-x * 0.70710678118654752440);
    case Activation::kGeluTanh:
      return x / (1.0 + std::exp(-2.0 * 0.79788456080286535588 * (x + 0.044715 * x * x * x)));
    case Activation::kSilu:
      return x / (1.0 + std::exp(-x));
    case Activation::kRelu:
      return x > 0 ? x : 0.0;
  }
  return 0.0;
}

bool Ok(benchmark::State& state, Status s) {
  if (s == Status::kOk) return true;
  state.SkipWithError(edgeattn::StatusString(s));
  return false;
}

void ApplyBench(benchmark::State& state, bool scalar, Activation act) {
  const Floats& in = ActivationInput();
  Floats out(kActivationSize);
  auto run = [&] {
    return scalar ? edgeattn::scalar::ActivationApply(in.data(), out.data(), kActivationSize, act)
                  : edgeattn::ActivationApply(in.data(), out.data(), kActivationSize, act);
  };
  if (!Ok(state, run())) return;
  SetAccuracy(state, ActivationMaxUlp(act, in.data(), nullptr, out.data()));
  TimeIfRight(state, ActivationMaxError(act, in.data(), nullptr, out.data()), kActivationTolerance, run, 0, 0,
              static_cast<double>(kActivationSize));
}

void GatedBench(benchmark::State& state, bool scalar, Activation act) {
  const Floats& gate = ActivationInput();
  const Floats& up = UpInput();
  Floats out(kActivationSize);
  auto run = [&] {
    return scalar ? edgeattn::scalar::GatedActivation(gate.data(), up.data(), out.data(), kActivationSize, act)
                  : edgeattn::GatedActivation(gate.data(), up.data(), out.data(), kActivationSize, act);
  };
  if (!Ok(state, run())) return;
  SetAccuracy(state, ActivationMaxUlp(act, gate.data(), up.data(), out.data()));
  TimeIfRight(state, ActivationMaxError(act, gate.data(), up.data(), out.data()), kActivationTolerance, run, 0, 0,
              static_cast<double>(kActivationSize));
}

void AddBench(benchmark::State& state, bool scalar) {
  const Floats& a = ActivationInput();
  const Floats& b = UpInput();
  Floats out(kActivationSize);
  auto run = [&] {
    return scalar ? edgeattn::scalar::Add(a.data(), b.data(), out.data(), kActivationSize)
                  : edgeattn::Add(a.data(), b.data(), out.data(), kActivationSize);
  };
  if (!Ok(state, run())) return;
  double worst = 0;
  for (size_t i = 0; i < kActivationSize; ++i) {
    // The float sum is correctly rounded: compare bits with the double sum rounded once (exact here: the
    // exponents of a and b differ by less than 29).
    const float exact = static_cast<float>(static_cast<double>(a[i]) + static_cast<double>(b[i]));
    if (out[i] != exact) worst = std::numeric_limits<double>::infinity();
  }
  // 12 bytes per element: two loads and a store.
  TimeIfRight(state, worst, 0.0, run, 0, 12.0 * kActivationSize, static_cast<double>(kActivationSize));
}

}  // namespace

const Floats& ActivationInput() {
  static const Floats in = Random(kActivationSize, -8, 8, 601);
  return in;
}
const Floats& UpInput() {
  static const Floats up = Random(kActivationSize, -2, 2, 602);
  return up;
}

double ActivationMaxError(Activation act, const float* x, const float* up, const float* y) {
  double worst = 0;
  for (size_t i = 0; i < kActivationSize; ++i) {
    const double exact = Reference(act, x[i]) * (up != nullptr ? static_cast<double>(up[i]) : 1.0);
    const double error = std::fabs(y[i] - exact) / std::max(std::fabs(exact), 1e-30);
    worst = std::isnan(error) ? std::numeric_limits<double>::infinity() : std::max(worst, error);
  }
  return worst;
}

double ActivationMaxAbsError(Activation act, const float* x, const float* y) {
  double worst = 0;
  for (size_t i = 0; i < kActivationSize; ++i) {
    const double exact = Reference(act, x[i]);
    const double error = std::fabs(y[i] - exact) / std::max(std::fabs(exact), 1.0);
    worst = std::isnan(error) ? std::numeric_limits<double>::infinity() : std::max(worst, error);
  }
  return worst;
}

double ActivationMaxUlp(Activation act, const float* x, const float* up, const float* y) {
  std::vector<double> ref(kActivationSize);
  for (size_t i = 0; i < kActivationSize; ++i) {
    ref[i] = Reference(act, x[i]) * (up != nullptr ? static_cast<double>(up[i]) : 1.0);
  }
  return MaxUlpError(y, ref.data(), kActivationSize);
}

void RegisterActivation() {
  const std::string n = "/n=" + std::to_string(kActivationSize);
  for (bool scalar : {true, false}) {
    const std::string impl = scalar ? "scalar" : "simd";
    for (const ActivationCase& c : kCases) {
      const Activation act = c.act;
      Register(std::string("activation/") + c.name + n, impl,
               [scalar, act](benchmark::State& s) { ApplyBench(s, scalar, act); });
    }
    Register("gated_activation/silu" + n, impl,
             [scalar](benchmark::State& s) { GatedBench(s, scalar, Activation::kSilu); });
    Register("gated_activation/gelu_erf" + n, impl,
             [scalar](benchmark::State& s) { GatedBench(s, scalar, Activation::kGeluErf); });
    Register("add" + n, impl, [scalar](benchmark::State& s) { AddBench(s, scalar); });
  }
}

}  // namespace edgeattn_bench
