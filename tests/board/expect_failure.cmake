# SPDX-License-Identifier: Apache-2.0
# Runs a program that must fail (non-zero exit) and print a message: -DCOMMAND="emulator|program|args" (a list
# separated by |) -DEXPECT=<regular expression>. Fails if the program exits 0 or its output lacks the message.
string(REPLACE "|" ";" command "${COMMAND}")
execute_process(COMMAND ${command} RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
message("${output}")
if(result EQUAL 0)
  message(FATAL_ERROR "expected a failing exit code, got 0")
endif()
if(NOT output MATCHES "${EXPECT}")
  message(FATAL_ERROR "exit code ${result}, but the output lacks '${EXPECT}'")
endif()
message("exit code ${result} and '${EXPECT}' in the output, as expected")
