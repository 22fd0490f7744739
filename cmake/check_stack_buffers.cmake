# SPDX-License-Identifier: Apache-2.0
# Source check: no stack array in the library is sized by Highway's per-target maximum vector size.
#   cmake -DDIR=<directory> -P check_stack_buffers.cmake
# HWY_MAX_BYTES (and HWY_LANES, derived from it) is 64 KiB on RVV: an array sized by it would be 64 KiB of
# stack per buffer there. One-vector buffers are sized by a capped tag's MaxLanes instead and static_assert
# the bound (lib/common/stack_vector.h); this check catches the unbounded form in code for targets the suite
# cannot compile (RVV: no compiler for it here).
if(NOT DEFINED DIR)
  message(FATAL_ERROR "check_stack_buffers.cmake needs -DDIR=...")
endif()
file(GLOB_RECURSE sources ${DIR}/*.h ${DIR}/*.cc)
set(found "")
foreach(source IN LISTS sources)
  file(STRINGS ${source} lines REGEX "\\[[^]]*HWY_(MAX_BYTES|LANES)")
  foreach(line IN LISTS lines)
    string(STRIP "${line}" line)
    string(APPEND found "\n  ${source}: ${line}")
  endforeach()
endforeach()
if(found)
  message(FATAL_ERROR "stack arrays sized by HWY_MAX_BYTES/HWY_LANES (64 KiB on RVV):${found}")
endif()
list(LENGTH sources count)
message(STATUS "${count} files: no array sized by HWY_MAX_BYTES or HWY_LANES")
