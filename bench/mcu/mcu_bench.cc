// SPDX-License-Identifier: Apache-2.0
// Instruction-count benchmark firmware for the Cortex-M boards (scripts/bench-mcu.sh): runs each kernel once per
// implementation at the MCU shapes of issue 32, each call between the two marker functions that
// bench/mcu/insn_count_plugin.c counts between. Before each region it prints "region <kernel>/<shape> <impl>"; the
// plugin writes one count per region in the same order. <impl> is "scalar" (edgeattn::scalar::...), "simd" (the
// dispatched path: the HELIUM backend on the Cortex-M55 presets, Highway's static target on M4 and M7), on Helium
// builds "mve" (the same kernels of lib/*/*_mve.h called directly, without the public wrapper's argument checks:
// simd - mve is the wrapper's cost), and for the int8 group dot "dsp" (SMLAD). A QEMU instruction count is a proxy, not
// cycles.
//
// Inputs are fixed pseudo-random values (the same every run, so the counts are exactly repeatable; the kernels'
// work does not depend on the values except in special cases these inputs avoid: no inf, NaN or subnormal).
#include <stdint.h>
#include <stdio.h>

#include <initializer_list>
#include <limits>

#include "edgeattn/edgeattn.hpp"
#include "lib/common/mve.h"
#include "lib/common/q8_dot_dsp.h"
#include "lib/common/q8_dot_mve.h"
#include "lib/rope/rope_scalar.h"
#if EDGEATTN_MCU_BENCH_MODEL
#include "llama2_board.h"
#endif
#if EDGEATTN_MVE_FLOAT
#include "lib/activation/activation_mve.h"
#include "lib/dot/dot_mve.h"
#include "lib/exp/exp_mve.h"
#include "lib/linear/linear_mve.h"
#include "lib/norm/norm_mve.h"
#include "lib/rope/rope_mve.h"
#include "lib/softmax/softmax_mve.h"
#endif

using edgeattn::Status;

// The markers: never inlined, never merged with each other (different bodies), and opaque to the optimiser
// (GCC's noipa; clang-14 has no such attribute, the memory clobber keeps it from moving memory work across), so
// no work of a region moves across them. The plugin counts from start's first instruction to stop's.
#if defined(__clang__)
#define EDGEATTN_BENCH_MARKER __attribute__((noinline, used))
#else
#define EDGEATTN_BENCH_MARKER __attribute__((noinline, noipa, used))
#endif
extern "C" {
volatile uint32_t g_bench_marker;
EDGEATTN_BENCH_MARKER void edgeattn_bench_start(void) {
  __asm__ volatile("" ::: "memory");
  g_bench_marker = 1;
}
EDGEATTN_BENCH_MARKER void edgeattn_bench_stop(void) {
  __asm__ volatile("" ::: "memory");
  g_bench_marker = 2;
}
}

namespace {

int g_failures = 0;

// A region for a standalone Helium kernel (no status: the kernels are called with valid arguments).
#if EDGEATTN_MVE_FLOAT
#define EDGEATTN_MVE_REGION(name, call) \
  Region(name, "mve", [&] {             \
    call;                               \
    return Status::kOk;                 \
  })
#else
#define EDGEATTN_MVE_REGION(name, call)
#endif

template <class Fn>
void Region(const char* name, const char* impl, Fn fn) {
  printf("region %s %s\n", name, impl);
  fflush(stdout);
  edgeattn_bench_start();
  const Status status = fn();
  edgeattn_bench_stop();
  if (status != Status::kOk) {
    printf("FAILED %s %s: status %d\n", name, impl, static_cast<int>(status));
    ++g_failures;
  }
}

// Uniform in [lo, hi) from a fixed 32-bit LCG (Numerical Recipes' constants).
void Fill(float* x, size_t n, float lo, float hi, uint32_t seed) {
  uint32_t state = seed;
  for (size_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    x[i] = lo + (hi - lo) * static_cast<float>(state >> 8) * (1.0f / 16777216.0f);
  }
}

// Static storage sized for the largest case: linear 1 x 256 x 256 (256 KiB of weights), attention decode n = 256,
// d = 64 (64 KiB each for K and V). The 4 MB boards hold it with room to spare.
constexpr size_t kMaxWeights = 256 * 256;
constexpr size_t kMaxVector = 1024;
float g_w[kMaxWeights];
float g_k[256 * 64];
float g_v[256 * 64];
float g_a[kMaxVector];
float g_b[kMaxVector];
float g_y[kMaxVector];
alignas(64) unsigned char g_workspace[16384];

struct Paths {
  const char* name;
  bool scalar;
};
constexpr Paths kPaths[] = {{"scalar", true}, {"simd", false}};

void EmptyRegion() {
  Region("empty/-", "scalar", [] { return Status::kOk; });
}

void DotCases() {
  Fill(g_a, 1024, -1.0f, 1.0f, 1);
  Fill(g_b, 1024, -1.0f, 1.0f, 2);
  static float result;
  for (const Paths& p : kPaths) {
    Region("dot/n=1024", p.name, [&] {
      return p.scalar ? edgeattn::scalar::Dot(g_a, g_b, 1024, &result) : edgeattn::Dot(g_a, g_b, 1024, &result);
    });
  }
  EDGEATTN_MVE_REGION("dot/n=1024", edgeattn::mve::DotArraysMve(g_a, g_b, 1024, &result));
}

void ExpSoftmaxCases() {
  Fill(g_a, 1024, -87.0f, 0.0f, 3);
  for (const Paths& p : kPaths) {
    Region("exp/n=1024", p.name,
           [&] { return p.scalar ? edgeattn::scalar::Exp(g_a, g_y, 1024) : edgeattn::Exp(g_a, g_y, 1024); });
  }
  EDGEATTN_MVE_REGION("exp/n=1024", edgeattn::mve::ExpArrayMve(g_a, g_y, 1024));
  Fill(g_a, 1024, -10.0f, 10.0f, 4);
  for (const Paths& p : kPaths) {
    Region("softmax/n=1024", p.name, [&] {
      return p.scalar ? edgeattn::scalar::Softmax(g_a, g_y, 1, 1024) : edgeattn::Softmax(g_a, g_y, 1, 1024);
    });
  }
  EDGEATTN_MVE_REGION("softmax/n=1024", edgeattn::mve::SoftmaxRowsMve(g_a, g_y, 1, 1024));
}

void AttentionCases() {
  Fill(g_k, 256 * 64, -1.0f, 1.0f, 5);
  Fill(g_v, 256 * 64, -1.0f, 1.0f, 6);
  Fill(g_a, 64, -1.0f, 1.0f, 7);
  for (size_t n : {size_t{64}, size_t{256}}) {
    edgeattn::AttentionDesc desc;
    desc.q_len = 1;
    desc.kv_len = n;
    desc.head_dim = 64;
    desc.value_dim = 64;
    char name[48];
    snprintf(name, sizeof name, "attention/decode/n=%u,d=64", static_cast<unsigned>(n));
    for (const Paths& p : kPaths) {
      Region(name, p.name, [&] {
        return p.scalar ? edgeattn::scalar::Attention(desc, g_a, g_k, g_v, g_y, g_workspace, sizeof g_workspace)
                        : edgeattn::Attention(desc, g_a, g_k, g_v, g_y, g_workspace, sizeof g_workspace);
      });
    }
  }
  // The row path: an additive mask (a chunk of 4 queries at the end of 64 positions, each seeing the keys up to
  // its own and a distance bias on them, ALiBi-like).
  {
    constexpr size_t kQ = 4, kN = 64;
    Fill(g_a, kQ * 64, -1.0f, 1.0f, 8);
    for (size_t i = 0; i < kQ; ++i) {
      for (size_t j = 0; j < kN; ++j) {
        const size_t last = i + kN - kQ;
        g_b[i * kN + j] = j > last ? -std::numeric_limits<float>::infinity() : -0.0625f * static_cast<float>(last - j);
      }
    }
    edgeattn::AttentionDesc desc;
    desc.q_len = kQ;
    desc.kv_len = kN;
    desc.head_dim = 64;
    desc.value_dim = 64;
    desc.additive_mask = g_b;
    for (const Paths& p : kPaths) {
      Region("attention/row/q=4,n=64,d=64", p.name, [&] {
        return p.scalar ? edgeattn::scalar::Attention(desc, g_a, g_k, g_v, g_y, g_workspace, sizeof g_workspace)
                        : edgeattn::Attention(desc, g_a, g_k, g_v, g_y, g_workspace, sizeof g_workspace);
      });
    }
  }
  // A causal prefill chunk: 16 new positions after 48 held (the tiled path's shape on the Highway targets).
  {
    constexpr size_t kQ = 16, kN = 64;
    Fill(g_a, kQ * 64, -1.0f, 1.0f, 9);
    edgeattn::AttentionDesc desc;
    desc.q_len = kQ;
    desc.kv_len = kN;
    desc.head_dim = 64;
    desc.value_dim = 64;
    desc.mask = edgeattn::MaskKind::kCausal;
    for (const Paths& p : kPaths) {
      Region("attention/prefill/q=16,n=64,d=64", p.name, [&] {
        return p.scalar ? edgeattn::scalar::Attention(desc, g_a, g_k, g_v, g_y, g_workspace, sizeof g_workspace)
                        : edgeattn::Attention(desc, g_a, g_k, g_v, g_y, g_workspace, sizeof g_workspace);
      });
    }
  }
}

// Attention against a KV cache at a decode step (one query, 256 positions held) in each storage format: one head of
// 64 (attention/decode's shape: its f32 row runs the same decode steps on the cache's rows), and the stories260K
// model's attention (8 query heads of 8 sharing 4 kv heads, model260k_q8's cache holds Q8). Causal: the query is
// the position after the 256 held, all visible.
void KvCacheCases() {
  using edgeattn::KvType;
  struct Shape {
    size_t heads, kv_heads, dim;
  };
  constexpr size_t kHeld = 256;
  static float storage[edgeattn::KvCacheStorageBytes(KvType::kF32, 1, 64, 64, kHeld) / sizeof(float)];
  alignas(64) static unsigned char workspace[edgeattn::AttentionCachedWorkspaceBytes(1, 1, 1, 64, 64, kHeld)];
  static_assert(edgeattn::AttentionCachedWorkspaceBytes(1, 8, 4, 8, 8, kHeld) <= sizeof workspace, "");
  for (const Shape s : {Shape{1, 1, 64}, Shape{8, 4, 8}}) {
    Fill(g_k, kHeld * s.kv_heads * s.dim, -1.0f, 1.0f, 16);
    Fill(g_v, kHeld * s.kv_heads * s.dim, -1.0f, 1.0f, 17);
    Fill(g_a, s.heads * s.dim, -1.0f, 1.0f, 18);
    for (const KvType type : {KvType::kF32, KvType::kF16, KvType::kQ8}) {
      edgeattn::KvCacheDesc cd;
      cd.type = type, cd.num_kv_heads = s.kv_heads, cd.head_dim = s.dim, cd.value_dim = s.dim, cd.capacity = kHeld;
      edgeattn::KvCache cache;
      if (cache.Init(cd, storage, sizeof storage) != Status::kOk || cache.Append(g_k, g_v, kHeld) != Status::kOk) {
        ++g_failures;
        continue;
      }
      edgeattn::AttentionDesc desc;
      desc.q_len = 1, desc.head_dim = s.dim, desc.value_dim = s.dim, desc.num_heads = s.heads;
      desc.num_kv_heads = s.kv_heads, desc.mask = edgeattn::MaskKind::kCausal;
      const char* format = type == KvType::kF32 ? "f32" : type == KvType::kF16 ? "f16" : "q8";
      char name[64];
      if (s.heads == 1) {
        snprintf(name, sizeof name, "kv_cache/decode/%s/n=%u,d=%u", format, unsigned{kHeld},
                 static_cast<unsigned>(s.dim));
      } else {
        snprintf(name, sizeof name, "kv_cache/decode/%s/n=%u,heads=%u/%u,d=%u", format, unsigned{kHeld},
                 static_cast<unsigned>(s.heads), static_cast<unsigned>(s.kv_heads), static_cast<unsigned>(s.dim));
      }
      for (const Paths& p : kPaths) {
        Region(name, p.name, [&] {
          return p.scalar ? edgeattn::scalar::AttentionCached(desc, g_a, cache, g_y, workspace, sizeof workspace)
                          : edgeattn::AttentionCached(desc, g_a, cache, g_y, workspace, sizeof workspace);
        });
      }
    }
  }
}

void LinearCases() {
  struct Shape {
    size_t rows, in, out;
  };
  for (const Shape s : {Shape{1, 256, 256}, Shape{8, 64, 64}}) {
    Fill(g_w, s.in * s.out, -0.1f, 0.1f, 8);
    Fill(g_a, s.rows * s.in, -1.0f, 1.0f, 9);
    Fill(g_b, s.out, -0.1f, 0.1f, 10);
    char name[64];  // linear/rows=1,in=256,out=256: the host benchmark's names
    for (const bool transposed : {false, true}) {
      snprintf(name, sizeof name, "%s/rows=%u,in=%u,out=%u", transposed ? "linear_transposed" : "linear",
               static_cast<unsigned>(s.rows), static_cast<unsigned>(s.in), static_cast<unsigned>(s.out));
      for (const Paths& p : kPaths) {
        Region(name, p.name, [&] {
          if (transposed) {
            return p.scalar ? edgeattn::scalar::LinearTransposed(g_a, s.rows, s.in, g_w, g_b, s.out, g_y)
                            : edgeattn::LinearTransposed(g_a, s.rows, s.in, g_w, g_b, s.out, g_y);
          }
          return p.scalar ? edgeattn::scalar::Linear(g_a, s.rows, s.in, g_w, g_b, s.out, g_y)
                          : edgeattn::Linear(g_a, s.rows, s.in, g_w, g_b, s.out, g_y);
        });
      }
      if (transposed) {
        EDGEATTN_MVE_REGION(name,
                            edgeattn::mve::LinearTransposedMve(g_a, s.rows, s.in, g_w, g_b, s.out, 0, s.out, g_y));
      } else {
        EDGEATTN_MVE_REGION(name, edgeattn::mve::LinearMve(g_a, s.rows, s.in, g_w, g_b, s.out, g_y));
      }
    }
  }
}

void NormCases() {
  Fill(g_a, 256, -0.5f, 1.5f, 11);
  Fill(g_b, 256, 0.5f, 1.5f, 12);
  for (const Paths& p : kPaths) {
    Region("rms_norm/n=256", p.name, [&] {
      return p.scalar ? edgeattn::scalar::RmsNorm(g_a, 1, 256, g_b, 1e-5f, g_y)
                      : edgeattn::RmsNorm(g_a, 1, 256, g_b, 1e-5f, g_y);
    });
  }
  EDGEATTN_MVE_REGION("rms_norm/n=256", edgeattn::mve::RmsNormRowsMve(g_a, 1, 256, g_b, 1e-5f, g_y));
  for (const Paths& p : kPaths) {
    Region("layer_norm/n=256", p.name, [&] {
      return p.scalar ? edgeattn::scalar::LayerNorm(g_a, 1, 256, g_b, nullptr, 1e-5f, g_y)
                      : edgeattn::LayerNorm(g_a, 1, 256, g_b, nullptr, 1e-5f, g_y);
    });
  }
  EDGEATTN_MVE_REGION("layer_norm/n=256", edgeattn::mve::LayerNormRowsMve(g_a, 1, 256, g_b, nullptr, 1e-5f, g_y));
}

void ActivationCases() {
  using edgeattn::Activation;
  Fill(g_a, 1024, -8.0f, 8.0f, 13);
  Fill(g_b, 1024, -2.0f, 2.0f, 14);
  struct Act {
    const char* name;
    Activation act;
  };
  for (const Act a :
       {Act{"activation/gelu_erf/n=1024", Activation::kGeluErf},
        Act{"activation/gelu_tanh/n=1024", Activation::kGeluTanh}, Act{"activation/silu/n=1024", Activation::kSilu},
        Act{"activation/relu/n=1024", Activation::kRelu}}) {
    for (const Paths& p : kPaths) {
      Region(a.name, p.name, [&] {
        return p.scalar ? edgeattn::scalar::ActivationApply(g_a, g_y, 1024, a.act)
                        : edgeattn::ActivationApply(g_a, g_y, 1024, a.act);
      });
    }
    EDGEATTN_MVE_REGION(a.name, edgeattn::mve::ActivationArrayMve(g_a, g_y, 1024, a.act));
  }
  for (const Paths& p : kPaths) {
    Region("gated_activation/silu/n=1024", p.name, [&] {
      return p.scalar ? edgeattn::scalar::GatedActivation(g_a, g_b, g_y, 1024, Activation::kSilu)
                      : edgeattn::GatedActivation(g_a, g_b, g_y, 1024, Activation::kSilu);
    });
  }
  EDGEATTN_MVE_REGION("gated_activation/silu/n=1024",
                      edgeattn::mve::GatedActivationArrayMve(g_a, g_b, g_y, 1024, Activation::kSilu));
  for (const Paths& p : kPaths) {
    Region("add/n=1024", p.name,
           [&] { return p.scalar ? edgeattn::scalar::Add(g_a, g_b, g_y, 1024) : edgeattn::Add(g_a, g_b, g_y, 1024); });
  }
  EDGEATTN_MVE_REGION("add/n=1024", edgeattn::mve::AddArraysMve(g_a, g_b, g_y, 1024));
}

// RoPE from a table at a decode step (one token, 8 heads of 64, interleaved pairs, llama2.c's layout).
// RopeWithTable has one implementation for both public paths (float arithmetic on the table): "simd" is it too.
void RopeCases() {
  static float table[64];
  if (edgeattn::RopeTableFill(64, 0.0f, 100, 1, table) != Status::kOk) ++g_failures;
  Fill(g_a, 8 * 64, -1.0f, 1.0f, 15);
  edgeattn::RopeDesc desc;
  desc.num_heads = 8;
  desc.head_dim = 64;
  const edgeattn::RopeTableView view{table, 64, 100, 1};
  for (const Paths& p : kPaths) {
    Region("rope_with_table/heads=8,d=64", p.name, [&] {
      return p.scalar ? edgeattn::scalar::RopeWithTable(desc, view, g_a, 1, 100)
                      : edgeattn::RopeWithTable(desc, view, g_a, 1, 100);
    });
  }
#if EDGEATTN_MVE_FLOAT
  const edgeattn::internal::RopeProblem problem{8, 64, 64, 0.0, false};
  EDGEATTN_MVE_REGION("rope_with_table/heads=8,d=64",
                      edgeattn::mve::RopeWithTableMve(problem, table, 100, g_a, 1, 100));
#endif
}

// The exact int8 dot of one Q8 group row (256 values): the plain loop (the scalar int8 path of linear_q8 will be
// this loop), SMLAD where the core has the DSP extension, VMLADAVA.S8 on Helium. LinearQ8Cases: linear_q8 itself.
__attribute__((noinline)) int32_t DotS8Plain(const int8_t* a, const int8_t* b, size_t n) {
  int32_t sum = 0;
  for (size_t i = 0; i < n; ++i) sum += static_cast<int32_t>(a[i]) * static_cast<int32_t>(b[i]);
  return sum;
}

void DotS8Cases() {
  static int8_t qa[256], qb[256];
  static volatile int32_t sum;  // stored, so the call is not dropped
  for (size_t i = 0; i < 256; ++i) {
    qa[i] = static_cast<int8_t>(static_cast<int>(i * 37 % 255) - 127);
    qb[i] = static_cast<int8_t>(static_cast<int>(i * 91 % 255) - 127);
  }
  Region("dot_s8/n=256", "scalar", [&] {
    sum = DotS8Plain(qa, qb, 256);
    return Status::kOk;
  });
#if EDGEATTN_DSP
  Region("dot_s8/n=256", "dsp", [&] {
    sum = edgeattn::dsp::DotS8Dsp(qa, qb, 256);
    return Status::kOk;
  });
#endif
#if EDGEATTN_MVE_INT
  Region("dot_s8/n=256", "mve", [&] {
    sum = edgeattn::mve::DotS8Mve(qa, qb, 256);
    return Status::kOk;
  });
#endif
  if (sum == 0x7FFFFFFF) ++g_failures;  // reads the result once (never that value)
}

// One decode step of the stories260K-shape Q8 model as the boards run it (examples/llama/llama2_board.h: int8
// weights read in place from flash, Q8 activations, a Q8 KV cache of 256 positions, the RoPE table): the step at
// position 128, whose attention over 129 positions costs the mean of positions 0..255 (attention's work grows
// linearly with the position; everything else is the same at every position). "scalar" is the module's
// Kernels::kScalar (edgeattn::scalar::), "simd" its default (the public entry points).
#if EDGEATTN_MCU_BENCH_MODEL
void ModelCases() {
  static llama2::Model model;
  for (const Paths& p : kPaths) {
    llama2::Error error;
    const llama2::Kernels kernels = p.scalar ? llama2::Kernels::kScalar : llama2::Kernels::kDispatched;
    if (llama2::board::InitBoardModel(&model, kernels, &error) != llama2::Status::kOk) {
      printf("FAILED model260k_q8: %s\n", error.text);
      ++g_failures;
      return;
    }
    int token = 1;  // BOS, then greedy: the same tokens as the board test's
    float margin = 0.0f;
    for (size_t position = 0; position < 128; ++position) {
      if (llama2::board::GreedyStep(&model, token, &token, &margin) != llama2::Status::kOk) {
        printf("FAILED model260k_q8 at position %u: %s\n", static_cast<unsigned>(position), model.error.text);
        ++g_failures;
        return;
      }
    }
    Region("model260k_q8/decode", p.name, [&] {
      return llama2::Forward(&model, &token, 1) == llama2::Status::kOk ? Status::kOk : Status::kInvalidArgument;
    });
  }
}
#else
void ModelCases() {}
#endif

// linear_q8 1 x 256 x 256, group size 32 (llama2.c's runq.c), both activation modes; the float linear_transposed row
// of the same shape (LinearCases) is the comparison for "int8 weights against float weights".
void LinearQ8Cases() {
  static int8_t q[256 * 256];
  static float scale[256 * 256 / 32];
  Fill(g_w, 256 * 256, -0.1f, 0.1f, 8);
  Fill(g_a, 256, -1.0f, 1.0f, 9);
  if (edgeattn::Q8Quantize(g_w, 256, 256, 32, q, scale) != Status::kOk) ++g_failures;
  edgeattn::Q8Matrix w;
  w.q = q, w.scale = scale, w.out_features = 256, w.in_features = 256, w.group_size = 32;
  for (const auto act : {edgeattn::Q8Activations::kQ8, edgeattn::Q8Activations::kF32}) {
    const char* name = act == edgeattn::Q8Activations::kQ8 ? "linear_q8/rows=1,in=256,out=256,act=q8"
                                                           : "linear_q8/rows=1,in=256,out=256,act=f32";
    for (const Paths& p : kPaths) {
      Region(name, p.name, [&] {
        return p.scalar ? edgeattn::scalar::LinearQ8(g_a, 1, w, g_b, act, g_y, g_workspace, sizeof g_workspace)
                        : edgeattn::LinearQ8(g_a, 1, w, g_b, act, g_y, g_workspace, sizeof g_workspace);
      });
    }
  }
}

}  // namespace

int main() {
  printf("edgeattn MCU instruction-count benchmark (a QEMU instruction-count proxy, not cycles); simd target %s\n",
         edgeattn::SimdTarget());
  EmptyRegion();
  DotCases();
  ExpSoftmaxCases();
  AttentionCases();
  KvCacheCases();
  LinearCases();
  NormCases();
  ActivationCases();
  RopeCases();
  DotS8Cases();
  ModelCases();
  LinearQ8Cases();
  printf("%s: %d failed calls\n", g_failures == 0 ? "done" : "FAILED", g_failures);
  return g_failures == 0 ? 0 : 1;
}
