// SPDX-License-Identifier: Apache-2.0
// Library-wide queries: version, status strings, and that forcing a target makes the SIMD path run on it.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "edgeattn/edgeattn.h"
#include "edgeattn/edgeattn.hpp"
#include "tests/test_util.h"

namespace edgeattn_test {
namespace {

TEST(Library, VersionIsTheProjectVersion) {
  EXPECT_STREQ(edgeattn::Version(), EDGEATTN_TEST_EXPECTED_VERSION);
  EXPECT_STREQ(edgeattn_version(), EDGEATTN_TEST_EXPECTED_VERSION);
}

TEST(Library, StatusStringsAreDistinctAndTotal) {
  std::vector<std::string> seen;
  for (int s = EDGEATTN_OK; s <= EDGEATTN_ERROR_CAPACITY; ++s) {
    const char* text = edgeattn_status_string(static_cast<edgeattn_status>(s));
    ASSERT_NE(text, nullptr);
    EXPECT_STRNE(text, "unknown status") << s;
    for (const std::string& other : seen) EXPECT_NE(other, text);
    seen.push_back(text);
    EXPECT_STREQ(text, edgeattn::StatusString(static_cast<edgeattn::Status>(s)));
  }
  // 7 is the largest value a C++ edgeattn_status can hold; C callers passing larger ones are covered in consumer.c.
  EXPECT_STREQ(edgeattn_status_string(static_cast<edgeattn_status>(7)), "unknown status");
}

class TargetTest : public PathTest {};
EDGEATTN_INSTANTIATE_PATHS(TargetTest);

TEST_P(TargetTest, SimdTargetNamesTheForcedTarget) {
  if (IsScalarPath()) GTEST_SKIP() << "the scalar path has no Highway target";
  EXPECT_STREQ(edgeattn::SimdTarget(), TargetName(GetParam()));
  EXPECT_STREQ(edgeattn_simd_target(), TargetName(GetParam()));
}

// Asking whether the CPU runs a path (as tests that loop over paths do) must not lift the forcing: the checks after
// it would run on the default target instead.
TEST_P(TargetTest, CpuSupportsKeepsTheForcedTarget) {
  if (IsScalarPath()) GTEST_SKIP() << "the scalar path has no Highway target";
  for (Path p : AllPaths()) (void)CpuSupports(p);
  EXPECT_STREQ(edgeattn::SimdTarget(), TargetName(GetParam()));
}

TEST(Library, DefaultTargetIsTheBestTheCpuSupports) {
  // Dispatch first: in Highway 1.0.3, asking for the supported targets before the first dispatch keeps SVE_256
  // and SVE2_128 from ever being chosen.
  const std::string chosen = edgeattn_simd_target();
  const std::vector<Path> paths = SupportedPaths();
  ASSERT_GE(paths.size(), 2u);
  // SupportedPaths lists targets best first (lowest Highway bit); without forcing, dispatch picks that one.
  EXPECT_EQ(chosen, TargetName(paths[1]));
}

}  // namespace
}  // namespace edgeattn_test
