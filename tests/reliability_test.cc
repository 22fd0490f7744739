// SPDX-License-Identifier: Apache-2.0
// Determinism (repeated calls give the same bits), thread safety (concurrent calls give the bits of serial
// calls), and agreement across SIMD targets (which paths give identical bits, measured and printed; the groups
// that follow from the arithmetic being the same are asserted).
#include <gtest/gtest.h>
#include <stdint.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#if EDGEATTN_TEST_THREADS
#include <thread>
#endif
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/reliability_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn_test {
namespace HWY_NAMESPACE {

// For the target this copy is compiled for: float lanes, the Highway implementation (ops/*-inl.h) its
// operations come from, and whether MulAdd is fused. Horizontal sums add lanes in an order of each
// implementation's own, so reductions agree only within one implementation.
uint64_t TargetTraits() {
  const uint64_t lanes = hwy::HWY_NAMESPACE::Lanes(hwy::HWY_NAMESPACE::ScalableTag<float>());
#if HWY_TARGET == HWY_SSSE3 || HWY_TARGET == HWY_SSE4
  const uint64_t family = 1;  // x86_128-inl.h
#elif HWY_TARGET == HWY_AVX2
  const uint64_t family = 2;  // x86_256-inl.h
#elif HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  const uint64_t family = 3;  // x86_512-inl.h
#elif HWY_TARGET == HWY_NEON
  const uint64_t family = 4;  // arm_neon-inl.h
#elif HWY_TARGET == HWY_SVE || HWY_TARGET == HWY_SVE2 || HWY_TARGET == HWY_SVE_256 || HWY_TARGET == HWY_SVE2_128
  const uint64_t family = 5;  // arm_sve-inl.h
#elif HWY_TARGET == HWY_EMU128
  const uint64_t family = 6;  // emu128-inl.h
#else
  const uint64_t family = 7 + static_cast<uint64_t>(HWY_TARGET % 1000);  // its own
#endif
  return (lanes << 16) | (family << 1) | (HWY_NATIVE_FMA ? 1 : 0);
}

// Whether this target's vector multiply flushes a subnormal operand to zero, measured (the library's trait,
// lib/common/vector_unit-inl.h, is derived from the architecture; this asks the hardware).
bool VectorMultiplyFlushes() {
  const hwy::HWY_NAMESPACE::ScalableTag<float> d;
  volatile float tiny = 0x1p-130f;  // subnormal; volatile: no constant folding
  const auto x = hwy::HWY_NAMESPACE::Mul(hwy::HWY_NAMESPACE::Set(d, tiny), hwy::HWY_NAMESPACE::Set(d, 1.0f));
  return hwy::HWY_NAMESPACE::GetLane(x) == 0.0f;
}

}  // namespace HWY_NAMESPACE
}  // namespace edgeattn_test
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "lib/common/arch.h"
#include "lib/common/dispatch.h"
#include "tests/test_util.h"

namespace edgeattn_test {
HWY_EXPORT(TargetTraits);
HWY_EXPORT(VectorMultiplyFlushes);
namespace {

// The same question for the vector unit the dispatched code runs on: Helium's when the HELIUM backend runs (one
// VMUL.F32 written out: clang-14 would scalarise the intrinsic onto the FPU, which keeps subnormals), else
// Highway's target's (the test double's backend runs on its static target).
bool DispatchedVectorMultiplyFlushes() {
#if EDGEATTN_HAS_BACKEND && EDGEATTN_HAS_MVE_FLOAT
  if (edgeattn::internal::BackendEnabled()) {
    const uint32_t tiny = 0x00080000u, one = 0x3F800000u;  // 2^-130 (subnormal) and 1.0f
    uint32_t product;
    __asm__ volatile("vdup.32 q0, %1\n\tvdup.32 q1, %2\n\tvmul.f32 q0, q0, q1\n\tvmov %0, s0"
                     : "=r"(product)
                     : "r"(tiny), "r"(one)
                     : "q0", "q1");
    return product == 0u;
  }
#endif
  return HWY_DYNAMIC_DISPATCH(VectorMultiplyFlushes)();
}

using edgeattn::AttentionDesc;
using edgeattn::MaskKind;

// Every kernel's output for one fixed set of inputs, as bits.
struct Outputs {
  std::map<std::string, std::vector<uint32_t>> bits;
  bool operator==(const Outputs& other) const { return bits == other.bits; }
};

class Workload {
 public:
  explicit Workload(Rng& rng) : desc_(MakeDesc(13, 29, 40, 24, MaskKind::kCausal, 4, 2)) {
    for (auto* v : {&x_, &w_, &b_, &q_, &k_, &v_, &mask_}) {
      for (float& f : *v) f = rng.Normal(3.0f);
    }
    for (size_t t = 0; t < mask_.size(); t += 5) mask_[t] = -kInf;
    desc_.additive_mask = mask_.data();
  }

  // Runs every kernel on one path; all buffers are local, so concurrent calls share only the inputs. Placement 0
  // runs on 64-byte aligned copies with a zeroed workspace and zeroed outputs; any other placement p puts every
  // input and output p % 16 floats past a 64-byte boundary, the workspace (p * 7) % 64 bytes past one, and fills
  // the workspace and the outputs with random bytes from p: neither their alignment nor what they hold on entry
  // may change a bit of the results.
  Outputs Run(const Api& api, bool scalar, uint64_t placement = 0) const {
    Outputs o;
    const size_t off = placement % 16;
    std::mt19937_64 bytes(placement);
    GuardedBuffer x = Placed(x_, off), w = Placed(w_, off), b = Placed(b_, off), q = Placed(q_, off),
                  k = Placed(k_, off), v = Placed(v_, off), mask = Placed(mask_, off), pe = Placed(x_, off);
    GuardedBuffer exp = Garbage(x_.size(), off, placement, bytes), softmax = Garbage(x_.size(), off, placement, bytes),
                  linear = Garbage(7 * 48, off, placement, bytes), out = Garbage(13 * 4 * 24, off, placement, bytes),
                  weights = Garbage(4 * 13 * 29, off, placement, bytes);
    AttentionDesc desc = desc_;
    desc.additive_mask = mask.data();
    float dot = 0;
    const size_t ws_size = api.attention_workspace_size(desc), ws_offset = (placement * 7) % 64;
    std::vector<unsigned char> ws_storage(ws_size + 64 + ws_offset);
    unsigned char* ws = ws_storage.data() + (64 - reinterpret_cast<uintptr_t>(ws_storage.data()) % 64) + ws_offset;
    if (placement != 0) {
      for (size_t i = 0; i < ws_size; ++i) ws[i] = static_cast<unsigned char>(bytes());
    }
    EXPECT_EQ(api.exp(x.data(), exp.data(), x_.size()), Status::kOk);
    EXPECT_EQ(api.softmax(x.data(), softmax.data(), 7, x_.size() / 7), Status::kOk);
    EXPECT_EQ(api.dot(x.data(), x.data() + 333, 333, &dot), Status::kOk);
    EXPECT_EQ(api.linear(x.data(), 7, 64, w.data(), b.data(), 48, linear.data()), Status::kOk);
    EXPECT_EQ(api.add_positional_encoding(pe.data(), 7, x_.size() / 7, 4321), Status::kOk);
    EXPECT_EQ(api.attention(desc, q.data(), k.data(), v.data(), out.data(), ws, ws_size), Status::kOk);
    EXPECT_EQ(api.attention_weights(desc, q.data(), k.data(), weights.data()), Status::kOk);
    // A fixed-shape object per call (its workspace is per object), inputs copied into its typed arrays.
    std::unique_ptr<Fixed> fixed(new Fixed());
    Fixed::Query fq;
    Fixed::Key fk;
    Fixed::Value fv;
    Fixed::Output fixed_out;
    std::memcpy(fq, q_.data(), sizeof(fq));
    std::memcpy(fk, k_.data(), sizeof(fk));
    std::memcpy(fv, v_.data(), sizeof(fv));
    EXPECT_EQ(scalar ? fixed->RunScalar(fq, fk, fv, fixed_out) : fixed->Run(fq, fk, fv, fixed_out), Status::kOk);
    for (const GuardedBuffer* buffer : {&exp, &softmax, &linear, &out, &weights, &pe}) {
      EXPECT_TRUE(buffer->GuardsIntact()) << "placement " << placement;
    }
    o.bits["exp"] = exp.Bits();
    o.bits["softmax"] = softmax.Bits();
    o.bits["dot"] = BitsOf(std::vector<float>{dot});
    o.bits["linear"] = linear.Bits();
    o.bits["positional_encoding"] = pe.Bits();
    o.bits["attention"] = out.Bits();
    o.bits["attention_weights"] = weights.Bits();
    o.bits["fixed_attention"] = BitsOf(std::vector<float>(&fixed_out[0][0], &fixed_out[0][0] + 64));
    return o;
  }

 private:
  using Fixed = edgeattn::FixedAttention<4, 8, 16, 16, 1, 1, MaskKind::kCausal>;
  static GuardedBuffer Placed(const std::vector<float>& values, size_t misalign) {
    GuardedBuffer buffer(values.size(), misalign);
    std::copy(values.begin(), values.end(), buffer.data());
    return buffer;
  }
  // Random bit patterns (NaNs and infinities among them) for placements other than 0; zeros for placement 0.
  static GuardedBuffer Garbage(size_t n, size_t misalign, uint64_t placement, std::mt19937_64& bytes) {
    GuardedBuffer buffer(n, misalign);
    if (placement != 0) {
      for (size_t i = 0; i < n; ++i) {
        const uint32_t pattern = static_cast<uint32_t>(bytes());
        std::memcpy(&buffer[i], &pattern, sizeof(float));
      }
    }
    return buffer;
  }
  std::vector<float> x_ = std::vector<float>(7 * 333), w_ = std::vector<float>(64 * 48), b_ = std::vector<float>(48),
                     q_ = std::vector<float>(13 * 4 * 40), k_ = std::vector<float>(29 * 2 * 40),
                     v_ = std::vector<float>(29 * 2 * 24), mask_ = std::vector<float>(13 * 29);
  AttentionDesc desc_;
};

class ReliabilityTest : public PathTest {};
EDGEATTN_INSTANTIATE_PATHS(ReliabilityTest);

// Each repetition moves every buffer to another misalignment and gives the kernels a workspace and outputs full
// of fresh random bytes: a result that depended on leftover workspace contents, uninitialised scratch or the
// buffers' addresses would change.
TEST_P(ReliabilityTest, RepeatedCallsGiveIdenticalBits) {
  Rng rng;
  const Workload work(rng);
  const Outputs first = work.Run(api(), IsScalarPath());
  for (int i = 0; i < 6; ++i) {
    const uint64_t placement = 1 + rng.engine()();
    EXPECT_TRUE(work.Run(api(), IsScalarPath(), placement) == first)
        << "call " << i + 2 << ", placement " << placement << ": " << placement % 16 << " floats off 64 bytes, "
        << "workspace " << (placement * 7) % 64 << " bytes off";
  }
}

TEST_P(ReliabilityTest, ConcurrentCallsGiveTheBitsOfSerialCalls) {
#if !EDGEATTN_TEST_THREADS
  GTEST_SKIP() << "threads disabled in this build (EDGEATTN_TEST_THREADS=OFF: bare metal, or qemu-aarch64 7.2 "
                  "with the cross toolchain's glibc, which hangs in pthread_create)";
#else
  Rng rng;
  const Workload work(rng);
  const Outputs serial = work.Run(api(), IsScalarPath());
  constexpr int kThreads = 4, kRounds = 8;
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  // The forced target is process-wide: every thread runs this test's path.
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) mismatches[t] += work.Run(api(), IsScalarPath()) == serial ? 0 : 1;
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
#endif
}

// The library's "this vector unit flushes subnormals" trait agrees with the hardware on every SIMD path.
TEST(VectorUnit, FlushTraitMatchesTheHardware) {
  for (Path p : SupportedPaths()) {
    if (p == kScalarPath) continue;
    ScopedTarget target(p);
    EXPECT_EQ(edgeattn::internal::DispatchedVectorFlushesSubnormals(), DispatchedVectorMultiplyFlushes())
        << TargetName(p);
  }
}

TEST(Agreement, BitIdenticalPathsAcrossTargets) {
  Rng rng;
  const Workload work(rng);
  const std::vector<Path> paths = SupportedPaths();
  std::vector<Outputs> outputs;
  std::vector<uint64_t> traits;
  for (Path p : paths) {
    ScopedTarget target(p);
    outputs.push_back(work.Run(p == kScalarPath ? ScalarApi() : SimdApi(), p == kScalarPath));
    traits.push_back(p == kScalarPath ? 0 : HWY_DYNAMIC_DISPATCH(TargetTraits)());
  }
  for (const auto& kernel : outputs[0].bits) {
    const std::string& name = kernel.first;
    // Print the groups of paths with identical bits.
    std::string groups;
    std::vector<bool> done(paths.size(), false);
    for (size_t i = 0; i < paths.size(); ++i) {
      if (done[i]) continue;
      groups += " {";
      for (size_t j = i; j < paths.size(); ++j) {
        if (!done[j] && outputs[j].bits.at(name) == outputs[i].bits.at(name)) {
          groups += std::string(j == i ? "" : " ") + TargetName(paths[j]);
          done[j] = true;
        }
      }
      groups += "}";
    }
    std::printf("agreement %-20s%s\n", name.c_str(), groups.c_str());
    RecordProperty("agreement_" + name, groups);
    // Guaranteed by construction: elementwise kernels do the same operations on every SIMD target that has the
    // same FMA status; reductions do too when the lane count and the Highway implementation are also the same.
    const bool elementwise = name == "exp" || name == "linear";
    const bool reduction = name == "dot" || name == "attention" || name == "attention_weights";
    for (size_t i = 1; i < paths.size(); ++i) {
      for (size_t j = i + 1; j < paths.size(); ++j) {
        const bool same_fma = (traits[i] & 1) == (traits[j] & 1);
        const bool same_lanes_and_implementation = (traits[i] >> 1) == (traits[j] >> 1);
        if ((elementwise && same_fma) || (reduction && same_fma && same_lanes_and_implementation)) {
          EXPECT_EQ(outputs[i].bits.at(name), outputs[j].bits.at(name))
              << name << ": " << TargetName(paths[i]) << " vs " << TargetName(paths[j]);
        }
      }
    }
  }
}

}  // namespace
}  // namespace edgeattn_test
#endif  // HWY_ONCE
