// SPDX-License-Identifier: Apache-2.0
// Fuzzes softmax on both paths: shapes (including invalid ones), any values, in place or not; each element
// checked against softmax.h's bound and special-value rules, invalid shapes must leave the output untouched.
#include "tests/fuzz/fuzz_util.h"
#include "tests/reference.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  using namespace edgeattn_fuzz;
  FuzzedDataProvider data(bytes, size);
  FuzzTarget target(data);
  const size_t rows = data.ConsumeIntegralInRange<size_t>(0, 8);
  const size_t cols = data.ConsumeIntegralInRange<size_t>(0, 150);
  const bool in_place = data.ConsumeBool();
  const float range = data.PickValueInArray({1.0f, 30.0f, 1e4f, 1e30f});
  // At least one element, so that zero shapes test the shape check and not a null data().
  std::vector<float> in = ConsumeFloats(data, rows * cols, range);
  if (in.empty()) in.push_back(1.0f);
  for (int path = 0; path < 2; ++path) {
    std::vector<float> out = in_place ? in : std::vector<float>(in.size(), 7.0f);
    const std::vector<float> before = out;
    const float* src = in_place ? out.data() : in.data();
    const edgeattn::Status s = path == 0 ? edgeattn::Softmax(src, out.data(), rows, cols)
                                         : edgeattn::scalar::Softmax(src, out.data(), rows, cols);
    const char* name = path == 0 ? target.name() : "scalar path";
    if (rows == 0 || cols == 0) {
      FUZZ_CHECK(s == edgeattn::Status::kInvalidShape && SameBits(out, before), "%s: zero shape", name);
      continue;
    }
    FUZZ_CHECK(s == edgeattn::Status::kOk, "%s: status %d", name, static_cast<int>(s));
    for (size_t r = 0; r < rows; ++r) {
      const std::vector<double> ref = edgeattn_test::RefSoftmaxRow(&in[r * cols], cols);
      for (size_t j = 0; j < cols; ++j) {
        const float got = out[r * cols + j];
        if (std::isnan(ref[j])) {
          FUZZ_CHECK(std::isnan(got), "%s: row %zu should be NaN", name, r);
        } else if (ref[j] >= FLT_MIN) {
          FUZZ_CHECK(std::fabs(got - ref[j]) <= 4.0 * UlpOf(ref[j]), "%s: [%zu][%zu] = %a, exact %a", name, r, j, got,
                     ref[j]);
        } else {
          FUZZ_CHECK(std::fabs(got - ref[j]) <= FLT_MIN && !std::signbit(got), "%s: [%zu][%zu] = %a, exact %a", name, r,
                     j, got, ref[j]);
        }
      }
    }
  }
  return 0;
}
