// SPDX-License-Identifier: Apache-2.0
// The work split (attention.h, AttentionPartCount; kv_cache.h, AttentionCachedPartCount): every part run, in a
// shuffled order, serially and on 1, 2, 3 and 8 threads, then finish, gives the single call's bits, on every path of
// every compiled target; the grid depends on the shape only; the statuses and their order; nothing written on error.
#include <gtest/gtest.h>
#include <stddef.h>
#include <stdint.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>
#if EDGEATTN_TEST_THREADS
#include <thread>
#endif

#include "edgeattn/attention.h"
#include "edgeattn/edgeattn.h"
#include "edgeattn/kv_cache.h"
#include "lib/attention/attention_path.h"
#include "tests/test_util.h"

namespace edgeattn_test {
namespace {

using edgeattn::AttentionDesc;
using edgeattn::KvCache;
using edgeattn::KvCacheDesc;
using edgeattn::KvType;
using edgeattn::MaskKind;

// The split is the SIMD entry point's (the scalar path has no split): the scalar parameter is skipped.
class AttentionSplitTest : public PathTest {
 protected:
  void SetUp() override {
    PathTest::SetUp();
    if (IsScalarPath()) GTEST_SKIP() << "the work split runs the dispatched SIMD path";
  }
};
EDGEATTN_INSTANTIATE_PATHS(AttentionSplitTest);

size_t KvHeads(const AttentionDesc& d) { return d.num_kv_heads == 0 ? d.num_heads : d.num_kv_heads; }

// How the parts run: serially in the given order, or on `threads` std::threads that take the next index of the
// order from a shared atomic counter (serially where the build has no threads: the Cortex-M boards).
struct Schedule {
  size_t threads;  // 0: serially on this thread
  std::vector<size_t> order;
};

// Runs every part of a call by `run_part(part, workspace)` under the schedule; false if a part failed.
template <class RunPart>
bool RunParts(const Schedule& s, size_t workspace_size, RunPart run_part) {
  std::atomic<size_t> next{0};
  std::atomic<bool> ok{true};
  const auto worker = [&]() {
    std::vector<unsigned char> ws(workspace_size + 1);  // +1: a workspace off its alignment
    for (size_t t = next.fetch_add(1); t < s.order.size(); t = next.fetch_add(1)) {
      if (run_part(s.order[t], ws.data() + 1, workspace_size) != edgeattn::Status::kOk) ok = false;
    }
  };
#if EDGEATTN_TEST_THREADS
  if (s.threads != 0) {
    std::vector<std::thread> pool;
    for (size_t i = 0; i < s.threads; ++i) pool.emplace_back(worker);
    for (std::thread& t : pool) t.join();
    return ok;
  }
#endif
  worker();
  return ok;
}

std::vector<Schedule> Schedules(size_t count, Rng& rng) {
  std::vector<size_t> shuffled(count);
  for (size_t i = 0; i < count; ++i) shuffled[i] = i;
  std::vector<size_t> reversed(shuffled.rbegin(), shuffled.rend());
  std::shuffle(shuffled.begin(), shuffled.end(), rng.engine());
  std::vector<Schedule> s = {{0, reversed}, {0, shuffled}};
  for (size_t threads : {1, 2, 3, 8}) s.push_back({threads, shuffled});
  return s;
}

// Inputs of one call with the shape's arrays, values N(0, sigma) and, with probability p_special per element of q,
// k and v, a NaN, +inf or -inf.
struct Inputs {
  std::vector<float> q, k, v, mask;
  Inputs(const AttentionDesc& d, Rng& rng, float sigma, double p_special) {
    q.resize(d.q_len * d.num_heads * d.head_dim);
    k.resize(d.kv_len * KvHeads(d) * d.head_dim);
    v.resize(d.kv_len * KvHeads(d) * d.value_dim);
    for (auto* x : {&q, &k, &v}) {
      for (float& f : *x) {
        f = rng.Normal(x == &v ? 1.0f : sigma);
        if (rng.Bernoulli(p_special)) f = rng.Index(3) == 0 ? kNaN : rng.Index(2) == 0 ? kInf : -kInf;
      }
    }
  }
};

// The split of desc's call against the single call, bit for bit, under every schedule.
void ExpectSplitMatches(const AttentionDesc& d, const Inputs& in, Rng& rng, const char* what) {
  const size_t out_size = d.q_len * d.num_heads * d.value_dim;
  const size_t ws_size = edgeattn::AttentionWorkspaceSize(d);
  ASSERT_NE(ws_size, 0u) << what;
  std::vector<unsigned char> ws(ws_size);
  std::vector<float> single(out_size, 7.0f);
  ASSERT_EQ(edgeattn::Attention(d, in.q.data(), in.k.data(), in.v.data(), single.data(), ws.data(), ws_size),
            edgeattn::Status::kOk)
      << what;
  const size_t count = edgeattn::AttentionPartCount(d);
  const size_t shared_size = edgeattn::AttentionSharedSize(d);
  ASSERT_GE(count, 1u) << what;
  for (const Schedule& s : Schedules(count, rng)) {
    std::vector<float> out(out_size, -3.0f);
    std::vector<unsigned char> shared(shared_size + 3, 0xA5);
    void* sh = shared_size == 0 ? nullptr : shared.data() + 3;
    ASSERT_TRUE(RunParts(s, ws_size, [&](size_t part, void* w, size_t w_size) {
      return edgeattn::AttentionPart(d, part, in.q.data(), in.k.data(), in.v.data(), out.data(), sh, shared_size, w,
                                     w_size);
    })) << what;
    ASSERT_EQ(edgeattn::AttentionFinish(d, sh, shared_size, out.data()), edgeattn::Status::kOk) << what;
    ASSERT_TRUE(SameOrBothNaN(out.data(), single.data(), out_size))
        << what << " q_len=" << d.q_len << " kv_len=" << d.kv_len << " dk=" << d.head_dim << " dv=" << d.value_dim
        << " heads=" << d.num_heads << "/" << KvHeads(d) << " causal=" << (d.mask == MaskKind::kCausal)
        << " mask=" << (d.additive_mask != nullptr) << " parts=" << count << " threads=" << s.threads;
  }
}

// One random shape of each path and split kind.
AttentionDesc RandomShape(Rng& rng, int kind) {
  const size_t dims[] = {1, 3, 8, 16, 17, 64};
  const size_t layouts[][2] = {{1, 1}, {2, 2}, {4, 2}, {4, 1}, {3, 3}};
  const auto& layout = layouts[rng.Index(5)];
  size_t q_len = 1, kv_len = 1;
  switch (kind) {
    case 0:  // packed_small (x86 AVX2/AVX-512) or small: at most 4 keys, many queries (row blocks)
      q_len = 1 + rng.Index(80), kv_len = 1 + rng.Index(4);
      break;
    case 1:  // small: up to one vector of keys
      q_len = 1 + rng.Index(70), kv_len = 1 + rng.Index(16);
      break;
    case 2:  // tiled: row blocks of 32 over blocks of 16 or 32
      q_len = 8 + rng.Index(100), kv_len = 1 + rng.Index(150);
      break;
    case 3:  // decode, one key chunk
      q_len = 1 + rng.Index(7), kv_len = 17 + rng.Index(496);
      break;
    default:  // decode, several key chunks
      q_len = 1 + rng.Index(7), kv_len = 513 + rng.Index(1100);
      break;
  }
  // Heads of at most 17 floats beyond 600 keys: K and V stay below 1 MiB for the 4 MiB boards.
  AttentionDesc d =
      MakeDesc(q_len, kv_len, dims[rng.Index(kv_len > 600 ? 5 : 6)], dims[rng.Index(kv_len > 600 ? 5 : 6)],
               rng.Bernoulli(0.5) ? MaskKind::kCausal : MaskKind::kNone, layout[0], layout[1]);
  if (layout[0] == layout[1] && rng.Bernoulli(0.5)) d.num_kv_heads = 0;
  d.scale = rng.Bernoulli(0.5) ? 0.0f : rng.Uniform(0.05f, 1.0f);
  return d;
}

TEST_P(AttentionSplitTest, PartsGiveTheSingleCallsBitsOnEveryPath) {
  Rng rng;
  size_t cases = 0;
  for (int kind = 0; kind < 5; ++kind) {
    for (int rep = 0; rep < 6; ++rep) {
      AttentionDesc d = RandomShape(rng, kind);
      Inputs in(d, rng, rng.Bernoulli(0.3) ? 3.0f : 1.0f, 0.0);
      ExpectSplitMatches(d, in, rng, "no additive mask");
      // The row path: an additive mask of 0 and -inf (some rows fully masked) or finite biases.
      in.mask.resize(d.q_len * d.kv_len);
      const bool finite = rng.Bernoulli(0.5);
      for (float& m : in.mask) m = finite ? rng.Normal(2.0f) : rng.Bernoulli(0.3) ? -kInf : 0.0f;
      d.additive_mask = in.mask.data();
      ExpectSplitMatches(d, in, rng, finite ? "finite bias" : "0/-inf mask");
      cases += 2;
    }
  }
  RecordProperty("cases", std::to_string(cases));
}

// NaN and +-inf in q, k and v (non-finite scores in some rows, of some chunks), and scores that overflow.
TEST_P(AttentionSplitTest, NonFiniteInputsGiveTheSingleCallsBits) {
  Rng rng;
  for (int kind = 0; kind < 5; ++kind) {
    for (int rep = 0; rep < 4; ++rep) {
      const AttentionDesc d = RandomShape(rng, kind);
      const Inputs in(d, rng, rep == 3 ? 1e19f : 1.0f, rep == 3 ? 0.0 : 0.002 * (rep + 1));
      ExpectSplitMatches(d, in, rng, rep == 3 ? "overflowing scores" : "NaN and infinities");
    }
  }
}

// A decode row whose +inf keys sit in different key chunks averages their V rows; a NaN in its last chunk makes
// the row NaN; a row whose every score is -inf outputs zeros; in every split.
TEST_P(AttentionSplitTest, SoftmaxRulesAcrossKeyChunks) {
  Rng rng;
  const AttentionDesc d = MakeDesc(3, 1300, 4, 3, MaskKind::kCausal);  // row i sees keys up to 1297 + i
  Inputs in(d, rng, 1.0f, 0.0);
  for (size_t c = 0; c < d.head_dim; ++c) {
    in.q[0 * d.head_dim + c] = 1e20f;  // row 0 meets +inf at keys 5 and 1200
    in.k[5 * d.head_dim + c] = 1e20f;
    in.k[1200 * d.head_dim + c] = 1e20f;
    in.q[2 * d.head_dim + c] = 0.0f;  // row 2: every score 0 * k; a NaN in key 1299 (chunk 2) makes it NaN
  }
  in.k[1299 * d.head_dim + 1] = kNaN;
  for (size_t c = 0; c < d.value_dim; ++c) {
    in.v[5 * d.value_dim + c] = 1.0f + static_cast<float>(c);
    in.v[1200 * d.value_dim + c] = 3.0f;
  }
  ExpectSplitMatches(d, in, rng, "softmax rules");
  std::vector<unsigned char> ws(edgeattn::AttentionWorkspaceSize(d));
  std::vector<float> out(d.q_len * d.value_dim);
  ASSERT_EQ(edgeattn::Attention(d, in.q.data(), in.k.data(), in.v.data(), out.data(), ws.data(), ws.size()),
            edgeattn::Status::kOk);
  for (size_t c = 0; c < d.value_dim; ++c) {
    EXPECT_EQ(out[c], (1.0f + static_cast<float>(c) + 3.0f) / 2.0f) << c;  // exact: small integers and halves
    EXPECT_TRUE(std::isnan(out[2 * d.value_dim + c])) << c;
  }
  // Every score -inf (q = -inf against positive keys): zeros, across all three chunks.
  for (float& x : in.k) x = 1.0f;
  for (size_t c = 0; c < d.head_dim; ++c) in.q[d.head_dim + c] = -kInf;
  ExpectSplitMatches(d, in, rng, "all -inf");
  ASSERT_EQ(edgeattn::Attention(d, in.q.data(), in.k.data(), in.v.data(), out.data(), ws.data(), ws.size()),
            edgeattn::Status::kOk);
  for (size_t c = 0; c < d.value_dim; ++c) EXPECT_EQ(Bits(out[d.value_dim + c]), Bits(0.0f)) << c;
}

// The grid depends on the shape alone: not on the scale, the additive mask's values, or the SIMD target.
TEST_P(AttentionSplitTest, GridDependsOnTheShapeOnly) {
  Rng rng;
  for (int kind = 0; kind < 5; ++kind) {
    AttentionDesc d = RandomShape(rng, kind);
    std::vector<float> mask_a(d.q_len * d.kv_len, 0.0f), mask_b(d.q_len * d.kv_len, -kInf);
    for (const float* mask : {static_cast<const float*>(nullptr), static_cast<const float*>(mask_a.data())}) {
      d.additive_mask = mask;
      d.scale = 0.0f;
      const size_t count = edgeattn::AttentionPartCount(d), shared = edgeattn::AttentionSharedSize(d);
      ASSERT_GE(count, 1u);
      d.scale = 0.37f;
      EXPECT_EQ(edgeattn::AttentionPartCount(d), count);
      EXPECT_EQ(edgeattn::AttentionSharedSize(d), shared);
      if (mask != nullptr) {
        d.additive_mask = mask_b.data();
        EXPECT_EQ(edgeattn::AttentionPartCount(d), count);
        EXPECT_EQ(edgeattn::AttentionSharedSize(d), shared);
      }
      for (Path path : SupportedPaths()) {
        if (path == kScalarPath) continue;
        ScopedTarget target(path);
        EXPECT_EQ(edgeattn::AttentionPartCount(d), count) << TargetName(path);
        EXPECT_EQ(edgeattn::AttentionSharedSize(d), shared) << TargetName(path);
      }
    }
  }
  // The grid itself: heads x blocks of 32 rows x chunks of 512 keys.
  EXPECT_EQ(edgeattn::AttentionPartCount(MakeDesc(1, 512, 8, 8)), 1u);
  EXPECT_EQ(edgeattn::AttentionSharedSize(MakeDesc(1, 512, 8, 8)), 0u);
  EXPECT_EQ(edgeattn::AttentionPartCount(MakeDesc(1, 513, 8, 8)), 2u);
  EXPECT_NE(edgeattn::AttentionSharedSize(MakeDesc(1, 513, 8, 8)), 0u);
  EXPECT_EQ(edgeattn::AttentionPartCount(MakeDesc(7, 4096, 8, 8, MaskKind::kCausal, 4, 2)), 32u);
  EXPECT_EQ(edgeattn::AttentionPartCount(MakeDesc(8, 4096, 8, 8, MaskKind::kNone, 4, 2)), 4u);
  EXPECT_EQ(edgeattn::AttentionPartCount(MakeDesc(65, 65, 8, 8, MaskKind::kCausal, 3)), 9u);
  EXPECT_EQ(edgeattn::AttentionSharedSize(MakeDesc(65, 65, 8, 8, MaskKind::kCausal, 3)), 0u);
  AttentionDesc masked = MakeDesc(2, 4096, 8, 8);
  std::vector<float> mask(2 * 4096, 0.0f);
  masked.additive_mask = mask.data();
  EXPECT_EQ(edgeattn::AttentionPartCount(masked), 1u);  // the row path: no key chunks
  EXPECT_EQ(edgeattn::AttentionPartCount(MakeDesc(0, 4, 8, 8)), 0u);
  EXPECT_EQ(edgeattn::AttentionSharedSize(MakeDesc(0, 4, 8, 8)), 0u);
  AttentionDesc bad = MakeDesc(2, 4096, 8, 8, MaskKind::kNone, 3, 2);  // 2 does not divide 3
  EXPECT_EQ(edgeattn::AttentionPartCount(bad), 0u);
  EXPECT_EQ(edgeattn::AttentionSharedSize(bad), 0u);
}

// Causal calls number the later row blocks first (they see more keys): part 0 writes the last block's rows.
TEST_P(AttentionSplitTest, CausalPartsRunHeaviestFirst) {
  Rng rng;
  const AttentionDesc d = MakeDesc(70, 70, 8, 8, MaskKind::kCausal);
  const Inputs in(d, rng, 1.0f, 0.0);
  std::vector<unsigned char> ws(edgeattn::AttentionWorkspaceSize(d));
  std::vector<float> out(70 * 8, kNaN);
  ASSERT_EQ(edgeattn::AttentionPartCount(d), 3u);
  ASSERT_EQ(edgeattn::AttentionPart(d, 0, in.q.data(), in.k.data(), in.v.data(), out.data(), nullptr, 0, ws.data(),
                                    ws.size()),
            edgeattn::Status::kOk);
  for (size_t i = 0; i < 70; ++i) EXPECT_EQ(std::isnan(out[i * 8]), i < 64) << i;
}

// The statuses in the API's order, and nothing written on error (out, shared).
TEST_P(AttentionSplitTest, StatusesInOrderAndNothingWritten) {
  Rng rng;
  const AttentionDesc d = MakeDesc(2, 1100, 8, 4, MaskKind::kNone, 2);
  const Inputs in(d, rng, 1.0f, 0.0);
  const size_t ws_size = edgeattn::AttentionWorkspaceSize(d), sh_size = edgeattn::AttentionSharedSize(d);
  const size_t count = edgeattn::AttentionPartCount(d);
  ASSERT_EQ(count, 6u);
  ASSERT_NE(sh_size, 0u);
  std::vector<unsigned char> ws(ws_size), shared(sh_size, 0x5A);
  std::vector<float> out(d.q_len * d.num_heads * d.value_dim, 9.0f);
  const std::vector<float> out_before = out;
  const std::vector<unsigned char> shared_before = shared;
  const float *q = in.q.data(), *k = in.k.data(), *v = in.v.data();
  using edgeattn::Status;
  const auto part = [&](const AttentionDesc& desc, size_t index, const float* qq, float* o, void* sh, size_t shs,
                        void* w, size_t ws_bytes) {
    return edgeattn::AttentionPart(desc, index, qq, k, v, o, sh, shs, w, ws_bytes);
  };
  AttentionDesc zero = d;
  zero.q_len = 0;
  AttentionDesc bad_scale = d;
  bad_scale.scale = -1.0f;
  EXPECT_EQ(part(d, count, nullptr, out.data(), nullptr, 0, nullptr, 0), Status::kNullPointer);
  EXPECT_EQ(part(zero, count, q, out.data(), nullptr, 0, nullptr, 0), Status::kInvalidShape);
  EXPECT_EQ(part(bad_scale, 0, q, out.data(), nullptr, 0, nullptr, 0), Status::kInvalidArgument);
  EXPECT_EQ(part(d, count, q, out.data(), nullptr, 0, nullptr, 0), Status::kInvalidArgument);
  EXPECT_EQ(part(d, 0, q, out.data(), shared.data(), sh_size, ws.data(), ws_size - 1), Status::kWorkspaceTooSmall);
  EXPECT_EQ(part(d, 0, q, out.data(), shared.data(), sh_size - 1, ws.data(), ws_size), Status::kWorkspaceTooSmall);
  EXPECT_EQ(part(d, 0, q, out.data(), nullptr, 0, ws.data(), ws_size), Status::kWorkspaceTooSmall);
  EXPECT_EQ(part(d, 0, q, out.data(), nullptr, sh_size, ws.data(), ws_size), Status::kNullPointer);
  EXPECT_EQ(part(d, 0, q, out.data(), shared.data(), sh_size, nullptr, ws_size), Status::kNullPointer);
  // shared overlapping out, an input or the workspace.
  EXPECT_EQ(part(d, 0, q, out.data(), out.data(), sh_size, ws.data(), ws_size), Status::kOverlap);
  EXPECT_EQ(part(d, 0, q, out.data(), const_cast<float*>(k), sh_size, ws.data(), ws_size), Status::kOverlap);
  EXPECT_EQ(part(d, 0, q, out.data(), ws.data(), sh_size, ws.data(), ws_size), Status::kOverlap);
  EXPECT_EQ(out, out_before);
  EXPECT_EQ(shared, shared_before);
  // finish
  EXPECT_EQ(edgeattn::AttentionFinish(d, shared.data(), sh_size, nullptr), Status::kNullPointer);
  EXPECT_EQ(edgeattn::AttentionFinish(zero, shared.data(), sh_size, out.data()), Status::kInvalidShape);
  EXPECT_EQ(edgeattn::AttentionFinish(bad_scale, shared.data(), sh_size, out.data()), Status::kInvalidArgument);
  EXPECT_EQ(edgeattn::AttentionFinish(d, shared.data(), sh_size - 1, out.data()), Status::kWorkspaceTooSmall);
  EXPECT_EQ(edgeattn::AttentionFinish(d, nullptr, sh_size, out.data()), Status::kNullPointer);
  EXPECT_EQ(edgeattn::AttentionFinish(d, out.data(), sh_size, out.data()), Status::kOverlap);
  EXPECT_EQ(out, out_before);
  // Without key chunks, finish only checks: shared may be null, out is not touched.
  const AttentionDesc rows = MakeDesc(40, 40, 8, 4);
  std::vector<float> out2(40 * 4, 1.0f);
  EXPECT_EQ(edgeattn::AttentionSharedSize(rows), 0u);
  EXPECT_EQ(edgeattn::AttentionFinish(rows, nullptr, 0, out2.data()), Status::kOk);
  EXPECT_EQ(out2, std::vector<float>(40 * 4, 1.0f));
  // The C API: the same statuses, NULL desc.
  EXPECT_EQ(edgeattn_attention_part_count(nullptr), 0u);
  EXPECT_EQ(edgeattn_attention_shared_size(nullptr), 0u);
  EXPECT_EQ(edgeattn_attention_part(nullptr, 0, q, k, v, out.data(), nullptr, 0, ws.data(), ws_size),
            EDGEATTN_ERROR_NULL_POINTER);
  EXPECT_EQ(edgeattn_attention_finish(nullptr, nullptr, 0, out.data()), EDGEATTN_ERROR_NULL_POINTER);
}

// The C API drives the same split (a decode step of two heads over three key chunks).
TEST_P(AttentionSplitTest, CApiMatchesTheSingleCall) {
  Rng rng;
  const AttentionDesc d = MakeDesc(1, 1500, 16, 16, MaskKind::kCausal, 4, 2);
  const Inputs in(d, rng, 1.0f, 0.0);
  edgeattn_attention_desc c{};
  c.q_len = d.q_len;
  c.kv_len = d.kv_len;
  c.head_dim = d.head_dim;
  c.value_dim = d.value_dim;
  c.num_heads = d.num_heads;
  c.num_kv_heads = d.num_kv_heads;
  c.mask = EDGEATTN_MASK_CAUSAL;
  const size_t ws_size = edgeattn_attention_workspace_size(&c), sh_size = edgeattn_attention_shared_size(&c);
  const size_t count = edgeattn_attention_part_count(&c);
  ASSERT_EQ(count, 12u);
  std::vector<unsigned char> ws(ws_size), shared(sh_size);
  std::vector<float> single(4 * 16), out(4 * 16);
  ASSERT_EQ(edgeattn_attention(&c, in.q.data(), in.k.data(), in.v.data(), single.data(), ws.data(), ws_size),
            EDGEATTN_OK);
  for (size_t part = count; part-- > 0;) {
    ASSERT_EQ(edgeattn_attention_part(&c, part, in.q.data(), in.k.data(), in.v.data(), out.data(), shared.data(),
                                      sh_size, ws.data(), ws_size),
              EDGEATTN_OK);
  }
  ASSERT_EQ(edgeattn_attention_finish(&c, shared.data(), sh_size, out.data()), EDGEATTN_OK);
  EXPECT_TRUE(SameOrBothNaN(out, single));
}

// ---- The cached split.

// A cache over a vector, its storage `misalign` bytes off a 64-byte boundary, filled with `length` random positions
// (Q8: finite values only; F16: within its range), some of them non-finite when p_special > 0.
struct SplitCache {
  std::vector<unsigned char> bytes;
  KvCache cache;
  SplitCache(const KvCacheDesc& d, size_t misalign, size_t length, Rng& rng, double p_special) {
    const size_t size = edgeattn::KvCacheStorageSize(d);
    bytes.assign(size + 64 + misalign, 0);
    const uintptr_t base = reinterpret_cast<uintptr_t>(bytes.data());
    unsigned char* storage = bytes.data() + (64 - base % 64) % 64 + misalign;
    EXPECT_EQ(cache.Init(d, storage, size), edgeattn::Status::kOk);
    std::vector<float> k(d.num_kv_heads * d.head_dim), v(d.num_kv_heads * d.value_dim);
    for (size_t t = 0; t < length; ++t) {
      for (auto* x : {&k, &v}) {
        for (float& f : *x) {
          f = rng.Normal();
          if (d.type != KvType::kQ8 && rng.Bernoulli(p_special))
            f = rng.Index(3) == 0 ? kNaN : rng.Index(2) ? kInf : -kInf;
        }
      }
      EXPECT_EQ(cache.Append(k.data(), v.data(), 1), edgeattn::Status::kOk);
    }
  }
};

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

void ExpectCachedSplitMatches(const AttentionDesc& d, const std::vector<float>& q, const KvCache& cache, Rng& rng,
                              const char* what) {
  const size_t out_size = d.q_len * d.num_heads * d.value_dim;
  const size_t ws_size = edgeattn::AttentionCachedWorkspaceSize(d, cache);
  ASSERT_NE(ws_size, 0u) << what;
  std::vector<unsigned char> ws(ws_size);
  std::vector<float> single(out_size, 7.0f);
  ASSERT_EQ(edgeattn::AttentionCached(d, q.data(), cache, single.data(), ws.data(), ws_size), edgeattn::Status::kOk)
      << what;
  const size_t count = edgeattn::AttentionCachedPartCount(d, cache);
  const size_t shared_size = edgeattn::AttentionCachedSharedSize(d, cache);
  ASSERT_GE(count, 1u) << what;
  for (const Schedule& s : Schedules(count, rng)) {
    std::vector<float> out(out_size, -3.0f);
    std::vector<unsigned char> shared(shared_size + 1, 0xA5);
    void* sh = shared_size == 0 ? nullptr : shared.data() + 1;
    ASSERT_TRUE(RunParts(s, ws_size, [&](size_t part, void* w, size_t w_size) {
      return edgeattn::AttentionCachedPart(d, part, q.data(), cache, out.data(), sh, shared_size, w, w_size);
    })) << what;
    ASSERT_EQ(edgeattn::AttentionCachedFinish(d, cache, sh, shared_size, out.data()), edgeattn::Status::kOk) << what;
    ASSERT_TRUE(SameOrBothNaN(out.data(), single.data(), out_size))
        << what << " q_len=" << d.q_len << " length=" << cache.length() << " window=" << cache.desc().window
        << " heads=" << d.num_heads << "/" << cache.desc().num_kv_heads << " parts=" << count
        << " threads=" << s.threads;
  }
}

// Head widths of the random caches: up to 1.5k positions of 2 kv heads stay below 0.5 MiB on the 4 MiB boards.
#if EDGEATTN_TEST_SMALL_MEMORY
constexpr size_t kMaxCachedWidth = 16;
#else
constexpr size_t kMaxCachedWidth = 40;
#endif

// Random caches (F32, F16, Q8; linear and ring), decode steps and prefill chunks, causal and not, GQA.
TEST_P(AttentionSplitTest, CachedPartsGiveTheSingleCallsBits) {
  Rng rng;
  size_t cases = 0;
  for (KvType type : {KvType::kF32, KvType::kF16, KvType::kQ8}) {
    for (int rep = 0; rep < 6; ++rep) {
      const bool ring = rep % 2 == 1;
      const size_t kv_heads = 1 + rng.Index(2), heads = kv_heads * (1 + rng.Index(3));
      const size_t dk = 1 + rng.Index(kMaxCachedWidth), dv = 1 + rng.Index(kMaxCachedWidth);
      const bool prefill = rep >= 4;
      const size_t q_len = prefill ? 8 + rng.Index(60) : 1 + rng.Index(7);
      // Up to 1400 keys and rings of 600 to 800 slots; half of both under wide emulated SVE (WideSveEmulated):
      // linear caches past one chunk of 512 keys, and rings that wrap, either way.
      const size_t half = WideSveEmulated() ? 2 : 1;
      const size_t length = q_len + rng.Index(1400 / half);
      const size_t capacity = ring ? (600 + rng.Index(200)) / half : length + rng.Index(9);
      const size_t window = ring ? capacity - q_len + 1 - rng.Index(100) : 0;
      const KvCacheDesc c = [&] {
        KvCacheDesc x;
        x.type = type;
        x.num_kv_heads = kv_heads;
        x.head_dim = dk;
        x.value_dim = dv;
        x.capacity = capacity;
        x.window = window;
        return x;
      }();
      SplitCache tc(c, rng.Index(4), length, rng, rep == 1 ? 0.002 : 0.0);
      std::vector<float> q(q_len * heads * dk);
      for (float& x : q) x = rng.Normal();
      for (MaskKind mask : {MaskKind::kCausal, MaskKind::kNone}) {
        ExpectCachedSplitMatches(CachedDesc(q_len, c, heads, mask), q, tc.cache, rng,
                                 type == KvType::kF32   ? "f32"
                                 : type == KvType::kF16 ? "f16"
                                                        : "q8");
        ++cases;
      }
    }
  }
  RecordProperty("cases", std::to_string(cases));
}

// A ring and a linear cache holding the same visible positions give the same bits through the split too; an F32
// cache without window gives Attention's bits (the decode path's chunks are the cache's).
TEST_P(AttentionSplitTest, CachedChunksAreLogicalPositions) {
  Rng rng;
  const size_t length = 1700, q_len = 3, heads = 4, kv_heads = 2, dk = 12, dv = 9;
  KvCacheDesc lin;
  lin.type = KvType::kF32;
  lin.num_kv_heads = kv_heads;
  lin.head_dim = dk;
  lin.value_dim = dv;
  lin.capacity = length;
  lin.window = 0;
  std::vector<float> k(length * kv_heads * dk), v(length * kv_heads * dv), q(q_len * heads * dk);
  for (float& x : k) x = rng.Normal();
  for (float& x : v) x = rng.Normal();
  for (float& x : q) x = rng.Normal();
  std::vector<unsigned char> lin_storage(edgeattn::KvCacheStorageSize(lin));
  KvCache linear;
  ASSERT_EQ(linear.Init(lin, lin_storage.data(), lin_storage.size()), edgeattn::Status::kOk);
  ASSERT_EQ(linear.Append(k.data(), v.data(), length), edgeattn::Status::kOk);
  const AttentionDesc d = CachedDesc(q_len, lin, heads, MaskKind::kCausal);
  ExpectCachedSplitMatches(d, q, linear, rng, "linear");
  AttentionDesc full = MakeDesc(q_len, length, dk, dv, MaskKind::kCausal, heads, kv_heads);
  std::vector<unsigned char> ws(edgeattn::AttentionWorkspaceSize(full));
  std::vector<float> direct(q_len * heads * dv), cached(q_len * heads * dv);
  ASSERT_EQ(edgeattn::Attention(full, q.data(), k.data(), v.data(), direct.data(), ws.data(), ws.size()),
            edgeattn::Status::kOk);
  std::vector<unsigned char> cws(edgeattn::AttentionCachedWorkspaceSize(d, linear));
  ASSERT_EQ(edgeattn::AttentionCached(d, q.data(), linear, cached.data(), cws.data(), cws.size()),
            edgeattn::Status::kOk);
  EXPECT_TRUE(SameOrBothNaN(direct, cached));
  EXPECT_EQ(edgeattn::AttentionCachedPartCount(d, linear), edgeattn::AttentionPartCount(full) / 2);  // kv heads
  // The last 1100 positions visible: a window of 1098 (+ q_len - 1) in a ring of 1200 that wrapped, and a linear
  // cache truncated to hold the same positions' view through the same window.
  KvCacheDesc rg = lin;
  rg.capacity = 1200;
  rg.window = 1098;
  std::vector<unsigned char> ring_storage(edgeattn::KvCacheStorageSize(rg));
  KvCache ring;
  ASSERT_EQ(ring.Init(rg, ring_storage.data(), ring_storage.size()), edgeattn::Status::kOk);
  ASSERT_EQ(ring.Append(k.data(), v.data(), length), edgeattn::Status::kOk);
  KvCacheDesc lw = lin;
  lw.window = 1098;
  std::vector<unsigned char> lw_storage(edgeattn::KvCacheStorageSize(lw));
  KvCache windowed;
  ASSERT_EQ(windowed.Init(lw, lw_storage.data(), lw_storage.size()), edgeattn::Status::kOk);
  ASSERT_EQ(windowed.Append(k.data(), v.data(), length), edgeattn::Status::kOk);
  const AttentionDesc dr = CachedDesc(q_len, rg, heads, MaskKind::kCausal);
  ExpectCachedSplitMatches(dr, q, ring, rng, "ring");
  std::vector<float> from_ring(cached.size()), from_linear(cached.size());
  std::vector<unsigned char> rws(edgeattn::AttentionCachedWorkspaceSize(dr, ring));
  ASSERT_EQ(edgeattn::AttentionCached(dr, q.data(), ring, from_ring.data(), rws.data(), rws.size()),
            edgeattn::Status::kOk);
  std::vector<unsigned char> lws(edgeattn::AttentionCachedWorkspaceSize(dr, windowed));
  ASSERT_EQ(edgeattn::AttentionCached(dr, q.data(), windowed, from_linear.data(), lws.data(), lws.size()),
            edgeattn::Status::kOk);
  EXPECT_TRUE(SameOrBothNaN(from_ring, from_linear));
  EXPECT_EQ(edgeattn::AttentionCachedPartCount(dr, ring), edgeattn::AttentionCachedPartCount(dr, windowed));
}

TEST_P(AttentionSplitTest, CachedStatusesInOrderAndNothingWritten) {
  Rng rng;
  KvCacheDesc c;
  c.type = KvType::kF16;
  c.num_kv_heads = 1;
  c.head_dim = 8;
  c.value_dim = 8;
  c.capacity = 1100;
  c.window = 0;
  SplitCache tc(c, 0, 1100, rng, 0.0);
  const AttentionDesc d = CachedDesc(1, c, 2, MaskKind::kCausal);
  std::vector<float> q(2 * 8, 0.5f), out(2 * 8, 9.0f);
  const std::vector<float> out_before = out;
  const size_t count = edgeattn::AttentionCachedPartCount(d, tc.cache);
  const size_t ws_size = edgeattn::AttentionCachedWorkspaceSize(d, tc.cache);
  const size_t sh_size = edgeattn::AttentionCachedSharedSize(d, tc.cache);
  ASSERT_EQ(count, 3u);
  ASSERT_NE(sh_size, 0u);
  std::vector<unsigned char> ws(ws_size), shared(sh_size, 0x5A);
  const std::vector<unsigned char> shared_before = shared;
  using edgeattn::Status;
  const auto part = [&](const AttentionDesc& desc, size_t index, const float* qq, void* sh, size_t shs, void* w,
                        size_t wss) {
    return edgeattn::AttentionCachedPart(desc, index, qq, tc.cache, out.data(), sh, shs, w, wss);
  };
  AttentionDesc bad = d;
  bad.kv_len = 5;  // the cache decides kv_len
  AttentionDesc zero = d;
  zero.q_len = 0;
  EXPECT_EQ(part(d, count, nullptr, nullptr, 0, nullptr, 0), Status::kNullPointer);
  EXPECT_EQ(part(zero, count, q.data(), nullptr, 0, nullptr, 0), Status::kInvalidShape);
  EXPECT_EQ(part(bad, 0, q.data(), nullptr, 0, nullptr, 0), Status::kInvalidArgument);
  EXPECT_EQ(part(d, count, q.data(), nullptr, 0, nullptr, 0), Status::kInvalidArgument);
  EXPECT_EQ(part(d, 0, q.data(), shared.data(), sh_size, ws.data(), ws_size - 1), Status::kWorkspaceTooSmall);
  EXPECT_EQ(part(d, 0, q.data(), shared.data(), sh_size - 1, ws.data(), ws_size), Status::kWorkspaceTooSmall);
  EXPECT_EQ(part(d, 0, q.data(), nullptr, sh_size, ws.data(), ws_size), Status::kNullPointer);
  EXPECT_EQ(part(d, 0, q.data(), out.data(), sh_size, ws.data(), ws_size), Status::kOverlap);
  EXPECT_EQ(part(d, 0, q.data(), ws.data(), sh_size, ws.data(), ws_size), Status::kOverlap);
  EXPECT_EQ(out, out_before);
  EXPECT_EQ(shared, shared_before);
  EXPECT_EQ(edgeattn::AttentionCachedFinish(d, tc.cache, shared.data(), sh_size, nullptr), Status::kNullPointer);
  EXPECT_EQ(edgeattn::AttentionCachedFinish(zero, tc.cache, shared.data(), sh_size, out.data()), Status::kInvalidShape);
  EXPECT_EQ(edgeattn::AttentionCachedFinish(bad, tc.cache, shared.data(), sh_size, out.data()),
            Status::kInvalidArgument);
  EXPECT_EQ(edgeattn::AttentionCachedFinish(d, tc.cache, shared.data(), sh_size - 1, out.data()),
            Status::kWorkspaceTooSmall);
  EXPECT_EQ(edgeattn::AttentionCachedFinish(d, tc.cache, out.data(), sh_size, out.data()), Status::kOverlap);
  EXPECT_EQ(out, out_before);
  EXPECT_EQ(edgeattn::AttentionCachedPartCount(zero, tc.cache), 0u);
  EXPECT_EQ(edgeattn::AttentionCachedSharedSize(bad, tc.cache), 0u);
  EXPECT_EQ(edgeattn_attention_cached_part_count(nullptr, nullptr), 0u);
  EXPECT_EQ(edgeattn_attention_cached_finish(nullptr, nullptr, nullptr, 0, out.data()), EDGEATTN_ERROR_NULL_POINTER);
  // The count follows the visible positions, not the scale or the stored values.
  AttentionDesc scaled = d;
  scaled.scale = 0.3f;
  EXPECT_EQ(edgeattn::AttentionCachedPartCount(scaled, tc.cache), count);
  EXPECT_EQ(edgeattn::AttentionCachedSharedSize(scaled, tc.cache), sh_size);
}

}  // namespace
}  // namespace edgeattn_test
