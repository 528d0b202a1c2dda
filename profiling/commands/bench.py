"""`python -m profiling bench`: verify and time catalog kernels against cuBLAS in the GPU worker."""

from __future__ import annotations

import argparse

from profiling import usecases
from profiling.commands import (
    add_cluster_argument,
    check_outputs,
    keep_results,
    percentage,
    print_cluster_summary,
    print_progress,
    seconds,
    seconds_between,
    whole_number,
)
from profiling.errors import InvalidInput
from profiling.gpu.jobs import REPEATS, REST_SECONDS, WARMUP, BenchSettings, parse_grid, parse_kernels, parse_sizes
from profiling.runs.results import ResultsDocument, compiler_notes, format_table
from profiling.runs.verdict import DEFAULT_THRESHOLD_PCT
from profiling.shape import parse_shape

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
    parser.add_argument(
        "--no-hold",
        action="store_true",
        help="enqueue timed launches as the host gets to them, not behind a hold kernel (the host may then be timed)",
    )
    parser.add_argument(
        "--rest",
        type=seconds_between("--rest", *REST_SECONDS),
        default=0.0,
        metavar="SECONDS",
        help="with --ab: rest this long before each pair, which then runs an untimed and a timed launch of both, "
        "so no pair runs power-capped (long launches on an H100/H200 reach the cap after about 10 back to back)",
    )
    parser.add_argument("--verify-only", action="store_true", help="check results, do not time")
    parser.add_argument(
        "--timeout", type=seconds("--timeout"), default=120.0, help="seconds one kernel and size may take"
    )
    parser.add_argument(
        "--grid",
        metavar="M=..,N=..,K=..",
        help="sweep every shape of a grid, e.g. M=1,16,128,1024,N=1024,4096,K=4096 (with --sizes/--shape too)",
    )
    parser.add_argument(
        "--ab",
        metavar="A,B",
        help="interleaved A/B of two kernels in one worker: launches alternate, so drift hits both alike; "
        "prints B's time against A's with a 95%% interval",
    )
    parser.add_argument(
        "--interleaved",
        action="store_true",
        help="time each shape's kernels and cuBLAS together in rounds that run each once (each launch after an L2 "
        "flush), so drift hits all alike; one operation's kernels only",
    )
    parser.add_argument(
        "--threshold",
        type=percentage("--threshold"),
        default=DEFAULT_THRESHOLD_PCT,
        metavar="PCT",
        help="practical threshold of the A/B verdict (default %(default)s%%)",
    )
    parser.add_argument("--json", dest="json_path", help="write the results document to this file")
    parser.add_argument("--save", metavar="LABEL", help="also save the results as a run in the run store")
    add_cluster_argument(parser)


def run(args: argparse.Namespace) -> int:
    shapes = (parse_sizes(args.sizes) if args.sizes else []) + [parse_shape(s) for s in args.shape]
    shapes += parse_grid(args.grid) if args.grid else []
    settings = BenchSettings(
        repeats=args.repeats,
        warmup=args.warmup,
        max_seconds_per_run=args.max_seconds,
        flush_l2=not args.no_flush,
        hold_launches=not args.no_hold,
        rest_s=args.rest,
    )
    if args.rest and not args.ab:
        raise InvalidInput("--rest spaces out the pairs of an A/B; use it with --ab A,B")
    if args.ab:
        if args.interleaved:
            raise InvalidInput("--ab already alternates its two kernels; leave out --interleaved")
        return _run_ab(args, shapes, settings)
    if args.interleaved and args.cluster:
        raise InvalidInput("--interleaved times a shape's kernels on one GPU; it cannot be spread with --cluster")
    kernels = [spec.id for spec in parse_kernels(args.kernels)]
    plan = usecases.plan_benchmark(kernels, shapes, settings, args.verify_only, args.timeout, args.interleaved)
    check_outputs(args.json_path, args.save)
    if args.cluster:
        from profiling.cluster import usecases as cluster_usecases

        document = cluster_usecases.run_benchmark(plan, args.cluster, print_progress)
    else:
        document = usecases.run_benchmark(plan, print_progress)
    _name_device(document)
    print(format_table(document))
    for note, ran in compiler_notes(document).items():
        print(f"note: the tuning record's choices below were {note}")
        print("\n".join(f"  {line}" for line in ran))
    print_cluster_summary(document)
    keep_results(document, args.json_path, args.save)
    return 0 if document.all_verified else 1


def _run_ab(args: argparse.Namespace, shapes: list, settings: BenchSettings) -> int:
    from profiling import abtest

    if args.verify_only:
        raise InvalidInput("--ab times two kernels; it cannot be combined with --verify-only")
    if args.cluster:
        raise InvalidInput("--ab alternates two kernels on one GPU; it cannot be spread with --cluster")
    kernel_a, kernel_b = abtest.parse_pair(args.ab)
    plan = abtest.plan_ab(kernel_a, kernel_b, shapes, settings, args.timeout)
    check_outputs(args.json_path, args.save)
    document = abtest.run_ab(plan, print_progress)
    _name_device(document)
    summary = abtest.ab_summary(document, kernel_a, kernel_b, paired=True, threshold_pct=args.threshold)
    print(f"interleaved A/B, B = {kernel_b} against A = {kernel_a}; 95% paired bootstrap interval of B/A")
    rest_note = abtest.rest_note(document)
    if rest_note:
        print(rest_note.strip())
    print(summary.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    keep_results(document, args.json_path, args.save)
    return 0 if document.all_verified else 1


def _name_device(document: ResultsDocument) -> None:
    """The device line of a results document."""
    device = document.device
    if device.known:
        print(f"{device.name} (cc {device.cc}, {device.sm_count} SMs, driver {device.driver})")
