# SPDX-License-Identifier: Apache-2.0
# The README shows examples/seed003_attention.c; this fails if the README's copy drifts from the file that the
# readme_example_runs test compiles and runs. The README's copy leaves out the file's license line (its first line,
# "/* SPDX-License-Identifier: ... */"); everything after it must appear word for word in a ```c block.
#   cmake -DREADME=README.md -DEXAMPLE=file.c -P check_readme_example.cmake
file(READ ${README} readme)
file(READ ${EXAMPLE} example)
string(REGEX REPLACE "^/\\* SPDX-License-Identifier: [^\n]*\\*/\n" "" example "${example}")
string(FIND "${readme}" "```c\n${example}```" position)
if(position EQUAL -1)
  message(FATAL_ERROR "README.md does not contain ${EXAMPLE} verbatim in a ```c block; copy the file into it")
endif()
message(STATUS "README.md shows ${EXAMPLE} verbatim")
