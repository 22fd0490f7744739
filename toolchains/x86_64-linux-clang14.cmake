# Host x86-64 Linux with Debian's clang-14 (package clang-14). With clang, Highway's fallback target is EMU128
# instead of SCALAR, so the test suite also covers that target.
set(CMAKE_C_COMPILER clang-14)
set(CMAKE_CXX_COMPILER clang++-14)
