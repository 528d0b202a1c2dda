"""`python -m profiling tune`: try every valid tile configuration of the templated SGEMM on this GPU."""

from __future__ import annotations

import argparse

from profiling import usecases
from profiling.commands import print_progress, seconds, whole_number, write_json
from profiling.gpu.jobs import REPEATS, parse_sizes
from profiling.runs.results import format_table
from profiling.shape import Shape

HELP = "sweep the tile configurations of the templated kernels (v8, v9) on this GPU; record the fastest per size"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sizes", default="4096", help="N or MxNxK, comma-separated (e.g. 2048,4096)")
    parser.add_argument("--kernels", default="", help="tunable kernels to sweep (default: all of them)")
    parser.add_argument(
        "--repeats",
        type=whole_number("--repeats", *REPEATS),
        default=20,
        help="timed launches per configuration (default 20)",
    )
    parser.add_argument("--json", dest="json_path", help="write the sweep (a results document) to this file")
    parser.add_argument(
        "--record", action="store_true", help="record the fastest configurations for this GPU under results/tuning/"
    )
    parser.add_argument(
        "--timeout", type=seconds("--timeout"), default=120.0, help="seconds one configuration may take"
    )


def run(args: argparse.Namespace) -> int:
    plan = usecases.plan_tune(parse_sizes(args.sizes), args.kernels.split(","), args.repeats, args.timeout)
    document = usecases.run_tune(plan, record=args.record, progress=print_progress)
    if args.json_path:
        write_json(args.json_path, document)
    print(format_table(document))
    for b in document["tuning"]["best"]:
        size = Shape(b["m"], b["n"], b["k"]).label
        print(f"best at {size}: {b['config']} {b['tflops']:.1f} TFLOP/s ({b['pct_cublas']:.1f} % of cuBLAS)")
    return 0
