// SPDX-License-Identifier: Apache-2.0
// The work split's grid (attention.h, AttentionPartCount) and the layout of the shared buffer of key-chunk
// partial results: plain arithmetic on the shape, shared by Attention's and AttentionCached's entry points and
// kernels. Nothing here depends on the SIMD target.
#ifndef EDGEATTN_LIB_ATTENTION_ATTENTION_SPLIT_H_
#define EDGEATTN_LIB_ATTENTION_ATTENTION_SPLIT_H_

#include <stddef.h>
#include <stdint.h>

#include "edgeattn/attention.h"

namespace edgeattn {
namespace internal {

// a * b, false when it overflows size_t.
inline bool SplitMul(size_t a, size_t b, size_t* r) {
  if (b != 0 && a > SIZE_MAX / b) return false;
  *r = a * b;
  return true;
}

// The grid of one call: `heads` (query heads, or kv heads for the cache) x row blocks x key chunks.
struct PartGrid {
  size_t heads;
  size_t row_blocks;
  size_t chunks;
  size_t q_len;
  bool causal;
  size_t count;  // heads * row_blocks * chunks; 0 if that overflows
};

inline size_t RowBlocks(size_t q_len) {
  return q_len < kAttentionTiledMinQueries ? 1 : (q_len - 1) / kAttentionRowBlock + 1;
}

// keys: the key span the chunks cut (kv_len; for the cache, the positions the call sees). Several chunks only for
// decode shapes (fewer than kAttentionTiledMinQueries queries, no additive mask).
inline size_t KeyChunks(size_t q_len, size_t keys, bool additive_mask) {
  return q_len < kAttentionTiledMinQueries && !additive_mask && keys > kAttentionKeyChunk
             ? (keys - 1) / kAttentionKeyChunk + 1
             : 1;
}

inline PartGrid MakePartGrid(size_t heads, size_t q_len, size_t keys, bool additive_mask, bool causal) {
  PartGrid g;
  g.heads = heads;
  g.row_blocks = RowBlocks(q_len);
  g.chunks = KeyChunks(q_len, keys, additive_mask);
  g.q_len = q_len;
  g.causal = causal;
  size_t hb;
  if (!SplitMul(heads, g.row_blocks, &hb) || !SplitMul(hb, g.chunks, &g.count)) g.count = 0;
  return g;
}

// Part index -> (head, row block, chunk). Heaviest first: with a causal mask a later row block sees more keys, so
// the row blocks run from the last; then heads, then chunks (the last chunk, often partial, after the full ones).
struct PartCoords {
  size_t head;
  size_t i_begin, i_end;  // query rows of the part's row block
  size_t chunk;
};

inline PartCoords PartOf(const PartGrid& g, size_t part) {
  PartCoords c;
  c.chunk = part % g.chunks;
  const size_t rest = part / g.chunks;
  c.head = rest % g.heads;
  const size_t order = rest / g.heads;
  const size_t block = g.causal ? g.row_blocks - 1 - order : order;
  if (g.row_blocks == 1) {
    c.i_begin = 0;
    c.i_end = g.q_len;
  } else {
    c.i_begin = block * kAttentionRowBlock;
    c.i_end = g.q_len - c.i_begin < kAttentionRowBlock ? g.q_len : c.i_begin + kAttentionRowBlock;
  }
  return c;
}

// Floats per chunk partial's header in the shared buffer: the running max m, the sum l, the count of +inf scores,
// and a NaN flag (1.0f: the chunk met a NaN score).
constexpr size_t kPartialHeaderFloats = 4;

// The shared buffer of a chunked call (chunks > 1): per (head, query row, chunk) a header, then per (head, query
// row, chunk >= 1) the chunk's partial output row (chunk 0's lives in the output row). `rows` = heads * q_len
// (query heads: the cache's grid counts kv heads, its partial rows are per query head).
struct SharedLayout {
  size_t rows, chunks, width;
  size_t acc_offset;  // floats before the first partial row (headers rounded up to 64 bytes)
  size_t floats;      // total floats
  size_t bytes;       // floats * sizeof(float) + alignment slack; 0 if no buffer is needed or on overflow
};

inline SharedLayout MakeSharedLayout(size_t rows, size_t chunks, size_t width) {
  SharedLayout s{rows, chunks, width, 0, 0, 0};
  if (chunks <= 1) return s;
  size_t headers, accs, per_row;
  if (!SplitMul(rows, chunks, &headers) || !SplitMul(headers, kPartialHeaderFloats, &headers) ||
      headers > SIZE_MAX - 15) {
    return s;
  }
  s.acc_offset = (headers + 15) / 16 * 16;
  if (!SplitMul(chunks - 1, width, &per_row) || !SplitMul(per_row, rows, &accs) ||
      accs > kMaxWorkspaceFloats - s.acc_offset) {
    return s;
  }
  s.floats = s.acc_offset + accs;
  s.bytes = s.floats * sizeof(float) + kWorkspaceAlignment;
  return s;
}

inline float* PartialHeader(const SharedLayout& s, float* shared, size_t row, size_t chunk) {
  return shared + (row * s.chunks + chunk) * kPartialHeaderFloats;
}
inline float* PartialRow(const SharedLayout& s, float* shared, size_t row, size_t chunk) {
  return shared + s.acc_offset + (row * (s.chunks - 1) + (chunk - 1)) * s.width;
}

}  // namespace internal
}  // namespace edgeattn

#endif  // EDGEATTN_LIB_ATTENTION_ATTENTION_SPLIT_H_
