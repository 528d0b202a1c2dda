"""Each result's launches of a bench document, one row per kernel and shape: how far apart they lie, how many ran
slow, and where in the run the slow ones fell (whether a kernel has slow launches its median hides).

    python scripts/launch_spread.py BENCH.json > spread.md

A launch counts as slow over UNSTEADY_RATIO x the result's p10 (profiling.gpu.timing, the grid's rule for an
unsteady result); "where" lists the launch numbers (0 = first timed launch) of the slow ones, at most 12.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from profiling.gpu.timing import UNSTEADY_RATIO, slow_launches, summarize, tenths_ratio  # noqa: E402
from profiling.runs.results import ResultsDocument, load_document  # noqa: E402

SHOWN_SLOW = 12
COLUMNS = (
    "size",
    "kernel",
    "launches",
    "p10 (us)",
    "median (us)",
    "p90 (us)",
    "max (us)",
    "p90 over p10",
    f"slow (over {UNSTEADY_RATIO}x p10)",
    "where",
)


def table(document: ResultsDocument) -> str:
    """The Markdown table, results in the document's order; a result without launch times is left out."""
    out = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for r in document.results:
        if not r.times_ms:
            continue
        stats = summarize(r.times_ms)
        slow = slow_launches(r.times_ms)
        where = ", ".join(str(i) for i in slow[:SHOWN_SLOW]) + (" ..." if len(slow) > SHOWN_SLOW else "")
        out.append(
            f"| {r.shape.label} | {r.kernel} | {len(r.times_ms)} | {1000 * stats['p10']:.1f} | "
            f"{1000 * stats['median']:.1f} | {1000 * stats['p90']:.1f} | {1000 * stats['max']:.1f} | "
            f"{tenths_ratio(r):.2f} | {len(slow)} | {where} |"
        )
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bench", type=Path)
    args = parser.parse_args()
    sys.stdout.write(table(load_document(args.bench)))


if __name__ == "__main__":
    main()
