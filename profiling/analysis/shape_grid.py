"""The shape grid of "no shape left behind": a kernel's % of cuBLAS SGEMM at every M, N in GRID_MN and K in GRID_K,
the 90 % target, and the shapes exempt from it (where cuBLAS itself stays under 10 TFLOP/s, launch overhead and
too little work decide the time, not the kernel).

A shape whose cuBLAS times were unsteady (profiling.gpu.timing.is_unsteady) is neither met nor missed: its cuBLAS
median is not cuBLAS's time, so the shape is left out of the count until it is rerun. Nor can that median exempt a
shape on its own: where the kernel itself reaches EXEMPT_BELOW_TFLOPS there, the shape has the work to count and is
reported as unsteady; where the kernel stays under it too, the shape is exempt as before (tiny shapes, whose launches
of a few microseconds are often unsteady, stay exempt).

Each cell pairs a kernel's result with the cuBLAS result of its own run at that shape: the worker runs each shape's
reference first, so in a document (or several merged in order, profiling.runs.results.merge_documents) it is the
nearest cuBLAS result before it at that shape.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from kernels.catalog import reference_ids
from profiling.gpu.timing import UNSTEADY_RATIO, is_unsteady, tenths_ratio
from profiling.runs.records import BenchResult
from profiling.runs.results import ResultsDocument, run_references
from profiling.runs.verdict import DEFAULT_CONFIDENCE, bootstrap_ratio
from profiling.shape import Shape

GRID_MN: tuple[int, ...] = (64, 127, 333, 1024, 2048, 4096)
"""M and N of the grid: tiny, odd (127, 333: no tile divides them), and sizes that fill the GPU."""
GRID_K: tuple[int, ...] = (333, 4096, 8191)
"""K of the grid: shallow, deep, and deep but not a multiple of any K slice."""
GRID_SHAPES: tuple[Shape, ...] = tuple(Shape(m, n, k) for k in GRID_K for n in GRID_MN for m in GRID_MN)
TARGET_PCT = 90.0
"""The target: at least this % of cuBLAS SGEMM (same run) at every shape not exempt."""
EXEMPT_BELOW_TFLOPS = 10.0
"""Shapes where cuBLAS reaches less than this many TFLOP/s are exempt from the target."""
MIN_GRID_SHAPES = 8
"""A kernel measured with cuBLAS at fewer grid shapes than this gets no grid view (a few points are not a map)."""
SGEMM = "sgemm"
AUTO_KERNEL = "sgemm-auto"
"""The kernel the grid is for: the one a grid view opens with when it is there."""

CELL_COLUMNS = [
    "m",
    "n",
    "k",
    "kernel",
    "status",
    "config",
    "tflops",
    "cublas_tflops",
    "pct_cublas",
    "exempt",
    "unsteady",
    "cublas_p90_over_p10",
    "meets_target",
]


def grid_arguments() -> list[str]:
    """One `bench --grid` argument per K of the grid ("M=64,...,N=64,...,K=333"): a run per K keeps each run
    short, so a stopped run loses one K, not the grid."""
    mn = ",".join(str(v) for v in GRID_MN)
    return [f"M={mn},N={mn},K={k}" for k in GRID_K]


def _pairs(document: ResultsDocument, kernel: str) -> list[tuple[BenchResult, BenchResult]]:
    """(kernel's result, the cuBLAS result of its run) at each grid shape, the kernel's first result there."""
    on_grid = set(GRID_SHAPES)
    found: dict[Shape, tuple[BenchResult, BenchResult]] = {}
    for result, ref in zip(document.results, run_references(document), strict=True):
        if result.shape not in on_grid or result.kernel != kernel or result.shape in found:
            continue
        if ref is not None and ref.status == "ok" and ref.tflops is not None:
            found[result.shape] = (result, ref)
    return [found[s] for s in GRID_SHAPES if s in found]


def grid_cells(document: ResultsDocument, kernel: str) -> pd.DataFrame:
    """One row per grid shape where `kernel` ran beside a verified cuBLAS (CELL_COLUMNS, in grid order): its
    status, configuration, TFLOP/s, cuBLAS's TFLOP/s, % of cuBLAS (None unless it verified), whether the shape is
    exempt, whether it is not counted because cuBLAS's times were unsteady (with cuBLAS's p90 / p10) and whether it
    meets the target (never where unsteady)."""
    rows = []
    for result, ref in _pairs(document, kernel):
        ok = result.status == "ok"
        pct = result.pct_cublas if ok else None
        unsteady_ref = is_unsteady(ref)
        # An unsteady cuBLAS median cannot exempt a shape where the kernel, timed steadily beside it, does the work.
        kernel_fast = ok and result.tflops is not None and result.tflops >= EXEMPT_BELOW_TFLOPS
        exempt = ref.tflops < EXEMPT_BELOW_TFLOPS and not (unsteady_ref and kernel_fast)
        # A result that did not verify misses the target whatever cuBLAS's times were.
        unsteady = unsteady_ref and ok and not exempt
        rows.append(
            {
                "m": result.shape.m,
                "n": result.shape.n,
                "k": result.shape.k,
                "kernel": kernel,
                "status": result.status,
                "config": result.config,
                "tflops": result.tflops if ok else None,
                "cublas_tflops": ref.tflops,
                "pct_cublas": pct,
                "exempt": exempt,
                "unsteady": unsteady,
                "cublas_p90_over_p10": tenths_ratio(ref),
                "meets_target": pct is not None and pct >= TARGET_PCT and not unsteady,
            }
        )
    return pd.DataFrame(rows, columns=CELL_COLUMNS)


def grid_kernels(document: ResultsDocument) -> list[str]:
    """The kernels measured beside cuBLAS at MIN_GRID_SHAPES or more grid shapes: sgemm-auto first, then by the
    number of shapes (most first), then in the document's order. Empty: the document holds no grid result."""
    reference = reference_ids()[SGEMM]
    names = [r.kernel for r in document.results if r.kernel != reference]
    counts: dict[str, int] = {}
    for name in dict.fromkeys(names):
        shapes = len(_pairs(document, name))
        if shapes >= MIN_GRID_SHAPES:
            counts[name] = shapes
    order = list(counts)
    return sorted(order, key=lambda name: (name != AUTO_KERNEL, -counts[name], order.index(name)))


def is_grid_run(document: ResultsDocument) -> bool:
    """Whether a results document is a grid run: it holds a grid result and every shape it measured is a grid shape,
    so the grid's heatmap shows all of it (a line over a hundred shapes in the grid's order reads as noise)."""
    return holds_shape_grid(document) and {r.shape for r in document.results} <= set(GRID_SHAPES)


def holds_shape_grid(document: ResultsDocument) -> bool:
    """Whether a results document holds a grid result (told by its shapes): some kernel measured beside cuBLAS at
    MIN_GRID_SHAPES or more shapes of the grid."""
    return bool(grid_kernels(document))


@dataclass(frozen=True)
class TargetSummary:
    """How one kernel stands against the target over the grid."""

    kernel: str
    measured: int
    """Grid shapes where the kernel ran beside a verified cuBLAS."""
    exempt: int
    """Of those, shapes where cuBLAS stays under EXEMPT_BELOW_TFLOPS."""
    met: int
    """Non-exempt shapes at or above TARGET_PCT."""
    unsteady: int
    """Non-exempt shapes not counted, neither met nor missed: cuBLAS's times there were unsteady."""
    below: pd.DataFrame
    """The non-exempt shapes under the target (or that did not verify), worst first, then the unsteady ones: shape,
    % of cuBLAS with its interval, both TFLOP/s, status, the configuration that ran, whether cuBLAS was unsteady
    there and its p90 / p10."""

    @property
    def not_measured(self) -> int:
        return len(GRID_SHAPES) - self.measured

    @property
    def counted(self) -> int:
        """The shapes the verdict counts: measured, not exempt, and with steady cuBLAS times."""
        return self.measured - self.exempt - self.unsteady

    @property
    def sentence(self) -> str:
        """The one line a reader sees first, e.g. "sgemm-auto reaches 90 % of cuBLAS at 9 of 16 shapes ..."."""
        notes = [f"{self.exempt} shapes exempt below that"]
        if self.unsteady:
            shapes, them = ("1 shape", "it") if self.unsteady == 1 else (f"{self.unsteady} shapes", "them")
            notes.append(
                f"{shapes} not counted because cuBLAS's own times were unsteady there, its slowest tenth of launches "
                f"over {UNSTEADY_RATIO:g}x its fastest: rerun {them}"
            )
        if self.not_measured:
            notes.append(f"{self.not_measured} of the grid's {len(GRID_SHAPES)} shapes not measured")
        return (
            f"{self.kernel} reaches {TARGET_PCT:.0f} % of cuBLAS at {self.met} of {self.counted} shapes where cuBLAS reaches "
            f"{EXEMPT_BELOW_TFLOPS:.0f} TFLOP/s ({'; '.join(notes)})."
        )


BELOW_COLUMNS = [
    "shape",
    "pct_cublas",
    "interval_low",
    "interval_high",
    "tflops",
    "cublas_tflops",
    "status",
    "config",
    "unsteady",
    "cublas_p90_over_p10",
]


def target_summary(document: ResultsDocument, kernel: str, confidence: float = DEFAULT_CONFIDENCE) -> TargetSummary:
    """Count the grid shapes that meet the target and list those under it with the `confidence` interval of the
    % of cuBLAS (percentile bootstrap of the per-launch times, profiling.runs.verdict.bootstrap_ratio), then those
    not counted because cuBLAS's times were unsteady (no interval: its median is not its time)."""
    pairs = _pairs(document, kernel)
    cells = grid_cells(document, kernel)
    below = []
    for (result, ref), cell in zip(pairs, cells.itertuples(index=False), strict=True):
        if cell.exempt or cell.meets_target:
            continue
        low = high = None
        if cell.status == "ok" and not cell.unsteady and result.times_ms and ref.times_ms:
            interval = bootstrap_ratio(ref.times_ms, result.times_ms, paired=False, confidence=confidence)
            if interval is not None:  # time ratios: the slow end of the time is the low end of the %
                low, high = 100.0 / interval.high, 100.0 / interval.low
        below.append(
            {
                "shape": result.shape.label,
                "pct_cublas": cell.pct_cublas,
                "interval_low": low,
                "interval_high": high,
                "tflops": cell.tflops,
                "cublas_tflops": cell.cublas_tflops,
                "status": cell.status,
                "config": cell.config,
                "unsteady": cell.unsteady,
                "cublas_p90_over_p10": cell.cublas_p90_over_p10,
            }
        )
    frame = pd.DataFrame(below, columns=BELOW_COLUMNS)
    frame = frame.sort_values("pct_cublas", na_position="first", kind="stable")
    frame = frame.sort_values("unsteady", kind="stable").reset_index(drop=True)  # the misses first, worst first
    return TargetSummary(
        kernel=kernel,
        measured=len(cells),
        exempt=int(cells["exempt"].sum()),
        met=int((cells["meets_target"] & ~cells["exempt"]).sum()),
        unsteady=int(cells["unsteady"].sum()),
        below=frame,
    )


def pct_text(pct: float, decimals: int = 1) -> str:
    """A % of cuBLAS as a reader sees it, with `decimals` places, never rounded up to the target from under it
    (89.97 reads 89.9 at one place, 89 at none): a shape under the target never reads as on it."""
    text = f"{pct:.{decimals}f}"
    if pct < TARGET_PCT <= float(text):
        scale = 10**decimals
        text = f"{math.floor(pct * scale) / scale:.{decimals}f}"
    return text


def _known(value: object) -> bool:
    return value is not None and value == value  # NaN is not equal to itself


def below_target_table(summary: TargetSummary) -> pd.DataFrame:
    """The shapes under the target as a reader sees them, worst first, then those not counted: shape, % of cuBLAS (or
    the status of a result that did not verify, or why a shape is not counted), its interval, both TFLOP/s and the
    configuration that ran (without its source)."""
    rows = []
    for r in summary.below.itertuples(index=False):
        if r.unsteady:
            shown = f"not counted: cuBLAS unsteady (p90 {r.cublas_p90_over_p10:.1f}x p10), rerun"
        else:
            shown = f"{pct_text(r.pct_cublas)} %" if _known(r.pct_cublas) else str(r.status)
        rows.append(
            {
                "shape": r.shape,
                "% of cuBLAS": shown,
                f"{DEFAULT_CONFIDENCE:.0%} interval": (
                    f"{r.interval_low:.1f}-{r.interval_high:.1f} %" if _known(r.interval_low) else ""
                ),
                "TFLOP/s": f"{r.tflops:.1f}" if _known(r.tflops) else "",
                "cuBLAS TFLOP/s": f"{r.cublas_tflops:.1f}",
                "configuration": str(r.config or "").split(" ")[0],
            }
        )
    columns = [
        "shape",
        "% of cuBLAS",
        f"{DEFAULT_CONFIDENCE:.0%} interval",
        "TFLOP/s",
        "cuBLAS TFLOP/s",
        "configuration",
    ]
    return pd.DataFrame(rows, columns=columns)


def below_target_markdown(summary: TargetSummary) -> str:
    """The summary as Markdown: its sentence, then a table of the shapes under the target."""
    table = below_target_table(summary)
    if table.empty:
        return f"{summary.sentence}\n\nNo shape that counts is under the target.\n"
    lines = [summary.sentence, "", "| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(row) + " |" for row in table.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def grid_panels(cells: pd.DataFrame, value: str) -> dict[int, pd.DataFrame]:
    """Per K of the grid, M (rows, GRID_MN order) x N (columns) of one cell column; cells not measured are NaN."""
    out = {}
    for k in GRID_K:
        part = cells[cells["k"] == k]
        table = pd.DataFrame(index=list(GRID_MN), columns=list(GRID_MN), dtype=object)
        for r in part.itertuples(index=False):
            table.at[r.m, r.n] = getattr(r, value)
        out[k] = table
    return out
