// Peer: oneDNN (libdnnl-dev, the v2 API), one thread (OMP_NUM_THREADS=1, set in main). Attention from its
// primitives: matmul for S = Q Kᵀ with the scale as an output scale, the causal mask written as -inf over the
// full S, the softmax primitive in place, matmul for O = P V. Primitives are created once, outside the timing.
#include "bench/bench_util.h"

#if EDGEATTN_BENCH_HAVE_ONEDNN
#include <limits>
#include <oneapi/dnnl/dnnl.hpp>

namespace edgeattn_bench {
namespace {

using dnnl::memory;
using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

dnnl::engine& Engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

memory::dims Dims(size_t a, size_t b) { return {static_cast<memory::dim>(a), static_cast<memory::dim>(b)}; }

// C[m][n] = scale * A[m][k] . B, with B given as [k][n] (tag ab) or as its transpose [n][k] (tag ba).
dnnl::matmul MatMul(size_t m, size_t k, size_t n, bool b_transposed, float scale) {
  const memory::desc a(Dims(m, k), dt::f32, tag::ab), b(Dims(k, n), dt::f32, b_transposed ? tag::ba : tag::ab),
      c(Dims(m, n), dt::f32, tag::ab);
  dnnl::primitive_attr attr;
  if (scale != 1.0f) attr.set_output_scales(0, {scale});
  return dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, c), attr, Engine()));
}

dnnl::softmax_forward RowSoftmax(size_t rows, size_t cols) {
  const memory::desc md(Dims(rows, cols), dt::f32, tag::ab);
  return dnnl::softmax_forward(dnnl::softmax_forward::primitive_desc(
      dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, md, 1), Engine()));
}

memory Wrap(size_t rows, size_t cols, const float* data, bool transposed = false) {
  return memory(memory::desc(Dims(rows, cols), dt::f32, transposed ? tag::ba : tag::ab), Engine(),
                const_cast<float*>(data));
}

void Attention(benchmark::State& state, const AttentionShape& shape) {
  const AttentionInputs& in = AttentionInputs::Get(shape.len, shape.dim);
  const size_t l = shape.len, d = shape.dim;
  Floats s(l * l), out(l * d);
  dnnl::stream stream(Engine());
  const dnnl::matmul scores = MatMul(l, d, l, true, in.scale), values = MatMul(l, l, d, false, 1.0f);
  const dnnl::softmax_forward softmax = RowSoftmax(l, l);
  memory q = Wrap(l, d, in.q.data()), kt = Wrap(d, l, in.k.data(), true), v = Wrap(l, d, in.v.data()),
         sm = Wrap(l, l, s.data()), om = Wrap(l, d, out.data());
  auto run = [&] {
    scores.execute(stream, {{DNNL_ARG_SRC, q}, {DNNL_ARG_WEIGHTS, kt}, {DNNL_ARG_DST, sm}});
    stream.wait();
    if (shape.causal) MaskAboveDiagonal(s.data(), l);
    softmax.execute(stream, {{DNNL_ARG_SRC, sm}, {DNNL_ARG_DST, sm}});
    values.execute(stream, {{DNNL_ARG_SRC, sm}, {DNNL_ARG_WEIGHTS, v}, {DNNL_ARG_DST, om}});
    stream.wait();
  };
  run();
  TimeIfRight(state, AttentionError(in, shape.causal, out.data()), kAttentionTolerance, run,
              AttentionFlops(l, d, shape.causal), 0, 0);
}

void Softmax(benchmark::State& state, size_t n) {
  const Floats& in = SoftmaxInput(n);
  Floats out(n);
  dnnl::stream stream(Engine());
  const dnnl::softmax_forward softmax = RowSoftmax(1, n);
  memory src = Wrap(1, n, in.data()), dst = Wrap(1, n, out.data());
  auto run = [&] {
    softmax.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    stream.wait();
  };
  run();
  SetAccuracy(state, SoftmaxUlp(in, out.data()));
  TimeIfRight(state, SoftmaxError(in, out.data()), kSoftmaxTolerance, run, 0, 0, static_cast<double>(n));
}

}  // namespace

void RegisterOneDnn() {
  for (const AttentionShape& shape : AttentionShapes()) {
    Register(shape.Name(), "onednn", [shape](benchmark::State& s) { Attention(s, shape); });
  }
  for (size_t n : SoftmaxSizes()) {
    Register("softmax/n=" + std::to_string(n), "onednn", [n](benchmark::State& s) { Softmax(s, n); });
  }
}

}  // namespace edgeattn_bench
#else
namespace edgeattn_bench {
void RegisterOneDnn() {}
}  // namespace edgeattn_bench
#endif
