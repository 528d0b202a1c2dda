"""A timing in rounds (bench or tune --interleaved --json) split by the kernel that ran just before each launch
(profiling.analysis.rounds): where a kernel's launches after another kernel take longer than those after its own
code, it pays for the SMs' caches of the other kernel's leftovers, such as its instructions.
Usage: python scripts/round_predecessors.py DOCUMENT.json [--kernel ID] [--shape MxNxK]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from profiling.analysis.rounds import times_by_predecessor  # noqa: E402
from profiling.errors import InvalidInput  # noqa: E402
from profiling.runs.results import load_document  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("document", type=Path, help="a results document timed in rounds")
    parser.add_argument("--kernel", help="only this kernel's launches")
    parser.add_argument("--shape", help="only this shape (MxNxK)")
    args = parser.parse_args()
    try:
        table = times_by_predecessor(load_document(args.document))
    except InvalidInput as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if table.empty:
        print(f"error: {args.document} holds no results timed in rounds (bench or tune --interleaved)", file=sys.stderr)
        return 2
    if args.kernel:
        table = table[table["kernel"] == args.kernel]
    if args.shape:
        table = table[table["shape"] == args.shape]
    table = table.assign(median_us=(table["median_ms"] * 1000).round(1)).drop(columns="median_ms")
    print(table.to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
