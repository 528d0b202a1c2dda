"""The Reports page's parts: reading the uploaded files, the key-metrics table and its four tabs (roofline,
findings, occupancy, launches side by side), and saving the uploads as runs."""

from __future__ import annotations

import hashlib
from typing import Any

import pandas as pd
import streamlit as st

from profiling import charts, usecases
from profiling.analysis.ceilings import ceilings_for
from profiling.app import auth, cache, permalink, state, table_format, tables, ui
from profiling.errors import GemmLensError, error_line
from profiling.nsight import report as ncu_report
from profiling.runs.convert import report_run

Reports = list[tuple[str, ncu_report.Report]]


def sync_uploads(files: list[Any]) -> list[tuple[str, str]]:
    """Parse newly uploaded files into the shared cache (by name and content hash: the same file uploaded in several
    sessions is parsed once) and note their keys in state.uploads(); drop removed ones. Returns (file name, one-line
    error) for files that could not be read, and for those past the session's total
    (usecases.MAX_SESSION_UPLOAD_BYTES, counted in upload order), which are not read at all."""
    parsed, failed, shared = state.uploads(), state.upload_errors(), cache.shared_uploads()
    keep, errors, total = set(), [], 0
    for f in files or []:
        content = f.getvalue()
        total += len(content)
        if total > usecases.MAX_SESSION_UPLOAD_BYTES:
            limit = usecases.MAX_SESSION_UPLOAD_BYTES / 1e6
            errors.append(
                (
                    f.name,
                    f"{f.name} was not read: the uploads of this session would pass {limit:.3g} MB in all; "
                    "remove some files first",
                )
            )
            continue
        key = cache.upload_key(f.name, content)
        keep.add(key)
        if key not in failed and shared.get(key) is None:
            try:
                with st.spinner(f"Reading {f.name} ({len(content) / 1e6:.1f} MB)…"):
                    cache.parse_upload(key, f.name, content)
                parsed[key] = f.name
            except GemmLensError as exc:  # its message names the file
                failed[key] = error_line(exc)
            except Exception as exc:  # noqa: BLE001 - any unreadable upload is a one-line error, never a crash
                failed[key] = f"{f.name} could not be read: {error_line(exc)}"
        elif key not in failed:
            parsed[key] = f.name
        if key in failed:
            errors.append((f.name, failed[key]))
    for key in [k for k in parsed if k not in keep]:
        del parsed[key]
    for key in [k for k in failed if k not in keep]:
        del failed[key]
    return errors


def compare_key(launches: list[str]) -> str:
    """The widget key of the launch choice, one per list of launches shown: after an upload the choice starts again
    from the first two launches instead of keeping the bundled ones, which the new list no longer has."""
    return "cmp-" + hashlib.sha1("\n".join(launches).encode()).hexdigest()[:12]


def key_metrics_section(reports: Reports) -> pd.DataFrame:
    """The key-metrics table of every launch, each column's meaning as its help; returns the table (shared,
    read-only)."""
    table = cache.figure(tables.key_metrics_table, reports)
    st.subheader("Key metrics")
    st.dataframe(
        cache.shown_table(tables.key_metrics_table, reports),
        hide_index=True,
        width="stretch",
        column_config={title: st.column_config.Column(help=text) for title, text in tables.KEY_TABLE_HELP.items()},
    )
    return table


def roofline_tab(reports: Reports) -> None:
    if cache.figure(charts.report_roofline_points, reports).empty:
        st.info(
            "These reports lack FLOP counts or bytes per level, so there is no roofline (profile with --set quick or full)."
        )
        return
    with ui.user_errors():
        ceilings = ceilings_for(None, reports[0][1])
        st.caption(
            "One point per launch and memory level (marker shape); colour = kernel family. Ceilings "
            "from the report's own clocks (ncu report) where it has them."
        )
        roofline = cache.report_roofline_view(reports, ceilings, "ncu report").figure
        st.plotly_chart(roofline, key="report_roofline")


def findings_tab(reports: Reports) -> None:
    findings = cache.shown_table(tables.findings_table, reports)
    if not len(findings):
        st.caption(
            "No rule findings: ncu writes them on the details page. Export it from the report with "
            "`ncu --import REPORT.ncu-rep --csv --page details > details.csv` and upload that file too."
        )
    else:
        st.dataframe(findings, hide_index=True, width="stretch")


def occupancy_tab(reports: Reports) -> None:
    st.dataframe(cache.shown_table(tables.occupancy_table, reports), hide_index=True, width="stretch")


@cache.shared_cache
def compared(reports: Reports, chosen: tuple[str, ...]) -> Any:
    """The chosen launches of the reports' key-metrics table side by side as drawn (compare_display, then Arrow),
    once per reports and choice, shared read-only: the comparison was most of a Reports visit's server time."""
    table = cache.figure(tables.key_metrics_table, reports)
    return table_format.arrow(table_format.compare_display(tables.compare_launches(table, list(chosen))))


def compare_tab(table: pd.DataFrame, reports: Reports) -> None:
    """Launches chosen from the key-metrics table (of `reports`), side by side (the first two by default)."""
    launches = list(table["launch"])
    key = compare_key(launches)
    permalink.bind("launches", key, launches, multi=True)
    chosen = st.multiselect("Launches to compare", launches, default=launches[: min(2, len(launches))], key=key)
    if chosen:
        st.dataframe(compared(reports, tuple(chosen)), width="stretch")


def save_section(uploaded: Reports) -> None:
    """Save each uploaded report to the store as a run of its own (the Review page)."""
    with st.expander("Save the uploaded reports to the store (Review page)"):
        if st.button("Save as runs"):
            with ui.user_errors():
                who = auth.current_identity()
                store = ui.run_store()
                ids = [store.save_run(report_run(rep, label=name, kind="upload"), actor=who) for name, rep in uploaded]
                st.success(f"Saved as run(s) {', '.join(f'#{i}' for i in ids)}.")
