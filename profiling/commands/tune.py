"""`python -m profiling tune`: try every valid tile configuration of the templated SGEMM on this GPU."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

HELP = "sweep the templated v8 kernel's tile configurations on this GPU, verify each, record the fastest per size"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sizes", default="4096", help="square sizes, e.g. 2048,4096")
    parser.add_argument("--repeats", type=int, default=20, help="timed launches per configuration (default 20)")
    parser.add_argument("--json", dest="json_path", help="write the sweep (a results document) to this file")
    parser.add_argument(
        "--record", action="store_true", help="record the fastest configurations for this GPU under results/tuning/"
    )
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds one configuration may take")


def best_per_size(results: list[dict]) -> list[dict]:
    """The fastest verified tuning configuration at each size (ties go to the first)."""
    best: dict[tuple[int, int, int], dict] = {}
    for r in results:
        if r["status"] != "ok" or not r.get("tflops") or r["kernel"] == "cublas":
            continue
        key = (r["m"], r["n"], r["k"])
        if key not in best or r["tflops"] > best[key]["tflops"]:
            best[key] = r
    return [
        {"m": m, "n": n, "k": k, "config": r["kernel"], "tflops": r["tflops"], "pct_cublas": r.get("pct_cublas")}
        for (m, n, k), r in sorted(best.items())
    ]


def run(args: argparse.Namespace) -> int:
    from kernels.catalog import get_kernel
    from kernels.tuning import TUNING_CONFIGS, tuned_record_path
    from profiling.jobs import BenchSettings, Job, build_tasks, parse_sizes
    from profiling.results import add_reference_ratios, build_document, format_table, utc_now
    from profiling.worker import run_job

    shapes = parse_sizes(args.sizes)
    settings = BenchSettings(repeats=args.repeats)
    settings.validate()
    specs = [get_kernel(c["id"]) for c in TUNING_CONFIGS]
    job = Job(op="bench", tasks=build_tasks(specs, shapes), settings=settings)
    started = utc_now()
    device, results = run_job(
        job,
        task_timeout_s=args.timeout,
        on_result=lambda r: print(f"  {r['kernel']:>44} {r['m']}^3 {r['status']}", file=sys.stderr, flush=True),
    )
    add_reference_ratios(results)
    document = build_document(device, asdict(settings), results, started)
    document["tuning"] = {"base_kernel": "v8-async", "best": best_per_size(results)}
    if args.json_path:
        with open(args.json_path, "w") as fh:
            json.dump(document, fh, indent=1)
    if args.record and device:
        path = tuned_record_path(device["name"])
        path.parent.mkdir(parents=True, exist_ok=True)
        record = {"device": device["name"], "measured_utc": started, "best": document["tuning"]["best"]}
        path.write_text(json.dumps(record, indent=1))
    print(format_table(document))
    for b in document["tuning"]["best"]:
        print(
            f"best at {b['m']}x{b['n']}x{b['k']}: {b['config']} {b['tflops']:.1f} TFLOP/s ({b['pct_cublas']:.1f} % of cuBLAS)"
        )
    return 0
