"""The Benchmark page's shape-sweep section: heatmaps of one kernel over M x N with the whole-wave lines, and the
map of which catalog kernel wins each shape; a bundled device sweep without a GPU, this session's grid run with one.
Figures are cached per server (st.cache_resource), keyed by the file or document and the inputs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from profiling.analysis.sweep import bundled_sweeps, is_grid, sweep_frame
from profiling.app import cache, ui
from profiling.app.cache import FIGURE_ENTRIES, HASH_FUNCS, TTL_S, share_figures
from profiling.charts.sweep import VALUE_TITLES, sweep_heatmap, winner_map
from profiling.paths import BUNDLED_RESULTS_DIR
from profiling.runs.results import ResultsDocument, load_document


@dataclass(frozen=True)
class Sweep:
    """One sweep's frame and what its pickers offer, shared read-only (a visit neither copies the frame out of a
    cache nor walks its columns again)."""

    key: str
    frame: pd.DataFrame
    ks: tuple[int, ...]
    """The sweep's K values, ascending."""
    kernels: tuple[str, ...]
    """Its kernels in the frame's order (cuBLAS's too)."""
    failed: int
    """Results that did not verify or were refused."""


def _sweep(key: str, frame: pd.DataFrame) -> Sweep:
    return Sweep(
        key,
        frame,
        tuple(sorted(frame["k"].unique())),
        tuple(dict.fromkeys(frame["kernel"])),
        int((frame["status"] != "ok").sum()),
    )


@cache.resource(ttl=TTL_S, max_entries=16, show_spinner=False)
def _bundled_sweep(path: str) -> Sweep:
    return _sweep(path, sweep_frame(load_document(path)))


@cache.resource(show_spinner=False)
def _bundled_paths() -> tuple[Path, ...]:
    """The committed grid sweeps (bundled_sweeps), found once per process like the bundles."""
    return tuple(bundled_sweeps(BUNDLED_RESULTS_DIR))


@st.cache_data(ttl=TTL_S, max_entries=16, show_spinner=False, hash_funcs=HASH_FUNCS)
def _document_frame(document: ResultsDocument) -> pd.DataFrame:
    return sweep_frame(document)


@cache.resource(ttl=TTL_S, max_entries=FIGURE_ENTRIES, show_spinner=False)
def _heatmap(key: str, _frame: pd.DataFrame, kernel: str, k: int, value: str) -> go.Figure:
    return share_figures(sweep_heatmap(_frame, kernel, k, value))


@cache.resource(ttl=TTL_S, max_entries=FIGURE_ENTRIES, show_spinner=False)
def _winners(key: str, _frame: pd.DataFrame, k: int, kernels: tuple[str, ...]) -> go.Figure:
    return share_figures(winner_map(_frame, k, list(kernels)))


def _label(path: Path) -> str:
    return f"bundled: {path.parent.parent.name} / {path.name}"


SWEEP_LABEL = "Shape sweep: where each kernel wins or loses across shapes"
"""The sweep's expander, closed by default: its pickers and two heatmaps were 14 of Benchmark's 51 messages a visit
(docs/load-test.md, round 13)."""


def sweep_section(live: ResultsDocument | None) -> None:
    """Shape sweep, drawn only while its expander is open: choose the data (this session's grid run, or a bundled
    one), a K, a kernel and the value; the choices are kept while it is closed."""
    sources: dict[str, Sweep] = {}
    if live is not None:
        frame = _document_frame(live)
        if is_grid(frame):
            sources["this session's grid run"] = _sweep(f"live:{live.created_utc}", frame)
    for path in _bundled_paths():
        sources[_label(path)] = _bundled_sweep(str(path))
    chosen = sources.get(st.session_state.get("sweep_source", ""))
    ui.keep_choices(
        {
            "sweep_source": list(sources),
            "sweep_k": chosen.ks if chosen else [],
            "sweep_kernel": chosen.kernels if chosen else [],
            "sweep_value": list(VALUE_TITLES),
            "sweep_with_cublas": None,
        }
    )
    if (box := ui.lazy_expander(SWEEP_LABEL, key="sweep_open")) is not None:
        with box:
            _sweep_body(sources)


def _sweep_body(sources: dict[str, Sweep]) -> None:
    """The sweep's caption, pickers, heatmap and winner map (or why there are none)."""
    if not sources:
        st.info("No grid sweep yet: run `python -m profiling bench --grid M=...,N=...,K=...` on a GPU.")
        return
    st.caption(
        "Where each kernel wins or loses across shapes (small-M, LLM-decode-like rows at the bottom; large-K at the "
        "larger K). "
        "Black lines: the launch needs one more whole wave there (blocks pass a multiple of SMs x blocks per SM), "
        "where wave quantisation costs speed. Run your own with `bench --grid M=..,N=..,K=..`."
    )
    c1, c2, c3, c4 = st.columns([3, 1, 2, 2])
    name = c1.selectbox("Sweep", list(sources), key="sweep_source")
    sweep = sources[name]
    key, frame, ks = sweep.key, sweep.frame, sweep.ks
    k = c2.selectbox("K", ks, index=len(ks) - 1, key="sweep_k")
    catalog = [kid for kid in sweep.kernels if not kid.startswith("cublas")]
    if not catalog:
        st.info("This sweep holds only the cuBLAS reference.")
        return
    kernel = c3.selectbox("Kernel", catalog, index=len(catalog) - 1, key="sweep_kernel")
    value = c4.radio("Colour", list(VALUE_TITLES), format_func=VALUE_TITLES.get, key="sweep_value")
    st.plotly_chart(_heatmap(key, frame, kernel, int(k), value), key="sweep_heatmap")
    with_cublas = st.checkbox("Include cuBLAS in the winner map", value=False, key="sweep_with_cublas")
    kernels = tuple(kid for kid in sweep.kernels if with_cublas or not kid.startswith("cublas"))
    st.plotly_chart(_winners(key, frame, int(k), kernels), key="sweep_winners")
    if sweep.failed:
        st.caption(f"{sweep.failed:d} result(s) did not verify or were refused; their cells are empty.")
