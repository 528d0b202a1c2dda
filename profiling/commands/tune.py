"""`python -m profiling tune`: try every valid tile configuration of the templated SGEMM on this GPU."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

HELP = "sweep the tile configurations of the templated kernels (v8, v9) on this GPU; record the fastest per size"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sizes", default="4096", help="square sizes, e.g. 2048,4096")
    parser.add_argument("--kernels", default="", help="tunable kernels to sweep (default: all of them)")
    parser.add_argument("--repeats", type=int, default=20, help="timed launches per configuration (default 20)")
    parser.add_argument("--json", dest="json_path", help="write the sweep (a results document) to this file")
    parser.add_argument(
        "--record", action="store_true", help="record the fastest configurations for this GPU under results/tuning/"
    )
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds one configuration may take")


def best_per_size(results: list[dict]) -> list[dict]:
    """The fastest verified configuration of each tunable kernel at each size (ties go to the first)."""
    from kernels.tuning import config_by_id

    best: dict[tuple[str, int, int, int], dict] = {}
    for r in results:
        config = config_by_id(r["kernel"])
        if r["status"] != "ok" or not r.get("tflops") or config is None:
            continue
        key = (config["base"], r["m"], r["n"], r["k"])
        if key not in best or r["tflops"] > best[key]["tflops"]:
            best[key] = r
    return [
        {"base": base, "m": m, "n": n, "k": k, "config": r["kernel"], "tflops": r["tflops"],
         "pct_cublas": r.get("pct_cublas")}
        for (base, m, n, k), r in sorted(best.items())
    ]  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from kernels.registry import get_kernel
    from kernels.tuning import TUNING_CONFIGS, V9_TUNING_CONFIGS, tunable_bases, tuned_record_path
    from profiling.errors import InvalidInput
    from profiling.gpu.jobs import BenchSettings, Job, build_tasks, parse_sizes
    from profiling.gpu.worker import run_job
    from profiling.runs.results import add_reference_ratios, build_document, format_table, utc_now

    shapes = parse_sizes(args.sizes)
    settings = BenchSettings(repeats=args.repeats)
    settings.validate()
    bases = [b.strip() for b in args.kernels.split(",") if b.strip()] or tunable_bases()
    unknown = [b for b in bases if b not in tunable_bases()]
    if unknown:
        raise InvalidInput(f"not tunable: {', '.join(unknown)}; tunable kernels: {', '.join(tunable_bases())}")
    configs = [c for c in TUNING_CONFIGS + V9_TUNING_CONFIGS if c["base"] in bases]
    specs = [get_kernel(c["id"]) for c in configs]
    job = Job(op="bench", tasks=build_tasks(specs, shapes), settings=settings)
    started = utc_now()
    device, results = run_job(
        job,
        task_timeout_s=args.timeout,
        on_result=lambda r: print(f"  {r['kernel']:>44} {r['m']}^3 {r['status']}", file=sys.stderr, flush=True),
    )
    add_reference_ratios(results)
    document = build_document(device, asdict(settings), results, started)
    document["tuning"] = {"kernels": bases, "best": best_per_size(results)}
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
