"""Picking launches out of large reports: the longest N, filtered by kernel name and NVTX range."""

from __future__ import annotations

from collections.abc import Sequence

from profiling.identity import nvtx_label
from profiling.nsight import metrics as M
from profiling.nsight.model import KernelLaunch, Report

Reports = Sequence[tuple[str, Report]]


def nvtx_ranges(reports: Reports) -> list[str]:
    """The NVTX ranges (nvtx_label) the launches ran in, in first-seen order."""
    found = dict.fromkeys(nvtx_label(launch.nvtx) for _, report in reports for launch in report.launches)
    return [name for name in found if name]


def select_launches(
    reports: Reports, kernel: str = "", nvtx: str = "", top: int | None = None
) -> list[tuple[str, KernelLaunch]]:
    """Launches whose kernel name or label holds `kernel` (any case) and whose NVTX range is `nvtx` (or lies inside
    it), the longest first (gpu__time_duration; launches without one last, in report order); at most `top`."""
    wanted = kernel.strip().lower()
    picked = []
    for source, report in reports:
        for launch in report.launches:
            if wanted and wanted not in launch.name.lower() and wanted not in launch.label.lower():
                continue
            label = nvtx_label(launch.nvtx)
            if nvtx and label != nvtx and not label.startswith(f"{nvtx} / "):
                continue
            picked.append((source, launch))
    picked.sort(key=lambda item: -(item[1].value(M.TIME) or -1.0))
    return picked[:top] if top is not None else picked
