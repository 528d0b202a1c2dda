"""The tables the pages show, as pure functions over results documents, ncu reports and saved runs.

Column names are the ones the reader sees; nothing here imports Streamlit, so every table is tested directly
on the bundled real measurements (results/<device>-<date>/) and the ncu fixtures.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from kernels.catalog import CATALOG
from profiling.analysis.launches import launch_configs_from_reports
from profiling.analysis.occupancy import OccupancyResult, theoretical_occupancy
from profiling.app.bundles import Bundle
from profiling.app.table_format import display, missing
from profiling.app.text import md_escape
from profiling.charts.roofline import roofline_points
from profiling.device_model import Ceilings, DeviceInfo
from profiling.errors import InvalidInput, first_line
from profiling.gpu.timing import is_unsteady, tenths_ratio
from profiling.nsight import report as ncu_report
from profiling.nsight.metric_registry import key_table_columns, key_table_help
from profiling.nsight.tools import find_ncu, find_tool
from profiling.paths import tool_path
from profiling.runs.comparison import BETTER_VERDICTS, METRIC_BY_KEY, METRICS, VERDICT_COLORS, WORSE_VERDICTS
from profiling.runs.records import SavedRun, as_run
from profiling.runs.results import ResultsDocument, results_frame, run_references
from profiling.runs.values import iso_utc

if TYPE_CHECKING:  # importing the Styler module loads jinja2: only for the annotation
    from pandas.io.formats.style import Styler


# ---------------------------------------------------------------------------------------------
# Overview
# ---------------------------------------------------------------------------------------------


def markdown_table(frame: pd.DataFrame) -> str:
    """A small DataFrame as a Markdown table, every cell escaped (drawn at once, no grid component)."""
    head = "| " + " | ".join(md_escape(c) for c in frame.columns) + " |"
    rule = "|" + "---|" * len(frame.columns)
    rows = ["| " + " | ".join(md_escape(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([head, rule, *rows])


def cuda_version(value: Any) -> str:
    """13020 -> '13.2' (CUDA's integer encoding); other values as given."""
    try:
        v = int(value)
    except (TypeError, ValueError):
        return str(value) if value else "-"
    return f"{v // 1000}.{(v % 1000) // 10}"


def device_rows(device: DeviceInfo) -> pd.DataFrame:
    """The Overview's device table: name, compute capability, SMs, clocks, memory, driver, CUDA, CuPy."""
    mem = device.total_memory_bytes
    rows = [
        ("GPU", device.name),
        ("compute capability", device.cc),
        ("SMs", device.sm_count),
        ("max SM clock (MHz)", device.max_sm_clock_mhz),
        ("max memory clock (MHz)", device.max_mem_clock_mhz),
        ("memory", f"{mem / 2**30:.1f} GiB" if mem else None),
        ("memory bus (bits)", device.memory_bus_width_bits),
        ("L2", f"{device.l2_bytes / 2**20:.0f} MiB" if device.l2_bytes else None),
        ("FP32 peak (TFLOP/s)", f"{device.fp32_peak_tflops:.1f}" if device.fp32_peak_tflops else None),
        ("driver", device.driver),
        ("CUDA runtime", cuda_version(device.cuda_runtime)),
        ("CUDA driver API", cuda_version(device.cuda_driver)),
        ("CuPy", device.cupy),
        ("NVRTC", device.nvrtc),
    ]
    return pd.DataFrame([(k, "-" if v is None else str(v)) for k, v in rows], columns=["property", "value"])


def installed_tools() -> tuple[tuple[str, str | None], ...]:
    """(tool, its path or None) of the CUDA tools the Overview lists: ncu, compute-sanitizer, nvcc."""
    return (("ncu", find_ncu()), ("compute-sanitizer", find_tool("compute-sanitizer")), ("nvcc", tool_path("nvcc")))


def tool_rows(found: tuple[tuple[str, str | None], ...] | None = None) -> pd.DataFrame:
    """Which CUDA tools are installed here (`found`, else installed_tools()): ncu, compute-sanitizer, nvcc (path
    or 'not found')."""
    return pd.DataFrame(
        [(name, "yes" if path else "no", path or "not found") for name, path in found or installed_tools()],
        columns=["tool", "available", "path"],
    )


def bundles_table(bundles: Sequence[Bundle]) -> pd.DataFrame:
    """One row per bundle: folder, device, date and what it holds."""
    return pd.DataFrame(
        [
            {
                "folder": f"results/{b.name}",
                "device": b.device_name,
                "date": b.date,
                "benchmark files": ", ".join(p.name for p in b.bench_files),
                "other results": ", ".join(p.name for p in b.other_results),
                "ncu captures": ", ".join(g[0].name for g in b.ncu_groups),
                ".ncu-rep": ", ".join(p.name for p in b.ncu_reps),
            }
            for b in bundles
        ],
        columns=["folder", "device", "date", "benchmark files", "other results", "ncu captures", ".ncu-rep"],
    )


# ---------------------------------------------------------------------------------------------
# Benchmark
# ---------------------------------------------------------------------------------------------


BENCH_TABLE_COLUMNS: dict[str, str] = {
    "kernel": "kernel",
    "size": "size",
    "status": "status",
    "median_ms": "time (ms)",
    "tflops": "TFLOP/s",
    "pct_peak": "% of FP32 peak",
    "pct_cublas": "% of cuBLAS",
    "rel_error": "rel. error",
    "registers": "registers",
    "sm_clock_mhz": "SM clock (MHz)",
    "capped": "clocks capped",
    "clock_events": "clock events",
    "error": "error",
}


def bench_frame(document: ResultsDocument) -> pd.DataFrame:
    """results_frame() sorted by size then catalog order, with `flops` (2MNK) added, and per row its run's
    reference's p90 / p10 and whether that reference was unsteady (profiling.gpu.timing.is_unsteady): a % of cuBLAS
    over an unsteady cuBLAS is not one to judge by."""
    frame = results_frame(document)
    if frame.empty:
        return frame
    references = run_references(document)
    frame["reference_p90_over_p10"] = [None if r is None else tenths_ratio(r) for r in references]
    frame["reference_unsteady"] = [r is not None and is_unsteady(r) for r in references]
    order = {spec.id: i for i, spec in enumerate(CATALOG)}
    frame["flops"] = 2.0 * frame["m"] * frame["n"] * frame["k"]
    frame["_order"] = frame["kernel"].map(lambda k: order.get(k, len(order)))
    return frame.sort_values(["flops", "_order"]).drop(columns="_order").reset_index(drop=True)


def bench_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The results table the Benchmark page shows: one row per kernel and size, readable column names."""
    view = frame[[c for c in BENCH_TABLE_COLUMNS if c in frame.columns]].copy()
    return view.rename(columns=BENCH_TABLE_COLUMNS)


# ---------------------------------------------------------------------------------------------
# ncu reports
# ---------------------------------------------------------------------------------------------


KEY_TABLE_COLUMNS: dict[str, tuple[str, float]] = key_table_columns()
"""Frame column -> (heading, display scale): the metric registry's KEY_TABLE."""
KEY_TABLE_HELP: dict[str, str] = key_table_help()
"""Heading -> the registry's one-line meaning, for the columns' tooltips."""


def launch_names(report: ncu_report.Report) -> list[tuple[str, str, str]]:
    """(launch, kernel, size) per launch of a report, one naming rule whatever the layout (raw, details, summary):
    kernel = the catalog id when the launch is ours, else the function's own name; size = MxNxK when the capture
    recorded it (the worker's NVTX range), else MxN from the grid for our kernels, else blank; launch = kernel and
    size, with " #<id>" only where two launches would share a name. What differs between layouts is what they
    carry (a summary page has no NVTX range, so no K and no way to tell cuBLAS from another library kernel), not
    the rule."""
    frame = ncu_report.key_metrics_frame(report) if report.launches else None
    rows = []
    for i, launch in enumerate(report.launches):
        ident = launch.identity
        kernel = ident.kernel_id if ident.ours else str(frame["kernel"].iloc[i])
        size = ident.size
        rows.append([f"{kernel} {size}".strip(), kernel, size, launch.id])
    names = [r[0] for r in rows]
    return [(f"{n} #{i}" if names.count(n) > 1 else n, k, size) for n, k, size, i in rows]


def key_metrics_table(reports: Sequence[tuple[str, ncu_report.Report]]) -> pd.DataFrame:
    """One row per launch of every report: launch (unique key), kernel, size, source, then the key metrics in
    display units (µs, KB, MB, %, TFLOP/s). Launch names follow launch_names(); they come from the files and are
    plain data."""
    frames = []
    for source, report in reports:
        frame = ncu_report.key_metrics_frame(report)
        names = launch_names(report)
        out = pd.DataFrame(
            {
                "launch": [n for n, _, _ in names],
                "kernel": [k for _, k, _ in names],
                "size": [s for _, _, s in names],
                "source": source,
                "block": frame["block"],
                "grid": frame["grid"],
            }
        )
        for column, (title, scale) in KEY_TABLE_COLUMNS.items():
            out[title] = frame[column] * scale
        frames.append(out)
    if not frames:
        return pd.DataFrame(columns=["launch", "kernel", "size", "source", "block", "grid"])
    table = pd.concat(frames, ignore_index=True)
    if len(reports) > 1 or table["launch"].duplicated().any():
        table["launch"] = table["launch"] + " [" + table["source"] + "]"
    dup = table["launch"].duplicated(keep=False)
    table.loc[dup, "launch"] = table.loc[dup, "launch"] + " #" + table.index[dup].astype(str)
    return table


def findings_table(reports: Sequence[tuple[str, ncu_report.Report]]) -> pd.DataFrame:
    """ncu's rule findings: launch (named as in key_metrics_table), rule, type, estimated speedup (%), description;
    biggest speedup first, findings without a speedup figure after them."""
    rows = []
    for source, report in reports:
        for launch, (name, _, _) in zip(report.launches, launch_names(report), strict=True):
            for f in launch.findings:
                rows.append(
                    {
                        "launch": name,
                        "source": source,
                        "rule": f.rule,
                        "type": f.type,
                        "est. speedup (%)": f.estimated_speedup_pct,
                        "description": f.description,
                    }
                )
    frame = pd.DataFrame(rows, columns=["launch", "source", "rule", "type", "est. speedup (%)", "description"])
    return frame.sort_values("est. speedup (%)", ascending=False, na_position="last").reset_index(drop=True)


def compare_launches(table: pd.DataFrame, launches: Sequence[str]) -> pd.DataFrame:
    """Side by side: one row per key metric, one column per chosen launch (in the order given)."""
    chosen = table.set_index("launch").loc[list(launches)]
    metrics = [title for title, _ in KEY_TABLE_COLUMNS.values()]
    out = chosen[metrics].T
    out.index.name = "metric"
    return out


# ---------------------------------------------------------------------------------------------
# Roofline
# ---------------------------------------------------------------------------------------------


def roofline_table(points: pd.DataFrame, ceilings: Ceilings) -> pd.DataFrame:
    """The points under a roofline: kernel, label, level, intensity (FLOP/B), TFLOP/s, binding ceiling, % of it."""
    df = roofline_points(points, ceilings)
    out = pd.DataFrame(
        {
            "kernel": df["kernel"].map(html.unescape),
            "label": df["label"].map(html.unescape),
            "level": df["level"],
            "intensity (FLOP/B)": df["intensity"],
            "TFLOP/s": df["achieved"] / 1e12,
            "binding ceiling": df["binding_ceiling"],
            "% of ceiling": df["pct_of_roof"],
        }
    )
    return out.reset_index(drop=True)


def ceilings_table(theoretical: Ceilings, measured: Ceilings | None) -> pd.DataFrame:
    """Each roofline ceiling: the theoretical value and its source beside the measured one, in T units."""
    rows = []
    for label, attr, unit in (
        ("FP32", "fp32_flops", "TFLOP/s"),
        ("FP16 tensor", "tensor_fp16_flops", "TFLOP/s"),
        ("DRAM", "dram_bytes_per_s", "TB/s"),
        ("L2", "l2_bytes_per_s", "TB/s"),
        ("L1 / shared", "l1_bytes_per_s", "TB/s"),
    ):
        t = getattr(theoretical, attr)
        m = getattr(measured, attr) if measured else None
        if t is None and m is None:
            continue
        rows.append(
            {
                "ceiling": label,
                "unit": unit,
                "theoretical": t.value / 1e12 if t else None,
                "source": t.source if t else "",
                "measured": m.value / 1e12 if m else None,
                "measured how": m.note if m else "",
                "measured / theoretical (%)": 100 * m.value / t.value if (t and m) else None,
            }
        )
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------
# Occupancy
# ---------------------------------------------------------------------------------------------


RESOURCE_NAMES = {
    "warps": "warps per SM",
    "registers": "registers per SM",
    "shared_mem": "shared memory per SM",
    "blocks": "blocks per SM",
}


def occupancy_limits_table(result: OccupancyResult) -> pd.DataFrame:
    """Blocks per SM each resource allows (warps, registers, shared memory, blocks) and which bind."""
    return pd.DataFrame(
        [
            {
                "resource": RESOURCE_NAMES.get(name, name),
                "blocks per SM allowed": allowed,
                "limits": name in result.limiters,
            }
            for name, allowed in result.blocks_allowed_by.items()
        ]
    )


def occupancy_table(reports: Sequence[tuple[str, ncu_report.Report]]) -> pd.DataFrame:
    """Per launch: block, registers, shared memory, our theoretical occupancy, ncu's theoretical and achieved,
    and the limiting resource(s)."""

    rows = []
    for config in launch_configs_from_reports(reports):
        try:
            result = theoretical_occupancy(config.cc, config.threads, config.registers, config.shared_mem)
            ours, limit = result.occupancy_pct, ", ".join(result.limiters)
        except InvalidInput as exc:
            ours, limit = None, first_line(exc)
        rows.append(
            {
                "launch": config.name,
                "threads": config.threads,
                "registers": config.registers,
                "shared mem (B)": config.shared_mem,
                "theoretical (%)": ours,
                "ncu theoretical (%)": config.ncu_theoretical_pct,
                "ncu achieved (%)": config.achieved_pct,
                "limited by": limit,
            }
        )
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------
# Saved runs (Review page)
# ---------------------------------------------------------------------------------------------


RUN_TABLE_COLUMNS = {
    "id": "id",
    "label": "label",
    "author": "author",
    "notes": "notes",
    "created": "saved (UTC)",
    "kind": "kind",
    "device_name": "device",
    "device_cc": "compute capability",
    "catalog_commit": "commit",
    "n_results": "results",
    "kernels": "kernels",
}


def runs_table(runs: pd.DataFrame) -> pd.DataFrame:
    """review.runs_frame() for display: readable headers, kernels joined, date as text to the minute."""
    out = runs.copy()
    out["kernels"] = out["kernels"].map(lambda ks: ", ".join(ks))
    out["created"] = out["created"].dt.strftime("%Y-%m-%d %H:%M")
    return out.rename(columns=RUN_TABLE_COLUMNS)


def history_table(history: pd.DataFrame, value_label: str) -> pd.DataFrame:
    """review.kernel_history() for display: run, date, device, size and the metric under its own name."""
    out = pd.DataFrame(
        {
            "run": [f"#{i} {label}" for i, label in zip(history["run_id"], history["run_label"], strict=True)],
            "saved (UTC)": pd.to_datetime(history["created"], utc=True).dt.strftime("%Y-%m-%d %H:%M:%S"),
            "device": history["device_name"],
            "size": history["size"],
            value_label: history["value"],
        }
    )
    return out


def run_info_table(run: SavedRun | Mapping[str, Any]) -> pd.DataFrame:
    """A saved run's own fields and device as a property/value table."""
    run = as_run(run)
    device = run.device
    rows = [
        ("id", run.id),
        ("label", run.label),
        ("author", run.author),
        ("notes", run.notes),
        ("created", iso_utc(run.created)),
        ("kind", run.kind),
        ("device", device.name or run.device_name),
        ("compute capability", device.cc or run.device_cc),
        ("driver", device.driver),
        ("CUDA runtime", cuda_version(device.cuda_runtime)),
        ("max SM clock (MHz)", device.max_sm_clock_mhz),
        ("catalog commit", run.catalog_commit),
    ]
    return pd.DataFrame([(k, "" if v is None else str(v)) for k, v in rows], columns=["property", "value"])


def run_results_table(run: SavedRun | Mapping[str, Any]) -> pd.DataFrame:
    """A saved run's results: kernel, size, status and the compared metrics."""
    rows = []
    for r in as_run(run).results:
        row = {"kernel": r.kernel, "size": r.size, "status": r.status}
        row.update({m.label: getattr(r, m.key) for m in METRICS})
        rows.append(row)
    return pd.DataFrame(rows)


def style_side_by_side(side: pd.DataFrame) -> Styler:
    """comparison.side_by_side() with each metric's cells coloured by verdict (green better, red worse, as
    Nsight Compute's baseline view); the verdict columns themselves are hidden."""

    verdict_cols = [c for c in side.columns if str(c).endswith(" verdict")]
    shown = [c for c in side.columns if c not in verdict_cols]

    def colour(row: pd.Series) -> list[str]:
        styles = []
        for c in shown:
            base = str(c).removesuffix(" Δ%")
            verdict = row.get(f"{base} verdict") if not str(c).endswith("(base)") else None
            if isinstance(verdict, str) and verdict in (*BETTER_VERDICTS, *WORSE_VERDICTS, "changed", "noisy"):
                styles.append(f"color: {VERDICT_COLORS[verdict]}; font-weight: 600")
            else:
                styles.append("")
        return styles

    full = side.copy()
    for c in shown:  # Streamlit draws a null as "None" whatever na_rep says: gaps become empty text
        if full[c].isna().any():
            full[c] = ["" if missing(v) else (f"{v:.4g}" if isinstance(v, float) else str(v)) for v in full[c]]
    styler = full.style.apply(lambda row: colour(row) + [""] * len(verdict_cols), axis=1)
    styler = styler.hide(verdict_cols, axis="columns").format(precision=4, na_rep="")
    return styler


def metric_label(key: str) -> str:
    """A compared metric's display label (a module function for widgets' format_func: see state.mark_report_files_changed)."""
    return METRIC_BY_KEY[key].label


def side_by_side_plain(side: pd.DataFrame) -> pd.DataFrame:
    """comparison.side_by_side() for the page: plain values (rounded by `display`), with the verdicts of time and
    status as words and the other metrics' verdict columns left out. Cell colours (style_side_by_side) cost
    Streamlit a per-cell rendering pass on every visit, which a team's load cannot afford; the HTML report keeps
    them."""
    keep = {"Time (ms) verdict", "Status verdict"}
    dropped = [c for c in side.columns if str(c).endswith(" verdict") and c not in keep]
    if "candidate_label" in side.columns and side["candidate_label"].nunique() <= 1:
        dropped.append("candidate_label")  # one candidate: its label is the selection above the table
    plain = side.drop(columns=dropped)
    # The verdict and its interval first: the reason to open this table.
    first = [
        c
        for c in (
            "candidate_label",
            "kernel",
            "size",
            "Time (ms) verdict",
            "Time (ms) interval",
            "Time (ms) (base)",
            "Time (ms)",
            "Time (ms) Δ%",
            "Status verdict",
        )
        if c in plain.columns
    ]
    return display(plain[first + [c for c in plain.columns if c not in first]])


def comparable_pair(results: pd.DataFrame) -> tuple[int, int] | None:
    """The default (baseline id, candidate id) of the Review comparison: the two runs with the most kernel/size
    pairs in common on the same device (any device when no two runs of one device overlap), the older one as the
    baseline; None when no two runs share a kernel and size. `results` is review.rows_frame() or
    review.keys_frame()."""
    if results.empty:
        return None
    keys = results.assign(key=results["kernel"].astype(str) + " " + results["size"].astype(str))
    per_run = {
        int(i): (set(part["key"]), part["device_name"].iloc[0], part["created"].min())
        for i, part in keys.groupby("run_id")
    }
    best: tuple[tuple[bool, int, Any], tuple[int, int]] | None = None
    ids = sorted(per_run)
    for n, a in enumerate(ids):
        for b in ids[n + 1 :]:
            common = len(per_run[a][0] & per_run[b][0])
            if not common:
                continue
            older, newer = sorted((a, b), key=lambda i: (per_run[i][2], i))
            score = (per_run[a][1] == per_run[b][1], common, per_run[newer][2])
            if best is None or score > best[0]:
                best = (score, (older, newer))
    return best[1] if best else None
