# SPDX-License-Identifier: Apache-2.0
# One row of the flag matrix: builds edgeattn as part of a user's project (tests/flags) with the user's compiler
# flags, checks which Highway targets the archive holds, and where this machine can run the result, runs the C
# API consumer (every kernel against the seed answers) and the probe (the SIMD target the process gets).
#   cmake -DSOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=... -DFLAGS="-march=..." -DTARGETS="AVX3|AVX2"
#         [-DC_COMPILER=... -DCXX_COMPILER=... | -DTOOLCHAIN=<file>] [-DSTATIC_DISPATCH=ON]
#         [-DRUN=native|emulator|none -DEMULATOR="qemu-aarch64|-L|/usr/aarch64-linux-gnu" -DQEMU_CPU=...]
#         [-DEXPECT_TARGET=<name>] [-DCCACHE=ON] -P run_flags.cmake
# RUN=native runs only if the flags enable no instruction-set extension that -march=native (this CPU, as the same
# compiler sees it) lacks; otherwise the row is compile-only: it prints "SKIPPED" after the build and the target
# check passed, and ctest reports it as skipped (a failed build or check still fails it), not as passed.
cmake_minimum_required(VERSION 3.21)  # IN_LIST
function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGV}")
    message(FATAL_ERROR "failed (${rc}): ${cmd}\n${out}\n${err}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

# The instruction-set macros (__AVX512F__, __AES__, ...) a compiler defines under some flags.
function(isa_macros compiler flags result)
  separate_arguments(flag_list UNIX_COMMAND "${flags}")
  execute_process(COMMAND ${compiler} ${flag_list} -dM -E -x c /dev/null OUTPUT_VARIABLE defines RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${compiler} ${flags} -dM -E failed")
  endif()
  string(REGEX MATCHALL "#define __[A-Z0-9_]+__ 1\n" macros "${defines}")
  set(${result} ${macros} PARENT_SCOPE)
endfunction()

if(NOT STATIC_DISPATCH)
  set(STATIC_DISPATCH OFF)
endif()
if(NOT DEFINED RUN)
  set(RUN none)
endif()
# ccache hashes the command line, not what -march=native resolves to on this CPU: such a row always compiles.
if(NOT CCACHE OR FLAGS MATCHES "native")
  set(CCACHE OFF)
endif()
file(REMOVE_RECURSE ${WORK_DIR})
separate_arguments(flag_list UNIX_COMMAND "${FLAGS}")
set(configure_args -S ${SOURCE_DIR}/tests/flags -B ${WORK_DIR} -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release
    -DEDGEATTN_SOURCE_DIR=${SOURCE_DIR} -DEDGEATTN_WERROR=ON -DEDGEATTN_STATIC_DISPATCH=${STATIC_DISPATCH}
    -DEDGEATTN_CCACHE=${CCACHE})
if(TOOLCHAIN)
  list(APPEND configure_args -DCMAKE_TOOLCHAIN_FILE=${TOOLCHAIN})
else()
  list(APPEND configure_args -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
endif()
# The user's flags, as a user passes them: appended to whatever the toolchain file sets.
list(APPEND configure_args "-DCMAKE_C_FLAGS=${FLAGS}" "-DCMAKE_CXX_FLAGS=${FLAGS}")
run(${CMAKE_COMMAND} ${configure_args})
run(${CMAKE_COMMAND} --build ${WORK_DIR})

# The Highway targets compiled into the archive: one namespace edgeattn::N_<TARGET> per target.
file(STRINGS ${WORK_DIR}/CMakeCache.txt nm_line REGEX "^CMAKE_NM:")
string(REGEX REPLACE "^[^=]*=" "" nm "${nm_line}")
file(GLOB archive ${WORK_DIR}/edgeattn/libedgeattn.a)
run(${nm} -C ${archive})
string(REGEX MATCHALL "edgeattn::N_[A-Z0-9_]+::" namespaces "${run_output}")
list(REMOVE_DUPLICATES namespaces)
list(TRANSFORM namespaces REPLACE "edgeattn::N_([A-Z0-9_]+)::" "\\1")
list(SORT namespaces)
string(REPLACE "|" ";" expected "${TARGETS}")
list(SORT expected)
string(REPLACE ";" " " compiled_text "${namespaces}")
if(TARGETS AND NOT namespaces STREQUAL expected)
  string(REPLACE ";" " " expected_text "${expected}")
  message(FATAL_ERROR "compiled targets: ${compiled_text}; expected: ${expected_text}")
endif()
message(STATUS "flags '${FLAGS}': compiled targets ${compiled_text}")

if(RUN STREQUAL "native")
  isa_macros(${C_COMPILER} "${FLAGS}" wanted)
  isa_macros(${C_COMPILER} "-march=native" have)
  list(REMOVE_ITEM wanted ${have})
  # Not instruction sets a compiler uses on its own: system, security and cache-control instructions it emits
  # only for their intrinsics (which edgeattn does not call), and clang's _Float16 properties.
  foreach(ignored IN ITEMS SGX PCONFIG WBNOINVD PKU MWAITX CLZERO PTWRITE WAITPKG ENQCMD UINTR SERIALIZE TSXLDTRK
                           MOVDIRI MOVDIR64B CLDEMOTE RDPID SHSTK FLT16_HAS_DENORM FLT16_HAS_INFINITY
                           FLT16_HAS_QUIET_NAN)
    list(REMOVE_ITEM wanted "#define __${ignored}__ 1\n")
  endforeach()
  if(wanted)
    string(REGEX REPLACE "#define __([A-Z0-9_]+)__ 1\n" "\\1" missing "${wanted}")
    string(REPLACE ";" " " missing "${missing}")
    message(STATUS "compile-only: this CPU lacks ${missing}")
    set(RUN none)
  endif()
endif()
if(RUN STREQUAL "none")
  message(STATUS "SKIPPED running: flags '${FLAGS}' built, targets checked, programs not run on this machine")
  return()
endif()
set(launcher "")
if(RUN STREQUAL "emulator")
  string(REPLACE "|" ";" launcher "${EMULATOR}")
  if(QEMU_CPU)
    set(ENV{QEMU_CPU} ${QEMU_CPU})
  endif()
endif()
run(${launcher} ${WORK_DIR}/consumer)
message(STATUS "consumer: ${run_output}")
run(${launcher} ${WORK_DIR}/probe)
message(STATUS "${run_output}")
# The process runs one of the compiled targets (the best this CPU has); which one depends on the CPU.
string(REGEX MATCH "simd_target=([A-Z0-9_]+)" ignored "${run_output}")
if(NOT CMAKE_MATCH_1 IN_LIST namespaces)
  message(FATAL_ERROR "simd_target '${CMAKE_MATCH_1}' is not one of the compiled targets ${compiled_text}")
endif()
if(EXPECT_TARGET AND NOT CMAKE_MATCH_1 STREQUAL EXPECT_TARGET)
  message(FATAL_ERROR "expected simd_target=${EXPECT_TARGET}")
endif()
