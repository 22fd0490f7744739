// SPDX-License-Identifier: Apache-2.0
// Allocation-free proof at run time: every operator new/delete and the C allocation functions are replaced
// with counting versions, and each kernel call, on every path, through the C++, C and fixed-shape APIs, on
// valid and invalid input, must leave the counter at zero. A positive control shows the counter works.
// (The link-time proof, no allocation symbols in libedgeattn.a, is the archive_symbols test.)
#include <gtest/gtest.h>
#include <stddef.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "edgeattn/edgeattn.h"
#include "edgeattn/edgeattn.hpp"
#include "tests/activation_reference.h"
#include "tests/test_util.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define EDGEATTN_SANITIZER_ALLOCATOR 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define EDGEATTN_SANITIZER_ALLOCATOR 1
#endif

// Replacing malloc needs glibc's __libc_* entry points, and must not fight a sanitizer's own allocator.
#if defined(__GLIBC__) && !defined(EDGEATTN_SANITIZER_ALLOCATOR)
#define EDGEATTN_COUNT_ALLOCATIONS 1
extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* p, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
void __libc_free(void* p);
}

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_calls{0};  // allocations and frees while counting
inline void Count() {
  if (g_counting.load(std::memory_order_relaxed)) g_calls.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

extern "C" {
void* malloc(size_t size) {
  Count();
  return __libc_malloc(size);
}
void* calloc(size_t count, size_t size) {
  Count();
  return __libc_calloc(count, size);
}
void* realloc(void* p, size_t size) {
  Count();
  return __libc_realloc(p, size);
}
void free(void* p) {
  if (p != nullptr) Count();
  __libc_free(p);
}
void* aligned_alloc(size_t alignment, size_t size) {
  Count();
  return __libc_memalign(alignment, size);
}
void* memalign(size_t alignment, size_t size) {
  Count();
  return __libc_memalign(alignment, size);
}
int posix_memalign(void** p, size_t alignment, size_t size) {
  Count();
  *p = __libc_memalign(alignment, size);
  return *p == nullptr ? 12 /* ENOMEM */ : 0;
}
}  // extern "C"

namespace {
void* CountedNew(size_t size, size_t alignment) {
  Count();
  void* p = alignment <= alignof(std::max_align_t) ? __libc_malloc(size == 0 ? 1 : size)
                                                   : __libc_memalign(alignment, size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void CountedDelete(void* p) {
  if (p != nullptr) Count();
  __libc_free(p);
}
}  // namespace

void* operator new(size_t n) { return CountedNew(n, 0); }
void* operator new[](size_t n) { return CountedNew(n, 0); }
void* operator new(size_t n, std::align_val_t a) { return CountedNew(n, static_cast<size_t>(a)); }
void* operator new[](size_t n, std::align_val_t a) { return CountedNew(n, static_cast<size_t>(a)); }
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  Count();
  return __libc_malloc(n == 0 ? 1 : n);
}
void* operator new[](size_t n, const std::nothrow_t&) noexcept {
  Count();
  return __libc_malloc(n == 0 ? 1 : n);
}
void operator delete(void* p) noexcept { CountedDelete(p); }
void operator delete[](void* p) noexcept { CountedDelete(p); }
void operator delete(void* p, size_t) noexcept { CountedDelete(p); }
void operator delete[](void* p, size_t) noexcept { CountedDelete(p); }
void operator delete(void* p, std::align_val_t) noexcept { CountedDelete(p); }
void operator delete[](void* p, std::align_val_t) noexcept { CountedDelete(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { CountedDelete(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { CountedDelete(p); }
#else
#define EDGEATTN_COUNT_ALLOCATIONS 0
#endif  // __GLIBC__ && no sanitizer

namespace edgeattn_test {
namespace {

#if EDGEATTN_COUNT_ALLOCATIONS
// Counts allocation calls made by fn.
template <class Fn>
long AllocationsDuring(Fn&& fn) {
  g_calls.store(0);
  g_counting.store(true);
  fn();
  g_counting.store(false);
  return g_calls.load();
}
#endif

class AllocFreeTest : public PathTest {};
EDGEATTN_INSTANTIATE_PATHS(AllocFreeTest);

#if EDGEATTN_COUNT_ALLOCATIONS
void* volatile g_escape;  // the compiler may elide a new/delete pair whose pointer does not escape

TEST(AllocationCounter, SeesAllocations) {
  // Positive control: if the hooks were not in place, the zero counts below would prove nothing.
  EXPECT_EQ(AllocationsDuring([] {
              int* p = new int(1);
              g_escape = p;
              delete p;
            }),
            2);
  EXPECT_EQ(AllocationsDuring([] {
              void* p = std::malloc(16);
              g_escape = p;
              std::free(p);
            }),
            2);
}
#endif

TEST_P(AllocFreeTest, NoKernelCallAllocates) {
#if !EDGEATTN_COUNT_ALLOCATIONS
  GTEST_SKIP()
      << "allocation hooks need glibc and no sanitizer allocator; archive_symbols still proves it at link time";
#else
  // All buffers exist before counting starts.
  std::vector<float> a(257, 0.5f), b(257, 0.25f), rows(4 * 257, 1.0f), out(4 * 257);
  std::vector<float> q(9 * 4 * 16, 0.1f), k(33 * 2 * 16, 0.2f), v(33 * 2 * 24, 0.3f), o(9 * 4 * 24), w(4 * 9 * 33),
      mask(9 * 33, 0.0f), x(9 * 16, 1.0f), weight(16 * 24, 0.5f), bias(24, 0.0f), y(9 * 24);
  edgeattn::RopeDesc rope;
  rope.num_heads = 4, rope.head_dim = 16, rope.layout = edgeattn::RopeLayout::kHalf;
  const edgeattn_rope_desc crope = {4, 16, 8, 0.0f, EDGEATTN_ROPE_INTERLEAVED};
  static constexpr edgeattn::RopeTable<12, 16> kTable = edgeattn::MakeRopeTable<12, 16>();
  const edgeattn::RopeTableView table = kTable.View();
  edgeattn::AttentionDesc d = MakeDesc(9, 33, 16, 24, edgeattn::MaskKind::kCausal, 4, 2);
  d.additive_mask = mask.data();
  edgeattn_attention_desc cd = {9, 33, 16, 24, 4, 2, 0.0f, EDGEATTN_MASK_CAUSAL, mask.data()};
  std::vector<unsigned char> ws(api().attention_workspace_size(d));
  static edgeattn::FixedAttention<4, 4, 8, 8, 1, 1, edgeattn::MaskKind::kCausal> fixed;
  static float fq[4][8], fk[4][8], fv[4][8], fo[4][8], fw[1][4][4];
  const bool scalar = IsScalarPath();
  float result = 0;
  // A KV cache of each type (GQA, a ring) and the C API's struct.
  edgeattn::KvCacheDesc kvd;
  kvd.num_kv_heads = 2;
  kvd.head_dim = 16;
  kvd.value_dim = 24;
  kvd.capacity = 40;
  kvd.window = 20;
  std::vector<unsigned char> kv_storage[3];
  edgeattn::KvCache kv_caches[3];
  for (int t = 0; t < 3; ++t) {
    kvd.type = static_cast<edgeattn::KvType>(t);
    kv_storage[t].resize(edgeattn::KvCacheStorageSize(kvd));
    ASSERT_EQ(kv_caches[t].Init(kvd, kv_storage[t].data(), kv_storage[t].size()), Status::kOk);
  }
  edgeattn::AttentionDesc kv_desc = MakeDesc(9, 0, 16, 24, edgeattn::MaskKind::kCausal, 4, 2);
  std::vector<unsigned char> kv_ws(api().attention_cached_workspace_size(kv_desc, kv_caches[0]));
  std::vector<float> kv_row(2 * 24);
  edgeattn_kv_cache_desc ckvd = {EDGEATTN_KV_F16, 2, 16, 24, 40, 20};
  std::vector<unsigned char> ckv_storage(edgeattn_kv_cache_storage_size(&ckvd));
  edgeattn_kv_cache ckv;
  edgeattn_attention_desc ckv_desc = {1, 0, 16, 24, 4, 2, 0.0f, EDGEATTN_MASK_CAUSAL, nullptr};
  // The work split: a decode step in two key chunks (shared partials) and the prefill above by row blocks.
  edgeattn_attention_desc split_desc = {1, 600, 16, 24, 4, 2, 0.0f, EDGEATTN_MASK_CAUSAL, nullptr};
  std::vector<float> split_k(600 * 2 * 16, 0.2f), split_v(600 * 2 * 24, 0.3f);
  std::vector<unsigned char> split_ws(edgeattn_attention_workspace_size(&split_desc));
  std::vector<unsigned char> split_shared(edgeattn_attention_shared_size(&split_desc));

  // int8 weights (linear_q8): a 24 x 64 matrix in groups of 32, quantised before the measured calls.
  std::vector<float> q8_w(24 * 64, 0.25f), q8_x(9 * 64, 0.5f), q8_y(9 * 24);
  std::vector<int8_t> q8_q(24 * 64);
  std::vector<float> q8_scale(24 * 2);
  const edgeattn::Q8Matrix q8m{q8_q.data(), q8_scale.data(), 24, 64, 32};
  const edgeattn_q8_matrix q8c = {q8_q.data(), q8_scale.data(), 24, 64, 32};
  std::vector<unsigned char> q8_ws(edgeattn::LinearQ8WorkspaceSize(9, q8m, edgeattn::Q8Activations::kQ8));

  const long calls = AllocationsDuring([&] {
    const Api& p = api();
    (void)(scalar ? edgeattn::scalar::Q8Quantize(q8_w.data(), 24, 64, 32, q8_q.data(), q8_scale.data())
                  : edgeattn::Q8Quantize(q8_w.data(), 24, 64, 32, q8_q.data(), q8_scale.data()));
    for (edgeattn::Q8Activations act : {edgeattn::Q8Activations::kQ8, edgeattn::Q8Activations::kF32}) {
      (void)(scalar ? edgeattn::scalar::LinearQ8(q8_x.data(), 9, q8m, nullptr, act, q8_y.data(), q8_ws.data(),
                                                 q8_ws.size())
                    : edgeattn::LinearQ8(q8_x.data(), 9, q8m, nullptr, act, q8_y.data(), q8_ws.data(), q8_ws.size()));
    }
    for (size_t n : {0, 1, 5, 16, 17, 257}) {
      (void)p.dot(a.data(), b.data(), n, &result);
      (void)p.exp(a.data(), out.data(), n);
    }
    (void)p.softmax(rows.data(), out.data(), 4, 257);
    (void)p.softmax(rows.data(), rows.data(), 1, 3);
    (void)p.attention(d, q.data(), k.data(), v.data(), o.data(), ws.data(), ws.size());
    (void)p.attention_weights(d, q.data(), k.data(), w.data());
    (void)p.attention_workspace_size(d);
    (void)p.linear(x.data(), 9, 16, weight.data(), bias.data(), 24, y.data());
    (void)p.add_positional_encoding(x.data(), 9, 16, 100);
    (void)p.rms_norm(rows.data(), 4, 257, a.data(), 1e-5f, out.data());
    (void)p.rms_norm(rows.data(), 4, 257, nullptr, 0.0f, rows.data());
    (void)p.layer_norm(rows.data(), 4, 257, a.data(), b.data(), 1e-5f, out.data());
    (void)p.linear_transposed(x.data(), 9, 16, weight.data(), bias.data(), 24, y.data());
    (void)p.rope(rope, q.data(), 9, 1000);
    (void)p.rope_with_table(rope, table, q.data(), 9, 3);
    const ActivationApi& act = ActivationApiFor(GetParam());
    for (edgeattn::Activation kind : kAllActivations) {
      (void)act.apply(a.data(), out.data(), 257, kind);
      (void)act.apply(a.data(), out.data(), 5, kind);
      (void)act.gated(a.data(), b.data(), out.data(), 17, kind);
    }
    (void)act.add(a.data(), b.data(), out.data(), 257);
    (void)act.apply(a.data(), out.data(), 5, static_cast<edgeattn::Activation>(9));
    // Error paths.
    (void)p.softmax(rows.data(), rows.data() + 1, 1, 4);
    (void)p.attention(d, q.data(), k.data(), v.data(), o.data(), ws.data(), 1);
    (void)p.linear(x.data(), 0, 16, weight.data(), bias.data(), 24, y.data());
    (void)p.layer_norm(rows.data(), 4, 257, a.data(), b.data(), -1.0f, out.data());
    (void)p.rope(rope, q.data(), 9, size_t{1} << 24);
    // KV caches: append (past a ring's capacity), read, truncate, attention (prefill chunk and decode).
    for (edgeattn::KvCache& c : kv_caches) {
      (void)c.Append(k.data(), v.data(), 33);
      (void)c.Read(30, kv_row.data(), kv_row.data() + 16);
      (void)c.Truncate(32);
      (void)c.Append(k.data(), v.data(), 1);
      (void)p.attention_cached(kv_desc, q.data(), c, o.data(), kv_ws.data(), kv_ws.size());
      (void)p.attention_cached_workspace_size(kv_desc, c);
    }
    // Fixed shapes.
    (void)(scalar ? fixed.RunScalar(fq, fk, fv, fo) : fixed.Run(fq, fk, fv, fo));
    (void)(scalar ? fixed.AttentionWeightsScalar(fq, fk, fw) : fixed.AttentionWeights(fq, fk, fw));
    if (!scalar) {
      // The C API (always the dispatched path).
      (void)edgeattn_attention(&cd, q.data(), k.data(), v.data(), o.data(), ws.data(), ws.size());
      (void)edgeattn_attention_weights(&cd, q.data(), k.data(), w.data());
      (void)edgeattn_attention_workspace_size(&cd);
      (void)edgeattn_softmax(rows.data(), out.data(), 4, 257);
      (void)edgeattn_exp(a.data(), out.data(), 257);
      (void)edgeattn_dot(a.data(), b.data(), 257, &result);
      (void)edgeattn_linear(x.data(), 9, 16, weight.data(), nullptr, 24, y.data());
      (void)edgeattn_add_positional_encoding(x.data(), 9, 16, 0);
      (void)edgeattn_rms_norm(rows.data(), 4, 257, a.data(), 1e-5f, out.data());
      (void)edgeattn_layer_norm(rows.data(), 4, 257, a.data(), nullptr, 1e-5f, rows.data());
      (void)edgeattn_linear_transposed(x.data(), 9, 16, weight.data(), nullptr, 24, y.data());
      (void)edgeattn_rope(&crope, q.data(), 9, 0);
      const edgeattn_rope_table ctable = {out.data(), 8, 0, 37};
      (void)edgeattn_rope_table_fill(8, 0.0f, 0, 37, out.data());
      (void)edgeattn_rope_with_table(&crope, &ctable, q.data(), 9, 0);
      (void)edgeattn_activation_apply(a.data(), out.data(), 257, EDGEATTN_ACT_GELU_ERF);
      (void)edgeattn_gated_activation(a.data(), b.data(), out.data(), 257, EDGEATTN_ACT_SILU);
      (void)edgeattn_add(a.data(), b.data(), out.data(), 257);
      (void)edgeattn_simd_target();
      (void)edgeattn_version();
      (void)edgeattn_status_string(EDGEATTN_ERROR_OVERLAP);
      (void)edgeattn_kv_cache_init(&ckv, &ckvd, ckv_storage.data(), ckv_storage.size());
      (void)edgeattn_kv_cache_append(&ckv, k.data(), v.data(), 9);
      (void)edgeattn_kv_cache_read(&ckv, 3, kv_row.data(), kv_row.data() + 16);
      (void)edgeattn_kv_cache_truncate(&ckv, 8);
      (void)edgeattn_attention_cached(&ckv_desc, q.data(), &ckv, o.data(), kv_ws.data(), kv_ws.size());
      (void)edgeattn_attention_cached_workspace_size(&ckv_desc, &ckv);
      for (size_t part = 0; part < edgeattn_attention_part_count(&split_desc); ++part) {
        (void)edgeattn_attention_part(&split_desc, part, q.data(), split_k.data(), split_v.data(), o.data(),
                                      split_shared.data(), split_shared.size(), split_ws.data(), split_ws.size());
      }
      (void)edgeattn_attention_finish(&split_desc, split_shared.data(), split_shared.size(), o.data());
      (void)edgeattn_attention_shared_size(&cd);
      (void)edgeattn_attention_part(&cd, 0, q.data(), k.data(), v.data(), o.data(), nullptr, 0, ws.data(), ws.size());
      (void)edgeattn_attention_finish(&cd, nullptr, 0, o.data());
      for (size_t part = 0; part < edgeattn_attention_cached_part_count(&ckv_desc, &ckv); ++part) {
        (void)edgeattn_attention_cached_part(&ckv_desc, part, q.data(), &ckv, o.data(), nullptr, 0, kv_ws.data(),
                                             kv_ws.size());
      }
      (void)edgeattn_attention_cached_shared_size(&ckv_desc, &ckv);
      (void)edgeattn_attention_cached_finish(&ckv_desc, &ckv, nullptr, 0, o.data());
      (void)edgeattn_q8_quantize(q8_w.data(), 24, 64, 32, q8_q.data(), q8_scale.data());
      (void)edgeattn_linear_q8_workspace_size(9, &q8c, EDGEATTN_Q8_ACT_Q8);
      (void)edgeattn_linear_q8(q8_x.data(), 9, &q8c, nullptr, EDGEATTN_Q8_ACT_Q8, q8_y.data(), q8_ws.data(),
                               q8_ws.size());
      for (size_t part = 0; part < edgeattn_linear_q8_part_count(9, &q8c); ++part) {
        (void)edgeattn_linear_q8_part(q8_x.data(), 9, &q8c, nullptr, EDGEATTN_Q8_ACT_F32, part, q8_y.data(), nullptr,
                                      0);
      }
      (void)edgeattn_linear_q8_part_range(q8_x.data(), 9, &q8c, nullptr, EDGEATTN_Q8_ACT_Q8, 0,
                                          edgeattn_linear_q8_part_count(9, &q8c), q8_y.data(), q8_ws.data(),
                                          q8_ws.size());
      for (size_t part = 0; part < edgeattn_linear_transposed_part_count(9, 16, 24); ++part) {
        (void)edgeattn_linear_transposed_part(x.data(), 9, 16, weight.data(), nullptr, 24, part, y.data());
      }
    }
  });
  EXPECT_EQ(calls, 0) << "a kernel call allocated or freed memory on " << TargetName(GetParam());
#endif
}

}  // namespace
}  // namespace edgeattn_test
