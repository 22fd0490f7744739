# SPDX-License-Identifier: Apache-2.0
# Builds tests/consumer as a separate project and runs it. Called by ctest (tests/CMakeLists.txt).
#   -DMODE=find_package|add_subdirectory -DSOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=... -DC_COMPILER=...
#   -DCXX_COMPILER=... -DTOOLCHAIN=<file or empty> -DEMULATOR=<command|args or empty> -DEXTRA_CACHE=<a|b or empty>
#   and -DBUILD_DIR=<edgeattn build> (find_package) or -DSTATIC_DISPATCH=ON|OFF (add_subdirectory)
function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGV}")
    message(FATAL_ERROR "failed (${rc}): ${cmd}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
# The consumer is built like the library (same compilers, flags and build type: a sanitizer build's archive
# needs the sanitizer runtime at link time).
set(configure_args -S ${SOURCE_DIR}/tests/consumer -B ${WORK_DIR}/build -G ${GENERATOR}
                   -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCONSUMER_MODE=${MODE}
                   "-DCMAKE_C_FLAGS=${FLAGS}" "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
                   "-DCMAKE_EXE_LINKER_FLAGS=${LINK_FLAGS}" -DCMAKE_BUILD_TYPE=${BUILD_TYPE})
if(TOOLCHAIN)
  list(APPEND configure_args -DCMAKE_TOOLCHAIN_FILE=${TOOLCHAIN})
endif()
if(EXTRA_CACHE)
  string(REPLACE "|" ";" extra "${EXTRA_CACHE}")
  list(APPEND configure_args ${extra})
endif()
string(REPLACE "|" ";" emulator "${EMULATOR}")
if(MODE STREQUAL "find_package")
  # Install the library as built into a private prefix, then find it there and nowhere else.
  run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
  list(APPEND configure_args -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
else()
  list(APPEND configure_args -DEDGEATTN_SOURCE_DIR=${SOURCE_DIR} -DEDGEATTN_STATIC_DISPATCH=${STATIC_DISPATCH})
endif()
run(${CMAKE_COMMAND} ${configure_args})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${emulator} ${WORK_DIR}/build/consumer)
