// SPDX-License-Identifier: Apache-2.0
// linear_q8's benchmark cases and inputs (linear_q8_bench.cc), shared with its peers (peer_onednn.cc).
#ifndef EDGEATTN_BENCH_LINEAR_Q8_BENCH_H_
#define EDGEATTN_BENCH_LINEAR_Q8_BENCH_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "edgeattn/edgeattn.h"

namespace edgeattn_bench {

struct Q8Shape {
  size_t rows, in, out;
  bool cold;
  std::string Name(bool act_q8) const;  // "linear_q8/q8/rows=1,in=4096,out=4096,cold"
};
std::vector<Q8Shape> Q8Shapes();

// One instance per shape for the process: x, the bias, `w_copies` float matrices [out][in] and `q_copies` int8
// ones quantised from them (copy c of each from the same values), references for copy 0.
struct Q8Inputs {
  static const Q8Inputs& Get(const Q8Shape& shape);
  Q8Shape shape;
  size_t group;
  size_t q_copies = 1, w_copies = 1;
  Floats x, b, w;  // x [rows][in], b [out], w [w_copies][out][in]
  std::vector<int8_t, CacheAligned<int8_t>> q;
  Floats scale;
  std::vector<double> reference;              // x W^T + b with the float weights, double
  std::vector<double> dequantized_reference;  // the same with q * scale
  // The copy a timed call reads: turn from Q8NextTurn (one counter for every implementation, so the two calls of
  // a pair never read the copy the other has just brought in).
  size_t Copy(size_t turn, bool int8) const;
  edgeattn_q8_matrix Matrix(size_t copy) const;

 private:
  explicit Q8Inputs(const Q8Shape& shape);
};
size_t Q8NextTurn();

void RegisterLinearQ8();
// peer_onednn.cc: oneDNN's s8 matmul on the case (nothing where oneDNN is not built).
void RegisterLinearQ8OneDnn(const std::string& name, const Q8Shape& shape);

}  // namespace edgeattn_bench

#endif  // EDGEATTN_BENCH_LINEAR_Q8_BENCH_H_
