# SPDX-License-Identifier: Apache-2.0
# Link-time proof for a static archive: no undefined reference to allocation, exception, abort/exit or stdio
# symbols, and empty .data and .bss sections (read-only-after-relocation .data.rel.ro is not writable data).
#   cmake -DARCHIVE=libedgeattn.a -DNM=nm -DOBJDUMP=objdump [-DCHECK_SECTIONS=OFF] -P check_archive.cmake
# CHECK_SECTIONS=OFF skips the section sizes (sanitizer builds put their own metadata in .data).
if(NOT DEFINED CHECK_SECTIONS)
  set(CHECK_SECTIONS ON)
endif()
foreach(var ARCHIVE NM OBJDUMP)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_archive.cmake needs -D${var}=...")
  endif()
endforeach()

execute_process(COMMAND ${NM} -u ${ARCHIVE} OUTPUT_VARIABLE undefined RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} -u ${ARCHIVE} failed (${rc})")
endif()

set(forbidden_patterns
  "^(malloc|calloc|realloc|free|aligned_alloc|posix_memalign|memalign|valloc|pvalloc|reallocarray)$"
  "^_Zn[wa][jmy]"                       # operator new / new[]
  "^_Zd[la]Pv"                          # operator delete / delete[]
  "^__cxa_"                             # exceptions, guards, pure virtual
  "^(_Unwind_|__gxx_personality)"
  "^(abort|exit|_exit|_Exit|quick_exit|atexit|__assert_fail|__assert_func|__stack_chk_fail)$"
  "^_ZN3hwy5AbortE"                     # Highway's assertion handler, which aborts
  "^(printf|fprintf|vprintf|vfprintf|sprintf|snprintf|vsnprintf|puts|fputs|putchar|fputc|fwrite|perror)$"
  "^(__printf_chk|__fprintf_chk|__sprintf_chk|__snprintf_chk|__vfprintf_chk|stdout|stderr)$")

string(REPLACE "\n" ";" lines "${undefined}")
set(bad_symbols)
foreach(line IN LISTS lines)
  string(STRIP "${line}" line)
  if(line MATCHES "^U +([^ @]+)")
    set(symbol ${CMAKE_MATCH_1})
    foreach(pattern IN LISTS forbidden_patterns)
      if(symbol MATCHES "${pattern}")
        list(APPEND bad_symbols ${symbol})
      endif()
    endforeach()
  endif()
endforeach()
list(REMOVE_DUPLICATES bad_symbols)
list(SORT bad_symbols)

execute_process(COMMAND ${OBJDUMP} -h ${ARCHIVE} OUTPUT_VARIABLE headers RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${OBJDUMP} -h ${ARCHIVE} failed (${rc})")
endif()
string(REPLACE "\n" ";" lines "${headers}")
set(data_bytes 0)
set(bss_bytes 0)
foreach(line IN LISTS lines)
  if(line MATCHES "^ *[0-9]+ +(\\.[^ ]+) +([0-9a-fA-F]+) ")
    set(section ${CMAKE_MATCH_1})
    math(EXPR size "0x${CMAKE_MATCH_2}")
    if(section MATCHES "^\\.(s?data)(\\..*)?$" AND NOT section MATCHES "^\\.data\\.rel\\.ro")
      math(EXPR data_bytes "${data_bytes} + ${size}")
    elseif(section MATCHES "^\\.(s?bss|tbss|tdata)(\\..*)?$")
      math(EXPR bss_bytes "${bss_bytes} + ${size}")
    endif()
  endif()
endforeach()

string(REPLACE ";" " " bad_list "${bad_symbols}")
if(NOT CHECK_SECTIONS)
  set(data_bytes "(not checked)")
  set(bss_bytes "(not checked)")
endif()
# One line (STATUS messages are not re-wrapped) that the negative test matches.
message(STATUS "${ARCHIVE}: forbidden symbols: ${bad_list}; .data ${data_bytes} bytes; .bss ${bss_bytes} bytes")
if(bad_symbols OR (CHECK_SECTIONS AND (data_bytes GREATER 0 OR bss_bytes GREATER 0)))
  message(FATAL_ERROR "archive check failed (see the line above)")
endif()
