// SPDX-License-Identifier: Apache-2.0
// The layout of llama2.c's checkpoint files, shared by the reader (llama2_file.cc) and Init (llama2_model.cc):
// the tensors of a config in file order, each with its byte offset. Internal to the module.
#ifndef EDGEATTN_EXAMPLES_LLAMA_LLAMA2_FILE_H_
#define EDGEATTN_EXAMPLES_LLAMA_LLAMA2_FILE_H_

#include <stddef.h>
#include <stdint.h>

#include "llama2.h"

namespace llama2 {
namespace file {

enum class TensorId : int {
  kEmbedding,
  kRmsAtt,
  kWq,
  kWk,
  kWv,
  kWo,
  kRmsFfn,
  kW1,
  kW2,
  kW3,
  kRmsFinal,
  kRopeTables,  // version 0's two legacy tables (seq_len x head_dim/2 each), unused: run.c computes RoPE
  kClassifier,
};

// One tensor of the file: rows x cols values, float32 or (quantized) int8 followed by float32 scales, one per
// group of group_size consecutive values (groups run along rows, since group_size divides cols).
struct Tensor {
  TensorId id;
  const char* name;  // llama2.c's
  size_t layer;      // for per-layer tensors; 0 otherwise
  uint64_t rows, cols;
  bool quantized;
  uint64_t offset;        // of the values
  uint64_t scale_offset;  // quantized: of the scales
};

// Calls visit(const Tensor&) for each tensor in file order (a bool: false stops the walk and returns 0) and
// returns the byte offset where the tensors end (the file's size, if it matches), in 64 bits: sizes of 32-bit
// targets cannot overflow it for configs within the kMax limits. The config's header values must be checked.
template <typename Visit>
uint64_t WalkTensors(const Config& c, Visit&& visit);

}  // namespace file
}  // namespace llama2

// ---- Implementation (a template: the reader checks with it, Init maps with it).
namespace llama2 {
namespace file {

template <typename Visit>
uint64_t WalkTensors(const Config& c, Visit&& visit) {
  const uint64_t dim = c.dim, kv_dim = uint64_t{c.n_kv_heads} * c.head_dim, hidden = c.hidden_dim;
  const uint64_t vocab = c.vocab_size;
  const bool q8 = c.format == Format::kQ8;
  struct Kind {
    TensorId id;
    const char* name;
    uint64_t rows, cols;
    bool per_layer, quantized;
  };
  // version 0 (run.c's memory_map_weights): every kind over all layers, in this order.
  const Kind f32_kinds[] = {
      {TensorId::kEmbedding, "token_embedding_table", vocab, dim, false, false},
      {TensorId::kRmsAtt, "rms_att_weight", 1, dim, true, false},
      {TensorId::kWq, "wq", dim, dim, true, false},
      {TensorId::kWk, "wk", kv_dim, dim, true, false},
      {TensorId::kWv, "wv", kv_dim, dim, true, false},
      {TensorId::kWo, "wo", dim, dim, true, false},
      {TensorId::kRmsFfn, "rms_ffn_weight", 1, dim, true, false},
      {TensorId::kW1, "w1", hidden, dim, true, false},
      {TensorId::kW2, "w2", dim, hidden, true, false},
      {TensorId::kW3, "w3", hidden, dim, true, false},
      {TensorId::kRmsFinal, "rms_final_weight", 1, dim, false, false},
      {TensorId::kRopeTables, "freq_cis_real and freq_cis_imag", 2 * uint64_t{c.seq_len}, c.head_dim / 2, false, false},
      {TensorId::kClassifier, "wcls", vocab, dim, false, false},
  };
  // version 2 (runq.c): the float norms first, then each quantized tensor as int8 values and float scales.
  const Kind q8_kinds[] = {
      {TensorId::kRmsAtt, "rms_att_weight", 1, dim, true, false},
      {TensorId::kRmsFfn, "rms_ffn_weight", 1, dim, true, false},
      {TensorId::kRmsFinal, "rms_final_weight", 1, dim, false, false},
      {TensorId::kEmbedding, "token_embedding_table", vocab, dim, false, true},
      {TensorId::kWq, "wq", dim, dim, true, true},
      {TensorId::kWk, "wk", kv_dim, dim, true, true},
      {TensorId::kWv, "wv", kv_dim, dim, true, true},
      {TensorId::kWo, "wo", dim, dim, true, true},
      {TensorId::kW1, "w1", hidden, dim, true, true},
      {TensorId::kW2, "w2", dim, hidden, true, true},
      {TensorId::kW3, "w3", hidden, dim, true, true},
      {TensorId::kClassifier, "wcls", vocab, dim, false, true},
  };
  const Kind* kinds = q8 ? q8_kinds : f32_kinds;
  const size_t count = q8 ? sizeof(q8_kinds) / sizeof(Kind) : sizeof(f32_kinds) / sizeof(Kind);
  uint64_t offset = q8 ? 256 : 28;
  for (size_t k = 0; k < count; ++k) {
    const Kind& kind = kinds[k];
    if (kind.id == TensorId::kClassifier && c.shared_classifier) continue;
    for (size_t layer = 0; layer < (kind.per_layer ? c.n_layers : 1); ++layer) {
      const uint64_t values = kind.rows * kind.cols;
      Tensor t{kind.id, kind.name, layer, kind.rows, kind.cols, kind.quantized, offset, 0};
      if (kind.quantized) {
        t.scale_offset = offset + values;
        offset = t.scale_offset + values / c.group_size * 4;
      } else {
        offset += values * 4;
      }
      if (!visit(static_cast<const Tensor&>(t))) return 0;
    }
  }
  return offset;
}

}  // namespace file
}  // namespace llama2

#endif  // EDGEATTN_EXAMPLES_LLAMA_LLAMA2_FILE_H_
