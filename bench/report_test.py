#!/usr/bin/env python3
"""Checks report.py's statistics on a synthetic results file (ctest: report_test): the time columns are the
fastest repetition over all processes, the % of limit divides the SIMD path's median time by the calibration's
median, a pair's ratio is the median over processes."""
import json
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import report  # noqa: E402


def entry(name, aggregate, us, **counters):
    return dict({"name": f"{name}/real_time_{aggregate}", "run_name": f"{name}/real_time", "run_type": "aggregate",
                 "aggregate_name": aggregate, "real_time": us, "time_unit": "us", "family_index": 0}, **counters)


def process(dram_min, dram_median, simd_min, simd_median, ratio):
    dram = dict(bytes=256.0 * 2**20)  # 256 MiB per call
    case = "attention/decode/n=128,d=64,cold"
    call = dict(bytes=65536.0, flops=32768.0)
    return [entry("calibrate/read_dram/limit", "min", dram_min, **dram),
            entry("calibrate/read_dram/limit", "median", dram_median, **dram),
            entry(f"{case}/simd", "min", simd_min, **call), entry(f"{case}/simd", "median", simd_median, **call),
            entry(f"{case}/simd", "mean", 1e9, **call),  # neither statistic may take the mean
            entry(f"{case}/scalar", "min", 10.0, **call), entry(f"{case}/scalar", "median", 11.0, **call),
            entry(f"{case}/simd~scalar", "median", 50.0, ratio=ratio, **call)]


def main():
    # Three processes; the fastest repetition (1.0 us) is far from the medians (2.0, 2.2, 3.0 us: median 2.2).
    benchmarks = (process(8000.0, 9000.0, 1.9, 2.0, 1.5) + process(8500.0, 10000.0, 1.0, 3.0, 2.5)
                  + process(9500.0, 11000.0, 2.1, 2.2, 2.0))
    with tempfile.TemporaryDirectory() as tmp:
        raw = pathlib.Path(tmp) / "results.json"
        raw.write_text(json.dumps({"context": {}, "benchmarks": benchmarks}))
        _, results = report.load(raw)
    lim, rows = report.summarize(results)
    row = {r["case"]: r for r in rows}["attention/decode/n=128,d=64,cold"]
    failures = []

    def check(what, got, want):
        if got is None or abs(got - want) > 1e-9 * abs(want):
            failures.append(f"{what}: {got}, expected {want}")
    check("SIMD time (fastest repetition)", row["simd_s"], 1.0e-6)
    check("scalar time (fastest repetition)", row["scalar_s"], 10.0e-6)
    check("DRAM limit (median of the medians, 10000 us per 256 MiB)", lim["dram"], 256.0 * 2**20 / 10000e-6)
    check("% of limit (median 2.2 us against the limit's median)", row["percent_of_limit"],
          100.0 * (65536.0 / 2.2e-6) / (256.0 * 2**20 / 10000e-6))
    check("SIMD/scalar (median of the paired ratios)", row["simd_over_scalar"], 2.0)
    if row["limit"] != "dram":
        failures.append(f"limit: {row['limit']}, expected dram")
    for f in failures:
        print("FAIL", f)
    print("report_test:", "failed" if failures else "passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
