// SPDX-License-Identifier: Apache-2.0
// Reading a llama2.c checkpoint from memory: the header, every size against the file's, the Q8 scales.
// Nothing here reads a byte before knowing the file holds it: the header's length is checked first, the header's
// values are bounded before any size is computed from them, and the tensors are read only once the file's size
// equals the size they imply.
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "llama2.h"
#include "llama2_file.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "llama2.c files are little-endian; this reader uses their values in place"
#endif

namespace llama2 {
namespace {

constexpr uint32_t kMagic = 0x616b3432;  // "ak42" as llama2.c's export.py writes it (a little-endian uint32)
constexpr size_t kV0HeaderBytes = 28, kV2HeaderBytes = 256;

Status Fail(Error* error, const char* format, ...) {
  if (error != nullptr) {
    va_list args;
    va_start(args, format);
    vsnprintf(error->text, sizeof(error->text), format, args);
    va_end(args);
  }
  return Status::kBadFile;
}

int32_t Int32At(const unsigned char* p) {
  int32_t v;
  memcpy(&v, p, sizeof(v));
  return v;
}

// One header value: 1 <= value <= limit.
bool InRange(const char* name, int32_t value, size_t limit, Error* error) {
  if (value >= 1 && static_cast<size_t>(value) <= limit) return true;
  Fail(error, "header: %s = %ld is out of range (1 .. %lu)", name, static_cast<long>(value),
       static_cast<unsigned long>(limit));
  return false;
}

// The seven values of llama2.c's Config at p (vocab_size already made positive), checked and derived.
Status ParseShape(const unsigned char* p, int32_t vocab, Config* c, Error* error) {
  const int32_t dim = Int32At(p), hidden = Int32At(p + 4), layers = Int32At(p + 8), heads = Int32At(p + 12),
                kv_heads = Int32At(p + 16), seq_len = Int32At(p + 24);
  if (!InRange("dim", dim, kMaxDim, error) || !InRange("hidden_dim", hidden, kMaxHidden, error) ||
      !InRange("n_layers", layers, kMaxLayers, error) || !InRange("n_heads", heads, static_cast<size_t>(dim), error) ||
      !InRange("n_kv_heads", kv_heads, static_cast<size_t>(heads), error) ||
      !InRange("vocab_size", vocab, kMaxVocab, error) || !InRange("seq_len", seq_len, kMaxSeqLen, error)) {
    return Status::kBadFile;
  }
  if (dim % heads != 0 || (dim / heads) % 2 != 0) {
    return Fail(error, "header: dim %ld is not n_heads %ld heads of an even width (RoPE rotates pairs)",
                static_cast<long>(dim), static_cast<long>(heads));
  }
  if (heads % kv_heads != 0) {
    return Fail(error, "header: n_kv_heads %ld does not divide n_heads %ld", static_cast<long>(kv_heads),
                static_cast<long>(heads));
  }
  c->dim = static_cast<size_t>(dim);
  c->hidden_dim = static_cast<size_t>(hidden);
  c->n_layers = static_cast<size_t>(layers);
  c->n_heads = static_cast<size_t>(heads);
  c->n_kv_heads = static_cast<size_t>(kv_heads);
  c->vocab_size = static_cast<size_t>(vocab);
  c->seq_len = static_cast<size_t>(seq_len);
  c->head_dim = c->dim / c->n_heads;
  return Status::kOk;
}

Status ParseV0(const unsigned char* p, size_t size, Config* c, Error* error) {
  if (size < kV0HeaderBytes) {
    return Fail(error, "truncated: %lu bytes, shorter than a version 0 header (28 bytes)",
                static_cast<unsigned long>(size));
  }
  // run.c: a negative vocab_size means the classifier follows the tensors; positive, it is the embedding.
  const int32_t vocab = Int32At(p + 20);
  c->format = Format::kF32;
  c->shared_classifier = vocab > 0;
  c->group_size = 0;
  return ParseShape(p, vocab == INT32_MIN ? 0 : vocab < 0 ? -vocab : vocab, c, error);
}

Status ParseV2(const unsigned char* p, size_t size, Config* c, Error* error) {
  if (size < kV2HeaderBytes) {
    return Fail(error, "truncated: %lu bytes, shorter than a version 2 header (256 bytes)",
                static_cast<unsigned long>(size));
  }
  const int32_t version = Int32At(p + 4);
  if (version != 2) {
    return Fail(error, "header: version %ld; this reader takes version 0 (run.c) and version 2 (runq.c) files",
                static_cast<long>(version));
  }
  const unsigned char shared = p[36];
  const int32_t group = Int32At(p + 37);  // export.py packs it right after the flag byte, unaligned
  if (shared > 1) return Fail(error, "header: shared_classifier is %u, not 0 or 1", static_cast<unsigned>(shared));
  c->format = Format::kQ8;
  c->shared_classifier = shared == 1;
  const Status status = ParseShape(p + 8, Int32At(p + 28), c, error);
  if (status != Status::kOk) return status;
  if (!InRange("group_size", group, c->dim, error)) return Status::kBadFile;
  c->group_size = static_cast<size_t>(group);
  if (c->dim % c->group_size != 0 || c->hidden_dim % c->group_size != 0) {
    // llama2.c's exporter halves the group size only until it divides dim; runq.c then reads the scales of w2
    // (rows of hidden_dim inputs) out of step with its groups and computes wrong results.
    return Fail(error,
                "header: group_size %lu does not divide dim %lu and hidden_dim %lu (llama2.c's exporter checks only "
                "dim; runq.c would compute wrong results): export again with a group size that divides both",
                static_cast<unsigned long>(c->group_size), static_cast<unsigned long>(c->dim),
                static_cast<unsigned long>(c->hidden_dim));
  }
  return Status::kOk;
}

// Every scale of a Q8 file: 4-byte aligned (they are used in place as floats) and finite.
Status CheckScales(const unsigned char* base, const Config& c, Error* error) {
  Status status = Status::kOk;
  file::WalkTensors(c, [&](const file::Tensor& t) {
    if (!t.quantized) return true;
    if (t.scale_offset % 4 != 0) {
      status = Fail(error, "%s (layer %lu): its scales start at byte %llu, not 4-byte aligned", t.name,
                    static_cast<unsigned long>(t.layer), static_cast<unsigned long long>(t.scale_offset));
      return false;
    }
    const uint64_t groups = t.rows * t.cols / c.group_size;
    for (uint64_t g = 0; g < groups; ++g) {
      float scale;
      memcpy(&scale, base + t.scale_offset + 4 * g, sizeof(scale));
      if (!isfinite(scale)) {
        status = Fail(error, "%s (layer %lu): scale %llu (row %llu) is %s", t.name, static_cast<unsigned long>(t.layer),
                      static_cast<unsigned long long>(g), static_cast<unsigned long long>(g / (t.cols / c.group_size)),
                      isnan(scale) ? "NaN" : "infinite");
        return false;
      }
    }
    return true;
  });
  return status;
}

}  // namespace

Status ReadConfig(const void* file, size_t size, Config* config, Error* error) noexcept {
  if (file == nullptr || config == nullptr) return Status::kBadArgument;
  if (reinterpret_cast<uintptr_t>(file) % 4 != 0) {
    if (error != nullptr) snprintf(error->text, sizeof(error->text), "the file's bytes are not 4-byte aligned");
    return Status::kBadArgument;
  }
  const unsigned char* p = static_cast<const unsigned char*>(file);
  uint32_t magic = 0;
  if (size >= 4) memcpy(&magic, p, sizeof(magic));
  Config c;
  const Status status = magic == kMagic ? ParseV2(p, size, &c, error) : ParseV0(p, size, &c, error);
  if (status != Status::kOk) return status;
  const uint64_t expected = file::WalkTensors(c, [](const file::Tensor&) { return true; });
  if (expected != size) {
    return Fail(error,
                "%s: the header implies %llu bytes (dim %lu, hidden_dim %lu, %lu layers, %lu/%lu heads, "
                "vocabulary %lu, seq_len %lu, %s classifier), the file has %lu",
                expected > size ? "truncated" : "sizes do not match the file",
                static_cast<unsigned long long>(expected), static_cast<unsigned long>(c.dim),
                static_cast<unsigned long>(c.hidden_dim), static_cast<unsigned long>(c.n_layers),
                static_cast<unsigned long>(c.n_heads), static_cast<unsigned long>(c.n_kv_heads),
                static_cast<unsigned long>(c.vocab_size), static_cast<unsigned long>(c.seq_len),
                c.shared_classifier ? "shared" : "own", static_cast<unsigned long>(size));
  }
  if (c.format == Format::kQ8) {
    const Status scales = CheckScales(p, c, error);
    if (scales != Status::kOk) return scales;
  }
  c.file_bytes = size;
  *config = c;
  return Status::kOk;
}

}  // namespace llama2
