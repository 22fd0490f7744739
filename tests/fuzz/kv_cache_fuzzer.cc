// SPDX-License-Identifier: Apache-2.0
// Fuzzes the KV cache through the C API (what outside code calls): random sequences of init (valid and invalid
// descriptors, short/exact/long storage at odd addresses), append (n = 0, past capacity, unstorable values, k or
// v inside the storage), truncate, read and attention_cached (random q_len, head layouts, masks, scales,
// workspace sizes, overlapping buffers), checked against a model the harness keeps itself:
//  - the stored values: F16 rounded to nearest even in double arithmetic here, Q8 with scale = max|row| / 127 and
//    q = round-to-nearest-even(x / scale) as kv_cache.h states, read back bit for bit;
//  - statuses from the contract (kv_cache.h / edgeattn.h), in its order;
//  - on any error the cache struct, every storage byte and the outputs are unchanged; on success nothing is
//    written outside the storage's KvCacheStorageSize bytes;
//  - attention (the dispatched path and the scalar path) against a double-precision reference over the stored
//    values with attention.h's bound, NaN rows where a visible score is NaN, and the header's promise that a
//    ring and a linear cache holding the same visible positions give the same bits.
#include <stdint.h>

#include "edgeattn/edgeattn.h"
#include "tests/fuzz/fuzz_util.h"
#include "tests/reference.h"

namespace {

using edgeattn_fuzz::FuzzTarget;

constexpr size_t kSlack = 4096;  // bytes after every storage (readable by k/v pointed into it, never written)
constexpr unsigned char kCanary = 0xA5;

// splitmix64: bulk values come from a generator seeded by the input, so large caches need few input bytes.
struct Rng {
  uint64_t s;
  uint64_t Next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1p-53; }
};

// regime 0: [-3, 3]; 1: [-3, 3] with specials sprinkled in; 2: up to the F16 limit and past it; 3: tiny values.
float GenValue(Rng& rng, int regime) {
  const double u = rng.Uniform();
  switch (regime) {
    case 1:
      if (rng.Next() % 24 == 0) {
        static const float kSpecial[] = {NAN,      INFINITY, -INFINITY, 0x1p-140f, -0x1p-149f, -0.0f,
                                         65519.0f, 65520.0f, -70000.0f, 0x1p-24f,  0x1p-25f,   3e38f};
        return kSpecial[rng.Next() % (sizeof(kSpecial) / sizeof(kSpecial[0]))];
      }
      return static_cast<float>(6 * u - 3);
    case 2:
      return static_cast<float>((2 * u - 1) * 66000);
    case 3:
      return static_cast<float>((2 * u - 1) * 0x1p-130);
    default:
      return static_cast<float>(6 * u - 3);
  }
}

// IEEE binary16 round to nearest even of a float with finite |x| < 65520 (as a float), subnormals kept:
// the quantum is 2^(e - 10) for |x| in [2^e, 2^(e+1)), e >= -14, and 2^-24 below 2^-14.
float RoundToHalf(float x) {
  if (std::isnan(x) || std::isinf(x) || x == 0.0f) return x;
  const double a = std::fabs(static_cast<double>(x));
  int e;
  std::frexp(a, &e);  // a in [2^(e-1), 2^e)
  const double quantum = std::ldexp(1.0, std::max(e - 1, -14) - 10);
  const double r = std::nearbyint(a / quantum) * quantum;  // a / quantum is exact; nearbyint rounds to even
  return static_cast<float>(std::copysign(r, static_cast<double>(x)));
}

bool HalfStorable(float x) { return !std::isfinite(x) || std::fabs(x) < 65520.0f; }

// Q8 as kv_cache.h states it: scale = max|row| / 127 (float division), q = round-to-nearest-even(x / scale)
// clamped to [-127, 127]; read back as q * scale (float product). A scale of 0 stores 0.
void QuantizeQ8(const float* x, size_t n, float* stored) {
  float max_abs = 0.0f;
  for (size_t i = 0; i < n; ++i) max_abs = std::max(max_abs, std::fabs(x[i]));
  const float scale = max_abs / 127.0f;
  for (size_t i = 0; i < n; ++i) {
    double q = 0.0;
    if (scale != 0.0f) {
      const float r = x[i] / scale;
      q = r > 127.0f ? 127.0 : r < -127.0f ? -127.0 : std::nearbyint(static_cast<double>(r));
    }
    stored[i] = static_cast<float>(static_cast<int>(q)) * scale;
    // The header's bound on the stored value, checked on this independent computation.
    FUZZ_CHECK(
        std::fabs(static_cast<double>(stored[i]) - x[i]) <= static_cast<double>(scale) / 2 * (1 + 0x1p-14) + 0x1p-126,
        "Q8 model: %a stored as %a (scale %a)", x[i], stored[i], scale);
  }
}

// The C enums hold out-of-range values here (invalid descriptors): C++ must not load them as enums.
template <typename E>
int Raw(const E& e) {
  static_assert(sizeof(E) == sizeof(int), "C enums are int-sized here");
  int v;
  std::memcpy(&v, &e, sizeof(v));
  return v;
}
template <typename E>
void SetRaw(E* e, int v) {
  std::memcpy(e, &v, sizeof(v));
}

size_t ElementBytes(int type) { return type == 0 ? 4 : type == 1 ? 2 : type == 2 ? 1 : 0; }

// a * b with overflow detection.
bool Mul(size_t a, size_t b, size_t* r) { return !__builtin_mul_overflow(a, b, r); }
bool Add(size_t a, size_t b, size_t* r) { return !__builtin_add_overflow(a, b, r); }

// The storage bytes kv_cache.h / edgeattn.h document, 0 if invalid or overflowing.
size_t StorageBytes(const edgeattn_kv_cache_desc& d) {
  const int type = Raw(d.type);
  if (ElementBytes(type) == 0 || d.num_kv_heads == 0 || d.head_dim == 0 || d.value_dim == 0 || d.capacity == 0 ||
      d.window > d.capacity) {
    return 0;
  }
  size_t width, per_head, per_pos, total;
  if (!Add(d.head_dim, d.value_dim, &width) || !Mul(width, ElementBytes(type), &per_head)) return 0;
  if (type == 2 && !Add(per_head, 8, &per_head)) return 0;
  if (!Mul(per_head, d.num_kv_heads, &per_pos) || !Mul(per_pos, d.capacity, &total) || !Add(total, 16, &total)) {
    return 0;
  }
  return total;
}

// A buffer with an arbitrary byte offset and canary bytes around what the library is told about.
struct Storage {
  std::vector<unsigned char> bytes;
  size_t offset = 0, size = 0;
  void Make(size_t off, size_t sz) {
    offset = off;
    size = sz;
    bytes.assign(off + sz + kSlack, kCanary);
  }
  unsigned char* data() { return bytes.data() + offset; }
  // A 4-byte aligned float pointer at least `at` bytes into the storage (float arrays must be 4-byte aligned).
  float* FloatAt(size_t at) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(data() + at);
    return reinterpret_cast<float*>(data() + at + (4 - a % 4) % 4);
  }
};

bool Overlaps(const void* a, size_t na, const void* b, size_t nb) {
  const uintptr_t x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return na != 0 && nb != 0 && x < y + nb && y < x + na;
}

// The harness's own model of one cache.
struct Model {
  bool valid = false;
  edgeattn_kv_cache_desc d{};
  size_t length = 0, first = 0;  // positions [first, length) are held
  size_t k_row = 0, v_row = 0;
  std::vector<float> k_stored, v_stored, k_orig, v_orig;  // [capacity][row], slot p % capacity

  void Reset(const edgeattn_kv_cache_desc& desc) {
    valid = true;
    d = desc;
    length = first = 0;
    k_row = d.num_kv_heads * d.head_dim;
    v_row = d.num_kv_heads * d.value_dim;
    k_stored.assign(d.capacity * k_row, 0.0f);
    v_stored.assign(d.capacity * v_row, 0.0f);
    k_orig = k_stored;
    v_orig = v_stored;
  }
  void StoreRow(const float* src, size_t heads, size_t width, float* stored) const {
    for (size_t g = 0; g < heads; ++g) {
      const float* x = src + g * width;
      float* s = stored + g * width;
      if (Raw(d.type) == EDGEATTN_KV_Q8) {
        QuantizeQ8(x, width, s);
      } else {
        for (size_t c = 0; c < width; ++c) s[c] = Raw(d.type) == EDGEATTN_KV_F16 ? RoundToHalf(x[c]) : x[c];
      }
    }
  }
  void Store(size_t position, const float* k, const float* v) {
    const size_t slot = position % d.capacity;
    StoreRow(k, d.num_kv_heads, d.head_dim, &k_stored[slot * k_row]);
    StoreRow(v, d.num_kv_heads, d.value_dim, &v_stored[slot * v_row]);
    std::copy(k, k + k_row, &k_orig[slot * k_row]);
    std::copy(v, v + v_row, &v_orig[slot * v_row]);
  }
  const float* K(size_t p) const { return &k_stored[(p % d.capacity) * k_row]; }
  const float* V(size_t p) const { return &v_stored[(p % d.capacity) * v_row]; }
  bool Storable(const float* x, size_t n) const {
    for (size_t i = 0; i < n; ++i) {
      if (Raw(d.type) == EDGEATTN_KV_F16 && !HalfStorable(x[i])) return false;
      if (Raw(d.type) == EDGEATTN_KV_Q8 && !std::isfinite(x[i])) return false;
    }
    return true;
  }
};

bool SameFloatBits(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  uint32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return x == y;
}

struct Harness {
  FuzzedDataProvider& data;
  const char* target;
  Model m;
  edgeattn_kv_cache cache{};
  Storage storage;
  int step = 0;

  // Snapshot of everything a failing call must leave alone.
  struct Snapshot {
    edgeattn_kv_cache cache;
    std::vector<unsigned char> storage;
  };
  Snapshot Take() const { return Snapshot{cache, storage.bytes}; }
  void ExpectUnchanged(const Snapshot& s, const char* what, int status) const {
    FUZZ_CHECK(std::memcmp(&s.cache, &cache, sizeof(cache)) == 0, "step %d %s (status %d): cache struct changed", step,
               what, status);
    FUZZ_CHECK(s.storage == storage.bytes, "step %d %s (status %d): storage changed", step, what, status);
  }
  // After a success: the bytes outside the documented storage are still canaries.
  void ExpectCanaries(const char* what) const {
    const size_t used = StorageBytes(m.d);
    for (size_t i = 0; i < storage.offset; ++i) {
      FUZZ_CHECK(storage.bytes[i] == kCanary, "step %d %s: byte %zu before the storage written", step, what, i);
    }
    for (size_t i = storage.offset + used; i < storage.bytes.size(); ++i) {
      FUZZ_CHECK(storage.bytes[i] == kCanary, "step %d %s: byte %zu past the storage's %zu written", step, what,
                 i - storage.offset, used);
    }
  }

  size_t SmallOrHuge(size_t lo, size_t hi, bool* huge, bool* large) {
    const int kind = data.ConsumeIntegralInRange<int>(0, 40);
    if (kind == 0) return 0;
    if (*huge || *large) return data.ConsumeIntegralInRange<size_t>(lo, hi);  // one extreme field per descriptor
    if (kind == 1) {
      *huge = true;
      return SIZE_MAX / data.ConsumeIntegralInRange<size_t>(1, 2);
    }
    if (kind == 2) {
      *large = true;
      return (size_t{1} << 32) + data.ConsumeIntegralInRange<size_t>(0, 1000);
    }
    return data.ConsumeIntegralInRange<size_t>(lo, hi);
  }

  void Init() {
    edgeattn_kv_cache_desc d{};
    const int type = data.ConsumeIntegralInRange<int>(-1, 8);
    SetRaw(&d.type, type <= 2 ? std::max(type, 0) : type == 3 ? 3 : type - 4);
    if (type == -1) SetRaw(&d.type, -1);
    bool huge = false, large = false;
    d.num_kv_heads = SmallOrHuge(1, 4, &huge, &large);
    d.head_dim = SmallOrHuge(1, 20, &huge, &large);
    d.value_dim = SmallOrHuge(1, 20, &huge, &large);
    const bool big_capacity = data.ConsumeIntegralInRange<int>(0, 15) == 0;
    d.capacity = SmallOrHuge(1, big_capacity ? 600 : 24, &huge, &large);
    // An overflowing field overflows every type's byte count: the others are at least 4 positions.
    if (huge && d.capacity != 0 && d.capacity < 4) d.capacity = 4;
    switch (data.ConsumeIntegralInRange<int>(0, 5)) {
      case 0:
      case 1:
      case 2:
        d.window = 0;
        break;
      case 3:
      case 4:
        d.window = d.capacity == 0 ? 0 : data.ConsumeIntegralInRange<size_t>(1, std::min<size_t>(d.capacity, 1000));
        break;
      default:
        d.window = d.capacity == SIZE_MAX ? SIZE_MAX : d.capacity + 1;  // invalid (unless it wrapped)
    }
    const int null_kind = data.ConsumeIntegralInRange<int>(0, 30);
    const bool any_zero = d.num_kv_heads == 0 || d.head_dim == 0 || d.value_dim == 0 || d.capacity == 0;
    const bool known_type = ElementBytes(Raw(d.type)) != 0;
    const size_t need = StorageBytes(d);
    const bool usable = !huge && !large && !any_zero;
    // Storage: short, exact or long, at an arbitrary offset; a dummy for shapes no buffer can hold.
    Storage next;
    const int size_kind = data.ConsumeIntegralInRange<int>(0, 7);
    size_t size = 64;
    if (usable && need != 0) size = size_kind == 0 ? need - 1 : size_kind == 1 ? need + 1 + size_kind * 7 : need;
    if (usable && need == 0 && known_type)
      size = StorageBytes(edgeattn_kv_cache_desc{d.type, d.num_kv_heads, d.head_dim, d.value_dim, d.capacity, 0});
    next.Make(data.ConsumeIntegralInRange<size_t>(0, 15), size);

    // The storage size function, against the formula above.
    FUZZ_CHECK(edgeattn_kv_cache_storage_size(&d) == (huge ? 0 : need),
               "storage_size(type %d heads %zu dk %zu dv %zu cap %zu window %zu) = %zu, expected %zu", Raw(d.type),
               d.num_kv_heads, d.head_dim, d.value_dim, d.capacity, d.window, edgeattn_kv_cache_storage_size(&d),
               huge ? 0 : need);
    FUZZ_CHECK(edgeattn_kv_cache_storage_size(nullptr) == 0, "storage_size(NULL)");

    edgeattn_status expected;
    if (null_kind <= 2) {
      expected = EDGEATTN_ERROR_NULL_POINTER;
    } else if (any_zero || huge) {
      expected = EDGEATTN_ERROR_INVALID_SHAPE;
    } else if (!known_type || d.window > d.capacity) {
      expected = EDGEATTN_ERROR_INVALID_ARGUMENT;
    } else if (next.size < need) {
      expected = EDGEATTN_ERROR_WORKSPACE_TOO_SMALL;
    } else {
      expected = EDGEATTN_OK;
    }
    const Snapshot before = Take();
    const std::vector<unsigned char> next_before = next.bytes;
    const edgeattn_status s = edgeattn_kv_cache_init(null_kind == 0 ? nullptr : &cache, null_kind == 1 ? nullptr : &d,
                                                     null_kind == 2 ? nullptr : next.data(), next.size);
    FUZZ_CHECK(s == expected,
               "step %d init(type %d heads %zu dk %zu dv %zu cap %zu window %zu, storage %zu of %zu, null %d): "
               "status %d, expected %d",
               step, Raw(d.type), d.num_kv_heads, d.head_dim, d.value_dim, d.capacity, d.window, next.size, need,
               null_kind, static_cast<int>(s), static_cast<int>(expected));
    if (s != EDGEATTN_OK) {
      ExpectUnchanged(before, "init", s);
      FUZZ_CHECK(next_before == next.bytes, "step %d init (status %d): the new storage was written", step, s);
      return;
    }
    storage = std::move(next);
    m.Reset(d);
    FUZZ_CHECK(cache.length == 0 && cache.storage == storage.data() && cache.storage_size == storage.size &&
                   std::memcmp(&cache.desc, &d, sizeof(d)) == 0,
               "step %d init: cache struct not as given", step);
    ExpectCanaries("init");
  }

  void Append() {
    const int n_kind = data.ConsumeIntegralInRange<int>(0, 9);
    size_t n;
    if (n_kind == 0) {
      n = 0;
    } else if (n_kind <= 6) {
      n = data.ConsumeIntegralInRange<size_t>(1, 4);
    } else {
      n = data.ConsumeIntegralInRange<size_t>(1, m.d.capacity + 3);  // up to and past capacity
    }
    const bool huge = data.ConsumeIntegralInRange<int>(0, 40) == 0;  // n whose byte count overflows
    const int regime = data.ConsumeIntegralInRange<int>(0, 7) < 5 ? 0 : data.ConsumeIntegralInRange<int>(1, 3);
    Rng rng{data.ConsumeIntegral<uint64_t>()};
    std::vector<float> k(std::max<size_t>(n * m.k_row, 1)), v(std::max<size_t>(n * m.v_row, 1));
    for (float& f : k) f = GenValue(rng, regime);
    for (float& f : v) f = GenValue(rng, regime);
    const int ptr_kind = data.ConsumeIntegralInRange<int>(0, 30);
    const float* kp = k.data();
    const float* vp = v.data();
    size_t nn = huge ? SIZE_MAX / 4 + data.ConsumeIntegralInRange<size_t>(1, 9) : n;
    if (ptr_kind == 0 && nn != 0) kp = nullptr;
    if (ptr_kind == 1 && nn != 0) vp = nullptr;
    if (ptr_kind == 2 && nn == 0) kp = vp = nullptr;  // allowed for n = 0
    // k or v inside the documented storage (one or two positions, readable thanks to the slack).
    const size_t used = StorageBytes(m.d);
    const size_t inside = data.ConsumeIntegralInRange<size_t>(0, used - 4);
    if (!huge && (ptr_kind == 3 || ptr_kind == 4)) {
      nn = n = std::min<size_t>(n, 2);
      const float* p = storage.FloatAt(inside);
      (ptr_kind == 3 ? kp : vp) = p;
    }

    edgeattn_status expected = EDGEATTN_OK;
    const size_t skip = m.d.window != 0 && nn > m.d.capacity ? nn - m.d.capacity : 0;
    size_t kb, vb;
    if (nn != 0 && (kp == nullptr || vp == nullptr)) {
      expected = EDGEATTN_ERROR_NULL_POINTER;
    } else if (!Mul(nn, m.k_row, &kb) || !Mul(kb, 4, &kb) || !Mul(nn, m.v_row, &vb) || !Mul(vb, 4, &vb) ||
               nn > SIZE_MAX - m.length) {
      expected = EDGEATTN_ERROR_INVALID_SHAPE;
    } else if (nn == 0) {
      expected = EDGEATTN_OK;
    } else {
      // The values that will be stored, read from wherever kp and vp point (possibly the storage itself).
      std::vector<float> kv((nn - skip) * m.k_row), vv((nn - skip) * m.v_row);
      std::memcpy(kv.data(), kp + skip * m.k_row, kv.size() * 4);
      std::memcpy(vv.data(), vp + skip * m.v_row, vv.size() * 4);
      if (!m.Storable(kv.data(), kv.size()) || !m.Storable(vv.data(), vv.size())) {
        expected = EDGEATTN_ERROR_INVALID_ARGUMENT;
      } else if (m.d.window == 0 && nn > m.d.capacity - m.length) {
        expected = EDGEATTN_ERROR_CAPACITY;
      } else if (Overlaps(kp, kb, storage.data(), used) || Overlaps(vp, vb, storage.data(), used)) {
        expected = EDGEATTN_ERROR_OVERLAP;
      }
    }
    const Snapshot before = Take();
    const edgeattn_status s = edgeattn_kv_cache_append(&cache, kp, vp, nn);
    FUZZ_CHECK(s == expected,
               "step %d append(n %zu, ptrs %d, regime %d) at length %zu/%zu window %zu type %d: status %d, "
               "expected %d",
               step, nn, ptr_kind, regime, m.length, m.d.capacity, m.d.window, Raw(m.d.type), static_cast<int>(s),
               static_cast<int>(expected));
    if (s != EDGEATTN_OK) {
      ExpectUnchanged(before, "append", s);
      return;
    }
    for (size_t j = skip; j < nn; ++j) m.Store(m.length + j, kp + j * m.k_row, vp + j * m.v_row);
    m.length += nn;
    if (m.length - m.first > m.d.capacity) m.first = m.length - m.d.capacity;
    FUZZ_CHECK(cache.length == m.length, "step %d append: length %zu, expected %zu", step, cache.length, m.length);
    ExpectCanaries("append");
  }

  void Truncate() {
    size_t len;
    switch (data.ConsumeIntegralInRange<int>(0, 4)) {
      case 0:
        len = m.length + data.ConsumeIntegralInRange<size_t>(1, 3);
        break;
      case 1:
        len = m.first > 0 ? m.first - data.ConsumeIntegralInRange<size_t>(1, m.first) : 0;
        break;
      default:
        len = data.ConsumeIntegralInRange<size_t>(m.first, m.length);
    }
    const bool null_cache = data.ConsumeIntegralInRange<int>(0, 30) == 0;
    const edgeattn_status expected = null_cache                        ? EDGEATTN_ERROR_NULL_POINTER
                                     : len > m.length || len < m.first ? EDGEATTN_ERROR_INVALID_ARGUMENT
                                                                       : EDGEATTN_OK;
    const Snapshot before = Take();
    const edgeattn_status s = edgeattn_kv_cache_truncate(null_cache ? nullptr : &cache, len);
    FUZZ_CHECK(s == expected, "step %d truncate(%zu) of [%zu, %zu): status %d, expected %d", step, len, m.first,
               m.length, static_cast<int>(s), static_cast<int>(expected));
    if (s != EDGEATTN_OK) {
      ExpectUnchanged(before, "truncate", s);
      return;
    }
    m.length = len;
    FUZZ_CHECK(cache.length == len, "step %d truncate: length %zu", step, cache.length);
    FUZZ_CHECK(before.storage == storage.bytes, "step %d truncate wrote the storage", step);
  }

  // Reads one position (valid or not) and compares with the model.
  void ReadOne(size_t p, int kind) {
    std::vector<float> k(m.k_row + m.v_row + 8, 7.0f), v(m.v_row + 8, 7.0f);
    float* kp = k.data();
    float* vp = v.data();
    if (kind == 1) kp = nullptr;
    if (kind == 2) vp = nullptr;
    if (kind == 3) vp = k.data() + m.k_row - 1;  // v overlaps k (k_row >= 1)
    if (kind == 4) kp = storage.FloatAt(4);      // k inside the storage
    edgeattn_status expected;
    if (kp == nullptr || vp == nullptr) {
      expected = EDGEATTN_ERROR_NULL_POINTER;
    } else if (p < m.first || p >= m.length) {
      expected = EDGEATTN_ERROR_INVALID_ARGUMENT;
    } else if (kind == 3 || kind == 4) {
      expected = EDGEATTN_ERROR_OVERLAP;
    } else {
      expected = EDGEATTN_OK;
    }
    const Snapshot before = Take();
    const std::vector<float> k_before = k, v_before = v;
    const edgeattn_status s = edgeattn_kv_cache_read(&cache, p, kp, vp);
    FUZZ_CHECK(s == expected, "step %d read(%zu, kind %d) of [%zu, %zu): status %d, expected %d", step, p, kind,
               m.first, m.length, static_cast<int>(s), static_cast<int>(expected));
    ExpectUnchanged(before, "read", s);
    if (s != EDGEATTN_OK) {
      FUZZ_CHECK(edgeattn_fuzz::SameBits(k, k_before) && edgeattn_fuzz::SameBits(v, v_before),
                 "step %d read (status %d) wrote its outputs", step, s);
      return;
    }
    for (size_t e = 0; e < m.k_row; ++e) {
      FUZZ_CHECK(SameFloatBits(k[e], m.K(p)[e]), "step %d read(%zu) type %d: k[%zu] = %a, expected %a (from %a)", step,
                 p, Raw(m.d.type), e, k[e], m.K(p)[e], m.k_orig[(p % m.d.capacity) * m.k_row + e]);
    }
    for (size_t e = 0; e < m.v_row; ++e) {
      FUZZ_CHECK(SameFloatBits(v[e], m.V(p)[e]), "step %d read(%zu) type %d: v[%zu] = %a, expected %a (from %a)", step,
                 p, Raw(m.d.type), e, v[e], m.V(p)[e], m.v_orig[(p % m.d.capacity) * m.v_row + e]);
    }
    FUZZ_CHECK(v[m.v_row] == 7.0f && k[m.k_row] == 7.0f, "step %d read wrote past its rows", step);
  }

  void Read() {
    const int kind = data.ConsumeIntegralInRange<int>(0, 12);
    size_t p;
    switch (data.ConsumeIntegralInRange<int>(0, 5)) {
      case 0:
        p = m.length + data.ConsumeIntegralInRange<size_t>(0, 2);
        break;
      case 1:
        p = m.first > 0 ? data.ConsumeIntegralInRange<size_t>(0, m.first - 1) : SIZE_MAX;
        break;
      default:
        p = m.length > m.first ? data.ConsumeIntegralInRange<size_t>(m.first, m.length - 1) : m.length;
    }
    ReadOne(p, kind <= 4 ? kind : 0);
  }

  void ReadAll() {
    for (size_t p = m.first; p < m.length; ++p) ReadOne(p, 0);
  }

  // Positions query i sees: [lo, hi).
  void Visible(const edgeattn_attention_desc& d, size_t i, size_t* lo, size_t* hi) const {
    const size_t w = m.d.window;
    if (Raw(d.mask) == EDGEATTN_MASK_CAUSAL) {
      const size_t p = m.length - d.q_len + i;
      *hi = p + 1;
      *lo = w != 0 && p + 1 > w ? p + 1 - w : 0;
    } else {
      *hi = m.length;
      *lo = w != 0 && m.length > w ? m.length - w : 0;
    }
  }

  void CheckAgainstReference(const edgeattn_attention_desc& d, const std::vector<float>& q,
                             const std::vector<float>& out, const char* path) const {
    const size_t group = d.num_heads / m.d.num_kv_heads;
    const size_t hd = m.d.head_dim, vd = m.d.value_dim, kvh = m.d.num_kv_heads;
    for (size_t i = 0; i < d.q_len; ++i) {
      size_t lo, hi;
      Visible(d, i, &lo, &hi);
      const size_t count = hi - lo;
      std::vector<float> k(count * m.k_row), v(count * m.v_row);
      for (size_t p = lo; p < hi; ++p) {
        std::copy(m.K(p), m.K(p) + m.k_row, &k[(p - lo) * m.k_row]);
        std::copy(m.V(p), m.V(p) + m.v_row, &v[(p - lo) * m.v_row]);
      }
      edgeattn::AttentionDesc rd;
      rd.q_len = 1;
      rd.kv_len = count;
      rd.head_dim = hd;
      rd.value_dim = vd;
      rd.num_heads = d.num_heads;
      rd.num_kv_heads = kvh;
      rd.scale = d.scale;
      const float* qi = &q[i * d.num_heads * hd];
      for (size_t h = 0; h < d.num_heads; ++h) {
        const size_t g = h / group;
        const float* orow = &out[(i * d.num_heads + h) * vd];
        bool nan_score = false, clean = true;
        double max_mag = 0;
        for (size_t t = 0; t < hd; ++t) {
          nan_score |= std::isnan(qi[h * hd + t]);
          clean &= std::isfinite(qi[h * hd + t]);
        }
        for (size_t j = 0; j < count; ++j) {
          double mag = 0;
          for (size_t t = 0; t < hd; ++t) {
            const float kv = k[(j * kvh + g) * hd + t];
            nan_score |= std::isnan(kv);
            clean &= std::isfinite(kv);
            mag += std::fabs(static_cast<double>(qi[h * hd + t]) * kv);
          }
          max_mag = std::max(max_mag, mag);
          for (size_t c = 0; c < vd; ++c) clean &= std::fabs(v[(j * kvh + g) * vd + c]) <= 1e30f;
        }
        if (nan_score) {
          for (size_t c = 0; c < vd; ++c) {
            FUZZ_CHECK(std::isnan(orow[c]), "step %d %s: row (%zu, %zu) sees a NaN score but out[%zu] = %a", step, path,
                       i, h, c, orow[c]);
          }
          continue;
        }
        if (!clean || !(max_mag * 4 <= 1e30)) continue;  // IEEE arithmetic on inf/huge: no bound to check
        const edgeattn_test::RefAttentionRow ref = edgeattn_test::RefAttention(rd, qi, k.data(), v.data(), 0, h);
        // ref.bound has attention.h's (|J| + 1) * 2^-149 term (gradual underflow of the output itself, which the
        // FLT_MIN term scaled by |v| does not cover), added after this harness found it missing (tests/README.md).
        for (size_t c = 0; c < vd; ++c) {
          FUZZ_CHECK(std::fabs(orow[c] - ref.out[c]) <= ref.bound[c],
                     "step %d %s type %d: out[%zu][%zu][%zu] = %a, exact %a, bound %g (keys %zu..%zu, window %zu)",
                     step, path, Raw(m.d.type), i, h, c, orow[c], ref.out[c], ref.bound[c], lo, hi, m.d.window);
        }
      }
    }
  }

  void Attention() {
    edgeattn_attention_desc d{};
    const bool huge = data.ConsumeIntegralInRange<int>(0, 40) == 0;
    d.q_len = huge                                           ? SIZE_MAX / data.ConsumeIntegralInRange<size_t>(1, 3)
              : data.ConsumeIntegralInRange<int>(0, 30) == 0 ? 0
                                                             : data.ConsumeIntegralInRange<size_t>(1, 12);
    const size_t kvh = m.d.num_kv_heads;
    switch (data.ConsumeIntegralInRange<int>(0, 9)) {
      case 0:  // arbitrary head counts (mismatches, zero)
        d.num_heads = data.ConsumeIntegralInRange<size_t>(0, 8);
        d.num_kv_heads = data.ConsumeIntegralInRange<size_t>(0, 5);
        break;
      case 1:
      case 2:
        d.num_heads = kvh;
        d.num_kv_heads = 0;
        break;
      default:
        d.num_heads = kvh * data.ConsumeIntegralInRange<size_t>(1, 4);
        d.num_kv_heads = kvh;
    }
    d.head_dim = m.d.head_dim;
    d.value_dim = m.d.value_dim;
    switch (data.ConsumeIntegralInRange<int>(0, 30)) {
      case 0:
        d.head_dim = data.ConsumeIntegralInRange<size_t>(0, 21);
        break;
      case 1:
        d.value_dim = data.ConsumeIntegralInRange<size_t>(0, 21);
        break;
      case 2:
        d.kv_len = data.ConsumeIntegralInRange<size_t>(1, 5);
        break;
      default:
        break;
    }
    switch (data.ConsumeIntegralInRange<int>(0, 12)) {
      case 0:
        d.scale = -0.25f;
        break;
      case 1:
        d.scale = data.ConsumeBool() ? NAN : INFINITY;
        break;
      case 2:
      case 3:
      case 4:
        d.scale = data.ConsumeFloatingPointInRange<float>(0.01f, 2.0f);
        break;
      default:
        d.scale = 0.0f;
    }
    const int mask = data.ConsumeIntegralInRange<int>(0, 24);
    SetRaw(&d.mask, mask < 12 ? 0 : mask < 24 ? 1 : 2 + data.ConsumeIntegralInRange<int>(0, 5));
    std::vector<float> additive(4, 0.0f);
    if (data.ConsumeIntegralInRange<int>(0, 30) == 0) d.additive_mask = additive.data();
    const int null_kind = data.ConsumeIntegralInRange<int>(0, 40);     // 0 desc, 1 cache, 2 q, 3 out, 4 workspace
    const int overlap_kind = data.ConsumeIntegralInRange<int>(0, 30);  // 1..5: one of the overlaps below
    const int ws_kind = data.ConsumeIntegralInRange<int>(0, 9);
    const int q_regime = data.ConsumeIntegralInRange<int>(0, 7) < 6 ? 0 : 1;
    Rng rng{data.ConsumeIntegral<uint64_t>()};

    // The expected status, from the contract.
    const bool known_mask = Raw(d.mask) == EDGEATTN_MASK_NONE || Raw(d.mask) == EDGEATTN_MASK_CAUSAL;
    const size_t dkvh = d.num_kv_heads == 0 ? d.num_heads : d.num_kv_heads;
    size_t q_elems = 0, out_elems = 0, tmp;
    const bool fits = Mul(d.q_len, d.num_heads, &tmp) && Mul(tmp, d.head_dim, &q_elems) && Mul(q_elems, 4, &tmp) &&
                      Mul(d.q_len, d.num_heads, &tmp) && Mul(tmp, d.value_dim, &out_elems) && Mul(out_elems, 4, &tmp);
    const size_t need = edgeattn::AttentionCachedWorkspaceBytes(d.q_len, d.num_heads, kvh, m.d.head_dim, m.d.value_dim,
                                                                m.d.capacity, m.d.window);
    const bool usable = !huge && fits && d.q_len != 0 && d.num_heads != 0 && d.head_dim != 0 && d.value_dim != 0;
    bool shape = !usable;
    if (!shape && d.num_heads % kvh == 0 && need == 0) shape = true;  // an overflowing workspace count
    if (!shape && m.length == 0) shape = true;                        // an empty cache, whatever the mask kind
    if (!shape && known_mask) {
      if (Raw(d.mask) == EDGEATTN_MASK_CAUSAL && d.q_len > m.length) {
        shape = true;
      } else {
        size_t lo, hi;
        Visible(d, 0, &lo, &hi);
        shape = lo < m.first;
      }
    }
    const bool argument = d.kv_len != 0 || d.head_dim != m.d.head_dim || d.value_dim != m.d.value_dim || dkvh != kvh ||
                          d.num_heads % kvh != 0 || d.additive_mask != nullptr || !(d.scale >= 0.0f) ||
                          std::isinf(d.scale) || !known_mask;
    // Buffers (a dummy for shapes no buffer can hold; a correct library never touches it).
    std::vector<float> q(usable ? q_elems + out_elems + 1 : 8);
    for (float& f : q) f = GenValue(rng, q_regime);
    std::vector<float> out(usable ? out_elems + 1 : 8, 7.0f);
    const size_t ws_size = ws_kind == 0 && need > 0 ? need - 1 : ws_kind == 1 ? need + 13 : need;
    std::vector<unsigned char> ws(ws_size + 64);
    const size_t ws_off = overlap_kind == 5 ? 0 : data.ConsumeIntegralInRange<size_t>(0, 7);
    void* wsp = ws.data() + ws_off;
    float* outp = out.data();
    const float* qp = q.data();
    const size_t used = StorageBytes(m.d);
    // Overlaps, each unambiguous (inside the first bytes of both ranges).
    switch (overlap_kind) {
      case 1:
        outp = q.data();  // out == q: not an allowed alias here
        break;
      case 2:
        outp = storage.FloatAt(16);
        break;
      case 3:
        if (need > 64) wsp = q.data();
        break;
      case 4:
        wsp = storage.data() + 17;
        break;
      case 5:
        if (need > 64) outp = reinterpret_cast<float*>(ws.data() + 8);
        break;
      default:
        break;
    }
    const bool overlap = (overlap_kind == 1 || overlap_kind == 2 || overlap_kind == 4 ||
                          ((overlap_kind == 3 || overlap_kind == 5) && need > 64));
    (void)used;
    if (null_kind == 2) qp = nullptr;
    if (null_kind == 3) outp = nullptr;
    if (null_kind == 4) wsp = nullptr;

    edgeattn_status expected;
    if (null_kind <= 3) {
      expected = EDGEATTN_ERROR_NULL_POINTER;
    } else if (shape) {
      expected = EDGEATTN_ERROR_INVALID_SHAPE;
    } else if (argument) {
      expected = EDGEATTN_ERROR_INVALID_ARGUMENT;
    } else if (ws_size < need) {
      expected = EDGEATTN_ERROR_WORKSPACE_TOO_SMALL;
    } else if (wsp == nullptr) {
      expected = EDGEATTN_ERROR_NULL_POINTER;
    } else if (overlap) {
      expected = EDGEATTN_ERROR_OVERLAP;
    } else {
      expected = EDGEATTN_OK;
    }
    // The workspace size functions: the constexpr count for a valid call, 0 for an invalid descriptor.
    if (!shape && !argument) {
      FUZZ_CHECK(edgeattn_attention_cached_workspace_size(&d, &cache) == need,
                 "step %d workspace_size %zu, expected %zu", step, edgeattn_attention_cached_workspace_size(&d, &cache),
                 need);
    }
    if (!usable || argument) {
      FUZZ_CHECK(edgeattn_attention_cached_workspace_size(&d, &cache) == 0,
                 "step %d workspace_size of an invalid "
                 "descriptor is %zu",
                 step, edgeattn_attention_cached_workspace_size(&d, &cache));
    }
    FUZZ_CHECK(edgeattn_attention_cached_workspace_size(nullptr, &cache) == 0 &&
                   edgeattn_attention_cached_workspace_size(&d, nullptr) == 0,
               "step %d workspace_size with NULL", step);

    edgeattn::AttentionDesc cd;  // the same call through the C++ scalar path
    cd.q_len = d.q_len;
    cd.kv_len = d.kv_len;
    cd.head_dim = d.head_dim;
    cd.value_dim = d.value_dim;
    cd.num_heads = d.num_heads;
    cd.num_kv_heads = d.num_kv_heads;
    cd.scale = d.scale;
    cd.mask = static_cast<edgeattn::MaskKind>(Raw(d.mask));
    cd.additive_mask = d.additive_mask;
    const edgeattn::KvCache view(edgeattn::internal::KvCacheState{
        edgeattn::KvCacheDesc{static_cast<edgeattn::KvType>(Raw(m.d.type)), m.d.num_kv_heads, m.d.head_dim,
                              m.d.value_dim, m.d.capacity, m.d.window},
        cache.storage, cache.storage_size, cache.length});

    std::vector<float> results[2];
    for (int path = 0; path < 2; ++path) {
      const char* name = path == 0 ? target : "scalar path";
      std::fill(out.begin(), out.end(), 7.0f);
      const Snapshot before = Take();
      const std::vector<float> q_before = q;
      const std::vector<float> out_before = out;
      const edgeattn_status s =
          path == 0 ? edgeattn_attention_cached(null_kind == 0 ? nullptr : &d, qp, null_kind == 1 ? nullptr : &cache,
                                                outp, wsp, ws_size)
          : null_kind <= 1
              ? expected
              : static_cast<edgeattn_status>(edgeattn::scalar::AttentionCached(cd, qp, view, outp, wsp, ws_size));
      FUZZ_CHECK(s == expected,
                 "step %d %s attention_cached(q_len %zu heads %zu/%zu dk %zu dv %zu kv_len %zu scale %g mask %d "
                 "add %d null %d overlap %d ws %zu of %zu) on [%zu, %zu) cap %zu window %zu: status %d, expected %d",
                 step, name, d.q_len, d.num_heads, d.num_kv_heads, d.head_dim, d.value_dim, d.kv_len,
                 static_cast<double>(d.scale), Raw(d.mask), d.additive_mask != nullptr, null_kind, overlap_kind,
                 ws_size, need, m.first, m.length, m.d.capacity, m.d.window, static_cast<int>(s),
                 static_cast<int>(expected));
      ExpectUnchanged(before, "attention_cached", s);
      FUZZ_CHECK(edgeattn_fuzz::SameBits(q, q_before), "step %d %s: q written", step, name);
      if (s != EDGEATTN_OK) {
        FUZZ_CHECK(edgeattn_fuzz::SameBits(out, out_before), "step %d %s (status %d): out written", step, name, s);
        continue;
      }
      FUZZ_CHECK(out[out_elems] == 7.0f, "step %d %s: written past out", step, name);
      CheckAgainstReference(d, q, out, name);
      results[path].assign(out.begin(), out.begin() + static_cast<ptrdiff_t>(out_elems));
    }
    if (expected == EDGEATTN_OK && Raw(d.mask) == EDGEATTN_MASK_NONE && m.d.window != 0)
      RingEqualsLinear(d, q, results);
  }

  // kv_cache.h: a ring and a linear cache that hold the same visible positions give bit-identical outputs.
  void RingEqualsLinear(const edgeattn_attention_desc& d, const std::vector<float>& q,
                        const std::vector<float> (&ring)[2]) const {
    size_t lo, hi;
    Visible(d, 0, &lo, &hi);
    edgeattn_kv_cache_desc ld = m.d;
    ld.capacity = hi - lo;
    ld.window = 0;
    std::vector<unsigned char> st(StorageBytes(ld));
    edgeattn_kv_cache lin;
    FUZZ_CHECK(edgeattn_kv_cache_init(&lin, &ld, st.data(), st.size()) == EDGEATTN_OK, "linear copy: init");
    for (size_t p = lo; p < hi; ++p) {
      FUZZ_CHECK(edgeattn_kv_cache_append(&lin, &m.k_orig[(p % m.d.capacity) * m.k_row],
                                          &m.v_orig[(p % m.d.capacity) * m.v_row], 1) == EDGEATTN_OK,
                 "linear copy: append");
    }
    const size_t need = edgeattn::AttentionCachedWorkspaceBytes(d.q_len, d.num_heads, ld.num_kv_heads, ld.head_dim,
                                                                ld.value_dim, ld.capacity, 0);
    std::vector<unsigned char> ws(need);
    std::vector<float> out(ring[0].size());
    FUZZ_CHECK(edgeattn_attention_cached(&d, q.data(), &lin, out.data(), ws.data(), need) == EDGEATTN_OK,
               "linear copy: attention");
    // The SIMD path reads F32 storage in registers only at 4-byte-aligned addresses, so the ring and its copy may
    // take different paths: NaN outputs then only have to be NaN in both (kv_cache.h).
    FUZZ_CHECK(edgeattn_fuzz::SameBitsOrBothNaN(out, ring[0]),
               "step %d %s: ring [%zu, %zu) of capacity %zu window %zu and "
               "its linear copy differ",
               step, target, lo, hi, m.d.capacity, m.d.window);
    edgeattn::AttentionDesc cd;
    cd.q_len = d.q_len;
    cd.head_dim = d.head_dim;
    cd.value_dim = d.value_dim;
    cd.num_heads = d.num_heads;
    cd.num_kv_heads = d.num_kv_heads;
    cd.scale = d.scale;
    const edgeattn::KvCache view(edgeattn::internal::KvCacheState{
        edgeattn::KvCacheDesc{static_cast<edgeattn::KvType>(Raw(ld.type)), ld.num_kv_heads, ld.head_dim, ld.value_dim,
                              ld.capacity, 0},
        lin.storage, lin.storage_size, lin.length});
    FUZZ_CHECK(
        edgeattn::scalar::AttentionCached(cd, q.data(), view, out.data(), ws.data(), need) == edgeattn::Status::kOk,
        "linear copy: scalar attention");
    FUZZ_CHECK(edgeattn_fuzz::SameBits(out, ring[1]),
               "step %d scalar path: ring [%zu, %zu) of capacity %zu window "
               "%zu and its linear copy differ",
               step, lo, hi, m.d.capacity, m.d.window);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  FuzzedDataProvider data(bytes, size);
  FuzzTarget target(data);
  Harness h{data, target.name(), Model{}, edgeattn_kv_cache{}, Storage{}, 0};
  for (h.step = 0; h.step < 32 && data.remaining_bytes() > 0; ++h.step) {
    const int op = h.m.valid ? data.ConsumeIntegralInRange<int>(0, 11) : 0;
    switch (op) {
      case 0:
        h.Init();
        break;
      case 1:
      case 2:
      case 3:
      case 4:
        h.Append();
        break;
      case 5:
        h.Truncate();
        break;
      case 6:
        h.Read();
        break;
      case 7:
        h.ReadAll();
        break;
      default:
        h.Attention();
    }
  }
  if (h.m.valid) h.ReadAll();
  return 0;
}
