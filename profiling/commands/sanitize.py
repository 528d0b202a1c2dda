"""`python -m profiling sanitize --kernel v5 --size 256 --tool racecheck`: compute-sanitizer on one kernel."""

from __future__ import annotations

import argparse
import json

from profiling.errors import InvalidInput

HELP = "Run compute-sanitizer (memcheck, racecheck, ...) on one catalog kernel; exit 1 when it finds errors"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kernel", required=True, help="catalog id (e.g. v5)")
    parser.add_argument("--size", default="256", help="N or MxNxK (small sizes: sanitizers are slow)")
    parser.add_argument("--tool", choices=("memcheck", "racecheck", "initcheck", "synccheck"), default="memcheck")
    parser.add_argument("--timeout", type=float, default=600, help="seconds before the run is killed")
    parser.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    from kernels.registry import get_kernel
    from profiling.commands.profile import parse_sizes
    from profiling.nsight import runner as ncu_runner

    spec = get_kernel(args.kernel)
    if not spec.source:
        raise InvalidInput(f"{spec.id} is a library kernel with no source of ours; pick a catalog kernel")
    sizes = parse_sizes(args.size)
    if len(sizes) != 1:
        raise InvalidInput("sanitize takes one size")
    problem = spec.size_problem(*sizes[0])
    if problem:
        raise InvalidInput(problem)
    result = ncu_runner.sanitize(spec.id, sizes[0], tool=args.tool, timeout_s=args.timeout)
    if args.json:
        print(json.dumps(result.to_dict(), indent=1))
    else:
        print(f"{args.tool} on {spec.id} {'x'.join(map(str, sizes[0]))}: {result.summary or 'no summary'}")
        for finding in result.findings:
            print(f"- {finding.severity}: {finding.message}")
            for detail in finding.details[:4]:
                print(f"    {detail}")
    return 0 if result.clean else 1
