#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds and runs the benchmark suite on this machine and prints its summary table: edgeattn's scalar and SIMD
# paths, the peer libraries (Eigen, OpenBLAS, oneDNN, XNNPACK) and this core's measured limits. Installs what a
# fresh Debian/Ubuntu machine lacks first. Writes build/bench-report/{results.json,summary.json,chart.png}.
#   scripts/bench.sh                 the default run: one case per kernel and attention path or storage format,
#                                    the peers, the calibration, the chart (bench/report.py, DEFAULT_CASES)
#   scripts/bench.sh --full          every case, with more repetitions (the figures to quote)
#   scripts/bench.sh --short         every case, with the default run's repetitions
#   scripts/bench.sh --filter REGEX  only the benchmarks whose name matches (e.g. 'softmax|,hot')
# bench/README.md explains the table and the chart. Run it on a quiet machine: report.py samples the other CPUs'
# load (/proc/stat) during the run and the summary warns when one was busy more than 10% of it. The build is the
# bench preset's (build/bench: the library as host-release builds it, the benchmark program, no tests).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=default
args=()
while [ $# -gt 0 ]; do
  case $1 in
    --full) mode=full ;;
    --short) mode=short ;;
    --filter) args+=(--filter "$2"); shift ;;
    *) echo "unknown argument: $1 (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
  shift
done
scripts/install-deps.sh ca-certificates cmake ninja-build g++ binutils python3 python3-matplotlib libhwy-dev \
  libbenchmark-dev libeigen3-dev libopenblas-dev libdnnl-dev ocl-icd-opencl-dev libxnnpack-dev \
  libpthreadpool-dev util-linux ccache
start=$SECONDS
cmake --preset bench >/dev/null
cmake --build --preset bench
echo "bench.sh: configured and built in $((SECONDS - start)) s"
# Debian's python3, which sees python3-matplotlib, even where another python3 comes first on PATH.
python=python3
[ -x /usr/bin/python3 ] && python=/usr/bin/python3
start=$SECONDS
"$python" bench/report.py --binary build/bench/bench/edgeattn_bench --mode "$mode" \
  --out build/bench-report "${args[@]}"
echo "bench.sh: $mode run in $((SECONDS - start)) s; ${SECONDS} s in all"
