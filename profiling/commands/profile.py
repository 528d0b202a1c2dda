"""`python -m profiling profile --kernels v3,v5 --sizes 4096 -o run.ncu-rep`: one ncu run over all of them."""

from __future__ import annotations

import argparse
import json

from profiling.errors import InvalidInput

HELP = "Profile catalog kernels with Nsight Compute in one ncu process and print their key metrics"


def parse_sizes(text: str) -> list[tuple[int, int, int]]:
    """'4096,1024x512x256' -> [(4096, 4096, 4096), (1024, 512, 256)]."""
    sizes: list[tuple[int, int, int]] = []
    for item in text.split(","):
        item = item.strip().lower()
        if not item:
            continue
        parts = item.split("x")
        try:
            dims = [int(p) for p in parts]
        except ValueError:
            raise InvalidInput(f"size '{item}' is not N or MxNxK (whole numbers)") from None
        if len(dims) == 1:
            dims *= 3
        if len(dims) != 3 or any(d <= 0 or d > 65536 for d in dims):
            raise InvalidInput(f"size '{item}' must be N or MxNxK with each dimension in 1..65536")
        sizes.append((dims[0], dims[1], dims[2]))
    if not sizes:
        raise InvalidInput("no sizes given; e.g. --sizes 4096 or --sizes 1024x1024x512")
    return sizes


def parse_kernels(text: str) -> list[str]:
    """'v3,v5' -> ['v3', 'v5'], each checked against the catalog."""
    from kernels.registry import get_kernel

    ids = [k.strip() for k in text.split(",") if k.strip()]
    if not ids:
        raise InvalidInput("no kernels given; e.g. --kernels v3,v5")
    for kid in ids:
        get_kernel(kid)
    return list(dict.fromkeys(ids))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kernels", required=True, help="catalog ids, comma-separated (e.g. v3,v5)")
    parser.add_argument("--sizes", required=True, help="N or MxNxK, comma-separated (e.g. 4096)")
    parser.add_argument("--set", dest="metric_set", choices=("quick", "full"), default="quick")
    parser.add_argument("--metrics", default="", help="extra ncu metric names, comma-separated")
    parser.add_argument("--clock-control", choices=("none", "base"), default="none")
    parser.add_argument("-o", "--output", default="gemmlens.ncu-rep", help="report to write (.ncu-rep)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds before ncu is killed")
    parser.add_argument("--ncu", default=None, help="path of ncu (default: NCU_PATH, PATH, CUDA_HOME...)")
    parser.add_argument("--json", action="store_true", help="print the read report as JSON")


def run(args: argparse.Namespace) -> int:
    from kernels.registry import get_kernel
    from profiling.commands.report import format_report
    from profiling.nsight import runner as ncu_runner

    kernel_ids = parse_kernels(args.kernels)
    sizes = parse_sizes(args.sizes)
    for kid in kernel_ids:
        for m, n, k in sizes:
            problem = get_kernel(kid).size_problem(m, n, k)
            if problem:
                raise InvalidInput(problem)
    extras = [x.strip() for x in args.metrics.split(",") if x.strip()]
    result = ncu_runner.profile(
        kernel_ids,
        sizes,
        args.output,
        metric_set=args.metric_set,
        extra_metrics=extras,
        clock_control=args.clock_control,
        timeout_s=args.timeout,
        ncu=args.ncu,
    )
    if args.json:
        data = result.report.to_dict()
        data["command"] = result.command
        data["clock_control"] = result.clock_control
        data["metric_set"] = result.metric_set
        print(json.dumps(data, indent=1))
    else:
        print(format_report(result.report))
        print(
            f"report: {result.report_path} ({result.metric_set} set, clock control {result.clock_control}, "
            f"ncu ran {result.seconds:.1f} s)"
        )
    return 0
