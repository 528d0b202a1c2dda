"""The Benchmark page's parts: the job its form asks for (a list, a sweep, a grid or an A/B of sizes), the results
shown (the A/B table, the results table and charts, launches by the kernel before them for a timing in rounds, the
shape grid), and saving a run to the store."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from profiling import abtest
from profiling.analysis.rounds import times_by_predecessor
from profiling.analysis.shape_grid import is_grid_run
from profiling.app import auth, cache, shape_grid, table_format, tables, ui
from profiling.app.bundles import Bundle
from profiling.cluster import app as cluster_app
from profiling.errors import GemmLensError
from profiling.gpu.jobs import BenchSettings, parse_grid, parse_sizes, sweep_sizes
from profiling.runs.convert import bench_run
from profiling.runs.results import ResultsDocument, compiler_notes
from profiling.shape import Shape


def requested_sizes(mode: str, sizes_text: str = "", grid_text: str = "", start: int = 0, stop: int = 0) -> list[Shape]:
    """The shapes the form asks for: a grid of M, N and K lists, a doubling sweep from `start` to `stop`, or a
    comma list of square sizes (list and A/B); InvalidInput says what is wrong with the text."""
    if mode == "grid":
        return parse_grid(grid_text)
    if mode == "sweep":
        return sweep_sizes(start, stop)
    return parse_sizes(sizes_text)


def bench_job(
    mode: str,
    kernels: list[str],
    sizes: list[Shape],
    repeats: int,
    pair: tuple[str, str] = ("", ""),
    rest_s: float = 0.0,
) -> tuple[str, Callable[[Any], Any]]:
    """(label, job) for the GPU queue: an interleaved A/B of `pair` (each pair after `rest_s` seconds of rest), else
    the kernels against cuBLAS (on the configured cluster when there is one). Checked before it is queued: a bad
    kernel, an empty choice or a rest past the time limit raises."""
    settings = BenchSettings(repeats=repeats, rest_s=rest_s if mode == "A/B" else 0.0)
    if mode == "A/B":
        kernel_a, kernel_b = abtest.parse_pair(",".join(pair))
        return f"A/B {kernel_a} vs {kernel_b} x {len(sizes)} size(s)", abtest.ab_job(
            kernel_a, kernel_b, sizes, settings
        )
    if not kernels:
        raise GemmLensError("choose at least one kernel")
    job = cluster_app.benchmark_job(kernels, sizes, settings)
    return f"benchmark {len(kernels)} kernel(s) x {len(sizes)} size(s)", job


def results_section(document: ResultsDocument, source: str, bundle: Bundle | None) -> bool:
    """Where the results come from, the A/B table of an A/B run, the results table and charts, and the shape grid;
    False when the document has no results (an info box says so)."""
    if source.startswith("bundled"):
        ui.bundled_caption(bundle)
    else:
        name = document.device.name or "the GPU"
        st.caption(f"Measured now on {ui.safe_md(name)} at {ui.safe_md(document.created_utc)}")
    if cache.shared(tables.bench_frame, document).empty:
        st.info("No results yet.")
        return False
    if document.ab:
        pair = document.ab
        st.subheader(f"A/B: {pair['b']} against {pair['a']}, interleaved")
        st.caption(
            "B/A: the median of per-pair time ratios, with its 95 % paired bootstrap interval (below 1: B faster)."
            + ui.safe_md(abtest.rest_note(document))
        )
        st.dataframe(table_format.display(cache.ab_table(document)), hide_index=True, width="stretch")
    st.subheader("Results")
    view = cache.bench_view(document)
    st.dataframe(view.table, hide_index=True, width="stretch")
    for note, ran in compiler_notes(document).items():
        listed = "\n".join(f"- {ui.safe_md(line)}" for line in ran)
        st.warning(f"The tuning record's choices below were {ui.safe_md(note)}.\n\n{listed}")
    predecessor_section(document)
    if cache.shared(is_grid_run, document):
        st.caption(
            "Every shape here is one of the grid's: the heatmap below draws each kernel against cuBLAS by shape."
        )
    else:
        st.caption(
            "Colour = kernel family (blue: SGEMM ladder, orange: beyond it, purple: tensor core, green: tile-width "
            "study), darker = later step; dashed line or hatched bar = the cuBLAS reference of that panel."
        )
        st.plotly_chart(view.tflops, key="tflops")
        st.plotly_chart(view.pct_cublas, key="pct_cublas")
    shape_grid.shape_grid_section(document, f"{source}:{document.created_utc}")
    return True


# The columns in the order shown, the configuration last: at 1024 px the page's main column fits about five.
PREDECESSOR_LABELS = {
    "shape": "shape",
    "kernel": "kernel",
    "after": "run just before",
    "same_code": "same code",
    "launches": "launches",
    "median_us": "median (us)",
    "config": "configuration",
}


def predecessor_section(document: ResultsDocument) -> None:
    """For results timed in rounds (bench or tune --interleaved): each kernel's launches split by the kernel run just
    before them (profiling.analysis.rounds), folded away and built only while open."""
    table = cache.shared(times_by_predecessor, document)
    if table.empty:
        return
    box = ui.lazy_expander("Launches by the kernel run just before them (timed in rounds)", key="predecessors_open")
    if box is None:
        return
    with box:
        st.caption(
            "Each launch came after an L2 flush, but the SMs still hold what the kernel before left, such as its "
            "instructions. A kernel slower after other code than after its own (same code: true) pays for that on "
            "every cold start, which a benchmark of one kernel launched again and again never shows."
        )
        shown = table.assign(median_us=(table["median_ms"] * 1000).round(1)).drop(columns="median_ms")
        shown = shown[list(PREDECESSOR_LABELS)].rename(columns=PREDECESSOR_LABELS)
        st.dataframe(shown, hide_index=True, width="stretch")


def save_section(document: ResultsDocument) -> None:
    """A form that saves the document to the store as a run, labelled with its GPU and date by default."""
    with st.expander("Save this run to the store (Review page)"), st.form("save_bench"):
        label = st.text_input("Label", f"{document.device.name or 'run'} {document.created_utc[:10]}")
        notes = st.text_area("Notes", "")
        if st.form_submit_button("Save run"):
            with ui.user_errors():
                run = bench_run(document, label=label, notes=notes)
                run_id = ui.run_store().save_run(run, actor=auth.current_identity())
                st.success(f"Saved as run #{run_id}.")
