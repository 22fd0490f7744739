# SPDX-License-Identifier: Apache-2.0
# Runs by ctest (bench_smoke): a short run of a few cases, then report.py on its JSON.
#   -DBENCH=<edgeattn_bench> -DPYTHON=<python3> -DSOURCE_DIR=<edgeattn> -DWORK_DIR=<scratch dir>
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
execute_process(
  COMMAND ${BENCH} "--benchmark_filter=calibrate/|/n=16/|/n=256/|L=4,d=8/|L=16,d=64/|/n=128,d=64,|rows=4,|seq=|rows=1,cols=384/|split/prefill_causal/L=256,d=64/|split/decode/f16/n=4096,d=128,hot/|split/wakeup|model/260K/f32/kv=f32/j=1,"
          --benchmark_min_time=0.001 --benchmark_out=${WORK_DIR}/results.json --benchmark_out_format=json
  OUTPUT_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "edgeattn_bench failed (${rc})")
endif()
execute_process(COMMAND ${PYTHON} ${SOURCE_DIR}/bench/report.py --from-json ${WORK_DIR}/results.json --out ${WORK_DIR}
                RESULT_VARIABLE rc OUTPUT_VARIABLE table ERROR_VARIABLE errors)
message("${table}${errors}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "report.py failed (${rc}): an edgeattn path gave a wrong result or an error status")
endif()
# Every kind of case made it into the table, with a scalar time, a SIMD time and a speedup.
# (Attention cases name their path, which depends on the target: [a-z_]+.)
foreach(case IN ITEMS "dot/n=256" "softmax/n=16" "attention_causal/[a-z_]+/L=4,d=8" "fixed_attention/[a-z_]+/L=16,d=64"
                      "attention/decode/n=128,d=64,cold" "linear/rows=4,in=8,out=8" "positional_encoding/seq=64,d=256"
                      "linear_transposed/rows=4,in=8,out=8" "rms_norm/rows=1,cols=384" "layer_norm/rows=1,cols=384"
                      "rope/seq=1,heads=32,d=128,p0=100")
  string(REGEX MATCH "${case} +[0-9.]+ [mun]?s +[0-9.]+ [mun]?s +[0-9.]+x" row "${table}")
  if(NOT row)
    message(FATAL_ERROR "no complete row for ${case} in the report")
  endif()
endforeach()
# The work split cases (two threads; bit-identical to the single call, or an error) in their own table.
foreach(case IN ITEMS "split/prefill_causal/L=256,d=64" "split/decode/f16/n=4096,d=128,hot")
  string(REGEX MATCH "${case} +[0-9.]+ [mun]?s +[0-9.]+ [mun]?s +[0-9.]+x" row "${table}")
  if(NOT row)
    message(FATAL_ERROR "no complete work split row for ${case} in the report")
  endif()
endforeach()
# The model cases (bench/model_bench.cc): tokens/s, its limit and the naive decoder's, in their own table.
foreach(phase IN ITEMS decode prefill)
  if(NOT table MATCHES "model/260K/f32/kv=f32/j=1,${phase} +[0-9,]+ +[0-9,]+ +[0-9]+% [a-z0-9]+ +[0-9,]+ +[0-9.]+x")
    message(FATAL_ERROR "no complete model row for model/260K/f32/kv=f32/j=1,${phase} in the report")
  endif()
endforeach()
if(NOT table MATCHES "wake-up latency [^\n]*: [0-9.]+ [mun]?s")
  message(FATAL_ERROR "no wake-up latency line in the report")
endif()
# The pair benchmarks ran and the report took its SIMD/scalar verdicts from them.
file(READ ${WORK_DIR}/summary.json summary)
string(REGEX MATCH "\"paired\": {\n *\"scalar\": [0-9]" paired "${summary}")
if(NOT paired)
  message(FATAL_ERROR "no paired SIMD/scalar ratio in ${WORK_DIR}/summary.json")
endif()
