# SPDX-License-Identifier: Apache-2.0
# Installs the library as built into a private prefix, then builds tests/consumer/consumer.c through
# edgeattn.pc twice, with a plain Makefile and with Meson, and runs both. Called by ctest (tests/CMakeLists.txt).
#   -DSOURCE_DIR=... -DBUILD_DIR=<edgeattn build> -DWORK_DIR=... -DC_COMPILER=... -DSTATIC_DISPATCH=ON|OFF
function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGV}")
    message(FATAL_ERROR "failed (${rc}): ${cmd}\n${out}\n${err}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

foreach(tool IN ITEMS pkg-config make meson ninja)
  find_program(tool_path_${tool} ${tool})
  if(NOT tool_path_${tool})
    message(FATAL_ERROR "${tool} not found (Debian: apt-get install pkg-config make meson ninja-build)")
  endif()
endforeach()

file(REMOVE_RECURSE ${WORK_DIR})
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
file(GLOB_RECURSE pc_files ${WORK_DIR}/prefix/*/edgeattn.pc)
list(LENGTH pc_files count)
if(NOT count EQUAL 1)
  message(FATAL_ERROR "expected one installed edgeattn.pc, found: ${pc_files}")
endif()
get_filename_component(pc_dir ${pc_files} DIRECTORY)
# This prefix first; libhwy.pc comes from the system's pkg-config path.
set(ENV{PKG_CONFIG_PATH} ${pc_dir})
set(ENV{CC} ${C_COMPILER})

# What a static link needs: the archive, and libhwy for run-time dispatch (plain and --static alike).
foreach(mode IN ITEMS "" "--static")
  run(pkg-config ${mode} --cflags --libs edgeattn)
  string(STRIP "${run_output}" flags)
  message(STATUS "pkg-config ${mode} --cflags --libs edgeattn: ${flags}")
  if(NOT flags MATCHES "-I${WORK_DIR}/prefix/[^ ]*include" OR NOT flags MATCHES "-L${WORK_DIR}/prefix/[^ ]*lib.* -ledgeattn")
    message(FATAL_ERROR "edgeattn.pc does not point into the install prefix ${WORK_DIR}/prefix")
  endif()
  if(STATIC_DISPATCH AND flags MATCHES "-lhwy")
    message(FATAL_ERROR "a static-dispatch build needs no libhwy")
  elseif(NOT STATIC_DISPATCH AND NOT flags MATCHES "-ledgeattn .*-lhwy")
    message(FATAL_ERROR "a run-time dispatch build needs -lhwy after -ledgeattn")
  endif()
endforeach()

file(MAKE_DIRECTORY ${WORK_DIR}/make)
run(make -f ${SOURCE_DIR}/tests/consumer/Makefile OUT=${WORK_DIR}/make)
run(${WORK_DIR}/make/consumer)
message(STATUS "Makefile consumer: ${run_output}")

run(meson setup ${WORK_DIR}/meson ${SOURCE_DIR}/tests/consumer)
run(meson compile -C ${WORK_DIR}/meson)
run(${WORK_DIR}/meson/consumer)
message(STATUS "Meson consumer: ${run_output}")
