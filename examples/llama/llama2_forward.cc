// SPDX-License-Identifier: Apache-2.0
// The forward pass, llama2.c's forward() on edgeattn calls, for a chunk of tokens at once. Each step is one named
// function, so a profile (callgrind, perf) splits a decode step into its phases: the projections
// (edgeattn::LinearTransposed or LinearQ8), RoPE, the cache append, attention (edgeattn::AttentionCached) and the
// feed-forward. The linear layers and attention run in parts on the application's threads when Split says so.
#include <stdio.h>

#include "llama2.h"
#include "llama2_internal.h"

namespace llama2 {
namespace {

constexpr float kRmsEps = 1e-5f;  // llama2.c's

// For the threaded branches (ProjectInParts, AttendInParts): their jobs hold per-worker arrays of kMaxWorkers
// entries, which would otherwise sit in the caller's frame on every call, threads or not (1,120 bytes in
// Attend on the Cortex-M7, where nothing is split).
#if defined(__GNUC__)
#define LLAMA2_NOINLINE __attribute__((noinline))
#else
#define LLAMA2_NOINLINE
#endif

// The edgeattn entry points the forward pass calls, one table per Options::kernels.
struct KernelTable {
  decltype(&edgeattn::RmsNorm) rms_norm;
  decltype(&edgeattn::LinearTransposed) linear_transposed;
  decltype(&edgeattn::LinearQ8) linear_q8;
  decltype(&edgeattn::Rope) rope;
  decltype(&edgeattn::RopeWithTable) rope_with_table;
  decltype(&edgeattn::AttentionCached) attention_cached;
  decltype(&edgeattn::GatedActivation) gated_activation;
  decltype(&edgeattn::Add) add;
};
constexpr KernelTable kDispatched{
    edgeattn::RmsNorm,       edgeattn::LinearTransposed, edgeattn::LinearQ8,        edgeattn::Rope,
    edgeattn::RopeWithTable, edgeattn::AttentionCached,  edgeattn::GatedActivation, edgeattn::Add};
constexpr KernelTable kScalar{edgeattn::scalar::RmsNorm,         edgeattn::scalar::LinearTransposed,
                              edgeattn::scalar::LinearQ8,        edgeattn::scalar::Rope,
                              edgeattn::scalar::RopeWithTable,   edgeattn::scalar::AttentionCached,
                              edgeattn::scalar::GatedActivation, edgeattn::scalar::Add};
const KernelTable& Calls(const Model* m) { return m->options.kernels == Kernels::kScalar ? kScalar : kDispatched; }

// Splitting is for the dispatched kernels with a pool of two or more workers, and work worth a wake-up.
bool Split(const Model* m, size_t work) {
  return m->parallel.run != nullptr && m->options.workers >= 2 && m->options.kernels == Kernels::kDispatched &&
         work >= m->options.min_split_work;
}

// kOk, or kKernel with the step named in model.error.
Status Check(Model* m, edgeattn::Status s, const char* step, size_t layer) {
  if (s == edgeattn::Status::kOk) return Status::kOk;
  snprintf(m->error.text, sizeof(m->error.text), "layer %lu, %s: edgeattn returned \"%s\"",
           static_cast<unsigned long>(layer), step, edgeattn::StatusString(s));
  return Status::kKernel;
}

// ---- The linear layers: y [rows][out] = x [rows][in] W^T, float (linear_transposed) or int8 (linear_q8) weights.
edgeattn::Q8Activations Q8Mode(const Model* m) {
  return m->options.activations == Activations::kQ8 ? edgeattn::Q8Activations::kQ8 : edgeattn::Q8Activations::kF32;
}

// A linear layer's status: with Q8 activations, kInvalidArgument is the one argument the module does not check
// itself, a non-finite input (every other one is valid by construction).
Status CheckLinear(Model* m, edgeattn::Status s, const char* step, size_t layer) {
  if (s == edgeattn::Status::kInvalidArgument && m->config.format == Format::kQ8 &&
      Q8Mode(m) == edgeattn::Q8Activations::kQ8) {
    snprintf(m->error.text, sizeof(m->error.text),
             "layer %lu, %s: the input is not finite (the activations overflowed), which Q8 activations cannot "
             "quantize",
             static_cast<unsigned long>(layer), step);
    return Status::kNotFinite;
  }
  return Check(m, s, step, layer);
}

struct Projection {
  const Matrix* w;
  float* y;
  const char* step;
};

edgeattn::Status ProjectWhole(const Model* m, const float* x, size_t rows, const Projection& p) {
  const Matrix& w = *p.w;
  if (w.f32 != nullptr) {
    return Calls(m).linear_transposed(x, rows, w.in_features, w.f32, nullptr, w.out_features, p.y);
  }
  return Calls(m).linear_q8(x, rows, w.q8, nullptr, Q8Mode(m), p.y, m->workspaces, m->workspace_bytes);
}

size_t PartCount(size_t rows, const Matrix& w) {
  return w.f32 != nullptr ? edgeattn::LinearTransposedPartCount(rows, w.in_features, w.out_features)
                          : edgeattn::LinearQ8PartCount(rows, w.q8);
}

// The pool's jobs per layer: float weights, one per part (the pool hands them out as threads come free); int8
// weights, at most one range of parts per worker (LinearQ8PartRange), since every linear_q8 call quantises x
// again: on stories15M's decode, two ranges instead of 4 parts of each 768-output layer and of 16 for the
// classifier made the two-thread step about 3% faster (docs/performance.md, "Two threads on a small model").
size_t JobCount(const Model* m, size_t rows, const Matrix& w) {
  const size_t parts = PartCount(rows, w);
  return w.f32 != nullptr || parts <= m->options.workers ? parts : m->options.workers;
}

// Layers that read the same input (Q, K, V; the gate and up), their parts numbered one after the other, so that one
// wake-up of the pool runs all of them.
constexpr size_t kMaxProjections = 3;
struct LinearJob {
  const Model* model;
  const float* x;
  size_t rows;
  const Projection* projections;
  size_t count;
  size_t first_part[kMaxProjections + 1];  // projection j's jobs (JobCount) are [first_part[j], first_part[j + 1])
  edgeattn::Status status[kMaxWorkers];    // per worker, its first failure: no two workers share a slot
  const char* failed[kMaxWorkers];
};

void RunLinearPart(void* job_pointer, size_t part, size_t worker) {
  LinearJob* job = static_cast<LinearJob*>(job_pointer);
  const Model* m = job->model;
  size_t j = 0;
  while (part >= job->first_part[j + 1]) ++j;
  const Projection& p = job->projections[j];
  const Matrix& w = *p.w;
  const size_t index = part - job->first_part[j];
  edgeattn::Status s;
  if (w.f32 != nullptr) {
    s = edgeattn::LinearTransposedPart(job->x, job->rows, w.in_features, w.f32, nullptr, w.out_features, index, p.y);
  } else {  // range `index` of `ranges`, each a share of the parts as even as whole parts allow
    const size_t parts = edgeattn::LinearQ8PartCount(job->rows, w.q8);
    const size_t ranges = job->first_part[j + 1] - job->first_part[j];
    const size_t first = parts * index / ranges, end = parts * (index + 1) / ranges;
    s = edgeattn::LinearQ8PartRange(job->x, job->rows, w.q8, nullptr, Q8Mode(m), first, end - first, p.y,
                                    m->workspaces + worker * m->workspace_bytes, m->workspace_bytes);
  }
  if (s != edgeattn::Status::kOk && job->status[worker] == edgeattn::Status::kOk) {
    job->status[worker] = s;
    job->failed[worker] = p.step;
  }
}

LLAMA2_NOINLINE Status ProjectInParts(Model* m, const float* x, size_t rows, const Projection* projections,
                                      size_t count, const size_t* first_part, size_t layer) {
  LinearJob job{m, x, rows, projections, count, {}, {}, {}};
  for (size_t j = 0; j <= count; ++j) job.first_part[j] = first_part[j];
  m->parallel.run(m->parallel.pool, RunLinearPart, &job, first_part[count]);
  for (size_t w = 0; w < m->options.workers; ++w) {
    if (job.status[w] != edgeattn::Status::kOk) return CheckLinear(m, job.status[w], job.failed[w], layer);
  }
  return Status::kOk;
}

// y = x W^T for each of `count` layers with the same input x [rows][in]: in parts on the pool when worth it.
Status Project(Model* m, const float* x, size_t rows, const Projection* projections, size_t count, size_t layer) {
  size_t work = 0;
  for (size_t j = 0; j < count; ++j) work += rows * projections[j].w->in_features * projections[j].w->out_features;
  if (Split(m, work)) {  // the parts counted only here: on one thread the count was 0.4% of 260K's decode step
    size_t first_part[kMaxProjections + 1] = {0};
    for (size_t j = 0; j < count; ++j) first_part[j + 1] = first_part[j] + JobCount(m, rows, *projections[j].w);
    if (first_part[count] > 1) return ProjectInParts(m, x, rows, projections, count, first_part, layer);
  }
  for (size_t j = 0; j < count; ++j) {
    const Status s = CheckLinear(m, ProjectWhole(m, x, rows, projections[j]), projections[j].step, layer);
    if (s != Status::kOk) return s;
  }
  return Status::kOk;
}

// ---- Attention on the application's threads: one call cut into parts, each part on any worker.
struct AttentionJob {
  const edgeattn::AttentionDesc* desc;
  const float* q;
  const edgeattn::KvCache* cache;
  float* out;
  Model* model;
  edgeattn::Status status[kMaxWorkers];  // per worker, its first failure: no two workers share a slot
};

void RunAttentionPart(void* job_pointer, size_t part, size_t worker) {
  AttentionJob* job = static_cast<AttentionJob*>(job_pointer);
  Model* m = job->model;
  const edgeattn::Status s =
      edgeattn::AttentionCachedPart(*job->desc, part, job->q, *job->cache, job->out, m->shared, m->shared_bytes,
                                    m->workspaces + worker * m->workspace_bytes, m->workspace_bytes);
  if (s != edgeattn::Status::kOk && job->status[worker] == edgeattn::Status::kOk) job->status[worker] = s;
}

// The split branch of Attend.
LLAMA2_NOINLINE Status AttendInParts(Model* m, const edgeattn::AttentionDesc& d, const edgeattn::KvCache& cache,
                                     size_t layer) {
  const size_t parts = edgeattn::AttentionCachedPartCount(d, cache);
  const size_t shared = edgeattn::AttentionCachedSharedSize(d, cache);
  if (shared > m->shared_bytes) {
    snprintf(m->error.text, sizeof(m->error.text),
             "layer %lu: the attention parts need %lu shared bytes, the "
             "arena holds %lu",
             static_cast<unsigned long>(layer), static_cast<unsigned long>(shared),
             static_cast<unsigned long>(m->shared_bytes));
    return Status::kArenaTooSmall;
  }
  AttentionJob job{&d, m->q, &cache, m->attended, m, {}};
  m->parallel.run(m->parallel.pool, RunAttentionPart, &job, parts);
  for (size_t w = 0; w < m->options.workers; ++w) {
    if (job.status[w] != edgeattn::Status::kOk) return Check(m, job.status[w], "attention part", layer);
  }
  return Check(m, edgeattn::AttentionCachedFinish(d, cache, m->shared, m->shared_bytes, m->attended),
               "attention finish", layer);
}

Status Attend(Model* m, size_t layer, size_t n) {
  const Config& c = m->config;
  const edgeattn::AttentionDesc d = internal::AttentionShape(c, n, 0);
  const edgeattn::KvCache& cache = m->caches[layer];
  // Split only work worth a thread's wake-up (Options::min_split_work); the bits are the same either way.
  if (!Split(m, 2 * n * c.n_heads * c.head_dim * cache.length())) {
    return Check(m, Calls(m).attention_cached(d, m->q, cache, m->attended, m->workspaces, m->workspace_bytes),
                 "attention", layer);
  }
  return AttendInParts(m, d, cache, layer);
}

// RoPE on n rows of `heads` heads at first_position: from the table when the options ask for one.
Status Rotate(Model* m, float* x, size_t heads, size_t n, size_t first_position, const char* step, size_t layer) {
  edgeattn::RopeDesc rope;
  rope.num_heads = heads;
  rope.head_dim = m->config.head_dim;
  rope.layout = edgeattn::RopeLayout::kInterleaved;  // pairs (2i, 2i+1), base 10000: llama2.c's
  if (m->rope_table == nullptr) return Check(m, Calls(m).rope(rope, x, n, first_position), step, layer);
  const edgeattn::RopeTableView table{m->rope_table, m->config.head_dim, 0, m->options.capacity};
  return Check(m, Calls(m).rope_with_table(rope, table, x, n, first_position), step, layer);
}

// x += wo(attention(rope(wq h), cache + (rope(wk h), wv h))), h = rmsnorm(x): n rows at first_position.
Status AttentionBlock(Model* m, size_t layer, size_t n, size_t first_position) {
  const Config& c = m->config;
  const LayerWeights& w = m->weights.layers[layer];
  const Projection qkv[] = {{&w.wq, m->q, "wq"}, {&w.wk, m->k, "wk"}, {&w.wv, m->v, "wv"}};
  const Projection wo{&w.wo, m->xb, "wo"};
  Status s = Check(m, Calls(m).rms_norm(m->x, n, c.dim, w.rms_att, kRmsEps, m->xb), "rms_norm", layer);
  if (s == Status::kOk) s = Project(m, m->xb, n, qkv, 3, layer);
  if (s == Status::kOk) s = Rotate(m, m->q, c.n_heads, n, first_position, "rope q", layer);
  if (s == Status::kOk) s = Rotate(m, m->k, c.n_kv_heads, n, first_position, "rope k", layer);
  if (s == Status::kOk) s = Check(m, m->caches[layer].Append(m->k, m->v, n), "cache append", layer);
  if (s == Status::kOk) s = Attend(m, layer, n);
  if (s == Status::kOk) s = Project(m, m->attended, n, &wo, 1, layer);
  if (s == Status::kOk) s = Check(m, Calls(m).add(m->x, m->xb, m->x, n * c.dim), "residual", layer);
  return s;
}

// x += w2(silu(w1 h) * w3 h), h = rmsnorm(x).
Status FeedForwardBlock(Model* m, size_t layer, size_t n) {
  const Config& c = m->config;
  const LayerWeights& w = m->weights.layers[layer];
  const Projection gate_up[] = {{&w.w1, m->hb, "w1"}, {&w.w3, m->hb2, "w3"}};
  const Projection down{&w.w2, m->xb, "w2"};
  Status s = Check(m, Calls(m).rms_norm(m->x, n, c.dim, w.rms_ffn, kRmsEps, m->xb), "rms_norm", layer);
  if (s == Status::kOk) s = Project(m, m->xb, n, gate_up, 2, layer);
  if (s == Status::kOk) {
    s = Check(m, Calls(m).gated_activation(m->hb, m->hb2, m->hb, n * c.hidden_dim, edgeattn::Activation::kSilu),
              "swiglu", layer);
  }
  if (s == Status::kOk) s = Project(m, m->hb, n, &down, 1, layer);
  if (s == Status::kOk) s = Check(m, Calls(m).add(m->x, m->xb, m->x, n * c.dim), "residual", layer);
  return s;
}

// n <= max_chunk tokens through every layer; the classifier on the last one when `logits`.
Status Chunk(Model* m, const int* tokens, size_t n, size_t first_position, bool logits) {
  const Config& c = m->config;
  for (size_t t = 0; t < n; ++t) {
    const float* row = m->weights.token_embedding + static_cast<size_t>(tokens[t]) * c.dim;
    for (size_t i = 0; i < c.dim; ++i) m->x[t * c.dim + i] = row[i];
  }
  Status s = Status::kOk;
  for (size_t l = 0; l < c.n_layers && s == Status::kOk; ++l) {
    s = AttentionBlock(m, l, n, first_position);
    if (s == Status::kOk) s = FeedForwardBlock(m, l, n);
  }
  if (s != Status::kOk || !logits) return s;
  s = Check(m, Calls(m).rms_norm(m->x + (n - 1) * c.dim, 1, c.dim, m->weights.rms_final, kRmsEps, m->xb),
            "final rms_norm", c.n_layers);
  const Projection classifier{&m->weights.classifier, m->logits, "classifier"};
  return s == Status::kOk ? Project(m, m->xb, 1, &classifier, 1, c.n_layers) : s;
}

Status Reject(Model* m, Status status, const char* what) {
  snprintf(m->error.text, sizeof(m->error.text), "%s", what);
  return status;
}

}  // namespace

Status Forward(Model* m, const int* tokens, size_t n) noexcept {
  if (m == nullptr) return Status::kBadArgument;
  if (tokens == nullptr || n == 0) return Reject(m, Status::kBadArgument, "no tokens");
  for (size_t t = 0; t < n; ++t) {
    if (tokens[t] < 0 || static_cast<size_t>(tokens[t]) >= m->config.vocab_size) {
      snprintf(m->error.text, sizeof(m->error.text), "token %ld is outside the vocabulary (0 .. %lu)",
               static_cast<long>(tokens[t]), static_cast<unsigned long>(m->config.vocab_size - 1));
      return Status::kBadArgument;
    }
  }
  if (n > m->options.capacity - m->position) {
    return Reject(m, Status::kContextFull, "the KV caches are full (options.capacity positions)");
  }
  const size_t start = m->position;
  for (size_t done = 0; done < n;) {
    const size_t rows = n - done < m->options.max_chunk ? n - done : m->options.max_chunk;
    const Status s = Chunk(m, tokens + done, rows, start + done, done + rows == n);
    if (s != Status::kOk) {
      (void)Rewind(m, start);  // the caches back to where the call started (the earlier chunks' positions too)
      return s;
    }
    done += rows;
    m->position = start + done;
  }
  return Status::kOk;
}

}  // namespace llama2
