// SPDX-License-Identifier: Apache-2.0
// The paths a long test (label "long": the exhaustive sweeps, the softmax statistics) runs on: every path this CPU
// supports, or only those named in the environment variable EDGEATTN_TEST_LONG_PATHS (target names as test names
// print them, separated by commas: "SVE,SVE2"). A test preset sets it where another preset of the same build has
// already swept the other paths on the same code: the AArch64 presets under -cpu max sweep only their SVE targets,
// since aarch64-neon swept NEON and the scalar path with the same binary. A name that matches no supported path
// fails the test, so a typo cannot turn a sweep into nothing.
#ifndef EDGEATTN_TESTS_LONG_TEST_PATHS_H_
#define EDGEATTN_TESTS_LONG_TEST_PATHS_H_

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_util.h"

// A long test's checking loop (plain C++ over a block of results, which the compiler vectorizes) marked with this
// is compiled for the baseline and again for AVX2 and AVX-512 on x86-64 Linux, and the loader picks the CPU's best
// (GCC and Clang function multiversioning): the tests are built for the baseline, SSE2, where such a loop cost as
// much as the kernel it checks. Elsewhere the mark is empty.
#if defined(__x86_64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__))
#define EDGEATTN_TEST_WIDE_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define EDGEATTN_TEST_WIDE_CLONES
#endif

namespace edgeattn_test {

inline std::vector<Path> LongTestPaths() {
  const std::vector<Path> supported = SupportedPaths();
  const char* wanted = std::getenv("EDGEATTN_TEST_LONG_PATHS");
  if (wanted == nullptr || *wanted == '\0') return supported;
  std::vector<Path> chosen;
  std::stringstream names(wanted);
  std::string name;
  while (std::getline(names, name, ',')) {
    bool found = false;
    for (Path p : supported) {
      if (name == TargetName(p)) {
        chosen.push_back(p);
        found = true;
      }
    }
    EXPECT_TRUE(found) << "EDGEATTN_TEST_LONG_PATHS names " << name << ", which this CPU does not run";
  }
  std::printf("EDGEATTN_TEST_LONG_PATHS=%s: sweeping %lu of %lu supported paths\n", wanted,
              static_cast<unsigned long>(chosen.size()), static_cast<unsigned long>(supported.size()));
  return chosen;
}

}  // namespace edgeattn_test

#endif  // EDGEATTN_TESTS_LONG_TEST_PATHS_H_
