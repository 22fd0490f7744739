// SPDX-License-Identifier: Apache-2.0
// A llama2.c model on edgeattn: a decoder module to copy into an application or firmware (issue 31).
//
// What it does, in the order a program calls it:
//   1. ReadConfig(file bytes)        checks a llama2.c checkpoint held in memory (mapped, read once, or in flash):
//                                    version 0 (run.c: float32 weights) or version 2 (runq.c, "ak42": int8 weights
//                                    in groups with a float scale each); every size against the file's, and the
//                                    Q8 scales for NaN and infinity. A bad file is a status and a one-line reason.
//   2. ArenaBytes(config, options)   the bytes of every buffer a run needs (KV caches of the chosen type,
//                                    activations for a prefill chunk, workspaces per thread, the layer table,
//                                    the dequantized embedding of a Q8 file), from the config alone.
//   3. Init(model, file, arena)      points the weights into the file (used in place: nothing is copied except
//                                    the Q8 embedding table) and carves the arena. No allocation anywhere.
//   4. Forward(model, tokens, n)     a prefill (n tokens, run in chunks of options.max_chunk rows) or, with n = 1,
//                                    one decode step; the logits of the last token are in model.logits.
// Every step is an edgeattn call (rms_norm, linear_transposed or linear_q8, rope, kv_cache append +
// attention_cached, gated_activation, add); the linear layers and the attention of a step can be split into parts
// run by the application's threads (Parallel below). Numbers are those of llama2.c's forward() (run.c for float
// weights, runq.c for int8): RMSNorm eps 1e-5, RoPE on interleaved pairs with base 10000, attention scale
// 1/sqrt(head_dim), SwiGLU feed-forward, the classifier on the last token only.
#ifndef EDGEATTN_EXAMPLES_LLAMA_LLAMA2_H_
#define EDGEATTN_EXAMPLES_LLAMA_LLAMA2_H_

#include <stddef.h>
#include <stdint.h>

#include "edgeattn/edgeattn.hpp"

namespace llama2 {

enum class Status : int {
  kOk = 0,
  kBadFile = 1,      // the checkpoint's bytes are not a valid llama2.c file (Error says why)
  kBadArgument = 2,  // a null pointer, an option out of range, a token outside the vocabulary
  kArenaTooSmall = 3,
  kContextFull = 4,  // the KV caches hold options.capacity positions: no room for the tokens
  kNotFinite = 5,    // Q8 activations: a linear layer's input is inf or NaN (the model's numbers overflowed),
                     // which cannot be quantized (float activations carry inf and NaN through instead)
  kKernel = 6,       // an edgeattn call failed (Error names it and its status): a bug, not a bad input
};

// One line, for a person: what was wrong (file offsets, tensor names, the values found).
struct Error {
  char text[256] = {};
};

enum class Format : int {
  kF32 = 0,  // version 0 (run.c): 28-byte header, float32 tensors
  kQ8 = 2,   // version 2 (runq.c): 256-byte header "ak42", float32 norms, int8 matrices with float32 group scales
};

// The model's shape, from the file's header (llama2.c's Config) and what follows from it.
struct Config {
  Format format = Format::kF32;
  size_t dim = 0;         // the residual stream's width
  size_t hidden_dim = 0;  // the feed-forward's
  size_t n_layers = 0;
  size_t n_heads = 0;     // query heads
  size_t n_kv_heads = 0;  // K/V heads; divides n_heads
  size_t vocab_size = 0;
  size_t seq_len = 0;              // the longest sequence the model was trained for
  size_t head_dim = 0;             // dim / n_heads, even (RoPE rotates pairs)
  bool shared_classifier = false;  // the classifier is the token embedding (version 0: vocab_size > 0)
  size_t group_size = 0;           // Q8: inputs per scale, dividing dim and hidden_dim; 0 for F32
  size_t file_bytes = 0;           // what the tensors take: the file's size, exactly
};

// The largest header values accepted (anything larger is a corrupt file, not a model this module could run):
// well above Llama 2 70B's dim 8192, hidden 28672, 80 layers, 64 heads and Llama 3's 128256 tokens.
constexpr size_t kMaxDim = 65536, kMaxHidden = 262144, kMaxLayers = 1024, kMaxVocab = size_t{1} << 22,
                 kMaxSeqLen = size_t{1} << 20;

// One weight matrix [out_features][in_features] (nn.Linear's layout), inside the file.
struct Matrix {
  const float* f32 = nullptr;  // Format::kF32
  edgeattn::Q8Matrix q8;       // Format::kQ8: int8 values and group scales, both in the file (edgeattn_q8_matrix)
  size_t out_features = 0;
  size_t in_features = 0;
};

struct LayerWeights {
  const float* rms_att = nullptr;  // [dim]
  const float* rms_ffn = nullptr;  // [dim]
  Matrix wq, wk, wv, wo;           // [n_heads*head_dim][dim], [n_kv_heads*head_dim][dim] x 2, [dim][dim]
  Matrix w1, w2, w3;               // gate [hidden][dim], down [dim][hidden], up [hidden][dim]
};

struct Weights {
  const float* token_embedding = nullptr;  // [vocab][dim]: in the file (F32) or dequantized into the arena (Q8)
  LayerWeights* layers = nullptr;          // [n_layers], in the arena
  const float* rms_final = nullptr;        // [dim]
  Matrix classifier;                       // [vocab][dim]; the embedding's when shared
};

enum class Activations : int {
  kDefault = 0,  // Q8 weights: kQ8, as runq.c
  kF32 = 1,      // Q8 weights, float activations (issue 30's EDGEATTN_Q8_ACT_F32)
  kQ8 = 2,       // Q8 weights, activations quantized per group (EDGEATTN_Q8_ACT_Q8)
};

// Which of edgeattn's paths the module calls.
enum class Kernels : int {
  kDispatched = 0,  // edgeattn::RmsNorm, LinearQ8, ...: the best SIMD path of this CPU (Highway's dispatch)
  kScalar = 1,      // edgeattn::scalar::...: the plain C++ paths (the reference a port is checked against, and
                    // the MCU benchmark's scalar column); never split into parts (the split API is dispatched)
};

constexpr size_t kDefaultChunk = 64;  // rows per prefill call: activations of 64 tokens
constexpr size_t kMaxWorkers = 256;
// A call into the pool and back costs about 0.1 us with the workers spinning (llama2_pool.h), but each part
// repeats its call's fixed work (the checks; with Q8 activations, the quantisation of x), and waking a sleeping
// worker costs 10-50 us on the VMs of docs/performance.md: work under 2^16 multiply-adds stays on the calling
// thread. stories15M's 288 x 288 layers (2^16.3) split: two threads ran its Q8 decode at 1.65x one thread (median
// of 18 alternations) against 1.61x at 2^17 and 1.59x at 2^15 (docs/performance.md, "Two threads on a small
// model"). stories260K's calls stay under it (its attention, 8 heads of 8, reaches 2^16 only at position 512, the
// last of its context); split, its decode ran at 0.71x of one thread.
constexpr size_t kDefaultMinSplitWork = size_t{1} << 16;

struct Options {
  edgeattn::KvType kv_type = edgeattn::KvType::kF32;
  Activations activations = Activations::kDefault;  // only for Q8 weights (kBadArgument with F32 weights)
  size_t capacity = 0;                              // positions the KV caches hold; 0 = config.seq_len; at most seq_len
  size_t max_chunk = 0;  // most tokens per forward call inside Forward; 0 = kDefaultChunk (capped at capacity)
  size_t workers = 1;    // threads that run parts at once (each gets its own workspace); 0 = 1; at most kMaxWorkers
  // A call with fewer multiply-adds runs on the calling thread, not in parts (the bits are the same); 0 splits
  // every call. Attention: 2 * q_len * n_heads * head_dim * positions (scores and P.V); linear layers: rows *
  // in_features * out_features, summed over the layers that share an input (Q, K and V; the gate and up).
  size_t min_split_work = kDefaultMinSplitWork;
  Kernels kernels = Kernels::kDispatched;
  // RoPE from a table of cos and sin for the capacity's positions (head_dim floats per position, in the arena,
  // filled once by Init): float arithmetic per token instead of edgeattn::Rope's double-precision angles, for
  // cores without a double-precision FPU (Cortex-M4: software doubles). Other bits than Rope's (rope.h's bounds).
  bool rope_table = false;
};

// The application's threads (the module starts none). run(pool, fn, job, parts) calls fn(job, part, worker) once
// for every part in [0, parts), on any threads, in any order, and returns after the last call has returned;
// `worker` < options.workers names the workspace, so two calls running at the same time must pass different
// workers. With run null, Forward makes every call on the calling thread. Results are bit-identical either way
// (edgeattn's work split promise: the parts of a call write exactly the single call's bits).
struct Parallel {
  using PartFn = void (*)(void* job, size_t part, size_t worker);
  void (*run)(void* pool, PartFn fn, void* job, size_t parts) = nullptr;
  void* pool = nullptr;
};

// A model ready to run: the weights, the caches and the buffers of one sequence.
struct Model {
  Config config;
  Options options;  // with the defaults resolved (capacity, max_chunk, workers, activations)
  Weights weights;
  Parallel parallel;                    // set by the application after Init (default: one thread)
  edgeattn::KvCache* caches = nullptr;  // [n_layers], each of options.capacity positions
  float* x = nullptr;                   // [max_chunk][dim]: the residual stream
  float* xb = nullptr;                  // [max_chunk][dim]: a block's normed input, then its output
  float* q = nullptr;                   // [max_chunk][dim]
  float* k = nullptr;                   // [max_chunk][kv_dim]
  float* v = nullptr;                   // [max_chunk][kv_dim]
  float* attended = nullptr;            // [max_chunk][dim]
  float* hb = nullptr;                  // [max_chunk][hidden_dim]: gate, then silu(gate) * up
  float* hb2 = nullptr;                 // [max_chunk][hidden_dim]: up
  float* logits = nullptr;              // [vocab]: the last token's logits after Forward
  unsigned char* workspaces = nullptr;  // [workers][workspace_bytes]: attention's and linear_q8's, in turn
  size_t workspace_bytes = 0;
  unsigned char* shared = nullptr;  // the attention parts' shared buffer
  size_t shared_bytes = 0;
  float* rope_table = nullptr;  // [capacity][head_dim] with options.rope_table, else null
  size_t position = 0;          // tokens run so far = the caches' length
  Error error;                  // why the last call that failed failed
};

// Reads the header of a checkpoint of `size` bytes at `file` (4-byte aligned) and checks the whole file: header
// values in range (> 0, at most the kMax limits, n_heads dividing dim into even heads, n_kv_heads dividing
// n_heads), the file's size equal to what the header implies, and for Q8 the group size dividing every matrix's
// rows (dim and hidden_dim), every scale finite and every scale array 4-byte aligned. kBadFile with a reason.
[[nodiscard]] Status ReadConfig(const void* file, size_t size, Config* config, Error* error) noexcept;

// Bytes of arena Init needs for this config and options; 0 if an option is out of range or the sum overflows
// (then error, if not null, says which).
size_t ArenaBytes(const Config& config, const Options& options, Error* error = nullptr) noexcept;

// Checks the file (ReadConfig), resolves the options, points the weights into the file and lays the arena out
// (any alignment; buffers are aligned inside). The file must outlive the model. Errors: those of ReadConfig,
// kBadArgument (options), kArenaTooSmall.
[[nodiscard]] Status Init(Model* model, const void* file, size_t size, const Options& options, void* arena,
                          size_t arena_bytes, Error* error) noexcept;

// Runs n >= 1 tokens at positions model.position .. position + n - 1 (a prompt: prefill in chunks of
// options.max_chunk; one token: a decode step) and leaves the last token's logits in model.logits. Errors
// (model.error says more; the model is as before the call: position and caches unchanged): kBadArgument (null
// tokens, n = 0, a token outside [0, vocab)), kContextFull (position + n > capacity), kNotFinite (Q8 activations
// of a model whose numbers overflowed), kKernel.
[[nodiscard]] Status Forward(Model* model, const int* tokens, size_t n) noexcept;

// Forgets the positions from `position` on (position <= model.position), to start again or to rewind.
[[nodiscard]] Status Rewind(Model* model, size_t position) noexcept;

const char* StatusString(Status status) noexcept;

}  // namespace llama2

#endif  // EDGEATTN_EXAMPLES_LLAMA_LLAMA2_H_
