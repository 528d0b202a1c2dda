"""Every metric of one or more reports side by side, searchable by name or label and filtered by section and unit.

A `--set full` launch holds about 2,250 metrics; the frame holds one row per metric name and one value column per
launch, with a lower-case search key built once, so a search is a few vectorised substring tests (measured in
tests/test_launch_details.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from profiling.nsight.model import KernelLaunch, Report

if TYPE_CHECKING:
    import pandas as pd

INFO_COLUMNS = ["metric", "label", "section", "unit"]
"""The columns before the launches' values: ncu's name, its display label, its section, its base unit."""
_KEY = "_key"


def launch_column(source: str, launch: KernelLaunch) -> str:
    """The column title of one launch: its label and report ('v4 1024x1024x1024 · v4.ncu-rep')."""
    return f"{launch.label} · {source}"


def _section(report: Report, name: str) -> str:
    """The ncu section a metric belongs to, else its hardware unit ("other: sm" for sm__...)."""
    found = report.metric_sections.get(name)
    if found:
        return found
    unit = name.split("__", 1)[0] if "__" in name else "derived"
    return f"other: {unit.rsplit('.', 1)[-1]}"


def metric_frame(reports: Sequence[tuple[str, Report]], launches: Iterable[str] | None = None) -> pd.DataFrame:
    """One row per metric any launch holds (first-seen order): INFO_COLUMNS, then one float column per launch
    (base units, NaN where that launch lacks the metric). `launches`: only these launch columns (launch_column
    titles), else all."""
    import pandas as pd

    wanted = set(launches) if launches is not None else None
    names: dict[str, None] = {}
    columns: dict[str, dict[str, float]] = {}
    info: dict[str, tuple[str, str, str]] = {}
    for source, report in reports:
        for launch in report.launches:
            title = launch_column(source, launch)
            if wanted is not None and title not in wanted:
                continue
            values: dict[str, float] = {}
            for name, metric in launch.metrics.items():
                names.setdefault(name, None)
                values[name] = metric.value
                if name not in info:
                    info[name] = (report.metric_labels.get(name, ""), _section(report, name), metric.unit)
            columns[title] = values
    order = list(names)
    frame = pd.DataFrame(
        {
            "metric": order,
            "label": [info[n][0] for n in order],
            "section": [info[n][1] for n in order],
            "unit": [info[n][2] for n in order],
        }
    )
    for title, values in columns.items():
        frame[title] = pd.array([values.get(n) for n in order], dtype="Float64").astype("float64")
    frame[_KEY] = (frame["metric"] + " " + frame["label"]).str.lower()
    return frame


def search(
    frame: pd.DataFrame, query: str = "", sections: Sequence[str] = (), units: Sequence[str] = ()
) -> pd.DataFrame:
    """The rows whose name or label holds every word of `query` (any case), in `sections` and `units` when given;
    the search key column is left out."""
    mask = None
    for word in query.lower().split():
        hit = frame[_KEY].str.contains(word, regex=False)
        mask = hit if mask is None else mask & hit
    if sections:
        hit = frame["section"].isin(list(sections))
        mask = hit if mask is None else mask & hit
    if units:
        hit = frame["unit"].isin(list(units))
        mask = hit if mask is None else mask & hit
    shown = frame if mask is None else frame[mask]
    return shown.drop(columns=[_KEY])


def reading_order(frame: pd.DataFrame) -> pd.DataFrame:
    """The columns as the browser shows them: name and label, the launches' values, then unit and section."""
    values = [c for c in frame.columns if c not in INFO_COLUMNS and c != _KEY]
    return frame[["metric", "label", *values, "unit", "section"]]
