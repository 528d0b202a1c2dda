"""`python -m profiling profile --kernels v3,v5 --sizes 4096 -o run.ncu-rep`: one ncu run over all of them."""

from __future__ import annotations

import argparse

from profiling import usecases
from profiling.commands import add_cluster_argument, print_json, print_progress, seconds
from profiling.commands.outputs import check_output_file
from profiling.commands.report import format_report
from profiling.gpu.jobs import parse_kernels, parse_sizes

HELP = "profile catalog kernels with Nsight Compute in one ncu process and print their key metrics"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kernels", required=True, help="catalog ids, comma-separated (e.g. v3,v5)")
    parser.add_argument("--sizes", required=True, help="N or MxNxK, comma-separated (e.g. 4096)")
    parser.add_argument("--set", dest="metric_set", choices=usecases.METRIC_SETS, default="quick")
    parser.add_argument("--metrics", default="", help="extra ncu metric names, comma-separated")
    parser.add_argument("--clock-control", choices=usecases.CLOCK_CONTROLS, default="none")
    parser.add_argument("-o", "--output", default="gemmlens.ncu-rep", help="report to write (.ncu-rep)")
    parser.add_argument("--timeout", type=seconds("--timeout"), default=600, help="seconds before ncu is killed")
    parser.add_argument("--ncu", default=None, help="path of ncu (default: NCU_PATH, PATH, CUDA_HOME...)")
    parser.add_argument("--json", action="store_true", help="print the read report as JSON")
    add_cluster_argument(parser)


def run(args: argparse.Namespace) -> int:
    # ncu writes the report when it has profiled everything: a path it cannot write would lose all of that.
    output = args.output if str(args.output).endswith(".ncu-rep") else f"{args.output}.ncu-rep"
    check_output_file(output, "-o/--output")
    plan = usecases.plan_profile(
        [spec.id for spec in parse_kernels(args.kernels)],
        parse_sizes(args.sizes),
        args.output,
        metric_set=args.metric_set,
        extra_metrics=args.metrics.split(","),
        clock_control=args.clock_control,
        timeout_s=args.timeout,
        ncu=args.ncu,
    )
    if args.cluster:
        return _run_on_cluster(plan, args)
    result = usecases.run_profile(plan)
    if args.json:
        data = result.report.to_dict()
        data["command"] = result.command
        data["clock_control"] = result.clock_control
        data["metric_set"] = result.metric_set
        print_json(data)
    else:
        print(format_report(result.report))
        print(
            f"report: {result.report_path} ({result.metric_set} set, clock control {result.clock_control}, "
            f"ncu ran {result.seconds:.1f} s)"
        )
    return 0


def _run_on_cluster(plan: usecases.ProfilePlan, args: argparse.Namespace) -> int:
    """One ncu process per GPU worker, the reports merged (profiling.cluster.profiling)."""
    from profiling.cluster.profiling import run_profile

    result = run_profile(plan, args.cluster, print_progress)
    if args.json:
        data = result.report.to_dict()
        data["reports"] = [str(p) for p in result.report_paths]
        data["ncu_seconds_per_gpu"] = result.seconds
        data["clock_control"] = result.clock_control
        data["metric_set"] = result.metric_set
        print_json(data)
    else:
        print(format_report(result.report))
        per_gpu = ", ".join(f"{name} {s:.1f} s" for name, s in result.seconds.items())
        print(
            f"reports: {', '.join(str(p) for p in result.report_paths)} (ncu {per_gpu}; {result.wall_s:.1f} s in all)"
        )
    return 0
