// SPDX-License-Identifier: Apache-2.0
// Fuzzes exp on both paths: any length, any bit patterns, in place or not; every result checked against exp.h.
#include "tests/fuzz/fuzz_util.h"

namespace edgeattn_fuzz {

void CheckExp(float x, float got, const char* path) {
  if (std::isnan(x)) {
    FUZZ_CHECK(std::isnan(got), "%s: exp(NaN) = %g", path, got);
    return;
  }
  const double exact = std::exp(static_cast<double>(x));
  const float rounded = static_cast<float>(exact);
  if (std::isinf(rounded)) {
    FUZZ_CHECK(got == std::numeric_limits<float>::infinity(), "%s: exp(%a) = %a", path, x, got);
  } else if (rounded < FLT_MIN) {
    FUZZ_CHECK(got >= 0.0f && got <= FLT_MIN && !std::signbit(got), "%s: exp(%a) = %a", path, x, got);
  } else {
    FUZZ_CHECK(std::fabs(got - exact) <= 2.0 * UlpOf(exact), "%s: exp(%a) = %a, exact %a", path, x, got, exact);
  }
}

}  // namespace edgeattn_fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  using namespace edgeattn_fuzz;
  FuzzedDataProvider data(bytes, size);
  FuzzTarget target(data);
  const bool in_place = data.ConsumeBool();
  const size_t n = data.ConsumeIntegralInRange<size_t>(0, 200);
  std::vector<float> in = ConsumeFloats(data, n, 110.0f);
  std::vector<float> simd(n), scalar(n);
  if (in_place) {
    simd = in;
    scalar = in;
    FUZZ_CHECK(edgeattn::Exp(simd.data(), simd.data(), n) == edgeattn::Status::kOk, "status");
    FUZZ_CHECK(edgeattn::scalar::Exp(scalar.data(), scalar.data(), n) == edgeattn::Status::kOk, "status");
  } else {
    FUZZ_CHECK(edgeattn::Exp(in.data(), simd.data(), n) == edgeattn::Status::kOk, "status");
    FUZZ_CHECK(edgeattn::scalar::Exp(in.data(), scalar.data(), n) == edgeattn::Status::kOk, "status");
  }
  for (size_t i = 0; i < n; ++i) {
    CheckExp(in[i], simd[i], target.name());
    CheckExp(in[i], scalar[i], "scalar path");
  }
  return 0;
}
