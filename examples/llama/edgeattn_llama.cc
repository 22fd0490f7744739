// SPDX-License-Identifier: Apache-2.0
// edgeattn-llama: llama2.c's run with edgeattn's kernels (issue 31).
//
//   edgeattn-llama <checkpoint.bin> [-z tokenizer.bin] [-i "prompt"] [-n steps] [-t temperature] [-p topp]
//                  [-s seed] [-k f32|f16|q8] [-a f32|q8] [-j threads]
//
// As llama2.c's run: the checkpoint (version 0 or 2) is memory-mapped and used in place, the prompt is encoded
// with BOS, generation runs until `steps` positions (default 256; 0 or more than seq_len means seq_len) or until
// the model produces BOS, the text goes to stdout as it is made and "achieved tok/s: N" to stderr at the end
// (tokens after the first over the time since the first). Different from run.c: the prompt's tokens after the
// first run in one prefill call instead of one by one (the tokens are the same; the logits may differ in the last
// bits, so a near-tie may choose differently), the KV caches hold `steps` positions of the type -k chooses,
// -j runs the linear layers and the attention on that many threads (the same bits as one thread), -a chooses how
// the linear layers of a version 2 file treat their input (runq.c quantizes it: q8), and a bad file or option
// ends the program with a one-line reason and exit code 1. Every buffer is sized and allocated before the first
// token.
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <vector>

#include "llama2.h"
#include "llama2_pool.h"
#include "llama2_sampler.h"
#include "llama2_tokenizer.h"

namespace {

struct Args {
  const char* checkpoint = nullptr;
  const char* tokenizer = "tokenizer.bin";
  const char* prompt = "";
  long steps = 256;
  float temperature = 1.0f;
  float top_p = 0.9f;
  unsigned long long seed = 0;  // 0: the time
  edgeattn::KvType kv_type = edgeattn::KvType::kF32;
  llama2::Activations activations = llama2::Activations::kDefault;
  long threads = 1;
};

[[noreturn]] void Usage(const char* problem) {
  if (problem != nullptr) fprintf(stderr, "edgeattn-llama: %s\n", problem);
  fprintf(stderr,
          "Usage:   edgeattn-llama <checkpoint> [options]\n"
          "Example: edgeattn-llama stories15M.bin -n 256 -i \"Once upon a time\"\n"
          "Options:\n"
          "  -t <float>  temperature in [0, inf), default 1.0 (0: greedy)\n"
          "  -p <float>  p value in top-p (nucleus) sampling in [0, 1], default 0.9\n"
          "  -s <int>    random seed, default time(NULL)\n"
          "  -n <int>    number of steps to run for, default 256; 0 = max_seq_len\n"
          "  -i <string> input prompt\n"
          "  -z <string> tokenizer file, default tokenizer.bin\n"
          "  -k <type>   KV cache type: f32 (default), f16 or q8\n"
          "  -a <type>   activations for Q8 weights: q8 (default) or f32\n"
          "  -j <int>    threads, default 1\n");
  exit(1);
}

[[noreturn]] void Die(const char* what, const char* why) {
  fprintf(stderr, "edgeattn-llama: %s: %s\n", what, why);
  exit(1);
}

[[noreturn]] void BadValue(const char* flag, const char* expected, const char* text) {
  static char message[128];
  snprintf(message, sizeof(message), "%s expects %s, not \"%s\"", flag, expected, text);
  Usage(message);
}

double Number(const char* flag, const char* text) {
  char* end = nullptr;
  errno = 0;
  const double v = strtod(text, &end);
  if (end == text || *end != '\0' || errno != 0) BadValue(flag, "a number", text);
  return v;
}

// A whole number in [min, max] written in decimal digits (no sign, fraction or exponent: "2.5" or "1e9" steps or
// threads are a mistake, not something to round).
unsigned long long Whole(const char* flag, const char* text, unsigned long long min, unsigned long long max) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = text[0] >= '0' && text[0] <= '9' ? strtoull(text, &end, 10) : 0;
  if (end == nullptr || end == text || *end != '\0' || errno != 0 || v < min || v > max) {
    static char expected[64];
    snprintf(expected, sizeof(expected), "a whole number from %llu to %llu", min, max);
    BadValue(flag, expected, text);
  }
  return v;
}

Args Parse(int argc, char** argv) {
  Args a;
  if (argc < 2) Usage(nullptr);
  a.checkpoint = argv[1];
  for (int i = 2; i < argc; i += 2) {
    if (i + 1 >= argc || argv[i][0] != '-' || strlen(argv[i]) != 2) Usage("options are -x value pairs");
    const char* v = argv[i + 1];
    switch (argv[i][1]) {
      case 't':
        a.temperature = static_cast<float>(Number("-t", v));
        break;
      case 'p':
        a.top_p = static_cast<float>(Number("-p", v));
        break;
      case 's':
        a.seed = Whole("-s", v, 0, ~0ull);
        break;
      case 'n':
        a.steps = static_cast<long>(Whole("-n", v, 0, LONG_MAX));
        break;
      case 'j':
        a.threads = static_cast<long>(Whole("-j", v, 1, llama2::kMaxWorkers));
        break;
      case 'i':
        a.prompt = v;
        break;
      case 'z':
        a.tokenizer = v;
        break;
      case 'k':
        if (strcmp(v, "f32") == 0)
          a.kv_type = edgeattn::KvType::kF32;
        else if (strcmp(v, "f16") == 0)
          a.kv_type = edgeattn::KvType::kF16;
        else if (strcmp(v, "q8") == 0)
          a.kv_type = edgeattn::KvType::kQ8;
        else
          Usage("-k takes f32, f16 or q8");
        break;
      case 'a':
        if (strcmp(v, "f32") == 0)
          a.activations = llama2::Activations::kF32;
        else if (strcmp(v, "q8") == 0)
          a.activations = llama2::Activations::kQ8;
        else
          Usage("-a takes f32 or q8");
        break;
      default:
        Usage("unknown option");
    }
  }
  if (!(a.temperature >= 0.0f) || !(a.top_p >= 0.0f && a.top_p <= 1.0f)) Usage("-t or -p out of range");
  if (a.seed == 0) a.seed = static_cast<unsigned long long>(time(nullptr));
  return a;
}

// The whole file, mapped read-only (page-aligned, so 4-byte aligned as the reader wants).
const void* MapFile(const char* path, size_t* size) {
  const int fd = open(path, O_RDONLY);
  if (fd < 0) Die(path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) Die(path, strerror(errno));
  *size = static_cast<size_t>(st.st_size);
  if (*size == 0) Die(path, "empty file");
  void* p = mmap(nullptr, *size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (p == MAP_FAILED) Die(path, strerror(errno));
  return p;
}

void* Allocate(size_t bytes, const char* what) {
  void* p = malloc(bytes == 0 ? 1 : bytes);  // malloc's alignment is enough: the module aligns inside
  if (p == nullptr) Die(what, "out of memory");
  return p;
}

void Print(const llama2::Tokenizer& tokenizer, int previous, int token) {
  const llama2::Piece piece = llama2::Decode(tokenizer, previous, token);
  fwrite(piece.bytes, 1, piece.length, stdout);
  fflush(stdout);
}

double Seconds() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace

int main(int argc, char** argv) {
  const Args args = Parse(argc, argv);
  size_t checkpoint_bytes = 0;
  const void* checkpoint = MapFile(args.checkpoint, &checkpoint_bytes);
  llama2::Error error;
  llama2::Config config;
  if (llama2::ReadConfig(checkpoint, checkpoint_bytes, &config, &error) != llama2::Status::kOk) {
    Die(args.checkpoint, error.text);
  }
  size_t tokenizer_bytes = 0;
  const void* tokenizer_file = MapFile(args.tokenizer, &tokenizer_bytes);
  llama2::Tokenizer tokenizer;
  void* tokenizer_arena = Allocate(llama2::TokenizerArenaBytes(config.vocab_size), "tokenizer");
  if (llama2::LoadTokenizer(&tokenizer, tokenizer_file, tokenizer_bytes, config.vocab_size, tokenizer_arena,
                            llama2::TokenizerArenaBytes(config.vocab_size), &error) != llama2::Status::kOk) {
    Die(args.tokenizer, error.text);
  }
  const size_t steps = args.steps == 0 || static_cast<size_t>(args.steps) > config.seq_len
                           ? config.seq_len
                           : static_cast<size_t>(args.steps);
  const size_t prompt_bytes = strlen(args.prompt);
  std::vector<int> prompt(llama2::EncodeCapacity(prompt_bytes));
  size_t prompt_tokens = 0;
  if (llama2::Encode(tokenizer, args.prompt, prompt_bytes, prompt.data(), prompt.size(), &prompt_tokens, &error) !=
      llama2::Status::kOk) {
    Die("prompt", error.text);
  }

  llama2::Options options;
  options.kv_type = args.kv_type;
  options.activations = args.activations;
  options.capacity = steps;
  options.workers = static_cast<size_t>(args.threads);
  const size_t arena_bytes = llama2::ArenaBytes(config, options, &error);
  if (arena_bytes == 0) Die(args.checkpoint, error.text);
  void* arena = Allocate(arena_bytes, "arena");
  llama2::Model model;
  if (llama2::Init(&model, checkpoint, checkpoint_bytes, options, arena, arena_bytes, &error) != llama2::Status::kOk) {
    Die(args.checkpoint, error.text);
  }
  std::unique_ptr<llama2::ThreadPool> pool;
  if (args.threads > 1) {
    pool.reset(new llama2::ThreadPool(static_cast<size_t>(args.threads)));
    model.parallel = pool->parallel();
  }
  llama2::Sampler sampler;
  void* sampler_arena = Allocate(llama2::SamplerArenaBytes(config.vocab_size), "sampler");
  if (llama2::InitSampler(&sampler, config.vocab_size, args.temperature, args.top_p, args.seed, sampler_arena,
                          llama2::SamplerArenaBytes(config.vocab_size)) != llama2::Status::kOk) {
    Die("sampler", "bad arguments");
  }

  // The first token alone (the timer starts after it, as run.c's), then the rest of the prompt in one prefill,
  // then one token per step. pos counts the tokens run.
  auto forward = [&](const int* tokens, size_t n) {
    if (llama2::Forward(&model, tokens, n) != llama2::Status::kOk) Die("forward", model.error.text);
  };
  const size_t prefill = prompt_tokens < steps ? prompt_tokens : steps;
  forward(prompt.data(), 1);
  const double start = Seconds();
  if (prefill > 1) forward(prompt.data() + 1, prefill - 1);
  size_t pos = prefill;
  int token = prompt[0];
  bool bos = false;                               // BOS delimits sequences: it ends the run, also inside the prompt
  for (size_t i = 1; i < prefill && !bos; ++i) {  // the prompt's pieces, as run.c prints them while it forces them
    bos = prompt[i] == llama2::kBos;
    if (!bos) Print(tokenizer, token, prompt[i]);
    token = prompt[i];
  }
  const double prefill_seconds = Seconds() - start;
  while (!bos) {
    const int next = pos < prompt_tokens ? prompt[pos] : llama2::Sample(&sampler, model.logits);
    if (next == llama2::kBos) break;
    Print(tokenizer, token, next);
    token = next;
    if (pos >= steps) break;
    forward(&token, 1);
    ++pos;
  }
  const double seconds = Seconds() - start;
  printf("\n");
  if (pos > 1) {
    const char* kv_names[] = {"f32", "f16", "q8"};
    fprintf(
        stderr, "prefill: %lu tokens at %.1f tok/s; decode: %lu tokens at %.1f tok/s (%s weights%s, -j %ld, -k %s)\n",
        static_cast<unsigned long>(prefill - 1), prefill > 1 ? static_cast<double>(prefill - 1) / prefill_seconds : 0.0,
        static_cast<unsigned long>(pos - prefill),
        pos > prefill ? static_cast<double>(pos - prefill) / (seconds - prefill_seconds) : 0.0,
        config.format == llama2::Format::kQ8 ? "q8" : "f32",
        config.format != llama2::Format::kQ8                     ? ""
        : model.options.activations == llama2::Activations::kF32 ? ", -a f32"
                                                                 : ", -a q8",
        args.threads, kv_names[static_cast<int>(args.kv_type)]);
    fprintf(stderr, "achieved tok/s: %f\n", static_cast<double>(pos - 1) / seconds);
  }
  free(sampler_arena);
  free(arena);
  free(tokenizer_arena);
  return 0;
}
