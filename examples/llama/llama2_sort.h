// SPDX-License-Identifier: Apache-2.0
// Heap sort of an index array, for the tokenizer's vocabulary and the sampler's top-p candidates: in place, no
// recursion and no allocation (qsort may allocate: glibc's merge sort takes a buffer from malloc), O(n log n).
#ifndef EDGEATTN_EXAMPLES_LLAMA_LLAMA2_SORT_H_
#define EDGEATTN_EXAMPLES_LLAMA_LLAMA2_SORT_H_

#include <stddef.h>
#include <stdint.h>

namespace llama2 {

// Sorts index[0 .. n) so that before(index[i], index[j]) never holds for i > j; `before` must be a strict weak
// order (make it total, e.g. by the index, for a result that does not depend on the input's order).
template <typename Before>
void SortIndices(uint32_t* index, size_t n, Before&& before) {
  auto sift_down = [&](size_t root, size_t end) {
    while (2 * root + 1 < end) {
      size_t child = 2 * root + 1;
      if (child + 1 < end && before(index[child], index[child + 1])) ++child;
      if (!before(index[root], index[child])) return;
      const uint32_t t = index[root];
      index[root] = index[child];
      index[child] = t;
      root = child;
    }
  };
  for (size_t start = n / 2; start-- > 0;) sift_down(start, n);
  for (size_t end = n; end > 1; --end) {
    const uint32_t t = index[0];
    index[0] = index[end - 1];
    index[end - 1] = t;
    sift_down(0, end - 1);
  }
}

}  // namespace llama2

#endif  // EDGEATTN_EXAMPLES_LLAMA_LLAMA2_SORT_H_
