// The forward pass, llama2.c's forward() on edgeattn calls, for a chunk of tokens at once. Each step is one named
// function, so a profile (callgrind, perf) splits a decode step into its phases: the projections
// (edgeattn::LinearTransposed), RoPE, the cache append, attention (edgeattn::AttentionCached) and the feed-forward.
#include <stdio.h>

#include "llama2.h"
#include "llama2_internal.h"

namespace llama2 {
namespace {

constexpr float kRmsEps = 1e-5f;  // llama2.c's

// kOk, or kKernel with the step named in model.error.
Status Check(Model* m, edgeattn::Status s, const char* step, size_t layer) {
  if (s == edgeattn::Status::kOk) return Status::kOk;
  snprintf(m->error.text, sizeof(m->error.text), "layer %lu, %s: edgeattn returned \"%s\"",
           static_cast<unsigned long>(layer), step, edgeattn::StatusString(s));
  return Status::kKernel;
}

// y [rows][out] = x [rows][in] W^T.
Status Project(Model* m, const float* x, size_t rows, const Matrix& w, float* y, const char* step, size_t layer) {
  if (w.f32 == nullptr) return Status::kUnsupported;  // Q8 weights: issue 30's edgeattn_linear_q8 (phase 2)
  return Check(m, edgeattn::LinearTransposed(x, rows, w.in_features, w.f32, nullptr, w.out_features, y), step, layer);
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

Status Attend(Model* m, size_t layer, size_t n) {
  const Config& c = m->config;
  const edgeattn::AttentionDesc d = internal::AttentionShape(c, n, 0);
  const edgeattn::KvCache& cache = m->caches[layer];
  // Split only work worth a thread's wake-up (Options::min_split_work); the bits are the same either way.
  const size_t work = 2 * n * c.n_heads * c.head_dim * cache.length();
  if (m->parallel.run == nullptr || m->options.workers < 2 || work < m->options.min_split_work) {
    return Check(m, edgeattn::AttentionCached(d, m->q, cache, m->attended, m->workspaces, m->workspace_bytes),
                 "attention", layer);
  }
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

// x += wo(attention(rope(wq h), cache + (rope(wk h), wv h))), h = rmsnorm(x): n rows at first_position.
Status AttentionBlock(Model* m, size_t layer, size_t n, size_t first_position) {
  const Config& c = m->config;
  const LayerWeights& w = m->weights.layers[layer];
  edgeattn::RopeDesc rope;
  rope.head_dim = c.head_dim;
  rope.layout = edgeattn::RopeLayout::kInterleaved;  // pairs (2i, 2i+1), base 10000: llama2.c's
  Status s = Check(m, edgeattn::RmsNorm(m->x, n, c.dim, w.rms_att, kRmsEps, m->xb), "rms_norm", layer);
  if (s == Status::kOk) s = Project(m, m->xb, n, w.wq, m->q, "wq", layer);
  if (s == Status::kOk) s = Project(m, m->xb, n, w.wk, m->k, "wk", layer);
  if (s == Status::kOk) s = Project(m, m->xb, n, w.wv, m->v, "wv", layer);
  rope.num_heads = c.n_heads;
  if (s == Status::kOk) s = Check(m, edgeattn::Rope(rope, m->q, n, first_position), "rope q", layer);
  rope.num_heads = c.n_kv_heads;
  if (s == Status::kOk) s = Check(m, edgeattn::Rope(rope, m->k, n, first_position), "rope k", layer);
  if (s == Status::kOk) s = Check(m, m->caches[layer].Append(m->k, m->v, n), "cache append", layer);
  if (s == Status::kOk) s = Attend(m, layer, n);
  if (s == Status::kOk) s = Project(m, m->attended, n, w.wo, m->xb, "wo", layer);
  if (s == Status::kOk) s = Check(m, edgeattn::Add(m->x, m->xb, m->x, n * c.dim), "residual", layer);
  return s;
}

// x += w2(silu(w1 h) * w3 h), h = rmsnorm(x).
Status FeedForwardBlock(Model* m, size_t layer, size_t n) {
  const Config& c = m->config;
  const LayerWeights& w = m->weights.layers[layer];
  Status s = Check(m, edgeattn::RmsNorm(m->x, n, c.dim, w.rms_ffn, kRmsEps, m->xb), "rms_norm", layer);
  if (s == Status::kOk) s = Project(m, m->xb, n, w.w1, m->hb, "w1", layer);
  if (s == Status::kOk) s = Project(m, m->xb, n, w.w3, m->hb2, "w3", layer);
  if (s == Status::kOk) {
    s = Check(m, edgeattn::GatedActivation(m->hb, m->hb2, m->hb, n * c.hidden_dim, edgeattn::Activation::kSilu),
              "swiglu", layer);
  }
  if (s == Status::kOk) s = Project(m, m->hb, n, w.w2, m->xb, "w2", layer);
  if (s == Status::kOk) s = Check(m, edgeattn::Add(m->x, m->xb, m->x, n * c.dim), "residual", layer);
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
  s = Check(m, edgeattn::RmsNorm(m->x + (n - 1) * c.dim, 1, c.dim, m->weights.rms_final, kRmsEps, m->xb),
            "final rms_norm", c.n_layers);
  return s == Status::kOk ? Project(m, m->xb, 1, m->weights.classifier, m->logits, "classifier", c.n_layers) : s;
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
  if (m->config.format == Format::kQ8) {
    return Reject(m, Status::kUnsupported,
                  "Q8 weights (version 2 files) need edgeattn's int8 linear layer (issue 30), not in this build");
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
