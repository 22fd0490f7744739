// SPDX-License-Identifier: Apache-2.0
// linear_q8's benchmarks (issue 30): int8 weights against float weights on the same shape.
//
// Cases "linear_q8/<act>/rows=<R>,in=<I>,out=<O>[,cold]", act q8 (ACT_Q8) or f32 (ACT_F32), group size 32 (ggml
// q8_0; llama2.c's files use 32 or 64), W [out][in] N(0, 0.05^2), x and the bias N(0, 1). Implementations:
//   scalar, simd  edgeattn's two paths (scalar only on the hot cases: its 4096 x 4096 call takes tens of ms);
//   float         edgeattn's linear_transposed on the float weights the int8 ones were quantised from: the pair
//                 "simd~float" has ratio = float time / int8 time (the goals are int8 / float <= 0.32x
//                 cold, 0.5x hot, i.e. ratio >= 3.1 and >= 2);
//   onednn        oneDNN's s8 matmul (peer_onednn.cc), where it is built.
// Cold calls rotate through copies of the weights filling 256 MiB (both the int8 and the float copies), more than
// the last-level cache, so every call reads its weights from DRAM; the two calls of a pair take turns.
// Each implementation is checked before it is timed: relative L2 error per row against the double product with
// the float weights, 2e-2 for ACT_Q8 and the int8 peers (quantising x and W costs about 0.5%), 1e-5 for ACT_F32
// against the dequantised weights and for float against the float weights.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "bench/linear_q8_bench.h"
#include "edgeattn/edgeattn.h"
#include "edgeattn/edgeattn.hpp"

namespace edgeattn_bench {

std::string Q8Shape::Name(bool act_q8) const {
  return std::string("linear_q8/") + (act_q8 ? "q8" : "f32") + "/rows=" + std::to_string(rows) +
         ",in=" + std::to_string(in) + ",out=" + std::to_string(out) + (cold ? ",cold" : "");
}

std::vector<Q8Shape> Q8Shapes() { return {{1, 4096, 4096, true}, {1, 1024, 1024, false}, {64, 1024, 1024, false}}; }

namespace {
constexpr size_t kQ8BenchGroup = 32;
constexpr size_t kColdPool = size_t{256} << 20;
}  // namespace

const Q8Inputs& Q8Inputs::Get(const Q8Shape& s) {
  static std::vector<std::unique_ptr<Q8Inputs>> all;
  for (auto& in : all) {
    if (in->shape.rows == s.rows && in->shape.in == s.in && in->shape.out == s.out && in->shape.cold == s.cold) {
      return *in;
    }
  }
  all.push_back(std::unique_ptr<Q8Inputs>(new Q8Inputs(s)));
  return *all.back();
}

Q8Inputs::Q8Inputs(const Q8Shape& s) : shape(s), group(kQ8BenchGroup) {
  x = Random(s.rows * s.in, -2.0f, 2.0f, 901);
  b = Random(s.out, -1.0f, 1.0f, 902);
  const size_t n = s.out * s.in, groups = s.in / group;
  const size_t q_bytes = n + n / group * sizeof(float);
  q_copies = s.cold ? std::max<size_t>(2, kColdPool / q_bytes) : 1;
  w_copies = s.cold ? std::max<size_t>(2, kColdPool / (n * sizeof(float))) : 1;
  w.resize(w_copies * n);
  q.resize(q_copies * n);
  scale.resize(q_copies * n / group);
  for (size_t c = 0; c < std::max(q_copies, w_copies); ++c) {
    const Floats wc = Random(n, -0.1f, 0.1f, 903 + static_cast<uint32_t>(c));
    if (c < w_copies) std::copy(wc.begin(), wc.end(), w.begin() + static_cast<ptrdiff_t>(c * n));
    if (c < q_copies) {
      if (edgeattn_q8_quantize(wc.data(), s.out, s.in, group, &q[c * n], &scale[c * n / group]) != EDGEATTN_OK) {
        q.clear();
      }
    }
  }
  // References for copy 0: the float weights, and the dequantised ones (ACT_F32's bound is against those).
  Floats wt(n), wdq(n);
  for (size_t o = 0; o < s.out; ++o) {
    for (size_t i = 0; i < s.in; ++i) {
      wt[i * s.out + o] = w[o * s.in + i];
      wdq[i * s.out + o] = static_cast<float>(q[o * s.in + i]) * scale[o * groups + i / group];
    }
  }
  reference = ReferenceLinear(x.data(), s.rows, s.in, wt.data(), b.data(), s.out);
  dequantized_reference = ReferenceLinear(x.data(), s.rows, s.in, wdq.data(), b.data(), s.out);
}

size_t Q8Inputs::Copy(size_t turn, bool int8) const { return turn % (int8 ? q_copies : w_copies); }

edgeattn_q8_matrix Q8Inputs::Matrix(size_t copy) const {
  const size_t n = shape.out * shape.in;
  return edgeattn_q8_matrix{&q[copy * n], &scale[copy * n / group], shape.out, shape.in, group};
}

size_t Q8NextTurn() {
  static size_t turn = 0;
  return ++turn;
}

namespace {

void RunQ8(benchmark::State& state, const Q8Shape& s, bool act_q8, bool scalar) {
  const Q8Inputs& in = Q8Inputs::Get(s);
  if (in.q.empty()) {
    state.SkipWithError("quantisation failed");
    return;
  }
  const edgeattn_q8_activations act = act_q8 ? EDGEATTN_Q8_ACT_Q8 : EDGEATTN_Q8_ACT_F32;
  const edgeattn_q8_matrix m0 = in.Matrix(0);
  std::vector<unsigned char, CacheAligned<unsigned char>> ws(edgeattn_linear_q8_workspace_size(s.rows, &m0, act));
  Floats y(s.rows * s.out);
  auto call = [&](size_t copy) {
    const edgeattn_q8_matrix m = in.Matrix(copy);
    edgeattn::Q8Matrix cm{m.q, m.scale, m.out_features, m.in_features, m.group_size};
    const auto cact = static_cast<edgeattn::Q8Activations>(act);
    return static_cast<edgeattn_status>(
        scalar ? edgeattn::scalar::LinearQ8(in.x.data(), s.rows, cm, in.b.data(), cact, y.data(), ws.data(), ws.size())
               : edgeattn::LinearQ8(in.x.data(), s.rows, cm, in.b.data(), cact, y.data(), ws.data(), ws.size()));
  };
  if (call(0) != EDGEATTN_OK) {
    state.SkipWithError("linear_q8 failed");
    return;
  }
  const double error = act_q8 ? MaxRelativeRowError(y.data(), in.reference, s.rows, s.out)
                              : MaxRelativeRowError(y.data(), in.dequantized_reference, s.rows, s.out);
  const size_t n = s.out * s.in;
  TimeIfRight(
      state, error, act_q8 ? 2e-2 : 1e-5, [&] { return call(in.Copy(Q8NextTurn(), true)); },
      2.0 * static_cast<double>(s.rows * n), static_cast<double>(n + n / in.group * 4), 0);
}

void RunFloat(benchmark::State& state, const Q8Shape& s) {
  const Q8Inputs& in = Q8Inputs::Get(s);
  const size_t n = s.out * s.in;
  Floats y(s.rows * s.out);
  auto call = [&](size_t copy) {
    return edgeattn::LinearTransposed(in.x.data(), s.rows, s.in, &in.w[copy * n], in.b.data(), s.out, y.data());
  };
  if (call(0) != edgeattn::Status::kOk) {
    state.SkipWithError("linear_transposed failed");
    return;
  }
  TimeIfRight(
      state, MaxRelativeRowError(y.data(), in.reference, s.rows, s.out), kLinearTolerance,
      [&] { return call(in.Copy(Q8NextTurn(), false)); }, 2.0 * static_cast<double>(s.rows * n),
      static_cast<double>(n * 4), 0);
}

}  // namespace

void RegisterLinearQ8() {
  for (const Q8Shape& s : Q8Shapes()) {
    for (bool act_q8 : {true, false}) {
      const std::string name = s.Name(act_q8);
      if (!s.cold) Register(name, "scalar", [=](benchmark::State& st) { RunQ8(st, s, act_q8, true); });
      Register(name, "simd", [=](benchmark::State& st) { RunQ8(st, s, act_q8, false); });
      Register(name, "float", [=](benchmark::State& st) { RunFloat(st, s); });
      RegisterLinearQ8OneDnn(name, s);
    }
  }
}

}  // namespace edgeattn_bench
