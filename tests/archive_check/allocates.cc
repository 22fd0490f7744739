// SPDX-License-Identifier: Apache-2.0
// Everything the archive check must catch, in one translation unit: it is built only to be rejected.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

int g_mutable_counter;          // .bss
int g_initialized_counter = 3;  // .data

int* Allocate(int n) {
  if (n < 0) throw std::runtime_error("negative");
  if (n == 0) std::abort();
  std::printf("allocating %d\n", n);
  ++g_mutable_counter;
  g_initialized_counter += n;
  void* raw = std::malloc(static_cast<size_t>(n));
  std::free(raw);
  return new int[static_cast<size_t>(n)];
}
