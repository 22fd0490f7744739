// SPDX-License-Identifier: Apache-2.0
// The C API: thin wrappers over the C++ API, same contracts.
#include "edgeattn/edgeattn.h"

#include <stddef.h>
#include <string.h>

#include <type_traits>

#include "edgeattn/edgeattn.hpp"

namespace {

using edgeattn::Status;

static_assert(static_cast<int>(Status::kOk) == EDGEATTN_OK, "status values must match");
static_assert(static_cast<int>(Status::kNullPointer) == EDGEATTN_ERROR_NULL_POINTER, "status values must match");
static_assert(static_cast<int>(Status::kInvalidShape) == EDGEATTN_ERROR_INVALID_SHAPE, "status values must match");
static_assert(static_cast<int>(Status::kInvalidArgument) == EDGEATTN_ERROR_INVALID_ARGUMENT,
              "status values must match");
static_assert(static_cast<int>(Status::kWorkspaceTooSmall) == EDGEATTN_ERROR_WORKSPACE_TOO_SMALL,
              "status values must match");
static_assert(static_cast<int>(Status::kOverlap) == EDGEATTN_ERROR_OVERLAP, "status values must match");
static_assert(static_cast<int>(Status::kCapacity) == EDGEATTN_ERROR_CAPACITY, "status values must match");
static_assert(static_cast<int>(edgeattn::KvType::kF32) == EDGEATTN_KV_F32 &&
                  static_cast<int>(edgeattn::KvType::kF16) == EDGEATTN_KV_F16 &&
                  static_cast<int>(edgeattn::KvType::kQ8) == EDGEATTN_KV_Q8,
              "KV types must match");
static_assert(static_cast<int>(edgeattn::MaskKind::kNone) == EDGEATTN_MASK_NONE &&
                  static_cast<int>(edgeattn::MaskKind::kCausal) == EDGEATTN_MASK_CAUSAL,
              "mask kinds must match");
static_assert(static_cast<int>(edgeattn::RopeLayout::kInterleaved) == EDGEATTN_ROPE_INTERLEAVED &&
                  static_cast<int>(edgeattn::RopeLayout::kHalf) == EDGEATTN_ROPE_HALF,
              "RoPE layouts must match");

static_assert(static_cast<int>(edgeattn::Activation::kGeluErf) == EDGEATTN_ACT_GELU_ERF &&
                  static_cast<int>(edgeattn::Activation::kGeluTanh) == EDGEATTN_ACT_GELU_TANH &&
                  static_cast<int>(edgeattn::Activation::kSilu) == EDGEATTN_ACT_SILU &&
                  static_cast<int>(edgeattn::Activation::kRelu) == EDGEATTN_ACT_RELU,
              "activation values must match");

static_assert(static_cast<int>(edgeattn::Q8Activations::kF32) == EDGEATTN_Q8_ACT_F32 &&
                  static_cast<int>(edgeattn::Q8Activations::kQ8) == EDGEATTN_Q8_ACT_Q8,
              "Q8 activation modes must match");

edgeattn_status ToC(Status status) { return static_cast<edgeattn_status>(status); }

// A C caller may store any int in a C enum; in C++ reading an out-of-range value as the enum type is undefined
// behaviour. Read the object's bytes as its underlying integer instead, and let validation reject it.
template <typename Enum>
std::underlying_type_t<Enum> RawValue(const Enum& e) {
  std::underlying_type_t<Enum> value;
  memcpy(&value, &e, sizeof(value));
  return value;
}

edgeattn::AttentionDesc FromC(const edgeattn_attention_desc& c) {
  edgeattn::AttentionDesc desc;
  desc.q_len = c.q_len;
  desc.kv_len = c.kv_len;
  desc.head_dim = c.head_dim;
  desc.value_dim = c.value_dim;
  desc.num_heads = c.num_heads;
  desc.num_kv_heads = c.num_kv_heads;
  desc.scale = c.scale;
  desc.mask = static_cast<edgeattn::MaskKind>(RawValue(c.mask));
  desc.additive_mask = c.additive_mask;
  return desc;
}

edgeattn::RopeDesc FromC(const edgeattn_rope_desc& c) {
  edgeattn::RopeDesc desc;
  desc.num_heads = c.num_heads;
  desc.head_dim = c.head_dim;
  desc.rotary_dim = c.rotary_dim;
  desc.base = c.base;
  desc.layout = static_cast<edgeattn::RopeLayout>(RawValue(c.layout));
  return desc;
}

edgeattn::KvCacheDesc FromC(const edgeattn_kv_cache_desc& c) {
  edgeattn::KvCacheDesc desc;
  desc.type = static_cast<edgeattn::KvType>(RawValue(c.type));
  desc.num_kv_heads = c.num_kv_heads;
  desc.head_dim = c.head_dim;
  desc.value_dim = c.value_dim;
  desc.capacity = c.capacity;
  desc.window = c.window;
  return desc;
}

edgeattn::Q8Matrix FromC(const edgeattn_q8_matrix& c) {
  edgeattn::Q8Matrix w;
  w.q = c.q;
  w.scale = c.scale;
  w.out_features = c.out_features;
  w.in_features = c.in_features;
  w.group_size = c.group_size;
  return w;
}

edgeattn::Q8Activations FromC(const edgeattn_q8_activations& act) {
  return static_cast<edgeattn::Q8Activations>(RawValue(act));
}

// A C++ view of a C cache (the struct holds the whole state: the view is rebuilt on every call).
edgeattn::KvCache FromC(const edgeattn_kv_cache& c) {
  return edgeattn::KvCache(edgeattn::internal::KvCacheState{FromC(c.desc), c.storage, c.storage_size, c.length});
}

}  // namespace

extern "C" {

const char* edgeattn_version(void) { return edgeattn::Version(); }

const char* edgeattn_simd_target(void) { return edgeattn::SimdTarget(); }

const char* edgeattn_status_string(edgeattn_status status) {
  return edgeattn::StatusString(static_cast<Status>(RawValue(status)));
}

size_t edgeattn_attention_workspace_size(const edgeattn_attention_desc* desc) {
  return desc == NULL ? 0 : edgeattn::AttentionWorkspaceSize(FromC(*desc));
}

edgeattn_status edgeattn_attention(const edgeattn_attention_desc* desc, const float* q, const float* k, const float* v,
                                   float* out, void* workspace, size_t workspace_size) {
  if (desc == NULL) return EDGEATTN_ERROR_NULL_POINTER;
  return ToC(edgeattn::Attention(FromC(*desc), q, k, v, out, workspace, workspace_size));
}

edgeattn_status edgeattn_attention_weights(const edgeattn_attention_desc* desc, const float* q, const float* k,
                                           float* weights) {
  if (desc == NULL) return EDGEATTN_ERROR_NULL_POINTER;
  return ToC(edgeattn::AttentionWeights(FromC(*desc), q, k, weights));
}

size_t edgeattn_attention_part_count(const edgeattn_attention_desc* desc) {
  return desc == NULL ? 0 : edgeattn::AttentionPartCount(FromC(*desc));
}

size_t edgeattn_attention_shared_size(const edgeattn_attention_desc* desc) {
  return desc == NULL ? 0 : edgeattn::AttentionSharedSize(FromC(*desc));
}

edgeattn_status edgeattn_attention_part(const edgeattn_attention_desc* desc, size_t part, const float* q,
                                        const float* k, const float* v, float* out, void* shared, size_t shared_size,
                                        void* workspace, size_t workspace_size) {
  if (desc == NULL) return EDGEATTN_ERROR_NULL_POINTER;
  return ToC(edgeattn::AttentionPart(FromC(*desc), part, q, k, v, out, shared, shared_size, workspace, workspace_size));
}

edgeattn_status edgeattn_attention_finish(const edgeattn_attention_desc* desc, void* shared, size_t shared_size,
                                          float* out) {
  if (desc == NULL) return EDGEATTN_ERROR_NULL_POINTER;
  return ToC(edgeattn::AttentionFinish(FromC(*desc), shared, shared_size, out));
}

edgeattn_status edgeattn_softmax(const float* in, float* out, size_t rows, size_t cols) {
  return ToC(edgeattn::Softmax(in, out, rows, cols));
}

edgeattn_status edgeattn_exp(const float* in, float* out, size_t n) { return ToC(edgeattn::Exp(in, out, n)); }

edgeattn_status edgeattn_dot(const float* a, const float* b, size_t n, float* result) {
  return ToC(edgeattn::Dot(a, b, n, result));
}

edgeattn_status edgeattn_linear(const float* x, size_t rows, size_t in_features, const float* weight, const float* bias,
                                size_t out_features, float* y) {
  return ToC(edgeattn::Linear(x, rows, in_features, weight, bias, out_features, y));
}

edgeattn_status edgeattn_add_positional_encoding(float* x, size_t seq_len, size_t d_model, size_t first_position) {
  return ToC(edgeattn::AddPositionalEncoding(x, seq_len, d_model, first_position));
}

edgeattn_status edgeattn_rms_norm(const float* x, size_t rows, size_t cols, const float* weight, float eps, float* y) {
  return ToC(edgeattn::RmsNorm(x, rows, cols, weight, eps, y));
}

edgeattn_status edgeattn_layer_norm(const float* x, size_t rows, size_t cols, const float* weight, const float* bias,
                                    float eps, float* y) {
  return ToC(edgeattn::LayerNorm(x, rows, cols, weight, bias, eps, y));
}

edgeattn_status edgeattn_rope(const edgeattn_rope_desc* desc, float* x, size_t seq_len, size_t first_position) {
  if (desc == NULL) return EDGEATTN_ERROR_NULL_POINTER;
  return ToC(edgeattn::Rope(FromC(*desc), x, seq_len, first_position));
}

edgeattn_status edgeattn_rope_table_fill(size_t rotary_dim, float base, size_t first_position, size_t positions,
                                         float* table) {
  return ToC(edgeattn::RopeTableFill(rotary_dim, base, first_position, positions, table));
}

edgeattn_status edgeattn_rope_with_table(const edgeattn_rope_desc* desc, const edgeattn_rope_table* table, float* x,
                                         size_t seq_len, size_t first_position) {
  if (desc == NULL || table == NULL) return EDGEATTN_ERROR_NULL_POINTER;
  const edgeattn::RopeTableView view{table->data, table->rotary_dim, table->first_position, table->positions};
  return ToC(edgeattn::RopeWithTable(FromC(*desc), view, x, seq_len, first_position));
}

edgeattn_status edgeattn_linear_transposed(const float* x, size_t rows, size_t in_features, const float* weight,
                                           const float* bias, size_t out_features, float* y) {
  return ToC(edgeattn::LinearTransposed(x, rows, in_features, weight, bias, out_features, y));
}

size_t edgeattn_linear_transposed_part_count(size_t rows, size_t in_features, size_t out_features) {
  return edgeattn::LinearTransposedPartCount(rows, in_features, out_features);
}

edgeattn_status edgeattn_linear_transposed_part(const float* x, size_t rows, size_t in_features, const float* weight,
                                                const float* bias, size_t out_features, size_t part, float* y) {
  return ToC(edgeattn::LinearTransposedPart(x, rows, in_features, weight, bias, out_features, part, y));
}

edgeattn_status edgeattn_q8_quantize(const float* w, size_t out_features, size_t in_features, size_t group_size,
                                     int8_t* q, float* scale) {
  return ToC(edgeattn::Q8Quantize(w, out_features, in_features, group_size, q, scale));
}

size_t edgeattn_linear_q8_workspace_size(size_t rows, const edgeattn_q8_matrix* w, edgeattn_q8_activations act) {
  return w == NULL ? 0 : edgeattn::LinearQ8WorkspaceSize(rows, FromC(*w), FromC(act));
}

edgeattn_status edgeattn_linear_q8(const float* x, size_t rows, const edgeattn_q8_matrix* w, const float* bias,
                                   edgeattn_q8_activations act, float* y, void* workspace, size_t workspace_size) {
  if (w == NULL) return EDGEATTN_ERROR_NULL_POINTER;
  return ToC(edgeattn::LinearQ8(x, rows, FromC(*w), bias, FromC(act), y, workspace, workspace_size));
}

size_t edgeattn_linear_q8_part_count(size_t rows, const edgeattn_q8_matrix* w) {
  return w == NULL ? 0 : edgeattn::LinearQ8PartCount(rows, FromC(*w));
}

edgeattn_status edgeattn_linear_q8_part(const float* x, size_t rows, const edgeattn_q8_matrix* w, const float* bias,
                                        edgeattn_q8_activations act, size_t part, float* y, void* workspace,
                                        size_t workspace_size) {
  if (w == NULL) return EDGEATTN_ERROR_NULL_POINTER;
  return ToC(edgeattn::LinearQ8Part(x, rows, FromC(*w), bias, FromC(act), part, y, workspace, workspace_size));
}

edgeattn_status edgeattn_linear_q8_part_range(const float* x, size_t rows, const edgeattn_q8_matrix* w,
                                              const float* bias, edgeattn_q8_activations act, size_t first_part,
                                              size_t part_count, float* y, void* workspace, size_t workspace_size) {
  if (w == NULL) return EDGEATTN_ERROR_NULL_POINTER;
  return ToC(edgeattn::LinearQ8PartRange(x, rows, FromC(*w), bias, FromC(act), first_part, part_count, y, workspace,
                                         workspace_size));
}

edgeattn_status edgeattn_activation_apply(const float* x, float* y, size_t n, edgeattn_activation act) {
  return ToC(edgeattn::ActivationApply(x, y, n, static_cast<edgeattn::Activation>(RawValue(act))));
}

edgeattn_status edgeattn_gated_activation(const float* gate, const float* up, float* y, size_t n,
                                          edgeattn_activation act) {
  return ToC(edgeattn::GatedActivation(gate, up, y, n, static_cast<edgeattn::Activation>(RawValue(act))));
}

edgeattn_status edgeattn_add(const float* a, const float* b, float* y, size_t n) {
  return ToC(edgeattn::Add(a, b, y, n));
}

size_t edgeattn_kv_cache_storage_size(const edgeattn_kv_cache_desc* desc) {
  return desc == NULL ? 0 : edgeattn::KvCacheStorageSize(FromC(*desc));
}

edgeattn_status edgeattn_kv_cache_init(edgeattn_kv_cache* cache, const edgeattn_kv_cache_desc* desc, void* storage,
                                       size_t storage_size) {
  if (cache == NULL || desc == NULL) return EDGEATTN_ERROR_NULL_POINTER;
  edgeattn::KvCache view;
  const Status status = view.Init(FromC(*desc), storage, storage_size);
  if (status == Status::kOk) {
    cache->desc = *desc;
    cache->storage = storage;
    cache->storage_size = storage_size;
    cache->length = 0;
  }
  return ToC(status);
}

edgeattn_status edgeattn_kv_cache_append(edgeattn_kv_cache* cache, const float* k, const float* v, size_t n) {
  if (cache == NULL) return EDGEATTN_ERROR_NULL_POINTER;
  edgeattn::KvCache view = FromC(*cache);
  const Status status = view.Append(k, v, n);
  if (status == Status::kOk) cache->length = view.length();
  return ToC(status);
}

edgeattn_status edgeattn_kv_cache_truncate(edgeattn_kv_cache* cache, size_t length) {
  if (cache == NULL) return EDGEATTN_ERROR_NULL_POINTER;
  edgeattn::KvCache view = FromC(*cache);
  const Status status = view.Truncate(length);
  if (status == Status::kOk) cache->length = view.length();
  return ToC(status);
}

edgeattn_status edgeattn_kv_cache_read(const edgeattn_kv_cache* cache, size_t position, float* k, float* v) {
  if (cache == NULL) return EDGEATTN_ERROR_NULL_POINTER;
  return ToC(FromC(*cache).Read(position, k, v));
}

size_t edgeattn_attention_cached_workspace_size(const edgeattn_attention_desc* desc, const edgeattn_kv_cache* cache) {
  return desc == NULL || cache == NULL ? 0 : edgeattn::AttentionCachedWorkspaceSize(FromC(*desc), FromC(*cache));
}

edgeattn_status edgeattn_attention_cached(const edgeattn_attention_desc* desc, const float* q,
                                          const edgeattn_kv_cache* cache, float* out, void* workspace,
                                          size_t workspace_size) {
  if (desc == NULL || cache == NULL) return EDGEATTN_ERROR_NULL_POINTER;
  return ToC(edgeattn::AttentionCached(FromC(*desc), q, FromC(*cache), out, workspace, workspace_size));
}

size_t edgeattn_attention_cached_part_count(const edgeattn_attention_desc* desc, const edgeattn_kv_cache* cache) {
  return desc == NULL || cache == NULL ? 0 : edgeattn::AttentionCachedPartCount(FromC(*desc), FromC(*cache));
}

size_t edgeattn_attention_cached_shared_size(const edgeattn_attention_desc* desc, const edgeattn_kv_cache* cache) {
  return desc == NULL || cache == NULL ? 0 : edgeattn::AttentionCachedSharedSize(FromC(*desc), FromC(*cache));
}

edgeattn_status edgeattn_attention_cached_part(const edgeattn_attention_desc* desc, size_t part, const float* q,
                                               const edgeattn_kv_cache* cache, float* out, void* shared,
                                               size_t shared_size, void* workspace, size_t workspace_size) {
  if (desc == NULL || cache == NULL) return EDGEATTN_ERROR_NULL_POINTER;
  return ToC(edgeattn::AttentionCachedPart(FromC(*desc), part, q, FromC(*cache), out, shared, shared_size, workspace,
                                           workspace_size));
}

edgeattn_status edgeattn_attention_cached_finish(const edgeattn_attention_desc* desc, const edgeattn_kv_cache* cache,
                                                 void* shared, size_t shared_size, float* out) {
  if (desc == NULL || cache == NULL) return EDGEATTN_ERROR_NULL_POINTER;
  return ToC(edgeattn::AttentionCachedFinish(FromC(*desc), FromC(*cache), shared, shared_size, out));
}

}  // extern "C"
