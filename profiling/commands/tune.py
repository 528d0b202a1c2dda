"""`python -m profiling tune`: try every valid tile configuration of the templated SGEMM on this GPU."""

from __future__ import annotations

import argparse

from profiling import usecases
from profiling.commands import (
    add_cluster_argument,
    check_outputs,
    keep_results,
    print_cluster_summary,
    print_progress,
    seconds,
    whole_number,
)
from profiling.commands.outputs import check_output_folder
from profiling.errors import InvalidInput
from profiling.gpu.jobs import REPEATS, parse_sizes
from profiling.paths import TUNED_DIR
from profiling.runs.results import format_table
from profiling.shape import Shape

HELP = "sweep the tile configurations of the templated kernels (v8, v9) on this GPU; record the fastest per size"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sizes", default="4096", help="N or MxNxK, comma-separated (e.g. 2048,4096)")
    parser.add_argument(
        "--kernels",
        default="",
        help="tunable kernels to sweep, or single configuration ids of them (default: all of them)",
    )
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
    parser.add_argument(
        "--interleaved",
        action="store_true",
        help="time each size's configurations and cuBLAS together, in rounds that run each once, so their medians "
        "compare under the same clocks and heat (to choose between configurations a few per cent apart)",
    )
    parser.add_argument("--save", metavar="LABEL", help="also save the sweep as a run in the run store")
    add_cluster_argument(parser)


def run(args: argparse.Namespace) -> int:
    plan = usecases.plan_tune(
        parse_sizes(args.sizes), args.kernels.split(","), args.repeats, args.timeout, args.interleaved
    )
    check_outputs(args.json_path, args.save)
    if args.record:
        check_output_folder(TUNED_DIR, "--record")
    if args.cluster:
        from profiling.cluster import usecases as cluster_usecases

        document = cluster_usecases.run_tune(plan, args.cluster, record=args.record, progress=print_progress)
    else:
        document = usecases.run_tune(plan, record=args.record, progress=print_progress)
    print(format_table(document))
    tuning = document.tuning or {}
    by_type = tuning.get("by_gpu_type") or {None: tuning.get("best") or []}
    for gpu, best in by_type.items():
        for b in best:
            size = Shape(b["m"], b["n"], b["k"]).label
            pct = f"{b['pct_cublas']:.1f} % of cuBLAS" if b.get("pct_cublas") is not None else "no cuBLAS reference"
            on = f" on {gpu}" if gpu else ""
            print(f"best{on} at {size}: {b['config']} {b['tflops']:.1f} TFLOP/s ({pct})")
    print_cluster_summary(document)
    keep_results(document, args.json_path, args.save)
    if tuning.get("record_errors"):
        raise InvalidInput("; ".join(tuning["record_errors"]))
    return 0
