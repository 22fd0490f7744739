# SPDX-License-Identifier: Apache-2.0
# ARMv7-A Linux, hard-float, with NEON (g++-arm-linux-gnueabihf). Debian's armhf default has no NEON, so the
# flags ask for it; -mfp16-format=ieee is what Highway's NEON target needs for __fp16. Highway is used
# header-only with its static NEON target (EDGEATTN_STATIC_DISPATCH, set by the arm-linux preset); GoogleTest is
# built from /usr/src/googletest (package googletest), because the armhf multiarch packages break apt here.
# Tests run under qemu-arm (package qemu-user).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR armv7-a)
set(CMAKE_C_COMPILER arm-linux-gnueabihf-gcc)
set(CMAKE_CXX_COMPILER arm-linux-gnueabihf-g++)
set(EDGEATTN_ARM_FLAGS "-march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard -mfp16-format=ieee")
set(CMAKE_C_FLAGS_INIT "${EDGEATTN_ARM_FLAGS}")
set(CMAKE_CXX_FLAGS_INIT "${EDGEATTN_ARM_FLAGS}")
# Nothing of the host's /usr/lib may be linked; Highway's headers are found through the host's hwy package.
set(CMAKE_LIBRARY_ARCHITECTURE arm-linux-gnueabihf)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-arm -L /usr/arm-linux-gnueabihf)
