// SPDX-License-Identifier: Apache-2.0
// tokenizer.bin: checked record by record before anything is indexed, then used in place.
#include "llama2_tokenizer.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "llama2_internal.h"
#include "llama2_sort.h"

namespace llama2 {
namespace {

Status Say(Error* error, Status status, const char* format, ...) {
  if (error != nullptr) {
    va_list args;
    va_start(args, format);
    vsnprintf(error->text, sizeof(error->text), format, args);
    va_end(args);
  }
  return status;
}

uint32_t Uint32At(const unsigned char* p) {
  uint32_t v;
  memcpy(&v, p, sizeof(v));
  return v;
}

float ScoreOf(const Tokenizer& t, size_t token) {
  float score;
  memcpy(&score, t.file + t.offsets[token], sizeof(score));
  return score;
}

Piece PieceOf(const Tokenizer& t, size_t token) {
  const unsigned char* record = t.file + t.offsets[token];
  return Piece{reinterpret_cast<const char*>(record + 8), Uint32At(record + 4)};
}

// memcmp order of the concatenation a + b against piece p: < 0, 0, > 0.
int CompareJoined(const char* a, size_t a_length, const char* b, size_t b_length, Piece p) {
  const size_t first = a_length < p.length ? a_length : p.length;
  int c = memcmp(a, p.bytes, first);
  if (c != 0 || a_length > p.length) return c != 0 ? c : 1;
  const size_t rest = p.length - a_length, second = b_length < rest ? b_length : rest;
  c = memcmp(b, p.bytes + a_length, second);
  if (c != 0) return c;
  return a_length + b_length < p.length ? -1 : a_length + b_length > p.length ? 1 : 0;
}

// The lowest id whose piece is a + b, or -1.
int Lookup(const Tokenizer& t, const char* a, size_t a_length, const char* b, size_t b_length) {
  size_t lo = 0, hi = t.vocab_size;  // first sorted entry not below a + b
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (CompareJoined(a, a_length, b, b_length, PieceOf(t, t.sorted[mid])) > 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo == t.vocab_size || CompareJoined(a, a_length, b, b_length, PieceOf(t, t.sorted[lo])) != 0) return -1;
  return static_cast<int>(t.sorted[lo]);
}

bool Printable(unsigned char c) {
  return (c >= 0x20 && c < 0x7f) || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

int HexDigit(char c) {
  return c >= '0' && c <= '9'   ? c - '0'
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                : -1;
}

// Each byte value, for the pieces "<0xXX>" stand for.
struct ByteTable {
  char bytes[256];
  constexpr ByteTable() : bytes{} {
    for (size_t i = 0; i < 256; ++i) bytes[i] = static_cast<char>(static_cast<unsigned char>(i));
  }
};
constexpr ByteTable kBytes;

// Merges the best-scoring pair of neighbours while there is one (run.c's loop, O(count^2) lookups), after the
// BOS at tokens[0]: a control token, never merged (run.c would merge it with the dummy space when a vocabulary's
// BOS piece and " " concatenate to a piece; real tokenizers' "\n<s>\n" never does).
void Merge(const Tokenizer& t, int* tokens, size_t* count) {
  while (true) {
    float best_score = -1e10f;
    size_t best_at = SIZE_MAX;
    int best_id = -1;
    for (size_t i = 1; i + 1 < *count; ++i) {
      const Piece a = PieceOf(t, static_cast<size_t>(tokens[i])), b = PieceOf(t, static_cast<size_t>(tokens[i + 1]));
      const int id = Lookup(t, a.bytes, a.length, b.bytes, b.length);
      if (id >= 0 && ScoreOf(t, static_cast<size_t>(id)) > best_score) {
        best_score = ScoreOf(t, static_cast<size_t>(id));
        best_at = i;
        best_id = id;
      }
    }
    if (best_at == SIZE_MAX) return;
    tokens[best_at] = best_id;
    for (size_t i = best_at + 1; i + 1 < *count; ++i) tokens[i] = tokens[i + 1];
    --*count;
  }
}

}  // namespace

size_t TokenizerArenaBytes(size_t vocab_size) noexcept {
  return vocab_size > SIZE_MAX / (2 * sizeof(uint32_t)) - 1 ? 0 : 2 * vocab_size * sizeof(uint32_t) + 4;
}

Status LoadTokenizer(Tokenizer* tokenizer, const void* file, size_t size, size_t vocab_size, void* arena,
                     size_t arena_bytes, Error* error) noexcept {
  if (tokenizer == nullptr || file == nullptr || arena == nullptr || vocab_size == 0) return Status::kBadArgument;
  if (static_cast<uint64_t>(size) >= (uint64_t{1} << 32))
    return Say(error, Status::kBadArgument, "tokenizer: 4 GiB or more");
  if (arena_bytes < TokenizerArenaBytes(vocab_size)) return Status::kArenaTooSmall;
  const unsigned char* p = static_cast<const unsigned char*>(file);
  if (size < 4)
    return Say(error, Status::kBadFile, "tokenizer: truncated (%lu bytes)", static_cast<unsigned long>(size));
  const uint32_t max_length = Uint32At(p);
  if (max_length == 0 || max_length > kMaxTokenLength) {
    return Say(error, Status::kBadFile, "tokenizer: max_token_length %ld is out of range (1 .. %lu)",
               static_cast<long>(static_cast<int32_t>(max_length)), static_cast<unsigned long>(kMaxTokenLength));
  }
  unsigned char* base = internal::AlignUp(arena, 4);
  Tokenizer t;
  t.file = p;
  t.vocab_size = vocab_size;
  t.max_token_length = max_length;
  t.offsets = internal::BytesAs<uint32_t>(base);
  t.sorted = t.offsets + vocab_size;
  size_t at = 4;
  for (size_t i = 0; i < vocab_size; ++i) {
    if (size - at < 8) {
      return Say(error, Status::kBadFile, "tokenizer: truncated at token %lu of the model's %lu",
                 static_cast<unsigned long>(i), static_cast<unsigned long>(vocab_size));
    }
    float score;
    memcpy(&score, p + at, sizeof(score));
    const uint32_t length = Uint32At(p + at + 4);
    if (!isfinite(score) || length > max_length || length > size - at - 8) {
      return Say(error, Status::kBadFile, "tokenizer: token %lu: %s", static_cast<unsigned long>(i),
                 !isfinite(score)      ? "its score is not finite"
                 : length > max_length ? "its length exceeds max_token_length"
                                       : "truncated");
    }
    t.offsets[i] = static_cast<uint32_t>(at);
    at += 8 + length;
  }
  if (at != size) {
    return Say(error, Status::kBadFile,
               "tokenizer: %lu bytes follow the model's %lu tokens: it belongs to a model "
               "with a larger vocabulary",
               static_cast<unsigned long>(size - at), static_cast<unsigned long>(vocab_size));
  }
  for (size_t i = 0; i < vocab_size; ++i) t.sorted[i] = static_cast<uint32_t>(i);
  SortIndices(t.sorted, vocab_size, [&t](uint32_t a, uint32_t b) {
    const Piece pa = PieceOf(t, a);
    const int c = CompareJoined(pa.bytes, pa.length, "", 0, PieceOf(t, b));
    return c < 0 || (c == 0 && a < b);
  });
  *tokenizer = t;
  return Status::kOk;
}

Piece TokenPiece(const Tokenizer& tokenizer, int token) noexcept {
  if (token < 0 || static_cast<size_t>(token) >= tokenizer.vocab_size) return Piece{"", 0};
  return PieceOf(tokenizer, static_cast<size_t>(token));
}

Piece Decode(const Tokenizer& tokenizer, int previous, int token) noexcept {
  Piece p = TokenPiece(tokenizer, token);
  if (previous == kBos && p.length > 0 && p.bytes[0] == ' ') {
    ++p.bytes;
    --p.length;
  }
  if (p.length == 6 && memcmp(p.bytes, "<0x", 3) == 0 && p.bytes[5] == '>' && HexDigit(p.bytes[3]) >= 0 &&
      HexDigit(p.bytes[4]) >= 0) {
    p = Piece{&kBytes.bytes[HexDigit(p.bytes[3]) * 16 + HexDigit(p.bytes[4])], 1};
  }
  if (p.length == 1 && !Printable(static_cast<unsigned char>(p.bytes[0]))) p.length = 0;
  return p;
}

Status Encode(const Tokenizer& t, const char* text, size_t length, int* tokens, size_t capacity, size_t* count,
              Error* error) noexcept {
  if ((text == nullptr && length != 0) || tokens == nullptr || count == nullptr || t.file == nullptr ||
      capacity < EncodeCapacity(length)) {
    return Status::kBadArgument;
  }
  if (static_cast<size_t>(kBos) >= t.vocab_size) return Say(error, Status::kBadFile, "tokenizer: no BOS token");
  size_t n = 0;
  tokens[n++] = kBos;
  if (length > 0) {
    const int space = Lookup(t, " ", 1, "", 0);
    if (space < 0) return Say(error, Status::kBadFile, "tokenizer: no \" \" token for the dummy prefix");
    tokens[n++] = space;
  }
  for (size_t i = 0; i < length;) {
    size_t end = i + 1;
    while (end < length && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80 && end - i < 4) ++end;
    const int id = Lookup(t, text + i, end - i, "", 0);
    for (size_t b = i; id < 0 && b < end; ++b) {  // byte fallback: <0x00> .. <0xFF> are tokens 3 .. 258
      const size_t byte_token = static_cast<unsigned char>(text[b]) + size_t{3};
      if (byte_token >= t.vocab_size) {
        return Say(error, Status::kBadFile, "tokenizer: no byte token for 0x%02X",
                   static_cast<unsigned>(byte_token - 3));
      }
      tokens[n++] = static_cast<int>(byte_token);
    }
    if (id >= 0) tokens[n++] = id;
    i = end;
  }
  Merge(t, tokens, &n);
  *count = n;
  return Status::kOk;
}

}  // namespace llama2
