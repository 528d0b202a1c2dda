"""The Profile page's choice of what to show: this session's profile or one bundled capture, and the kernels and
size its form starts from."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import streamlit as st

from profiling.app import state, ui
from profiling.app.bundles import Bundle
from profiling.nsight import report as ncu_report

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
    st.selectbox("Capture", names, key=CAPTURE_KEY, help="One ncu capture at a time: each was profiled at one size, "
                 "in one ncu process.")  # fmt: skip


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
