// SPDX-License-Identifier: Apache-2.0
// Shared test machinery: run a test on every path (scalar + each SIMD target), fresh random inputs with a
// reproducible seed, buffers at any misalignment with guard words around them, ULP arithmetic.
#ifndef EDGEATTN_TESTS_TEST_UTIL_H_
#define EDGEATTN_TESTS_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <stddef.h>
#include <stdint.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#if EDGEATTN_TEST_THREADS
#include <mutex>
#endif
#include <random>
#include <string>
#if EDGEATTN_TEST_THREADS
#include <thread>
#endif
#include <vector>

#include "edgeattn/edgeattn.hpp"

namespace edgeattn_test {

using edgeattn::Status;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr double kU = 0x1p-24;  // unit roundoff of float

// Lengths up to 3 * (widest vector in floats) + 1 cover every tail of every target (AVX-512 and SVE-512: 16).
constexpr size_t kMaxTailTestLength = 3 * 16 + 1;

// Whether the environment variable EDGEATTN_TEST_WIDE_SVE_EMULATED is "1", as the test presets aarch64-sve2-512
// and aarch64-sve-256 set it: QEMU 7.2 emulates SVE wider than 128 bits about 15 times slower per element than at
// 128 bits (docs/performance.md, "Stop 55"). There the few tests whose time is one large problem on the SIMD
// kernels take a smaller problem on the same path (each says which); aarch64-sve2-128 runs the scalable code on
// the full sizes.
inline bool WideSveEmulated() {
  const char* value = std::getenv("EDGEATTN_TEST_WIDE_SVE_EMULATED");
  return value != nullptr && value[0] == '1' && value[1] == '\0';
}

// ---------------------------------------------------------------------------------------------------------
// One function table per path: the scalar reference or the dispatched SIMD entry points.
struct Api {
  Status (*dot)(const float*, const float*, size_t, float*);
  Status (*exp)(const float*, float*, size_t);
  Status (*softmax)(const float*, float*, size_t, size_t);
  size_t (*attention_workspace_size)(const edgeattn::AttentionDesc&);
  Status (*attention)(const edgeattn::AttentionDesc&, const float*, const float*, const float*, float*, void*, size_t);
  Status (*attention_weights)(const edgeattn::AttentionDesc&, const float*, const float*, float*);
  Status (*linear)(const float*, size_t, size_t, const float*, const float*, size_t, float*);
  Status (*add_positional_encoding)(float*, size_t, size_t, size_t);
  Status (*rms_norm)(const float*, size_t, size_t, const float*, float, float*);
  Status (*layer_norm)(const float*, size_t, size_t, const float*, const float*, float, float*);
  Status (*linear_transposed)(const float*, size_t, size_t, const float*, const float*, size_t, float*);
  Status (*rope)(const edgeattn::RopeDesc&, float*, size_t, size_t);
  Status (*rope_with_table)(const edgeattn::RopeDesc&, const edgeattn::RopeTableView&, float*, size_t, size_t);
  size_t (*attention_cached_workspace_size)(const edgeattn::AttentionDesc&, const edgeattn::KvCache&);
  Status (*attention_cached)(const edgeattn::AttentionDesc&, const float*, const edgeattn::KvCache&, float*, void*,
                             size_t);
};
const Api& ScalarApi();
const Api& SimdApi();

// Test parameter: 0 is the scalar path; kBackendPath the build's backend (lib/common/backend.h: its kernels on the
// static target, in a build that has one); otherwise a Highway target bit. The SIMD paths are forced for the
// duration of the test. Tests are instantiated for every compiled path, so that their names do not depend on the
// CPU, and skip (visibly) on a CPU that lacks the target; loops over paths use SupportedPaths().
using Path = int64_t;
constexpr Path kScalarPath = 0;
constexpr Path kBackendPath = -1;  // not a Highway target: no single bit set
// The Highway target a SIMD path's code is compiled for (the static target for the backend path).
Path HighwayTargetOf(Path path);
std::vector<Path> AllPaths();        // the scalar path and every compiled target, best first
std::vector<Path> SupportedPaths();  // the scalar path and the compiled targets this CPU runs, best first
bool CpuSupports(Path path);
std::string PathName(const ::testing::TestParamInfo<Path>& info);
const char* TargetName(Path target);

class PathTest : public ::testing::TestWithParam<Path> {
 protected:
  void SetUp() override;
  void TearDown() override;
  bool IsScalarPath() const { return GetParam() == kScalarPath; }
  Path Target() const { return HighwayTargetOf(GetParam()); }  // the Highway target the path runs on
  const Api& api() const { return IsScalarPath() ? ScalarApi() : SimdApi(); }
};

#define EDGEATTN_INSTANTIATE_PATHS(suite) \
  INSTANTIATE_TEST_SUITE_P(Paths, suite, ::testing::ValuesIn(::edgeattn_test::AllPaths()), ::edgeattn_test::PathName)

// Forces one SIMD path: a Highway target (no-op in static-dispatch builds, which have one) with the backend off, or
// the backend. Restores the default (the best target; the backend on, where there is one) on destruction.
class ScopedTarget {
 public:
  explicit ScopedTarget(Path target);
  ~ScopedTarget();
  ScopedTarget(const ScopedTarget&) = delete;
  ScopedTarget& operator=(const ScopedTarget&) = delete;
};

// An attention descriptor with the given shape (scale 0: 1/sqrt(head_dim), no additive mask).
edgeattn::AttentionDesc MakeDesc(size_t q_len, size_t kv_len, size_t head_dim, size_t value_dim,
                                 edgeattn::MaskKind mask = edgeattn::MaskKind::kNone, size_t num_heads = 1,
                                 size_t num_kv_heads = 0);

// Runs fn(begin, end) on disjoint slices of [0, n), on all cores (inline where the build runs no threads).
template <class Fn>
void ParallelFor(size_t n, Fn fn);

// A mutex for merging ParallelFor results, and its scope guard; nothing at all where the build runs no threads.
#if EDGEATTN_TEST_THREADS
using TestMutex = std::mutex;
#else
struct TestMutex {
  void lock() {}
  void unlock() {}
};
#endif
class ScopedLock {
 public:
  explicit ScopedLock(TestMutex& m) : m_(m) { m_.lock(); }
  ~ScopedLock() { m_.unlock(); }
  ScopedLock(const ScopedLock&) = delete;
  ScopedLock& operator=(const ScopedLock&) = delete;

 private:
  TestMutex& m_;
};

// ---------------------------------------------------------------------------------------------------------
// Random inputs. The seed is fresh each run, printed, and can be fixed with EDGEATTN_TEST_SEED=<n>.
uint64_t TestSeed();

class Rng {
 public:
  Rng();  // seeded from TestSeed() and the current test's name, so tests do not share streams
  float Uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(engine_); }
  float Normal(float sigma = 1.0f) { return std::normal_distribution<float>(0.0f, sigma)(engine_); }
  // Heavy-tailed: Cauchy with the given scale, clamped to +-1e30 so it stays finite.
  float Cauchy(float scale);
  size_t Index(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(engine_); }
  bool Bernoulli(double p) { return std::bernoulli_distribution(p)(engine_); }
  std::mt19937_64& engine() { return engine_; }

 private:
  std::mt19937_64 engine_;
};

// ---------------------------------------------------------------------------------------------------------
// A float array starting `misalign` floats after a 64-byte boundary, with guard words on both sides so that a
// write past either end is caught.
class GuardedBuffer {
 public:
  GuardedBuffer(size_t size, size_t misalign);
  float* data() { return storage_.data() + begin_; }
  const float* data() const { return storage_.data() + begin_; }
  size_t size() const { return size_; }
  float& operator[](size_t i) { return data()[i]; }
  float operator[](size_t i) const { return data()[i]; }
  // Whether every guard word still holds its pattern.
  bool GuardsIntact() const;
  void Fill(float value);
  std::vector<uint32_t> Bits() const;  // for "outputs untouched" checks

 private:
  static constexpr size_t kGuard = 32;  // floats on each side: more than any vector
  std::vector<float> storage_;
  size_t begin_;
  size_t size_;
};

inline uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

// The bits of n floats, for bit-for-bit comparisons.
std::vector<uint32_t> BitsOf(const float* x, size_t n);
inline std::vector<uint32_t> BitsOf(const std::vector<float>& v) { return BitsOf(v.data(), v.size()); }

// n floats of a and b equal bit for bit, or both NaN: for the promises that give a NaN where the other call has one
// but leave its sign and payload to the order of the operations (attention.h's work split, kv_cache.h's routes). A
// failure names the first index that differs.
::testing::AssertionResult SameOrBothNaN(const float* a, const float* b, size_t n);
::testing::AssertionResult SameOrBothNaN(const std::vector<float>& a, const std::vector<float>& b);

// Units in the last place of `exact` rounded to float (for exact >= FLT_MIN in magnitude).
double UlpOf(double exact);
// 1 / UlpOf(exact), exactly, from the bits of exact rounded to float (the exhaustive sweeps: frexp and ldexp would
// cost more than the rest of their check).
inline double InverseUlp(double exact) {
  uint32_t bits;
  const float rounded = std::fabs(static_cast<float>(exact));
  std::memcpy(&bits, &rounded, sizeof(bits));
  const uint64_t inverse_bits = static_cast<uint64_t>(1023 + 23 + 127 - (bits >> 23)) << 52;  // 2^(23 - e)
  double inverse;
  std::memcpy(&inverse, &inverse_bits, sizeof(inverse));
  return inverse;
}
// |got - exact| in ULPs of exact.
double UlpError(float got, double exact);

template <class Fn>
void ParallelFor(size_t n, Fn fn) {
#if EDGEATTN_TEST_THREADS
  const size_t workers = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
  std::vector<std::thread> threads;
  for (size_t w = 0; w < workers; ++w) threads.emplace_back(fn, n * w / workers, n * (w + 1) / workers);
  for (std::thread& t : threads) t.join();
#else
  fn(size_t{0}, n);
#endif
}

}  // namespace edgeattn_test

#endif  // EDGEATTN_TESTS_TEST_UTIL_H_
