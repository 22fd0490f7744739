# SPDX-License-Identifier: Apache-2.0
# CMake's BUILD_TESTING=OFF is honoured: configures edgeattn with it (and with EDGEATTN_BUILD_TESTS and
# EDGEATTN_BUILD_BENCHMARKS left at their defaults, then forced ON) and checks that the build defines the
# library and no test or benchmark target. Called by ctest (tests/CMakeLists.txt).
#   -DSOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=... -DC_COMPILER=... -DCXX_COMPILER=...
function(configure_and_list name)
  set(dir ${WORK_DIR}/${name})
  file(REMOVE_RECURSE ${dir})
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${dir} -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release
                          -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER} ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "configure ${name} failed:\n${out}\n${err}")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${dir} --target help RESULT_VARIABLE rc OUTPUT_VARIABLE targets)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "listing the targets of ${name} failed")
  endif()
  string(REGEX MATCHALL "edgeattn[a-z0-9_]*" found "${targets}")
  list(REMOVE_DUPLICATES found)
  list(REMOVE_ITEM found edgeattn)
  if(found)
    message(FATAL_ERROR "${name}: targets besides the library: ${found}")
  endif()
  if(NOT targets MATCHES "edgeattn" OR NOT targets MATCHES "install")
    message(FATAL_ERROR "${name}: no library or install target:\n${targets}")
  endif()
  message(STATUS "${name}: the library and its install rules only")
endfunction()

configure_and_list(defaults -DBUILD_TESTING=OFF)
configure_and_list(forced -DBUILD_TESTING=OFF -DEDGEATTN_BUILD_TESTS=ON -DEDGEATTN_BUILD_BENCHMARKS=ON)
