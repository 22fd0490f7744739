// SPDX-License-Identifier: Apache-2.0
// Peer: OpenBLAS (libopenblas-dev), one thread. Attention as BLAS users write it: sgemm for S = Q Kᵀ · scale,
// the causal mask written as -inf over the full S, a row softmax, sgemm for O = P V; decode with two sgemv.
// BLAS has no softmax: this peer's rows go through edgeattn's SIMD softmax (the fastest one available here), so
// the comparison isolates the matrix products.
#include "bench/bench_util.h"
#include "bench/norm_bench.h"

#if EDGEATTN_BENCH_HAVE_OPENBLAS
#include <cblas.h>

#include <algorithm>
#include <limits>

#include "edgeattn/softmax.h"

namespace edgeattn_bench {
namespace {

void Attention(benchmark::State& state, const AttentionShape& shape) {
  const AttentionInputs& in = AttentionInputs::Get(shape.len, shape.dim);
  const int l = static_cast<int>(shape.len), d = static_cast<int>(shape.dim);
  Floats s(shape.len * shape.len), out(shape.len * shape.dim);
  auto run = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, l, l, d, in.scale, in.q.data(), d, in.k.data(), d, 0.0f,
                s.data(), l);
    if (shape.causal) MaskAboveDiagonal(s.data(), shape.len);
    const edgeattn::Status status = edgeattn::Softmax(s.data(), s.data(), shape.len, shape.len);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, l, d, l, 1.0f, s.data(), l, in.v.data(), d, 0.0f, out.data(),
                d);
    return status;
  };
  (void)run();
  TimeIfRight(state, AttentionError(in, shape.causal, out.data()), kAttentionTolerance, run,
              AttentionFlops(shape.len, shape.dim, shape.causal), 0, 0);
}

void Decode(benchmark::State& state, const DecodeShape& shape) {
  const DecodeInputs& in = DecodeInputs::Get(shape);
  const int n = static_cast<int>(shape.keys), d = static_cast<int>(shape.dim);
  Floats s(shape.keys), out(shape.dim);
  auto run = [&](size_t copy) {
    cblas_sgemv(CblasRowMajor, CblasNoTrans, n, d, in.scale, in.K(copy), d, in.q.data(), 1, 0.0f, s.data(), 1);
    const edgeattn::Status status = edgeattn::Softmax(s.data(), s.data(), 1, shape.keys);
    cblas_sgemv(CblasRowMajor, CblasTrans, n, d, 1.0f, in.V(copy), d, s.data(), 1, 0.0f, out.data(), 1);
    return status;
  };
  (void)run(0);
  TimeIfRight(
      state, DecodeError(in, out.data()), kAttentionTolerance, [&] { return run(in.NextCopy()); }, DecodeFlops(shape),
      DecodeBytes(shape), 0);
}

void Linear(benchmark::State& state, const LinearShape& sh) {
  const LinearInputs& in = LinearInputs::Get(sh);
  Floats y(sh.rows * sh.out);
  const int rows = static_cast<int>(sh.rows), k = static_cast<int>(sh.in), cols = static_cast<int>(sh.out);
  auto run = [&] {
    for (size_t r = 0; r < sh.rows; ++r) std::copy(in.b.begin(), in.b.end(), y.begin() + static_cast<long>(r * sh.out));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, cols, k, 1.0f, in.x.data(), k, in.w.data(), cols, 1.0f,
                y.data(), cols);
  };
  run();
  TimeIfRight(state, LinearError(in, y.data()), kLinearTolerance, run, LinearFlops(sh), 0, 0);
}

// linear_transposed: sgemm with B = W [out][in] transposed, as a PyTorch-layout user calls it.
void LinearTransposed(benchmark::State& state, const LinearShape& sh) {
  const LinearInputs& in = LinearInputs::Get(sh);
  const Floats& wt = TransposedLinearWeights(in);
  Floats y(sh.rows * sh.out);
  const int rows = static_cast<int>(sh.rows), k = static_cast<int>(sh.in), cols = static_cast<int>(sh.out);
  auto run = [&] {
    for (size_t r = 0; r < sh.rows; ++r) std::copy(in.b.begin(), in.b.end(), y.begin() + static_cast<long>(r * sh.out));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, cols, k, 1.0f, in.x.data(), k, wt.data(), k, 1.0f,
                y.data(), cols);
  };
  run();
  TimeIfRight(state, LinearError(in, y.data()), kLinearTolerance, run, LinearFlops(sh), 0, 0);
}

}  // namespace

void RegisterOpenBlas() {
  openblas_set_num_threads(1);
  for (const AttentionShape& shape : AttentionShapes()) {
    Register(shape.Name(), "openblas", [shape](benchmark::State& s) { Attention(s, shape); });
  }
  for (const DecodeShape& shape : DecodeShapes()) {
    Register(shape.Name(), "openblas", [shape](benchmark::State& s) { Decode(s, shape); });
  }
  for (const LinearShape& shape : LinearShapes()) {
    Register(shape.Name(), "openblas", [shape](benchmark::State& s) { Linear(s, shape); });
    Register("linear_transposed" + shape.Name().substr(6), "openblas",
             [shape](benchmark::State& s) { LinearTransposed(s, shape); });
  }
}

}  // namespace edgeattn_bench
#else
namespace edgeattn_bench {
void RegisterOpenBlas() {}
}  // namespace edgeattn_bench
#endif
