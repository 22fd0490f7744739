// SPDX-License-Identifier: Apache-2.0
// The backend seam (lib/common/backend.h; docs/architecture.md, "Backends") exercised with a test double
// (tests/backend_double): a backend's kernels run on its path and only there, the path is forced like a Highway
// target, its entry points give the bits of the static target whose kernels the double wraps, and what it does not
// supply (everything but the decode steps) falls back to Highway's static target. Built only with the double
// (edgeattn_backend_tests); the same executable runs the attention and KV cache suites on the backend's path.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "lib/common/backend.h"
#include "tests/backend_double/backend_double.h"
#include "tests/test_util.h"

namespace edgeattn_test {
namespace {

size_t DoubleCalls() { return g_double_scores_calls.load() + g_double_pv_calls.load(); }

// One decode call of each entry point that reaches the decode steps, and one of a function the double does not
// supply; every output concatenated.
std::vector<float> RunEverything(Rng& rng) {
  const size_t keys = 600, dim = 24;  // two key chunks: Attention's and the cache's chunked decode
  std::vector<float> k(keys * 2 * dim), v(keys * 2 * dim), q(4 * dim), all;
  for (float& x : k) x = rng.Normal();
  for (float& x : v) x = rng.Normal();
  for (float& x : q) x = rng.Normal();
  const edgeattn::AttentionDesc d = MakeDesc(1, keys, dim, dim, edgeattn::MaskKind::kNone, 4, 2);
  std::vector<unsigned char> ws(edgeattn::AttentionWorkspaceSize(d));
  std::vector<float> out(4 * dim);
  EXPECT_EQ(edgeattn::Attention(d, q.data(), k.data(), v.data(), out.data(), ws.data(), ws.size()), Status::kOk);
  all.insert(all.end(), out.begin(), out.end());
  edgeattn::KvCacheDesc cd;
  cd.type = edgeattn::KvType::kF16;
  cd.num_kv_heads = 2;
  cd.head_dim = cd.value_dim = dim;
  cd.capacity = keys;
  std::vector<unsigned char> storage(edgeattn::KvCacheStorageSize(cd));
  edgeattn::KvCache cache;
  EXPECT_EQ(cache.Init(cd, storage.data(), storage.size()), Status::kOk);
  EXPECT_EQ(cache.Append(k.data(), v.data(), keys), Status::kOk);
  edgeattn::AttentionDesc cached = d;
  cached.kv_len = 0;
  cached.mask = edgeattn::MaskKind::kCausal;
  std::vector<unsigned char> cws(edgeattn::AttentionCachedWorkspaceSize(cached, cache));
  EXPECT_EQ(edgeattn::AttentionCached(cached, q.data(), cache, out.data(), cws.data(), cws.size()), Status::kOk);
  all.insert(all.end(), out.begin(), out.end());
  float dot = 0.0f;
  EXPECT_EQ(edgeattn::Dot(k.data(), v.data(), k.size(), &dot), Status::kOk);
  all.push_back(dot);
  return all;
}

TEST(BackendSeam, TheBackendHasAPathNotAHighwayTarget) {
  ASSERT_TRUE(EDGEATTN_HAS_BACKEND);
  const std::vector<Path> paths = AllPaths();
  EXPECT_NE(std::find(paths.begin(), paths.end(), kBackendPath), paths.end());
  EXPECT_STREQ(TargetName(kBackendPath), "TEST_DOUBLE");
  EXPECT_STREQ(edgeattn::internal::BackendName(), "TEST_DOUBLE");
}

// Forcing a path selects the double exactly on its own path, and SimdTarget names what runs.
TEST(BackendSeam, ItsKernelsRunOnItsPathOnly) {
  Rng rng;
  for (Path path : SupportedPaths()) {
    if (path == kScalarPath) continue;
    ScopedTarget target(path);
    const size_t before = DoubleCalls();
    RunEverything(rng);
    if (path == kBackendPath) {
      EXPECT_GT(DoubleCalls(), before) << "the double's decode kernels did not run on its path";
    } else {
      EXPECT_EQ(DoubleCalls(), before) << "the double ran on " << TargetName(path);
    }
    EXPECT_STREQ(edgeattn::SimdTarget(), TargetName(path));
  }
}

// The double wraps the static target's kernels: its path gives that target's bits, the functions it does not
// supply included (they are the static target's own).
TEST(BackendSeam, ItGivesTheStaticTargetsBitsAndFallsBack) {
  const uint64_t seed = TestSeed();
  std::vector<float> on_backend, on_static;
  {
    ScopedTarget target(kBackendPath);
    Rng rng;
    on_backend = RunEverything(rng);
  }
  {
    ScopedTarget target(HighwayTargetOf(kBackendPath));
    Rng rng;
    on_static = RunEverything(rng);
  }
  ASSERT_EQ(on_backend.size(), on_static.size());
  EXPECT_EQ(std::memcmp(on_backend.data(), on_static.data(), on_backend.size() * sizeof(float)), 0) << seed;
}

}  // namespace
}  // namespace edgeattn_test
