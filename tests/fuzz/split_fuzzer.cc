// SPDX-License-Identifier: Apache-2.0
// Fuzzes the work split of issue 20 through the C API: edgeattn_attention_part_count / _shared_size / _part /
// _finish and their cached versions. For random shapes (several 512-key chunks included), masks, head layouts and
// caches (F32/F16/Q8, linear or ring), the parts run in an order the input chooses, each with its own workspace
// of garbage bytes and a shared buffer of garbage bytes at an odd address; finish must then give the single call's
// bits (edgeattn.h's promise). Bad part indices, short workspace or shared buffers, NULL and overlapping shared
// buffers must give their statuses and write nothing, and a descriptor the single call refuses must be refused by
// every function of the split with the same status. The single call is not its own oracle: its status must be
// the one the contract promises (stated here from edgeattn.h and kv_cache.h, independently of the library's
// checks), and on finite inputs its output must be within attention.h's bound of the double-precision reference
// (tests/reference.h; for a cache, on the values Read returns for the positions each query sees).
#include <stdint.h>

#include "edgeattn/edgeattn.h"
#include "tests/fuzz/fuzz_util.h"
#include "tests/reference.h"

namespace {

struct Rng {
  uint64_t s;
  uint64_t Next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  float Value(float range) { return static_cast<float>((static_cast<double>(Next() >> 11) * 0x1p-52 - 1) * range); }
};

void SetMask(edgeattn_attention_desc* d, int kind) { std::memcpy(&d->mask, &kind, sizeof(kind)); }
int MaskOf(const edgeattn_attention_desc& d) {
  int kind;
  std::memcpy(&kind, &d.mask, sizeof(kind));
  return kind;
}
bool ScaleAndMaskValid(const edgeattn_attention_desc& d) {
  return d.scale >= 0.0f && !std::isinf(d.scale) &&
         (MaskOf(d) == EDGEATTN_MASK_NONE || MaskOf(d) == EDGEATTN_MASK_CAUSAL);
}

// The single call's status by the contract (edgeattn.h, attention.h): shape, then arguments, then the workspace
// (the harness's shapes never overflow a byte count, and its pointers are valid and apart).
edgeattn_status ExpectedUncached(const edgeattn_attention_desc& d, size_t workspace_size) {
  const size_t kv_heads = d.num_kv_heads == 0 ? d.num_heads : d.num_kv_heads;
  if (d.q_len == 0 || d.kv_len == 0 || d.head_dim == 0 || d.value_dim == 0 || d.num_heads == 0) {
    return EDGEATTN_ERROR_INVALID_SHAPE;
  }
  if (d.num_heads % kv_heads != 0 || !ScaleAndMaskValid(d)) return EDGEATTN_ERROR_INVALID_ARGUMENT;
  if (workspace_size < edgeattn::AttentionWorkspaceBytes(d.q_len, d.kv_len, d.head_dim, d.value_dim)) {
    return EDGEATTN_ERROR_WORKSPACE_TOO_SMALL;
  }
  return EDGEATTN_OK;
}

// Positions [*lo, *hi) that query i of a valid cached call sees (kv_cache.h, AttentionCached).
void Visible(const edgeattn_attention_desc& d, const edgeattn_kv_cache_desc& c, size_t length, size_t i, size_t* lo,
             size_t* hi) {
  if (MaskOf(d) == EDGEATTN_MASK_CAUSAL) {
    *hi = length - d.q_len + i + 1;
    *lo = c.window == 0 || *hi < c.window ? 0 : *hi - c.window;
  } else {
    *hi = length;
    *lo = c.window == 0 ? 0 : length - std::min(c.window, length);
  }
}

// The cached call's status by the contract (kv_cache.h): shape (an empty cache; with kCausal, more queries than
// positions, or a first visible position the ring no longer holds), then arguments (kv_len, widths and heads
// against the cache's, the scale and mask rules), then the workspace.
edgeattn_status ExpectedCached(const edgeattn_attention_desc& d, const edgeattn_kv_cache_desc& c, size_t length,
                               size_t workspace_size) {
  if (d.q_len == 0 || d.head_dim == 0 || d.value_dim == 0 || d.num_heads == 0 || length == 0) {
    return EDGEATTN_ERROR_INVALID_SHAPE;
  }
  const bool causal = MaskOf(d) == EDGEATTN_MASK_CAUSAL;
  if (causal && d.q_len > length) return EDGEATTN_ERROR_INVALID_SHAPE;
  if (causal || MaskOf(d) == EDGEATTN_MASK_NONE) {
    const size_t oldest = c.window != 0 && length > c.capacity ? length - c.capacity : 0;
    size_t lo, hi;
    Visible(d, c, length, 0, &lo, &hi);
    if (lo < oldest) return EDGEATTN_ERROR_INVALID_SHAPE;
  }
  const size_t kv_heads = d.num_kv_heads == 0 ? d.num_heads : d.num_kv_heads;
  if (d.kv_len != 0 || d.head_dim != c.head_dim || d.value_dim != c.value_dim || kv_heads != c.num_kv_heads ||
      d.num_heads % kv_heads != 0 || d.additive_mask != nullptr || !ScaleAndMaskValid(d)) {
    return EDGEATTN_ERROR_INVALID_ARGUMENT;
  }
  if (workspace_size < edgeattn::AttentionCachedWorkspaceBytes(d.q_len, d.num_heads, c.num_kv_heads, c.head_dim,
                                                               c.value_dim, c.capacity, c.window)) {
    return EDGEATTN_ERROR_WORKSPACE_TOO_SMALL;
  }
  return EDGEATTN_OK;
}

// A plain attention problem with the single call's answer, for tests/reference.h: the uncached call itself, or a
// cached call's visible positions as K and V (the values Read returns) with an additive mask of -inf outside each
// query's positions. Unused (use = false) where an input is not finite: the split's bits are still checked there.
struct Reference {
  bool use = false;
  edgeattn::AttentionDesc desc;
  const float* q = nullptr;
  std::vector<float> k, v, mask;
};

edgeattn::AttentionDesc CppDesc(const edgeattn_attention_desc& d) {
  edgeattn::AttentionDesc c;
  c.q_len = d.q_len;
  c.kv_len = d.kv_len;
  c.head_dim = d.head_dim;
  c.value_dim = d.value_dim;
  c.num_heads = d.num_heads;
  c.num_kv_heads = d.num_kv_heads;
  c.scale = d.scale;
  c.mask = MaskOf(d) == EDGEATTN_MASK_CAUSAL ? edgeattn::MaskKind::kCausal : edgeattn::MaskKind::kNone;
  c.additive_mask = d.additive_mask;
  return c;
}

bool AllFinite(const std::vector<float>& values) {
  return std::all_of(values.begin(), values.end(), [](float f) { return std::isfinite(f); });
}

void CheckAgainstReference(const Reference& ref, const std::vector<float>& single, const char* target,
                           const char* kind) {
  const edgeattn::AttentionDesc& d = ref.desc;
  const float* mask = ref.mask.empty() ? d.additive_mask : ref.mask.data();
  edgeattn::AttentionDesc with_mask = d;
  with_mask.additive_mask = mask;
  for (size_t i = 0; i < d.q_len; ++i) {
    for (size_t h = 0; h < d.num_heads; ++h) {
      const edgeattn_test::RefAttentionRow row =
          edgeattn_test::RefAttention(with_mask, ref.q, ref.k.data(), ref.v.data(), i, h);
      for (size_t c = 0; c < d.value_dim; ++c) {
        const float got = single[(i * d.num_heads + h) * d.value_dim + c];
        FUZZ_CHECK(std::fabs(static_cast<double>(got) - row.out[c]) <= row.bound[c],
                   "%s %s: out[%zu][%zu][%zu] = %a, reference %a, bound %g", target, kind, i, h, c, got, row.out[c],
                   row.bound[c]);
      }
    }
  }
}

std::vector<unsigned char> Garbage(Rng& rng, size_t n) {
  std::vector<unsigned char> b(n);
  for (unsigned char& c : b) c = static_cast<unsigned char>(rng.Next());
  return b;
}

// The calls of one split, uncached or cached, behind one interface.
struct Split {
  const edgeattn_attention_desc* d;
  const edgeattn_kv_cache* cache;  // null: uncached
  const float *q, *k, *v;
  size_t Count() const {
    return cache ? edgeattn_attention_cached_part_count(d, cache) : edgeattn_attention_part_count(d);
  }
  size_t Shared() const {
    return cache ? edgeattn_attention_cached_shared_size(d, cache) : edgeattn_attention_shared_size(d);
  }
  size_t Workspace() const {
    return cache ? edgeattn_attention_cached_workspace_size(d, cache) : edgeattn_attention_workspace_size(d);
  }
  edgeattn_status Single(float* out, void* ws, size_t ws_size) const {
    return cache ? edgeattn_attention_cached(d, q, cache, out, ws, ws_size)
                 : edgeattn_attention(d, q, k, v, out, ws, ws_size);
  }
  edgeattn_status Part(size_t part, float* out, void* shared, size_t shared_size, void* ws, size_t ws_size) const {
    return cache ? edgeattn_attention_cached_part(d, part, q, cache, out, shared, shared_size, ws, ws_size)
                 : edgeattn_attention_part(d, part, q, k, v, out, shared, shared_size, ws, ws_size);
  }
  edgeattn_status Finish(void* shared, size_t shared_size, float* out) const {
    return cache ? edgeattn_attention_cached_finish(d, cache, shared, shared_size, out)
                 : edgeattn_attention_finish(d, shared, shared_size, out);
  }
};

void Run(FuzzedDataProvider& data, const Split& split, size_t out_elems, Rng& rng, const char* target,
         const Reference& ref) {
  const char* kind = split.cache ? "cached" : "uncached";
  const size_t ws_need = split.Workspace();
  std::vector<unsigned char> ws(ws_need + 8);
  std::vector<float> single(out_elems + 1, 7.0f);
  const edgeattn_status s_single = split.Single(single.data(), ws.data(), ws_need);
  const edgeattn_status expected = split.cache
                                       ? ExpectedCached(*split.d, split.cache->desc, split.cache->length, ws_need)
                                       : ExpectedUncached(*split.d, ws_need);
  FUZZ_CHECK(s_single == expected, "%s %s: single call status %d, the contract says %d", target, kind, s_single,
             expected);
  if (s_single == EDGEATTN_OK && ref.use) CheckAgainstReference(ref, single, target, kind);
  const size_t count = split.Count(), shared_need = split.Shared();
  std::vector<float> out(out_elems + 1, 7.0f);
  std::vector<unsigned char> shared_buf = Garbage(rng, shared_need + 80);  // >= 64 + 8 for the refused call
  const size_t shared_off = data.ConsumeIntegralInRange<size_t>(0, 7);
  unsigned char* shared = shared_buf.data() + shared_off;

  if (s_single != EDGEATTN_OK) {
    // The split refuses what the single call refuses, with its status, and writes nothing.
    FUZZ_CHECK(count == 0 && shared_need == 0, "%s %s: invalid descriptor (status %d) but %zu parts, %zu shared bytes",
               target, kind, s_single, count, shared_need);
    const std::vector<unsigned char> before = shared_buf;
    const edgeattn_status s = split.Part(0, out.data(), shared, 64, ws.data(), ws.size());
    FUZZ_CHECK(s == s_single, "%s %s: part 0 of an invalid descriptor: status %d, single call %d", target, kind, s,
               s_single);
    FUZZ_CHECK(edgeattn_fuzz::SameBits(out, std::vector<float>(out_elems + 1, 7.0f)) && before == shared_buf,
               "%s %s: a refused part wrote", target, kind);
    return;
  }
  FUZZ_CHECK(count >= 1, "%s %s: part count 0 for a valid descriptor", target, kind);
  FUZZ_CHECK(single[out_elems] == 7.0f, "%s %s: single call wrote past out", target, kind);

  // Statuses of bad calls, each of which must write nothing.
  const std::vector<float> out_before = out;
  const std::vector<unsigned char> shared_before = shared_buf;
  auto unchanged = [&](const char* what, edgeattn_status s) {
    FUZZ_CHECK(edgeattn_fuzz::SameBits(out, out_before) && shared_buf == shared_before, "%s %s: %s (status %d) wrote",
               target, kind, what, s);
  };
  const int bad = data.ConsumeIntegralInRange<int>(0, 6);
  if (bad == 1) {
    const size_t part = data.PickValueInArray({count, count + 1, SIZE_MAX});
    const edgeattn_status s = split.Part(part, out.data(), shared, shared_need, ws.data(), ws_need);
    FUZZ_CHECK(s == EDGEATTN_ERROR_INVALID_ARGUMENT, "%s %s: part %zu of %zu: status %d", target, kind, part, count, s);
    unchanged("bad part index", s);
  } else if (bad == 2 && shared_need > 0) {
    const edgeattn_status s = split.Part(0, out.data(), shared, shared_need - 1, ws.data(), ws_need);
    FUZZ_CHECK(s == EDGEATTN_ERROR_WORKSPACE_TOO_SMALL, "%s %s: shared %zu of %zu: status %d", target, kind,
               shared_need - 1, shared_need, s);
    unchanged("short shared", s);
    const edgeattn_status f = split.Finish(shared, shared_need - 1, out.data());
    FUZZ_CHECK(f == EDGEATTN_ERROR_WORKSPACE_TOO_SMALL, "%s %s: finish with shared %zu of %zu: status %d", target, kind,
               shared_need - 1, shared_need, f);
    unchanged("finish with a short shared", f);
  } else if (bad == 3 && ws_need > 0) {
    const edgeattn_status s = split.Part(0, out.data(), shared, shared_need, ws.data(), ws_need - 1);
    FUZZ_CHECK(s == EDGEATTN_ERROR_WORKSPACE_TOO_SMALL, "%s %s: workspace %zu of %zu: status %d", target, kind,
               ws_need - 1, ws_need, s);
    unchanged("short workspace", s);
  } else if (bad == 4 && shared_need > 0) {
    const edgeattn_status s = split.Part(0, out.data(), nullptr, shared_need, ws.data(), ws_need);
    FUZZ_CHECK(s == EDGEATTN_ERROR_NULL_POINTER, "%s %s: NULL shared of %zu bytes: status %d", target, kind,
               shared_need, s);
    unchanged("NULL shared", s);
  } else if (bad == 5 && shared_need > 0 && out_elems * sizeof(float) > 8) {
    // shared overlapping out: both are outputs of the part.
    std::vector<unsigned char> both(shared_need + out_elems * sizeof(float) + 64);
    float* o = reinterpret_cast<float*>(both.data());
    const std::vector<unsigned char> both_before = both;
    const edgeattn_status s = split.Part(0, o, both.data() + 8, shared_need, ws.data(), ws_need);
    FUZZ_CHECK(s == EDGEATTN_ERROR_OVERLAP, "%s %s: shared overlapping out: status %d", target, kind, s);
    FUZZ_CHECK(both == both_before, "%s %s: overlapping shared (status %d) wrote", target, kind, s);
  } else if (bad == 6) {
    const edgeattn_status s = split.Part(0, nullptr, shared, shared_need, ws.data(), ws_need);
    FUZZ_CHECK(s == EDGEATTN_ERROR_NULL_POINTER, "%s %s: NULL out: status %d", target, kind, s);
    unchanged("NULL out", s);
  }

  // Every part in an order the input chooses, each with its own workspace of garbage (as another thread's).
  std::vector<size_t> order(count);
  for (size_t i = 0; i < count; ++i) order[i] = i;
  for (size_t i = count; i > 1; --i) std::swap(order[i - 1], order[data.ConsumeIntegralInRange<size_t>(0, i - 1)]);
  for (size_t part : order) {
    std::vector<unsigned char> own = Garbage(rng, ws_need + 8);
    const size_t off = rng.Next() % 8;
    const edgeattn_status s = split.Part(part, out.data(), shared_need == 0 && (rng.Next() & 1) ? nullptr : shared,
                                         shared_need, own.data() + off, ws_need);
    FUZZ_CHECK(s == EDGEATTN_OK, "%s %s: part %zu of %zu: status %d", target, kind, part, count, s);
  }
  const edgeattn_status f =
      split.Finish(shared_need == 0 && (rng.Next() & 1) ? nullptr : shared, shared_need, out.data());
  FUZZ_CHECK(f == EDGEATTN_OK, "%s %s: finish: status %d", target, kind, f);
  for (size_t i = 0; i < out_elems; ++i) {
    FUZZ_CHECK(std::memcmp(&out[i], &single[i], sizeof(float)) == 0,
               "%s %s: split out[%zu] = %a, single call %a (%zu parts, shared %zu)", target, kind, i, out[i], single[i],
               count, shared_need);
  }
  FUZZ_CHECK(out[out_elems] == 7.0f, "%s %s: the split wrote past out", target, kind);
}

void FuzzUncached(FuzzedDataProvider& data, Rng& rng, const char* target) {
  edgeattn_attention_desc d{};
  const bool long_keys = data.ConsumeIntegralInRange<int>(0, 3) == 0;
  d.q_len = data.ConsumeIntegralInRange<int>(0, 2) == 0 ? data.ConsumeIntegralInRange<size_t>(1, 70)
                                                        : data.ConsumeIntegralInRange<size_t>(1, 9);
  d.kv_len = long_keys ? data.ConsumeIntegralInRange<size_t>(513, 1600) : data.ConsumeIntegralInRange<size_t>(1, 40);
  d.head_dim = data.ConsumeIntegralInRange<size_t>(1, 24);
  d.value_dim = data.ConsumeIntegralInRange<size_t>(1, 24);
  const size_t kvh = data.ConsumeIntegralInRange<size_t>(1, 2);
  d.num_heads = kvh * data.ConsumeIntegralInRange<size_t>(1, 3);
  d.num_kv_heads = data.ConsumeBool() ? kvh : (d.num_heads == kvh ? 0 : kvh);
  d.scale = data.ConsumeBool() ? 0.0f : data.ConsumeFloatingPointInRange<float>(0.01f, 2.0f);
  SetMask(&d, data.ConsumeIntegralInRange<int>(0, 1));
  switch (data.ConsumeIntegralInRange<int>(0, 12)) {  // invalid descriptors
    case 0:
      d.q_len = 0;
      break;
    case 1:
      d.scale = -1.0f;
      break;
    case 2:
      SetMask(&d, 9);
      break;
    case 3:
      d.num_kv_heads = d.num_heads + 1;
      break;
    default:
      break;
  }
  const size_t kv_heads = d.num_kv_heads == 0 ? d.num_heads : d.num_kv_heads;
  const size_t q_n = std::max<size_t>(d.q_len * d.num_heads * d.head_dim, 1);
  std::vector<float> q(q_n), k(d.kv_len * kv_heads * d.head_dim + 1), v(d.kv_len * kv_heads * d.value_dim + 1);
  const float range = data.PickValueInArray({1.0f, 3.0f, 30.0f});
  for (float& f : q) f = rng.Value(range);
  for (float& f : k) f = rng.Value(range);
  for (float& f : v) f = rng.Value(3.0f);
  if (data.ConsumeIntegralInRange<int>(0, 15) == 0) v[rng.Next() % v.size()] = NAN;  // NaN/inf through partials
  if (data.ConsumeIntegralInRange<int>(0, 15) == 0) k[rng.Next() % k.size()] = INFINITY;
  std::vector<float> mask;
  if (data.ConsumeIntegralInRange<int>(0, 5) == 0 && d.q_len * d.kv_len <= 4096) {
    mask.resize(d.q_len * d.kv_len);
    for (float& f : mask) f = rng.Next() % 4 == 0 ? -INFINITY : rng.Value(2.0f);
    d.additive_mask = mask.data();
  }
  const Split split{&d, nullptr, q.data(), k.data(), v.data()};
  Reference ref;
  ref.use = AllFinite(k) && AllFinite(v);
  ref.desc = CppDesc(d);
  ref.q = q.data();
  ref.k = k;
  ref.v = v;
  Run(data, split, d.q_len * d.num_heads * d.value_dim, rng, target, ref);
}

// The positions a valid cached call sees, read back from the cache, as a plain problem (see Reference).
Reference CachedReference(const edgeattn_attention_desc& d, const edgeattn_kv_cache& cache, const float* q) {
  Reference ref;
  const edgeattn_kv_cache_desc& c = cache.desc;
  if (ExpectedCached(d, c, cache.length, SIZE_MAX) != EDGEATTN_OK) return ref;
  size_t first, unused;
  Visible(d, c, cache.length, 0, &first, &unused);
  const size_t n = cache.length - first, k_row = c.num_kv_heads * c.head_dim, v_row = c.num_kv_heads * c.value_dim;
  ref.k.resize(n * k_row);
  ref.v.resize(n * v_row);
  for (size_t j = 0; j < n; ++j) {
    FUZZ_CHECK(edgeattn_kv_cache_read(&cache, first + j, &ref.k[j * k_row], &ref.v[j * v_row]) == EDGEATTN_OK,
               "read position %zu", first + j);
  }
  ref.mask.assign(d.q_len * n, -INFINITY);
  for (size_t i = 0; i < d.q_len; ++i) {
    size_t lo, hi;
    Visible(d, c, cache.length, i, &lo, &hi);
    for (size_t p = lo; p < hi; ++p) ref.mask[i * n + (p - first)] = 0.0f;
  }
  ref.desc = CppDesc(d);
  ref.desc.kv_len = n;
  ref.desc.num_kv_heads = c.num_kv_heads;
  ref.desc.mask = edgeattn::MaskKind::kNone;
  ref.q = q;
  ref.use = true;
  return ref;
}

void FuzzCached(FuzzedDataProvider& data, Rng& rng, const char* target) {
  edgeattn_kv_cache_desc c{};
  const int type = data.ConsumeIntegralInRange<int>(0, 2);
  std::memcpy(&c.type, &type, sizeof(type));
  c.num_kv_heads = data.ConsumeIntegralInRange<size_t>(1, 2);
  c.head_dim = data.ConsumeIntegralInRange<size_t>(1, 20);
  c.value_dim = data.ConsumeIntegralInRange<size_t>(1, 20);
  c.capacity =
      data.ConsumeBool() ? data.ConsumeIntegralInRange<size_t>(1, 40) : data.ConsumeIntegralInRange<size_t>(513, 1400);
  c.window = data.ConsumeBool() ? 0 : data.ConsumeIntegralInRange<size_t>(1, c.capacity);
  std::vector<unsigned char> storage(edgeattn_kv_cache_storage_size(&c) + 7);
  edgeattn_kv_cache cache;
  const size_t off = data.ConsumeIntegralInRange<size_t>(0, 7);
  FUZZ_CHECK(edgeattn_kv_cache_init(&cache, &c, storage.data() + off, storage.size() - 7) == EDGEATTN_OK, "init");
  // Fill: a linear cache up to its capacity, a ring past it (so that it wraps), in a few appends.
  const size_t target_len = c.window == 0 ? data.ConsumeIntegralInRange<size_t>(0, c.capacity)
                                          : data.ConsumeIntegralInRange<size_t>(0, 2 * c.capacity + 3);
  const size_t k_row = c.num_kv_heads * c.head_dim, v_row = c.num_kv_heads * c.value_dim;
  while (cache.length < target_len) {
    const size_t n = std::min<size_t>(target_len - cache.length, 1 + rng.Next() % 300);
    std::vector<float> k(n * k_row), v(n * v_row);
    for (float& f : k) f = rng.Value(3.0f);
    for (float& f : v) f = rng.Value(3.0f);
    FUZZ_CHECK(edgeattn_kv_cache_append(&cache, k.data(), v.data(), n) == EDGEATTN_OK, "append");
  }
  edgeattn_attention_desc d{};
  d.q_len = data.ConsumeIntegralInRange<int>(0, 2) == 0 ? data.ConsumeIntegralInRange<size_t>(1, 40)
                                                        : data.ConsumeIntegralInRange<size_t>(1, 9);
  d.head_dim = c.head_dim;
  d.value_dim = c.value_dim;
  d.num_heads = c.num_kv_heads * data.ConsumeIntegralInRange<size_t>(1, 3);
  d.num_kv_heads = c.num_kv_heads;
  d.scale = data.ConsumeBool() ? 0.0f : data.ConsumeFloatingPointInRange<float>(0.01f, 2.0f);
  SetMask(&d, data.ConsumeIntegralInRange<int>(0, 1));
  switch (data.ConsumeIntegralInRange<int>(0, 12)) {  // invalid descriptors
    case 0:
      d.kv_len = 3;
      break;
    case 1:
      d.head_dim += 1;
      break;
    case 2:
      SetMask(&d, 4);
      break;
    default:
      break;
  }
  std::vector<float> q(std::max<size_t>(d.q_len * d.num_heads * d.head_dim, 1));
  for (float& f : q) f = rng.Value(3.0f);
  const Split split{&d, &cache, q.data(), nullptr, nullptr};
  Run(data, split, d.q_len * d.num_heads * d.value_dim, rng, target, CachedReference(d, cache, q.data()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  FuzzedDataProvider data(bytes, size);
  edgeattn_fuzz::FuzzTarget target(data);
  Rng rng{data.ConsumeIntegral<uint64_t>()};
  if (data.ConsumeBool()) {
    FuzzCached(data, rng, target.name());
  } else {
    FuzzUncached(data, rng, target.name());
  }
  return 0;
}
