"""The shape grid's verdict from bench documents: how many grid shapes reach 90 % of cuBLAS, and the shapes under it
with the 95 % interval of each % (profiling.analysis.shape_grid), as Markdown; optionally the heatmap as HTML.

    python scripts/grid_report.py --grids                   # one `bench --grid` argument per K (gpu_check.sh grid)
    python scripts/grid_report.py bench_k333.json bench_k4096.json bench_k8191.json [--kernel sgemm-auto] [--html F]
    python scripts/grid_report.py bench_k*.json --misses [--min-side 1024]   # MxNxK,... under the target (tune --sizes)
    python scripts/grid_report.py bench_k*.json --close-calls GPU [--near 95] [--margin 3]  # "MxNxK id,id,..." each
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kernels.auto import CLOSE_CALL_MARGIN, close_calls, outbid_sweeps, predicted_only_shapes  # noqa: E402
from profiling.analysis.shape_grid import (  # noqa: E402
    AUTO_KERNEL,
    GRID_SHAPES,
    below_target_markdown,
    grid_arguments,
    grid_cells,
    grid_kernels,
    target_summary,
)
from profiling.errors import InvalidInput  # noqa: E402
from profiling.runs.results import ResultsDocument, load_document, merge_documents  # noqa: E402
from profiling.shape import parse_shape  # noqa: E402


def grid_documents(paths: list[Path], kernel: str) -> tuple[list[ResultsDocument], ResultsDocument]:
    """The bench documents and their merge in order; InvalidInput where `kernel` was not measured beside cuBLAS on
    grid shapes."""
    documents = [load_document(p) for p in paths]
    document = merge_documents(documents, [p.name for p in paths])
    kernels = grid_kernels(document)
    if kernel not in kernels:
        found = ", ".join(kernels) or "none"
        raise InvalidInput(
            f"{kernel} was not measured beside cuBLAS on enough grid shapes (kernels that were: {found})"
        )
    return documents, document


def report(paths: list[Path], kernel: str, html: Path | None) -> str:
    """The Markdown summary of `kernel` over the documents merged in order; writes the heatmap to `html` if given."""
    documents, document = grid_documents(paths, kernel)
    device = document.device_name or "unknown GPU"
    if html is not None:
        from profiling.charts.shape_grid import target_heatmap

        target_heatmap(grid_cells(document, kernel), kernel, device).write_html(html, include_plotlyjs=True)
    runs = ", ".join(
        f"{p.name} ({d.created_utc}, commit {d.tool.get('gemmlens_commit')})"
        for p, d in zip(paths, documents, strict=True)
    )
    head = f"{device}: {runs}"
    return f"{head}\n\n{below_target_markdown(target_summary(document, kernel))}"


def misses(paths: list[Path], kernel: str, min_side: int) -> str:
    """The shapes where `kernel` is under the target, as `tune --sizes` takes them, keeping those whose M and N are
    both at least `min_side`. A shape not counted because cuBLAS's times were unsteady is left out: it needs a rerun,
    not a tuning sweep."""
    below = target_summary(grid_documents(paths, kernel)[1], kernel).below
    shapes = [parse_shape(text) for text in below.loc[~below["unsteady"].astype(bool), "shape"]]
    return ",".join(s.label for s in shapes if min(s.m, s.n) >= min_side) + "\n"


def near_target_close_calls(
    paths: list[Path], kernel: str, device_name: str, near: float, margin: float = CLOSE_CALL_MARGIN
) -> str:
    """One line per counted grid shape where `kernel` measured under `near` % of cuBLAS in the documents and the GPU's
    tuning record holds a close call within `margin` (kernels.auto.close_calls): the shape, then its close
    configurations, fastest first, comma-separated; what `gpu_check.sh closecalls` measures again, interleaved."""
    cells = grid_cells(grid_documents(paths, kernel)[1], kernel)
    near_cells = cells[~cells["exempt"].astype(bool) & (cells["pct_cublas"] < near)]
    shapes = [(int(r.m), int(r.n), int(r.k)) for r in near_cells.itertuples(index=False)]
    return "".join(f"{m}x{n}x{k} {','.join(ids)}\n" for (m, n, k), ids in close_calls(device_name, shapes, margin))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bench", type=Path, nargs="*", help="bench documents (bench --json), merged in order")
    parser.add_argument("--grids", action="store_true", help="print one `bench --grid` argument per K and stop")
    parser.add_argument("--kernel", default=AUTO_KERNEL, help=f"the kernel to judge (default {AUTO_KERNEL})")
    parser.add_argument("--html", type=Path, help="also write the heatmap to this HTML file")
    parser.add_argument("--misses", action="store_true", help="print the shapes under the target as MxNxK,... and stop")
    parser.add_argument("--min-side", type=int, default=1, help="with --misses: only shapes with M, N >= this")
    parser.add_argument(
        "--predicted-only",
        metavar="GPU",
        help="print the grid shapes where GPU's tuning record holds only a prediction of a configuration that would "
        "outbid its measurements (kernels.auto.predicted_only_shapes) as MxNxK,... and stop",
    )
    parser.add_argument(
        "--outbid",
        metavar="GPU",
        help="print, per shape GPU's tuning record swept (in the grid or not) where configurations it never measured "
        "there are predicted above its measurements, those configurations (the 8 highest) and sgemm-auto's choice "
        "there (kernels.auto.outbid_sweeps), one 'MxNxK id,id,...' line each, and stop",
    )
    parser.add_argument(
        "--close-calls",
        metavar="GPU",
        help="print, per grid shape under --near %% of cuBLAS in the documents, the configurations GPU's tuning record "
        "measured within --margin %% of its best there (kernels.auto.close_calls), one 'MxNxK id,id,...' "
        "line each, and stop",
    )
    parser.add_argument("--near", type=float, default=95.0, help="with --close-calls: shapes under this %% of cuBLAS")
    parser.add_argument(
        "--margin",
        type=float,
        default=CLOSE_CALL_MARGIN * 100,
        help=f"with --close-calls: how far below the best, in %%, a configuration counts as close (default "
        f"{CLOSE_CALL_MARGIN * 100:g})",
    )
    args = parser.parse_args()
    if args.grids:
        print("\n".join(grid_arguments()))
        return 0
    if args.outbid:
        for (m, n, k), ids in outbid_sweeps(args.outbid):
            print(f"{m}x{n}x{k} {','.join(ids)}")
        return 0
    if args.predicted_only:
        grid = [(s.m, s.n, s.k) for s in GRID_SHAPES]
        print(",".join(f"{m}x{n}x{k}" for m, n, k in predicted_only_shapes(args.predicted_only, grid)))
        return 0
    try:
        if not args.bench:
            raise InvalidInput("give the bench documents to read (or --grids)")
        if args.close_calls:
            sys.stdout.write(
                near_target_close_calls(args.bench, args.kernel, args.close_calls, args.near, args.margin / 100)
            )
        elif args.misses:
            sys.stdout.write(misses(args.bench, args.kernel, args.min_side))
        else:
            sys.stdout.write(report(args.bench, args.kernel, args.html))
    except InvalidInput as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
