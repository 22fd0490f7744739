// Scalar path vs SIMD path for every kernel, in one run (the ratio is what to read; absolute times on a shared
// machine move). The full suite with peers, roofline and report is the benchmark issue's work.
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <vector>

#include "edgeattn/edgeattn.hpp"

namespace {

using edgeattn::Status;

std::vector<float> RandomVector(size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(engine);
  return v;
}

void Check(Status s, benchmark::State& state) {
  if (s != Status::kOk) state.SkipWithError(edgeattn::StatusString(s));
}

template <bool kScalar>
void BM_Dot(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const std::vector<float> a = RandomVector(n, -1, 1, 1), b = RandomVector(n, -1, 1, 2);
  float r = 0;
  for (auto _ : state) {
    Check(kScalar ? edgeattn::scalar::Dot(a.data(), b.data(), n, &r) : edgeattn::Dot(a.data(), b.data(), n, &r), state);
    benchmark::DoNotOptimize(r);
  }
  state.counters["ns/elem"] = benchmark::Counter(
      static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

template <bool kScalar>
void BM_Exp(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const std::vector<float> in = RandomVector(n, -87, 0, 3);
  std::vector<float> out(n);
  for (auto _ : state) {
    Check(kScalar ? edgeattn::scalar::Exp(in.data(), out.data(), n) : edgeattn::Exp(in.data(), out.data(), n), state);
    benchmark::ClobberMemory();
  }
  state.counters["ns/elem"] = benchmark::Counter(
      static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

template <bool kScalar>
void BM_Softmax(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const std::vector<float> in = RandomVector(n, -10, 10, 4);
  std::vector<float> out(n);
  for (auto _ : state) {
    Check(kScalar ? edgeattn::scalar::Softmax(in.data(), out.data(), 1, n)
                  : edgeattn::Softmax(in.data(), out.data(), 1, n),
          state);
    benchmark::ClobberMemory();
  }
  state.counters["ns/elem"] = benchmark::Counter(
      static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

template <bool kScalar, bool kCausal>
void BM_Attention(benchmark::State& state) {
  const size_t l = static_cast<size_t>(state.range(0)), d = static_cast<size_t>(state.range(1));
  edgeattn::AttentionDesc desc;
  desc.q_len = desc.kv_len = l;
  desc.head_dim = desc.value_dim = d;
  desc.mask = kCausal ? edgeattn::MaskKind::kCausal : edgeattn::MaskKind::kNone;
  const std::vector<float> q = RandomVector(l * d, -1, 1, 5), k = RandomVector(l * d, -1, 1, 6),
                           v = RandomVector(l * d, -1, 1, 7);
  std::vector<float> out(l * d);
  std::vector<unsigned char> ws(edgeattn::AttentionWorkspaceSize(desc));
  for (auto _ : state) {
    Check(kScalar ? edgeattn::scalar::Attention(desc, q.data(), k.data(), v.data(), out.data(), ws.data(), ws.size())
                  : edgeattn::Attention(desc, q.data(), k.data(), v.data(), out.data(), ws.data(), ws.size()),
          state);
    benchmark::ClobberMemory();
  }
  // 4*L*L*d flops (Q K^T and P V, a multiply and an add each), counted in full for causal too.
  state.counters["GFLOP/s"] =
      benchmark::Counter(4.0 * static_cast<double>(l * l * d), benchmark::Counter::kIsIterationInvariantRate);
}

template <bool kScalar>
void BM_Linear(benchmark::State& state) {
  const size_t rows = static_cast<size_t>(state.range(0)), in = static_cast<size_t>(state.range(1)),
               out_f = static_cast<size_t>(state.range(2));
  const std::vector<float> x = RandomVector(rows * in, -1, 1, 8), w = RandomVector(in * out_f, -1, 1, 9),
                           b = RandomVector(out_f, -1, 1, 10);
  std::vector<float> y(rows * out_f);
  for (auto _ : state) {
    Check(kScalar ? edgeattn::scalar::Linear(x.data(), rows, in, w.data(), b.data(), out_f, y.data())
                  : edgeattn::Linear(x.data(), rows, in, w.data(), b.data(), out_f, y.data()),
          state);
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * static_cast<double>(rows * in * out_f), benchmark::Counter::kIsIterationInvariantRate);
}

template <bool kScalar>
void BM_PositionalEncoding(benchmark::State& state) {
  const size_t seq = static_cast<size_t>(state.range(0)), d = static_cast<size_t>(state.range(1));
  std::vector<float> x(seq * d, 0.0f);
  for (auto _ : state) {
    Check(kScalar ? edgeattn::scalar::AddPositionalEncoding(x.data(), seq, d, 0)
                  : edgeattn::AddPositionalEncoding(x.data(), seq, d, 0),
          state);
    benchmark::ClobberMemory();
  }
}

template <bool kScalar>
void BM_FixedAttentionSeedShape(benchmark::State& state) {
  static edgeattn::FixedAttention<4, 4, 8, 8, 1, 1, edgeattn::MaskKind::kCausal> attention;
  static float q[4][8], k[4][8], v[4][8], out[4][8];
  const std::vector<float> r = RandomVector(96, -1, 1, 11);
  for (int i = 0; i < 32; ++i) (&q[0][0])[i] = r[i], (&k[0][0])[i] = r[32 + i], (&v[0][0])[i] = r[64 + i];
  for (auto _ : state) {
    Check(kScalar ? attention.RunScalar(q, k, v, out) : attention.Run(q, k, v, out), state);
    benchmark::ClobberMemory();
  }
}

BENCHMARK_TEMPLATE(BM_Dot, true)->Name("dot/scalar")->Arg(64)->Arg(4096);
BENCHMARK_TEMPLATE(BM_Dot, false)->Name("dot/simd")->Arg(64)->Arg(4096);
BENCHMARK_TEMPLATE(BM_Exp, true)->Name("exp/scalar")->Arg(4096);
BENCHMARK_TEMPLATE(BM_Exp, false)->Name("exp/simd")->Arg(4096);
BENCHMARK_TEMPLATE(BM_Softmax, true)->Name("softmax/scalar")->Arg(16)->Arg(256)->Arg(4096);
BENCHMARK_TEMPLATE(BM_Softmax, false)->Name("softmax/simd")->Arg(16)->Arg(256)->Arg(4096);
BENCHMARK_TEMPLATE(BM_Attention, true, false)->Name("attention/scalar")->Args({4, 8})->Args({64, 64})->Args({256, 64});
BENCHMARK_TEMPLATE(BM_Attention, false, false)->Name("attention/simd")->Args({4, 8})->Args({64, 64})->Args({256, 64});
BENCHMARK_TEMPLATE(BM_Attention, true, true)->Name("attention_causal/scalar")->Args({256, 64});
BENCHMARK_TEMPLATE(BM_Attention, false, true)->Name("attention_causal/simd")->Args({256, 64});
BENCHMARK_TEMPLATE(BM_Linear, true)->Name("linear/scalar")->Args({16, 256, 256});
BENCHMARK_TEMPLATE(BM_Linear, false)->Name("linear/simd")->Args({16, 256, 256});
BENCHMARK_TEMPLATE(BM_PositionalEncoding, true)->Name("positional_encoding/scalar")->Args({64, 256});
BENCHMARK_TEMPLATE(BM_PositionalEncoding, false)->Name("positional_encoding/simd")->Args({64, 256});
BENCHMARK_TEMPLATE(BM_FixedAttentionSeedShape, true)->Name("fixed_attention_4x4x8/scalar");
BENCHMARK_TEMPLATE(BM_FixedAttentionSeedShape, false)->Name("fixed_attention_4x4x8/simd");

}  // namespace

int main(int argc, char** argv) {
  std::printf("edgeattn %s, SIMD target %s\n", edgeattn::Version(), edgeattn::SimdTarget());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
