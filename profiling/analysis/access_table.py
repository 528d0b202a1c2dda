"""Predicted against measured for the bundled captures at 1024 (access_check.py), as tables: one row per kernel,
capture and quantity for the app, and the markdown summary in docs/indexing-predicted-vs-measured.md
(regenerate it with `python scripts/indexing_table.py`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from profiling.analysis.access_check import TOLERANCE_PCT, Comparison, compare_report
from profiling.nsight.load import load_report
from profiling.nsight.report import Report
from profiling.paths import BUNDLED_RESULTS_DIR

# (label, path under results/): every capture of the catalog at 1024^3 whose counters the models are checked on
CAPTURES_1024: tuple[tuple[str, str], ...] = (
    ("H100 full set", "h100-2026-11-22/ncu_why_1024_raw.csv"),
    ("H100 quick set", "h100-2026-11-22/ncu_ladder_1024_raw.csv"),
    ("H200 quick set", "h200-2026-11-22/ncu_ladder_1024_raw.csv"),
)

# The per-request and per-instruction figures of the summary, in its column order.
SUMMARY_QUANTITIES = (
    "global_ld_sectors_per_request",
    "global_st_sectors_per_request",
    "shared_ld_wavefronts_per_instruction",
    "shared_st_wavefronts_per_instruction",
)

# What is known about each place where measurement and model part (tests/test_access_analysis.py FINDINGS).
TILED_STORE_GAP = (
    "The L1 counts more shared-store wavefronts than the stores' addresses need; ncu's per-instruction source "
    "counters agree with the model exactly (1 per STS, conflict-free), and the excess equals the L1's store "
    "bank-conflict counter. It is not a rule of the addresses: the same STS addresses cost a different excess "
    "at another size (tiled-32: +0.153 per STS at 1024, +0.112 at 4096; v4: +0.12 and +0.29; v5: 0 and +0.044), "
    "so it depends on timing. At 1024 it appears only where a warp stores to shared memory the data its global "
    "loads just brought (v2, tiled-*, v3, v4) and not where loads run a tile ahead (v5, v6, v7): consistent with "
    "stores waiting on the data banks while the L1 writes other warps' global-load fills into them. Predicting "
    "it would take a timing model, so it stays a measured finding."
)
KNOWN_GAPS: dict[tuple[str, str], str] = {
    (kid, quantity): TILED_STORE_GAP
    for kid in ("tiled-8", "tiled-16", "tiled-32")
    for quantity in ("shared_st_wavefronts_per_instruction", "shared_st_conflicts_per_instruction")
}
CP_ASYNC_KERNELS = ("v8-async", "v9-regdb", "wmma-async")
NOT_COMPARED = (
    "the shared-memory writes of cp.async ({}): they are drawn by their banks only, since ncu's wavefronts for "
    "them do not follow the destination banks (profiling/analysis/access.py); these kernels are checked on their "
    "shared loads and global traffic."
).format(", ".join(CP_ASYNC_KERNELS))


def load_captures(
    captures: Iterable[tuple[str, str]] = CAPTURES_1024, root: Path = BUNDLED_RESULTS_DIR
) -> list[tuple[str, Report]]:
    """(label, report) for each of the captures that exists under `root`."""
    return [(label, load_report(root / relative)) for label, relative in captures if (root / relative).is_file()]


def capture_comparisons(
    reports: list[tuple[str, Report]] | None = None, kernels: list[str] | None = None
) -> list[tuple[str, Comparison]]:
    """(capture label, comparison) for every modelled launch of the reports (default: the bundled captures)."""
    reports = load_captures() if reports is None else reports
    return [(label, c) for label, report in reports for c in compare_report(report, kernels=kernels)]


def comparison_frame(rows: Iterable[tuple[str, Comparison]]) -> pd.DataFrame:
    """One row per comparison: capture, kernel, quantity (label), predicted, measured, difference in % and
    whether it agrees within the tolerance, with what is known of the difference where it does not."""
    records = []
    for capture, c in rows:
        diff = c.diff_pct
        records.append(
            {
                "capture": capture,
                "kernel": c.kernel,
                "quantity": c.to_dict()["label"],
                "predicted": c.predicted,
                "measured": c.measured,
                "difference %": diff,
                "agrees": c.within_tolerance,
                "counters": c.source,
                "known gap": KNOWN_GAPS.get((c.kernel, c.quantity), "") if not c.within_tolerance else "",
            }
        )
    columns = ["capture", "kernel", "quantity", "predicted", "measured", "difference %", "agrees", "counters"]
    return pd.DataFrame.from_records(records, columns=[*columns, "known gap"])


def differences(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows where prediction and measurement part by more than the tolerance."""
    return frame[~frame["agrees"]]


def _cell(c: Comparison | None, digits: int = 2) -> str:
    if c is None:
        return "-"
    diff = c.diff_pct
    mark = "" if c.within_tolerance else " **differs**"
    return f"{c.predicted:.{digits}f} / {c.measured:.{digits}f} ({diff:+.1f} %){mark}" if diff is not None else "-"


def summary_markdown(rows: list[tuple[str, Comparison]], capture: str = CAPTURES_1024[0][0]) -> str:
    """The closing-note table: per kernel, predicted / measured (difference) of the four figures at 1024, from
    `capture`; then every difference beyond the tolerance in any capture, and what is known of it."""
    by = {(c.kernel, c.quantity): c for label, c in rows if label == capture}
    kernels = list(dict.fromkeys(c.kernel for label, c in rows if label == capture))
    labels = [Comparison("", q, 0, 0, "").to_dict()["label"] for q in SUMMARY_QUANTITIES]
    lines = [
        f"Predicted / measured (difference) at 1024 x 1024 x 1024, {capture} capture; tolerance ±{TOLERANCE_PCT:g} %.",
        "",
        "| kernel | " + " | ".join(labels) + " |",
        "| --- |" + " --- |" * len(labels),
    ]
    for kid in kernels:
        lines.append(f"| {kid} | " + " | ".join(_cell(by.get((kid, q))) for q in SUMMARY_QUANTITIES) + " |")
    gaps = [(label, c) for label, c in rows if not c.within_tolerance]
    lines += ["", "Where they differ (every capture, every compared figure):", ""]
    if not gaps:
        lines.append("Nowhere: every figure agrees within the tolerance.")
    else:
        lines += [
            "| kernel | figure | capture | predicted | measured | difference |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for label, c in gaps:
            d = c.to_dict()
            lines.append(
                f"| {c.kernel} | {d['label']} | {label} | {c.predicted:.4f} | {c.measured:.4f} | {c.diff_pct:+.1f} % |"
            )
        lines.append("")
        known = dict.fromkeys(KNOWN_GAPS.get((c.kernel, c.quantity), "Not explained yet.") for _, c in gaps)
        lines += [f"- {text}" for text in known]
    lines += ["", f"Not compared: {NOT_COMPARED}"]
    return "\n".join(lines) + "\n"
