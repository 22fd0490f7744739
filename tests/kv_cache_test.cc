// SPDX-License-Identifier: Apache-2.0
// KV cache: the f16 and int8 storage roundings against independent references, every status rule (an error
// changes nothing: length, storage bytes, outputs), ring and linear caches bit-identical, the F32 cache against
// Attention, grouped-query attention, and whole decode loops against a float64 reference built from the stored
// values, on every path.
#include "edgeattn/kv_cache.h"

#include <gtest/gtest.h>
#include <stdint.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "edgeattn/edgeattn.h"
#include "hwy/targets.h"
#include "lib/common/backend.h"
#include "lib/kv_cache/kv_cache_storage.h"
#include "lib/kv_cache/kv_route.h"
#include "tests/fp_env.h"
#include "tests/half_reference.h"
#include "tests/reference.h"
#include "tests/test_util.h"

namespace edgeattn_test {
namespace {

using edgeattn::AttentionDesc;
using edgeattn::KvCache;
using edgeattn::KvCacheDesc;
using edgeattn::KvType;
using edgeattn::MaskKind;

TEST(KvCacheHalf, EveryHalfConvertsBackExactly) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = edgeattn::internal::HalfBitsToFloat(static_cast<uint16_t>(h));
    const double want = RefHalfValue(static_cast<uint16_t>(h));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(f)) << h;
      continue;
    }
    ASSERT_EQ(static_cast<double>(f), want) << h;
    ASSERT_EQ(std::signbit(f), std::signbit(want)) << h;
    // And back: every half is a float, so it converts to itself (NaN payloads aside).
    ASSERT_EQ(edgeattn::internal::FloatToHalfBits(f), h) << h;
  }
}

// The same bits in every floating-point environment the caller may have set: the rounding mode and flush-to-zero
// (a subnormal half is a normal float) and, on Arm, AHP, which Cortex-M's VCVTB reads (lib/common/f16.h).
TEST(KvCacheHalf, EveryHalfConvertsBackTheSameInEveryFpEnvironment) {
  std::vector<float> want(65536), got(65536);
  for (uint32_t h = 0; h < 65536; ++h) want[h] = edgeattn::internal::HalfBitsToFloat(static_cast<uint16_t>(h));
  std::vector<std::string> names;
  std::vector<uint64_t> controls;
  for (int mode = kToNearest; mode <= kTowardZero; ++mode) {
    for (bool ftz : {false, true}) {
      const FpEnv env{static_cast<Rounding>(mode), ftz, false};
      names.push_back(env.Name());
      controls.push_back(ControlFor(ReadControl(), env));
#if EDGEATTN_FP_CONTROL_ARM
      names.push_back(env.Name() + "+AHP");
      controls.push_back(ControlFor(ReadControl(), env) | kAlternativeHalfBit);
#endif
    }
  }
  for (size_t e = 0; e < controls.size(); ++e) {
    const uint64_t saved = ReadControl();
    WriteControl(controls[e]);
    for (uint32_t h = 0; h < 65536; ++h) got[h] = edgeattn::internal::HalfBitsToFloat(static_cast<uint16_t>(h));
    WriteControl(saved);
    for (uint32_t h = 0; h < 65536; ++h) ASSERT_EQ(Bits(got[h]), Bits(want[h])) << names[e] << " half " << h;
  }
}

// A dense sample of all 2^32 floats (every 65537th pattern, which walks through every exponent and low-bit
// pattern) plus every float within 3 patterns of each half and each midpoint between halves (the ties and their
// neighbours, where rounding decides). The exhaustive
// run over all 2^32 floats is in kv_cache_exhaustive_test.cc (label long).
TEST(KvCacheHalf, FloatToHalfRoundsToNearestEven) {
  size_t checked = 0;
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 65537) {
    float x;
    const uint32_t b = static_cast<uint32_t>(bits);
    std::memcpy(&x, &b, sizeof(x));
    ASSERT_TRUE(SameHalf(x, edgeattn::internal::FloatToHalfBits(x))) << std::hex << b;
    ++checked;
  }
  for (uint32_t h = 0; h < 0x7C00; ++h) {
    for (int side = 0; side < 2; ++side) {
      // The half itself and the midpoint to the next one, as float bit patterns (the midpoint is a float:
      // 11 significant bits + 1).
      const double center =
          side == 0 ? RefHalfValue(static_cast<uint16_t>(h))
                    : (RefHalfValue(static_cast<uint16_t>(h)) + RefHalfValue(static_cast<uint16_t>(h + 1))) / 2;
      const float c = static_cast<float>(center);
      ASSERT_EQ(static_cast<double>(c), center);
      uint32_t cb;
      std::memcpy(&cb, &c, sizeof(cb));
      for (int d = -3; d <= 3; ++d) {
        for (uint32_t sign : {0u, 0x80000000u}) {
          const uint32_t b = (static_cast<uint32_t>(static_cast<int64_t>(cb) + d) & 0x7FFFFFFFu) | sign;
          float x;
          std::memcpy(&x, &b, sizeof(x));
          ASSERT_TRUE(SameHalf(x, edgeattn::internal::FloatToHalfBits(x))) << std::hex << b;
          ++checked;
        }
      }
    }
  }
  RecordProperty("checked", std::to_string(checked));
}

// Q8's integer rounding is to nearest even in every rounding mode the caller may have set (it does not use the
// mode-dependent magic-number addition); references from nearbyint in the default mode.
TEST(KvCacheQ8, RoundingToNearestEvenInEveryMode) {
  std::vector<float> x;
  for (int i = -1300; i <= 1300; ++i) x.push_back(static_cast<float>(i) * 0.1f);
  for (int i = -255; i <= 255; ++i) {
    x.push_back(static_cast<float>(i) * 0.5f);  // every tie
    x.push_back(std::nextafter(static_cast<float>(i) * 0.5f, 1000.0f));
    x.push_back(std::nextafter(static_cast<float>(i) * 0.5f, -1000.0f));
  }
  std::vector<float> expected(x.size());
  for (size_t i = 0; i < x.size(); ++i) expected[i] = std::nearbyint(x[i]);
  for (int mode = kToNearest; mode <= kTowardZero; ++mode) {
    std::vector<float> got(x.size());
    {
      ScopedFpEnv env(FpEnv{static_cast<Rounding>(mode), false, false});
      for (size_t i = 0; i < x.size(); ++i) got[i] = edgeattn::internal::RoundToNearestEven(x[i]);
    }
    for (size_t i = 0; i < x.size(); ++i) {
      ASSERT_EQ(Bits(got[i] + 0.0f), Bits(expected[i] + 0.0f)) << kRoundingNames[mode] << " x = " << x[i];
    }
  }
}

// ---- Caches in test buffers ----

KvCacheDesc MakeCacheDesc(KvType type, size_t heads, size_t dk, size_t dv, size_t capacity, size_t window) {
  KvCacheDesc d;
  d.type = type;
  d.num_kv_heads = heads;
  d.head_dim = dk;
  d.value_dim = dv;
  d.capacity = capacity;
  d.window = window;
  return d;
}

// A cache over a vector, the storage misaligned by `misalign` bytes.
struct TestCache {
  std::vector<unsigned char> bytes;
  size_t misalign;
  KvCache cache;
  TestCache(const KvCacheDesc& d, size_t misalign_bytes = 0) : misalign(misalign_bytes) {
    const size_t size = edgeattn::KvCacheStorageSize(d);
    EXPECT_NE(size, 0u);
    bytes.assign(size + misalign + 64, 0xA5);
    EXPECT_EQ(cache.Init(d, storage(), size), Status::kOk);
  }
  unsigned char* storage() {
    const uintptr_t base = reinterpret_cast<uintptr_t>(bytes.data());
    return bytes.data() + (64 - base % 64) % 64 + misalign;
  }
  std::vector<unsigned char> Snapshot() const { return bytes; }
  const KvCacheDesc& desc() const { return cache.desc(); }
  // Position p's K and V as stored (Read).
  void ReadPosition(size_t p, std::vector<float>& k, std::vector<float>& v) const {
    k.assign(desc().num_kv_heads * desc().head_dim, 0.0f);
    v.assign(desc().num_kv_heads * desc().value_dim, 0.0f);
    ASSERT_EQ(cache.Read(p, k.data(), v.data()), Status::kOk) << "position " << p;
  }
};

// Random K/V rows for n positions.
void RandomRows(Rng& rng, const KvCacheDesc& d, size_t n, std::vector<float>& k, std::vector<float>& v,
                float sigma = 1.0f) {
  k.resize(n * d.num_kv_heads * d.head_dim);
  v.resize(n * d.num_kv_heads * d.value_dim);
  for (float& x : k) x = rng.Normal(sigma);
  for (float& x : v) x = rng.Normal(sigma);
}

AttentionDesc CachedDesc(size_t q_len, const KvCacheDesc& c, size_t num_heads, MaskKind mask) {
  AttentionDesc d;
  d.q_len = q_len;
  d.kv_len = 0;
  d.head_dim = c.head_dim;
  d.value_dim = c.value_dim;
  d.num_heads = num_heads;
  d.num_kv_heads = c.num_kv_heads;
  d.mask = mask;
  return d;
}

// Runs attention against the cache; out gets q_len * num_heads * value_dim floats.
Status RunCached(const Api& api, const AttentionDesc& d, const float* q, const KvCache& cache,
                 std::vector<float>& out) {
  const size_t ws_size = api.attention_cached_workspace_size(d, cache);
  EXPECT_NE(ws_size, 0u);
  std::vector<unsigned char> ws(ws_size + 5);
  out.assign(d.q_len * d.num_heads * d.value_dim, kNaN);
  return api.attention_cached(d, q, cache, out.data(), ws.data() + 5, ws_size);
}

// The same call through its work split (attention.h, AttentionPartCount): every part, last first, each with a fresh
// misaligned workspace, then the finish; out as RunCached leaves it.
void RunCachedParts(const AttentionDesc& d, const float* q, const KvCache& cache, std::vector<float>& out) {
  const size_t parts = edgeattn::AttentionCachedPartCount(d, cache);
  const size_t shared_size = edgeattn::AttentionCachedSharedSize(d, cache);
  const size_t ws_size = edgeattn::AttentionCachedWorkspaceSize(d, cache);
  ASSERT_GE(parts, 1u);
  std::vector<unsigned char> shared(shared_size + 1);
  out.assign(d.q_len * d.num_heads * d.value_dim, kNaN);
  for (size_t part = parts; part-- > 0;) {
    std::vector<unsigned char> ws(ws_size + 1, 0x5A);
    ASSERT_EQ(edgeattn::AttentionCachedPart(d, part, q, cache, out.data(), shared.data(), shared_size, ws.data() + 1,
                                            ws_size),
              Status::kOk)
        << "part " << part;
  }
  ASSERT_EQ(edgeattn::AttentionCachedFinish(d, cache, shared.data(), shared_size, out.data()), Status::kOk);
}

// Positions query i sees (the contract, restated): [lo, hi).
void Visible(const AttentionDesc& d, const KvCacheDesc& c, size_t length, size_t i, size_t* lo, size_t* hi) {
  *hi = d.mask == MaskKind::kCausal ? length - d.q_len + i + 1 : length;
  *lo = c.window != 0 && *hi > c.window ? *hi - c.window : 0;
}

// Checks every output against attention.h's bound on the values the cache stores (Read), in double.
void CheckAgainstStoredValues(const AttentionDesc& d, const TestCache& tc, const float* q, const float* out,
                              const char* what) {
  const KvCacheDesc& c = tc.desc();
  for (size_t i = 0; i < d.q_len; ++i) {
    size_t lo, hi;
    Visible(d, c, tc.cache.length(), i, &lo, &hi);
    std::vector<float> k, v, kr, vr;
    for (size_t p = lo; p < hi; ++p) {
      tc.ReadPosition(p, kr, vr);
      k.insert(k.end(), kr.begin(), kr.end());
      v.insert(v.end(), vr.begin(), vr.end());
    }
    AttentionDesc one = d;
    one.q_len = 1;
    one.kv_len = hi - lo;
    one.mask = MaskKind::kNone;
    for (size_t h = 0; h < d.num_heads; ++h) {
      const RefAttentionRow ref = RefAttention(one, q + i * d.num_heads * d.head_dim, k.data(), v.data(), 0, h);
      for (size_t col = 0; col < d.value_dim; ++col) {
        const float got = out[(i * d.num_heads + h) * d.value_dim + col];
        ASSERT_LE(std::fabs(got - ref.out[col]), ref.bound[col])
            << what << " row " << i << " head " << h << " col " << col << " length " << tc.cache.length();
      }
    }
  }
}

class KvCacheTest : public PathTest {};
EDGEATTN_INSTANTIATE_PATHS(KvCacheTest);

const KvType kTypes[] = {KvType::kF32, KvType::kF16, KvType::kQ8};
const char* TypeName(KvType t) { return t == KvType::kF32 ? "f32" : t == KvType::kF16 ? "f16" : "q8"; }

// ---- Storage ----

TEST_P(KvCacheTest, StoredValuesAreWithinTheDocumentedRounding) {
  Rng rng;
  for (KvType type : kTypes) {
    for (size_t width : {1, 3, 16, 33, 128}) {
      const KvCacheDesc c = MakeCacheDesc(type, 2, width, width + 1, 8, 0);
      TestCache tc(c, width % 4);
      std::vector<float> k, v;
      RandomRows(rng, c, 8, k, v);
      // Magnitudes across the f16 range (subnormal halves included), a zero row, a row with one large value.
      for (size_t i = 0; i < k.size(); ++i) k[i] *= std::ldexp(1.0f, static_cast<int>(rng.Index(40)) - 28);
      for (size_t i = 0; i < c.num_kv_heads * width; ++i) k[2 * c.num_kv_heads * width + i] = 0.0f;
      v[5] = 60000.0f;
      ASSERT_EQ(tc.cache.Append(k.data(), v.data(), 8), Status::kOk);
      for (size_t p = 0; p < 8; ++p) {
        std::vector<float> kr, vr;
        tc.ReadPosition(p, kr, vr);
        for (int which = 0; which < 2; ++which) {
          const std::vector<float>& src = which == 0 ? k : v;
          const std::vector<float>& got = which == 0 ? kr : vr;
          const size_t w = which == 0 ? c.head_dim : c.value_dim;
          for (size_t g = 0; g < c.num_kv_heads; ++g) {
            double max_abs = 0;
            for (size_t e = 0; e < w; ++e) max_abs = std::max(max_abs, std::fabs(double{src[(p * 2 + g) * w + e]}));
            for (size_t e = 0; e < w; ++e) {
              const double x = src[(p * 2 + g) * w + e];
              const double r = got[g * w + e];
              double bound = 0;
              if (type == KvType::kF16) {
                int ex;
                std::frexp(std::fabs(x), &ex);
                bound = std::ldexp(1.0, std::max(ex - 1, -14) - 11);  // half an f16 ULP
              } else if (type == KvType::kQ8) {
                bound = max_abs / 127 / 2 * (1 + 0x1p-14) + 0x1p-126;  // scale/2
              }
              ASSERT_LE(std::fabs(r - x), bound) << TypeName(type) << " p " << p << " which " << which << " x " << x;
            }
          }
        }
      }
    }
  }
}

// A Q8 row as kv_cache.h states the rule, restated here in plain code: scale = max|x| / 127 and q = x / scale
// (float divisions in the current rounding mode), q clamped to [-127, 127] and rounded to nearest, ties to even
// (decided in double, where every step on these values is exact, so in any mode); 0 where scale is 0.
void ReferenceQ8Row(const float* x, size_t n, std::vector<float>& q, float* scale) {
  float max_abs = 0.0f;
  for (size_t e = 0; e < n; ++e) max_abs = std::max(max_abs, std::fabs(x[e]));
  volatile float divisor = 127.0f;  // a division at run time, in the mode the caller set
  *scale = max_abs / divisor;
  q.assign(n, 0.0f);
  if (*scale == 0.0f) return;
  for (size_t e = 0; e < n; ++e) {
    const double r = std::min(127.0, std::max(-127.0, static_cast<double>(x[e] / *scale)));
    const double fl = std::floor(r), frac = r - fl;
    const bool up = frac > 0.5 || (frac == 0.5 && std::fmod(fl, 2.0) != 0.0);
    q[e] = static_cast<float>(up ? fl + 1.0 : fl);
    if (q[e] == 0.0f) q[e] = 0.0f;  // the stored integer 0 reads back as +0 * scale
  }
}

// Append's Q8 stores give the rule's bits for every kv head width (rows filling whole vectors, part of one, or less
// than the narrowest), in every rounding mode, on a misaligned cache: ties, all-zero rows, a scale that underflows
// and values at +-max included. Read returns q * scale, compared bit for bit with the reference's q * scale.
TEST_P(KvCacheTest, Q8StoresFollowTheRuleForEveryWidth) {
  Rng rng;
  for (int mode = kToNearest; mode <= kTowardZero; ++mode) {
    for (size_t width : {1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 24, 31, 32, 33, 48, 64, 100, 128}) {
      const size_t heads = 3, positions = 5;
      const KvCacheDesc c = MakeCacheDesc(KvType::kQ8, heads, width, width + 3, positions, 0);
      TestCache tc(c, 1 + width % 3);
      std::vector<float> k, v;
      RandomRows(rng, c, positions, k, v);
      for (size_t i = 0; i < k.size(); ++i) k[i] *= std::ldexp(1.0f, static_cast<int>(rng.Index(60)) - 30);
      float* ties = k.data() + heads * width;  // position 1, head 0: max 127 (scale 1), then halves: every tie
      for (size_t e = 0; e < width; ++e) ties[e] = e == 0 ? 127.0f : static_cast<float>(e % 17) - 8.5f;
      std::fill(k.begin() + 2 * heads * width, k.begin() + 2 * heads * width + width, 0.0f);   // position 2, head 0
      for (size_t e = 0; e < width; ++e) k[3 * heads * width + e] = e % 2 ? 5e-44f : -2e-45f;  // scale underflows
      v[(c.value_dim - 1)] = -v[0] * 3.0f;  // position 0, head 0: the max at the row's last value
      {
        ScopedFpEnv env(FpEnv{static_cast<Rounding>(mode), false, false});
        ASSERT_EQ(tc.cache.Append(k.data(), v.data(), positions), Status::kOk);
      }
      for (size_t p = 0; p < positions; ++p) {
        std::vector<float> kr, vr;
        tc.ReadPosition(p, kr, vr);
        for (int which = 0; which < 2; ++which) {
          const size_t w = which == 0 ? c.head_dim : c.value_dim;
          const float* src = (which == 0 ? k.data() : v.data()) + p * heads * w;
          const std::vector<float>& got = which == 0 ? kr : vr;
          for (size_t g = 0; g < heads; ++g) {
            std::vector<float> q;
            float scale;
            {
              ScopedFpEnv env(FpEnv{static_cast<Rounding>(mode), false, false});
              ReferenceQ8Row(src + g * w, w, q, &scale);
            }
            for (size_t e = 0; e < w; ++e) {
              ASSERT_EQ(Bits(got[g * w + e]), Bits(q[e] * scale))
                  << kRoundingNames[mode] << " width " << w << " position " << p << " head " << g << " element " << e
                  << " x " << src[g * w + e];
            }
          }
        }
      }
    }
  }
}

// Append's F16 stores round to the nearest half, ties to even, for every row length (whole vectors, a partial one,
// less than one) at an odd address: exact ties between neighbouring halves (normal and subnormal), values across
// the half range and below it, +-0, +-inf and NaN, against the double reference of tests/half_reference.h. (The
// long label's sweep compares every float32 with the scalar conversion bit for bit.)
TEST_P(KvCacheTest, F16StoresRoundToNearestEvenForEveryWidth) {
  Rng rng;
  for (size_t width : {1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100}) {
    const size_t heads = 2, positions = 3;
    const KvCacheDesc c = MakeCacheDesc(KvType::kF16, heads, width, width + 2, positions, 0);
    TestCache tc(c, 1);
    std::vector<float> k, v;
    RandomRows(rng, c, positions, k, v);
    for (std::vector<float>* rows : {&k, &v}) {
      for (size_t i = 0; i < rows->size(); ++i) {
        float& x = (*rows)[i];
        switch (rng.Index(4)) {
          case 0: {  // a tie: halfway between half h and h + 1 (exact in float)
            const uint16_t h = static_cast<uint16_t>(rng.Index(0x7BFF));
            x = static_cast<float>((RefHalfValue(h) + RefHalfValue(static_cast<uint16_t>(h + 1))) / 2);
            break;
          }
          case 1:
            x *= std::ldexp(1.0f, static_cast<int>(rng.Index(48)) - 34);  // 2^-34 .. 2^13
            break;
          default:
            break;
        }
        if (rng.Index(2) == 0) x = -x;
      }
    }
    const float specials[] = {0.0f, -0.0f, kInf, -kInf, kNaN, 1e-40f, -65504.0f, 65519.0f};
    for (size_t i = 0; i < 8 && i < k.size(); ++i) k[k.size() - 1 - i] = specials[i];
    ASSERT_EQ(tc.cache.Append(k.data(), v.data(), positions), Status::kOk);
    for (size_t p = 0; p < positions; ++p) {
      std::vector<float> kr, vr;
      tc.ReadPosition(p, kr, vr);
      for (int which = 0; which < 2; ++which) {
        const std::vector<float>& src = which == 0 ? k : v;
        const std::vector<float>& got = which == 0 ? kr : vr;
        for (size_t e = 0; e < got.size(); ++e) {
          const float x = src[p * got.size() + e];
          const double want = RefRoundToHalf(x);
          if (std::isnan(want)) {
            EXPECT_TRUE(std::isnan(got[e])) << "width " << width << " x " << x;
          } else {
            ASSERT_TRUE(static_cast<double>(got[e]) == want && std::signbit(got[e]) == std::signbit(want))
                << "width " << width << " position " << p << " x " << x << " got " << got[e] << " want " << want;
          }
        }
      }
    }
  }
}

// Append checks every value before it stores any, wherever it sits (a whole vector of a row, its tail, K or V):
// one value the type cannot store is INVALID_ARGUMENT with the storage untouched; the values at the edges of each
// type's range are stored.
TEST_P(KvCacheTest, AppendChecksEveryValue) {
  Rng rng;
  const size_t heads = 3, width = 37, positions = 2, count = positions * heads * width;
  const float f16_edge = std::nextafter(65520.0f, 0.0f);
  struct Case {
    KvType type;
    float bad;
    std::vector<float> good;
  };
  const Case cases[] = {{KvType::kF16, 65520.0f, {f16_edge, -f16_edge, kInf, -kInf, kNaN}},
                        {KvType::kF16, -FLT_MAX, {}},
                        {KvType::kQ8, kInf, {FLT_MAX, -FLT_MAX}},
                        {KvType::kQ8, -kInf, {}},
                        {KvType::kQ8, kNaN, {}}};
  for (const Case& c : cases) {
    const KvCacheDesc desc = MakeCacheDesc(c.type, heads, width, width, 4, 0);
    for (size_t at : {size_t{0}, size_t{15}, size_t{16}, size_t{17}, width - 1, heads * width, count - 1}) {
      for (int side = 0; side < 2; ++side) {
        TestCache tc(desc, 3);
        std::vector<float> k, v;
        RandomRows(rng, desc, positions, k, v);
        (side == 0 ? k : v)[at] = c.bad;
        const std::vector<unsigned char> before = tc.Snapshot();
        EXPECT_EQ(tc.cache.Append(k.data(), v.data(), positions), Status::kInvalidArgument)
            << TypeName(c.type) << " " << c.bad << " at " << at << (side == 0 ? " of K" : " of V");
        EXPECT_TRUE(tc.Snapshot() == before) << "storage changed";
        EXPECT_EQ(tc.cache.length(), 0u);
      }
    }
    if (c.good.empty()) continue;
    TestCache tc(desc, 3);
    std::vector<float> k, v;
    RandomRows(rng, desc, positions, k, v);
    for (size_t i = 0; i < count; ++i) (i % 2 ? k : v)[i] = c.good[i % c.good.size()];
    EXPECT_EQ(tc.cache.Append(k.data(), v.data(), positions), Status::kOk) << TypeName(c.type) << " edge values";
  }
}

TEST_P(KvCacheTest, SpecialValuesAreStoredAsSuch) {
  for (KvType type : {KvType::kF32, KvType::kF16}) {
    const KvCacheDesc c = MakeCacheDesc(type, 1, 4, 4, 2, 0);
    TestCache tc(c);
    const float k[4] = {kInf, -kInf, kNaN, -0.0f}, v[4] = {65504.0f, -65504.0f, 1e-8f, 0x1p-24f};
    ASSERT_EQ(tc.cache.Append(k, v, 1), Status::kOk);
    std::vector<float> kr, vr;
    tc.ReadPosition(0, kr, vr);
    EXPECT_EQ(kr[0], kInf);
    EXPECT_EQ(kr[1], -kInf);
    EXPECT_TRUE(std::isnan(kr[2]));
    EXPECT_EQ(Bits(kr[3]), Bits(-0.0f));
    EXPECT_EQ(vr[0], 65504.0f);
    EXPECT_EQ(vr[1], -65504.0f);
    EXPECT_EQ(vr[3], 0x1p-24f);
    EXPECT_EQ(vr[2], type == KvType::kF32 ? 1e-8f : 0.0f);  // below 2^-25: 0 in f16
  }
  // Q8: an all-zero row stores scale 0 and reads back as zeros.
  const KvCacheDesc c = MakeCacheDesc(KvType::kQ8, 1, 4, 4, 2, 0);
  TestCache tc(c);
  const float k[4] = {0, 0, 0, 0}, v[4] = {1, -2, 3, -127};
  ASSERT_EQ(tc.cache.Append(k, v, 1), Status::kOk);
  std::vector<float> kr, vr;
  tc.ReadPosition(0, kr, vr);
  for (float x : kr) EXPECT_EQ(Bits(x), Bits(0.0f));
  EXPECT_EQ(vr[3], -127.0f);  // scale exactly 1
  EXPECT_EQ(vr[0], 1.0f);
}

TEST(KvCacheStorage, SizeFormulaAndInvalidShapes) {
  EXPECT_EQ(edgeattn::KvCacheStorageSize(MakeCacheDesc(KvType::kF32, 2, 8, 4, 10, 0)), 16u + 10 * 2 * 12 * 4);
  EXPECT_EQ(edgeattn::KvCacheStorageSize(MakeCacheDesc(KvType::kF16, 2, 8, 4, 10, 3)), 16u + 10 * 2 * 12 * 2);
  EXPECT_EQ(edgeattn::KvCacheStorageSize(MakeCacheDesc(KvType::kQ8, 2, 8, 4, 10, 10)), 16u + 10 * 2 * (12 + 8));
  EXPECT_EQ(edgeattn::KvCacheStorageSize(MakeCacheDesc(KvType::kF32, 2, 8, 4, 10, 11)), 0u);
  EXPECT_EQ(edgeattn::KvCacheStorageSize(MakeCacheDesc(static_cast<KvType>(3), 2, 8, 4, 10, 0)), 0u);
  EXPECT_EQ(edgeattn::KvCacheStorageSize(MakeCacheDesc(KvType::kF32, 0, 8, 4, 10, 0)), 0u);
  EXPECT_EQ(edgeattn::KvCacheStorageSize(MakeCacheDesc(KvType::kF32, 1, 8, 4, SIZE_MAX / 16, 0)), 0u);
  static_assert(edgeattn::KvCacheStorageBytes(KvType::kQ8, 1, 64, 64, 256) == 16 + 256 * (128 + 8), "formula");
}

// ---- Status rules: every error changes nothing ----

// The cache's length, storage bytes and an output buffer before and after a call that must fail.
struct Unchanged {
  const TestCache& tc;
  size_t length;
  std::vector<unsigned char> bytes;
  explicit Unchanged(const TestCache& t) : tc(t), length(t.cache.length()), bytes(t.Snapshot()) {}
  bool Holds() const { return tc.cache.length() == length && tc.bytes == bytes; }
};

TEST_P(KvCacheTest, InitErrors) {
  std::vector<unsigned char> storage(4096, 0x5A);
  const std::vector<unsigned char> before = storage;
  KvCache cache;
  const KvCacheDesc good = MakeCacheDesc(KvType::kF16, 2, 4, 4, 8, 0);
  const size_t need = edgeattn::KvCacheStorageSize(good);
  EXPECT_EQ(cache.Init(good, nullptr, need), Status::kNullPointer);
  KvCacheDesc d = good;
  d.head_dim = 0;
  EXPECT_EQ(cache.Init(d, storage.data(), need), Status::kInvalidShape);
  d = good;
  d.capacity = SIZE_MAX / 4;
  EXPECT_EQ(cache.Init(d, storage.data(), SIZE_MAX), Status::kInvalidShape);
  d = good;
  d.window = 9;
  EXPECT_EQ(cache.Init(d, storage.data(), need), Status::kInvalidArgument);
  d = good;
  d.type = static_cast<KvType>(7);
  EXPECT_EQ(cache.Init(d, storage.data(), need), Status::kInvalidArgument);
  EXPECT_EQ(cache.Init(good, storage.data(), need - 1), Status::kWorkspaceTooSmall);  // a caller buffer too small
  d = good;
  d.head_dim = 0;
  d.window = 9;  // shape before argument
  EXPECT_EQ(cache.Init(d, nullptr, need), Status::kNullPointer);
  EXPECT_EQ(cache.Init(d, storage.data(), need), Status::kInvalidShape);
  d = good;
  d.window = 9;  // argument before size
  EXPECT_EQ(cache.Init(d, storage.data(), 1), Status::kInvalidArgument);
  EXPECT_EQ(storage, before);
  // An uninitialised cache is a null storage.
  float k[8] = {}, v[8] = {};
  EXPECT_EQ(cache.Append(k, v, 1), Status::kNullPointer);
  EXPECT_EQ(cache.Read(0, k, v), Status::kNullPointer);
  EXPECT_EQ(cache.Init(good, storage.data(), need), Status::kOk);
  EXPECT_EQ(cache.length(), 0u);
}

TEST_P(KvCacheTest, AppendErrorsChangeNothing) {
  Rng rng;
  for (KvType type : kTypes) {
    for (size_t window : {0, 3}) {
      const KvCacheDesc c = MakeCacheDesc(type, 2, 5, 3, 6, window);
      TestCache tc(c, 1);
      std::vector<float> k, v;
      RandomRows(rng, c, 10, k, v);
      ASSERT_EQ(tc.cache.Append(k.data(), v.data(), 4), Status::kOk);
      const Unchanged before(tc);
      EXPECT_EQ(tc.cache.Append(nullptr, v.data(), 1), Status::kNullPointer);
      EXPECT_EQ(tc.cache.Append(k.data(), nullptr, 1), Status::kNullPointer);
      EXPECT_EQ(tc.cache.Append(k.data(), v.data(), SIZE_MAX / 4), Status::kInvalidShape);
      EXPECT_EQ(tc.cache.Append(nullptr, nullptr, 0), Status::kOk);
      // The last value of the append is bad: nothing before it may have been stored either.
      std::vector<float> bad_k = k, bad_v = v;
      if (type == KvType::kF16) {
        bad_v[2 * 2 * 3 - 1] = -65520.0f;
        EXPECT_EQ(tc.cache.Append(bad_k.data(), bad_v.data(), 2), Status::kInvalidArgument);
        bad_v[2 * 2 * 3 - 1] = 65519.99f;  // rounds to 65504: storable
        bad_k[3] = 1e30f;
        EXPECT_EQ(tc.cache.Append(bad_k.data(), bad_v.data(), 2), Status::kInvalidArgument);
      } else if (type == KvType::kQ8) {
        bad_v[2 * 2 * 3 - 1] = kNaN;
        EXPECT_EQ(tc.cache.Append(bad_k.data(), bad_v.data(), 2), Status::kInvalidArgument);
        bad_v[2 * 2 * 3 - 1] = 0.0f;
        bad_k[3] = -kInf;
        EXPECT_EQ(tc.cache.Append(bad_k.data(), bad_v.data(), 2), Status::kInvalidArgument);
      }
      if (window == 0) {
        EXPECT_EQ(tc.cache.Append(k.data(), v.data(), 3), Status::kCapacity);
        if (type != KvType::kF32) {
          // INVALID_ARGUMENT comes before CAPACITY.
          EXPECT_EQ(tc.cache.Append(bad_k.data(), bad_v.data(), 3), Status::kInvalidArgument);
        }
      }
      // k or v overlapping the storage (F32: the storage's bytes as floats pass the value checks, which come
      // first).
      if (type == KvType::kF32) {
        float* inside = reinterpret_cast<float*>(tc.storage() + 20);
        EXPECT_EQ(tc.cache.Append(inside, v.data(), 1), Status::kOverlap);
        EXPECT_EQ(tc.cache.Append(k.data(), inside, 1), Status::kOverlap);
      }
      EXPECT_TRUE(before.Holds()) << TypeName(type) << " window " << window;
      // The linear cache's last two slots still take an append, then it is full.
      if (window == 0) {
        EXPECT_EQ(tc.cache.Append(k.data(), v.data(), 2), Status::kOk);
        EXPECT_EQ(tc.cache.Append(k.data(), v.data(), 1), Status::kCapacity);
        EXPECT_EQ(tc.cache.Append(nullptr, nullptr, 0), Status::kOk);
      }
    }
  }
}

TEST_P(KvCacheTest, RingKeepsTheLastCapacityPositionsAndTruncateRules) {
  Rng rng;
  for (KvType type : kTypes) {
    const KvCacheDesc c = MakeCacheDesc(type, 1, 4, 2, 5, 5);
    TestCache ring(c, 3);
    const KvCacheDesc lc = MakeCacheDesc(type, 1, 4, 2, 32, 0);
    TestCache linear(lc);
    std::vector<float> k, v;
    RandomRows(rng, c, 13, k, v);
    // One append of more than capacity positions keeps the last 5 (positions 8..12), as the linear cache stores
    // them.
    ASSERT_EQ(ring.cache.Append(k.data(), v.data(), 13), Status::kOk);
    ASSERT_EQ(linear.cache.Append(k.data(), v.data(), 13), Status::kOk);
    EXPECT_EQ(ring.cache.length(), 13u);
    EXPECT_EQ(ring.cache.OldestPosition(), 8u);
    std::vector<float> kr, vr, kl, vl;
    for (size_t p = 8; p < 13; ++p) {
      ring.ReadPosition(p, kr, vr);
      linear.ReadPosition(p, kl, vl);
      EXPECT_EQ(kr, kl);
      EXPECT_EQ(vr, vl);
    }
    {
      const Unchanged before(ring);
      EXPECT_EQ(ring.cache.Read(7, kr.data(), vr.data()), Status::kInvalidArgument);
      EXPECT_EQ(ring.cache.Read(13, kr.data(), vr.data()), Status::kInvalidArgument);
      EXPECT_EQ(ring.cache.Read(8, nullptr, vr.data()), Status::kNullPointer);
      EXPECT_EQ(ring.cache.Read(8, kr.data(), kr.data() + 1), Status::kOverlap);
      EXPECT_EQ(ring.cache.Read(8, reinterpret_cast<float*>(ring.storage() + 4), vr.data()), Status::kOverlap);
      EXPECT_EQ(ring.cache.Truncate(14), Status::kInvalidArgument);
      EXPECT_EQ(ring.cache.Truncate(7), Status::kInvalidArgument);
      EXPECT_TRUE(before.Holds());
    }
    // Truncate to 10: positions 8, 9 stay held; 10.. are gone; appending reuses their slots.
    ASSERT_EQ(ring.cache.Truncate(10), Status::kOk);
    EXPECT_EQ(ring.cache.OldestPosition(), 8u);
    EXPECT_EQ(ring.cache.Read(10, kr.data(), vr.data()), Status::kInvalidArgument);
    ring.ReadPosition(9, kr, vr);
    linear.ReadPosition(9, kl, vl);
    EXPECT_EQ(kr, kl);
    std::vector<float> k2, v2;
    RandomRows(rng, c, 4, k2, v2);
    ASSERT_EQ(ring.cache.Append(k2.data(), v2.data(), 4), Status::kOk);  // positions 10..13; 8 is evicted
    EXPECT_EQ(ring.cache.OldestPosition(), 9u);
    ASSERT_EQ(linear.cache.Truncate(10), Status::kOk);
    ASSERT_EQ(linear.cache.Append(k2.data(), v2.data(), 4), Status::kOk);
    for (size_t p = 9; p < 14; ++p) {
      ring.ReadPosition(p, kr, vr);
      linear.ReadPosition(p, kl, vl);
      EXPECT_EQ(kr, kl) << p;
      EXPECT_EQ(vr, vl) << p;
    }
    // Truncating to the oldest position empties it; the linear cache can truncate to 0.
    ASSERT_EQ(ring.cache.Truncate(9), Status::kOk);
    EXPECT_EQ(ring.cache.Read(9, kr.data(), vr.data()), Status::kInvalidArgument);
    ASSERT_EQ(linear.cache.Truncate(0), Status::kOk);
    EXPECT_EQ(linear.cache.length(), 0u);
  }
}

TEST_P(KvCacheTest, AttentionErrorsChangeNothing) {
  Rng rng;
  const KvCacheDesc c = MakeCacheDesc(KvType::kF16, 2, 4, 3, 8, 4);
  TestCache tc(c, 2);
  std::vector<float> k, v;
  RandomRows(rng, c, 6, k, v);
  const AttentionDesc good = CachedDesc(2, c, 4, MaskKind::kCausal);
  std::vector<float> q(2 * 4 * 4, 0.5f);
  GuardedBuffer out(2 * 4 * 3, 1);
  out.Fill(7.0f);
  const std::vector<uint32_t> out_bits = out.Bits();
  const size_t need = api().attention_cached_workspace_size(good, tc.cache);
  ASSERT_EQ(need, edgeattn::AttentionCachedWorkspaceBytes(2, 4, 2, 4, 3, 8, 4));
  std::vector<unsigned char> ws(need);
  auto run = [&](const AttentionDesc& d, const float* qp, const KvCache& cache, float* o, void* w, size_t ws_size) {
    return api().attention_cached(d, qp, cache, o, w, ws_size);
  };
  // Empty cache, also with an unknown mask kind (shape comes before argument; found by kv_cache_fuzzer).
  EXPECT_EQ(run(good, q.data(), tc.cache, out.data(), ws.data(), need), Status::kInvalidShape);
  AttentionDesc unknown_mask = good;
  unknown_mask.mask = static_cast<MaskKind>(5);
  EXPECT_EQ(run(unknown_mask, q.data(), tc.cache, out.data(), ws.data(), need), Status::kInvalidShape);
  ASSERT_EQ(tc.cache.Append(k.data(), v.data(), 6), Status::kOk);
  const Unchanged before(tc);
  EXPECT_EQ(run(good, nullptr, tc.cache, out.data(), ws.data(), need), Status::kNullPointer);
  EXPECT_EQ(run(good, q.data(), tc.cache, nullptr, ws.data(), need), Status::kNullPointer);
  EXPECT_EQ(run(good, q.data(), KvCache(), out.data(), ws.data(), need), Status::kNullPointer);
  EXPECT_EQ(run(good, q.data(), tc.cache, out.data(), nullptr, need), Status::kNullPointer);
  AttentionDesc d = good;
  d.q_len = 0;
  EXPECT_EQ(run(d, q.data(), tc.cache, out.data(), ws.data(), need), Status::kInvalidShape);
  d = good;
  d.q_len = 7;  // more queries than positions
  EXPECT_EQ(run(d, q.data(), tc.cache, out.data(), ws.data(), need), Status::kInvalidShape);
  d = good;
  d.q_len = SIZE_MAX / 2;
  d.mask = MaskKind::kNone;
  EXPECT_EQ(run(d, q.data(), tc.cache, out.data(), ws.data(), need), Status::kInvalidShape);
  d = good;
  d.kv_len = 6;
  EXPECT_EQ(run(d, q.data(), tc.cache, out.data(), ws.data(), need), Status::kInvalidArgument);
  d = good;
  d.head_dim = 5;
  EXPECT_EQ(run(d, q.data(), tc.cache, out.data(), ws.data(), need), Status::kInvalidArgument);
  d = good;
  d.value_dim = 2;
  EXPECT_EQ(run(d, q.data(), tc.cache, out.data(), ws.data(), need), Status::kInvalidArgument);
  d = good;
  d.num_kv_heads = 4;
  EXPECT_EQ(run(d, q.data(), tc.cache, out.data(), ws.data(), need), Status::kInvalidArgument);
  d = good;
  d.num_kv_heads = 0;  // 0 means num_heads (4) != 2
  EXPECT_EQ(run(d, q.data(), tc.cache, out.data(), ws.data(), need), Status::kInvalidArgument);
  d = good;
  d.num_heads = 3;
  EXPECT_EQ(run(d, q.data(), tc.cache, out.data(), ws.data(), need), Status::kInvalidArgument);
  d = good;
  d.additive_mask = q.data();
  EXPECT_EQ(run(d, q.data(), tc.cache, out.data(), ws.data(), need), Status::kInvalidArgument);
  d = good;
  d.scale = -1.0f;
  EXPECT_EQ(run(d, q.data(), tc.cache, out.data(), ws.data(), need), Status::kInvalidArgument);
  d.scale = kNaN;
  EXPECT_EQ(run(d, q.data(), tc.cache, out.data(), ws.data(), need), Status::kInvalidArgument);
  d = good;
  d.mask = static_cast<MaskKind>(5);
  EXPECT_EQ(run(d, q.data(), tc.cache, out.data(), ws.data(), need), Status::kInvalidArgument);
  EXPECT_EQ(run(good, q.data(), tc.cache, out.data(), ws.data(), need - 1), Status::kWorkspaceTooSmall);
  EXPECT_EQ(run(good, q.data(), tc.cache, out.data(), nullptr, need - 1), Status::kWorkspaceTooSmall);
  // Shape before argument before workspace.
  d = good;
  d.q_len = 7;
  d.kv_len = 1;
  EXPECT_EQ(run(d, q.data(), tc.cache, out.data(), ws.data(), 0), Status::kInvalidShape);
  d = good;
  d.kv_len = 1;
  EXPECT_EQ(run(d, q.data(), tc.cache, out.data(), ws.data(), 0), Status::kInvalidArgument);
  EXPECT_TRUE(out.Bits() == out_bits && out.GuardsIntact());
  // Overlaps: out with the storage, q or the workspace; the workspace with q or the storage.
  std::vector<float> big(64, 0.0f);
  EXPECT_EQ(run(good, big.data(), tc.cache, big.data() + 4, ws.data(), need), Status::kOverlap);
  EXPECT_EQ(run(good, q.data(), tc.cache, reinterpret_cast<float*>(tc.storage() + 8), ws.data(), need),
            Status::kOverlap);
  EXPECT_EQ(run(good, q.data(), tc.cache, reinterpret_cast<float*>(ws.data() + 8), ws.data(), need), Status::kOverlap);
  EXPECT_EQ(run(good, q.data(), tc.cache, out.data(), tc.storage() + 4, need), Status::kOverlap);
  EXPECT_EQ(run(good, q.data(), tc.cache, out.data(), reinterpret_cast<unsigned char*>(q.data()) + 4, need),
            Status::kOverlap);
  EXPECT_TRUE(out.Bits() == out_bits && big == std::vector<float>(64, 0.0f));
  EXPECT_TRUE(before.Holds());
  // A ring whose oldest visible position is gone: capacity 8, window 4 answers chunks up to 5 queries after
  // wrapping.
  ASSERT_EQ(tc.cache.Append(k.data(), v.data(), 6), Status::kOk);  // length 12, holds 4..11
  d = good;
  d.q_len = 5;  // query 0 at position 7 sees 4..7
  std::vector<float> q5(5 * 4 * 4, 0.25f), o5;
  EXPECT_EQ(RunCached(api(), d, q5.data(), tc.cache, o5), Status::kOk);
  d.q_len = 6;  // query 0 at position 6 sees 3..6: 3 is evicted
  std::vector<float> q6(6 * 4 * 4, 0.25f), o6;
  EXPECT_EQ(RunCached(api(), d, q6.data(), tc.cache, o6), Status::kInvalidShape);
  EXPECT_TRUE(std::all_of(o6.begin(), o6.end(), [](float x) { return std::isnan(x); }));
  // MASK_NONE sees the last min(window, length) positions; truncated below them is INVALID_SHAPE.
  ASSERT_EQ(tc.cache.Truncate(6), Status::kOk);  // holds 4, 5; the window wants 2..5
  d = good;
  d.mask = MaskKind::kNone;
  EXPECT_EQ(RunCached(api(), d, q.data(), tc.cache, o6), Status::kInvalidShape);
  d.mask = MaskKind::kCausal;
  d.q_len = 1;  // position 5 sees 2..5
  EXPECT_EQ(RunCached(api(), d, q.data(), tc.cache, o6), Status::kInvalidShape);
}

// A cache whose storage_size was shrunk by hand (through the C struct or KvCacheState): every operation reports
// kWorkspaceTooSmall, after its own shape and argument errors, and changes nothing.
TEST_P(KvCacheTest, ShortStorageIsWorkspaceTooSmallAfterArguments) {
  Rng rng;
  const KvCacheDesc c = MakeCacheDesc(KvType::kQ8, 1, 4, 4, 8, 0);
  TestCache tc(c, 1);
  std::vector<float> k, v;
  RandomRows(rng, c, 3, k, v);
  ASSERT_EQ(tc.cache.Append(k.data(), v.data(), 3), Status::kOk);
  for (size_t short_size : {edgeattn::KvCacheStorageSize(c) - 1, size_t{3}}) {  // past the header, and inside it
    edgeattn::internal::KvCacheState st = tc.cache.state();
    st.storage_size = short_size;
    KvCache shrunk(st);
    const Unchanged before(tc);
    std::vector<float> kr(4), vr(4), bad_k = k;
    bad_k[0] = kNaN;
    EXPECT_EQ(shrunk.Append(k.data(), v.data(), 1), Status::kWorkspaceTooSmall) << short_size;
    EXPECT_EQ(shrunk.Append(nullptr, nullptr, 0), Status::kWorkspaceTooSmall) << short_size;
    EXPECT_EQ(shrunk.Append(k.data(), v.data(), SIZE_MAX / 2), Status::kInvalidShape) << short_size;
    EXPECT_EQ(shrunk.Append(bad_k.data(), v.data(), 1), Status::kInvalidArgument) << short_size;
    EXPECT_EQ(shrunk.Truncate(2), Status::kWorkspaceTooSmall) << short_size;
    EXPECT_EQ(shrunk.Truncate(4), Status::kInvalidArgument) << short_size;
    EXPECT_EQ(shrunk.Read(1, kr.data(), vr.data()), Status::kWorkspaceTooSmall) << short_size;
    EXPECT_EQ(shrunk.Read(3, kr.data(), vr.data()), Status::kInvalidArgument) << short_size;
    const AttentionDesc d = CachedDesc(1, c, 1, MaskKind::kCausal);
    std::vector<float> q(4, 0.5f), out(4, 7.0f);
    std::vector<unsigned char> ws(edgeattn::AttentionCachedWorkspaceBytes(1, 1, 1, 4, 4, 8));
    EXPECT_EQ(api().attention_cached(d, q.data(), shrunk, out.data(), ws.data(), ws.size()), Status::kWorkspaceTooSmall)
        << short_size;
    AttentionDesc bad = d;
    bad.scale = -1.0f;
    EXPECT_EQ(api().attention_cached(bad, q.data(), shrunk, out.data(), ws.data(), ws.size()), Status::kInvalidArgument)
        << short_size;
    bad = d;
    bad.q_len = 4;  // more causal queries than positions
    EXPECT_EQ(api().attention_cached(bad, q.data(), shrunk, out.data(), ws.data(), ws.size()), Status::kInvalidShape)
        << short_size;
    EXPECT_EQ(out, std::vector<float>(4, 7.0f));
    EXPECT_TRUE(before.Holds());
  }
}

// ---- Routes ----

// The SIMD path's route is chosen once per call, from the problem, the storage's alignment, the target and the
// rounding mode (lib/kv_cache/kv_cache-inl.h, ChooseKvRoute); KvRouteForTest reports the choice.
TEST_P(KvCacheTest, RouteIsChosenFromShapeAlignmentTargetAndMode) {
  using edgeattn::internal::KvRoute;
  using edgeattn::internal::KvRouteForTest;
  if (IsScalarPath()) GTEST_SKIP() << "the scalar path has no routes: the row kernels throughout";
  EXPECT_STREQ(edgeattn::internal::KvRouteName(KvRoute::kFused), "fused");
  EXPECT_STREQ(edgeattn::internal::KvRouteName(KvRoute::kConverted), "converted");
  EXPECT_STREQ(edgeattn::internal::KvRouteName(KvRoute::kTwoPass), "two_pass");
  EXPECT_STREQ(edgeattn::internal::KvRouteName(KvRoute::kScalarRows), "scalar_rows");
  Rng rng;
  // One lane: no fused route (flash); the HELIUM backend's decode kernels read every format in MVE registers.
  const bool helium = GetParam() == kBackendPath && std::strcmp(edgeattn::internal::BackendName(), "HELIUM") == 0;
  const bool fused_target = Target() != HWY_SCALAR || helium;
  for (KvType type : kTypes) {
    for (size_t misalign : {0, 1, 2}) {
      const bool aligned = misalign % edgeattn::internal::KvElementBytes(type) == 0;
      const KvRoute decode = fused_target && aligned ? KvRoute::kFused : KvRoute::kConverted;
      const KvCacheDesc c = MakeCacheDesc(type, 1, 8, 8, 700, 0), small = MakeCacheDesc(type, 1, 8, 8, 40, 0);
      TestCache long_cache(c, misalign), short_cache(small, misalign);
      std::vector<float> k, v;
      RandomRows(rng, c, 700, k, v);
      ASSERT_EQ(long_cache.cache.Append(k.data(), v.data(), 700), Status::kOk);
      ASSERT_EQ(short_cache.cache.Append(k.data(), v.data(), 40), Status::kOk);
      const std::string what = std::string(TypeName(type)) + " misaligned by " + std::to_string(misalign);
      for (const TestCache* tc : {&long_cache, &short_cache}) {  // several key chunks, and one
        const KvCacheDesc& cd = tc->desc();
        EXPECT_EQ(KvRouteForTest(CachedDesc(1, cd, 2, MaskKind::kCausal), tc->cache), decode) << what;
        EXPECT_EQ(
            KvRouteForTest(CachedDesc(edgeattn::kAttentionTiledMinQueries - 1, cd, 1, MaskKind::kNone), tc->cache),
            decode)
            << what;
        EXPECT_EQ(KvRouteForTest(CachedDesc(edgeattn::kAttentionTiledMinQueries, cd, 1, MaskKind::kCausal), tc->cache),
                  KvRoute::kConverted)
            << what;
        if (kHasFpControl) {
          ScopedFpEnv upward(FpEnv{kUpward, false, false});
          const KvRoute directed = tc == &long_cache ? KvRoute::kTwoPass : KvRoute::kScalarRows;
          EXPECT_EQ(KvRouteForTest(CachedDesc(1, cd, 2, MaskKind::kCausal), tc->cache), directed) << what;
        }
      }
      AttentionDesc bad = CachedDesc(1, c, 2, MaskKind::kCausal);
      bad.scale = -1.0f;
      EXPECT_EQ(KvRouteForTest(bad, long_cache.cache), KvRoute::kScalarRows) << what;
    }
  }
}

// ---- Results ----

// The same positions in a ring that has wrapped, in a window cache that never wraps and in a linear cache that
// holds only the visible positions: bit-identical outputs.
TEST_P(KvCacheTest, RingAndLinearCachesAreBitIdentical) {
  Rng rng;
  for (KvType type : kTypes) {
    for (size_t window : {1, 7, 40, 300}) {
      const size_t capacity = window + 3;
      const size_t total = 3 * capacity + 5;
      const KvCacheDesc rc = MakeCacheDesc(type, 2, 19, 9, capacity, window);
      const KvCacheDesc wc = MakeCacheDesc(type, 2, 19, 9, total, window);
      TestCache ring(rc, 1), wide(wc, 2);
      std::vector<float> k, v;
      RandomRows(rng, rc, total, k, v);
      ASSERT_EQ(ring.cache.Append(k.data(), v.data(), total), Status::kOk);
      ASSERT_EQ(wide.cache.Append(k.data(), v.data(), total), Status::kOk);
      const size_t chunk = std::min<size_t>(4, capacity - window + 1);
      for (MaskKind mask : {MaskKind::kCausal, MaskKind::kNone}) {
        const AttentionDesc d = CachedDesc(mask == MaskKind::kCausal ? chunk : 3, rc, 4, mask);
        std::vector<float> q(d.q_len * 4 * 19);
        for (float& x : q) x = rng.Normal();
        std::vector<float> out_ring, out_wide, out_linear;
        ASSERT_EQ(RunCached(api(), d, q.data(), ring.cache, out_ring), Status::kOk);
        ASSERT_EQ(RunCached(api(), d, q.data(), wide.cache, out_wide), Status::kOk);
        ASSERT_EQ(std::memcmp(out_ring.data(), out_wide.data(), out_ring.size() * 4), 0)
            << TypeName(type) << " window " << window;
        // A linear cache of exactly the last positions: for one query (or MASK_NONE) they are what it sees. (Within
        // a chunk, tiles start at the chunk's first visible position: a query of a causal chunk is compared with
        // the same query alone.)
        const size_t seen = std::min(window, total);
        const KvCacheDesc lc = MakeCacheDesc(type, 2, 19, 9, seen, 0);
        TestCache linear(lc, 3);
        const size_t first = total - seen;
        ASSERT_EQ(linear.cache.Append(k.data() + first * 2 * 19, v.data() + first * 2 * 9, seen), Status::kOk);
        AttentionDesc one = d;
        if (mask == MaskKind::kCausal) one.q_len = 1;
        const float* q_last = q.data() + (d.q_len - one.q_len) * 4 * 19;
        std::vector<float> out_ring_one;
        ASSERT_EQ(RunCached(api(), one, q_last, linear.cache, out_linear), Status::kOk);
        ASSERT_EQ(RunCached(api(), one, q_last, ring.cache, out_ring_one), Status::kOk);
        ASSERT_EQ(std::memcmp(out_linear.data(), out_ring_one.data(), out_linear.size() * 4), 0)
            << TypeName(type) << " window " << window << " linear";
        CheckAgainstStoredValues(d, ring, q.data(), out_ring.data(), TypeName(type));
      }
    }
  }
}

// An F32 cache without window is Attention on the same K and V: the scalar path gives scalar::Attention's bits,
// the SIMD path the decode path's bits where Attention takes it; every path is within attention.h's bound of the
// double reference.
TEST_P(KvCacheTest, F32CacheMatchesAttention) {
  Rng rng;
  for (size_t length : {1, 5, 31, 32, 33, 255, 256, 257, 600}) {
    for (size_t q_len : {1, 3, 8, 17}) {
      if (q_len > length) continue;
      const size_t heads = rng.Bernoulli(0.5) ? 4 : 2, kv_heads = rng.Bernoulli(0.5) ? 1 : 2;
      // Value widths past 64 and 128 too: the decode P·V's 4- and 8-vector column blocks on AVX-512 (not on the
      // boards with 4 MB of RAM, whose one-lane target has no such blocks: 600 positions of them do not fit).
      const size_t dk = 1 + rng.Index(70);
      const size_t dv = !EDGEATTN_TEST_SMALL_MEMORY && rng.Bernoulli(0.5) ? 60 + rng.Index(150) : 1 + rng.Index(70);
      const KvCacheDesc c = MakeCacheDesc(KvType::kF32, kv_heads, dk, dv, length + rng.Index(5), 0);
      TestCache tc(c, rng.Index(4));
      std::vector<float> k, v, q(q_len * heads * dk);
      RandomRows(rng, c, length, k, v);
      for (float& x : q) x = rng.Normal();
      ASSERT_EQ(tc.cache.Append(k.data(), v.data(), length), Status::kOk);
      for (MaskKind mask : {MaskKind::kCausal, MaskKind::kNone}) {
        const AttentionDesc d = CachedDesc(q_len, c, heads, mask);
        std::vector<float> cached;
        ASSERT_EQ(RunCached(api(), d, q.data(), tc.cache, cached), Status::kOk);
        AttentionDesc full = d;
        full.kv_len = length;
        std::vector<float> direct(cached.size(), kNaN);
        std::vector<unsigned char> ws(edgeattn::AttentionWorkspaceSize(full));
        if (IsScalarPath()) {
          ASSERT_EQ(
              edgeattn::scalar::Attention(full, q.data(), k.data(), v.data(), direct.data(), ws.data(), ws.size()),
              Status::kOk);
          ASSERT_EQ(std::memcmp(direct.data(), cached.data(), cached.size() * 4), 0)
              << "length " << length << " q_len " << q_len;
        } else if (q_len < edgeattn::kAttentionTiledMinQueries && length > 16) {
          // Where Attention takes its decode path (no small path: more keys than any vector's lanes), the same
          // per-tile steps on the same tiles: the same bits.
          ASSERT_EQ(edgeattn::Attention(full, q.data(), k.data(), v.data(), direct.data(), ws.data(), ws.size()),
                    Status::kOk);
          ASSERT_EQ(std::memcmp(direct.data(), cached.data(), cached.size() * 4), 0)
              << "decode path: length " << length << " q_len " << q_len;
        }
        CheckAgainstStoredValues(d, tc, q.data(), cached.data(), "f32");
      }
    }
  }
}

// A NaN or infinity stored in F32 or F16 reaches exactly the rows that see its position, as through Attention:
// a NaN makes them NaN, an infinite score takes the row; a position outside a row's window never reaches it.
TEST_P(KvCacheTest, NonFiniteValuesReachOnlyRowsThatSeeThem) {
  Rng rng;
  for (KvType type : {KvType::kF32, KvType::kF16}) {
    for (size_t length : {9, 300}) {
      const KvCacheDesc c = MakeCacheDesc(type, 1, 8, 8, 400, 4);
      TestCache tc(c);
      std::vector<float> k, v;
      RandomRows(rng, c, length, k, v);
      const size_t bad = length - 6;  // seen by queries at positions bad .. bad + 3
      k[bad * 8 + 2] = kNaN;
      ASSERT_EQ(tc.cache.Append(k.data(), v.data(), length), Status::kOk);
      const AttentionDesc d = CachedDesc(6, c, 1, MaskKind::kCausal);  // positions length-6 .. length-1
      std::vector<float> q(6 * 8), out;
      for (float& x : q) x = rng.Normal();
      ASSERT_EQ(RunCached(api(), d, q.data(), tc.cache, out), Status::kOk);
      for (size_t i = 0; i < 6; ++i) {
        const bool sees = i < 4;
        for (size_t col = 0; col < 8; ++col) {
          ASSERT_EQ(std::isnan(out[i * 8 + col]), sees) << TypeName(type) << " row " << i << " length " << length;
        }
      }
      // +inf in a key: the rows that see it get its value (one +inf score takes the whole row).
      if (type == KvType::kF32) {
        TestCache inf_cache(c);
        k[bad * 8 + 2] = 0.0f;
        for (size_t col = 0; col < 8; ++col) k[(bad + 1) * 8 + col] = q[5 * 8 + col] > 0 ? kInf : -kInf;
        ASSERT_EQ(inf_cache.cache.Append(k.data(), v.data(), length), Status::kOk);
        const AttentionDesc d1 = CachedDesc(1, c, 1, MaskKind::kCausal);
        const size_t pos = bad + 2;  // query at bad + 2 sees bad - 1 .. bad + 2
        TestCache prefix(c);
        ASSERT_EQ(prefix.cache.Append(k.data(), v.data(), pos + 1), Status::kOk);
        ASSERT_EQ(RunCached(api(), d1, &q[5 * 8], prefix.cache, out), Status::kOk);
        for (size_t col = 0; col < 8; ++col) EXPECT_EQ(out[col], v[(bad + 1) * 8 + col]) << col;
      }
    }
  }
}

// An F16 cache of values that are halves holds them exactly, so the SIMD path's conversion (integer code or a
// target's own instruction) must give the F32 cache's bits: subnormal halves, the largest half, signed zeros.
TEST_P(KvCacheTest, F16CacheOfHalvesGivesTheF32CachesBits) {
  Rng rng;
  const size_t n = 300, dk = 37, dv = 29;
  const KvCacheDesc c32 = MakeCacheDesc(KvType::kF32, 1, dk, dv, n, 0),
                    c16 = MakeCacheDesc(KvType::kF16, 1, dk, dv, n, 0);
  std::vector<float> k, v;
  RandomRows(rng, c32, n, k, v);
  for (std::vector<float>* x : {&k, &v}) {
    for (float& e : *x) {
      const size_t kind = rng.Index(8);
      const float f = kind == 0   ? e * 0x1p-20f
                      : kind == 1 ? (e < 0 ? -65504.0f : 65504.0f) * 1e-4f
                      : kind == 2 ? -0.0f
                                  : e;
      e = edgeattn::internal::HalfBitsToFloat(edgeattn::internal::FloatToHalfBits(f));
    }
  }
  v[3] = 65504.0f;  // the largest half, in V (in K it would make every score huge)
  for (size_t offset : {0, 1}) {
    TestCache t32(c32, offset * 4), t16(c16, offset);  // offset 1: the F16 storage at an odd address
    ASSERT_EQ(t32.cache.Append(k.data(), v.data(), n), Status::kOk);
    ASSERT_EQ(t16.cache.Append(k.data(), v.data(), n), Status::kOk);
    const AttentionDesc d = CachedDesc(2, c32, 1, MaskKind::kCausal);
    std::vector<float> q(2 * dk), a, b;
    for (float& x : q) x = rng.Normal();
    ASSERT_EQ(RunCached(api(), d, q.data(), t32.cache, a), Status::kOk);
    ASSERT_EQ(RunCached(api(), d, q.data(), t16.cache, b), Status::kOk);
    ASSERT_EQ(std::memcmp(a.data(), b.data(), a.size() * 4), 0) << "offset " << offset;
  }
}

// Each query head of a group gives what it gives alone against the same cache: GQA shares the K/V reads, not
// the arithmetic. Value widths 16, 67 and 131 reach every column block of the decode P·V (8, 4 and 1 vectors,
// and on AVX-512 the 16-accumulator blocks of four heads).
TEST_P(KvCacheTest, GroupedQueryHeadsMatchSingleHeads) {
  Rng rng;
  for (KvType type : kTypes) {
    for (size_t dv : {16, 67, 131}) {
      const KvCacheDesc c = MakeCacheDesc(type, 1, 24, dv, 300, 0);
      TestCache tc(c);
      std::vector<float> k, v;
      RandomRows(rng, c, 290, k, v);
      ASSERT_EQ(tc.cache.Append(k.data(), v.data(), 290), Status::kOk);
      const AttentionDesc d = CachedDesc(3, c, 4, MaskKind::kCausal);
      std::vector<float> q(3 * 4 * 24), grouped;
      for (float& x : q) x = rng.Normal();
      ASSERT_EQ(RunCached(api(), d, q.data(), tc.cache, grouped), Status::kOk);
      for (size_t h = 0; h < 4; ++h) {
        AttentionDesc one = CachedDesc(3, c, 1, MaskKind::kCausal);
        std::vector<float> qh(3 * 24), single;
        for (size_t i = 0; i < 3; ++i) std::memcpy(&qh[i * 24], &q[(i * 4 + h) * 24], 24 * 4);
        ASSERT_EQ(RunCached(api(), one, qh.data(), tc.cache, single), Status::kOk);
        for (size_t i = 0; i < 3; ++i) {
          ASSERT_EQ(std::memcmp(&single[i * dv], &grouped[(i * 4 + h) * dv], dv * 4), 0)
              << TypeName(type) << " dv " << dv << " head " << h;
        }
      }
      CheckAgainstStoredValues(d, tc, q.data(), grouped.data(), TypeName(type));
    }
  }
}

// Narrow heads (d <= 32: the MCU-sized models' widths; on AVX-512 a head of at most half a vector runs the decode
// steps on half vectors): each query head of a group gives its bits alone (one to four heads per pass), the fused
// and converted routes (aligned and misaligned storage) give the same bits, an F32 cache gives Attention's decode
// path's bits, and every row is within attention.h's bound on the stored values; widths below, at and above half
// a vector, with tails, over one and two key chunks.
TEST_P(KvCacheTest, NarrowHeadsKeepEveryBitPromise) {
  Rng rng;
  const size_t dims[][2] = {{8, 8}, {5, 7}, {16, 16}, {8, 32}, {32, 8}, {3, 12}, {9, 1}};
  for (KvType type : kTypes) {
    for (const auto& dim : dims) {
      const size_t dk = dim[0], dv = dim[1], group = 1 + rng.Index(4);
      const size_t length = EDGEATTN_TEST_SMALL_MEMORY ? 300 : (rng.Bernoulli(0.5) ? 300 : 700);
      const KvCacheDesc c = MakeCacheDesc(type, 1, dk, dv, length + 3, 0);
      TestCache aligned(c, 0), misaligned(c, 1);
      std::vector<float> k, v;
      RandomRows(rng, c, length, k, v);
      ASSERT_EQ(aligned.cache.Append(k.data(), v.data(), length), Status::kOk);
      ASSERT_EQ(misaligned.cache.Append(k.data(), v.data(), length), Status::kOk);
      const size_t q_len = 1 + rng.Index(3);
      const AttentionDesc d = CachedDesc(q_len, c, group, MaskKind::kCausal);
      std::vector<float> q(q_len * group * dk), fused, converted;
      for (float& x : q) x = rng.Normal();
      const std::string what = std::string(TypeName(type)) + " dk " + std::to_string(dk) + " dv " + std::to_string(dv) +
                               " group " + std::to_string(group) + " length " + std::to_string(length);
      ASSERT_EQ(RunCached(api(), d, q.data(), aligned.cache, fused), Status::kOk);
      ASSERT_EQ(RunCached(api(), d, q.data(), misaligned.cache, converted), Status::kOk);
      ASSERT_EQ(std::memcmp(fused.data(), converted.data(), fused.size() * 4), 0) << what;
      for (size_t h = 0; h < group; ++h) {
        const AttentionDesc one = CachedDesc(q_len, c, 1, MaskKind::kCausal);
        std::vector<float> qh(q_len * dk), single;
        for (size_t i = 0; i < q_len; ++i) std::memcpy(&qh[i * dk], &q[(i * group + h) * dk], dk * 4);
        ASSERT_EQ(RunCached(api(), one, qh.data(), aligned.cache, single), Status::kOk);
        for (size_t i = 0; i < q_len; ++i) {
          ASSERT_EQ(std::memcmp(&single[i * dv], &fused[(i * group + h) * dv], dv * 4), 0) << what << " head " << h;
        }
      }
      if (type == KvType::kF32 && !IsScalarPath()) {
        AttentionDesc full = d;
        full.kv_len = length;
        std::vector<float> direct(fused.size(), kNaN);
        std::vector<unsigned char> ws(edgeattn::AttentionWorkspaceSize(full));
        ASSERT_EQ(edgeattn::Attention(full, q.data(), k.data(), v.data(), direct.data(), ws.data(), ws.size()),
                  Status::kOk);
        ASSERT_EQ(std::memcmp(direct.data(), fused.data(), fused.size() * 4), 0) << what << " decode path";
      }
      CheckAgainstStoredValues(d, aligned, q.data(), fused.data(), what.c_str());
    }
  }
}

// Narrow heads in a ring that has wrapped: a tile's rows come in two runs, and a run may start at any row, where the
// narrow P·V keeps four chains by row (j mod 4) and the paired scores load two rows per vector. The ring read in
// place against the same positions in a window cache that never wraps and against a ring one byte off (F32 and F16:
// the converted route's f32 tiles; Q8: misaligned rows and scales): the same bits; and every output within
// attention.h's bound.
TEST_P(KvCacheTest, NarrowHeadsOnARingKeepTheirBits) {
  Rng rng;
  const size_t dims[][2] = {{8, 8}, {5, 7}, {8, 3}, {4, 8}};
  for (KvType type : kTypes) {
    for (const auto& dim : dims) {
      for (size_t window : {37, 300}) {
        const size_t dk = dim[0], dv = dim[1], group = 1 + rng.Index(4);
        const size_t capacity = window + 3 + rng.Index(4);
        const size_t total = 2 * capacity + 1 + rng.Index(capacity);  // the oldest visible slot anywhere
        const KvCacheDesc rc = MakeCacheDesc(type, 2, dk, dv, capacity, window);
        const KvCacheDesc wc = MakeCacheDesc(type, 2, dk, dv, total, window);
        TestCache ring(rc, 0), converted(rc, 1), wide(wc, 0);
        std::vector<float> k, v;
        RandomRows(rng, rc, total, k, v);
        ASSERT_EQ(ring.cache.Append(k.data(), v.data(), total), Status::kOk);
        ASSERT_EQ(converted.cache.Append(k.data(), v.data(), total), Status::kOk);
        ASSERT_EQ(wide.cache.Append(k.data(), v.data(), total), Status::kOk);
        const size_t q_len = 1 + rng.Index(std::min<size_t>(3, capacity - window + 1));
        const AttentionDesc d = CachedDesc(q_len, rc, 2 * group, MaskKind::kCausal);
        std::vector<float> q(q_len * 2 * group * dk);
        for (float& x : q) x = rng.Normal();
        const std::string what = std::string(TypeName(type)) + " dk " + std::to_string(dk) + " dv " +
                                 std::to_string(dv) + " group " + std::to_string(group) + " window " +
                                 std::to_string(window) + " total " + std::to_string(total);
        std::vector<float> out_ring, out_converted, out_wide;
        ASSERT_EQ(RunCached(api(), d, q.data(), ring.cache, out_ring), Status::kOk);
        ASSERT_EQ(RunCached(api(), d, q.data(), converted.cache, out_converted), Status::kOk);
        ASSERT_EQ(RunCached(api(), d, q.data(), wide.cache, out_wide), Status::kOk);
        ASSERT_EQ(std::memcmp(out_ring.data(), out_wide.data(), out_ring.size() * 4), 0) << what << " wide";
        ASSERT_EQ(std::memcmp(out_ring.data(), out_converted.data(), out_ring.size() * 4), 0) << what << " converted";
        CheckAgainstStoredValues(d, ring, q.data(), out_ring.data(), what.c_str());
      }
    }
  }
}

// Two kv heads at a time (x86 AVX-512: a one-chunk call on the fused route, 8-wide heads, one or two query heads per
// kv head, lib/kv_cache/kv_pair_lanes-inl.h): the single call against its work split's parts, which run one kv head
// at a time on the per-head steps, for every cache type, and an F32 cache against Attention's decode path, bit for
// bit: linear caches and rings,
// rows that see different keys, one and two 256-position tiles, every tail of eight keys, an odd last kv head; every
// output within attention.h's bound; and with a NaN in K and infinities in K and V, the parts' results (NaN where
// they are NaN: the rows with a non-finite score are redone by the scalar row kernels on both). On the other paths the
// same checks hold for the per-head steps.
TEST_P(KvCacheTest, PairedKvHeadsGiveTheBitsOfOneKvHeadAtATime) {
  if (IsScalarPath()) GTEST_SKIP() << "the scalar path has no work split of its own: the row kernels throughout";
  Rng rng;
  for (KvType type : kTypes) {
    for (size_t kv_heads : {2, 3, 4}) {
      for (size_t group : {1, 2, 3}) {
        for (int kind = 0; kind < 3; ++kind) {  // linear, a ring with a window, a short linear cache (8 slots)
          const size_t window = kind == 1 ? 20 + rng.Index(490) : 0;
          const size_t capacity = kind == 0   ? 9 + rng.Index(EDGEATTN_TEST_SMALL_MEMORY ? 300 : 504)
                                  : kind == 1 ? window + 2 + rng.Index(3)
                                              : 8;
          const size_t total = kind == 1 ? capacity + 1 + rng.Index(2 * capacity) : capacity - rng.Index(3);
          const KvCacheDesc c = MakeCacheDesc(type, kv_heads, 8, 8, capacity, window);
          std::vector<float> k, v;
          RandomRows(rng, c, total, k, v);
          const size_t q_len = 1 + rng.Index(std::min<size_t>(3, kind == 1 ? capacity - window + 1 : total));
          const MaskKind mask = rng.Bernoulli(0.7) ? MaskKind::kCausal : MaskKind::kNone;
          const AttentionDesc d = CachedDesc(q_len, c, kv_heads * group, mask);
          std::vector<float> q(q_len * d.num_heads * 8);
          for (float& x : q) x = rng.Normal();
          const std::string what = std::string(TypeName(type)) + " kv heads " + std::to_string(kv_heads) + " group " +
                                   std::to_string(group) + " capacity " + std::to_string(capacity) + " window " +
                                   std::to_string(window) + " total " + std::to_string(total) + " q_len " +
                                   std::to_string(q_len);
          for (int special = 0; special < (type == KvType::kQ8 ? 1 : 2); ++special) {  // Q8 stores finite values only
            if (special ==
                1) {  // the newest position: NaN in K of kv head 1; the one before: inf in K and V of kv head 0
              k[((total - 1) * kv_heads + 1) * 8 + rng.Index(8)] = kNaN;
              k[((total - 2) * kv_heads + 0) * 8 + rng.Index(8)] = kInf;
              v[((total - 2) * kv_heads + 0) * 8 + rng.Index(8)] = -kInf;
            }
            TestCache tc(c, 0);
            ASSERT_EQ(tc.cache.Append(k.data(), v.data(), total), Status::kOk) << what;
            std::vector<float> single, parts;
            ASSERT_EQ(RunCached(api(), d, q.data(), tc.cache, single), Status::kOk) << what;
            ASSERT_NO_FATAL_FAILURE(RunCachedParts(d, q.data(), tc.cache, parts)) << what;
            if (special == 0) {
              ASSERT_EQ(std::memcmp(single.data(), parts.data(), single.size() * 4), 0) << what << " parts";
              CheckAgainstStoredValues(d, tc, q.data(), single.data(), what.c_str());
            } else {
              ASSERT_TRUE(SameOrBothNaN(single, parts)) << what << " parts, specials";
            }
            if (type == KvType::kF32 && special == 0 && kind != 1 && q_len < edgeattn::kAttentionTiledMinQueries &&
                total > 16) {
              AttentionDesc full = d;
              full.kv_len = total;
              std::vector<float> direct(single.size(), kNaN);
              std::vector<unsigned char> ws(edgeattn::AttentionWorkspaceSize(full));
              ASSERT_EQ(edgeattn::Attention(full, q.data(), k.data(), v.data(), direct.data(), ws.data(), ws.size()),
                        Status::kOk);
              ASSERT_EQ(std::memcmp(direct.data(), single.data(), single.size() * 4), 0) << what << " decode path";
            }
          }
        }
      }
    }
  }
}

// Prefill of narrow heads (d = 8, 16; on x86 the converted route's lanes kernel, one query row and head per vector
// lane, lib/kv_cache/kv_prefill_lanes-inl.h; the decode steps elsewhere): kv_cache.h's promises for calls of 8 rows
// or more, over more than one 256-position tile, with lanes that see different keys (causal rows, windows):
// a ring against a cache that never wraps, the work split's parts against the single call, grouped heads against
// single heads, an F16 or Q8 cache against an F32 cache holding what Read returns, every output within attention.h's
// bound; and a non-finite K or V element at the newest position reaches only the last row, the one that sees it.
TEST_P(KvCacheTest, NarrowPrefillKeepsEveryPromise) {
  Rng rng;
  const size_t kKvHeads = 2;
  // Off x86 the lanes kernel is not compiled and these calls take the decode steps, which the tests above cover at
  // length: there (under QEMU in CI, where this test took 134 s of one SVE2 run) a tile and a bit, and fewer rows.
#if defined(__x86_64__) || defined(__i386__)
  const bool lanes_build = !EDGEATTN_TEST_SMALL_MEMORY;
#else
  const bool lanes_build = false;
#endif
  for (KvType type : kTypes) {
    for (size_t dim : {8, 16}) {
      for (size_t window : {0, 45, 300}) {
        const size_t group = 1 + rng.Index(4), num_heads = kKvHeads * group;
        const size_t long_q = lanes_build ? 33 + rng.Index(40) : 17 + rng.Index(24);
        const size_t q_len = rng.Bernoulli(0.5) ? 8 + rng.Index(9) : long_q;
        const size_t total = (lanes_build ? 600 : 300) + rng.Index(100);
        const size_t capacity = window == 0 ? total + rng.Index(3) : window + q_len + rng.Index(4);
        const std::string what = std::string(TypeName(type)) + " d " + std::to_string(dim) + " group " +
                                 std::to_string(group) + " q_len " + std::to_string(q_len) + " window " +
                                 std::to_string(window) + " total " + std::to_string(total);
        const KvCacheDesc rc = MakeCacheDesc(type, kKvHeads, dim, dim, capacity, window);
        const KvCacheDesc wc = MakeCacheDesc(type, kKvHeads, dim, dim, total, window);
        TestCache ring(rc, 0), wide(wc, rng.Index(4));
        std::vector<float> k, v;
        RandomRows(rng, rc, total, k, v);
        ASSERT_EQ(ring.cache.Append(k.data(), v.data(), total), Status::kOk) << what;
        ASSERT_EQ(wide.cache.Append(k.data(), v.data(), total), Status::kOk) << what;
        const AttentionDesc d = CachedDesc(q_len, rc, num_heads, MaskKind::kCausal);
        std::vector<float> q(q_len * num_heads * dim), out_ring, out_wide;
        for (float& x : q) x = rng.Normal();
        ASSERT_EQ(RunCached(api(), d, q.data(), ring.cache, out_ring), Status::kOk) << what;
        ASSERT_EQ(RunCached(api(), d, q.data(), wide.cache, out_wide), Status::kOk) << what;
        ASSERT_EQ(std::memcmp(out_ring.data(), out_wide.data(), out_ring.size() * 4), 0) << what << " ring";
        CheckAgainstStoredValues(d, wide, q.data(), out_wide.data(), what.c_str());
        // Grouped heads against each head alone.
        for (size_t r = 0; r < group; ++r) {
          const AttentionDesc one = CachedDesc(q_len, rc, kKvHeads, MaskKind::kCausal);
          std::vector<float> qh(q_len * kKvHeads * dim), single;
          for (size_t i = 0; i < q_len; ++i) {
            for (size_t g = 0; g < kKvHeads; ++g) {
              std::memcpy(&qh[(i * kKvHeads + g) * dim], &q[(i * num_heads + g * group + r) * dim], dim * 4);
            }
          }
          ASSERT_EQ(RunCached(api(), one, qh.data(), wide.cache, single), Status::kOk) << what;
          for (size_t i = 0; i < q_len; ++i) {
            for (size_t g = 0; g < kKvHeads; ++g) {
              ASSERT_EQ(std::memcmp(&single[(i * kKvHeads + g) * dim], &out_wide[(i * num_heads + g * group + r) * dim],
                                    dim * 4),
                        0)
                  << what << " row " << i << " head " << g * group + r;
            }
          }
        }
        // An F32 cache holding what the typed cache stores.
        if (type != KvType::kF32) {
          TestCache f32(MakeCacheDesc(KvType::kF32, kKvHeads, dim, dim, total, window), rng.Index(4));
          std::vector<float> kr, vr, out_f32;
          for (size_t p = 0; p < total; ++p) {
            wide.ReadPosition(p, kr, vr);
            ASSERT_EQ(f32.cache.Append(kr.data(), vr.data(), 1), Status::kOk) << what;
          }
          ASSERT_EQ(RunCached(api(), d, q.data(), f32.cache, out_f32), Status::kOk) << what;
          ASSERT_EQ(std::memcmp(out_f32.data(), out_wide.data(), out_f32.size() * 4), 0) << what << " stored values";
        }
        // The parts, last first, each with a fresh workspace, against the single call.
        if (!IsScalarPath()) {
          std::vector<float> out_parts;
          ASSERT_NO_FATAL_FAILURE(RunCachedParts(d, q.data(), ring.cache, out_parts)) << what;
          ASSERT_EQ(std::memcmp(out_parts.data(), out_ring.data(), out_ring.size() * 4), 0) << what << " parts";
        }
        // inf in V (kv head 0) and NaN in K (kv head 1) at the newest position (Q8 stores finite values only).
        if (type != KvType::kQ8) {
          k[((total - 1) * kKvHeads + 1) * dim + rng.Index(dim)] = kNaN;
          v[((total - 1) * kKvHeads + 0) * dim] = kInf;
          TestCache special(wc, rng.Index(4));
          ASSERT_EQ(special.cache.Append(k.data(), v.data(), total), Status::kOk) << what;
          std::vector<float> out_special;
          ASSERT_EQ(RunCached(api(), d, q.data(), special.cache, out_special), Status::kOk) << what;
          const size_t row = num_heads * dim;
          ASSERT_EQ(std::memcmp(out_special.data(), out_wide.data(), (q_len - 1) * row * 4), 0) << what << " specials";
          const float* last = &out_special[(q_len - 1) * row];
          for (size_t h = 0; h < num_heads; ++h) {
            if (h < group) {
              EXPECT_FALSE(std::isfinite(last[h * dim])) << what << " head " << h << ": the inf in V";
            } else {
              for (size_t c = 0; c < dim; ++c) EXPECT_TRUE(std::isnan(last[h * dim + c])) << what << " head " << h;
            }
          }
        }
      }
    }
  }
}

// A whole decode loop: a prompt prefilled in chunks, then one token at a time past the window, with a rejected
// speculative token truncated in the middle; every step against the double reference on the stored values.
TEST_P(KvCacheTest, DecodeLoopMatchesTheReferenceOnStoredValues) {
  Rng rng;
  const size_t kHeads = 4, kKvHeads = 2, kDk = 16, kDv = 12;
#if EDGEATTN_TEST_SMALL_MEMORY
  const size_t kTokens = 80;
#else
  const size_t kTokens = 300;
#endif
  for (KvType type : kTypes) {
    for (size_t window : {0, 24, 260}) {
      const size_t capacity = window == 0 ? kTokens + 8 : window + 8;
      const KvCacheDesc c = MakeCacheDesc(type, kKvHeads, kDk, kDv, capacity, window);
      TestCache tc(c, 1);
      std::vector<float> k, v;
      RandomRows(rng, c, kTokens + 1, k, v);
      std::vector<float> q((kTokens + 1) * kHeads * kDk), out;
      for (float& x : q) x = rng.Normal();
      size_t pos = 0;
      // Prefill: chunks of 9, 1 and 7 (each no longer than a ring can answer: capacity - window + 1 = 9).
      for (size_t chunk : {9, 1, 7}) {
        ASSERT_EQ(tc.cache.Append(&k[pos * kKvHeads * kDk], &v[pos * kKvHeads * kDv], chunk), Status::kOk);
        const AttentionDesc d = CachedDesc(chunk, c, kHeads, MaskKind::kCausal);
        ASSERT_EQ(RunCached(api(), d, &q[pos * kHeads * kDk], tc.cache, out), Status::kOk);
        pos += chunk;
        CheckAgainstStoredValues(d, tc, &q[(pos - chunk) * kHeads * kDk], out.data(), "prefill");
      }
      const AttentionDesc d1 = CachedDesc(1, c, kHeads, MaskKind::kCausal);
      for (; pos < kTokens; ++pos) {
        if (pos == kTokens / 2) {
          // A speculative token from other data, rejected: appended, attended, truncated.
          std::vector<float> ks(kKvHeads * kDk, 3.0f), vs(kKvHeads * kDv, -3.0f);
          ASSERT_EQ(tc.cache.Append(ks.data(), vs.data(), 1), Status::kOk);
          ASSERT_EQ(RunCached(api(), d1, &q[pos * kHeads * kDk], tc.cache, out), Status::kOk);
          ASSERT_EQ(tc.cache.Truncate(pos), Status::kOk);
        }
        ASSERT_EQ(tc.cache.Append(&k[pos * kKvHeads * kDk], &v[pos * kKvHeads * kDv], 1), Status::kOk);
        ASSERT_EQ(RunCached(api(), d1, &q[pos * kHeads * kDk], tc.cache, out), Status::kOk);
        if (pos % 7 == 0 || pos + 1 == kTokens) {
          CheckAgainstStoredValues(d1, tc, &q[pos * kHeads * kDk], out.data(), TypeName(type));
        }
      }
      EXPECT_EQ(tc.cache.length(), kTokens);
    }
  }
}

// Storage rounding end to end against unrounded f32 inputs on N(0,1) data (the figure the header states).
TEST_P(KvCacheTest, StorageErrorEndToEnd) {
  Rng rng;
  const size_t n = 256, d = 64;
  const KvCacheDesc base = MakeCacheDesc(KvType::kF32, 1, d, d, n, 0);
  std::vector<float> k, v, q(d);
  RandomRows(rng, base, n, k, v);
  for (float& x : q) x = rng.Normal();
  AttentionDesc full = CachedDesc(1, base, 1, MaskKind::kNone);
  full.kv_len = n;
  std::vector<double> exact(d);
  const RefAttentionRow ref = RefAttention(full, q.data(), k.data(), v.data(), 0, 0);
  double norm = 0;
  for (size_t c = 0; c < d; ++c) norm += ref.out[c] * ref.out[c];
  for (KvType type : {KvType::kF16, KvType::kQ8}) {
    TestCache tc(MakeCacheDesc(type, 1, d, d, n, 0));
    ASSERT_EQ(tc.cache.Append(k.data(), v.data(), n), Status::kOk);
    std::vector<float> out;
    ASSERT_EQ(RunCached(api(), CachedDesc(1, tc.desc(), 1, MaskKind::kNone), q.data(), tc.cache, out), Status::kOk);
    double err = 0;
    for (size_t c = 0; c < d; ++c) err += (out[c] - ref.out[c]) * (out[c] - ref.out[c]);
    const double rel = std::sqrt(err / norm);
    RecordProperty(TypeName(type), std::to_string(rel));
    // Q8: over 700 seeds the relative error had median 0.0083, 99th percentile 0.0126 and max 0.0144; one CI run's
    // data (seed 11806355138722610761, the SSSE3 instance) reached 0.0202 (its F16 error 5.1e-4 was high too: an
    // output sensitive to its scores, e.g. two keys near a tie), so the limit is 1.5x that, not 2e-2.
    EXPECT_LT(rel, type == KvType::kF16 ? 1e-3 : 3e-2) << TypeName(type);
  }
}

// FixedKvCache: constant-initialised static storage (one object per path: each test run starts empty), the same
// stored bits and results as a runtime cache.
using FixedCache = edgeattn::FixedKvCache<16, 2, 8, 4, KvType::kQ8, 6>;
FixedCache g_fixed_caches[16];
size_t g_fixed_used = 0;

TEST_P(KvCacheTest, FixedCacheMatchesTheRuntimeCache) {
  ASSERT_LT(g_fixed_used, 16u);
  FixedCache& g_fixed = g_fixed_caches[g_fixed_used++];
  static_assert(FixedCache::kStorageBytes == edgeattn::KvCacheStorageBytes(KvType::kQ8, 2, 8, 4, 16, 6), "");
  static_assert(FixedCache::WorkspaceBytes(1, 4) == edgeattn::AttentionCachedWorkspaceBytes(1, 4, 2, 8, 4, 16, 6), "");
  Rng rng;
  ASSERT_EQ(g_fixed.length(), 0u);
  TestCache tc(FixedCache::Desc());
  std::vector<float> k, v;
  RandomRows(rng, tc.desc(), 20, k, v);
  ASSERT_EQ(g_fixed.Append(k.data(), v.data(), 20), Status::kOk);
  ASSERT_EQ(tc.cache.Append(k.data(), v.data(), 20), Status::kOk);
  const AttentionDesc d = CachedDesc(2, tc.desc(), 4, MaskKind::kCausal);
  std::vector<float> q(2 * 4 * 8), a, b;
  for (float& x : q) x = rng.Normal();
  ASSERT_EQ(RunCached(api(), d, q.data(), g_fixed.cache(), a), Status::kOk);
  ASSERT_EQ(RunCached(api(), d, q.data(), tc.cache, b), Status::kOk);
  EXPECT_EQ(a, b);
  std::vector<float> kr, vr;
  tc.ReadPosition(19, kr, vr);
  std::vector<float> kf(kr.size()), vf(vr.size());
  ASSERT_EQ(g_fixed.Read(19, kf.data(), vf.data()), Status::kOk);
  EXPECT_EQ(kf, kr);
  EXPECT_EQ(vf, vr);
  EXPECT_EQ(g_fixed.Read(3, kf.data(), vf.data()), Status::kInvalidArgument);  // evicted
}

// The C API is the same code: statuses and results through the C structs.
TEST_P(KvCacheTest, CApiWrapsTheSameCache) {
  Rng rng;
  edgeattn_kv_cache_desc cd = {EDGEATTN_KV_F16, 1, 8, 8, 4, 0};
  std::vector<unsigned char> storage(edgeattn_kv_cache_storage_size(&cd));
  ASSERT_EQ(storage.size(), 16u + 4 * 16 * 2);
  edgeattn_kv_cache cache;
  std::memset(&cache, 0, sizeof(cache));
  EXPECT_EQ(edgeattn_kv_cache_init(&cache, &cd, storage.data(), storage.size() - 1),
            EDGEATTN_ERROR_WORKSPACE_TOO_SMALL);
  ASSERT_EQ(edgeattn_kv_cache_init(&cache, &cd, storage.data(), storage.size()), EDGEATTN_OK);
  std::vector<float> k(5 * 8), v(5 * 8), kr(8), vr(8);
  for (float& x : k) x = rng.Normal();
  for (float& x : v) x = rng.Normal();
  EXPECT_EQ(edgeattn_kv_cache_append(&cache, k.data(), v.data(), 5), EDGEATTN_ERROR_CAPACITY);
  EXPECT_EQ(cache.length, 0u);
  ASSERT_EQ(edgeattn_kv_cache_append(&cache, k.data(), v.data(), 4), EDGEATTN_OK);
  EXPECT_EQ(cache.length, 4u);
  ASSERT_EQ(edgeattn_kv_cache_read(&cache, 3, kr.data(), vr.data()), EDGEATTN_OK);
  // Position 3 as stored: each value rounded to binary16 by the independent reference (tests/half_reference.h).
  for (size_t j = 0; j < 8; ++j) {
    EXPECT_EQ(static_cast<double>(kr[j]), RefRoundToHalf(k[24 + j])) << "k column " << j;
    EXPECT_EQ(static_cast<double>(vr[j]), RefRoundToHalf(v[24 + j])) << "v column " << j;
  }
  edgeattn_attention_desc ad = {1, 0, 8, 8, 1, 0, 0.0f, EDGEATTN_MASK_CAUSAL, nullptr};
  std::vector<unsigned char> ws(edgeattn_attention_cached_workspace_size(&ad, &cache));
  ASSERT_FALSE(ws.empty());
  std::vector<float> out(8), expected;
  ASSERT_EQ(edgeattn_attention_cached(&ad, k.data(), &cache, out.data(), ws.data(), ws.size()), EDGEATTN_OK);
  KvCache view(edgeattn::internal::KvCacheState{MakeCacheDesc(KvType::kF16, 1, 8, 8, 4, 0), storage.data(),
                                                storage.size(), cache.length});
  ASSERT_EQ(RunCached(SimdApi(), CachedDesc(1, view.desc(), 1, MaskKind::kCausal), k.data(), view, expected),
            Status::kOk);
  EXPECT_EQ(out, expected);
  EXPECT_EQ(edgeattn_kv_cache_truncate(&cache, 5), EDGEATTN_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(edgeattn_kv_cache_truncate(&cache, 1), EDGEATTN_OK);
  EXPECT_EQ(cache.length, 1u);
  EXPECT_EQ(edgeattn_kv_cache_read(&cache, 1, kr.data(), vr.data()), EDGEATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(edgeattn_status_string(EDGEATTN_ERROR_CAPACITY),
               "the KV cache has no room for the positions being appended");
}

// The F16 and Q8 decode steps read the stored bytes in registers (route fused, lib/kv_cache/kv_tiles-inl.h) with the
// decode path's arithmetic per query head: they must give the bits of an F32 cache holding what Read returns,
// over row tails (widths that are no multiple of any lane count), storage at odd addresses, rings that wrap
// inside a tile, groups of 1 to 6 query heads (fused four, two and one at a time), tiles of 256 crossed, F16
// subnormals, infinities and NaNs, and Q8 rows whose scale is subnormal, underflows to 0, or is huge.
TEST_P(KvCacheTest, F16AndQ8DecodeStepsGiveTheF32CachesBitsOnTheStoredValues) {
  Rng rng;
  // The boards' RAM, and wide emulated SVE (WideSveEmulated), take fewer and shorter trials.
  const bool small = EDGEATTN_TEST_SMALL_MEMORY || WideSveEmulated();
  const size_t kTrials = small ? 10 : 24, kMaxTokens = small ? 300 : 600;
  for (size_t trial = 0; trial < kTrials; ++trial) {
    const KvType type = trial % 2 == 0 ? KvType::kF16 : KvType::kQ8;
    const size_t kv_heads = 1 + rng.Index(2), group = 1 + trial / 2 % 6;
    const size_t dk = trial % 6 == 1 ? 128 : 1 + rng.Index(70),
                 dv = trial % 6 == 3 ? 64 + rng.Index(3) : 1 + rng.Index(70);
    const size_t tokens = 1 + rng.Index(kMaxTokens);
    const size_t window = rng.Bernoulli(0.5) ? 0 : 1 + rng.Index(tokens + 20);
    const size_t capacity = window == 0 ? tokens + rng.Index(4) : window + 7 + rng.Index(3);
    const KvCacheDesc c = MakeCacheDesc(type, kv_heads, dk, dv, capacity, window);
    const KvCacheDesc c32 = MakeCacheDesc(KvType::kF32, kv_heads, dk, dv, capacity, window);
    TestCache tc(c, rng.Index(4)), t32(c32, rng.Index(4));
    const bool specials = rng.Bernoulli(0.3);
    std::vector<float> k, v, kr, vr;
    RandomRows(rng, c, 1, k, v);
    const size_t num_heads = kv_heads * group;
    std::vector<float> q(7 * num_heads * dk), a, b;
    for (size_t pos = 0; pos < tokens; ++pos) {
      for (std::vector<float>* x : {&k, &v}) {
        const float magnitude = type == KvType::kF16 ? 1.0f
                                : rng.Bernoulli(0.1) ? 1e-44f  // scale 0: stored as 0
                                : rng.Bernoulli(0.1) ? 1e-38f  // subnormal scale
                                : rng.Bernoulli(0.1) ? 1e30f
                                                     : 1.0f;
        for (float& e : *x) {
          e = rng.Normal() * magnitude;
          if (type == KvType::kF16) {
            const size_t kind = rng.Index(specials ? 200 : 8);
            if (kind == 0) e *= 0x1p-20f;  // subnormal half
            if (kind == 1 && x == &v) e = e < 0 ? -65504.0f : 65504.0f;
            if (kind == 2 && specials) e = e < 0 ? -kInf : kInf;
            if (kind == 3 && specials) e = kNaN;
          }
        }
      }
      ASSERT_EQ(tc.cache.Append(k.data(), v.data(), 1), Status::kOk);
      tc.ReadPosition(pos, kr, vr);
      ASSERT_EQ(t32.cache.Append(kr.data(), vr.data(), 1), Status::kOk);
      if (pos + 1 != tokens && rng.Index(97) != 0) continue;
      const size_t held = window != 0 ? std::min(pos + 1, capacity - window + 1) : pos + 1;
      const size_t q_len = 1 + rng.Index(std::min<size_t>(7, held));
      for (MaskKind mask : {MaskKind::kCausal, MaskKind::kNone}) {
        const AttentionDesc d = CachedDesc(q_len, c, num_heads, mask);
        for (float& x : q) x = rng.Normal();
        ASSERT_EQ(RunCached(api(), d, q.data(), tc.cache, a), Status::kOk);
        ASSERT_EQ(RunCached(api(), d, q.data(), t32.cache, b), Status::kOk);
        for (size_t e = 0; e < a.size(); ++e) {
          if (std::isnan(a[e]) && std::isnan(b[e])) continue;
          ASSERT_EQ(Bits(a[e]), Bits(b[e])) << TypeName(type) << " trial " << trial << " length " << pos + 1
                                            << " q_len " << q_len << " element " << e << ": " << a[e] << " vs " << b[e];
        }
      }
    }
  }
}

}  // namespace
}  // namespace edgeattn_test
