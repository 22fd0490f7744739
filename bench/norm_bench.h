// SPDX-License-Identifier: Apache-2.0
// The norm family's benchmark cases (rms_norm, layer_norm, rope), shared by edgeattn's paths (norm_bench.cc) and
// the Eigen peer (peer_eigen.cc): inputs built once per case, double references, the row error.
#ifndef EDGEATTN_BENCH_NORM_BENCH_H_
#define EDGEATTN_BENCH_NORM_BENCH_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/bench_util.h"

namespace edgeattn_bench {

constexpr float kNormEps = 1e-5f;

struct NormShape {
  size_t rows, cols;
  std::string Name(const char* kernel) const;  // "rms_norm/rows=64,cols=384"
};
std::vector<NormShape> NormShapes();  // one decode row and batches, at Whisper-tiny's and llama-sized widths

// Inputs uniform in [-1, 1] plus 0.5 (a small offset, so that layer_norm's mean matters); weight in [0.5, 1.5],
// bias in [-1, 1].
struct NormInputs {
  static const NormInputs& Get(const NormShape& shape);
  NormShape shape;
  Floats x, weight, bias;

 private:
  explicit NormInputs(const NormShape& shape);
};

// Relative L2 error per row (the worst row) of y against the double reference.
double RmsNormError(const NormInputs& in, const float* y);
double LayerNormError(const NormInputs& in, const float* y);
// The worst element's error in ULP (bench_util.h, MaxUlpError), for the accuracy column.
double NormUlp(const NormInputs& in, bool layer, const float* y);

// W of a linear case stored [out][in], for linear_transposed (built once per case).
const Floats& TransposedLinearWeights(const LinearInputs& in);

// Registers rms_norm, layer_norm and rope for one of edgeattn's paths (kernels_bench.cc's path list).
void RegisterNormPath(const std::string& impl, bool scalar, int64_t target);

}  // namespace edgeattn_bench

#endif  // EDGEATTN_BENCH_NORM_BENCH_H_
