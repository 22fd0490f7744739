// SPDX-License-Identifier: Apache-2.0
// Fuzzes the llama2.c loaders of examples/llama: the checkpoint reader (versions 0 and 2) with Init and a few
// forward steps on what it accepts, and the tokenizer reader with Encode and Decode. The contract: any bytes give a
// status, never a crash, a hang or a read outside them (the input is copied into an allocation of exactly its
// size, so AddressSanitizer sees any read past it); what is accepted is self-consistent: every weight a model
// points to lies inside the file, every token an encoding gives is in the vocabulary, every piece inside the file.
//
// Input: byte 0 chooses the loader (even: checkpoint, odd: tokenizer) and, for a checkpoint, the SIMD target of its
// forward steps. Checkpoint: the rest is the file.
// Tokenizer: the prompt, the file, then a byte of prompt length and two bytes of vocabulary size - 1 (low, high;
// 1 .. 1024): FuzzedDataProvider takes integers from the end, the last byte first as the high one.
// Seeds (corpus/llama): tools/gen_llama_checkpoints.py --fuzz-seeds corpus/llama writes tiny valid files of both
// versions and a tokenizer in this framing, so that mutations start from files that pass the header checks.
#include <stdint.h>

#include <memory>
#include <string>
#include <vector>

#include "examples/llama/llama2.h"
#include "examples/llama/llama2_tokenizer.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using llama2::Status;

// The bytes in an allocation of exactly their size (operator new: aligned for any fundamental type).
struct Exact {
  explicit Exact(const uint8_t* data, size_t size) : bytes(new unsigned char[size == 0 ? 1 : size]), size(size) {
    if (size > 0) std::memcpy(bytes.get(), data, size);
  }
  std::unique_ptr<unsigned char[]> bytes;
  size_t size;
  bool Holds(const void* p, uint64_t n) const {
    const unsigned char* b = static_cast<const unsigned char*>(p);
    return b >= bytes.get() && b <= bytes.get() + size && n <= static_cast<uint64_t>(bytes.get() + size - b);
  }
};

void CheckMatrix(const Exact& file, const llama2::Config& c, const llama2::Matrix& m, const char* name) {
  const uint64_t values = uint64_t{m.out_features} * m.in_features;
  FUZZ_CHECK(values > 0, "%s is empty", name);
  if (c.format == llama2::Format::kF32) {
    FUZZ_CHECK(file.Holds(m.f32, values * 4), "%s: %llu floats outside the file", name,
               static_cast<unsigned long long>(values));
  } else {
    FUZZ_CHECK(m.q8.group_size == c.group_size && m.in_features % c.group_size == 0, "%s: groups", name);
    FUZZ_CHECK(file.Holds(m.q8.q, values) && file.Holds(m.q8.scale, values / c.group_size * 4),
               "%s: Q8 values or scales outside the file", name);
  }
}

void FuzzCheckpoint(const uint8_t* data, size_t size) {
  const Exact file(data, size);
  llama2::Config c;
  llama2::Error error;
  const Status status = llama2::ReadConfig(file.bytes.get(), file.size, &c, &error);
  FUZZ_CHECK(status == Status::kOk || status == Status::kBadFile, "status %d", static_cast<int>(status));
  if (status != Status::kOk) {
    FUZZ_CHECK(error.text[0] != '\0' && std::strchr(error.text, '\n') == nullptr, "no one-line reason");
    return;
  }
  FUZZ_CHECK(
      c.file_bytes == size && c.dim == c.n_heads * c.head_dim && c.head_dim % 2 == 0 && c.n_heads % c.n_kv_heads == 0,
      "inconsistent config");
  llama2::Options options;
  options.capacity = c.seq_len < 4 ? c.seq_len : 4;
  options.max_chunk = 2;
  const size_t arena_bytes = llama2::ArenaBytes(c, options);
  if (arena_bytes == 0 || arena_bytes > (size_t{64} << 20)) return;  // the fuzzer's memory, not the loader's
  std::vector<unsigned char> arena(arena_bytes);
  llama2::Model m;
  FUZZ_CHECK(llama2::Init(&m, file.bytes.get(), file.size, options, arena.data(), arena.size(), &error) == Status::kOk,
             "Init after ReadConfig: %s", error.text);
  FUZZ_CHECK(file.Holds(m.weights.rms_final, c.dim * 4), "rms_final outside the file");
  for (size_t l = 0; l < c.n_layers; ++l) {
    const llama2::LayerWeights& w = m.weights.layers[l];
    FUZZ_CHECK(file.Holds(w.rms_att, c.dim * 4) && file.Holds(w.rms_ffn, c.dim * 4), "norms outside the file");
    const llama2::Matrix* matrices[] = {&w.wq, &w.wk, &w.wv, &w.wo, &w.w1, &w.w2, &w.w3};
    for (const llama2::Matrix* matrix : matrices) CheckMatrix(file, c, *matrix, "layer matrix");
  }
  CheckMatrix(file, c, m.weights.classifier, "classifier");
  const int tokens[3] = {0, static_cast<int>(c.vocab_size - 1), static_cast<int>(c.vocab_size / 2)};
  const size_t n = options.capacity < 3 ? options.capacity : 3;
  const Status forward = llama2::Forward(&m, tokens, n);
  // Float activations carry inf and NaN through (IEEE); Q8 activations cannot quantize them: kNotFinite.
  FUZZ_CHECK(forward == Status::kOk || (c.format == llama2::Format::kQ8 && forward == Status::kNotFinite),
             "Forward: %s", m.error.text);
}

void FuzzTokenizer(FuzzedDataProvider& input) {
  const size_t vocab = input.ConsumeIntegralInRange<size_t>(1, 1024);
  const std::string prompt = input.ConsumeBytesAsString(input.ConsumeIntegral<uint8_t>());
  const std::vector<uint8_t> rest = input.ConsumeRemainingBytes<uint8_t>();
  const Exact file(rest.data(), rest.size());
  std::vector<unsigned char> arena(llama2::TokenizerArenaBytes(vocab));
  llama2::Tokenizer t;
  llama2::Error error;
  const Status status =
      llama2::LoadTokenizer(&t, file.bytes.get(), file.size, vocab, arena.data(), arena.size(), &error);
  FUZZ_CHECK(status == Status::kOk || status == Status::kBadFile, "status %d", static_cast<int>(status));
  if (status != Status::kOk) return;
  for (int token = -1; token <= static_cast<int>(vocab); ++token) {
    for (int previous : {llama2::kBos, 7}) {
      const llama2::Piece p = llama2::Decode(t, previous, token);
      FUZZ_CHECK(p.length <= t.max_token_length, "piece of token %d too long", token);
      FUZZ_CHECK(p.length == 0 || p.length == 1 || file.Holds(p.bytes, p.length), "piece of %d outside", token);
    }
  }
  std::vector<int> tokens(llama2::EncodeCapacity(prompt.size()));
  size_t count = 0;
  const Status encoded = llama2::Encode(t, prompt.data(), prompt.size(), tokens.data(), tokens.size(), &count, &error);
  FUZZ_CHECK(encoded == Status::kOk || encoded == Status::kBadFile, "Encode status %d", static_cast<int>(encoded));
  if (encoded != Status::kOk) return;
  FUZZ_CHECK(count >= 1 && count <= tokens.size() && tokens[0] == llama2::kBos, "count %zu", count);
  for (size_t i = 0; i < count; ++i) {
    FUZZ_CHECK(tokens[i] >= 0 && static_cast<size_t>(tokens[i]) < vocab, "token %d", tokens[i]);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  if (data[0] % 2 == 0) {
    FuzzedDataProvider choice(data, 1);  // byte 0's value also picks the SIMD target the forward steps run on
    const edgeattn_fuzz::FuzzTarget target(choice);
    FuzzCheckpoint(data + 1, size - 1);
  } else {
    FuzzedDataProvider input(data + 1, size - 1);
    FuzzTokenizer(input);
  }
  return 0;
}
