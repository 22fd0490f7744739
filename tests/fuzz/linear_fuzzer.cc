// SPDX-License-Identifier: Apache-2.0
// Fuzzes linear on both paths: shapes (including zero), with and without bias; every element checked against
// linear.h's bound where the inputs are finite and nothing overflows.
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  using namespace edgeattn_fuzz;
  FuzzedDataProvider data(bytes, size);
  FuzzTarget target(data);
  const size_t rows = data.ConsumeIntegralInRange<size_t>(0, 6);
  const size_t in = data.ConsumeIntegralInRange<size_t>(0, 70);
  const size_t out = data.ConsumeIntegralInRange<size_t>(0, 70);
  const bool with_bias = data.ConsumeBool();
  // At least one element each, so that zero shapes test the shape check and not a null data().
  const std::vector<float> x = ConsumeFloats(data, std::max<size_t>(rows * in, 1), 100.0f);
  const std::vector<float> w = ConsumeFloats(data, std::max<size_t>(in * out, 1), 100.0f);
  const std::vector<float> b = ConsumeFloats(data, std::max<size_t>(out, 1), 100.0f);
  for (int path = 0; path < 2; ++path) {
    std::vector<float> y(std::max<size_t>(rows * out, 1), 7.0f);
    const std::vector<float> before = y;
    const float* bias = with_bias ? b.data() : nullptr;
    const edgeattn::Status s = path == 0 ? edgeattn::Linear(x.data(), rows, in, w.data(), bias, out, y.data())
                                         : edgeattn::scalar::Linear(x.data(), rows, in, w.data(), bias, out, y.data());
    const char* name = path == 0 ? target.name() : "scalar path";
    if (rows == 0 || in == 0 || out == 0) {
      FUZZ_CHECK(s == edgeattn::Status::kInvalidShape && SameBits(y, before), "%s: zero shape", name);
      continue;
    }
    FUZZ_CHECK(s == edgeattn::Status::kOk, "%s: status %d", name, static_cast<int>(s));
    const double nu = static_cast<double>(in + 1) * 0x1p-24;
    for (size_t r = 0; r < rows; ++r) {
      for (size_t o = 0; o < out; ++o) {
        double exact = with_bias ? b[o] : 0.0, magnitude = with_bias ? std::fabs(b[o]) : 0.0;
        for (size_t i = 0; i < in; ++i) {
          exact += static_cast<double>(x[r * in + i]) * w[i * out + o];
          magnitude += std::fabs(static_cast<double>(x[r * in + i]) * w[i * out + o]);
        }
        // Non-finite inputs, or float overflow on the way, follow IEEE arithmetic: no bound to check.
        if (!std::isfinite(magnitude) || magnitude > 1e37) continue;
        const float got = y[r * out + o];
        FUZZ_CHECK(std::fabs(got - exact) <= nu / (1 - nu) * magnitude + static_cast<double>(in + 1) * 0x1p-149,
                   "%s: [%zu][%zu] = %a, exact %a", name, r, o, got, exact);
      }
    }
  }
  return 0;
}
