/* SPDX-License-Identifier: Apache-2.0 */
/* edgeattn C API: allocation-free transformer attention kernels.
 *
 * Valid C99 and C++. Every function is thread-safe and reentrant: the library has no global mutable state
 * (Highway's once-per-process CPU detection is the only shared state, and it is atomic).
 *
 * Common rules
 *  - Any pointer alignment is accepted (4-byte alignment of float arrays is enough, 1 byte for the workspace).
 *  - On any error nothing is written to any output; the status says what was wrong. When several things are
 *    wrong, the first in this order is reported: NULL pointer, shape, argument, workspace size, overlap; the
 *    workspace pointer itself is checked with its size (which depends on the shape), after the arguments.
 *  - NULL is an error for every pointer that is documented as an array, except the arrays of edgeattn_exp and
 *    edgeattn_dot when n = 0 (nothing is read or written; an empty container's data() may be NULL).
 *  - Partial overlap between an output and an input is EDGEATTN_ERROR_OVERLAP; exact aliasing (out == in)
 *    is allowed only where noted.
 *  - Zero rows/columns/sequence lengths are EDGEATTN_ERROR_INVALID_SHAPE, except edgeattn_exp and
 *    edgeattn_dot, where n = 0 is valid.
 *  - Error bounds below use u = 2^-24 (unit roundoff of float) and ULP = unit in the last place of the exact
 *    result rounded to float. The C++ headers (dot.h, exp.h, softmax.h, attention.h, linear.h,
 *    positional_encoding.h, kv_cache.h) state the same contracts in more detail; the tests assert exactly these
 *    bounds.
 */
#ifndef EDGEATTN_EDGEATTN_H_
#define EDGEATTN_EDGEATTN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum edgeattn_status {
  EDGEATTN_OK = 0,
  EDGEATTN_ERROR_NULL_POINTER = 1,  /* a required pointer is NULL */
  EDGEATTN_ERROR_INVALID_SHAPE = 2, /* a zero size where one is not allowed, or sizes whose products overflow size_t */
  EDGEATTN_ERROR_INVALID_ARGUMENT = 3, /* non-finite or negative scale, num_heads not a multiple of num_kv_heads, ... */
  EDGEATTN_ERROR_WORKSPACE_TOO_SMALL = 4, /* a caller buffer (workspace, shared buffer, KV cache storage) too small */
  EDGEATTN_ERROR_OVERLAP = 5,             /* an output overlaps an input where the function does not allow it */
  /* New status: a linear cache (window = 0) has no room for the positions being appended. */
  EDGEATTN_ERROR_CAPACITY = 6
} edgeattn_status;

typedef enum edgeattn_mask_kind { EDGEATTN_MASK_NONE = 0, EDGEATTN_MASK_CAUSAL = 1 } edgeattn_mask_kind;

typedef struct edgeattn_attention_desc {
  size_t q_len;        /* Lq >= 1 */
  size_t kv_len;       /* Lk >= 1 */
  size_t head_dim;     /* d_k >= 1, width of each query and key head */
  size_t value_dim;    /* d_v >= 1, width of each value and output head */
  size_t num_heads;    /* >= 1 */
  size_t num_kv_heads; /* 0 means num_heads; otherwise >= 1 and divides num_heads */
  float scale;         /* 0 means 1/sqrt(head_dim); otherwise finite and > 0 */
  edgeattn_mask_kind mask;
  const float* additive_mask; /* NULL, or q_len*kv_len floats, row-major, added to every head's scaled scores */
} edgeattn_attention_desc;

/* Layouts, dense row-major:  q [q_len][num_heads][head_dim]     k [kv_len][num_kv_heads][head_dim]
                              v [kv_len][num_kv_heads][value_dim] out [q_len][num_heads][value_dim]
   Query head h reads K/V head h / (num_heads / num_kv_heads). */

/* Library version, "MAJOR.MINOR.PATCH". */
const char* edgeattn_version(void);

/* Name of the Highway target the SIMD path runs on in this process, e.g. "AVX3", "AVX2", "NEON", "SVE2",
   "SCALAR" or "EMU128". Hosted builds choose it at run time from the CPU; static-dispatch builds fix it at
   compile time. The compiler flags the library is built with set the lowest target compiled (docs/platforms.md,
   "Your compiler flags"). */
const char* edgeattn_simd_target(void);

/* A short English description of a status code; "unknown status" for values outside the enum. */
const char* edgeattn_status_string(edgeattn_status status);

/* Bytes of workspace edgeattn_attention needs for this descriptor; 0 if none is needed or desc is invalid
   (then edgeattn_attention reports why). The size depends on q_len, kv_len, head_dim and value_dim (attention.h's
   AttentionWorkspaceBytes; value_dim only for decode shapes in key chunks); callers must not rely on more than
   that. */
size_t edgeattn_attention_workspace_size(const edgeattn_attention_desc* desc);

/* out = softmax(q k^T * scale + mask) v for every query head, with masked keys skipped.
 *  - Causal masking is bottom-right aligned: query i sees key j iff j <= i + kv_len - q_len.
 *  - additive_mask is added to the scaled scores of every head; an entry of -inf masks that key for that query.
 *  - A key masked for a query never enters that query's row (a NaN there cannot reach it); a key masked for
 *    every query is never read from v, nor from k except by the small path (kv_len up to one vector), which
 *    discards its scores. A query row that sees no key outputs zeros.
 *  - out must not overlap q, k, v, additive_mask or the workspace; the workspace must not overlap the inputs.
 *  Error bound: see attention.h (componentwise, in terms of the softmax weights; on random N(0,1) data the
 *  relative L2 error per output row is about 2e-7 to 5e-7). */
edgeattn_status edgeattn_attention(const edgeattn_attention_desc* desc, const float* q, const float* k, const float* v,
                                   float* out, void* workspace, size_t workspace_size);

/* The attention weights softmax(q k^T * scale + mask) per head, as the seeds' function returns them.
   Masked entries are exactly 0; a query row that sees no key is all zeros. weights must not overlap q, k or
   additive_mask. */
edgeattn_status edgeattn_attention_weights(const edgeattn_attention_desc* desc, const float* q, const float* k,
                                           float* weights /* [num_heads][q_len][kv_len] */);

/* ---- Work split: one attention call cut by the library into independent parts that the application's own
   threads run (the library starts none). Running every part (on one thread or many, in any order, concurrently)
   and then edgeattn_attention_finish gives output bit-identical to edgeattn_attention for every shape, mask, head
   layout and path, when every part and the single call run in the same floating-point environment (rounding
   mode). The grid (attention.h, AttentionPartCount): parts = query head x block of 32 query rows (one block when
   q_len < 8) x key chunk of 512 keys (several chunks only when q_len < 8, there is no additive mask and
   kv_len > 512), numbered heaviest first (causal: the later row blocks first), so threads that take the next
   index from a shared atomic counter finish close together. */

/* The work of one call, cut by the library into parts. The count depends only on the shape — q_len, kv_len,
   head_dim, value_dim, num_heads, num_kv_heads, the mask kind and whether an additive mask is given — never on a
   thread count, the scale or the mask's values. */
size_t edgeattn_attention_part_count(const edgeattn_attention_desc* desc); /* >= 1; 0 if desc is invalid */
/* Bytes shared by all parts of one call, for partial results when parts split the keys (decode); 0 when they
   split only queries or heads, and 0 if desc is invalid. Any alignment; its contents on entry do not matter. */
size_t edgeattn_attention_shared_size(const edgeattn_attention_desc* desc);
/* Runs part `part` (0 <= part < part_count; otherwise EDGEATTN_ERROR_INVALID_ARGUMENT). Any thread may run any part,
   in any order, concurrently with the others; each thread passes its own workspace of
   edgeattn_attention_workspace_size(desc) bytes and all pass the same `shared` (NULL allowed when its size is 0).
   Parts write disjoint rows of `out`, or their own slot of `shared`. Errors (nothing written): NULL_POINTER,
   INVALID_SHAPE, INVALID_ARGUMENT (edgeattn_attention's, and a bad part index), WORKSPACE_TOO_SMALL (workspace or
   shared too small), OVERLAP (edgeattn_attention's, and shared overlapping an input, out or the workspace). */
edgeattn_status edgeattn_attention_part(const edgeattn_attention_desc* desc, size_t part, const float* q,
                                        const float* k, const float* v, float* out, void* shared, size_t shared_size,
                                        void* workspace, size_t workspace_size);
/* After every part has returned: combines the key-split partial results in a fixed order into `out`.
   Call it even when the shared size is 0 (it then only checks its arguments and returns EDGEATTN_OK). */
edgeattn_status edgeattn_attention_finish(const edgeattn_attention_desc* desc, void* shared, size_t shared_size,
                                          float* out);

/* Row-wise softmax of a [rows][cols] matrix, max-subtracted. in == out is allowed.
 *  - -inf entries give exactly 0; a row of only -inf gives all zeros.
 *  - A NaN anywhere in a row makes that whole row NaN; other rows are unaffected.
 *  - +inf entries share the row equally (1/count each), the limit of the softmax; all others give 0.
 *  Error bound: each output within 4 ULP of the exact softmax of the float inputs where that is >= FLT_MIN,
 *  within FLT_MIN (absolute) below it (measured max: 2.7 ULP with FMA, 3.4 without). */
edgeattn_status edgeattn_softmax(const float* in, float* out, size_t rows, size_t cols); /* in == out allowed */

/* out[i] = e^in[i]. Max error 2 ULP where the result is a normal float (measured max: 1.06 ULP with FMA,
   1.36 without); results below FLT_MIN may flush to +0; exp(-inf) = +0 exactly; exp(+inf) and overflow give
   +inf; NaN gives NaN. */
edgeattn_status edgeattn_exp(const float* in, float* out, size_t n); /* in == out allowed; n = 0 is OK */

/* *result = sum a[i]*b[i]; |error| <= n*u/(1 - n*u) * sum |a[i]*b[i]| + n * 2^-149 (n * 2^-126 on SIMD units that
   flush subnormals, e.g. ARMv7 NEON; see dot.h). result must not overlap a or b. */
edgeattn_status edgeattn_dot(const float* a, const float* b, size_t n, float* result); /* n = 0 gives 0 */

/* y = x W + b with W stored [in][out] (as x @ W in numpy). y must not overlap x, weight or bias.
   |error| <= (in+1)*u/(1 - (in+1)*u) * (sum_i |x[r][i] W[i][o]| + |b[o]|) + (in+1) * 2^-149 per element
   ((in+1) * 2^-126 on SIMD units that flush subnormals; see linear.h). */
edgeattn_status edgeattn_linear(const float* x, size_t rows, size_t in_features, const float* weight /* [in][out] */,
                                const float* bias /* NULL or [out] */, size_t out_features, float* y /* [rows][out] */);

/* Adds the sinusoidal positional encoding of Vaswani et al. in place to x [seq_len][d_model], row r at
   position first_position + r: PE(p, 2i) = sin(p / 10000^(2i/d)), PE(p, 2i+1) = cos(p / 10000^(2i/d)).
   Odd d_model works (the last column gets a sine). Positions must satisfy first_position + seq_len <= 2^24,
   else EDGEATTN_ERROR_INVALID_ARGUMENT. |error| <= 1 ULP of the result + (position + 1) * 2^-46. */
edgeattn_status edgeattn_add_positional_encoding(float* x, size_t seq_len, size_t d_model, size_t first_position);

/* y = x / sqrt(mean(x^2) + eps) * weight; rows of cols floats; weight NULL = 1; eps >= 0 and finite; y == x allowed.
   The sum of squares is rescaled by a power of two when needed, so it never overflows or underflows for a finite
   row. |error| <= (cols/2 + 4) * u * |y| + (cols + 2) * 2^-149 * |weight| per element; inputs below FLT_MIN count
   as zero on SIMD units that flush subnormals (see norm.h). An all-zero row with eps = 0 gives zeros; a row with
   an inf or NaN gives NaN. */
edgeattn_status edgeattn_rms_norm(const float* x, size_t rows, size_t cols, const float* weight, float eps, float* y);
/* y = (x - mean) / sqrt(var + eps) * weight + bias, var the biased (population) variance as PyTorch's LayerNorm;
   weight NULL = 1, bias NULL = 0; y == x allowed. The mean is carried as a float-float pair, so rows whose mean
   is far larger than their spread keep full relative accuracy in the centred output; bound in norm.h. A row whose
   var + eps is 0 gives bias (zeros if bias is NULL). */
edgeattn_status edgeattn_layer_norm(const float* x, size_t rows, size_t cols, const float* weight, const float* bias,
                                    float eps, float* y);

typedef enum edgeattn_rope_layout {
  EDGEATTN_ROPE_INTERLEAVED = 0, /* rotates pairs (2i, 2i+1): GPT-J, llama2.c, Meta's llama */
  EDGEATTN_ROPE_HALF = 1         /* rotates pairs (i, i + rotary_dim/2): GPT-NeoX, Hugging Face llama */
} edgeattn_rope_layout;
typedef struct edgeattn_rope_desc {
  size_t num_heads;
  size_t head_dim;
  size_t rotary_dim; /* 0 = head_dim; otherwise even and <= head_dim (partial rotary); the rest pass through */
  float base;        /* 0 = 10000 */
  edgeattn_rope_layout layout;
} edgeattn_rope_desc;
/* x [seq_len][num_heads][head_dim], rotated in place; token t at position first_position + t; angle of pair i at
   position p = p * base^(-2i/rotary_dim). The angle is formed and reduced in double precision, so every position
   below 2^24 is accurate: |error| <= 1 ULP + (p + 1) * 2^-44 * (|x_a| + |x_b|) per element (rope.h).
   EDGEATTN_ERROR_INVALID_ARGUMENT for an odd rotary_dim (or odd head_dim with rotary_dim 0), rotary_dim >
   head_dim, a base that is not finite or <= 1 (other than 0), an unknown layout, or first_position + seq_len >
   2^24. */
edgeattn_status edgeattn_rope(const edgeattn_rope_desc* desc, float* x, size_t seq_len, size_t first_position);
/* RoPE from a precomputed table, for cores without a double-precision FPU: rotary_dim floats per position (cos and
   sin of pair i at [2i], [2i+1]), row r at position first_position + r. edgeattn_rope_table_fill writes such a
   table (entries within 0.5 ULP + (p + 1) * 2^-46); edgeattn_rope_with_table rotates in float arithmetic:
   |error| <= (3 * u + (p + 1) * 2^-46) * (|x_a| + |x_b|). desc->base is not read by edgeattn_rope_with_table;
   the table's rotary_dim must equal the descriptor's and cover every position of the call, else
   EDGEATTN_ERROR_INVALID_ARGUMENT (rope.h). */
typedef struct edgeattn_rope_table {
  const float* data;
  size_t rotary_dim;
  size_t first_position;
  size_t positions;
} edgeattn_rope_table;
edgeattn_status edgeattn_rope_table_fill(size_t rotary_dim, float base, size_t first_position, size_t positions,
                                         float* table);
edgeattn_status edgeattn_rope_with_table(const edgeattn_rope_desc* desc, const edgeattn_rope_table* table, float* x,
                                         size_t seq_len, size_t first_position);

/* y = x W^T + b with W stored [out][in], as PyTorch's nn.Linear and llama2.c store it. Same contract and error
   bound as edgeattn_linear; y must not overlap x, weight or bias. */
edgeattn_status edgeattn_linear_transposed(const float* x, size_t rows, size_t in_features,
                                           const float* weight /* [out][in] */, const float* bias /* NULL or [out] */,
                                           size_t out_features, float* y /* [rows][out] */);

/* The work split of edgeattn_linear_transposed for the application's threads (linear.h): parts are blocks of
   output features (multiples of 16, at least 64 each, at most 16 parts), counted from the shape only (0 for
   invalid arguments); part p writes y[r][o] for its outputs and every row, in any order, on any thread; all parts
   together write exactly the bits of edgeattn_linear_transposed. A bad part index is INVALID_ARGUMENT (after the
   errors of edgeattn_linear_transposed). */
size_t edgeattn_linear_transposed_part_count(size_t rows, size_t in_features, size_t out_features);
edgeattn_status edgeattn_linear_transposed_part(const float* x, size_t rows, size_t in_features, const float* weight,
                                                const float* bias, size_t out_features, size_t part, float* y);

/* ---- Int8 weights in the llama2.c (runq.c) / ggml Q8_0 scheme (linear_q8.h has the full contracts). */

/* W [out_features][in_features] (PyTorch / llama2.c layout), W[o][i] = q[o][i] * scale[o][i / group_size]. */
typedef struct edgeattn_q8_matrix {
  const int8_t* q;     /* [out_features][in_features]; used as given (the quantizer writes -127..127) */
  const float* scale;  /* [out_features][in_features / group_size]; used as given (IEEE rules for NaN/inf) */
  size_t out_features; /* >= 1 */
  size_t in_features;  /* >= 1 */
  size_t group_size;   /* >= 1 and divides in_features (llama2.c and ggml files use 32 or 64); for
                          edgeattn_linear_q8 also <= 65536 (the int32 sums) and in_features / group_size <= 2^27 */
} edgeattn_q8_matrix;

typedef enum edgeattn_q8_activations {
  EDGEATTN_Q8_ACT_F32 = 0, /* x stays float: each output is a float dot product of x with the dequantized row */
  EDGEATTN_Q8_ACT_Q8 = 1   /* x quantized per group as below, exact int32 dot per group (runq.c, ggml q8_0) */
} edgeattn_q8_activations;

/* w [out_features][in_features] -> q, scale with the KV cache's Q8 rule applied per group of group_size inputs:
   scale = max|w_g| / 127 (a float division; 0 for an all-zero group), q = w / scale (a float division) rounded to
   nearest, ties to even, clamped to [-127, 127] (0 where scale is 0). Errors: NULL_POINTER; INVALID_SHAPE (a zero
   size, group_size not dividing in_features, byte counts overflowing size_t); INVALID_ARGUMENT (a non-finite w);
   OVERLAP (q or scale overlapping w or each other). */
edgeattn_status edgeattn_q8_quantize(const float* w, size_t out_features, size_t in_features, size_t group_size,
                                     int8_t* q, float* scale);

/* Bytes of workspace edgeattn_linear_q8 needs for `rows` rows (0 for an invalid matrix; may be 0 for ACT_F32, and
   then the workspace may be NULL). ACT_Q8: rows * in_features + 8 * rows * groups + 5184
   + 16 * max(512, group_size) bytes. */
size_t edgeattn_linear_q8_workspace_size(size_t rows, const edgeattn_q8_matrix* w, edgeattn_q8_activations act);

/* y[r][o] = bias[o] + sum_i x[r][i] * W[o][i]; x [rows][in_features], bias NULL or [out_features],
   y [rows][out_features].
   ACT_Q8, exactly, on every target and path (the same bits everywhere, in the caller's rounding mode):
     per row r and group g, x's group is quantized by the rule of edgeattn_q8_quantize -> qx, sx[r][g];
     s_g = sum over the group of qx[i] * q[o][i], exact in int32;
     acc = 0.0f; for g = 0, 1, ...: acc = acc + ((float)s_g * scale[o][g]) * sx[r][g];
     y[r][o] = bias ? acc + bias[o] : acc;
     each step one float operation rounded once (no fused multiply-add). A non-finite x is INVALID_ARGUMENT.
   ACT_F32: x used as given (IEEE propagation as edgeattn_linear_transposed); relative to the dequantized weights
     taken exactly, while nothing overflows (each group's sum of x * q before its scale included),
     |error| <= gamma(in + groups + 9) * (sum_i |x[r][i] W[o][i]| + |b[o]|) + (in + 2 groups + 9)
     * 2^-149 per element, gamma(n) = n u / (1 - n u) ((in + 2 groups + 9) * 2^-126 on SIMD units that flush
     subnormals; see linear_q8.h).
   Errors in the common order: NULL_POINTER, INVALID_SHAPE (rows 0, an invalid matrix, overflowing sizes),
   INVALID_ARGUMENT (unknown act; a non-finite x with ACT_Q8), WORKSPACE_TOO_SMALL, OVERLAP (y overlapping x, q,
   scale, bias or the workspace). Nothing written on error. */
edgeattn_status edgeattn_linear_q8(const float* x, size_t rows, const edgeattn_q8_matrix* w, const float* bias,
                                   edgeattn_q8_activations act, float* y, void* workspace, size_t workspace_size);

/* The work split for the application's threads (as for attention): parts are blocks of output features, counted
   from the shape only (0 for invalid arguments); part p writes y[r][o] for its outputs and every row, in any order,
   on any thread, each part with its own workspace of edgeattn_linear_q8_workspace_size bytes; all parts together
   write exactly the bits of edgeattn_linear_q8. With two or more rows, parts are multiples of 16 outputs, at least
   512 each (every part quantizes all of x), at most 16; with one row, out is shared by the largest power of two
   P <= 16 with out / P >= 128 (parts of ceil(out / P) rounded up to a multiple of 16, the last shorter). A bad part
   index is INVALID_ARGUMENT. */
size_t edgeattn_linear_q8_part_count(size_t rows, const edgeattn_q8_matrix* w);
edgeattn_status edgeattn_linear_q8_part(const float* x, size_t rows, const edgeattn_q8_matrix* w, const float* bias,
                                        edgeattn_q8_activations act, size_t part, float* y, void* workspace,
                                        size_t workspace_size);
/* Parts [first_part, first_part + part_count) as one call: the bits those parts write one by one, with x quantized
   once, not once per part (thread t of T can run parts [P * t / T, P * (t + 1) / T) of the P parts in one call).
   Errors as edgeattn_linear_q8_part's; part_count 0 or first_part + part_count above the part count is
   INVALID_ARGUMENT. */
edgeattn_status edgeattn_linear_q8_part_range(const float* x, size_t rows, const edgeattn_q8_matrix* w,
                                              const float* bias, edgeattn_q8_activations act, size_t first_part,
                                              size_t part_count, float* y, void* workspace, size_t workspace_size);

/* ---- Elementwise activations (activation.h has the full contracts). For these three functions n = 0 is valid
   and the arrays may then be NULL (an unknown act is still EDGEATTN_ERROR_INVALID_ARGUMENT); n * sizeof(float)
   overflowing size_t is EDGEATTN_ERROR_INVALID_SHAPE. */
typedef enum edgeattn_activation {
  EDGEATTN_ACT_GELU_ERF = 0,  /* x * Phi(x), PyTorch's nn.GELU() (BERT, Whisper) */
  EDGEATTN_ACT_GELU_TANH = 1, /* PyTorch's nn.GELU(approximate="tanh") (GPT-2) */
  EDGEATTN_ACT_SILU = 2,      /* x * sigmoid(x) */
  EDGEATTN_ACT_RELU = 3
} edgeattn_activation;

/* y[i] = act(x[i]). Max error where the result is a normal float: GELU erf 6 ULP, GELU tanh 5 ULP, SiLU 5 ULP
   (measured over all 2^32 inputs on x86-64: 4.91, 3.50, 3.46; ARMv7 NEON, sampled: 5.07, 3.41, 3.94); results below
   FLT_MIN may flush to +0 or -0; +inf gives +inf, -inf gives -0, NaN gives NaN. ReLU is exact: +0 for x <= 0 (also -0),
   NaN stays NaN. */
edgeattn_status edgeattn_activation_apply(const float* x, float* y, size_t n,
                                          edgeattn_activation act); /* y == x allowed */

/* y = act(gate) * up: SwiGLU with SILU, GeGLU with GELU_*; within act's bound times |up| plus one rounding.
   y may alias gate or up. */
edgeattn_status edgeattn_gated_activation(const float* gate, const float* up, float* y, size_t n,
                                          edgeattn_activation act);

/* y = a + b (residual connections), correctly rounded; subnormals read as 0 on SIMD units that flush them
   (ARMv7 NEON). y may alias a or b. */
edgeattn_status edgeattn_add(const float* a, const float* b, float* y, size_t n);

/* ---- KV cache: caller-owned storage of past positions' K and V, attention of new queries against it.
   See kv_cache.h for the C++ API and the full contract (layout, error bounds). Errors change nothing: no
   output written, nothing appended, the cache's length and contents as before. Order: NULL_POINTER,
   INVALID_SHAPE, INVALID_ARGUMENT, WORKSPACE_TOO_SMALL, CAPACITY, then OVERLAP. */

typedef enum edgeattn_kv_type {
  EDGEATTN_KV_F32 = 0, /* float32 as given */
  EDGEATTN_KV_F16 = 1, /* IEEE binary16, round to nearest even; the same stored bits on every target */
  EDGEATTN_KV_Q8 = 2   /* int8, symmetric: one float scale per (position, kv head) for K and one for V,
                          scale = max|row| / 127, values rounded to nearest even and clamped to [-127, 127] */
} edgeattn_kv_type;

typedef struct edgeattn_kv_cache_desc {
  edgeattn_kv_type type;
  size_t num_kv_heads; /* >= 1 */
  size_t head_dim;     /* >= 1, width of each key head */
  size_t value_dim;    /* >= 1, width of each value head */
  size_t capacity;     /* >= 1, positions held at once */
  size_t window;       /* 0: linear cache, appending past capacity is EDGEATTN_ERROR_CAPACITY;
                          1..capacity: sliding window: a query sees at most the last `window` positions up to
                          its own, and the storage is reused as a ring, so appending never runs out */
} edgeattn_kv_cache_desc;

typedef struct edgeattn_kv_cache { /* set by edgeattn_kv_cache_init; callers treat it as opaque */
  edgeattn_kv_cache_desc desc;
  void* storage;
  size_t storage_size;
  size_t length; /* positions appended since init or the last truncate (not reduced by the window) */
} edgeattn_kv_cache;

/* Bytes of storage: 16 (header) + capacity * num_kv_heads * (head_dim + value_dim) * (4 for F32, 2 for F16,
   1 for Q8) + capacity * num_kv_heads * 8 for Q8's scales; any alignment; 0 if invalid. */
size_t edgeattn_kv_cache_storage_size(const edgeattn_kv_cache_desc* desc); /* bytes, any alignment; 0 if invalid */
/* NULL_POINTER, INVALID_SHAPE (a zero size, an overflowing byte count), INVALID_ARGUMENT (unknown type,
   window > capacity), WORKSPACE_TOO_SMALL (storage_size below edgeattn_kv_cache_storage_size(desc)). */
edgeattn_status edgeattn_kv_cache_init(edgeattn_kv_cache* cache, const edgeattn_kv_cache_desc* desc, void* storage,
                                       size_t storage_size);
/* k [n][num_kv_heads][head_dim], v [n][num_kv_heads][value_dim]; positions length .. length+n-1. n = 0 is OK.
   F16: a finite |x| >= 65520 is INVALID_ARGUMENT; Q8: a non-finite value is INVALID_ARGUMENT; a linear cache
   without room is CAPACITY; k or v overlapping the storage is OVERLAP. A ring keeps the last capacity positions. */
edgeattn_status edgeattn_kv_cache_append(edgeattn_kv_cache* cache, const float* k, const float* v, size_t n);
/* Keeps positions < length (length <= cache->length); in a ring only positions still held can be kept. */
edgeattn_status edgeattn_kv_cache_truncate(edgeattn_kv_cache* cache, size_t length);
/* One held position as the cache stores it, converted back to float: for inspection and tests. */
edgeattn_status edgeattn_kv_cache_read(const edgeattn_kv_cache* cache, size_t position,
                                       float* k /* [num_kv_heads][head_dim] */,
                                       float* v /* [num_kv_heads][value_dim] */);

/* Attention of desc->q_len new queries against the cache. desc: kv_len = 0 (the cache decides), head_dim and
   value_dim equal the cache's, num_kv_heads equals the cache's (or 0 when num_heads equals it), additive_mask NULL.
   q [q_len][num_heads][head_dim]. MASK_CAUSAL: the queries are the last q_len positions appended; query i, at
   position cache->length - q_len + i, sees the positions up to its own and within the window. MASK_NONE: every
   query sees the last min(window, length) positions (all of them when window = 0) — cross-attention to a cached
   encoder output. A query whose visible keys are no longer held is EDGEATTN_ERROR_INVALID_SHAPE (in a ring this
   can happen to chunks longer than capacity - window + 1). The result is that of edgeattn_attention on the
   stored values (edgeattn_kv_cache_read), and bit-identical for a ring and a linear cache that hold the same
   visible positions. out must not overlap q, the storage or the workspace. */
size_t edgeattn_attention_cached_workspace_size(const edgeattn_attention_desc* desc, const edgeattn_kv_cache* cache);
edgeattn_status edgeattn_attention_cached(const edgeattn_attention_desc* desc, const float* q,
                                          const edgeattn_kv_cache* cache, float* out, void* workspace,
                                          size_t workspace_size);

/* The work split of edgeattn_attention_cached (see edgeattn_attention_part_count above for the promise): parts =
   kv head x block of 32 query rows (one block when q_len < 8) x chunk of 512 visible positions counted from the
   first position the call sees (several chunks only when q_len < 8), so a ring and a linear cache still give
   identical bits. The count and the shared size depend on the shape and on the cache's length and window (which
   positions are seen), never on a thread count, the scale or the stored values; 0 if desc or the cache is invalid.
   Each part takes a workspace of edgeattn_attention_cached_workspace_size(desc, cache) bytes. The cache must not
   change between the first part and finish. */
size_t edgeattn_attention_cached_part_count(const edgeattn_attention_desc* desc, const edgeattn_kv_cache* cache);
size_t edgeattn_attention_cached_shared_size(const edgeattn_attention_desc* desc, const edgeattn_kv_cache* cache);
edgeattn_status edgeattn_attention_cached_part(const edgeattn_attention_desc* desc, size_t part, const float* q,
                                               const edgeattn_kv_cache* cache, float* out, void* shared,
                                               size_t shared_size, void* workspace, size_t workspace_size);
edgeattn_status edgeattn_attention_cached_finish(const edgeattn_attention_desc* desc, const edgeattn_kv_cache* cache,
                                                 void* shared, size_t shared_size, float* out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* EDGEATTN_EDGEATTN_H_ */
