"""`python -m profiling sanitize --kernel v5 --size 256 --tool racecheck`: compute-sanitizer on one kernel."""

from __future__ import annotations

import argparse

from profiling import usecases
from profiling.commands import add_cluster_argument, print_json, print_progress, seconds
from profiling.errors import InvalidInput
from profiling.gpu.jobs import parse_sizes

HELP = "run compute-sanitizer (memcheck, racecheck, ...) on one catalog kernel; exit 1 when it finds errors"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kernel", required=True, help="catalog id (e.g. v5)")
    parser.add_argument("--size", default="256", help="N or MxNxK (small sizes: sanitizers are slow)")
    parser.add_argument("--tool", choices=usecases.SANITIZER_TOOLS, default="memcheck")
    parser.add_argument("--timeout", type=seconds("--timeout"), default=600, help="seconds before the run is killed")
    parser.add_argument("--json", action="store_true")
    add_cluster_argument(parser)


def run(args: argparse.Namespace) -> int:
    sizes = parse_sizes(args.size)
    if len(sizes) != 1:
        raise InvalidInput("sanitize takes one size")
    plan = usecases.plan_sanitizer(args.kernel, sizes[0], args.tool, args.timeout)
    where = None
    if args.cluster:
        from profiling.cluster.profiling import run_sanitizer_on

        result, where = run_sanitizer_on(plan, args.cluster, print_progress)
    else:
        result = usecases.run_sanitizer(plan)
    if args.json:
        print_json(result.to_dict() | ({"ran_on": where} if where else {}))
    else:
        on = f" on {where['host']}/{where['worker']}" if where else ""
        print(f"{plan.tool} on {plan.kernel_id} {plan.shape.label}{on}: {result.summary or 'no summary'}")
        for finding in result.findings:
            print(f"- {finding.severity}: {finding.message}")
            for detail in finding.details[:4]:
                print(f"    {detail}")
    return 0 if result.clean else 1
