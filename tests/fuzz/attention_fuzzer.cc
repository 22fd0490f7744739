// SPDX-License-Identifier: Apache-2.0
// Fuzzes attention and attention weights on both paths: random shapes, head layouts, scales, mask kinds,
// additive masks and workspace sizes, valid and invalid. The expected status comes from the contract
// (attention.h / edgeattn.h), stated here independently of the library's checks; on success every output is
// checked against the documented bound, on failure the outputs must be untouched. Keys that no query may see
// hold NaN in K and V: it must not reach any output.
#include <stdint.h>

#include "tests/fuzz/fuzz_util.h"
#include "tests/reference.h"

namespace {

using edgeattn::AttentionDesc;
using edgeattn::MaskKind;
using edgeattn::Status;

bool FitsBytes(size_t a, size_t b, size_t c) {
  if (a == 0 || b == 0 || c == 0) return true;
  return a <= SIZE_MAX / sizeof(float) / b / c;
}

// The status the contract promises for this descriptor and workspace size (buffers are never null here).
Status ExpectedStatus(const AttentionDesc& d, size_t workspace_size, bool with_workspace) {
  const size_t kv_heads = d.num_kv_heads == 0 ? d.num_heads : d.num_kv_heads;
  if (d.q_len == 0 || d.kv_len == 0 || d.head_dim == 0 || d.value_dim == 0 || d.num_heads == 0) {
    return Status::kInvalidShape;
  }
  if (!FitsBytes(d.q_len, d.num_heads, d.head_dim) || !FitsBytes(d.kv_len, kv_heads, d.head_dim) ||
      !FitsBytes(d.kv_len, kv_heads, d.value_dim) || !FitsBytes(d.q_len, d.kv_len, 1)) {
    return Status::kInvalidShape;
  }
  // Only the arrays a call uses limit its shape: Attention's output, AttentionWeights' weights (attention.h).
  if (with_workspace ? !FitsBytes(d.q_len, d.num_heads, d.value_dim) : !FitsBytes(d.num_heads, d.q_len, d.kv_len)) {
    return Status::kInvalidShape;
  }
  // Attention's workspace is a byte count too (attention.h: AttentionWorkspaceBytes is 0 when it overflows).
  if (with_workspace && edgeattn::AttentionWorkspaceBytes(d.q_len, d.kv_len, d.head_dim, d.value_dim) == 0)
    return Status::kInvalidShape;
  if (d.num_heads % kv_heads != 0) return Status::kInvalidArgument;
  if (!(d.scale >= 0.0f) || std::isinf(d.scale)) return Status::kInvalidArgument;
  if (d.mask != MaskKind::kNone && d.mask != MaskKind::kCausal) return Status::kInvalidArgument;
  if (with_workspace &&
      workspace_size < edgeattn::AttentionWorkspaceBytes(d.q_len, d.kv_len, d.head_dim, d.value_dim)) {
    return Status::kWorkspaceTooSmall;
  }
  return Status::kOk;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  using namespace edgeattn_fuzz;
  FuzzedDataProvider data(bytes, size);
  FuzzTarget target(data);
  AttentionDesc d;
  // Up to 40 queries: 8 or more (without an additive mask) take the tiled path, whose query blocks are one or two
  // vectors of rows (up to 32 on AVX-512), so several blocks and a partial one; up to 40 keys: more than one
  // vector even on AVX-512, so the small paths are not the only ones reached.
  d.q_len = data.ConsumeIntegralInRange<size_t>(0, 40);
  d.kv_len = data.ConsumeIntegralInRange<size_t>(0, 40);
  d.head_dim = data.ConsumeIntegralInRange<size_t>(0, 20);
  d.value_dim = data.ConsumeIntegralInRange<size_t>(0, 20);
  d.num_heads = data.ConsumeIntegralInRange<size_t>(0, 4);
  d.num_kv_heads = data.ConsumeIntegralInRange<size_t>(0, 4);
  const bool huge = data.ConsumeIntegralInRange<int>(0, 15) == 0;  // sizes that must be refused, never used
  if (huge) {
    size_t* fields[] = {&d.q_len, &d.kv_len, &d.head_dim, &d.value_dim, &d.num_heads};
    *fields[data.ConsumeIntegralInRange<size_t>(0, 4)] = SIZE_MAX / data.ConsumeIntegralInRange<size_t>(1, 64);
  }
  switch (data.ConsumeIntegralInRange<int>(0, 7)) {
    case 0:
      d.scale = -0.5f;
      break;
    case 1:
      d.scale = std::numeric_limits<float>::quiet_NaN();
      break;
    case 2:
      d.scale = std::numeric_limits<float>::infinity();
      break;
    case 3:
    case 4:
      d.scale = data.ConsumeFloatingPointInRange<float>(0.01f, 2.0f);
      break;
    default:
      d.scale = 0.0f;
  }
  const int mask_kind = data.ConsumeIntegralInRange<int>(0, 4);  // 2..4 are not mask kinds
  d.mask = static_cast<MaskKind>(mask_kind >= 2 && mask_kind <= 3 ? mask_kind - 2 : mask_kind);
  const int additive = data.ConsumeIntegralInRange<int>(0, 2);  // none, 0/-inf, finite bias with -inf
  const bool short_workspace = data.ConsumeIntegralInRange<int>(0, 7) == 0;

  const size_t kv_heads = d.num_kv_heads == 0 ? d.num_heads : d.num_kv_heads;
  const bool usable = !huge && d.q_len && d.kv_len && d.head_dim && d.value_dim && d.num_heads;
  // Buffers: exact sizes when the shape can exist, a small dummy otherwise (a correct library never reads it).
  std::vector<float> q(usable ? d.q_len * d.num_heads * d.head_dim : 4),
      k(usable ? d.kv_len * kv_heads * d.head_dim : 4), v(usable ? d.kv_len * kv_heads * d.value_dim : 4),
      mask(usable ? d.q_len * d.kv_len : 4, 0.0f);
  for (float& f : q) f = data.ConsumeFloatingPointInRange<float>(-3, 3);
  for (float& f : k) f = data.ConsumeFloatingPointInRange<float>(-3, 3);
  for (float& f : v) f = data.ConsumeFloatingPointInRange<float>(-3, 3);
  if (additive != 0) {
    for (float& f : mask) {
      f = data.ConsumeBool() ? -std::numeric_limits<float>::infinity()
                             : (additive == 1 ? 0.0f : data.ConsumeFloatingPointInRange<float>(-5, 5));
    }
    d.additive_mask = mask.data();
  }
  // Poison keys that no query sees (causal and additive mask together): NaN there must not reach any output.
  if (usable) {
    for (size_t j = 0; j < d.kv_len; ++j) {
      bool seen = false;
      for (size_t i = 0; i < d.q_len; ++i) {
        const bool causal_ok = d.mask != MaskKind::kCausal || j + d.q_len <= i + d.kv_len;
        const bool mask_ok = d.additive_mask == nullptr || mask[i * d.kv_len + j] != -INFINITY;
        seen |= causal_ok && mask_ok;
      }
      if (seen) continue;
      for (size_t t = 0; t < kv_heads * d.head_dim; ++t) k[j * kv_heads * d.head_dim + t] = NAN;
      for (size_t t = 0; t < kv_heads * d.value_dim; ++t) v[j * kv_heads * d.value_dim + t] = NAN;
    }
  }

  const size_t need = usable ? edgeattn::AttentionWorkspaceBytes(d.q_len, d.kv_len, d.head_dim, d.value_dim) : 64;
  const size_t ws_size = short_workspace && need > 0 ? need - 1 : need;
  std::vector<unsigned char> ws(ws_size + 1);
  const size_t out_size = usable ? d.q_len * d.num_heads * d.value_dim : 4;
  const size_t weights_size = usable ? d.num_heads * d.q_len * d.kv_len : 4;
  const Status expected = ExpectedStatus(d, ws_size, true);
  const Status expected_weights = ExpectedStatus(d, 0, false);
  // A huge shape that still fits in size_t describes buffers this harness cannot have: a caller passing it lies
  // about its buffers, and only the checks before any memory is touched (shape, argument) can be tested.
  if (huge && (expected == Status::kOk || expected_weights == Status::kOk)) return 0;

  for (int path = 0; path < 2; ++path) {
    const char* name = path == 0 ? target.name() : "scalar path";
    std::vector<float> out(out_size, 7.0f), weights(weights_size, 7.0f);
    const Status s = path == 0
                         ? edgeattn::Attention(d, q.data(), k.data(), v.data(), out.data(), ws.data(), ws_size)
                         : edgeattn::scalar::Attention(d, q.data(), k.data(), v.data(), out.data(), ws.data(), ws_size);
    const Status sw = path == 0 ? edgeattn::AttentionWeights(d, q.data(), k.data(), weights.data())
                                : edgeattn::scalar::AttentionWeights(d, q.data(), k.data(), weights.data());
    FUZZ_CHECK(s == expected, "%s: attention status %d, expected %d (Lq %zu Lk %zu dk %zu dv %zu heads %zu/%zu)", name,
               static_cast<int>(s), static_cast<int>(expected), d.q_len, d.kv_len, d.head_dim, d.value_dim, d.num_heads,
               d.num_kv_heads);
    FUZZ_CHECK(sw == expected_weights, "%s: weights status %d, expected %d (Lq %zu Lk %zu dk %zu dv %zu heads %zu/%zu)",
               name, static_cast<int>(sw), static_cast<int>(expected_weights), d.q_len, d.kv_len, d.head_dim,
               d.value_dim, d.num_heads, d.num_kv_heads);
    if (s != Status::kOk) FUZZ_CHECK(SameBits(out, std::vector<float>(out_size, 7.0f)), "%s: out written", name);
    if (sw != Status::kOk) {
      FUZZ_CHECK(SameBits(weights, std::vector<float>(weights_size, 7.0f)), "%s: weights written", name);
    }
    if (s != Status::kOk || sw != Status::kOk) continue;
    for (size_t i = 0; i < d.q_len; ++i) {
      for (size_t h = 0; h < d.num_heads; ++h) {
        const edgeattn_test::RefAttentionRow ref = edgeattn_test::RefAttention(d, q.data(), k.data(), v.data(), i, h);
        for (size_t c = 0; c < d.value_dim; ++c) {
          const float got = out[(i * d.num_heads + h) * d.value_dim + c];
          FUZZ_CHECK(std::fabs(got - ref.out[c]) <= ref.bound[c], "%s: out[%zu][%zu][%zu] = %a, exact %a, bound %g",
                     name, i, h, c, got, ref.out[c], ref.bound[c]);
        }
        for (size_t j = 0; j < d.kv_len; ++j) {
          const float got = weights[(h * d.q_len + i) * d.kv_len + j];
          const double p = ref.weights[j];
          FUZZ_CHECK(p == 0.0 ? got == 0.0f : std::fabs(got - p) <= p * (2 * ref.sigma + 0x1p-21) + FLT_MIN,
                     "%s: weight[%zu][%zu][%zu] = %a, exact %a", name, h, i, j, got, p);
        }
      }
    }
  }
  return 0;
}
