#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs the benchmark suite and prints its summary table; writes the raw results (JSON) and a chart (PNG).

  report.py --binary build/bench/bench/edgeattn_bench [--mode default|short|full] [--out DIR] [--filter REGEX]
  report.py --from-json DIR/results.json [--out DIR]      (table and chart from an earlier run)
  report.py --compare A/results.json B/results.json         (did any verdict change between two runs?)

One row per case: scalar and SIMD time per call (fastest of the repetitions), SIMD/scalar speedup, the peer library
that computed the right answer and came closest to edgeattn, edgeattn's speedup over it (both speedups from the
pair benchmarks, which time the two calls alternately), and the SIMD path's share of this core's limit (measured
by the calibrate/* benchmarks of the same run). The work split cases (split/...: one call's parts on two threads
against the single call) have a table of their own, with the issue's goals, and run in processes of their own
pinned to two CPUs. bench/README.md explains the columns and the chart.
"""
import argparse
import json
import os
import pathlib
import re
import resource
import shutil
import subprocess
import sys
import time

MODES = {
    # processes, repetitions per process, minimum time per repetition (s), warm-up (s)
    "default": (2, 2, 0.02, 0.01),  # DEFAULT_CASES only, unless --filter says otherwise
    "short": (3, 2, 0.02, 0.01),
    "full": (3, 5, 0.3, 0.1),
}
# The default mode's cases (scripts/bench.sh without --full): one size per kernel and per attention path or storage
# format, each with its scalar path, the peers and the pairs, plus the calibration (always run) and one case of each
# work split kind. A new kernel family adds one entry here. Attention paths are named by the shape ([a-z_]+: the
# path the dispatched target takes for it).
DEFAULT_CASES = [
    "dot/n=4096/", "exp/n=4096/", "softmax/n=1024/",
    "attention/[a-z_]+/L=4,d=8/", "attention/[a-z_]+/L=256,d=64/", "attention_causal/[a-z_]+/L=256,d=64/",
    "attention/decode/n=4096,d=128,hot/", "attention/decode/n=4096,d=128,cold/", "fixed_attention/[a-z_]+/L=4,d=8/",
    "linear/rows=16,in=256,out=256/", "linear_transposed/rows=16,in=256,out=256/",
    "positional_encoding/seq=64,d=256/", "rms_norm/rows=64,cols=384/", "layer_norm/rows=64,cols=384/",
    "rope/seq=64,heads=8,d=64,p0=0/", "activation/[a-z_]+/n=4096/", "gated_activation/silu/n=4096/", "add/n=4096/",
    "kv_cache/decode/(f32|f16|q8)/n=4096,d=128,hot/", "kv_cache/prefill16/f16/n=1024,d=128,hot/",
    "kv_cache/append16/f16/d=128/",
    "split/limit/", "split/prefill/L=1024,d=64/", "split/decode/f16/n=16384,d=128,hot/", "split/wakeup/",
]
# Where the benchmark program's context has no cache sizes (an old results file, a platform where Google Benchmark
# does not read them): hot working sets up to this size are judged against L2, larger ones against L3.
FALLBACK_L2_BYTES = 1 << 20
# The machine counts as quiet when no CPU other than the benchmark's was busy more than this share of a process's
# run, and the hypervisor took (steal time) no more than this share of the benchmark's own CPU.
QUIET_SHARE = 0.10
LOAD_SAMPLE_SECONDS = 0.5
# The work split over two threads (split/... cases, bench/split_bench.cc): the speedup over the single call each
# kind of case is to reach (issue 20), as (case prefix or suffix, goal); the first that matches applies.
SPLIT_GOALS = [("split/prefill", 1.8), (",cold", 1.6), (",hot", 1.7)]
SPLIT_WAKEUP = ("split/wakeup", "round_trip")


def read_proc_stat(path="/proc/stat"):
    """{"cpu0": [busy, idle, steal], ...} in jiffies since boot, per CPU. Busy is user + nice + system + irq +
    softirq (guest time is already inside user and nice); idle counts iowait too; steal is the time the hypervisor
    gave this vCPU's physical core to someone else."""
    cpus = {}
    try:
        lines = pathlib.Path(path).read_text().splitlines()
    except OSError:
        return cpus
    for line in lines:
        f = line.split()
        if not f or not re.fullmatch(r"cpu\d+", f[0]):
            continue
        v = [int(x) for x in f[1:]] + [0] * 8
        user, nice, system, idle, iowait, irq, softirq, steal = v[:8]
        cpus[f[0]] = [user + nice + system + irq + softirq, idle + iowait, steal]
    return cpus


def read_caches(cpu, root="/sys/devices/system/cpu"):
    """The caches of one CPU from sysfs, in the form of Google Benchmark's context "caches" array (which it reads
    for cpu0; the suite runs on another CPU, and on a hybrid processor the two can differ). Empty where sysfs has
    none."""
    out = []
    for index in sorted(pathlib.Path(root, f"cpu{cpu}", "cache").glob("index*")):
        try:
            size = (index / "size").read_text().strip()
            scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(size[-1:], 1)
            shared = (index / "shared_cpu_list").read_text().strip()
            out.append({"type": (index / "type").read_text().strip(), "level": int((index / "level").read_text()),
                        "size": int(size.rstrip("KMG")) * scale,
                        "num_sharing": sum(int(b) - int(a) + 1 for a, _, b in
                                           (r.partition("-") if "-" in r else (r, "", r) for r in shared.split(",")))})
        except (OSError, ValueError):
            continue
    return out


def run_suite(binary, mode, out_dir, regex):
    """Runs the suite in several processes, one after the other, and writes their entries into one results.json.

    On a shared VM a case can run 30-60% slower for a whole process (every repetition alike; the next process
    may not): the fastest repetition over several processes is far less likely to come from such a slow spell,
    and the median over the processes of a pair's ratio ignores one process's outlier."""
    processes, reps, min_time, warmup = MODES[mode]
    merged = None
    load = []
    # Two groups of processes: every case but the work split pinned to one CPU, and the split cases (two threads)
    # pinned to two; the program registers one group or the other (EDGEATTN_BENCH_SPLIT).
    ncpu = os.cpu_count() or 1
    groups = [("off", [ncpu - 1] if ncpu > 1 else None)]
    if split_cases_selected(binary, regex):
        groups.append(("only", [ncpu - 2, ncpu - 1] if ncpu > 1 else None))
    runs = [(group, cpus, n) for group, cpus in groups for n in range(processes)]
    for index, (group, cpus, n) in enumerate(runs):
        tag = f"{n + 1}" if group == "off" else f"split{n + 1}"
        raw = out_dir / f"results-process{tag}.json"
        cmd = [str(binary), f"--benchmark_repetitions={reps}", f"--benchmark_min_time={min_time}",
               f"--benchmark_min_warmup_time={warmup}", "--benchmark_report_aggregates_only=true",
               f"--benchmark_out={raw}", "--benchmark_out_format=json",
               # Repetitions spread over the whole run: a burst of noise from a neighbour on a shared machine then
               # hits one repetition of many cases instead of every repetition of one, and the minimum ignores it.
               "--benchmark_enable_random_interleaving=true"]
        if regex:
            cmd.append(f"--benchmark_filter={regex}")
        # One core, away from core 0 where the kernel handles most interrupts, when there is more than one (two
        # for the split cases).
        pinned = cpus if cpus and shutil.which("taskset") else None
        if pinned:
            cmd = ["taskset", "-c", ",".join(str(c) for c in pinned)] + cmd
        env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", EDGEATTN_BENCH_SPLIT=group)
        print(f"running the {mode} suite, process {index + 1} of {len(runs)}: {' '.join(cmd)}", file=sys.stderr)
        # The other CPUs' load while the process runs (a compile or a second benchmark on a vCPU that shares the
        # physical core halves the FMA peak): /proc/stat sampled every LOAD_SAMPLE_SECONDS, judged by load_warnings.
        samples = []
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        with open(out_dir / f"benchmark-process{tag}.log", "w") as log:
            run = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
            while True:
                samples.append({"seconds": time.monotonic(), "cpus": read_proc_stat()})
                try:
                    run.wait(timeout=LOAD_SAMPLE_SECONDS)
                    break
                except subprocess.TimeoutExpired:
                    continue
            samples.append({"seconds": time.monotonic(), "cpus": read_proc_stat()})
        if run.returncode:
            raise subprocess.CalledProcessError(run.returncode, cmd)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the process's CPU time, its threads together
        own = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        load.append({"process": index + 1, "cpu": ",".join(f"cpu{c}" for c in pinned) if pinned else None,
                     "samples": samples, "own_jiffies": own * os.sysconf("SC_CLK_TCK")})
        data = json.loads(raw.read_text())
        if merged is None:
            merged = data
        else:
            merged["benchmarks"] += data["benchmarks"]
    merged.setdefault("context", {})["edgeattn_cpu_load"] = load
    if ncpu > 1 and read_caches(ncpu - 1):
        merged["context"]["edgeattn_caches"] = read_caches(ncpu - 1)
    out = out_dir / "results.json"
    out.write_text(json.dumps(merged, indent=1))
    return out


def split_cases_selected(binary, regex):
    """Whether the filter keeps any case of the two-CPU group (split/, and the model/ cases on two threads): the
    program lists them without running anything."""
    cmd = [str(binary), "--benchmark_list_tests=true"] + ([f"--benchmark_filter={regex}"] if regex else [])
    listed = subprocess.run(cmd, env=dict(os.environ, EDGEATTN_BENCH_SPLIT="only"), capture_output=True, text=True)
    return listed.returncode == 0 and any(line.startswith(("split/", "model/")) for line in listed.stdout.splitlines())


def median(values):
    v, n = sorted(values), len(values)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def load(raw):
    """{(case, impl): entry} from Google Benchmark's JSON, over all the processes the file holds.

    A single implementation: the "min" statistic (fastest repetition), the fastest over all processes, and
    "median_seconds", the median over the processes of each process's median repetition (for the % of limit). A pair
    ("simd~<other>"): its "ratio" counter (the other's time / SIMD time, the median over the pair's alternating
    batches) from the "median" statistic of each process, and the median over the processes. An error entry in
    any process stands for its benchmark."""
    data = json.loads(pathlib.Path(raw).read_text())
    results, ratios, medians = {}, {}, {}
    for b in data["benchmarks"]:
        name = re.sub(r"/real_time$", "", b.get("run_name", b["name"]))
        case, _, impl = name.rpartition("/")
        order = b.get("family_index", len(results))  # registration order (the run itself is interleaved)
        earlier = results.get((case, impl))
        # Per process: the median aggregate of its repetitions, or the single run when it had one.
        kind = {"median": "median", None: "run"}.get(b.get("aggregate_name"))
        if b.get("error_occurred"):
            results[(case, impl)] = {"error": b.get("error_message", "error"), "order": order}
        elif earlier and "error" in earlier:
            continue
        elif "~" in impl:
            if kind and "ratio" in b:
                ratios.setdefault((case, impl), {}).setdefault(kind, []).append(b["ratio"])
                results[(case, impl)] = {"order": order}
        elif b.get("run_type") in ("aggregate", None, "iteration"):
            seconds = b["real_time"] * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b.get("time_unit", "ns")]
            if kind:
                medians.setdefault((case, impl), {}).setdefault(kind, []).append(seconds)
            if b.get("aggregate_name", "min") != "min" or (earlier and earlier["seconds"] <= seconds):
                continue
            results[(case, impl)] = {"seconds": seconds, "flops": b.get("flops", 0.0), "bytes": b.get("bytes", 0.0),
                                     "elements": b.get("elements", 0.0), "order": order}
            if "max_ulp" in b:  # the worst error against the double reference (the accuracy column)
                results[(case, impl)]["max_ulp"] = b["max_ulp"]
    for key, kinds in ratios.items():
        if "error" not in results[key]:
            values = sorted(kinds.get("median") or kinds["run"])
            results[key]["ratio"] = median(values)
            results[key]["ratios"] = values
    for key, kinds in medians.items():
        if "seconds" in results.get(key, {}):
            results[key]["median_seconds"] = median(kinds.get("median") or kinds["run"])
    return data.get("context", {}), results


def limits(results):
    """This core's limits from the calibrate/* benchmarks: their median times (as the % of limit uses the SIMD
    path's median time)."""
    def rate(case, key):
        r = results.get((case, "limit"))
        return r[key] / r.get("median_seconds", r["seconds"]) if r and "seconds" in r and r[key] else None
    return {"flops": rate("calibrate/fma_peak", "flops"), "l2": rate("calibrate/read_l2", "bytes"),
            "l3": rate("calibrate/read_l3", "bytes"), "dram": rate("calibrate/read_dram", "bytes")}


def fmt_time(s):
    if s is None:
        return "-"
    for unit, f in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if s >= f:
            return f"{s / f:.3g} {unit}"
    return f"{s / 1e-9:.3g} ns"


def fmt_accuracy(own, peer):
    """The accuracy column: edgeattn's and the best peer's worst error on the case's own inputs, in ULP of the double
    reference (bench_util.h, MaxUlpError); "-" where a case does not measure it."""
    if own is None and peer is None:
        return "-"
    ulp = lambda v: "-" if v is None else ("inf" if v == float("inf") else f"{v:.3g}")  # noqa: E731
    return f"{ulp(own)} / {ulp(peer)}"


def cache_sizes(context):
    """{level: bytes} of this core's data caches (data or unified; level 1 is L1D), from the results' context: the
    caches of the CPU the suite ran on (run_suite reads them from sysfs), else the "caches" array Google Benchmark
    writes (read from /sys/devices/system/cpu/cpu0/cache on Linux). Empty when the context has neither."""
    sizes = {}
    for c in context.get("edgeattn_caches") or context.get("caches") or []:
        if c.get("type") in ("Data", "Unified") and c.get("size"):
            sizes[int(c["level"])] = max(sizes.get(int(c["level"]), 0), int(c["size"]))
    return sizes


def memory_level(working_set, caches):
    """The calibrated memory level ("l2", "l3" or "dram") a hot working set of this many bytes is read from.

    The rule: the smallest calibrated level (L2, then L3) whose size holds the whole set, DRAM beyond them (or
    beyond L2 where the core has no L3). A set that fits L1D is judged against L2 (the suite has no L1
    calibration). A set larger than a level, by any amount, goes to the next one: what does not fit is evicted on
    every pass over K and V and read again from further out. The working set is the bytes a call reads (K and V);
    the query, the output row and the scores' workspace (1/(2d) of K and V: under 1% from d = 64) are not counted,
    so a cache exactly the size of K and V counts as holding them (on a Xeon with 2 MiB of L2, 2 MiB of K and V
    read at 1.58x the calibrated L3 rate: they are served from L2).
    Without cache sizes, the old fixed rule: L2 up to FALLBACK_L2_BYTES, L3 above."""
    if not caches:
        return "l2" if working_set <= FALLBACK_L2_BYTES else "l3"
    for level in (2, 3):
        if level in caches and working_set <= caches[level]:
            return f"l{level}"
    return "dram"


def calibration_warnings(results, caches):
    """Where a calibration buffer does not sit in the level it is meant to measure on this core (a core whose L2
    holds the 4 MiB "L3" buffer measures L2 there), what the limit then means."""
    if not caches:
        return []
    meant = {"calibrate/read_l2": 2, "calibrate/read_l3": 3, "calibrate/read_dram": None}
    warnings = []
    for case, level in meant.items():
        r = results.get((case, "limit"))
        if not r or not r.get("bytes"):
            continue
        got = memory_level(r["bytes"], caches)
        if got != (f"l{level}" if level else "dram") and not (level == 3 and 3 not in caches):
            warnings.append(f"{case} reads {r['bytes'] / 2**20:g} MiB, which this core serves from {got.upper()}: "
                            f"its limit is {got.upper()}'s, not the level its name says")
    return warnings


def percent_of_limit(case, r, lim, caches=None):
    """The SIMD path's share of the limit that applies to the case, and which limit that is: from median times.
    The fastest repetition of a call that reads DRAM can come from a quiet spell of the memory system that the
    calibration's own repetitions did not meet (up to 1.2x the calibrated DRAM rate on a shared VM). Decode
    cases: cold calls against DRAM; hot calls against the level memory_level picks for their bytes."""
    seconds = r.get("median_seconds", r["seconds"])
    if case.startswith("model/") and case.endswith(",decode"):  # every weight and the KV so far, read per token
        return model_limit(r, lim, caches)
    if case.startswith("model/") and case.endswith(",prefill"):
        return model_prefill_limit(case, r, lim, caches)
    if case.endswith((",hot", ",cold")):  # the decode cases: "attention/decode/n=...,d=...,hot"
        which = "dram" if case.endswith(",cold") else memory_level(r["bytes"], caches or {})
        bw = lim[which]
        return (100.0 * r["bytes"] / seconds / bw, which) if bw else (None, which)
    if r["flops"] and lim["flops"] and not case.startswith("dot/"):  # dot streams from L1: no useful limit
        return 100.0 * r["flops"] / seconds / lim["flops"], "fma"
    return None, ""


def model_limit(r, lim, caches):
    """A model's decode (bench/model_bench.cc): its bytes per token (the weights and the K/V read) against the
    bandwidth of the level that holds them (L3 where they fit, else DRAM): (% of limit, level). One core's
    bandwidth also for the cases on two threads: a second core adds little to one core's DRAM stream on these VMs
    (PLATFORM-NOTES: 1.1-1.5x), so they may pass 100%."""
    which = memory_level(r["bytes"] / r["elements"], caches or {}) if r.get("elements") else "dram"
    bw = lim[which]
    return (100.0 * r["bytes"] / r.get("median_seconds", r["seconds"]) / bw, which) if bw else (None, which)


def model_prefill_limit(case, r, lim, caches):
    """A model's prefill: the longer of its flops at one core's FMA peak per thread and its bytes (the weights
    once) at the bandwidth of the level that holds them (one core's, as for decode: see model_limit). A 32-token
    prefill of a model whose classifier, run on the last token only, is most of its bytes (15M: 37 of 60 MB) is
    bound by both in turn: (% of limit, "fma" or the level)."""
    seconds = r.get("median_seconds", r["seconds"])
    threads = int((re.search(r"/j=([0-9]+),", case) or re.match("(1)", "1")).group(1))
    pct, which = (100.0 * r["flops"] / seconds / (threads * lim["flops"]), "fma") if lim["flops"] else (None, "fma")
    level = memory_level(r["bytes"], caches or {})  # the whole call's working set
    bytes_pct = 100.0 * r["bytes"] / seconds / lim[level] if lim[level] else None
    if bytes_pct is not None and (pct is None or bytes_pct > pct):
        return bytes_pct, level
    return pct, which


def model_rows(results, lim, caches):
    """Tokens per second of the model cases: edgeattn's (fastest repetition), its limit as tokens/s (decode: the
    bandwidth limit above; prefill: model_prefill_limit), the naive decoder's with the paired ratio, and for the
    cases on several threads the paired speedup over the same calls on one thread."""
    def sort_key(case):  # shapes by size (the 1- and 2-CPU processes number their cases apart), then the config
        size = re.match(r"model/([0-9.]+)([KMG])/", case)
        scale = {"K": 1e3, "M": 1e6, "G": 1e9}
        return (float(size.group(1)) * scale[size.group(2)] if size else 0, case.endswith(",prefill"),
                ["kv=f32", "kv=f16", "kv=q8"].index(next((k for k in ("kv=f32", "kv=f16", "kv=q8") if k in case),
                                                         "kv=f32")), case)
    rows = []
    for case in sorted({c for (c, impl) in results if c.startswith("model/") and impl == "simd"}, key=sort_key):
        simd, naive = results[(case, "simd")], results.get((case, "naive"), {})
        row = {"case": case, "errors": [f"{i}: {r['error']}" for i, r in (("simd", simd), ("naive", naive))
                                        if "error" in r]}
        if "seconds" in simd and simd["elements"]:
            tokens = simd["elements"]
            row["tokens_per_s"] = tokens / simd["seconds"]
            if case.endswith(",decode"):
                pct, row["limit"] = model_limit(simd, lim, caches)
            else:
                pct, row["limit"] = model_prefill_limit(case, simd, lim, caches)
            median_tps = tokens / simd.get("median_seconds", simd["seconds"])
            row["limit_tokens_per_s"] = median_tps * 100.0 / pct if pct else None
            row["percent_of_limit"] = pct
        if "seconds" in naive and naive["elements"]:
            row["naive_tokens_per_s"] = naive["elements"] / naive["seconds"]
        row["over_one_thread"] = results.get((case, "simd~one_thread"), {}).get("ratio")
        row["over_naive"] = (results.get((case, "simd~naive"), {}).get("ratio") or
                             (row["tokens_per_s"] / row["naive_tokens_per_s"]
                              if row.get("tokens_per_s") and row.get("naive_tokens_per_s") else None))
        rows.append(row)
    # Q8 weights over the same case with float weights (the same run; the processes are timed apart, unpaired).
    by_case = {r["case"]: r for r in rows}
    for row in rows:
        f32 = by_case.get(row["case"].replace("/q8/", "/f32/")) if "/q8/" in row["case"] else None
        row["over_f32_weights"] = (row["tokens_per_s"] / f32["tokens_per_s"]
                                   if f32 and row.get("tokens_per_s") and f32.get("tokens_per_s") else None)
    return rows


def print_model_table(rows):
    """Tokens per second per model case; returns the number of edgeattn model cases that failed."""
    if not rows:
        return 0
    num = lambda v: f"{v:,.0f}" if v else "-"  # noqa: E731
    table = [["model case", "tok/s", "limit tok/s", "% of limit", "naive tok/s", "edgeattn/naive", "over 1 thread",
              "q8/f32 weights"]]
    ratio = lambda v: f"{v:.2f}x" if v else "-"  # noqa: E731
    for r in rows:
        pct = f"{r['percent_of_limit']:.0f}% {r['limit']}" if r.get("percent_of_limit") else "-"
        table.append([r["case"], num(r.get("tokens_per_s")), num(r.get("limit_tokens_per_s")), pct,
                      num(r.get("naive_tokens_per_s")), ratio(r["over_naive"]), ratio(r["over_one_thread"]),
                      ratio(r.get("over_f32_weights"))])
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    print("\nwhole models (bench/model_bench.cc; limit: decode bytes per token over the bandwidth of the level that "
          "holds weights and KV; prefill the longer of its flops over the FMA peak and its bytes over that "
          "bandwidth):")
    for n, row in enumerate(table):
        print("  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths))))
        if n == 0:
            print("  ".join("-" * w for w in widths))
    return sum(1 for r in rows for e in r["errors"] if e.startswith("simd"))


def load_warnings(load):
    """Warnings when the machine was not quiet while the suite ran, from the /proc/stat samples run_suite
    recorded (context "edgeattn_cpu_load": per process, the CPU the benchmark was pinned to and the samples).
    Per process: each other CPU's busy jiffies over all its jiffies between the first and the last sample, and the
    steal share of the benchmark's own CPU, each against QUIET_SHARE. A process pinned to several CPUs (the work
    split's) shares them with nothing it could tell apart by CPU: there, the busy jiffies of its CPUs that were not
    its own ("own_jiffies": the process's CPU time, its threads together) count against QUIET_SHARE of those CPUs'
    time. Returns (warnings, notes): notes say what could not be checked."""
    if not load:
        return [], ["load not recorded (results not produced by report.py --binary)"]
    warnings, notes = [], []
    for record in load:
        own, samples = record.get("cpu"), record.get("samples") or []
        owned = set(own.split(",")) if own else set()  # the CPUs the process was pinned to (two for split/)
        if own is None:
            notes.append(f"process {record['process']}: not pinned to a CPU, load not checked")
            continue
        if len(samples) < 2:
            notes.append(f"process {record['process']}: fewer than two load samples")
            continue
        first, last = samples[0]["cpus"], samples[-1]["cpus"]
        if len(owned) > 1:
            spans = [[b - a for a, b in zip(first[c], last[c])] for c in owned if c in first and c in last]
            total = sum(sum(span) for span in spans)
            if record.get("own_jiffies") is not None and total > 0:
                others = sum(span[0] for span in spans) - record["own_jiffies"]
                if others / total > QUIET_SHARE:
                    warnings.append(f"process {record['process']}: other processes were busy {100.0 * others / total:.0f}%"
                                    f" of {own}, the benchmark's CPUs")
            else:
                notes.append(f"process {record['process']}: its own CPU time not recorded, the load on its CPUs "
                             "not checked")
        for cpu in sorted(last, key=lambda c: int(c[3:])):
            if cpu not in first:
                continue
            busy, idle, steal = (b - a for a, b in zip(first[cpu], last[cpu]))
            total = busy + idle + steal
            if total <= 0:
                continue
            if cpu not in owned and busy / total > QUIET_SHARE:
                warnings.append(f"process {record['process']}: {cpu} was busy {100.0 * busy / total:.0f}% of the run "
                                f"(the benchmark ran on {own})")
            if cpu in owned and steal / total > QUIET_SHARE:
                warnings.append(f"process {record['process']}: the hypervisor took {100.0 * steal / total:.0f}% of "
                                f"{cpu}, the benchmark's CPU (steal time)")
    return warnings, notes


def summarize(results, context=None):
    """One row per case. The time columns are each implementation's fastest repetition; the verdict columns
    (SIMD/scalar, edgeattn/best peer) are the paired ratios, where the pair was timed. context: the results'
    context (this core's cache sizes)."""
    lim = limits(results)
    caches = cache_sizes(context or {})
    first = {}
    for (case, impl), r in results.items():
        if impl != "limit" and "~" not in impl and not case.startswith("split/"):
            first[case] = min(first.get(case, r["order"]), r["order"])
    cases = sorted(first, key=first.get)
    rows = []
    for case in cases:
        get = lambda impl: results.get((case, impl))  # noqa: E731
        paired = lambda other: (get("simd~" + other) or {}).get("ratio")  # noqa: E731
        scalar, simd = get("scalar"), get("simd")
        # The compile-time-shape API is compared with the peers' runtime attention of the same shape.
        peer_case = re.sub(r"^fixed_attention", "attention", case)
        peers, wrong = {}, []
        for (c, impl), r in results.items():
            # one_query_head (kv_cache_bench.cc) is a smaller problem on the same cache, not a peer: its pair's
            # ratio stays in the raw results; one_thread (model_bench.cc) is the model table's speedup.
            if (c != peer_case or impl in ("scalar", "simd", "limit", "one_query_head", "one_thread")
                    or impl.startswith("simd:")
                    or "~" in impl):
                continue
            if "seconds" in r:
                peers[impl] = r["seconds"]
            else:
                wrong.append(f"{impl}: {r['error']}")
        # The best peer: the one closest to (or furthest ahead of) edgeattn in the paired timing; by time alone
        # where no pair was timed.
        ranked = {impl: paired(impl) for impl in peers if paired(impl)}
        if ranked:
            name = min(ranked, key=ranked.get)
            best = (name, peers[name])
        else:
            best = min(peers.items(), key=lambda kv: kv[1]) if peers else None
        row = {"case": case,
               "scalar_s": scalar.get("seconds") if scalar else None,
               "simd_s": simd.get("seconds") if simd else None,
               "errors": [f"{i}: {get(i)['error']}" for i in ("scalar", "simd") if get(i) and "error" in get(i)],
               "best_peer": best[0] if best else None, "best_peer_s": best[1] if best else None,
               "peers": peers, "wrong_peers": wrong,
               "paired": {impl[5:]: r["ratio"] for (c, impl), r in results.items()
                          if c == case and impl.startswith("simd~") and "ratio" in r},
               "targets": {impl[5:]: r["seconds"] for (c, impl), r in results.items()
                           if c == case and impl.startswith("simd:") and "seconds" in r}}
        times = lambda a, b: (a / b) if a and b else None  # noqa: E731
        row["simd_over_scalar"] = paired("scalar") or times(row["scalar_s"], row["simd_s"])
        row["over_best_peer"] = ((ranked.get(best[0]) or times(row["best_peer_s"], row["simd_s"]))
                                 if best else None)
        row["percent_of_limit"], row["limit"] = (percent_of_limit(case, simd, lim, caches) if row["simd_s"]
                                                 else (None, ""))
        row["max_ulp"] = (simd or {}).get("max_ulp")
        row["best_peer_max_ulp"] = (results.get((peer_case, best[0])) or {}).get("max_ulp") if best else None
        rows.append(row)
    return lim, rows


def split_goal(case):
    return next((goal for key, goal in SPLIT_GOALS if case.startswith(key) or case.endswith(key)), None)


def split_rows(results):
    """The work split cases: the single call's and the split's fastest repetitions, the split's speedup (the
    paired ratio "simd~single": the single call's time / the split's, the median over the processes), the goal
    and whether it is met; and the worker's empty round trip (wake-up and barrier), or None."""
    rows = []
    cases = sorted({c for (c, impl) in results if c.startswith("split/") and impl in ("single", "simd")},
                   key=lambda c: min(r["order"] for (k, _), r in results.items() if k == c))
    for case in cases:
        single, split = results.get((case, "single"), {}), results.get((case, "simd"), {})
        speedup = results.get((case, "simd~single"), {}).get("ratio")
        if speedup is None and single.get("seconds") and split.get("seconds"):
            speedup = single["seconds"] / split["seconds"]
        goal = split_goal(case)
        rows.append({"case": case, "single_s": single.get("seconds"), "split_s": split.get("seconds"),
                     "speedup": speedup, "goal": goal,
                     "met": (speedup >= goal) if speedup is not None and goal is not None else None,
                     "errors": [f"{i}: {r['error']}" for i, r in (("single", single), ("split", split),
                                                                  ("pair", results.get((case, "simd~single"), {})))
                                if "error" in r]})
    wakeup = results.get(SPLIT_WAKEUP, {}).get("seconds")
    return rows, wakeup


def print_split_table(rows, wakeup):
    """The split table; returns the number of split cases that failed (a wrong result or an error status)."""
    if not rows and wakeup is None:
        return 0
    print("\nwork split over 2 threads (split/...: the benchmark's own worker thread and the main thread; "
          "speedup = single call's time / split's, paired):")
    table = [["case", "single call", "split", "speedup", "goal", ""]]
    for r in rows:
        table.append([r["case"], fmt_time(r["single_s"]), fmt_time(r["split_s"]),
                      f"{r['speedup']:.2f}x" if r["speedup"] else "-", f">= {r['goal']}x" if r["goal"] else "-",
                      {True: "met", False: "not met", None: ""}[r["met"]]])
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    for n, row in enumerate(table):
        print("  ".join(cell.ljust(w) if i in (0, 5) else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths))))
        if n == 0:
            print("  ".join("-" * w for w in widths))
    if wakeup is not None:
        print(f"wake-up latency (an empty round trip: wake the worker, barrier, no parts; the application's cost, "
              f"which each split call above includes once): {fmt_time(wakeup)}")
    failed = [f"{r['case']}: {e}" for r in rows for e in r["errors"]]
    for f in failed:
        print(f"  not timed: {f}")
    return len(failed)


def machine_checks(context, results):
    """What the summary says about the machine: its data caches, and the warnings about the calibration and the
    other CPUs' load."""
    caches = cache_sizes(context)
    load, notes = load_warnings(context.get("edgeattn_cpu_load"))
    return {"caches": {("L1D" if level == 1 else f"L{level}"): size for level, size in sorted(caches.items())},
            "calibration_warnings": calibration_warnings(results, caches), "load_warnings": load,
            "load_notes": notes, "quiet_share": QUIET_SHARE}


def print_table(context, lim, rows, machine):
    print(f"edgeattn benchmark on {context.get('host_name', '?')}: {context.get('num_cpus', '?')} CPUs at "
          f"{context.get('mhz_per_cpu', '?')} MHz, SIMD target {context.get('edgeattn_simd_target', '?')}")
    gf = lambda v: f"{v / 1e9:.1f}" if v else "?"  # noqa: E731
    print(f"limits of this core (medians, measured in the same run): FMA peak {gf(lim['flops'])} GFLOP/s, "
          f"read L2 {gf(lim['l2'])} GB/s, L3 {gf(lim['l3'])} GB/s, DRAM {gf(lim['dram'])} GB/s")
    sizes = ", ".join(f"{name} {size / 2**10:g} KiB" if size < 2**20 else f"{name} {size / 2**20:g} MiB"
                      for name, size in machine["caches"].items())
    print(f"data caches: {sizes}" if sizes else
          f"data caches: unknown (hot decode judged against L2 up to {FALLBACK_L2_BYTES >> 20} MiB, L3 above)")
    for w in machine["calibration_warnings"]:
        print(f"WARNING: {w}")
    if machine["load_warnings"]:
        print(f"WARNING: the machine was not quiet (another CPU busy, other processes on the split cases' CPUs, or steal "
              f"time, above "
              f"{100 * QUIET_SHARE:.0f}% of a process's run); times, limits and even paired ratios move with it:")
        for w in machine["load_warnings"]:
            print(f"  {w}")
    else:
        print("other CPUs: " + ("; ".join(machine["load_notes"]) if machine["load_notes"] else
                                f"quiet (none busy more than {100 * QUIET_SHARE:.0f}% of any process's run)"))
    header = ["case", "scalar", "SIMD", "SIMD/scalar", "best peer", "edgeattn/best peer", "% of limit",
              "max error ULP (edgeattn / peer)"]
    table = [header]
    for r in rows:
        ratio = lambda v: f"{v:.2f}x" if v else "-"  # noqa: E731
        peer = f"{r['best_peer']} {fmt_time(r['best_peer_s'])}" if r["best_peer"] else "-"
        pct = f"{r['percent_of_limit']:.0f}% {r['limit']}" if r["percent_of_limit"] is not None else "-"
        table.append([r["case"], fmt_time(r["scalar_s"]), fmt_time(r["simd_s"]), ratio(r["simd_over_scalar"]), peer,
                      ratio(r["over_best_peer"]), pct, fmt_accuracy(r.get("max_ulp"), r.get("best_peer_max_ulp"))])
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for n, row in enumerate(table):
        print("  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths))))
        if n == 0:
            print("  ".join("-" * w for w in widths))
    problems = [f"{r['case']}: {e}" for r in rows for e in r["errors"] + r["wrong_peers"]]
    own = sum(len(r["errors"]) for r in rows)
    if problems:
        print("\nnot timed (wrong result or error):")
        for p in problems:
            print(f"  {p}")
    for r in rows:
        if "runtime" in r["paired"]:
            print(f"{r['case']}: the compile-time-shape API is {r['paired']['runtime']:.2f}x as fast as edgeattn's "
                  "runtime-shape API (paired timing)")
    for r in rows:
        if r["targets"]:
            print(f"{r['case']} per target: " + ", ".join(f"{t} {fmt_time(s)}" for t, s in r["targets"].items()))
    return own


def chart(rows, path, models=()):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no chart: matplotlib is missing (Debian: python3-matplotlib)", file=sys.stderr)
        return
    rows = [r for r in rows if r["simd_s"]]
    names = [r["case"] for r in rows]
    y = range(len(rows))
    tokens = {m["case"]: m for m in models if m.get("tokens_per_s")}
    fig, axes = plt.subplots(1, 4 if tokens else 3, figsize=(24 if tokens else 18, 0.28 * len(rows) + 2),
                             sharey=True)
    panels = [("SIMD speedup over scalar (x, log)", [r["simd_over_scalar"] or 0 for r in rows], True, 1.0),
              ("edgeattn speedup over the best peer (x, log)", [r["over_best_peer"] or 0 for r in rows], True, 1.0),
              ("% of this core's limit (FMA peak or bandwidth)", [r["percent_of_limit"] or 0 for r in rows], False,
               None)]
    for ax, (title, values, log, ref) in zip(axes, panels):
        colors = ["tab:green" if (ref is None or v >= ref) else "tab:red" for v in values]
        ax.barh(list(y), [v if v > 0 else float("nan") for v in values], color=colors)
        if log:
            ax.set_xscale("log")
        if ref:
            ax.axvline(ref, color="black", linewidth=0.8)
        ax.set_title(title, fontsize=10)
        ax.grid(axis="x", alpha=0.3)
    if tokens:  # the model cases: tokens/s, a tick at each one's limit
        ax = axes[3]
        values = [tokens[n]["tokens_per_s"] if n in tokens else float("nan") for n in names]
        ax.barh(list(y), values, color="tab:blue")
        for i, n in enumerate(names):
            if n in tokens and tokens[n].get("limit_tokens_per_s"):
                ax.plot([tokens[n]["limit_tokens_per_s"]] * 2, [i - 0.4, i + 0.4], color="black", linewidth=1.5)
        ax.set_xscale("log")
        ax.set_title("model tokens/s (| = limit: bytes or FMA peak)", fontsize=10)
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(list(y))
    axes[0].set_yticklabels(names, fontsize=7)
    axes[0].invert_yaxis()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"chart: {path}", file=sys.stderr)


def compare(first, second):
    """The report's verdicts that differ between two runs: for each case, edgeattn's SIMD path against its scalar
    path and against each peer (the paired ratios), counting only those that differ by more than 10% in both
    runs. Returns the number of such flips."""
    _, a = load(first)
    _, b = load(second)
    flips = checked = 0
    for key in sorted(k for k in a if "ratio" in a[k] and "ratio" in b.get(k, {})):
        ra, rb = a[key]["ratio"], b[key]["ratio"]
        if max(ra, 1 / ra) < 1.1 or max(rb, 1 / rb) < 1.1:
            continue
        checked += 1
        if (ra < 1) != (rb < 1):
            flips += 1
            print(f"flip: {key[0]} {key[1]}: {ra:.2f} then {rb:.2f}")
    print(f"{checked} verdicts differing by more than 10% in both runs, {flips} changed")
    return flips


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--binary", type=pathlib.Path)
    p.add_argument("--from-json", type=pathlib.Path)
    p.add_argument("--mode", choices=sorted(MODES), default="default")
    p.add_argument("--out", type=pathlib.Path, default=pathlib.Path("build/bench-report"))
    p.add_argument("--filter", default="", help="benchmark name regex (the calibrate/ cases are always kept)")
    p.add_argument("--compare", nargs=2, type=pathlib.Path, metavar="RESULTS_JSON",
                   help="list the verdicts that changed between two runs, and exit non-zero if any did")
    args = p.parse_args()
    if args.compare:
        sys.exit(1 if compare(*args.compare) else 0)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.from_json:
        raw = args.from_json
    elif args.binary:
        cases = args.filter or ("|".join(DEFAULT_CASES) if args.mode == "default" else "")
        regex = f"calibrate/|{cases}" if cases else ""
        raw = run_suite(args.binary, args.mode, args.out, regex)
    else:
        p.error("--binary or --from-json is required")
    context, results = load(raw)
    lim, rows = summarize(results, context)
    machine = machine_checks(context, results)
    own_errors = print_table(context, lim, rows, machine)
    split, wakeup = split_rows(results)
    own_errors += print_split_table(split, wakeup)
    models = model_rows(results, lim, cache_sizes(context))
    own_errors += print_model_table(models)
    (args.out / "summary.json").write_text(json.dumps({"limits": lim, "machine": machine, "rows": rows,
                                                       "split": split, "split_wakeup_s": wakeup, "models": models},
                                                      indent=1))
    chart(rows, args.out / "chart.png", models)
    print(f"\nraw results: {raw}; summary: {args.out / 'summary.json'}; chart: {args.out / 'chart.png'}")
    if own_errors:
        print(f"{own_errors} edgeattn benchmark(s) failed: a wrong result or an error status is a bug", file=sys.stderr)
        sys.exit(3)
    if machine["load_warnings"]:
        print("the machine was not quiet during the run: see the WARNING above the table", file=sys.stderr)


if __name__ == "__main__":
    main()
