// SPDX-License-Identifier: Apache-2.0
// edgeattn's benchmarks: the scalar path and the SIMD path of every kernel on the suite's cases
// (bench_util.h), each result checked against the double reference before it is timed.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

#include "bench/bench_util.h"
#include "bench/linear_q8_bench.h"
#include "bench/norm_bench.h"
#include "edgeattn/edgeattn.hpp"

#if !EDGEATTN_BENCH_STATIC_DISPATCH
#include "hwy/targets.h"
#endif

namespace edgeattn_bench {
namespace {

using edgeattn::Status;

// One of edgeattn's paths: the scalar path, the dispatched SIMD path, or the SIMD path forced to one target.
struct Path {
  std::string name;
  bool scalar;
  int64_t target;  // 0: whatever dispatch chooses
};

class ScopedPath {
 public:
  explicit ScopedPath(const Path& path) : forced_(path.target != 0) {
#if !EDGEATTN_BENCH_STATIC_DISPATCH
    if (forced_) hwy::SetSupportedTargetsForTest(path.target);
#endif
  }
  ~ScopedPath() {
#if !EDGEATTN_BENCH_STATIC_DISPATCH
    if (forced_) hwy::SetSupportedTargetsForTest(0);
#endif
  }
  ScopedPath(const ScopedPath&) = delete;
  ScopedPath& operator=(const ScopedPath&) = delete;

 private:
  bool forced_;
};

std::vector<Path> Paths() {
  std::vector<Path> paths = {{"scalar", true, 0}, {"simd", false, 0}};
  const char* env = std::getenv("EDGEATTN_BENCH_TARGETS");
  if (env != nullptr && std::strcmp(env, "all") == 0) {
#if EDGEATTN_BENCH_STATIC_DISPATCH
    std::printf("EDGEATTN_BENCH_TARGETS=all: a static-dispatch build has only its one target\n");
#else
    for (int64_t t : hwy::SupportedAndGeneratedTargets()) {
      paths.push_back({std::string("simd:") + hwy::TargetName(t), false, t});
    }
#endif
  }
  return paths;
}

bool Ok(benchmark::State& state, Status s) {
  if (s == Status::kOk) return true;
  state.SkipWithError(edgeattn::StatusString(s));
  return false;
}

void Attention(benchmark::State& state, const Path& path, const AttentionShape& shape) {
  ScopedPath scoped(path);
  const AttentionInputs& in = AttentionInputs::Get(shape.len, shape.dim);
  edgeattn::AttentionDesc desc;
  desc.q_len = desc.kv_len = shape.len;
  desc.head_dim = desc.value_dim = shape.dim;
  desc.mask = shape.causal ? edgeattn::MaskKind::kCausal : edgeattn::MaskKind::kNone;
  Floats out(shape.len * shape.dim);
  std::vector<unsigned char> ws(edgeattn::AttentionWorkspaceSize(desc));
  auto run = [&] {
    return path.scalar
               ? edgeattn::scalar::Attention(desc, in.q.data(), in.k.data(), in.v.data(), out.data(), ws.data(),
                                             ws.size())
               : edgeattn::Attention(desc, in.q.data(), in.k.data(), in.v.data(), out.data(), ws.data(), ws.size());
  };
  if (!Ok(state, run())) return;
  TimeIfRight(state, AttentionError(in, shape.causal, out.data()), kAttentionTolerance, run,
              AttentionFlops(shape.len, shape.dim, shape.causal), 0, 0);
}

// The compile-time-shape API on the seeds' shape and one model-sized shape.
template <size_t L, size_t D, edgeattn::MaskKind kMask>
void FixedAttention(benchmark::State& state, const Path& path) {
  static edgeattn::FixedAttention<L, L, D, D, 1, 1, kMask> attention;
  alignas(64) static float q[L][D], k[L][D], v[L][D], out[L][D];
  const AttentionInputs& in = AttentionInputs::Get(L, D);
  std::memcpy(q, in.q.data(), sizeof(q));
  std::memcpy(k, in.k.data(), sizeof(k));
  std::memcpy(v, in.v.data(), sizeof(v));
  ScopedPath scoped(path);
  auto run = [&] { return path.scalar ? attention.RunScalar(q, k, v, out) : attention.Run(q, k, v, out); };
  if (!Ok(state, run())) return;
  const bool causal = kMask == edgeattn::MaskKind::kCausal;
  TimeIfRight(state, AttentionError(in, causal, &out[0][0]), kAttentionTolerance, run, AttentionFlops(L, D, causal), 0,
              0);
}

void Decode(benchmark::State& state, const Path& path, const DecodeShape& shape) {
  ScopedPath scoped(path);
  const DecodeInputs& in = DecodeInputs::Get(shape);
  edgeattn::AttentionDesc desc;
  desc.q_len = 1;
  desc.kv_len = shape.keys;
  desc.head_dim = desc.value_dim = shape.dim;
  Floats out(shape.dim);
  std::vector<unsigned char> ws(edgeattn::AttentionWorkspaceSize(desc));
  auto run = [&](size_t copy) {
    return path.scalar
               ? edgeattn::scalar::Attention(desc, in.q.data(), in.K(copy), in.V(copy), out.data(), ws.data(),
                                             ws.size())
               : edgeattn::Attention(desc, in.q.data(), in.K(copy), in.V(copy), out.data(), ws.data(), ws.size());
  };
  if (!Ok(state, run(0))) return;
  TimeIfRight(
      state, DecodeError(in, out.data()), kAttentionTolerance, [&] { return run(in.NextCopy()); }, DecodeFlops(shape),
      DecodeBytes(shape), 0);
}

void Softmax(benchmark::State& state, const Path& path, size_t n) {
  ScopedPath scoped(path);
  const Floats& in = SoftmaxInput(n);
  Floats out(n);
  auto run = [&] {
    return path.scalar ? edgeattn::scalar::Softmax(in.data(), out.data(), 1, n)
                       : edgeattn::Softmax(in.data(), out.data(), 1, n);
  };
  if (!Ok(state, run())) return;
  SetAccuracy(state, SoftmaxUlp(in, out.data()));
  TimeIfRight(state, SoftmaxError(in, out.data()), kSoftmaxTolerance, run, 0, 0, static_cast<double>(n));
}

void Exp(benchmark::State& state, const Path& path) {
  ScopedPath scoped(path);
  const Floats& in = ExpInput();
  Floats out(kExpSize);
  auto run = [&] {
    return path.scalar ? edgeattn::scalar::Exp(in.data(), out.data(), kExpSize)
                       : edgeattn::Exp(in.data(), out.data(), kExpSize);
  };
  if (!Ok(state, run())) return;
  SetAccuracy(state, ExpUlp(in, out.data()));
  TimeIfRight(state, ExpError(in, out.data()), kExpTolerance, run, 0, 0, static_cast<double>(kExpSize));
}

void Dot(benchmark::State& state, const Path& path, size_t n) {
  ScopedPath scoped(path);
  const Floats a = Random(n, -1, 1, 501), b = Random(n, -1, 1, 502);
  float r = 0;
  auto run = [&] {
    const Status s =
        path.scalar ? edgeattn::scalar::Dot(a.data(), b.data(), n, &r) : edgeattn::Dot(a.data(), b.data(), n, &r);
    benchmark::DoNotOptimize(r);
    return s;
  };
  if (!Ok(state, run())) return;
  // Absolute error against the double dot, relative to sum |a b| (the scale of dot.h's bound).
  double exact = 0, magnitude = 0;
  for (size_t i = 0; i < n; ++i) {
    exact += static_cast<double>(a[i]) * b[i];
    magnitude += std::fabs(static_cast<double>(a[i]) * b[i]);
  }
  TimeIfRight(state, std::fabs(r - exact) / magnitude, kLinearTolerance, run, 2.0 * static_cast<double>(n),
              2.0 * static_cast<double>(n * sizeof(float)), static_cast<double>(n));
}

void Linear(benchmark::State& state, const Path& path, const LinearShape& s) {
  ScopedPath scoped(path);
  const LinearInputs& in = LinearInputs::Get(s);
  Floats y(s.rows * s.out);
  auto run = [&] {
    return path.scalar ? edgeattn::scalar::Linear(in.x.data(), s.rows, s.in, in.w.data(), in.b.data(), s.out, y.data())
                       : edgeattn::Linear(in.x.data(), s.rows, s.in, in.w.data(), in.b.data(), s.out, y.data());
  };
  if (!Ok(state, run())) return;
  TimeIfRight(state, LinearError(in, y.data()), kLinearTolerance, run, LinearFlops(s), 0, 0);
}

void PositionalEncoding(benchmark::State& state, const Path& path, size_t seq, size_t dim) {
  ScopedPath scoped(path);
  Floats x(seq * dim, 0.0f);
  auto run = [&] {
    return path.scalar ? edgeattn::scalar::AddPositionalEncoding(x.data(), seq, dim, 0)
                       : edgeattn::AddPositionalEncoding(x.data(), seq, dim, 0);
  };
  if (!Ok(state, run())) return;
  // One call on zeros is PE itself: its largest error against the double formula (the values are in [-1, 1]).
  double worst = 0;
  for (size_t pos = 0; pos < seq; ++pos) {
    for (size_t c = 0; c < dim; ++c) {
      const double angle = static_cast<double>(pos) / std::pow(10000.0, static_cast<double>(c / 2 * 2) / dim);
      worst = std::max(worst, std::fabs(x[pos * dim + c] - (c % 2 ? std::cos(angle) : std::sin(angle))));
    }
  }
  // The timed calls keep adding PE to x (the values grow by at most 1 per call: no overflow in any run).
  TimeIfRight(state, worst, kLinearTolerance, run, 0, 0, static_cast<double>(seq * dim));
}

// The linear cases with W stored [out][in] (the transpose of LinearInputs' W): same inputs, same reference.
std::string LinearTransposedName(const LinearShape& s) { return "linear_transposed" + s.Name().substr(6); }

void LinearTransposed(benchmark::State& state, const Path& path, const LinearShape& s) {
  ScopedPath scoped(path);
  const LinearInputs& in = LinearInputs::Get(s);
  const Floats& wt = TransposedLinearWeights(in);
  Floats y(s.rows * s.out);
  auto run = [&] {
    return path.scalar
               ? edgeattn::scalar::LinearTransposed(in.x.data(), s.rows, s.in, wt.data(), in.b.data(), s.out, y.data())
               : edgeattn::LinearTransposed(in.x.data(), s.rows, s.in, wt.data(), in.b.data(), s.out, y.data());
  };
  if (!Ok(state, run())) return;
  TimeIfRight(state, LinearError(in, y.data()), kLinearTolerance, run, LinearFlops(s), 0, 0);
}

}  // namespace

void RegisterEdgeattn() {
  for (const Path& p : Paths()) {
    for (size_t n : {256, 4096}) {
      Register("dot/n=" + std::to_string(n), p.name, [p, n](benchmark::State& s) { Dot(s, p, n); });
    }
    Register("exp/n=" + std::to_string(kExpSize), p.name, [p](benchmark::State& s) { Exp(s, p); });
    for (size_t n : SoftmaxSizes()) {
      Register("softmax/n=" + std::to_string(n), p.name, [p, n](benchmark::State& s) { Softmax(s, p, n); });
    }
    for (const AttentionShape& shape : AttentionShapes()) {
      Register(shape.Name(), p.name, [p, shape](benchmark::State& s) { Attention(s, p, shape); });
    }
    // The runtime cases' names prefixed: RegisterPairs pairs "fixed_attention/..." with "attention/...".
    Register("fixed_" + AttentionShape{4, 8, false}.Name(), p.name,
             [p](benchmark::State& s) { FixedAttention<4, 8, edgeattn::MaskKind::kNone>(s, p); });
    Register("fixed_" + AttentionShape{4, 8, true}.Name(), p.name,
             [p](benchmark::State& s) { FixedAttention<4, 8, edgeattn::MaskKind::kCausal>(s, p); });
    Register("fixed_" + AttentionShape{16, 64, false}.Name(), p.name,
             [p](benchmark::State& s) { FixedAttention<16, 64, edgeattn::MaskKind::kNone>(s, p); });
    for (const DecodeShape& shape : DecodeShapes()) {
      Register(shape.Name(), p.name, [p, shape](benchmark::State& s) { Decode(s, p, shape); });
    }
    for (const LinearShape& shape : LinearShapes()) {
      Register(shape.Name(), p.name, [p, shape](benchmark::State& s) { Linear(s, p, shape); });
    }
    Register("positional_encoding/seq=64,d=256", p.name,
             [p](benchmark::State& s) { PositionalEncoding(s, p, 64, 256); });
    for (const LinearShape& shape : LinearShapes()) {
      Register(LinearTransposedName(shape), p.name, [p, shape](benchmark::State& s) { LinearTransposed(s, p, shape); });
    }
    RegisterNormPath(p.name, p.scalar, p.target);
  }
}

}  // namespace edgeattn_bench

int main(int argc, char** argv) {
  // Peers run single-threaded. OpenMP (oneDNN) and OpenBLAS read these variables when they are loaded, before
  // main, so when they are missing the program sets them and starts itself again.
  if (std::getenv("OMP_NUM_THREADS") == nullptr || std::getenv("OPENBLAS_NUM_THREADS") == nullptr) {
    setenv("OMP_NUM_THREADS", "1", 0);
    setenv("OPENBLAS_NUM_THREADS", "1", 0);
    execv("/proc/self/exe", argv);  // returns only on failure: then carry on as we are
  }
  std::printf("edgeattn %s, SIMD target %s\n", edgeattn::Version(), edgeattn::SimdTarget());
  benchmark::AddCustomContext("edgeattn_simd_target", edgeattn::SimdTarget());
  // EDGEATTN_BENCH_SPLIT: "off" leaves out the split/ cases (two threads), "only" registers nothing else;
  // report.py runs the two groups in separate processes, pinned to one CPU and to two.
  const char* split_env = std::getenv("EDGEATTN_BENCH_SPLIT");
  const std::string split = split_env != nullptr ? split_env : "";
  if (split != "only") {
    edgeattn_bench::RegisterCalibration();
    edgeattn_bench::RegisterEdgeattn();
    edgeattn_bench::RegisterActivation();
    edgeattn_bench::RegisterKvCache();
    edgeattn_bench::RegisterNarrowHeads();
    edgeattn_bench::RegisterLinearQ8();
    edgeattn_bench::RegisterEigen();
    edgeattn_bench::RegisterOpenBlas();
    edgeattn_bench::RegisterOneDnn();
    edgeattn_bench::RegisterXnnpack();
  }
  if (split != "off") edgeattn_bench::RegisterSplit();
  edgeattn_bench::RegisterModel(split != "only", split != "off");
  edgeattn_bench::RegisterPairs();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
