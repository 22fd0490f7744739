// SPDX-License-Identifier: Apache-2.0
// edgeattn_llama_board: the stories260K-shape Q8 model (llama2_board.h) decoding greedily from BOS, as a firmware
// would run it: checkpoint in flash, arena in .bss, no heap, no files. On the Cortex-M boards it runs under QEMU
// with semihosting; on a host it is an ordinary program, and its output there is the golden file
// tests/data/llama_board_tokens.txt that the board tests compare with.
//   edgeattn_llama_board [steps] [scalar]     steps: tokens to decode after BOS (default 64, at most 255);
//                                              scalar: the module's Kernels::kScalar (default: kDispatched)
// Prints the configuration, the tokens (BOS first) and the smallest lead of a chosen token over the runner-up.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama2_board.h"

namespace {

llama2::Model g_model;
int g_tokens[llama2::board::kCapacity];

}  // namespace

int main(int argc, char** argv) {
  const long steps = argc > 1 ? strtol(argv[1], nullptr, 10) : 64;
  const bool scalar = argc > 2 && strcmp(argv[2], "scalar") == 0;
  if (steps < 1 || steps >= static_cast<long>(llama2::board::kCapacity) || (argc > 2 && !scalar)) {
    fprintf(stderr, "usage: edgeattn_llama_board [steps 1..%u] [scalar]\n",
            static_cast<unsigned>(llama2::board::kCapacity - 1));
    return 2;
  }
  llama2::Error error;
  const llama2::Kernels kernels = scalar ? llama2::Kernels::kScalar : llama2::Kernels::kDispatched;
  if (llama2::board::InitBoardModel(&g_model, kernels, &error) != llama2::Status::kOk) {
    fprintf(stderr, "edgeattn_llama_board: %s\n", error.text);
    return 1;
  }
  size_t file_bytes = 0;
  llama2::board::EmbeddedCheckpoint(&file_bytes);
  printf("model s260k_q8 checkpoint %u bytes, arena %u of %u bytes, kv q8 x %u, activations q8, rope table, %s\n",
         static_cast<unsigned>(file_bytes),
         static_cast<unsigned>(llama2::ArenaBytes(g_model.config, llama2::board::BoardOptions(kernels))),
         static_cast<unsigned>(llama2::board::StaticArenaBytes()), static_cast<unsigned>(llama2::board::kCapacity),
         scalar ? "scalar kernels" : "dispatched kernels");
  g_tokens[0] = 1;  // BOS
  float min_margin = 0.0f;
  long min_at = 0;
  for (long p = 0; p < steps; ++p) {
    float margin = 0.0f;
    if (llama2::board::GreedyStep(&g_model, g_tokens[p], &g_tokens[p + 1], &margin) != llama2::Status::kOk) {
      fprintf(stderr, "edgeattn_llama_board: position %ld: %s\n", p, g_model.error.text);
      return 1;
    }
    if (p == 0 || margin < min_margin) {
      min_margin = margin;
      min_at = p;
    }
  }
  printf("tokens");
  for (long p = 0; p <= steps; ++p) printf(" %d", g_tokens[p]);
  printf("\nsmallest margin %.6g (the logits at position %ld)\n", static_cast<double>(min_margin), min_at);
  return 0;
}
