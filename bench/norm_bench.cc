// SPDX-License-Identifier: Apache-2.0
// The norm family: rms_norm, layer_norm and rope on edgeattn's scalar and SIMD paths, each result checked against
// a double reference before it is timed. Counters: elements (rows * cols, or tokens * heads * rotary dims).
#include "bench/norm_bench.h"

#include <cmath>
#include <map>
#include <memory>

#include "edgeattn/edgeattn.hpp"

#if !EDGEATTN_BENCH_STATIC_DISPATCH
#include "hwy/targets.h"
#endif

namespace edgeattn_bench {

std::string NormShape::Name(const char* kernel) const {
  return std::string(kernel) + "/rows=" + std::to_string(rows) + ",cols=" + std::to_string(cols);
}

std::vector<NormShape> NormShapes() { return {{1, 384}, {64, 384}, {16, 4096}}; }

const NormInputs& NormInputs::Get(const NormShape& shape) {
  static std::map<std::string, std::unique_ptr<const NormInputs>> cache;
  auto& slot = cache[shape.Name("norm")];
  if (!slot) slot.reset(new NormInputs(shape));
  return *slot;
}

NormInputs::NormInputs(const NormShape& s)
    : shape(s),
      x(Random(s.rows * s.cols, -0.5f, 1.5f, 701)),
      weight(Random(s.cols, 0.5f, 1.5f, 702)),
      bias(Random(s.cols, -1, 1, 703)) {}

namespace {

std::vector<double> ReferenceNorm(const NormInputs& in, bool layer) {
  const size_t rows = in.shape.rows, cols = in.shape.cols;
  std::vector<double> y(rows * cols);
  for (size_t r = 0; r < rows; ++r) {
    const float* x = in.x.data() + r * cols;
    double mean = 0;
    if (layer) {
      for (size_t j = 0; j < cols; ++j) mean += x[j];
      mean /= static_cast<double>(cols);
    }
    double squares = 0;
    for (size_t j = 0; j < cols; ++j) squares += (x[j] - mean) * (x[j] - mean);
    const double factor = 1 / std::sqrt(squares / static_cast<double>(cols) + static_cast<double>(kNormEps));
    for (size_t j = 0; j < cols; ++j) {
      y[r * cols + j] = (x[j] - mean) * factor * in.weight[j] + (layer ? static_cast<double>(in.bias[j]) : 0.0);
    }
  }
  return y;
}

struct NormReferences {
  std::map<const NormInputs*, std::vector<double>> rms, layer;
};
NormReferences& References() {
  static NormReferences refs;
  return refs;
}

}  // namespace

double RmsNormError(const NormInputs& in, const float* y) {
  auto& ref = References().rms[&in];
  if (ref.empty()) ref = ReferenceNorm(in, false);
  return MaxRelativeRowError(y, ref, in.shape.rows, in.shape.cols);
}

double LayerNormError(const NormInputs& in, const float* y) {
  auto& ref = References().layer[&in];
  if (ref.empty()) ref = ReferenceNorm(in, true);
  return MaxRelativeRowError(y, ref, in.shape.rows, in.shape.cols);
}

double NormUlp(const NormInputs& in, bool layer, const float* y) {
  auto& ref = layer ? References().layer[&in] : References().rms[&in];
  if (ref.empty()) ref = ReferenceNorm(in, layer);
  if (!layer) return MaxUlpError(y, ref.data(), ref.size());
  std::vector<double> normalised(ref.size());  // y - bias: the part the bias may cancel
  for (size_t i = 0; i < ref.size(); ++i) normalised[i] = ref[i] - static_cast<double>(in.bias[i % in.shape.cols]);
  return MaxUlpError(y, ref.data(), ref.size(), normalised.data());
}

const Floats& TransposedLinearWeights(const LinearInputs& in) {
  static std::map<const LinearInputs*, Floats> cache;
  Floats& wt = cache[&in];
  if (wt.empty()) {
    const LinearShape& s = in.shape;
    wt.resize(s.in * s.out);
    for (size_t i = 0; i < s.in; ++i) {
      for (size_t o = 0; o < s.out; ++o) wt[o * s.in + i] = in.w[i * s.out + o];
    }
  }
  return wt;
}

namespace {

using edgeattn::Status;

class ScopedTarget {
 public:
  explicit ScopedTarget(int64_t target) : forced_(target != 0) {
#if !EDGEATTN_BENCH_STATIC_DISPATCH
    if (forced_) hwy::SetSupportedTargetsForTest(target);
#endif
  }
  ~ScopedTarget() {
#if !EDGEATTN_BENCH_STATIC_DISPATCH
    if (forced_) hwy::SetSupportedTargetsForTest(0);
#endif
  }
  ScopedTarget(const ScopedTarget&) = delete;
  ScopedTarget& operator=(const ScopedTarget&) = delete;

 private:
  bool forced_;
};

bool Ok(benchmark::State& state, Status s) {
  if (s == Status::kOk) return true;
  state.SkipWithError(edgeattn::StatusString(s));
  return false;
}

void RmsNorm(benchmark::State& state, bool scalar, int64_t target, const NormShape& s) {
  ScopedTarget scoped(target);
  const NormInputs& in = NormInputs::Get(s);
  Floats y(s.rows * s.cols);
  auto run = [&] {
    return scalar ? edgeattn::scalar::RmsNorm(in.x.data(), s.rows, s.cols, in.weight.data(), kNormEps, y.data())
                  : edgeattn::RmsNorm(in.x.data(), s.rows, s.cols, in.weight.data(), kNormEps, y.data());
  };
  if (!Ok(state, run())) return;
  SetAccuracy(state, NormUlp(in, false, y.data()));
  TimeIfRight(state, RmsNormError(in, y.data()), 1e-5, run, 0, 0, static_cast<double>(s.rows * s.cols));
}

void LayerNorm(benchmark::State& state, bool scalar, int64_t target, const NormShape& s) {
  ScopedTarget scoped(target);
  const NormInputs& in = NormInputs::Get(s);
  Floats y(s.rows * s.cols);
  auto run = [&] {
    return scalar
               ? edgeattn::scalar::LayerNorm(in.x.data(), s.rows, s.cols, in.weight.data(), in.bias.data(), kNormEps,
                                             y.data())
               : edgeattn::LayerNorm(in.x.data(), s.rows, s.cols, in.weight.data(), in.bias.data(), kNormEps, y.data());
  };
  if (!Ok(state, run())) return;
  SetAccuracy(state, NormUlp(in, true, y.data()));
  TimeIfRight(state, LayerNormError(in, y.data()), 1e-5, run, 0, 0, static_cast<double>(s.rows * s.cols));
}

struct RopeShape {
  size_t seq, heads, dim, first_position;
  std::string Name() const {
    return "rope/seq=" + std::to_string(seq) + ",heads=" + std::to_string(heads) + ",d=" + std::to_string(dim) +
           ",p0=" + std::to_string(first_position);
  }
};

// Rotating by position p and then by -p is the identity; the check instead compares one call against a double
// reference, and the timed calls keep rotating the same buffer (a rotation keeps the values' magnitude).
void Rope(benchmark::State& state, bool scalar, int64_t target, const RopeShape& s) {
  ScopedTarget scoped(target);
  edgeattn::RopeDesc desc;
  desc.num_heads = s.heads;
  desc.head_dim = s.dim;
  desc.layout = edgeattn::RopeLayout::kHalf;
  const Floats x0 = Random(s.seq * s.heads * s.dim, -1, 1, 704);
  Floats x = x0;
  auto run = [&] {
    return scalar ? edgeattn::scalar::Rope(desc, x.data(), s.seq, s.first_position)
                  : edgeattn::Rope(desc, x.data(), s.seq, s.first_position);
  };
  if (!Ok(state, run())) return;
  std::vector<double> ref(x0.size());
  const size_t half = s.dim / 2;
  for (size_t t = 0; t < s.seq; ++t) {
    for (size_t h = 0; h < s.heads; ++h) {
      const size_t o = (t * s.heads + h) * s.dim;
      for (size_t i = 0; i < half; ++i) {
        const double angle = static_cast<double>(s.first_position + t) *
                             std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(s.dim));
        const double a = x0[o + i], b = x0[o + i + half];
        ref[o + i] = a * std::cos(angle) - b * std::sin(angle);
        ref[o + i + half] = b * std::cos(angle) + a * std::sin(angle);
      }
    }
  }
  TimeIfRight(state, MaxRelativeRowError(x.data(), ref, s.seq * s.heads, s.dim), 1e-5, run, 0, 0,
              static_cast<double>(s.seq * s.heads * s.dim));
}

}  // namespace

void RegisterNormPath(const std::string& impl, bool scalar, int64_t target) {
  for (const NormShape& shape : NormShapes()) {
    Register(shape.Name("rms_norm"), impl,
             [scalar, target, shape](benchmark::State& st) { RmsNorm(st, scalar, target, shape); });
    Register(shape.Name("layer_norm"), impl,
             [scalar, target, shape](benchmark::State& st) { LayerNorm(st, scalar, target, shape); });
  }
  // Decode (one token, llama-7B-like heads; the TinyStories-260K heads of 8), a prefill, and a long position (2^20).
  for (const RopeShape& shape :
       {RopeShape{1, 32, 128, 100}, RopeShape{1, 8, 8, 100}, RopeShape{64, 8, 64, 0}, RopeShape{64, 8, 64, 1 << 20}}) {
    Register(shape.Name(), impl, [scalar, target, shape](benchmark::State& st) { Rope(st, scalar, target, shape); });
  }
}

}  // namespace edgeattn_bench
