// SPDX-License-Identifier: Apache-2.0
// Peer: oneDNN (libdnnl-dev, the v2 API), one thread (OMP_NUM_THREADS=1, set in main). Attention from its
// primitives: matmul for S = Q Kᵀ with the scale as an output scale, the causal mask written as -inf over the
// full S, the softmax primitive in place, matmul for O = P V. Primitives are created once, outside the timing.
#include "bench/bench_util.h"
#include "bench/linear_q8_bench.h"

#if EDGEATTN_BENCH_HAVE_ONEDNN
#include <algorithm>
#include <cmath>
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

// ---- linear_q8's peer: oneDNN's int8 matmul, s8 activations x s8 weights -> f32 with the bias, weights quantised
// per output channel (symmetric, max / 127) and stored in the primitive's own layout (reordered once, outside the
// timing), x quantised per tensor by a oneDNN reorder inside the timing (its scale, max|x| / 127, computed once:
// x does not change). Cold calls rotate through weight copies filling 256 MiB, as edgeattn's do.
struct OneDnnQ8Weights {
  std::vector<memory> weights;             // one per copy, in the primitive's layout
  std::vector<std::vector<float>> scales;  // per copy: w_scale[o] * x_scale (the output scales)
  std::vector<Floats> biases;              // per copy: b[o] / scales[o] (oneDNN v2 adds the bias before scaling)
};

void LinearQ8(benchmark::State& state, const Q8Shape& s) {
  const Q8Inputs& in = Q8Inputs::Get(s);
  const size_t n = s.out * s.in;
  const size_t copies = s.cold ? std::max<size_t>(2, (size_t{256} << 20) / n) : 1;
  float x_max = 0.0f;
  for (float v : in.x) x_max = std::max(x_max, std::fabs(v));
  const float x_scale = x_max / 127.0f;
  const memory::desc src_md(Dims(s.rows, s.in), dt::s8, tag::ab), wei_any(Dims(s.in, s.out), dt::s8, tag::any),
      bias_md(Dims(1, s.out), dt::f32, tag::ab), dst_md(Dims(s.rows, s.out), dt::f32, tag::ab);
  dnnl::primitive_attr attr;
  attr.set_output_scales(1 << 1, {DNNL_RUNTIME_F32_VAL});
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, wei_any, bias_md, dst_md), attr, Engine());
  const dnnl::matmul mm(pd);
  dnnl::stream stream(Engine());
  OneDnnQ8Weights w;
  std::vector<int8_t> q(n);
  for (size_t c = 0; c < copies; ++c) {
    // Copy c holds the values of edgeattn's copy c (the same seeds as Q8Inputs).
    const Floats wc = Random(n, -0.1f, 0.1f, 903 + static_cast<uint32_t>(c));
    std::vector<float> sc(s.out);
    for (size_t o = 0; o < s.out; ++o) {
      float m = 0.0f;
      for (size_t i = 0; i < s.in; ++i) m = std::max(m, std::fabs(wc[o * s.in + i]));
      const float ws = m / 127.0f;
      for (size_t i = 0; i < s.in; ++i) q[o * s.in + i] = static_cast<int8_t>(std::nearbyint(wc[o * s.in + i] / ws));
      sc[o] = ws * x_scale;
    }
    memory user(memory::desc(Dims(s.in, s.out), dt::s8, tag::ba), Engine(), q.data());
    memory packed(pd.weights_desc(), Engine());
    dnnl::reorder(user, packed).execute(stream, user, packed);
    stream.wait();
    Floats bc(s.out);
    for (size_t o = 0; o < s.out; ++o) bc[o] = in.b[o] / sc[o];
    w.weights.push_back(packed);
    w.scales.push_back(std::move(sc));
    w.biases.push_back(std::move(bc));
  }
  std::vector<int8_t> qx(s.rows * s.in);
  Floats y(s.rows * s.out);
  memory x_f32 = Wrap(s.rows, s.in, in.x.data()), x_s8(src_md, Engine(), qx.data()),
         dst = Wrap(s.rows, s.out, y.data());
  dnnl::primitive_attr quantize_attr;
  quantize_attr.set_output_scales(0, {1.0f / x_scale});
  const dnnl::reorder quantize(dnnl::reorder::primitive_desc(x_f32, x_s8, quantize_attr));
  auto call = [&](size_t copy) {
    memory scales(memory::desc({static_cast<memory::dim>(s.out)}, dt::f32, tag::a), Engine(), w.scales[copy].data());
    memory bias = Wrap(1, s.out, w.biases[copy].data());
    quantize.execute(stream, x_f32, x_s8);
    mm.execute(stream, {{DNNL_ARG_SRC, x_s8},
                        {DNNL_ARG_WEIGHTS, w.weights[copy]},
                        {DNNL_ARG_BIAS, bias},
                        {DNNL_ARG_DST, dst},
                        {DNNL_ARG_ATTR_OUTPUT_SCALES, scales}});
    stream.wait();
  };
  call(0);
  TimeIfRight(
      state, MaxRelativeRowError(y.data(), in.reference, s.rows, s.out), 2e-2, [&] { call(Q8NextTurn() % copies); },
      2.0 * static_cast<double>(s.rows * n), static_cast<double>(n), 0);
}

}  // namespace

void RegisterLinearQ8OneDnn(const std::string& name, const Q8Shape& shape) {
  if (name.find("/q8/") == std::string::npos) return;  // one int8 peer row per shape, on the ACT_Q8 case
  Register(name, "onednn", [shape](benchmark::State& st) { LinearQ8(st, shape); });
}

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
void RegisterLinearQ8OneDnn(const std::string&, const Q8Shape&) {}
}  // namespace edgeattn_bench
#endif
