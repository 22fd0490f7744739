// SPDX-License-Identifier: Apache-2.0
// llama2.c's tokenizer.bin: byte-pair encoding of a prompt and the pieces to print for generated tokens, with
// run.c's rules. The file is used in place; the arena holds two arrays of vocab_size uint32 (each token's offset
// in the file, and the tokens in byte order of their pieces for lookups). No allocation.
#ifndef EDGEATTN_EXAMPLES_LLAMA_LLAMA2_TOKENIZER_H_
#define EDGEATTN_EXAMPLES_LLAMA_LLAMA2_TOKENIZER_H_

#include <stddef.h>
#include <stdint.h>

#include "llama2.h"

namespace llama2 {

constexpr int kBos = 1;  // llama2.c's (sentencepiece's) beginning of sequence; generation stops when it comes
constexpr size_t kMaxTokenLength = 65536;

struct Tokenizer {
  const unsigned char* file = nullptr;
  size_t vocab_size = 0;
  size_t max_token_length = 0;
  uint32_t* offsets = nullptr;  // [vocab]: where token i's record (score, length, bytes) starts
  uint32_t* sorted = nullptr;   // [vocab]: token ids by their pieces' bytes (ties: the lower id first)
};

// A token's bytes (not NUL-terminated; a piece may hold any byte).
struct Piece {
  const char* bytes;
  size_t length;
};

size_t TokenizerArenaBytes(size_t vocab_size) noexcept;  // 0 on overflow

// Checks and indexes a tokenizer.bin of `size` bytes for a model of vocab_size tokens: max_token_length in
// 1 .. kMaxTokenLength, then exactly vocab_size records (float score, finite; int32 length, 0 ..
// max_token_length; the bytes), nothing after them. kBadFile with a reason for a file that does not hold that
// (truncated, a record out of range, more tokens than the model has); kBadArgument for null pointers or a file of
// 4 GiB or more; kArenaTooSmall. The file must outlive the tokenizer.
[[nodiscard]] Status LoadTokenizer(Tokenizer* tokenizer, const void* file, size_t size, size_t vocab_size, void* arena,
                                   size_t arena_bytes, Error* error) noexcept;

Piece TokenPiece(const Tokenizer& tokenizer, int token) noexcept;  // the piece as stored; empty out of range

// What run.c prints for `token` after `previous`: after BOS the piece's leading space is dropped; a piece
// "<0xXX>" (X hexadecimal) is that byte; a single byte that is neither printable ASCII nor white space prints as
// nothing (length 0).
Piece Decode(const Tokenizer& tokenizer, int previous, int token) noexcept;

// Tokens Encode can write for a text of `length` bytes: BOS, the dummy space, one per byte at most.
constexpr size_t EncodeCapacity(size_t length) { return length + 2; }

// run.c's encode(text, bos = 1, eos = 0): BOS; then, for a non-empty text, the token of " " (sentencepiece's
// dummy prefix); then each UTF-8 character (a byte and up to three continuation bytes after it) as its token, or,
// when the vocabulary has no such piece, one byte token per byte (id byte + 3, "<0xXX>"); then, while some two
// neighbouring tokens after BOS concatenate to a piece of the vocabulary, the leftmost pair whose piece scores
// highest is merged (BOS, a control token, stays first and alone: tokens[0] is always BOS). kBadArgument: null
// pointers, capacity < EncodeCapacity(length); kBadFile: a token the rules need is not in the vocabulary (" " for a
// non-empty text, BOS, a byte token).
[[nodiscard]] Status Encode(const Tokenizer& tokenizer, const char* text, size_t length, int* tokens, size_t capacity,
                            size_t* count, Error* error) noexcept;

}  // namespace llama2

#endif  // EDGEATTN_EXAMPLES_LLAMA_LLAMA2_TOKENIZER_H_
