# SPDX-License-Identifier: Apache-2.0
# AArch64 Linux with Debian's cross compiler (g++-aarch64-linux-gnu) and the arm64 multiarch packages
# (libhwy-dev:arm64, libgtest-dev:arm64, libbenchmark-dev:arm64). Tests run under qemu-aarch64 (package
# qemu-user); QEMU_CPU picks the emulated core: cortex-a53 (NEON), max (SVE2, 512-bit), max,sve256=on (SVE_256).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Multiarch: packages live in /usr/lib/aarch64-linux-gnu; this makes find_package look there, not in x86_64.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# qemu-user 7.2 with the cross toolchain's glibc (libc6-arm64-cross, what -L /usr/aarch64-linux-gnu loads) never
# returns from pthread_create; with the arm64 multiarch glibc (libc6:arm64, which libhwy-dev:arm64 brings) threads
# run. So where the multiarch loader is installed the emulator finds it at the path the binaries name, without -L,
# and the tests that start threads run (tests/CMakeLists.txt turns them off only when -L is needed).
if(EXISTS /lib/ld-linux-aarch64.so.1)
  set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
else()
  set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu)
endif()
