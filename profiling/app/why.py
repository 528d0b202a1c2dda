"""What the Why page shows, as pure functions over parsed data: stall breakdowns, the source view with per-line
costs and SASS, the static SASS mix, and the explanation of a step.

A `WhyData` is one set of launches (a raw or details page) and, where there is one, the source page of the same
report. Bundled captures (results/<device>-<date>/ncu_<name>_raw.csv with source_<name>_{cuda_sass,sass}.csv.gz
beside it), uploaded reports and uploaded source pages all become one.

For the Reports page: `offer_source_page(name, page)` hands an uploaded, parsed source page to the Why
page for this session; `source_page_data(name, page)` is the conversion it uses.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from kernels.catalog import CATALOG
from kernels.registry import get_kernel
from profiling.analysis import explain as X
from profiling.analysis import stalls as ST
from profiling.analysis.sass import SASS_INSTRUCTION_BYTES, StaticSass
from profiling.app import kernel_facts, precompute, state, table_format
from profiling.nsight import load as ncu_load
from profiling.nsight import report as ncu_report
from profiling.nsight import source as S
from profiling.nsight import source_load as SL
from profiling.nsight import source_table
from profiling.nsight.metric_registry import WAVEFRONTS_PER_INSTRUCTION_LABEL
from profiling.nsight.report import KernelLaunch
from profiling.paths import BUNDLED_RESULTS_DIR, largest_first

_RAW = re.compile(r"^ncu_(.+)_raw\.csv$")
_STALL_MARKERS = ("issue_stalled", "Warp State Statistics")


# ---------------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------------


@dataclass
class WhyData:
    """Launches and, where known, their source page, under one name. Each launch is paired with the page's
    section of the same function (the i-th launch of a function with its i-th section: both are in report order)."""

    name: str
    launches: list[KernelLaunch] = field(default_factory=list)
    page: S.SourcePage | None = None
    fill: Callable[[S.KernelSource], S.KernelSource] | None = field(default=None, repr=False, compare=False)
    """For a page read lazily: gives a section its instructions (kernel_source calls it before handing one out)."""
    _index: dict[str, tuple[KernelLaunch | None, S.KernelSource | None]] = field(
        default_factory=dict, init=False, repr=False
    )
    _stalls: dict[str, list[dict[str, Any]]] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        sections: dict[str, list[S.KernelSource]] = {}
        for kernel in self.page.kernels if self.page else ():
            sections.setdefault(S.short_name(kernel.name), []).append(kernel)
        ours = [x.identity for x in self.launches if x.identity.ours]
        sizes, shapes = {i.m for i in ours}, {i.size for i in ours}
        # A catalog kernel's entry launch takes its plain label, ahead of a side launch in its range (X.is_side_launch),
        # which is named after its function. Several sizes: M tells them apart unless two shapes share it.
        for launch in sorted(self.launches, key=X.is_side_launch):
            ident = launch.identity
            if ident.ours:
                size = "" if len(shapes) == 1 else f" @ {ident.m}" if len(sizes) == len(shapes) else f" @ {ident.size}"
                helper = f" {launch.function}" if X.is_side_launch(launch) else ""
                label = f"{ident.kernel_id}{size}{helper}"
            else:
                label = S.short_name(launch.name)
            if label in self._index:
                label = f"{label} #{launch.id}"
            same = sections.get(S.short_name(launch.name)) or []
            self._index[label] = (launch, same.pop(0) if same else None)
        for rest in sections.values():
            for kernel in rest:
                label = kernel.catalog_id or S.short_name(kernel.name)
                while label in self._index:
                    label += "'"
                self._index[label] = (None, kernel)

    def labels(self) -> dict[str, KernelLaunch | None]:
        """Label -> launch: the catalog id (with the size when the data has several), else the short function
        name; sections of the source page without a launch (a source page alone) map to None."""
        return {label: launch for label, (launch, _) in self._index.items()}

    def default_candidate(self) -> int:
        """Where "any two launches" puts its candidate against the first label: the first other kernel of the same
        shape (cuBLAS's split-K reduction is not what its GEMM is compared with), else the second label."""
        labels = list(self._index)
        first = self._index[labels[0]][0] if labels else None
        if first is not None:
            for n, label in enumerate(labels[1:], 1):
                launch = self._index[label][0]
                same_shape = launch is not None and launch.identity.size == first.identity.size
                if same_shape and self.catalog_id(label) != self.catalog_id(labels[0]):
                    return n
        return min(1, max(0, len(labels) - 1))

    def catalog_id(self, label: str) -> str | None:
        launch, kernel = self._index.get(label, (None, None))
        if launch is not None and launch.identity.ours:
            return launch.identity.kernel_id
        return kernel.catalog_id if kernel is not None else None

    def kernel_source(self, label: str) -> S.KernelSource | None:
        """The source-page section of a label, if the data has a source page."""
        kernel = self._index.get(label, (None, None))[1]
        return self.fill(kernel) if kernel is not None and self.fill is not None else kernel

    def reference(self, launch: KernelLaunch) -> KernelLaunch | None:
        """The library launch of the same size in this data, for % of cuBLAS (explain.reference_launch)."""
        return X.reference_launch(self.launches, launch)


def has_stall_data(report: ncu_report.Report) -> bool:
    return any(ST.stall_breakdown(x) is not None for x in report.launches)


def bundled_captures(folder: Path) -> list[tuple[Path, Path | None, Path | None]]:
    """(raw page, cuda,sass source page, sass source page) of each capture in a bundle folder whose raw page has
    stall metrics (checked on its header line alone), the largest size first: the default, as in `explain`."""
    found = []
    for raw in largest_first(folder.glob("ncu_*_raw.csv")):
        match = _RAW.match(raw.name)
        with raw.open(encoding="utf-8", errors="replace") as fh:
            header = fh.readline()
        if not match or not any(m in header for m in _STALL_MARKERS):
            continue
        pages = [folder / f"source_{match.group(1)}_{view}.csv.gz" for view in ("cuda_sass", "sass")]
        found.append((raw, *(p if p.is_file() else None for p in pages)))
    return found


def folder_gpu(folder: str, gpus: dict[str, str]) -> str:
    """The GPU name of results folder `folder` ("h200-2026-11-29"): its bundle's, else that of a bundle of the same
    GPU on another date (a folder of captures alone has no results document to name its GPU); "" when none."""
    kind = folder.rsplit("-", 3)[0]
    return gpus.get(folder) or next((gpu for name, gpu in gpus.items() if name.rsplit("-", 3)[0] == kind), "")


def later_captures(root: Path) -> list[tuple[Path, Path | None, Path | None]]:
    """Captures kept in results/<gpu>-<date>/why*/ (a stage's output, not a bundle: why/, why8192/, ...), newest
    day first; in a day why/ first, then the other folders by name. Each folder has its own compiled_sources/, so
    captures of one day made from different versions of a kernel file each read their own."""
    by_name = sorted((f for f in root.glob("*/why*") if f.is_dir()), key=lambda f: f.name) if root.is_dir() else []
    # A stable sort: within one day and kind the names stay in order.
    folders = sorted(by_name, key=lambda f: (f.parent.name[-10:], f.name == "why"), reverse=True)
    return [capture for folder in folders for capture in bundled_captures(folder)]


def capture_name(raw: Path) -> str:
    """A full-set capture's name from its raw page's: why_streamk_5120 from ncu_why_streamk_5120_raw.csv."""
    return raw.stem.removeprefix("ncu_").removesuffix("_raw")


def later_capture_label(raw: Path) -> str:
    """The Why page's label of a capture in results/<gpu>-<date>/why*/: "measured h200-2026-11-29: why_streamk_5120"
    from why/, "measured h200-2026-11-29/why8192: why_streamk_8192" from another why* folder."""
    folder = raw.parent.parent.name if raw.parent.name == "why" else f"{raw.parent.parent.name}/{raw.parent.name}"
    return f"measured {folder}: {capture_name(raw)}"


def load_capture(name: str, raw: Path, cuda_sass: Path | None = None, sass: Path | None = None) -> WhyData:
    """A bundled capture: its raw page and its source page (both views merged, so cuBLAS's SASS-only sections
    are there too), the catalog's .cu text attached."""
    report = ncu_load.load_report(raw)
    page = None
    # Lazily: the sections get their instructions when the page first shows them (WhyData.kernel_source).
    loaded = [source_table.lazy_page(source_tables(p)) for p in (cuda_sass, sass) if p is not None]
    views = [view for view, _ in loaded]
    if views:
        page = SL.merge_views(views[0], views[1]) if len(views) == 2 else views[0]
        compiled = raw.parent / SL.COMPILED_SOURCES_DIR
        SL.attach_catalog_source(page, compiled if compiled.is_dir() else None)

    def fill(kernel: S.KernelSource) -> S.KernelSource:
        for fill_view in (f for _, f in loaded):
            fill_view(kernel)
        return kernel

    return WhyData(name, report.launches, page, fill=fill if loaded else None)


def source_tables(path: Path) -> dict[str, pd.DataFrame]:
    """A bundled source-page export as tables (profiling.nsight.source_table), parsed once per content and parser
    version and kept as Parquet (profiling.app.precompute): a fresh server reads them instead of parsing the CSV."""
    key = precompute.content_key([path], code=[S])
    return precompute.cached_tables("source_page", key, lambda: source_table.page_tables(SL.read_source_file(path)))


def bundled_source_pages(root: Path = BUNDLED_RESULTS_DIR) -> list[Path]:
    """Every source-page export of the bundled captures (for building their tables at install time)."""
    folders = [p for p in sorted(root.iterdir()) if p.is_dir()] if root.is_dir() else []
    captures = [c for folder in folders for c in bundled_captures(folder)] + later_captures(root)
    return [page for capture in captures for page in capture[1:] if page is not None]


def report_data(name: str, reports: Iterable[tuple[str, ncu_report.Report]]) -> WhyData | None:
    """Uploaded or profiled reports with stall metrics, as one data set (None when none has them), with the
    source views that `.ncu-rep` uploads carry (their kernels in upload order)."""
    reports = list(reports)
    launches = [x for _, report in reports if has_stall_data(report) for x in report.launches]
    pages = [report.source_page for _, report in reports if report.source_page is not None]
    page = None
    if pages:
        page = S.SourcePage([k for p in pages for k in p.kernels], "cuda,sass", ", ".join(p.source for p in pages))
        SL.attach_catalog_source(page)
    return WhyData(name, launches, page) if launches else None


def source_page_data(name: str, page: S.SourcePage) -> WhyData:
    """A source page on its own: the source view and its sampled stalls, no counters."""
    SL.attach_catalog_source(page)
    return WhyData(name, [], page)


def offer_source_page(name: str, page: S.SourcePage) -> None:
    """Make an uploaded source page a data source of the Why page for this browser session (Reports page hook)."""
    state.source_pages()[name] = page


def _first_label_per_kernel(data: WhyData) -> dict[str | None, str]:
    """Catalog id -> its first label: the entry launch's, ahead of a side launch's "#n" (WhyData's order)."""
    by_id: dict[str | None, str] = {}
    for label in data.labels():
        by_id.setdefault(data.catalog_id(label), label)
    return by_id


def ladder_labels(data: WhyData) -> list[str]:
    """The ladder's kernels present in the data, in ladder order (every label when none is a ladder kernel)."""
    order = list(dict.fromkeys(k for step in X.ladder_steps() for k in step))
    labels = data.labels()
    by_id = _first_label_per_kernel(data)
    chosen = [by_id[k] for k in order if k in by_id]
    return chosen or list(labels)


def ladder_pairs(data: WhyData) -> list[tuple[str, str]]:
    """The catalog's ladder steps (explain.ladder_steps) whose two kernels are both in the data, as labels."""
    by_id = _first_label_per_kernel(data)
    return [(by_id[a], by_id[b]) for a, b in X.ladder_steps() if a in by_id and b in by_id]


# ---------------------------------------------------------------------------------------------
# Stalls
# ---------------------------------------------------------------------------------------------


def _label_stalls(data: WhyData, label: str) -> list[dict[str, Any]]:
    """One label's rows of the stall frame (cached on the data: a breakdown reads every metric of the launch)."""
    if label in data._stalls:
        return data._stalls[label]
    launch, kernel = data._index.get(label, (None, None))
    rows: list[dict[str, Any]] = []
    if launch is not None:
        rows = ST.stalls_frame([launch], [label]).to_dict("records")
    if not rows and kernel is not None and kernel.total_samples:
        totals = kernel.stall_totals()
        whole = sum(totals.values())
        rows = [
            {"label": label, "reason": r, "value": v, "share": v / whole, "kind": "samples", "meaning": ST.meaning(r)}
            for r, v in totals.items()
        ]
    data._stalls[label] = rows
    return rows


def stall_frame(data: WhyData, labels: list[str]) -> pd.DataFrame:
    """profiling.analysis.stalls.stalls_frame of the chosen labels, in their order; a label without counters
    (a source page alone) uses its page's sampled stalls (kind "samples")."""
    rows = [row for label in labels for row in _label_stalls(data, label)]
    return pd.DataFrame.from_records(rows, columns=["label", "reason", "value", "share", "kind", "meaning"])


def kernel_ids(data: WhyData, labels: Iterable[str]) -> dict[str, str]:
    """Label -> catalog id (for kernel colours)."""
    return {label: kid for label in labels if (kid := data.catalog_id(label))}


# ---------------------------------------------------------------------------------------------
# Source view
# ---------------------------------------------------------------------------------------------

LINE_COLUMNS = [
    "line",
    "% samples",
    "source",
    "dominant stall",
    "samples",
    "instructions executed",
    WAVEFRONTS_PER_INSTRUCTION_LABEL,
    "excess shared wavefronts",
    "excess global sectors",
]
COMPACT_COLUMNS = ["line", "% samples", "dominant stall", "source"]


def _row(summary: dict[str, Any], first: str, first_value: Any, text: str) -> dict[str, Any]:
    return {
        first: first_value,
        "% samples": summary["pct"],
        "source" if first == "line" else "sass": text,
        "dominant stall": summary["dominant_stall"] or "",
        "samples": summary["samples"],
        "instructions executed": summary["executed"],
        WAVEFRONTS_PER_INSTRUCTION_LABEL: table_format.n_way_text(summary["bank_conflict_n_way"]),
        "excess shared wavefronts": summary["shared_excessive_wavefronts"],
        "excess global sectors": summary["global_excessive_sectors"],
    }


STALL_COLUMNS_SHOWN = 5
"""Stall reasons given a column of their own in the source view (the kernel's top reasons); the rest are summed."""
OTHER_STALLS = "other stalls"


def stall_columns(
    kernel: S.KernelSource, stalls: list[dict[str, float]], top: int = STALL_COLUMNS_SHOWN
) -> dict[str, list[float]]:
    """One column per stall reason for rows whose samples per reason are `stalls`: the kernel's `top` reasons by
    samples, each "stall: <reason>", then OTHER_STALLS summing every other reason, so a row's columns add up to its
    samples."""
    reasons = list(kernel.stall_totals())[:top]
    columns = {f"stall: {r}": [row.get(r, 0.0) for row in stalls] for r in reasons}
    columns[OTHER_STALLS] = [sum(v for r, v in row.items() if r not in reasons) for row in stalls]
    return columns


def _with_stalls(table: pd.DataFrame, kernel: S.KernelSource, stalls: list[dict[str, float]]) -> pd.DataFrame:
    at = list(table.columns).index("dominant stall") + 1
    for offset, (name, values) in enumerate(stall_columns(kernel, stalls).items()):
        table.insert(at + offset, name, values)
    return table


def line_table(kernel: S.KernelSource) -> pd.DataFrame:
    """Every CUDA line ncu lists for the kernel, in line order, with its costs (LINE_COLUMNS) and its samples per
    stall reason (stall_columns)."""
    summaries = sorted((kernel.line_summary(ln) for ln in kernel.lines), key=lambda s: s["line"])
    rows = [_row(s, "line", s["line"], s["source"]) for s in summaries]
    table = pd.DataFrame(rows, columns=LINE_COLUMNS)
    return _with_stalls(table, kernel, [s["stalls"] for s in summaries])


def hot_lines_table(kernel: S.KernelSource, top: int = 10, compact: bool = False) -> pd.DataFrame:
    """The `top` lines by warp-stall samples (COMPACT_COLUMNS only when `compact`); a kernel without line
    information gives its hottest instructions."""
    if not kernel.lines:
        table = instruction_table(kernel, kernel.hottest_instructions(top))
        return table[["offset", "% samples", "dominant stall", "sass"]] if compact else table
    rows = [_row(s, "line", s["line"], s["source"].strip()) for s in kernel.hottest_lines(top)]
    table = pd.DataFrame(rows, columns=LINE_COLUMNS)
    return table[COMPACT_COLUMNS] if compact else table


def instruction_table(kernel: S.KernelSource, instructions: Iterable[S.Instruction]) -> pd.DataFrame:
    """SASS rows with the same columns as the lines; "offset" is the address less the kernel's first one (as
    nvdisasm and the static SASS count them)."""
    total = kernel.total_samples
    start = min(kernel.instructions, default=0)
    rows = []
    for ins in instructions:
        d = ins.to_dict(total)
        summary = {
            **d,
            "shared_excessive_wavefronts": d["shared_excessive_wavefronts"] or 0.0,
            "global_excessive_sectors": d["global_excessive_sectors"] or 0.0,
        }
        rows.append(_row(summary, "offset", f"0x{ins.address - start:04x}", ins.sass))
    columns = ["offset", "% samples", "sass", *LINE_COLUMNS[3:]]
    return pd.DataFrame(rows, columns=columns)


def line_sass_table(kernel: S.KernelSource, line: int) -> pd.DataFrame:
    """The SASS ncu lists under one CUDA line, with its samples per stall reason (stall_columns)."""
    source_line = next((ln for ln in kernel.lines if ln.line == line), None)
    instructions = kernel.line_instructions(source_line) if source_line else []
    return _with_stalls(instruction_table(kernel, instructions), kernel, [i.stalls for i in instructions])


def sass_table(kernel: S.KernelSource) -> pd.DataFrame:
    """Every SASS instruction in address order, with its source line(s) ("lines") and samples per stall reason."""
    instructions = [kernel.instructions[a] for a in sorted(kernel.instructions)]
    table = _with_stalls(instruction_table(kernel, instructions), kernel, [i.stalls for i in instructions])
    table.insert(1, "lines", [", ".join(str(n) for n in i.lines) for i in instructions])
    return table


CODE_KB_LABEL = f"code, KB ({SASS_INSTRUCTION_BYTES} bytes an instruction)"


def static_mix_table(static: StaticSass) -> pd.DataFrame:
    """The instruction mix of the whole kernel and of its main loop, with the math : shared-load ratio and the code's
    size: a main loop of tens of KB is fetched again after another kernel's code has filled the SMs' instruction
    caches (v9-regdb's 35 KB loop: about 10 us a launch on an H200, results/h200-2026-11-30/icache/)."""
    whole, loop = static.mix.to_dict(), static.loop_mix.to_dict() if static.loop_mix else {}
    rows = [
        ("FFMA", "ffma"),
        ("HMMA / HGMMA (tensor core)", "hmma"),
        ("LDS, all widths (shared loads)", "lds"),
        ("LDS.128 (16-byte shared loads)", "lds_128"),
        ("LDSM (ldmatrix)", "ldsm"),
        ("STS (shared stores)", "sts"),
        ("LDG (global loads into registers)", "ldg"),
        ("LDGSTS (cp.async, global to shared)", "ldgsts"),
        ("BAR (__syncthreads)", "bar"),
        ("all instructions", "total"),
    ]
    table = pd.DataFrame(
        [{"instructions": label, "whole kernel": whole[key], "main loop": loop.get(key)} for label, key in rows]
    )
    ratio = loop.get("math_per_shared_load") if loop else None
    math = "HMMA" if loop and loop.get("hmma") else "FFMA"
    extra = {"instructions": f"{math} per shared load (main loop)", "whole kernel": None, "main loop": ratio}
    size = {
        "instructions": CODE_KB_LABEL,
        "whole kernel": round(whole["total"] * SASS_INSTRUCTION_BYTES / 1024, 1),
        "main loop": round(loop["total"] * SASS_INSTRUCTION_BYTES / 1024, 1) if loop else None,
    }
    return pd.concat([table, pd.DataFrame([extra, size])], ignore_index=True)


def static_lines_table(static: StaticSass) -> pd.DataFrame:
    """Static SASS per CUDA line: its file (the kernel's or a header's), the line, its text, its instruction count
    and the SASS."""
    rows = []
    for (file, line), instructions in static.function.by_source_line().items():
        sass = "\n".join(f"{i.predicate} {i.text}".strip() for i in instructions)
        text = static.line_text(file, line)
        rows.append({"file": file, "line": line, "source": text, "instructions": len(instructions), "sass": sass})
    return pd.DataFrame(rows, columns=["file", "line", "source", "instructions", "sass"])


# ---------------------------------------------------------------------------------------------
# Explain a step
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MetricCell:
    """One of the Explain section's measured cells, as st.metric draws it."""

    label: str
    value: str
    delta: str | None
    rise_is_worse: bool
    """A time: drawn with Streamlit's inverse delta colours, so that slower reads red."""


def metric_cells(measured: pd.DataFrame) -> tuple[MetricCell, ...]:
    """measured_table's rows as the section's cells: the value after with two decimals, the change and the value
    before as the delta; "-" without a value after. Built once per step (StepView), not per visit."""
    cells = []
    for row in measured.to_dict("records"):
        label = str(row["measure"])
        if row["after"] is None or pd.isna(row["after"]):
            cells.append(MetricCell(label, "-", None, False))
            continue
        delta = f"{row['change']} (from {row['before']:,.2f})" if row["change"] else None
        cells.append(MetricCell(label, f"{row['after']:,.2f}", delta, label.startswith("time")))
    return tuple(cells)


@dataclass
class StepView:
    """Everything the Explain section shows for two launches."""

    explanation: X.Explanation
    diff: str
    measured: pd.DataFrame
    cells: tuple[MetricCell, ...]
    ranked: pd.DataFrame
    stalls: pd.DataFrame
    hot_before: pd.DataFrame | None
    hot_after: pd.DataFrame | None


def code_diff(base_id: str | None, cand_id: str | None) -> str:
    """The Kernels page's diff (kernel_facts.kernel_diff) of the candidate against the baseline ('' when either
    is not a catalog kernel with source)."""
    ids = {s.id for s in CATALOG}
    if base_id not in ids or cand_id not in ids:
        return ""
    base, cand = get_kernel(base_id), get_kernel(cand_id)
    if not base.source or not cand.source:
        return ""
    return kernel_facts.kernel_diff(dataclasses.replace(cand, previous=base.id))


def measured_table(expl: X.Explanation) -> pd.DataFrame:
    """Time, TFLOP/s and % of cuBLAS before and after."""

    def change(a: float | None, b: float | None) -> str:
        return X.change_text(a, b) if a and b else ""

    rows = [
        ("time (us)", expl.time_before_ns, expl.time_after_ns, 1e-3),
        ("TFLOP/s", expl.tflops_before, expl.tflops_after, 1.0),
        (f"% of {expl.reference_name}", expl.pct_of_reference_before, expl.pct_of_reference_after, 1.0),
    ]
    return pd.DataFrame(
        [
            {
                "measure": name,
                "before": b * scale if b is not None else None,
                "after": a * scale if a is not None else None,
                "change": change(b, a),
            }
            for name, b, a, scale in rows
        ]
    )


TENSOR_KEYS = ("tensor_pipe_busy", "shared_busy_per_gflop")


def tensor_table(expl: X.Explanation) -> pd.DataFrame:
    """The tensor-core view of a step, whatever their rank: tensor-pipe busy and shared-memory traffic per GFLOP
    (empty when neither launch has them, or neither did tensor-core work)."""
    if not expl.tensor_core:
        return pd.DataFrame(columns=["measure", "before", "after", "change", "meaning"])
    rows = [
        {
            "measure": item.label,
            "before": X.fmt(item.before, item.unit),
            "after": X.fmt(item.after, item.unit),
            "change": X.change_text(item.before, item.after),
            "meaning": item.sentence.split(": ", 1)[-1],
        }
        for item in expl.items
        if item.key in TENSOR_KEYS
    ]
    return pd.DataFrame(rows, columns=["measure", "before", "after", "change", "meaning"])


def ranked_table(expl: X.Explanation, top: int = 10) -> pd.DataFrame:
    """The ranked counters and time terms with their one-sentence interpretation."""
    rows = [
        {
            "rank": n,
            "what moved": item.label,
            "before": X.fmt(item.before, item.unit),
            "after": X.fmt(item.after, item.unit),
            "change": X.change_text(item.before, item.after),
            "score": round(item.score, 3),
            "time carried": f"{item.effect_pct:+.0f}%" if item.carried else "",
            "interpretation": item.sentence,
        }
        for n, item in enumerate(expl.top(top), 1)
    ]
    columns = ["rank", "what moved", "before", "after", "change", "score", "time carried", "interpretation"]
    return pd.DataFrame(rows, columns=columns)


def _hot(kernel: S.KernelSource | None, computed: list[dict[str, Any]]) -> pd.DataFrame | None:
    """The compact hot-lines table, from the lines `explain` already ranked when it had them."""
    if kernel is None:
        return None
    if not computed:
        return hot_lines_table(kernel, 5, compact=True)
    rows = [_row(s, "line", s["line"], s["source"].strip()) for s in computed]
    return pd.DataFrame(rows, columns=LINE_COLUMNS)[COMPACT_COLUMNS]


def explain_step(data: WhyData, base_label: str, cand_label: str) -> StepView:
    """The Explain section for two labels of `data` (InvalidInput-free: a label without counters gives an
    explanation with no items and a warning)."""
    labels = data.labels()
    base, cand = labels.get(base_label), labels.get(cand_label)
    src_b, src_a = data.kernel_source(base_label), data.kernel_source(cand_label)
    if base is None or cand is None:
        expl = X.Explanation(baseline=base_label, candidate=cand_label)
        expl.warnings.append("no counters for one of the two (a source page alone): only its hottest lines show")
        expl.summary = f"{base_label} -> {cand_label}: no counters to compare"
    else:
        expl = X.explain(base, cand, data.reference(base), data.reference(cand), src_b, src_a)
    return StepView(
        explanation=expl,
        diff=code_diff(data.catalog_id(base_label), data.catalog_id(cand_label)),
        measured=(measured := measured_table(expl)),
        cells=metric_cells(measured),
        ranked=ranked_table(expl),
        stalls=stall_frame(data, [base_label, cand_label]),
        hot_before=_hot(src_b, expl.hot_lines_before),
        hot_after=_hot(src_a, expl.hot_lines_after),
    )
