"""Every kernel of a bench document against cuBLAS, as a Markdown table: each kernel's time over cuBLAS's with its 95 %
bootstrap interval from the per-launch samples (profiling.abtest.ab_summary, back-to-back, unpaired), % of cuBLAS, the
configuration it ran, the median SM clock during its launches, and a warning where either side's launches were
unsteady (profiling.gpu.timing.is_unsteady: its median is not its time, so the ratio is not one to judge by).

    python scripts/ratio_table.py BENCH.json [--reference cublas] > ratios.md
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from profiling.abtest import ab_summary  # noqa: E402
from profiling.gpu.timing import is_unsteady, tenths_ratio  # noqa: E402
from profiling.runs.records import BenchResult  # noqa: E402
from profiling.runs.results import ResultsDocument, load_document  # noqa: E402


def steadiness(kernel: BenchResult | None, reference: BenchResult | None) -> str:
    """ "" where both sides' launches were steady, else which were not, with their p90 / p10."""
    notes = [
        f"{who} unsteady (p90 {tenths_ratio(r):.1f}x p10), rerun"
        for who, r in (("cuBLAS", reference), ("kernel", kernel))
        if r is not None and is_unsteady(r)
    ]
    return "; ".join(notes)


def table(document: ResultsDocument, reference: str) -> str:
    """The Markdown table: one row per kernel and shape, shapes in the document's order."""
    rows = {(r.kernel, r.shape): r for r in document.results}
    kernels = [k for k in dict.fromkeys(r.kernel for r in document.results) if k != reference]
    out = [
        "| size | kernel | config | kernel / cuBLAS time | 95 % interval | % of cuBLAS | SM clock median (MHz) | steady |",
        "|---|---|---|---|---|---|---|---|",
    ]
    summaries = {k: ab_summary(document, reference, k, paired=False, threshold_pct=2.0) for k in kernels}
    for shape in dict.fromkeys(r.shape for r in document.results):
        size = shape.label
        for kernel in kernels:
            frame = summaries[kernel]
            hit = frame[frame["size"] == size]
            r = rows.get((kernel, shape))
            if hit.empty or r is None or "B/A" not in hit or hit.iloc[0].get("B/A") is None:
                continue
            s = hit.iloc[0]
            clock = r.sm_clock_mhz
            config = (r.config or "").split(" ")[0] if kernel == "sgemm-auto" else ""
            note = steadiness(r, rows.get((reference, shape)))
            out.append(
                f"| {size} | {kernel} | {config} | {s['B/A']:.4f} | {s['interval']} | {100 / s['B/A']:.1f} % | {clock} "
                f"| {note} |"
            )
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bench", type=Path)
    parser.add_argument("--reference", default="cublas")
    args = parser.parse_args()
    sys.stdout.write(table(load_document(args.bench), args.reference))


if __name__ == "__main__":
    main()
