"""The Details page's Streamlit parts: its data sources (uploads, the bundled `.ncu-rep` files and ncu captures) and
its three views of launches: Details, the metric browser and the baseline comparison. The numbers come from
profiling.analysis.details, metric_browser and launch_compare."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from profiling import metric_names as MN
from profiling.analysis import details as D
from profiling.analysis import launch_compare as C
from profiling.analysis import launch_select as S
from profiling.analysis import metric_browser as B
from profiling.app import cache, precompute, state, ui
from profiling.app.bundles import Bundle
from profiling.app.table_format import arrow
from profiling.charts.details import memory_flow, peak_bars
from profiling.charts.style import si
from profiling.nsight import load as ncu_load
from profiling.nsight.model import KernelLaunch, Report

Reports = list[tuple[str, Report]]
ADDED = "details_added_metrics"
"""Session key: metric names the reader added to the comparison from the metric browser."""


@cache.resource(show_spinner="Reading the report…", max_entries=8)
def _read(path: str) -> Report:
    """A bundled report file, read once per server (read-only afterwards)."""
    return bundled_ncu_rep(path)


def bundled_ncu_rep(path: str | Path) -> Report:
    """A bundled `.ncu-rep`, parsed once and kept in the cache folder (precompute.cached_object, keyed by the file's
    bytes and the parser's code): the wheel reads it in a fresh process (a second or more), which a fresh server's
    first visit of this page otherwise waited for."""
    key = precompute.content_key([Path(path)], code=[ncu_load])
    return precompute.cached_object("ncu_rep", key, lambda: ncu_load.load_report(path))


def sources(bundle: Bundle | None) -> dict[str, Callable[[], Reports]]:
    """Data sets by name: this session's uploads, then every bundled `.ncu-rep`, then the current bundle's CSV
    captures."""
    out: dict[str, Callable[[], Reports]] = {}
    uploaded = state.uploaded_reports()
    if uploaded:
        out["uploaded reports (this session)"] = lambda: uploaded
    for b in ui.bundles():
        for rep in b.ncu_reps:
            out[f"bundled {b.device_name}: {rep.name} ({b.date})"] = lambda rep=rep: [(rep.name, _read(str(rep)))]
    if bundle is not None and bundle.ncu_groups:
        out[f"bundled {bundle.device_name}: ncu CSV captures ({bundle.date})"] = lambda: ui.bundle_reports(bundle.name)
    return out


def keep_tab_choices(labels: list[str]) -> None:
    """Keep the Metrics and Compare tabs' choices while another tab is open (call before the tabs; ui.keep_choices):
    launches no longer offered (another data set) are dropped."""
    ui.keep_choices({"metric_launches": labels, "metric_query": None, "cmp_baseline": labels, "cmp_candidate": labels})


def launch_options(reports: Reports) -> dict[str, tuple[str, KernelLaunch]]:
    """The launches to pick from, under their column titles (label and report): for a large report the longest N,
    filtered by kernel name and NVTX range (asked for when the data set has more than a few launches)."""
    count = sum(len(report.launches) for _, report in reports)
    kernel, nvtx, top = "", "", None
    if count > 8:
        left, middle, right = st.columns([2, 2, 1])
        kernel = left.text_input("Kernel name contains", key="details_kernel_filter")
        ranges = S.nvtx_ranges(reports)
        nvtx = middle.selectbox("NVTX range", ["(any)", *ranges], key="details_nvtx") if ranges else "(any)"
        top = int(right.number_input("Longest", min_value=1, value=min(50, count), step=5, key="details_top"))
        nvtx = "" if nvtx == "(any)" else nvtx
    picked = S.select_launches(reports, kernel, nvtx, top)
    if count > 8:
        st.caption(f"{len(picked):,} of {count:,} launches, the longest first.")
    return {B.launch_column(src, launch): (src, launch) for src, launch in picked}


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "n/a"
    if unit == "%":
        return f"{value:.1f} %"
    if unit == "ns":
        return f"{value / 1e3:,.2f} us"
    if unit in ("byte", "byte/second", "hz"):
        if abs(value) < 1e6:
            return f"{value:,.0f} {'B' if unit == 'byte' else unit}"
        return si(value, {"byte": "B", "byte/second": "B/s", "hz": "Hz"}[unit])
    return f"{value:,.0f}" if abs(value) >= 100 or value == int(value) else f"{value:,.3g}"


class ShownRule(NamedTuple):
    """One rule as the Details tab draws it: Markdown in which every word of the report is already escaped."""

    label_md: str
    """The expander's label: type, rule, section and estimated speedup."""
    description_md: str


@dataclass(frozen=True)
class DetailsShown:
    """One launch's Details tab as drawn (figures, and tables as Arrow), shared by every session (read-only)."""

    view: D.Details
    speed_of_light: go.Figure
    pipes: go.Figure
    memory_flow: go.Figure
    memory: Any
    occupancy_limits: Any
    launch: Any
    rules: tuple[ShownRule, ...] = ()
    """Each rule as drawn, largest estimated speedup first."""


def _rule_texts(view: D.Details) -> tuple[ShownRule, ...]:
    """The rules of a launch as the Details tab shows them: rule names and words come from the report file, so they
    are escaped here, once per launch."""
    out = []
    for rule in view.rules:
        kind = ui.safe_md(rule.speedup_type)
        speedup = f"{rule.estimated_speedup_pct:.1f} % {kind}" if rule.estimated_speedup_pct else "-"
        title = f"{ui.safe_md(rule.type or 'INF')} · {ui.safe_md(rule.rule)} ({ui.safe_md(rule.section)})"
        out.append(ShownRule(f"{title} · est. speedup {speedup}", ui.safe_md(rule.description)))
    return tuple(out)


@cache.shared_cache
def details_shown(launch: KernelLaunch) -> DetailsShown:
    """D.details(launch) and what the Details tab draws from it, built once per launch object (keyed by identity,
    cache.report_token: launches belong to reports that are read-only once parsed)."""
    view = D.details(launch)
    memory = pd.DataFrame(
        [
            {
                "level": m.level,
                "bytes": _fmt(m.bytes, "byte"),
                "throughput": _fmt(m.bytes_per_second, "byte/second"),
                "hit rate": _fmt(m.hit_rate_pct, "%") if m.hit_rate_pct is not None else "-",
                "% of peak": _fmt(m.peak_pct, "%"),
            }
            for m in view.memory
        ]
    )
    o = view.occupancy
    limits = pd.DataFrame({"resource": list(o.limits), "blocks per SM it allows": list(o.limits.values())})
    stats = pd.DataFrame({"": [f.label for f in view.launch], "value": [_fmt(f.value, f.unit) for f in view.launch]})
    return DetailsShown(
        view=view,
        speed_of_light=peak_bars(view.speed_of_light, "Speed of Light"),
        pipes=peak_bars(view.pipes, "Pipe utilisation (active)"),
        memory_flow=memory_flow(view),
        memory=arrow(memory),
        occupancy_limits=arrow(limits),
        launch=arrow(stats),
        rules=_rule_texts(view),
    )


def details_section(launch: KernelLaunch) -> None:
    """Speed of light, pipes, memory flow and table, occupancy, launch statistics and rules of one launch."""
    shown = details_shown(launch)
    view = shown.view
    left, right = st.columns(2)
    left.plotly_chart(shown.speed_of_light, key="sol")
    right.plotly_chart(shown.pipes, key="pipes")
    duration = next((f.value for f in view.speed_of_light if f.name == MN.TIME), None)
    st.caption(f"Duration {_fmt(duration, 'ns')}; bars the report lacks are marked n/a.")
    st.plotly_chart(shown.memory_flow, key="memory_flow")
    st.dataframe(shown.memory, hide_index=True, width="stretch", key="memory_table")
    st.caption("Shared bytes are the L1 data pipe's shared-memory wavefronts x 128 B (bank conflicts add wavefronts).")
    occ, launch_col = st.columns(2)
    o = view.occupancy
    occ.markdown(
        f"**Occupancy:** theoretical {_fmt(o.theoretical_pct, '%')}, achieved {_fmt(o.achieved_pct, '%')}; "
        f"limited by **{ui.safe_md(', '.join(o.limiters) or 'n/a')}**"
    )
    occ.dataframe(shown.occupancy_limits, hide_index=True, width="stretch", key="occupancy_limits")
    launch_col.markdown("**Launch statistics**")
    launch_col.dataframe(shown.launch, hide_index=True, width="stretch", key="launch_stats")
    st.subheader(f"Rules ({len(view.rules)}), largest estimated speedup first")
    if not view.rules:
        st.caption(
            "This report holds no rule results (a raw-page CSV has none: upload the .ncu-rep or its details page)."
        )
        return
    # Every rule's title in one list and every description behind one expander: an expander a rule cost a visit
    # nineteen messages on a typical launch (docs/load-test.md, round 13); the descriptions go only while it is open.
    st.markdown(rules_list_md(shown.rules))
    if (box := ui.lazy_expander("What each rule says", key="rule_descriptions")) is not None:
        box.markdown(rule_descriptions_md(shown.rules))


def rules_list_md(rules: tuple[ShownRule, ...]) -> str:
    """The rules' titles as one Markdown list, in the order given."""
    return "\n".join(f"- {rule.label_md}" for rule in rules)


def rule_descriptions_md(rules: tuple[ShownRule, ...]) -> str:
    """Every rule's title in bold and its description under it, as one Markdown text."""
    return "\n\n".join(f"**{rule.label_md}**\n\n{rule.description_md}" for rule in rules)


def browser_section(reports: Reports, columns: list[str]) -> None:
    """Search every metric of the chosen launches; a row's checkbox adds the metric to the comparison."""
    frame = _metric_frame(reports, tuple(columns))
    query = st.text_input("Search metric name or label", key="metric_query", placeholder="e.g. dram bytes, hit rate")
    left, right = st.columns(2)
    sections = left.multiselect("Section", sorted(frame["section"].unique()), key="metric_sections")
    units = right.multiselect("Unit", sorted(u for u in frame["unit"].unique() if u), key="metric_units")
    found = B.search(frame, query, sections, units)
    st.caption(f"{len(found):,} of {len(frame):,} metrics; values in base units (ns, byte, hz).")
    added = st.session_state.setdefault(ADDED, [])
    shown = B.reading_order(found.head(500)).copy()
    shown.insert(0, "compare", shown["metric"].isin(added))
    edited = st.data_editor(
        shown,
        hide_index=True,
        width="stretch",
        key="metric_table",
        disabled=[c for c in shown.columns if c != "compare"],
        column_config={"compare": st.column_config.CheckboxColumn("compare", help="add to the comparison")},
    )
    now = set(edited.loc[edited["compare"], "metric"])
    visible = set(shown["metric"])
    st.session_state[ADDED] = [m for m in added if m not in visible or m in now] + sorted(now - set(added))


@st.cache_data(show_spinner=False, max_entries=8, hash_funcs={Report: id})
def _metric_frame(reports: Reports, columns: tuple[str, ...]) -> pd.DataFrame:
    return B.metric_frame(reports, columns)


CHANGE_MARK = {"better": "🟢 better", "worse": "🔴 worse"}
"""How the comparison marks a change: green better, red worse, in the cell itself, so the table is plain values
(a pandas Styler is rendered by Streamlit cell by cell on every visit)."""


@cache.shared_cache
def compare_table(baseline: KernelLaunch, candidate: KernelLaunch, added: tuple[str, ...]) -> Any:
    """C.compare of two launches and the added metrics as the Compare tab draws it (as Arrow), built once per pair of
    launch objects and added metrics (launches are keyed by identity, cache.report_token)."""
    rows = C.compare(baseline, candidate, list(added))
    frame = pd.DataFrame(
        {
            "metric": [r.label for r in rows],
            "change": [CHANGE_MARK.get(r.change, r.change) for r in rows],
            "Δ %": ["-" if r.delta_pct is None else f"{r.delta_pct:+.1f} %" for r in rows],
            "baseline": [_fmt(r.baseline, r.unit) for r in rows],
            "candidate": [_fmt(r.candidate, r.unit) for r in rows],
            "Δ": [_fmt(r.delta, r.unit) if r.delta is not None else "-" for r in rows],
            "section": [r.section for r in rows],
        }
    )
    return arrow(frame)


def compare_section(options: dict[str, tuple[str, KernelLaunch]], baseline: str, candidate: str) -> None:
    """Every Details figure, and the metrics added from the browser, of two launches with Δ and Δ %."""
    added = tuple(st.session_state.get(ADDED, []))
    table = compare_table(options[baseline][1], options[candidate][1], added)
    st.caption(
        "Green: better by the metric's direction (time, bytes: lower; issue slots, hit rate, occupancy: "
        f"higher); red: worse; 'changed': a unit's share of peak, neither; 'same': under {C.SAME_PCT:g} %."
    )
    st.dataframe(table, hide_index=True, width="stretch", key="compare_table")
