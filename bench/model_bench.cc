// SPDX-License-Identifier: Apache-2.0
// Whole models (issue 31): tokens per second of examples/llama's decoder at the TinyStories shapes, against the
// limit the bytes it must read set, and against a naive C decoder.
//
// Cases "model/<shape>/<weights>/kv=<type>/j=<threads>,<phase>", shapes 260K, 15M, 42M, 110M (llama2.c's
// TinyStories models: dim, hidden, layers, heads, K/V heads, vocabulary, context below) with random weights made
// in process in a version 0 file in memory (shared classifier, as those models); weights "q8" are the same
// matrices quantized into a version 2 file (runq.c's layout, groups of the largest power of two up to 64 dividing
// dim and hidden, as llama2.c's exporter picks; Q8 activations, runq.c's default). KV caches of 256 positions:
//   decode:  positions 32 .. 255 one token per call, after a 32-token prefill (the call rewinds to 32 first);
//   prefill: the 32 tokens in one call (from position 0).
// Implementations: "simd" (the module on edgeattn's dispatched SIMD path, its attention split over j threads of a
// llama2::ThreadPool); for j=2 "one_thread" (the same calls on one thread: the pair's ratio is the threads'
// speedup); for f32 weights, an F32 cache and one thread, "naive" (bench/model_naive.c: plain loops, -O3
// -march=native, one token per call, so its prefill is 32 decode steps). Counters per call: elements = tokens,
// bytes = what decoding must read (every weight once per token: Q8 matrices one byte each plus their scales;
// the embedding's one row, the K and V of every position so far; prefill: the weights once), flops = 2 per weight per
// token (prefill: the classifier's on the last token only, which is all the module computes) plus attention's
// 4 * head_dim per (query head, position). report.py divides decode's bytes by the calibrated bandwidth of the level
// that holds the weights and the cache (L3 where they fit, else DRAM), and for prefill takes the longer of that
// and the flops over the FMA peak: the limit column, as tokens per second.
//
// Before timing, each implementation's logits after the prefill and one decode step are checked against the naive
// decoder in double precision (bench/model_naive_f64.c); Q8 weights against the same float reference, with a
// tolerance for their rounding. Threads (j=2) run in the suite's two-CPU processes.
#include <stdint.h>
#include <string.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "bench/model_naive.h"
#include "edgeattn/linear_q8.h"
#include "examples/llama/llama2.h"
#include "examples/llama/llama2_pool.h"

namespace edgeattn_bench {
namespace {

struct ModelShape {
  const char* name;
  int32_t dim, hidden, layers, heads, kv_heads, vocab, seq_len;
};
const ModelShape kModelShapes[] = {{"260K", 64, 172, 5, 8, 4, 512, 512},
                                   {"15M", 288, 768, 6, 6, 6, 32000, 256},
                                   {"42M", 512, 1376, 8, 8, 8, 32000, 1024},
                                   {"110M", 768, 2048, 12, 12, 12, 32000, 1024}};
constexpr size_t kPrefill = 32, kPositions = 256;
constexpr double kModelTolerance = 1e-4;  // relative L2 of the logits; float decoders measure about 1e-6
// Q8 weights and activations against the float weights' reference: each weight and activation rounded to 1/254 of
// its group's largest; measured 5.5e-3 (260K) and 1.0e-2 (15M) relative L2.
constexpr double kQ8WeightsTolerance = 0.05;

int TokenAt(size_t position, int32_t vocab) {
  return static_cast<int>((position * 7919 + 13) % static_cast<size_t>(vocab));
}

// One shape's file (random weights, uniform with a 1/sqrt(fan-in) spread), its reference logits and its counts.
struct ModelInputs {
  static const ModelInputs& Get(const ModelShape& shape);
  Floats file;  // the version 0 file's bytes, in floats (4-byte aligned)
  size_t bytes = 0;
  std::vector<double> reference;  // logits at position kPrefill after tokens 0 .. kPrefill
  double weight_bytes = 0, flops_per_token = 0;
  double classifier_flops = 0;  // of flops_per_token: the module's prefill runs the classifier on its last token only
  // The same model as a version 2 file (built on first use: the 110M one is 120 MB) and its bytes per token.
  const std::vector<unsigned char>& Q8File() const;
  mutable double q8_weight_bytes = 0;

 private:
  explicit ModelInputs(const ModelShape& s);
  ModelShape shape;
  mutable std::vector<unsigned char> q8_file;
};

ModelInputs::ModelInputs(const ModelShape& s) : shape(s) {
  const size_t dim = s.dim, hidden = s.hidden, layers = s.layers, vocab = s.vocab;
  const size_t kv = dim / s.heads * s.kv_heads, head_dim = dim / s.heads;
  const size_t floats = 7 + vocab * dim + layers * (2 * dim + 2 * dim * dim + 2 * kv * dim + 3 * hidden * dim) + dim +
                        static_cast<size_t>(s.seq_len) * head_dim;
  file.assign(floats, 0.0f);
  bytes = floats * 4;
  const int32_t header[7] = {s.dim, s.hidden, s.layers, s.heads, s.kv_heads, s.vocab, s.seq_len};
  memcpy(file.data(), header, sizeof(header));
  uint32_t state = 0x9E3779B9u ^ static_cast<uint32_t>(floats);
  size_t at = 7;
  auto fill = [&](size_t n, float lo, float hi) {
    for (size_t i = 0; i < n; ++i, ++at) {
      state = state * 1664525u + 1013904223u;
      file[at] = lo + (hi - lo) * static_cast<float>(state >> 8) * 0x1p-24f;
    }
  };
  const float d = 1.0f / std::sqrt(static_cast<float>(dim)), h = 1.0f / std::sqrt(static_cast<float>(hidden));
  fill(vocab * dim, -1.0f, 1.0f);
  fill(layers * dim, 0.8f, 1.2f);                                // rms_att
  fill(layers * (dim * dim + 2 * kv * dim + dim * dim), -d, d);  // wq, wk, wv, wo
  fill(layers * dim, 0.8f, 1.2f);                                // rms_ffn
  fill(layers * hidden * dim, -d, d);                            // w1
  fill(layers * hidden * dim, -h, h);                            // w2
  fill(layers * hidden * dim, -d, d);                            // w3
  fill(dim, 0.8f, 1.2f);                                         // rms_final
  fill(static_cast<size_t>(s.seq_len) * head_dim, -1.0f, 1.0f);  // the legacy RoPE tables (unused)
  const double matrices = static_cast<double>(layers * (2 * dim * dim + 2 * kv * dim + 3 * hidden * dim) + vocab * dim);
  weight_bytes = 4.0 * (matrices + static_cast<double>(layers * 2 * dim + dim + dim));  // + norms, one embedding row
  flops_per_token = 2.0 * matrices;
  classifier_flops = 2.0 * static_cast<double>(vocab * dim);
  naive_llama_f64* m = naive_llama_f64_new(file.data(), bytes, static_cast<int>(kPositions));
  if (m == nullptr) return;
  const double* logits = nullptr;
  for (size_t p = 0; p <= kPrefill; ++p) logits = naive_llama_f64_forward(m, TokenAt(p, s.vocab), static_cast<int>(p));
  reference.assign(logits, logits + vocab);
  naive_llama_f64_delete(m);
}

size_t Q8GroupSize(const ModelShape& s) {
  size_t group = 64;
  while (s.dim % group != 0 || s.hidden % group != 0) group /= 2;
  return group;
}

// runq.c's version 2 layout: the 256-byte header, the norms in float, then each matrix's int8 values followed by
// its group scales: the embedding, then wq, wk, wv, wo, w1, w2, w3 over all layers (shared classifier).
const std::vector<unsigned char>& ModelInputs::Q8File() const {
  if (!q8_file.empty()) return q8_file;
  const ModelShape& s = shape;
  const size_t dim = s.dim, hidden = s.hidden, layers = s.layers, vocab = s.vocab, group = Q8GroupSize(s);
  const size_t kv = dim / s.heads * s.kv_heads;
  std::vector<unsigned char>& f = q8_file;
  auto put = [&f](const void* p, size_t n) {
    const unsigned char* b = static_cast<const unsigned char*>(p);
    f.insert(f.end(), b, b + n);
  };
  const uint32_t magic = 0x616b3432;  // "ak42"
  const int32_t head[8] = {2, s.dim, s.hidden, s.layers, s.heads, s.kv_heads, s.vocab, s.seq_len};
  put(&magic, 4);
  put(head, sizeof(head));
  const unsigned char shared = 1;
  put(&shared, 1);
  const int32_t group32 = static_cast<int32_t>(group);
  put(&group32, 4);
  f.resize(256, 0);
  // Offsets in the version 0 file, in floats.
  const size_t emb = 7, rms_att = emb + vocab * dim, wq = rms_att + layers * dim, wk = wq + layers * dim * dim;
  const size_t wv = wk + layers * kv * dim, wo = wv + layers * kv * dim, rms_ffn = wo + layers * dim * dim;
  const size_t w1 = rms_ffn + layers * dim, w2 = w1 + layers * hidden * dim, w3 = w2 + layers * hidden * dim;
  const size_t rms_final = w3 + layers * hidden * dim;
  put(&file[rms_att], layers * dim * 4);
  put(&file[rms_ffn], layers * dim * 4);
  put(&file[rms_final], dim * 4);
  double matrices = 0;
  auto quantize = [&](size_t at, size_t out, size_t in) {
    const size_t q_at = f.size();
    f.resize(q_at + out * in + out * in / group * 4);
    std::vector<float> scales(out * in / group);
    if (edgeattn::Q8Quantize(&file[at], out, in, group, reinterpret_cast<int8_t*>(&f[q_at]), scales.data()) !=
        edgeattn::Status::kOk) {
      f.clear();
      return false;
    }
    memcpy(&f[q_at + out * in], scales.data(), scales.size() * 4);
    matrices += static_cast<double>(out * in);
    return true;
  };
  bool ok = quantize(emb, vocab, dim);
  const size_t starts[7] = {wq, wk, wv, wo, w1, w2, w3};
  const size_t outs[7] = {dim, kv, kv, dim, hidden, dim, hidden}, ins[7] = {dim, dim, dim, dim, dim, hidden, dim};
  for (size_t m = 0; m < 7 && ok; ++m) {
    for (size_t l = 0; l < layers && ok; ++l) ok = quantize(starts[m] + l * outs[m] * ins[m], outs[m], ins[m]);
  }
  if (!ok) q8_file.clear();
  // Per token: every matrix's bytes and scales (the embedding is the classifier), the norms, one embedding row
  // (dequantized in the arena).
  q8_weight_bytes =
      matrices * (1.0 + 4.0 / static_cast<double>(group)) + 4.0 * static_cast<double>(layers * 2 * dim + 2 * dim);
  return q8_file;
}

const ModelInputs& ModelInputs::Get(const ModelShape& shape) {
  static std::map<std::string, std::unique_ptr<ModelInputs>> cache;
  std::unique_ptr<ModelInputs>& slot = cache[shape.name];
  if (!slot) slot.reset(new ModelInputs(shape));
  return *slot;
}

double LogitError(const ModelInputs& in, const float* logits) {
  if (in.reference.empty()) return INFINITY;
  return MaxRelativeRowError(logits, in.reference, 1, in.reference.size());
}

// Bytes of K and V a decode step at `position` reads (positions 0 .. position), for all layers.
double KvBytes(const ModelShape& s, edgeattn::KvType type, size_t position) {
  const double kv = static_cast<double>(s.dim / s.heads * s.kv_heads);
  const double per_position = type == edgeattn::KvType::kF32   ? 8.0 * kv
                              : type == edgeattn::KvType::kF16 ? 4.0 * kv
                                                               : 2.0 * kv + 8.0 * s.kv_heads;
  return static_cast<double>(s.layers) * per_position * static_cast<double>(position + 1);
}

double ModelAttentionFlops(const ModelShape& s, size_t position) {
  return 4.0 * s.dim * static_cast<double>(position + 1) * s.layers;  // heads x head_dim = dim
}

// The module on this shape with these options, its parts on `threads` threads.
struct ModuleRun {
  std::vector<unsigned char> arena;
  llama2::Model model;
  std::unique_ptr<llama2::ThreadPool> pool;
  bool ok = false;
  ModuleRun(const ModelInputs& in, bool q8, edgeattn::KvType type, size_t threads) {
    const void* file = q8 ? static_cast<const void*>(in.Q8File().data()) : in.file.data();
    const size_t bytes = q8 ? in.Q8File().size() : in.bytes;
    if (bytes == 0) return;
    llama2::Options o;
    o.kv_type = type;
    o.capacity = kPositions;
    o.workers = threads;
    llama2::Config c;
    if (llama2::ReadConfig(file, bytes, &c, nullptr) != llama2::Status::kOk) return;
    arena.resize(llama2::ArenaBytes(c, o));
    ok = llama2::Init(&model, file, bytes, o, arena.data(), arena.size(), nullptr) == llama2::Status::kOk;
    if (threads > 1) {
      pool.reset(new llama2::ThreadPool(threads));
      model.parallel = pool->parallel();
    }
  }
  bool Prefill(const ModelShape& s) {
    std::vector<int> tokens(kPrefill);
    for (size_t p = 0; p < kPrefill; ++p) tokens[p] = TokenAt(p, s.vocab);
    return llama2::Rewind(&model, 0) == llama2::Status::kOk &&
           llama2::Forward(&model, tokens.data(), kPrefill) == llama2::Status::kOk;
  }
  bool Decode(const ModelShape& s, size_t from, size_t to) {
    if (llama2::Rewind(&model, from) != llama2::Status::kOk) return false;
    for (size_t p = from; p < to; ++p) {
      const int token = TokenAt(p, s.vocab);
      if (llama2::Forward(&model, &token, 1) != llama2::Status::kOk) return false;
    }
    return true;
  }
};

benchmark::Counter TokensPerSecond(size_t tokens) {
  return benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsIterationInvariantRate);
}

void ModuleCase(benchmark::State& state, const ModelShape& s, bool q8, edgeattn::KvType type, size_t threads,
                bool decode) {
  const ModelInputs& in = ModelInputs::Get(s);
  ModuleRun run(in, q8, type, threads);
  // The check: prefill, one decode step at position kPrefill, the logits against the double reference. An F16
  // or Q8 cache is checked with 100x the tolerance (its rounding of K and V; kv_cache.h states its error).
  const bool ran = run.ok && run.Prefill(s) && run.Decode(s, kPrefill, kPrefill + 1);
  const double error = ran ? LogitError(in, run.model.logits) : INFINITY;
  const double tolerance = q8                               ? kQ8WeightsTolerance
                           : type == edgeattn::KvType::kF32 ? kModelTolerance
                                                            : 100 * kModelTolerance;
  const double weight_bytes = q8 ? in.q8_weight_bytes : in.weight_bytes;
  double bytes = 0, flops = 0;
  const size_t tokens = decode ? kPositions - kPrefill : kPrefill;
  for (size_t p = decode ? kPrefill : 0; p < (decode ? kPositions : kPrefill); ++p) {
    bytes += decode ? weight_bytes + KvBytes(s, type, p) : 0;
    flops += in.flops_per_token + ModelAttentionFlops(s, p) - (decode ? 0.0 : in.classifier_flops);
  }
  if (!decode) {  // the weights once, the classifier on the last token only (llama2::Forward's logits)
    bytes = weight_bytes + KvBytes(s, type, kPrefill - 1);
    flops += in.classifier_flops;
  }
  bool ok = true;
  TimeIfRight(
      state, error, tolerance, [&] { ok = ok && (decode ? run.Decode(s, kPrefill, kPositions) : run.Prefill(s)); },
      flops, bytes, static_cast<double>(tokens));
  if (!ok) state.SkipWithError("a forward call failed");
  if (!PairActive()) state.counters["tok/s"] = TokensPerSecond(tokens);
}

void NaiveCase(benchmark::State& state, const ModelShape& s, bool decode) {
  const ModelInputs& in = ModelInputs::Get(s);
  std::unique_ptr<naive_llama, void (*)(naive_llama*)> m(naive_llama_new(in.file.data(), in.bytes, kPositions),
                                                         naive_llama_delete);
  if (!m) {
    state.SkipWithError("out of memory");
    return;
  }
  auto run = [&](size_t from, size_t to) {
    const float* logits = nullptr;
    for (size_t p = from; p < to; ++p) logits = naive_llama_forward(m.get(), TokenAt(p, s.vocab), static_cast<int>(p));
    return logits;
  };
  const double error = LogitError(in, run(0, kPrefill + 1));
  double bytes = 0, flops = 0;
  const size_t tokens = decode ? kPositions - kPrefill : kPrefill;
  for (size_t p = decode ? kPrefill : 0; p < (decode ? kPositions : kPrefill); ++p) {
    bytes += in.weight_bytes + KvBytes(s, edgeattn::KvType::kF32, p);
    flops += in.flops_per_token + ModelAttentionFlops(s, p);
  }
  TimeIfRight(
      state, error, kModelTolerance, [&] { return decode ? run(kPrefill, kPositions) : run(0, kPrefill); }, flops,
      bytes, static_cast<double>(tokens));
  if (!PairActive()) state.counters["tok/s"] = TokensPerSecond(tokens);
}

const char* KvName(edgeattn::KvType type) {
  return type == edgeattn::KvType::kF32 ? "f32" : type == edgeattn::KvType::kF16 ? "f16" : "q8";
}

}  // namespace

void RegisterModel(bool one_thread, bool two_threads) {
  for (const ModelShape& s : kModelShapes) {
    for (const char* phase : {"decode", "prefill"}) {
      const bool decode = phase[0] == 'd';
      for (bool q8 : {false, true}) {
        for (edgeattn::KvType type : {edgeattn::KvType::kF32, edgeattn::KvType::kF16, edgeattn::KvType::kQ8}) {
          for (size_t threads : {size_t{1}, size_t{2}}) {
            if ((threads == 1 && !one_thread) || (threads == 2 && !two_threads)) continue;
            if (threads == 2 && type != edgeattn::KvType::kF32) continue;
            const std::string name = std::string("model/") + s.name + (q8 ? "/q8" : "/f32") + "/kv=" + KvName(type) +
                                     "/j=" + std::to_string(threads) + "," + phase;
            Register(name, "simd", [=](benchmark::State& st) { ModuleCase(st, s, q8, type, threads, decode); });
            if (threads > 1) {  // the same work on one thread, timed in turns with the split (a paired speedup)
              Register(name, "one_thread", [=](benchmark::State& st) { ModuleCase(st, s, q8, type, 1, decode); });
            }
            if (threads == 1 && type == edgeattn::KvType::kF32 && !q8) {
              Register(name, "naive", [=](benchmark::State& st) { NaiveCase(st, s, decode); });
            }
          }
        }
      }
    }
  }
}

}  // namespace edgeattn_bench
