// SPDX-License-Identifier: Apache-2.0
#include "tests/test_util.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "hwy/highway.h"
#include "hwy/targets.h"
#include "lib/common/backend.h"

namespace edgeattn_test {

const Api& ScalarApi() {
  static const Api api = {edgeattn::scalar::Dot,
                          edgeattn::scalar::Exp,
                          edgeattn::scalar::Softmax,
                          edgeattn::scalar::AttentionWorkspaceSize,
                          edgeattn::scalar::Attention,
                          edgeattn::scalar::AttentionWeights,
                          edgeattn::scalar::Linear,
                          edgeattn::scalar::AddPositionalEncoding,
                          edgeattn::scalar::RmsNorm,
                          edgeattn::scalar::LayerNorm,
                          edgeattn::scalar::LinearTransposed,
                          edgeattn::scalar::Rope,
                          edgeattn::scalar::RopeWithTable,
                          edgeattn::scalar::AttentionCachedWorkspaceSize,
                          edgeattn::scalar::AttentionCached};
  return api;
}

const Api& SimdApi() {
  static const Api api = {edgeattn::Dot,
                          edgeattn::Exp,
                          edgeattn::Softmax,
                          edgeattn::AttentionWorkspaceSize,
                          edgeattn::Attention,
                          edgeattn::AttentionWeights,
                          edgeattn::Linear,
                          edgeattn::AddPositionalEncoding,
                          edgeattn::RmsNorm,
                          edgeattn::LayerNorm,
                          edgeattn::LinearTransposed,
                          edgeattn::Rope,
                          edgeattn::RopeWithTable,
                          edgeattn::AttentionCachedWorkspaceSize,
                          edgeattn::AttentionCached};
  return api;
}

std::vector<Path> AllPaths() {
  std::vector<Path> paths = {kScalarPath};
#if EDGEATTN_HAS_BACKEND
  paths.push_back(kBackendPath);
#endif
#if HWY_COMPILE_ONLY_STATIC
  // A HELIUM build's static target with the backend off is not in its library (lib/common/backend.h,
  // EDGEATTN_BACKEND_SWITCHABLE); that SCALAR code is tested by the builds without a backend (M4, M7).
#if !defined(EDGEATTN_TEST_STATIC_TARGET_PATH) || EDGEATTN_TEST_STATIC_TARGET_PATH
  paths.push_back(HWY_STATIC_TARGET);
#endif
#else
  // Lower bits are better targets.
  for (int64_t targets = HWY_TARGETS; targets != 0; targets &= targets - 1) paths.push_back(targets & -targets);
#endif
  return paths;
}

namespace {
// The target a PathTest or ScopedTarget forces now (0: none). Highway 1.0.3 answers SupportedTargets() with the
// forced mask while one is forced, so CpuSupports lifts the forcing to ask and puts it back.
Path g_forced_target = 0;

// target 0: the default. A Highway target turns the backend off; the backend path turns it on and forces the
// static target (its kernels run there; the functions it does not supply are the static target's).
void ForceTarget(Path target) {
  edgeattn::internal::SetBackendEnabledForTest(target == 0 || target == kBackendPath);
#if HWY_COMPILE_ONLY_STATIC
  (void)target;
#else
  g_forced_target = target == kBackendPath ? HWY_STATIC_TARGET : target;
  hwy::SetSupportedTargetsForTest(g_forced_target);
#endif
}
}  // namespace

Path HighwayTargetOf(Path path) { return path == kBackendPath ? HWY_STATIC_TARGET : path; }

bool CpuSupports(Path path) {
#if HWY_COMPILE_ONLY_STATIC
  (void)path;
  return true;  // the build only runs where its static target does
#else
  if (path == kScalarPath || path == kBackendPath) return true;  // a backend is built for this machine's static target
  hwy::SetSupportedTargetsForTest(0);
  const bool supported = (hwy::SupportedTargets() & path) != 0;
  if (g_forced_target != 0) hwy::SetSupportedTargetsForTest(g_forced_target);
  return supported;
#endif
}

std::vector<Path> SupportedPaths() {
  std::vector<Path> paths;
  for (Path p : AllPaths()) {
    if (CpuSupports(p)) paths.push_back(p);
  }
  return paths;
}

const char* TargetName(Path target) {
  return target == kScalarPath    ? "ScalarPath"
         : target == kBackendPath ? edgeattn::internal::BackendName()
                                  : hwy::TargetName(target);
}

std::string PathName(const ::testing::TestParamInfo<Path>& info) { return TargetName(info.param); }

ScopedTarget::ScopedTarget(Path target) {
  if (target != kScalarPath) ForceTarget(target);
}

ScopedTarget::~ScopedTarget() { ForceTarget(0); }

void PathTest::SetUp() {
  if (!CpuSupports(GetParam())) GTEST_SKIP() << TargetName(GetParam()) << " is compiled but this CPU lacks it";
  if (!IsScalarPath()) ForceTarget(GetParam());
  ::testing::Test::RecordProperty("seed", std::to_string(TestSeed()));
}

void PathTest::TearDown() { ForceTarget(0); }

edgeattn::AttentionDesc MakeDesc(size_t q_len, size_t kv_len, size_t head_dim, size_t value_dim,
                                 edgeattn::MaskKind mask, size_t num_heads, size_t num_kv_heads) {
  edgeattn::AttentionDesc d;
  d.q_len = q_len;
  d.kv_len = kv_len;
  d.head_dim = head_dim;
  d.value_dim = value_dim;
  d.mask = mask;
  d.num_heads = num_heads;
  d.num_kv_heads = num_kv_heads;
  return d;
}

uint64_t TestSeed() {
  static const uint64_t seed = [] {
    uint64_t s;
    if (const char* env = std::getenv("EDGEATTN_TEST_SEED")) {
      s = std::strtoull(env, nullptr, 0);
    } else {
      std::random_device rd;
      s = (uint64_t{rd()} << 32) ^ rd();
    }
    std::printf("edgeattn tests: random seed %s (set EDGEATTN_TEST_SEED=%s to repeat)\n", std::to_string(s).c_str(),
                std::to_string(s).c_str());
    return s;
  }();
  return seed;
}

Rng::Rng() {
  std::string name;
  if (const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info()) {
    name = std::string(info->test_suite_name()) + "." + info->name();
  }
  std::seed_seq seq{static_cast<uint32_t>(TestSeed()), static_cast<uint32_t>(TestSeed() >> 32),
                    static_cast<uint32_t>(std::hash<std::string>()(name))};
  engine_.seed(seq);
}

float Rng::Cauchy(float scale) {
  const float c = std::cauchy_distribution<float>(0.0f, scale)(engine_);
  return std::max(-1e30f, std::min(1e30f, c));
}

GuardedBuffer::GuardedBuffer(size_t size, size_t misalign) : size_(size) {
  storage_.assign(size + 2 * kGuard + 16 + misalign, 0.0f);
  const uintptr_t base = reinterpret_cast<uintptr_t>(storage_.data() + kGuard);
  const size_t to_boundary = ((64 - base % 64) % 64) / sizeof(float);
  begin_ = kGuard + to_boundary + misalign;
  const float guard = []() {
    const uint32_t pattern = 0x7FBADBADu;  // a signalling NaN no kernel produces
    float f;
    std::memcpy(&f, &pattern, sizeof(f));
    return f;
  }();
  std::fill(storage_.begin(), storage_.end(), guard);
  Fill(0.0f);
}

bool GuardedBuffer::GuardsIntact() const {
  for (size_t i = 0; i < storage_.size(); ++i) {
    if (i >= begin_ && i < begin_ + size_) continue;
    if (edgeattn_test::Bits(storage_[i]) != 0x7FBADBADu) return false;
  }
  return true;
}

void GuardedBuffer::Fill(float value) { std::fill(data(), data() + size_, value); }

std::vector<uint32_t> BitsOf(const float* x, size_t n) {
  std::vector<uint32_t> bits(n);
  if (n != 0) std::memcpy(bits.data(), x, n * sizeof(float));
  return bits;
}

::testing::AssertionResult SameOrBothNaN(const float* a, const float* b, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    if (Bits(a[i]) != Bits(b[i])) {
      return ::testing::AssertionFailure() << "at " << i << " of " << n << ": " << a[i] << " (0x" << std::hex
                                           << Bits(a[i]) << "), " << b[i] << " (0x" << Bits(b[i]) << ")" << std::dec;
    }
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult SameOrBothNaN(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return ::testing::AssertionFailure() << "sizes " << a.size() << ", " << b.size();
  return SameOrBothNaN(a.data(), b.data(), a.size());
}

std::vector<uint32_t> GuardedBuffer::Bits() const {
  std::vector<uint32_t> bits(size_);
  for (size_t i = 0; i < size_; ++i) bits[i] = edgeattn_test::Bits(data()[i]);
  return bits;
}

double UlpOf(double exact) {
  const float rounded = static_cast<float>(std::fabs(exact));
  int e;
  std::frexp(rounded, &e);
  return std::ldexp(1.0, e - 24);
}

double UlpError(float got, double exact) { return std::fabs(static_cast<double>(got) - exact) / UlpOf(exact); }

}  // namespace edgeattn_test
