// SPDX-License-Identifier: Apache-2.0
// Peer: XNNPACK (libxnnpack-dev, with libpthreadpool-dev), its softmax operator (softmax_nc_f32) on one row,
// run without a thread pool (one thread). The operator is created and set up once, outside the timing.
#include "bench/bench_util.h"

#if EDGEATTN_BENCH_HAVE_XNNPACK
#include <xnnpack.h>

namespace edgeattn_bench {
namespace {

void Softmax(benchmark::State& state, size_t n) {
  const Floats& in = SoftmaxInput(n);
  Floats out(n);
  xnn_operator_t op = nullptr;
  if (xnn_create_softmax_nc_f32(n, n, n, 0, &op) != xnn_status_success ||
      xnn_setup_softmax_nc_f32(op, 1, in.data(), out.data(), nullptr) != xnn_status_success) {
    if (op != nullptr) xnn_delete_operator(op);
    state.SkipWithError("XNNPACK softmax operator could not be created");
    return;
  }
  if (xnn_run_operator(op, nullptr) == xnn_status_success) {
    SetAccuracy(state, SoftmaxUlp(in, out.data()));
    TimeIfRight(
        state, SoftmaxError(in, out.data()), kSoftmaxTolerance, [&] { return xnn_run_operator(op, nullptr); }, 0, 0,
        static_cast<double>(n));
  } else {
    state.SkipWithError("XNNPACK softmax operator failed to run");
  }
  xnn_delete_operator(op);
}

}  // namespace

void RegisterXnnpack() {
  if (xnn_initialize(nullptr) != xnn_status_success) return;  // e.g. a CPU it does not support
  for (size_t n : SoftmaxSizes()) {
    Register("softmax/n=" + std::to_string(n), "xnnpack", [n](benchmark::State& s) { Softmax(s, n); });
  }
}

}  // namespace edgeattn_bench
#else
namespace edgeattn_bench {
void RegisterXnnpack() {}
}  // namespace edgeattn_bench
#endif
