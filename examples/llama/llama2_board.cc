// SPDX-License-Identifier: Apache-2.0
#include "llama2_board.h"

#include <stdint.h>

// The checkpoint as const data, by the assembler's .incbin (EDGEATTN_LLAMA_BOARD_CHECKPOINT: its path at build
// time): it lands in .rodata, which the boards' linker script puts in flash (CODE), and nothing copies it to RAM.
// 16-byte aligned because the module reads the file's float scales and norms in place (4 bytes would do).
__asm__(
    ".section .rodata.edgeattn_llama_checkpoint, \"a\", %progbits\n"
    ".balign 16\n"
    ".global edgeattn_llama_checkpoint\n"
    "edgeattn_llama_checkpoint:\n"
    ".incbin \"" EDGEATTN_LLAMA_BOARD_CHECKPOINT
    "\"\n"
    ".global edgeattn_llama_checkpoint_end\n"
    "edgeattn_llama_checkpoint_end:\n"
    ".previous\n");
extern "C" const unsigned char edgeattn_llama_checkpoint[];
extern "C" const unsigned char edgeattn_llama_checkpoint_end[];

namespace llama2 {
namespace board {
namespace {

// What InitBoardModel needs for s260k_q8 with BoardOptions, with room: ArenaBytes says 286,016 bytes on the
// Cortex-M boards and 287,360 on x86-64 (larger SIMD workspaces): the dequantized embedding (512 x 64 floats,
// 128 KiB), five Q8 KV caches of 256 positions (120 KiB), the RoPE table, one row of activations, workspaces.
constexpr size_t kArenaBytes = 288 * 1024;
alignas(64) unsigned char g_arena[kArenaBytes];

}  // namespace

Options BoardOptions(Kernels kernels) noexcept {
  Options options;
  options.kv_type = edgeattn::KvType::kQ8;
  options.activations = Activations::kQ8;
  options.capacity = kCapacity;
  options.max_chunk = 1;
  options.workers = 1;
  options.kernels = kernels;
  options.rope_table = true;
  return options;
}

const void* EmbeddedCheckpoint(size_t* size) noexcept {
  *size = static_cast<size_t>(edgeattn_llama_checkpoint_end - edgeattn_llama_checkpoint);
  return edgeattn_llama_checkpoint;
}

Status InitBoardModel(Model* model, Kernels kernels, Error* error) noexcept {
  size_t size = 0;
  const void* file = EmbeddedCheckpoint(&size);
  return Init(model, file, size, BoardOptions(kernels), g_arena, sizeof(g_arena), error);
}

size_t StaticArenaBytes() noexcept { return sizeof(g_arena); }

Status GreedyStep(Model* model, int token, int* next, float* margin) noexcept {
  const Status status = Forward(model, &token, 1);
  if (status != Status::kOk) return status;
  const float* logits = model->logits;
  size_t best = logits[1] > logits[0] ? 1 : 0;
  size_t second = 1 - best;
  for (size_t i = 2; i < model->config.vocab_size; ++i) {
    if (logits[i] > logits[best]) {
      second = best;
      best = i;
    } else if (logits[i] > logits[second]) {
      second = i;
    }
  }
  *next = static_cast<int>(best);
  *margin = logits[best] - logits[second];
  return Status::kOk;
}

}  // namespace board
}  // namespace llama2
