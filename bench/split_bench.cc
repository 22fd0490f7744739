// SPDX-License-Identifier: Apache-2.0
// The work split (issue 20): one attention call against the same work cut into parts and run on two threads,
// the main thread and one worker that this file starts once for the process (the library starts none).
//
// Cases, each with implementations "single" (edgeattn_attention / edgeattn_attention_cached on the main thread)
// and "simd" (the same call's parts on two threads, then edgeattn_..._finish on the main thread), so that
// RegisterPairs times them alternately as "<case>/simd~single", counter "ratio" = single's time / split time:
//   split/prefill/L=<L>,d=<d> and split/prefill_causal/...: one head, L in {256, 1024}, d in {64, 128} (the inputs
//     of the suite's attention cases);
//   split/decode/<f32|f16>/n=<n>,d=128,<hot|cold>: one query per head, 4 query heads over 1 KV head, against a
//     KV cache of n in {4096, 16384} positions; cold calls rotate through copies of the cache filling 256 MiB.
//   split/linear_q8/q8/rows=64,in=1024,out=1024: int8 weights (issue 30), the parts of edgeattn_linear_q8.
// And split/wakeup/round_trip: waking the worker and meeting it at the barrier with no part to run, the
// application's cost of each split call, reported on its own (the ratio above includes it once per call); and
// split/limit/fma, split/limit/read_dram: what the second thread adds to pure FMA work and to pure DRAM reads
// (the calibration's kernels, 8 and 16 parts), the ceilings of the prefill's and the cold decode's speedups.
//
// Every result is checked against a double-precision reference before it is timed, and the split's output must
// equal the single call's bit for bit (the promise): a difference is an error, not a timing.
// bench/report.py prints these rows in their own table with the goals.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#endif

#include "bench/bench_util.h"
#include "bench/linear_q8_bench.h"
#include "edgeattn/edgeattn.h"

namespace edgeattn_bench {
namespace {

// One call's work as the runner sees it: `count` parts, each run by `part` with the workspace of the thread
// that runs it. Statuses other than OK are kept (the first one wins) and reported after the barrier.
struct SplitJob {
  size_t count = 0;
  edgeattn_status (*part)(const void* ctx, size_t part, void* workspace, size_t workspace_size) = nullptr;
  const void* ctx = nullptr;
  std::atomic<size_t> next{0};
  std::atomic<int> status{EDGEATTN_OK};
};

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();  // frees the core's issue slots for an SMT sibling while this thread spins
#elif defined(__aarch64__) || (defined(__arm__) && defined(__ARM_ARCH) && __ARM_ARCH >= 7)
  __asm__ __volatile__("yield");
#endif
}

// The benchmark's own two-thread runner: the main thread and one worker, started on first use and kept for the
// process. A call bumps a generation counter that the worker spins on; both threads take part indices from the
// job's counter (heaviest parts first, as the library numbers them); the main thread then spins until the worker
// reports the same generation done (the barrier). An idle worker spins about a millisecond, then sleeps on a
// condition variable, so that the suite's other (single-threaded) benchmarks run without it.
class Runner {
 public:
  static Runner& Get() {
    static Runner runner;
    return runner;
  }

  // Runs every part of `job` on both threads and returns when all have returned. workspace_size: bytes for each
  // thread (the workspaces are kept and grown, never shrunk: the same addresses from one call to the next).
  void Run(SplitJob& job, size_t workspace_size) {
    for (auto& ws : workspaces_) {
      if (ws.size() < workspace_size) ws.resize(workspace_size);
    }
    job.next.store(0, std::memory_order_relaxed);
    job_ = &job;
    workspace_size_ = workspace_size;
    const uint64_t generation = generation_.fetch_add(1, std::memory_order_seq_cst) + 1;
    if (sleeping_.load(std::memory_order_seq_cst)) {
      std::lock_guard<std::mutex> lock(mutex_);
      wake_.notify_one();
    }
    Work(job, 0);
    // Spinning, then yielding: on a machine with more runnable threads than CPUs the worker may be waiting for
    // this very CPU.
    for (int spin = 0; done_.load(std::memory_order_acquire) != generation; ++spin) {
      if (spin < kSpins) {
        CpuRelax();
      } else {
        std::this_thread::yield();
      }
    }
  }

  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

 private:
  Runner() : thread_([this] { Loop(); }) {}
  ~Runner() {
    stop_.store(true);
    generation_.fetch_add(1);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      wake_.notify_one();
    }
    thread_.join();
  }

  void Work(SplitJob& job, int t) {
    unsigned char* ws = workspaces_[t].data();
    for (size_t i = job.next.fetch_add(1, std::memory_order_relaxed); i < job.count;
         i = job.next.fetch_add(1, std::memory_order_relaxed)) {
      const edgeattn_status s = job.part(job.ctx, i, ws, workspace_size_);
      int expected = EDGEATTN_OK;
      if (s != EDGEATTN_OK) job.status.compare_exchange_strong(expected, s);
    }
  }

  void Loop() {
    PinAwayFromMain();
    uint64_t seen = 0;
    for (;;) {
      uint64_t g = generation_.load(std::memory_order_acquire);
      for (int spin = 0; g == seen && spin < kSpins; ++spin) {
        CpuRelax();
        g = generation_.load(std::memory_order_acquire);
      }
      if (g == seen) {
        std::unique_lock<std::mutex> lock(mutex_);
        sleeping_.store(true, std::memory_order_seq_cst);
        while ((g = generation_.load(std::memory_order_seq_cst)) == seen) wake_.wait(lock);
        sleeping_.store(false, std::memory_order_relaxed);
      }
      if (stop_.load()) return;
      seen = g;
      Work(*job_, 1);
      done_.store(g, std::memory_order_release);
    }
  }

  // Under a one-CPU taskset (as report.py runs every other case; it gives these two CPUs) the worker would share
  // the main thread's CPU and the split could only lose. When the process may run on one CPU only and the
  // machine has another, the worker moves to another one; otherwise the scheduler places it.
  static void PinAwayFromMain() {
#if defined(__linux__)
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0 || CPU_COUNT(&allowed) != 1) return;
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    for (int cpu = 0; cpu < online && cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &allowed)) continue;
      cpu_set_t other;
      CPU_ZERO(&other);
      CPU_SET(cpu, &other);
      if (pthread_setaffinity_np(pthread_self(), sizeof(other), &other) == 0) return;
    }
#endif
  }

  // About a millisecond of pause instructions (a pause is 10-150 cycles depending on the core): long enough
  // that the worker never sleeps between the calls of a timed batch.
  static constexpr int kSpins = 1 << 15;

  std::vector<unsigned char, CacheAligned<unsigned char>> workspaces_[2];
  size_t workspace_size_ = 0;
  SplitJob* job_ = nullptr;
  alignas(64) std::atomic<uint64_t> generation_{0};
  alignas(64) std::atomic<uint64_t> done_{0};
  std::atomic<bool> sleeping_{false};
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread thread_;  // last: started after every other member is constructed
};

bool Ok(benchmark::State& state, edgeattn_status s) {
  if (s == EDGEATTN_OK) return true;
  state.SkipWithError(edgeattn_status_string(s));
  return false;
}

// The split's output against the single call's: any bit that differs is an error of the library's promise.
bool SameBits(benchmark::State& state, const float* split, const float* single, size_t n) {
  if (std::memcmp(split, single, n * sizeof(float)) == 0) return true;
  state.SkipWithError("the split output differs from the single call's (bit-identical promised)");
  return false;
}

// ---- Prefill: one head, L queries against L keys, the suite's attention inputs.

struct PrefillCtx {
  edgeattn_attention_desc desc;
  const float *q, *k, *v;
  float* out;
  void* shared;
  size_t shared_size;
};

edgeattn_status PrefillPart(const void* ctx, size_t part, void* ws, size_t ws_size) {
  const auto& c = *static_cast<const PrefillCtx*>(ctx);
  return edgeattn_attention_part(&c.desc, part, c.q, c.k, c.v, c.out, c.shared, c.shared_size, ws, ws_size);
}

edgeattn_attention_desc PrefillDesc(size_t len, size_t dim, bool causal) {
  edgeattn_attention_desc d{};
  d.q_len = d.kv_len = len;
  d.head_dim = d.value_dim = dim;
  d.num_heads = 1;
  d.mask = causal ? EDGEATTN_MASK_CAUSAL : EDGEATTN_MASK_NONE;
  return d;
}

void Prefill(benchmark::State& state, bool split, size_t len, size_t dim, bool causal) {
  const AttentionInputs& in = AttentionInputs::Get(len, dim);
  const edgeattn_attention_desc desc = PrefillDesc(len, dim, causal);
  const size_t ws_size = edgeattn_attention_workspace_size(&desc);
  std::vector<unsigned char, CacheAligned<unsigned char>> ws(ws_size), shared(edgeattn_attention_shared_size(&desc));
  Floats out(len * dim), single(len * dim);
  if (!Ok(state, edgeattn_attention(&desc, in.q.data(), in.k.data(), in.v.data(), single.data(), ws.data(), ws.size())))
    return;
  PrefillCtx ctx{desc, in.q.data(), in.k.data(), in.v.data(), out.data(), shared.data(), shared.size()};
  SplitJob job;
  job.count = edgeattn_attention_part_count(&desc);
  job.part = PrefillPart;
  job.ctx = &ctx;
  auto run = [&]() -> edgeattn_status {
    if (!split)
      return edgeattn_attention(&desc, in.q.data(), in.k.data(), in.v.data(), out.data(), ws.data(), ws.size());
    job.status.store(EDGEATTN_OK, std::memory_order_relaxed);
    Runner::Get().Run(job, ws_size);
    const auto s = static_cast<edgeattn_status>(job.status.load(std::memory_order_relaxed));
    return s != EDGEATTN_OK ? s : edgeattn_attention_finish(&desc, shared.data(), shared.size(), out.data());
  };
  if (!Ok(state, run()) || !SameBits(state, out.data(), single.data(), out.size())) return;
  TimeIfRight(state, AttentionError(in, causal, out.data()), kAttentionTolerance, run, AttentionFlops(len, dim, causal),
              0, 0);
}

// ---- Decode: one query per head against a KV cache (C API), 4 query heads sharing 1 KV head.

constexpr size_t kDecodeHeads = 4;
constexpr size_t kDecodeDim = 128;
constexpr double kCacheTolerance = 1e-5;  // relative L2 per row, against attention on the stored values
// Larger than the last-level cache of the cores this suite targets (32 MiB here): each cold call reads DRAM.
constexpr size_t kColdBytes = size_t{256} << 20;

const char* TypeName(edgeattn_kv_type t) { return t == EDGEATTN_KV_F32 ? "f32" : "f16"; }

// A filled cache of n positions (fixed seeds: the same values for both implementations), kept for the process.
struct Cache {
  std::vector<unsigned char, CacheAligned<unsigned char>> storage;
  edgeattn_kv_cache cache{};
  Floats q;
  std::vector<double> reference;  // [heads][dim], double attention over the stored values

  static const Cache* Get(edgeattn_kv_type type, size_t n) {
    static std::vector<std::unique_ptr<Cache>> all;
    for (auto& c : all) {
      if (c->cache.desc.type == type && c->cache.length == n) return c.get();
    }
    all.push_back(std::make_unique<Cache>(type, n));
    return all.back()->storage.empty() ? nullptr : all.back().get();
  }

  Cache(edgeattn_kv_type type, size_t n) : q(Random(kDecodeHeads * kDecodeDim, -1, 1, 803)) {
    edgeattn_kv_cache_desc d{};
    d.type = type;
    d.num_kv_heads = 1;
    d.head_dim = d.value_dim = kDecodeDim;
    d.capacity = n;
    storage.resize(edgeattn_kv_cache_storage_size(&d));
    const Floats k = Random(n * kDecodeDim, -1, 1, 801), v = Random(n * kDecodeDim, -1, 1, 802);
    if (edgeattn_kv_cache_init(&cache, &d, storage.data(), storage.size()) != EDGEATTN_OK ||
        edgeattn_kv_cache_append(&cache, k.data(), v.data(), n) != EDGEATTN_OK) {
      storage.clear();
      return;
    }
    // The reference reads back what the cache stores (f16 rounds K and V; the attention is exact on those).
    std::vector<float> ks(n * kDecodeDim), vs(n * kDecodeDim);
    for (size_t p = 0; p < n; ++p) {
      if (edgeattn_kv_cache_read(&cache, p, &ks[p * kDecodeDim], &vs[p * kDecodeDim]) != EDGEATTN_OK) {
        storage.clear();
        return;
      }
    }
    const float scale = 1.0f / std::sqrt(static_cast<float>(kDecodeDim));
    for (size_t h = 0; h < kDecodeHeads; ++h) {
      const std::vector<double> r =
          ReferenceAttention(&q[h * kDecodeDim], ks.data(), vs.data(), 1, n, kDecodeDim, scale, false);
      reference.insert(reference.end(), r.begin(), r.end());
    }
  }
};

// Cold copies of a cache: one pool for every cold case, refilled by each benchmark that uses it (the storage
// holds no pointer, so a byte copy with the C struct's storage pointer moved is the same cache). One copy
// counter for both implementations: the calls of a pair take turns through the copies.
struct ColdCopies {
  std::vector<edgeattn_kv_cache> views;
  explicit ColdCopies(const Cache& c) {
    static std::vector<unsigned char, CacheAligned<unsigned char>> pool(kColdBytes);
    const size_t bytes = c.storage.size();
    // Each copy starts on a line of its own, as a user's separately allocated caches would.
    const size_t stride = (bytes + 63) / 64 * 64;
    const size_t copies = std::max<size_t>(2, pool.size() / stride);
    for (size_t i = 0; i < copies && (i + 1) * stride <= pool.size(); ++i) {
      std::memcpy(pool.data() + i * stride, c.storage.data(), bytes);
      edgeattn_kv_cache view = c.cache;
      view.storage = pool.data() + i * stride;
      views.push_back(view);
    }
  }
  static size_t Next() {
    static size_t next = 0;
    return ++next;
  }
};

struct DecodeCtx {
  edgeattn_attention_desc desc;
  const float* q;
  const edgeattn_kv_cache* cache;
  float* out;
  void* shared;
  size_t shared_size;
};

edgeattn_status DecodePart(const void* ctx, size_t part, void* ws, size_t ws_size) {
  const auto& c = *static_cast<const DecodeCtx*>(ctx);
  return edgeattn_attention_cached_part(&c.desc, part, c.q, c.cache, c.out, c.shared, c.shared_size, ws, ws_size);
}

void Decode(benchmark::State& state, bool split, edgeattn_kv_type type, size_t n, bool cold) {
  const Cache* c = Cache::Get(type, n);
  if (c == nullptr) return state.SkipWithError("cache setup failed");
  edgeattn_attention_desc desc{};
  desc.q_len = 1;
  desc.kv_len = 0;
  desc.head_dim = desc.value_dim = kDecodeDim;
  desc.num_heads = kDecodeHeads;
  desc.num_kv_heads = 1;
  desc.mask = EDGEATTN_MASK_CAUSAL;
  const size_t ws_size = edgeattn_attention_cached_workspace_size(&desc, &c->cache);
  std::vector<unsigned char, CacheAligned<unsigned char>> ws(ws_size);
  std::vector<unsigned char, CacheAligned<unsigned char>> shared(
      edgeattn_attention_cached_shared_size(&desc, &c->cache));
  Floats out(kDecodeHeads * kDecodeDim), single(kDecodeHeads * kDecodeDim);
  if (!Ok(state, edgeattn_attention_cached(&desc, c->q.data(), &c->cache, single.data(), ws.data(), ws.size()))) return;
  std::unique_ptr<ColdCopies> copies;
  if (cold) copies = std::make_unique<ColdCopies>(*c);
  DecodeCtx ctx{desc, c->q.data(), &c->cache, out.data(), shared.data(), shared.size()};
  SplitJob job;
  job.count = edgeattn_attention_cached_part_count(&desc, &c->cache);
  job.part = DecodePart;
  job.ctx = &ctx;
  auto run_on = [&](const edgeattn_kv_cache* cache) -> edgeattn_status {
    if (!split) return edgeattn_attention_cached(&desc, c->q.data(), cache, out.data(), ws.data(), ws.size());
    ctx.cache = cache;
    job.status.store(EDGEATTN_OK, std::memory_order_relaxed);
    Runner::Get().Run(job, ws_size);
    const auto s = static_cast<edgeattn_status>(job.status.load(std::memory_order_relaxed));
    return s != EDGEATTN_OK ? s
                            : edgeattn_attention_cached_finish(&desc, cache, shared.data(), shared.size(), out.data());
  };
  // The check runs on the cache itself (and, cold, on one of its copies: the same bytes, the same bits).
  if (!Ok(state, run_on(&c->cache)) || !SameBits(state, out.data(), single.data(), out.size())) return;
  if (cold && (!Ok(state, run_on(&copies->views.back())) || !SameBits(state, out.data(), single.data(), out.size())))
    return;
  const double error = MaxRelativeRowError(out.data(), c->reference, kDecodeHeads, kDecodeDim);
  auto run = [&] { return run_on(cold ? &copies->views[ColdCopies::Next() % copies->views.size()] : &c->cache); };
  const double bytes = static_cast<double>(c->storage.size());  // K and V read once per call
  const double flops = 4.0 * static_cast<double>(kDecodeDim * n * kDecodeHeads);
  TimeIfRight(state, error, kCacheTolerance, run, flops, bytes, 0);
}

// ---- The two-thread limits: what two threads gain on work that is nothing but FMAs (the prefill's limit), or
// nothing but reads from DRAM (the cold decode's). Where the two CPUs are SMT siblings of one core, the FMA
// ratio stays near 1; where the memory system gives one core all it can deliver, the read ratio does.

constexpr size_t kFmaParts = 8;
constexpr size_t kFmaIterations = 16384;  // about 50 us per part at this machine's one-core peak

edgeattn_status FmaPart(const void* ctx, size_t part, void*, size_t) {
  const float step = *static_cast<const float*>(ctx);
  benchmark::DoNotOptimize(CalibrationFma(kFmaIterations, 1.0f + static_cast<float>(part) * step));
  return EDGEATTN_OK;
}

void FmaLimit(benchmark::State& state, bool split) {
  static const float step = 1e-3f;
  SplitJob job;
  job.count = kFmaParts;
  job.part = FmaPart;
  job.ctx = &step;
  auto run = [&] {
    if (split) {
      Runner::Get().Run(job, 0);
    } else {
      for (size_t i = 0; i < kFmaParts; ++i) FmaPart(&step, i, nullptr, 0);
    }
  };
  const double flops = static_cast<double>(kFmaParts) * CalibrationFma(kFmaIterations, 1.0f);
  run();
  TimeIfRight(state, 0.0, 0.0, run, flops, 0, 0);
}

constexpr size_t kReadParts = 16;

struct ReadCtx {
  const float* p;
  size_t per_part;  // floats
};

edgeattn_status ReadPart(const void* ctx, size_t part, void*, size_t) {
  const auto& c = *static_cast<const ReadCtx*>(ctx);
  benchmark::DoNotOptimize(CalibrationReadSum(c.p + part * c.per_part, c.per_part));
  return EDGEATTN_OK;
}

void ReadLimit(benchmark::State& state, bool split) {
  static std::vector<float, CacheAligned<float>> buffer(kColdBytes / sizeof(float), 1.0f);
  const ReadCtx ctx{buffer.data(), buffer.size() / kReadParts};
  SplitJob job;
  job.count = kReadParts;
  job.part = ReadPart;
  job.ctx = &ctx;
  auto run = [&] {
    if (split) {
      Runner::Get().Run(job, 0);
    } else {
      for (size_t i = 0; i < kReadParts; ++i) ReadPart(&ctx, i, nullptr, 0);
    }
  };
  run();
  TimeIfRight(state, 0.0, 0.0, run, 0, static_cast<double>(kColdBytes), 0);
}

// ---- The worker's wake-up: a call with no part (the round trip every split call pays once).
void WakeUp(benchmark::State& state) {
  SplitJob job;
  for (auto _ : state) Runner::Get().Run(job, 0);
}

// ---- linear_q8 (issue 30): the int8 weights' parts (blocks of output features, each part quantising x in its
// own workspace) against the single call, ACT_Q8, on linear_q8_bench.cc's inputs.

struct LinearQ8Ctx {
  const float* x;
  size_t rows;
  edgeattn_q8_matrix w;
  const float* bias;
  float* y;
};

edgeattn_status LinearQ8Part(const void* ctx, size_t part, void* ws, size_t ws_size) {
  const auto& c = *static_cast<const LinearQ8Ctx*>(ctx);
  return edgeattn_linear_q8_part(c.x, c.rows, &c.w, c.bias, EDGEATTN_Q8_ACT_Q8, part, c.y, ws, ws_size);
}

void LinearQ8Split(benchmark::State& state, bool split, const Q8Shape& shape) {
  const Q8Inputs& in = Q8Inputs::Get(shape);
  const edgeattn_q8_matrix w = in.Matrix(0);
  const size_t ws_size = edgeattn_linear_q8_workspace_size(shape.rows, &w, EDGEATTN_Q8_ACT_Q8);
  std::vector<unsigned char, CacheAligned<unsigned char>> ws(ws_size);
  Floats y(shape.rows * shape.out), single(shape.rows * shape.out);
  if (!Ok(state, edgeattn_linear_q8(in.x.data(), shape.rows, &w, in.b.data(), EDGEATTN_Q8_ACT_Q8, single.data(),
                                    ws.data(), ws.size())))
    return;
  LinearQ8Ctx ctx{in.x.data(), shape.rows, w, in.b.data(), y.data()};
  SplitJob job;
  job.count = edgeattn_linear_q8_part_count(shape.rows, &w);
  job.part = LinearQ8Part;
  job.ctx = &ctx;
  auto run = [&]() -> edgeattn_status {
    if (!split) {
      return edgeattn_linear_q8(in.x.data(), shape.rows, &w, in.b.data(), EDGEATTN_Q8_ACT_Q8, y.data(), ws.data(),
                                ws.size());
    }
    job.status.store(EDGEATTN_OK, std::memory_order_relaxed);
    Runner::Get().Run(job, ws_size);
    return static_cast<edgeattn_status>(job.status.load(std::memory_order_relaxed));
  };
  if (!Ok(state, run()) || !SameBits(state, y.data(), single.data(), y.size())) return;
  const size_t n = shape.in * shape.out;
  TimeIfRight(state, MaxRelativeRowError(y.data(), in.reference, shape.rows, shape.out), 2e-2, run,
              2.0 * static_cast<double>(shape.rows * n), 0, 0);
}

}  // namespace

void RegisterSplit() {
  for (bool causal : {false, true}) {
    for (size_t len : {256, 1024}) {
      for (size_t dim : {64, 128}) {
        const std::string name = std::string(causal ? "split/prefill_causal/" : "split/prefill/") +
                                 "L=" + std::to_string(len) + ",d=" + std::to_string(dim);
        Register(name, "single", [=](benchmark::State& s) { Prefill(s, false, len, dim, causal); });
        Register(name, "simd", [=](benchmark::State& s) { Prefill(s, true, len, dim, causal); });
      }
    }
  }
  for (edgeattn_kv_type type : {EDGEATTN_KV_F32, EDGEATTN_KV_F16}) {
    for (size_t n : {4096, 16384}) {
      for (bool cold : {false, true}) {
        const std::string name = std::string("split/decode/") + TypeName(type) + "/n=" + std::to_string(n) +
                                 ",d=" + std::to_string(kDecodeDim) + (cold ? ",cold" : ",hot");
        Register(name, "single", [=](benchmark::State& s) { Decode(s, false, type, n, cold); });
        Register(name, "simd", [=](benchmark::State& s) { Decode(s, true, type, n, cold); });
      }
    }
  }
  Register("split/limit/fma", "single", [](benchmark::State& s) { FmaLimit(s, false); });
  Register("split/limit/fma", "simd", [](benchmark::State& s) { FmaLimit(s, true); });
  Register("split/limit/read_dram", "single", [](benchmark::State& s) { ReadLimit(s, false); });
  Register("split/limit/read_dram", "simd", [](benchmark::State& s) { ReadLimit(s, true); });
  Register("split/wakeup", "round_trip", WakeUp);
  const Q8Shape q8{64, 1024, 1024, false};
  const std::string q8_name = "split/linear_q8/q8/rows=64,in=1024,out=1024";
  Register(q8_name, "single", [=](benchmark::State& s) { LinearQ8Split(s, false, q8); });
  Register(q8_name, "simd", [=](benchmark::State& s) { LinearQ8Split(s, true, q8); });
}

}  // namespace edgeattn_bench
