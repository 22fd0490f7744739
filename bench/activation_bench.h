// SPDX-License-Identifier: Apache-2.0
// The activation family's benchmark inputs and error measures, shared by edgeattn's paths (activation_bench.cc)
// and the Eigen peer (peer_eigen.cc).
#ifndef EDGEATTN_BENCH_ACTIVATION_BENCH_H_
#define EDGEATTN_BENCH_ACTIVATION_BENCH_H_

#include <cstddef>

#include "bench/bench_util.h"
#include "edgeattn/activation.h"

namespace edgeattn_bench {

constexpr size_t kActivationSize = 4096;
// edgeattn's paths: max relative error (against the larger of |reference| and 1e-30, so that flushed tails do
// not count). GELU and SiLU promise a few ULP; 1e-5 only catches a wrong result.
constexpr double kActivationTolerance = 1e-5;

// Inputs as a transformer's MLP sees them: roughly N(0, 3^2), here uniform in [-8, 8]; up in [-2, 2].
const Floats& ActivationInput();
const Floats& UpInput();

// Max relative error of y = act(x) (times up, if not null) against a double reference.
double ActivationMaxError(edgeattn::Activation act, const float* x, const float* up, const float* y);
// The same with errors taken relative to max(|reference|, 1): what a peer that writes GELU as
// 0.5 x (1 + erf(x / sqrt 2)) can meet (that form cancels for negative x: e.g. gelu(-8) ~ -5e-15 comes out as 0).
// The peer rows are timed only if they are right in this weaker sense; their relative accuracy is not edgeattn's.
double ActivationMaxAbsError(edgeattn::Activation act, const float* x, const float* y);
// The worst element's error in ULP of the double reference (bench_util.h, MaxUlpError): the accuracy column, the
// same measure for edgeattn and the peer.
double ActivationMaxUlp(edgeattn::Activation act, const float* x, const float* up, const float* y);

}  // namespace edgeattn_bench

#endif  // EDGEATTN_BENCH_ACTIVATION_BENCH_H_
