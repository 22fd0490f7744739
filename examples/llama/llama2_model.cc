// SPDX-License-Identifier: Apache-2.0
// The arena and Init: every buffer of a run sized from the config, the weights pointed into the file.
#include <stdio.h>
#include <string.h>
#include <new>

#include "llama2.h"
#include "llama2_file.h"
#include "llama2_internal.h"

namespace llama2 {
namespace {

constexpr size_t kAlign = 64;  // a cache line, and the widest vector: every buffer starts on one

// Hands out aligned pieces of an arena; with a null base it only counts. Any overflow makes Total() 0.
class Carver {
 public:
  explicit Carver(unsigned char* base) : base_(base) {}
  template <typename T>
  T* Take(size_t count) {
    offset_ = (offset_ + kAlign - 1) / kAlign * kAlign;
    if (failed_ || count > (SIZE_MAX - offset_) / sizeof(T)) {
      failed_ = true;
      return nullptr;
    }
    T* p = base_ == nullptr ? nullptr : internal::BytesAs<T>(base_ + offset_);
    offset_ += count * sizeof(T);
    return p;
  }
  size_t Total() const { return failed_ || offset_ > SIZE_MAX - kAlign ? 0 : offset_ + kAlign; }

 private:
  unsigned char* base_;
  size_t offset_ = 0;
  bool failed_ = false;
};

// a * b, or SIZE_MAX (which no Take can satisfy) if it overflows.
size_t Mul(size_t a, size_t b) { return b != 0 && a > SIZE_MAX / b ? SIZE_MAX : a * b; }

// The largest workspace an attention call of 1 .. max_chunk queries takes. The size grows with q_len, except that
// calls of fewer than kAttentionTiledMinQueries queries may add room for key chunks: the short calls and the
// longest one cover every case.
size_t AttentionWorkspaceBytes(const Config& c, const Options& o) {
  size_t most = 0;
  for (size_t q_len = 1; q_len <= o.max_chunk; ++q_len) {
    const size_t bytes =
        edgeattn::AttentionCachedWorkspaceBytes(q_len, c.n_heads, c.n_kv_heads, c.head_dim, c.head_dim, o.capacity);
    if (bytes == 0) return 0;
    most = bytes > most ? bytes : most;
    if (q_len == edgeattn::kAttentionTiledMinQueries && o.max_chunk > q_len) q_len = o.max_chunk - 1;
  }
  return most;
}

// A worker's workspace serves attention and, with Q8 activations, linear_q8 (one after the other, never both at
// once). linear_q8's grows with the rows and the inputs: max_chunk rows of the widest input (dim or hidden_dim).
size_t WorkspaceBytes(const Config& c, const Options& o) {
  const size_t attention = AttentionWorkspaceBytes(c, o);
  if (c.format != Format::kQ8 || o.activations != Activations::kQ8 || attention == 0) return attention;
  const size_t widest = c.hidden_dim > c.dim ? c.hidden_dim : c.dim;
  const size_t q8 =
      edgeattn::internal::LinearQ8WorkspaceBytes(o.max_chunk, widest, c.group_size, edgeattn::Q8Activations::kQ8);
  return q8 == 0 ? 0 : (q8 > attention ? q8 : attention);
}

// The shared buffer of the attention parts: only calls of fewer than kAttentionTiledMinQueries queries split the
// keys. kv_cache.h has no size function for it that takes a capacity instead of a filled cache, so this asks
// attention_shared_size for the uncached call over capacity keys, which splits the same positions into the same
// chunks; Forward checks each call's own size against it (kArenaTooSmall, never a short buffer).
size_t SharedBytes(const Config& c, const Options& o) {
  if (o.workers < 2) return 0;
  size_t most = 0;
  for (size_t q_len = 1; q_len <= o.max_chunk && q_len < edgeattn::kAttentionTiledMinQueries; ++q_len) {
    const size_t bytes = edgeattn::AttentionSharedSize(internal::AttentionShape(c, q_len, o.capacity));
    most = bytes > most ? bytes : most;
  }
  return most;
}

// Lays out the arena (or, with a null base, counts it): returns its size, 0 on overflow or an invalid shape.
size_t Layout(const Config& c, const Options& o, unsigned char* base, Model* m) {
  Carver arena(base);
  const size_t kv_dim = c.n_kv_heads * c.head_dim, rows = o.max_chunk;
  const size_t cache_bytes = edgeattn::KvCacheStorageBytes(o.kv_type, c.n_kv_heads, c.head_dim, c.head_dim, o.capacity);
  m->workspace_bytes = WorkspaceBytes(c, o);
  m->shared_bytes = SharedBytes(c, o);
  if (cache_bytes == 0 || m->workspace_bytes == 0) return 0;
  m->weights.layers = arena.Take<LayerWeights>(c.n_layers);
  m->caches = arena.Take<edgeattn::KvCache>(c.n_layers);
  unsigned char* storage = arena.Take<unsigned char>(Mul(c.n_layers, cache_bytes));
  for (size_t l = 0; base != nullptr && l < c.n_layers; ++l) {
    new (&m->caches[l]) edgeattn::KvCache();
    edgeattn::KvCacheDesc desc;
    desc.type = o.kv_type;
    desc.num_kv_heads = c.n_kv_heads;
    desc.head_dim = c.head_dim;
    desc.value_dim = c.head_dim;
    desc.capacity = o.capacity;
    if (m->caches[l].Init(desc, storage + l * cache_bytes, cache_bytes) != edgeattn::Status::kOk) return 0;
  }
  m->x = arena.Take<float>(Mul(rows, c.dim));
  m->xb = arena.Take<float>(Mul(rows, c.dim));
  m->q = arena.Take<float>(Mul(rows, c.dim));
  m->attended = arena.Take<float>(Mul(rows, c.dim));
  m->k = arena.Take<float>(Mul(rows, kv_dim));
  m->v = arena.Take<float>(Mul(rows, kv_dim));
  m->hb = arena.Take<float>(Mul(rows, c.hidden_dim));
  m->hb2 = arena.Take<float>(Mul(rows, c.hidden_dim));
  m->logits = arena.Take<float>(c.vocab_size);
  if (c.format == Format::kQ8) m->weights.token_embedding = arena.Take<float>(Mul(c.vocab_size, c.dim));
  m->workspaces = arena.Take<unsigned char>(Mul(o.workers, m->workspace_bytes));
  m->shared = arena.Take<unsigned char>(m->shared_bytes);
  if (o.rope_table) m->rope_table = arena.Take<float>(Mul(o.capacity, c.head_dim));
  return arena.Total();
}

// The options with their defaults filled in; false if one is out of range.
bool Resolve(const Config& c, const Options& in, Options* out, Error* error) {
  *out = in;
  const char* wrong = nullptr;
  if (in.kv_type != edgeattn::KvType::kF32 && in.kv_type != edgeattn::KvType::kF16 &&
      in.kv_type != edgeattn::KvType::kQ8) {
    wrong = "unknown KV cache type";
  } else if (c.format == Format::kF32 && in.activations == Activations::kQ8) {
    wrong = "Q8 activations need Q8 weights (a version 2 file)";
  } else if (in.activations != Activations::kDefault && in.activations != Activations::kF32 &&
             in.activations != Activations::kQ8) {
    wrong = "unknown activations";
  } else if (in.capacity > c.seq_len) {
    wrong = "capacity exceeds the model's seq_len";
  } else if (in.workers > kMaxWorkers) {
    wrong = "more than kMaxWorkers workers";
  } else if (in.kernels != Kernels::kDispatched && in.kernels != Kernels::kScalar) {
    wrong = "unknown kernels";
  }
  if (wrong != nullptr) {
    if (error != nullptr) snprintf(error->text, sizeof(error->text), "options: %s", wrong);
    return false;
  }
  if (out->activations == Activations::kDefault) {
    out->activations = c.format == Format::kQ8 ? Activations::kQ8 : Activations::kF32;
  }
  if (out->capacity == 0) out->capacity = c.seq_len;
  if (out->max_chunk == 0) out->max_chunk = kDefaultChunk;
  if (out->max_chunk > out->capacity) out->max_chunk = out->capacity;
  if (out->workers == 0) out->workers = 1;
  return true;
}

Matrix F32Matrix(const unsigned char* base, const file::Tensor& t) {
  Matrix m;
  m.f32 = internal::BytesAs<const float>(base + t.offset);
  m.out_features = static_cast<size_t>(t.rows);
  m.in_features = static_cast<size_t>(t.cols);
  return m;
}

Matrix QuantizedMatrix(const unsigned char* base, const file::Tensor& t, size_t group_size) {
  Matrix m;
  m.out_features = m.q8.out_features = static_cast<size_t>(t.rows);
  m.in_features = m.q8.in_features = static_cast<size_t>(t.cols);
  m.q8.q = internal::BytesAs<const int8_t>(base + t.offset);
  m.q8.scale = internal::BytesAs<const float>(base + t.scale_offset);
  m.q8.group_size = group_size;
  return m;
}

// Points the weights into the file. The Q8 embedding is dequantized into the arena (q * scale, a float product:
// the rows a token looks up, read once per token, are not worth a Q8 path).
void MapWeights(const Config& c, const unsigned char* base, Weights* w) {
  float* dequantized = const_cast<float*>(w->token_embedding);
  file::WalkTensors(c, [&](const file::Tensor& t) {
    const float* floats = internal::BytesAs<const float>(base + t.offset);
    const Matrix matrix = t.quantized ? QuantizedMatrix(base, t, c.group_size) : F32Matrix(base, t);
    LayerWeights& layer = w->layers[t.layer];
    switch (t.id) {
      case file::TensorId::kEmbedding:
        if (c.shared_classifier) w->classifier = matrix;
        if (!t.quantized) {
          w->token_embedding = floats;
          break;
        }
        for (size_t i = 0; i < c.vocab_size * c.dim; ++i) {
          dequantized[i] = static_cast<float>(matrix.q8.q[i]) * matrix.q8.scale[i / c.group_size];
        }
        break;
      case file::TensorId::kRmsAtt:
        layer.rms_att = floats;
        break;
      case file::TensorId::kWq:
        layer.wq = matrix;
        break;
      case file::TensorId::kWk:
        layer.wk = matrix;
        break;
      case file::TensorId::kWv:
        layer.wv = matrix;
        break;
      case file::TensorId::kWo:
        layer.wo = matrix;
        break;
      case file::TensorId::kRmsFfn:
        layer.rms_ffn = floats;
        break;
      case file::TensorId::kW1:
        layer.w1 = matrix;
        break;
      case file::TensorId::kW2:
        layer.w2 = matrix;
        break;
      case file::TensorId::kW3:
        layer.w3 = matrix;
        break;
      case file::TensorId::kRmsFinal:
        w->rms_final = floats;
        break;
      case file::TensorId::kRopeTables:
        break;
      case file::TensorId::kClassifier:
        w->classifier = matrix;
        break;
    }
    return true;
  });
}

}  // namespace

size_t ArenaBytes(const Config& config, const Options& options, Error* error) noexcept {
  Options resolved;
  Model counting;
  if (!Resolve(config, options, &resolved, error)) return 0;
  const size_t bytes = Layout(config, resolved, nullptr, &counting);
  if (bytes == 0 && error != nullptr) {
    snprintf(error->text, sizeof(error->text), "the buffers of %lu positions overflow this target's size_t",
             static_cast<unsigned long>(resolved.capacity));
  }
  return bytes;
}

Status Init(Model* model, const void* file, size_t size, const Options& options, void* arena, size_t arena_bytes,
            Error* error) noexcept {
  if (model == nullptr || arena == nullptr) return Status::kBadArgument;
  Config config;
  Status status = ReadConfig(file, size, &config, error);
  if (status != Status::kOk) return status;
  Options resolved;
  if (!Resolve(config, options, &resolved, error)) return Status::kBadArgument;
  const size_t need = ArenaBytes(config, options);
  if (need == 0 || arena_bytes < need) {
    if (error != nullptr) {
      snprintf(error->text, sizeof(error->text), "the arena has %lu bytes, the model needs %lu",
               static_cast<unsigned long>(arena_bytes), static_cast<unsigned long>(need));
    }
    return Status::kArenaTooSmall;
  }
  unsigned char* base = internal::AlignUp(arena, kAlign);
  Model m;
  m.config = config;
  m.options = resolved;
  if (Layout(config, resolved, base, &m) == 0) return Status::kArenaTooSmall;
  for (size_t l = 0; l < config.n_layers; ++l) new (&m.weights.layers[l]) LayerWeights();
  MapWeights(config, static_cast<const unsigned char*>(file), &m.weights);
  if (m.rope_table != nullptr &&
      edgeattn::RopeTableFill(config.head_dim, 0.0f, 0, resolved.capacity, m.rope_table) != edgeattn::Status::kOk) {
    return Status::kKernel;  // the shape passed ReadConfig's checks: not reached
  }
  *model = m;
  return Status::kOk;
}

Status Rewind(Model* model, size_t position) noexcept {
  if (model == nullptr || position > model->position) return Status::kBadArgument;
  for (size_t l = 0; l < model->config.n_layers; ++l) {
    if (model->caches[l].Truncate(position) != edgeattn::Status::kOk) return Status::kKernel;
  }
  model->position = position;
  return Status::kOk;
}

const char* StatusString(Status status) noexcept {
  switch (status) {
    case Status::kOk:
      return "ok";
    case Status::kBadFile:
      return "bad file";
    case Status::kBadArgument:
      return "bad argument";
    case Status::kArenaTooSmall:
      return "arena too small";
    case Status::kContextFull:
      return "context full";
    case Status::kNotFinite:
      return "activations not finite";
    case Status::kKernel:
      return "edgeattn call failed";
  }
  return "unknown status";
}

}  // namespace llama2
