"""`python -m profiling occupancy`: theoretical occupancy of one launch configuration, without a GPU."""

from __future__ import annotations

import argparse

from profiling.analysis.occupancy import supported_ccs, theoretical_occupancy
from profiling.commands import print_json, whole_number

HELP = "theoretical occupancy (NVIDIA's calculator rules) for a block size, register count and shared memory"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cc", required=True, help=f"compute capability, one of {', '.join(supported_ccs())}")
    parser.add_argument("--threads", type=whole_number("--threads"), required=True, help="threads per block")
    parser.add_argument("--registers", type=whole_number("--registers"), required=True, help="registers per thread")
    parser.add_argument(
        "--shared-mem",
        type=whole_number("--shared-mem", 0),
        default=0,
        help="shared memory per block in bytes, static + dynamic, without the driver's 1 KB reserve",
    )
    parser.add_argument(
        "--carveout",
        type=whole_number("--carveout", 0),
        default=None,
        help="shared-memory carveout in bytes (default: the largest)",
    )
    parser.add_argument("--json", action="store_true", help="print a JSON object")


def run(args: argparse.Namespace) -> int:
    result = theoretical_occupancy(args.cc, args.threads, args.registers, args.shared_mem, args.carveout)
    if args.json:
        print_json(result.to_dict(), indent=2)
        return 0
    print(f"CC {result.cc}: {args.threads} threads, {args.registers} registers, {args.shared_mem} B shared")
    print(f"occupancy            {result.occupancy_pct:.1f} %")
    print(f"active blocks per SM {result.active_blocks_per_sm}")
    print(f"active warps per SM  {result.active_warps_per_sm} of {result.max_warps_per_sm}")
    print(f"carveout used        {result.carveout_used // 1024} KB")
    print("block limits:")
    for name, blocks in result.blocks_allowed_by.items():
        mark = "  <- limiter" if name in result.limiters else ""
        print(f"  {name:<11} {blocks}{mark}")
    print(f"limited by           {result.describe()}")
    return 0
