"""The Profile page's parts: the choice of what to show (this session's profile or one bundled capture) and the
kernels and size its form starts from, the capture's tables and downloads, and a compute-sanitizer outcome."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path

import pandas as pd
import streamlit as st

from profiling.app import cache, state, table_format, tables, ui
from profiling.app.bundles import Bundle
from profiling.nsight import report as ncu_report
from profiling.nsight.sanitizer import SanitizerResult
from profiling.runs.export import to_csv

CAPTURE_KEY = "prof_capture"


def shown_capture(bundle: Bundle | None) -> tuple[list[tuple[str, ncu_report.Report]], list[Path]]:
    """(reports, their files) of what the page shows: this session's profile, else the bundle's capture chosen in the
    page's Capture box (its first until one is chosen; the box is drawn later, with capture_picker)."""
    live = state.live_profile()
    if live is not None:
        return [(live.report_path.name, live.report)], [live.report_path]
    captures = {group[0].name: group for group in bundle.ncu_groups} if bundle is not None else {}
    if not captures:
        return [], []
    chosen = st.session_state.get(CAPTURE_KEY)
    shown = chosen if chosen in captures else next(iter(captures))
    return [r for r in ui.bundle_reports(bundle.name) if r[0] == shown], list(captures[shown])


def capture_picker(bundle: Bundle) -> None:
    """The Capture box: one bundled ncu capture at a time."""
    names = [group[0].name for group in bundle.ncu_groups]
    st.selectbox(
        "Capture",
        names,
        key=CAPTURE_KEY,
        help="One ncu capture at a time: each was profiled at one size, in one ncu process.",
    )


def capture_kernels(
    reports: Sequence[tuple[str, ncu_report.Report]], kernel_ids: Sequence[str]
) -> tuple[list[str], str | None]:
    """The catalog kernels (of `kernel_ids`, in that order) that the reports' launches ran, and the size they ran at
    when all share one ("4096x4096x4096"): what the Profile form offers to profile again by default."""
    found: set[str] = set()
    sizes: set[str] = set()
    for _, report in reports:
        for launch in report.launches:
            ident = launch.identity
            if ident.kernel_id is not None:
                found.add(ident.kernel_id)
                if ident.shape is not None:  # the worker's NVTX range
                    sizes.add(ident.shape.label)
    return [k for k in kernel_ids if k in found], (sizes.pop() if len(sizes) == 1 else None)


def capture_section(reports: Sequence[tuple[str, ncu_report.Report]]) -> pd.DataFrame:
    """The capture's key metrics, its operations of several launches and ncu's findings; returns the key metrics."""
    table = cache.table(tables.key_metrics_table, reports)
    st.subheader("Key metrics")
    st.dataframe(table_format.display(table), hide_index=True, width="stretch")
    operations = cache.operations_table(reports)
    if not operations.empty:
        st.subheader("Operations of several launches")
        st.caption(
            "Launches inside one NVTX range of the worker (e.g. cuBLAS split-K plus its reduction): the operation's "
            "time is their sum, as events around the call measure it; each part beneath with its share."
        )
        st.dataframe(table_format.display(operations), hide_index=True, width="stretch")
    st.subheader("ncu findings")
    findings = cache.table(tables.findings_table, reports)
    if findings.empty:
        st.caption(
            "No rule findings in this capture (ncu puts them on the details page: "
            "`ncu --import R --csv --page details`)."
        )
    else:
        st.dataframe(table_format.display(findings), hide_index=True, width="stretch")
    return table


def downloads_section(table: pd.DataFrame, files: Sequence[Path], others: Sequence[Path]) -> None:
    """Download buttons: the key metrics as CSV, the shown capture's files, then the bundle's other captures."""
    st.caption("Download the key metrics above, or this capture's own files:")
    downloads = st.columns(1 + len(files))
    downloads[0].download_button("Key metrics (CSV)", partial(to_csv, table), "key_metrics.csv", "text/csv")
    for column, path in zip(downloads[1:], files, strict=True):
        if path.is_file():
            column.download_button(path.name, path.read_bytes, path.name, "application/octet-stream")
    others = [p for p in others if p.is_file()]
    if others:
        st.caption("Another capture in this bundle, not the one shown above (open it in the Nsight Compute GUI):")
        for path in others:
            st.download_button(
                path.name, path.read_bytes, path.name, "application/octet-stream", key=f"rep-{path.name}"
            )


def sanitizer_outcome(result: SanitizerResult) -> None:
    """A compute-sanitizer run: clean or how many errors, then up to 50 findings with their first details."""
    (st.success if result.clean else st.error)(
        f"{result.tool}: {result.errors or 0} error(s); {ui.safe_md(result.summary)}"
    )
    for finding in result.findings[:50]:
        st.text(f"[{finding.severity}] {finding.message}\n  " + "\n  ".join(finding.details[:8]))
