// SPDX-License-Identifier: Apache-2.0
// Peer: Eigen 3 (libeigen3-dev), what a hand-written Eigen attention looks like: S = Q Kᵀ · scale as a matrix
// product, the causal mask written as -inf over the full S, a row softmax with Eigen's vectorised exp, O = P V.
// Single-threaded (Eigen uses threads only with OpenMP, which this build does not enable).
#include "bench/activation_bench.h"
#include "bench/bench_util.h"
#include "bench/norm_bench.h"

#if EDGEATTN_BENCH_HAVE_EIGEN
#include <Eigen/Dense>
#include <limits>
#include <string>
#include <unsupported/Eigen/SpecialFunctions>  // erf
#include <utility>

namespace edgeattn_bench {
namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMatrix>;

// Row softmax in place.
void SoftmaxRows(RowMatrix& s) {
  const Eigen::VectorXf max = s.rowwise().maxCoeff();
  s = (s.colwise() - max).array().exp().matrix();
  const Eigen::VectorXf inv = s.rowwise().sum().cwiseInverse();
  s = inv.asDiagonal() * s;
}

void Attention(benchmark::State& state, const AttentionShape& shape) {
  const AttentionInputs& in = AttentionInputs::Get(shape.len, shape.dim);
  const ConstMap q(in.q.data(), shape.len, shape.dim), k(in.k.data(), shape.len, shape.dim),
      v(in.v.data(), shape.len, shape.dim);
  RowMatrix s(shape.len, shape.len), out(shape.len, shape.dim);
  auto run = [&] {
    s.noalias() = (q * in.scale) * k.transpose();
    if (shape.causal) {
      s.triangularView<Eigen::StrictlyUpper>().setConstant(-std::numeric_limits<float>::infinity());
    }
    SoftmaxRows(s);
    out.noalias() = s * v;
  };
  run();
  TimeIfRight(state, AttentionError(in, shape.causal, out.data()), kAttentionTolerance, run,
              AttentionFlops(shape.len, shape.dim, shape.causal), 0, 0);
}

void Decode(benchmark::State& state, const DecodeShape& shape) {
  const DecodeInputs& in = DecodeInputs::Get(shape);
  const Eigen::Map<const Eigen::VectorXf> q(in.q.data(), shape.dim);
  Eigen::VectorXf s(shape.keys), out(shape.dim);
  auto run = [&](size_t copy) {
    const ConstMap k(in.K(copy), shape.keys, shape.dim), v(in.V(copy), shape.keys, shape.dim);
    s.noalias() = k * (q * in.scale);
    s = (s.array() - s.maxCoeff()).exp().matrix();
    s /= s.sum();
    out.noalias() = v.transpose() * s;
  };
  run(0);
  TimeIfRight(
      state, DecodeError(in, out.data()), kAttentionTolerance, [&] { run(in.NextCopy()); }, DecodeFlops(shape),
      DecodeBytes(shape), 0);
}

void Softmax(benchmark::State& state, size_t n) {
  const Floats& in = SoftmaxInput(n);
  const Eigen::Map<const Eigen::ArrayXf> x(in.data(), static_cast<Eigen::Index>(n));
  Eigen::ArrayXf y(n);
  auto run = [&] {
    y = (x - x.maxCoeff()).exp();
    y /= y.sum();
  };
  run();
  SetAccuracy(state, SoftmaxUlp(in, y.data()));
  TimeIfRight(state, SoftmaxError(in, y.data()), kSoftmaxTolerance, run, 0, 0, static_cast<double>(n));
}

void Exp(benchmark::State& state) {
  const Floats& in = ExpInput();
  const Eigen::Map<const Eigen::ArrayXf> x(in.data(), kExpSize);
  Eigen::ArrayXf y(kExpSize);
  auto run = [&] { y = x.exp(); };
  run();
  SetAccuracy(state, ExpUlp(in, y.data()));
  TimeIfRight(state, ExpError(in, y.data()), kExpTolerance, run, 0, 0, static_cast<double>(kExpSize));
}

void Linear(benchmark::State& state, const LinearShape& sh) {
  const LinearInputs& in = LinearInputs::Get(sh);
  const ConstMap x(in.x.data(), sh.rows, sh.in), w(in.w.data(), sh.in, sh.out);
  const Eigen::Map<const Eigen::RowVectorXf> b(in.b.data(), sh.out);
  RowMatrix y(sh.rows, sh.out);
  auto run = [&] {
    y.noalias() = x * w;
    y.rowwise() += b;
  };
  run();
  TimeIfRight(state, LinearError(in, y.data()), kLinearTolerance, run, LinearFlops(sh), 0, 0);
}

// The norms as an Eigen user writes them: per row, a squared norm (RMSNorm) or a mean and the mean of squared
// deviations (LayerNorm, two passes), then one coefficient-wise expression.
void RmsNorm(benchmark::State& state, const NormShape& sh) {
  const NormInputs& in = NormInputs::Get(sh);
  const ConstMap x(in.x.data(), sh.rows, sh.cols);
  const Eigen::Map<const Eigen::RowVectorXf> w(in.weight.data(), sh.cols);
  RowMatrix y(sh.rows, sh.cols);
  auto run = [&] {
    for (Eigen::Index r = 0; r < x.rows(); ++r) {
      const float inv = 1.0f / std::sqrt(x.row(r).squaredNorm() / static_cast<float>(sh.cols) + kNormEps);
      y.row(r) = (x.row(r).array() * w.array() * inv).matrix();
    }
  };
  run();
  SetAccuracy(state, NormUlp(in, false, y.data()));
  TimeIfRight(state, RmsNormError(in, y.data()), 1e-5, run, 0, 0, static_cast<double>(sh.rows * sh.cols));
}

void LayerNorm(benchmark::State& state, const NormShape& sh) {
  const NormInputs& in = NormInputs::Get(sh);
  const ConstMap x(in.x.data(), sh.rows, sh.cols);
  const Eigen::Map<const Eigen::RowVectorXf> w(in.weight.data(), sh.cols), b(in.bias.data(), sh.cols);
  RowMatrix y(sh.rows, sh.cols);
  auto run = [&] {
    for (Eigen::Index r = 0; r < x.rows(); ++r) {
      const float mean = x.row(r).mean();
      const Eigen::ArrayXXf centred = x.row(r).array() - mean;
      const float inv = 1.0f / std::sqrt(centred.square().mean() + kNormEps);
      y.row(r) = (centred * inv * w.array() + b.array()).matrix();
    }
  };
  run();
  SetAccuracy(state, NormUlp(in, true, y.data()));
  TimeIfRight(state, LayerNormError(in, y.data()), 1e-5, run, 0, 0, static_cast<double>(sh.rows * sh.cols));
}

// The activations as an Eigen user writes them, PyTorch's formulas on Eigen's vectorised erf, tanh and exp.
void ActivationPeer(benchmark::State& state, edgeattn::Activation act) {
  const Floats& in = ActivationInput();
  const Eigen::Map<const Eigen::ArrayXf> x(in.data(), static_cast<Eigen::Index>(kActivationSize));
  Eigen::ArrayXf y(static_cast<Eigen::Index>(kActivationSize));
  auto run = [&] {
    switch (act) {
      case edgeattn::Activation::kGeluErf:
        y = 0.5f * x * (1.0f + (x * 0.70710678118654752f).erf());
        break;
      case edgeattn::Activation::kGeluTanh:
        y = 0.5f * x * (1.0f + (0.79788456080286536f * (x + 0.044715f * x.cube())).tanh());
        break;
      case edgeattn::Activation::kSilu:
        y = x / (1.0f + (-x).exp());
        break;
      case edgeattn::Activation::kRelu:
        y = x.max(0.0f);
        break;
    }
  };
  run();
  SetAccuracy(state, ActivationMaxUlp(act, in.data(), nullptr, y.data()));
  TimeIfRight(state, ActivationMaxAbsError(act, in.data(), y.data()), kActivationTolerance, run, 0, 0,
              static_cast<double>(kActivationSize));
}

}  // namespace

void RegisterEigen() {
  for (const AttentionShape& shape : AttentionShapes()) {
    Register(shape.Name(), "eigen", [shape](benchmark::State& s) { Attention(s, shape); });
  }
  for (const DecodeShape& shape : DecodeShapes()) {
    Register(shape.Name(), "eigen", [shape](benchmark::State& s) { Decode(s, shape); });
  }
  for (size_t n : SoftmaxSizes()) {
    Register("softmax/n=" + std::to_string(n), "eigen", [n](benchmark::State& s) { Softmax(s, n); });
  }
  Register("exp/n=" + std::to_string(kExpSize), "eigen", Exp);
  for (const LinearShape& shape : LinearShapes()) {
    Register(shape.Name(), "eigen", [shape](benchmark::State& s) { Linear(s, shape); });
  }
  for (const NormShape& shape : NormShapes()) {
    Register(shape.Name("rms_norm"), "eigen", [shape](benchmark::State& s) { RmsNorm(s, shape); });
    Register(shape.Name("layer_norm"), "eigen", [shape](benchmark::State& s) { LayerNorm(s, shape); });
  }
  const std::string n = "/n=" + std::to_string(kActivationSize);
  const std::pair<const char*, edgeattn::Activation> activations[] = {{"gelu_erf", edgeattn::Activation::kGeluErf},
                                                                      {"gelu_tanh", edgeattn::Activation::kGeluTanh},
                                                                      {"silu", edgeattn::Activation::kSilu},
                                                                      {"relu", edgeattn::Activation::kRelu}};
  for (const auto& a : activations) {
    const edgeattn::Activation act = a.second;
    Register(std::string("activation/") + a.first + n, "eigen", [act](benchmark::State& s) { ActivationPeer(s, act); });
  }
}

}  // namespace edgeattn_bench
#else
namespace edgeattn_bench {
void RegisterEigen() {}
}  // namespace edgeattn_bench
#endif
