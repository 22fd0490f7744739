// SPDX-License-Identifier: Apache-2.0
// A board program that allocates until the heap is gone, the way a test with a too-large buffer does: it must
// end with the board support's "out of memory" message and a failing exit code, not silently after its first
// line (tests/board/expect_failure.cmake runs it and checks both).
#include <stdio.h>

#include <vector>

int main() {
  printf("allocating 64 KiB blocks until the heap is exhausted\n");
  fflush(stdout);
  std::vector<std::vector<char>> blocks;
  blocks.reserve(1024);  // more blocks than any board's heap holds: only the blocks themselves grow the heap
  for (;;) blocks.emplace_back(64 * 1024, '\1');
}
