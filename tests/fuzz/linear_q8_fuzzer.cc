// SPDX-License-Identifier: Apache-2.0
// Fuzzes linear_q8 (issue 30): the quantiser, LinearQ8 in both modes and its parts, on the scalar path and on the
// SIMD path with every int8 kernel this CPU has (the input picks the Highway target). Checks the statuses (with
// nothing written on error), that ACT_Q8 gives the same bits on every path, kernel and split (any two NaNs
// match: their payloads follow operand order), ACT_F32 within linear_q8.h's bound where nothing is non-finite,
// and the quantiser within its bound.
#include "lib/linear_q8/linear_q8_kernels.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using edgeattn::Q8Activations;
using edgeattn::Status;
using namespace edgeattn_fuzz;

void FuzzQuantize(FuzzedDataProvider& data) {
  const size_t out = data.ConsumeIntegralInRange<size_t>(0, 5), gs = data.ConsumeIntegralInRange<size_t>(0, 40);
  const size_t in = gs * data.ConsumeIntegralInRange<size_t>(0, 3) + data.ConsumeIntegralInRange<size_t>(0, 1);
  const std::vector<float> w = ConsumeFloats(data, std::max<size_t>(out * in, 1), 1e3f);
  std::vector<int8_t> q(std::max<size_t>(out * in, 1), 99);
  std::vector<float> scale(std::max<size_t>(out * in, 1), 99.0f);
  const Status s = edgeattn::Q8Quantize(w.data(), out, in, gs, q.data(), scale.data());
  bool finite = true;
  for (size_t i = 0; i < out * in; ++i) finite = finite && std::isfinite(w[i]);
  if (out == 0 || in == 0 || gs == 0 || in % gs != 0 || !finite) {
    FUZZ_CHECK(s != Status::kOk && q[0] == 99 && scale[0] == 99.0f, "quantize: status %d", static_cast<int>(s));
    return;
  }
  FUZZ_CHECK(s == Status::kOk, "quantize: status %d", static_cast<int>(s));
  for (size_t i = 0; i < out * in; ++i) {
    const double sc = scale[i / gs];
    FUZZ_CHECK(std::fabs(q[i] * sc - w[i]) <= sc / 2 * (1 + 0x1p-14) + 0x1p-126 && q[i] >= -127,
               "quantize: w[%zu] = %a, q %d, scale %a", i, w[i], q[i], sc);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  FuzzedDataProvider data(bytes, size);
  FuzzTarget target(data);
  if (data.ConsumeBool()) {
    FuzzQuantize(data);
    return 0;
  }
  const size_t rows = data.ConsumeIntegralInRange<size_t>(0, 6), out = data.ConsumeIntegralInRange<size_t>(0, 40);
  const size_t gs = data.ConsumeIntegralInRange<size_t>(0, 70), groups = data.ConsumeIntegralInRange<size_t>(0, 4);
  const size_t in = gs * groups + (data.ConsumeIntegralInRange<int>(0, 9) == 0 ? 1 : 0);
  const int act_value = data.ConsumeIntegralInRange<int>(-1, 2);
  const auto act = static_cast<Q8Activations>(act_value);
  const bool with_bias = data.ConsumeBool();
  std::vector<int8_t> q(std::max<size_t>(out * in, 1));
  for (int8_t& v : q) v = data.ConsumeIntegral<int8_t>();
  const size_t n_scales = gs != 0 && in % gs == 0 ? std::max<size_t>(out * (in / gs), 1) : 1;
  const std::vector<float> scale = ConsumeFloats(data, n_scales, 0.1f);
  const std::vector<float> x = ConsumeFloats(data, std::max<size_t>(rows * in, 1), 100.0f);
  const std::vector<float> b = ConsumeFloats(data, std::max<size_t>(out, 1), 100.0f);
  const edgeattn::Q8Matrix w{q.data(), scale.data(), out, in, gs};
  const float* bias = with_bias ? b.data() : nullptr;
  bool finite_x = true;
  for (size_t i = 0; i < rows * in; ++i) finite_x = finite_x && std::isfinite(x[i]);
  const bool shape_ok = rows != 0 && out != 0 && in != 0 && gs != 0 && in % gs == 0;
  const Status expected = !shape_ok ? Status::kInvalidShape
                          : (act_value != 0 && act_value != 1) || (act_value == 1 && !finite_x)
                              ? Status::kInvalidArgument
                              : Status::kOk;
  const size_t ws_size = edgeattn::LinearQ8WorkspaceSize(rows, w, act);
  std::vector<unsigned char> ws(std::max<size_t>(ws_size, 1));
  // Every implementation: scalar path, the chosen kernel, each supported kernel, the parts, the parts as ranges.
  std::vector<std::vector<float>> results;
  const int kernels = edgeattn::internal::kQ8KernelCount;
  for (int impl = -2; impl <= kernels + 1; ++impl) {
    std::vector<float> y(std::max<size_t>(rows * out, 1), 7.0f);
    const std::vector<float> before = y;
    Status s;
    if (impl == -2) {
      s = edgeattn::scalar::LinearQ8(x.data(), rows, w, bias, act, y.data(), ws.data(), ws_size);
    } else if (impl == -1) {
      s = edgeattn::LinearQ8(x.data(), rows, w, bias, act, y.data(), ws.data(), ws_size);
    } else if (impl < kernels) {
      const auto k = static_cast<edgeattn::internal::Q8Kernel>(impl);
      if (!edgeattn::internal::Q8KernelSupported(k) || (impl != 0 && (gs == 0 || gs % 4 != 0))) continue;
      s = edgeattn::internal::LinearQ8WithKernel(x.data(), rows, w, bias, act, y.data(), ws.data(), ws_size, k);
    } else if (impl == kernels + 1) {  // the parts as two ranges, the later one first
      const size_t parts = edgeattn::LinearQ8PartCount(rows, w), half = parts / 2;
      s = edgeattn::LinearQ8PartRange(x.data(), rows, w, bias, act, half, parts - half, y.data(), ws.data(), ws_size);
      if (s == Status::kOk && half > 0) {
        s = edgeattn::LinearQ8PartRange(x.data(), rows, w, bias, act, 0, half, y.data(), ws.data(), ws_size);
      }
    } else {
      const size_t parts = edgeattn::LinearQ8PartCount(rows, w);
      FUZZ_CHECK((parts == 0) == !shape_ok, "%s: %zu parts", target.name(), parts);
      s = parts == 0 ? edgeattn::LinearQ8Part(x.data(), rows, w, bias, act, 0, y.data(), ws.data(), ws_size)
                     : Status::kOk;
      for (size_t p = parts; p-- > 0 && s == Status::kOk;) {
        s = edgeattn::LinearQ8Part(x.data(), rows, w, bias, act, p, y.data(), ws.data(), ws_size);
      }
    }
    FUZZ_CHECK(s == expected, "%s impl %d: status %d, expected %d", target.name(), impl, static_cast<int>(s),
               static_cast<int>(expected));
    if (s != Status::kOk) {
      FUZZ_CHECK(SameBits(y, before), "%s impl %d: written on error", target.name(), impl);
      continue;
    }
    results.push_back(y);
  }
  if (expected != Status::kOk) return 0;
  if (act == Q8Activations::kQ8) {
    for (const auto& r : results) FUZZ_CHECK(SameBitsOrBothNaN(r, results[0]), "%s: ACT_Q8 bits differ", target.name());
    return 0;
  }
  const size_t ng = in / gs;
  const double nu = static_cast<double>(in + ng + 9) * 0x1p-24;
  for (size_t r = 0; r < rows; ++r) {
    for (size_t o = 0; o < out; ++o) {
      double exact = bias != nullptr ? bias[o] : 0.0, magnitude = std::fabs(exact), unscaled = 0.0;
      for (size_t i = 0; i < in; ++i) {
        const double wi = static_cast<double>(q[o * in + i]) * scale[o * ng + i / gs];
        exact += x[r * in + i] * wi;
        magnitude += std::fabs(x[r * in + i] * wi);
        unscaled += std::fabs(static_cast<double>(x[r * in + i]) * q[o * in + i]);
      }
      // The bound holds while nothing overflows, the groups' sums of x * q before their scale included.
      if (!std::isfinite(magnitude) || magnitude > 1e37 || unscaled > 1e37) continue;
      for (const auto& y : results) {
        FUZZ_CHECK(std::fabs(y[r * out + o] - exact) <= nu / (1 - nu) * magnitude + (in + 2 * ng + 9) * 0x1p-149,
                   "%s: ACT_F32 [%zu][%zu] = %a, exact %a", target.name(), r, o, y[r * out + o], exact);
      }
    }
  }
  return 0;
}
