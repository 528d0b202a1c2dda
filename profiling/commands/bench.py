"""`python -m profiling bench`: verify and time catalog kernels against cuBLAS in the GPU worker."""

from __future__ import annotations

import argparse

from profiling import usecases
from profiling.commands import (
    add_cluster_argument,
    print_cluster_summary,
    print_progress,
    save_document,
    seconds,
    whole_number,
    write_json,
)
from profiling.gpu.jobs import REPEATS, WARMUP, BenchSettings, parse_kernels, parse_shape, parse_sizes
from profiling.runs.results import format_table

HELP = "verify catalog kernels against cuBLAS and time them (CUDA events, L2 flushed, median of repeats)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kernels", default="all", help="comma list of catalog ids, or 'all' (default)")
    parser.add_argument("--sizes", default="", help="N or MxNxK, comma-separated (e.g. 1024,4096)")
    parser.add_argument("--shape", action="append", default=[], metavar="MxNxK", help="a non-square shape (repeatable)")
    parser.add_argument(
        "--repeats",
        type=whole_number("--repeats", *REPEATS),
        default=30,
        help="timed launches per kernel and size (default 30)",
    )
    parser.add_argument(
        "--warmup", type=whole_number("--warmup", *WARMUP), default=3, help="untimed launches first (default 3)"
    )
    parser.add_argument(
        "--max-seconds", type=seconds("--max-seconds"), default=4.0, help="cap on timed seconds per kernel and size"
    )
    parser.add_argument("--no-flush", action="store_true", help="do not flush the L2 before each timed launch")
    parser.add_argument("--verify-only", action="store_true", help="check results, do not time")
    parser.add_argument(
        "--timeout", type=seconds("--timeout"), default=120.0, help="seconds one kernel and size may take"
    )
    parser.add_argument("--json", dest="json_path", help="write the results document to this file")
    parser.add_argument("--save", metavar="LABEL", help="also save the results as a run in the run store")
    add_cluster_argument(parser)


def run(args: argparse.Namespace) -> int:
    kernels = [spec.id for spec in parse_kernels(args.kernels)]
    shapes = (parse_sizes(args.sizes) if args.sizes else []) + [parse_shape(s) for s in args.shape]
    settings = BenchSettings(
        repeats=args.repeats, warmup=args.warmup, max_seconds_per_run=args.max_seconds, flush_l2=not args.no_flush
    )
    plan = usecases.plan_benchmark(kernels, shapes, settings, args.verify_only, args.timeout)
    if args.cluster:
        from profiling.cluster import usecases as cluster_usecases

        document = cluster_usecases.run_benchmark(plan, args.cluster, print_progress)
    else:
        document = usecases.run_benchmark(plan, print_progress)
    if args.save:
        save_document(document, args.save)
    if args.json_path:
        write_json(args.json_path, document)
    device = document["device"]
    if device:
        print(f"{device['name']} (cc {device['cc']}, {device['sm_count']} SMs, driver {device.get('driver')})")
    print(format_table(document))
    print_cluster_summary(document)
    return 0 if usecases.all_verified(document) else 1
