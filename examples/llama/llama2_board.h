// SPDX-License-Identifier: Apache-2.0
// The stories260K-shape model with int8 weights as a firmware holds it (issue 31 item 8; docs/llama.md, "On the
// boards"): the version 2 checkpoint linked into the program as const data (flash on a microcontroller: the matrices
// are read in place from it), the arena in static storage (.bss), and the options a small core runs it with. Shared
// by the board program (llama2_board_main.cc) and the instruction-count benchmark (bench/mcu/mcu_bench.cc).
#ifndef EDGEATTN_EXAMPLES_LLAMA_LLAMA2_BOARD_H_
#define EDGEATTN_EXAMPLES_LLAMA_LLAMA2_BOARD_H_

#include <stddef.h>

#include "llama2.h"

namespace llama2 {
namespace board {

// KV caches of 256 positions in int8 (edgeattn's Q8 rows); one token per Forward (decode only: no prefill chunk to
// hold); RoPE from a table filled once (the Cortex-M55 has no double-precision FPU for edgeattn::Rope's angles).
constexpr size_t kCapacity = 256;

// The options above, with the kernels asked for (kDispatched: the public entry points; kScalar: edgeattn::scalar).
Options BoardOptions(Kernels kernels) noexcept;

// The checkpoint's bytes (tools/gen_llama_checkpoints.py's s260k_q8.bin, built into the program) and their count.
const void* EmbeddedCheckpoint(size_t* size) noexcept;

// Init on the embedded checkpoint and the static arena. Errors: Init's (error says why).
[[nodiscard]] Status InitBoardModel(Model* model, Kernels kernels, Error* error) noexcept;

// The static arena's bytes (ArenaBytes(config, BoardOptions(...)) is what a run uses of it).
size_t StaticArenaBytes() noexcept;

// One greedy step: runs `token` at model->position, then *next is the largest logit's token (the first of equals)
// and *margin its lead over the second largest.
[[nodiscard]] Status GreedyStep(Model* model, int token, int* next, float* margin) noexcept;

}  // namespace board
}  // namespace llama2

#endif  // EDGEATTN_EXAMPLES_LLAMA_LLAMA2_BOARD_H_
