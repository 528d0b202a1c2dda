"""The Why page's Streamlit parts: cached loading of its data sources and the three sections (stall breakdown,
source and SASS, explain a step), one shown at a time. The numbers and tables come from profiling.app.why."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from kernels.catalog import CATALOG
from kernels.registry import get_kernel
from profiling.analysis import sass as A
from profiling.analysis import stalls as ST
from profiling.app import cache, permalink, state, ui, why
from profiling.app.bundles import Bundle
from profiling.app.cache import FIGURE_ENTRIES, TTL_S, report_token, share_figures
from profiling.app.table_format import arrow, compare_display, table_height
from profiling.charts.stalls import stall_figure
from profiling.errors import GemmLensError
from profiling.nsight import source as S
from profiling.nsight.metric_registry import WAVEFRONTS_PER_INSTRUCTION_LABEL, WAVEFRONTS_PER_INSTRUCTION_MEANING
from profiling.paths import BUNDLED_RESULTS_DIR, tool_path

Loader = Callable[[], why.WhyData]

COLUMNS = {
    "% samples": st.column_config.ProgressColumn(
        "% samples", format="%.1f%%", min_value=0, max_value=100, help="share of the kernel's warp-stall samples"
    ),
    "samples": st.column_config.NumberColumn("samples", format="localized", help="warp-stall samples (ncu)"),
    "instructions executed": st.column_config.NumberColumn("instructions executed", format="localized"),
    WAVEFRONTS_PER_INSTRUCTION_LABEL: st.column_config.TextColumn(
        WAVEFRONTS_PER_INSTRUCTION_LABEL,
        help=f"the line's worst shared-memory instruction: {WAVEFRONTS_PER_INSTRUCTION_MEANING}; – where the line has "
        "no shared access",
    ),
    "excess shared wavefronts": st.column_config.NumberColumn("excess shared wavefronts", format="localized"),
    "excess global sectors": st.column_config.NumberColumn("excess global sectors", format="localized"),
    "source": st.column_config.TextColumn("source", width="large"),
    "sass": st.column_config.TextColumn("sass", width="large"),
}


COMPACT = {**COLUMNS, "source": st.column_config.TextColumn("source", width="medium")}

SECTIONS = ("Warp-stall breakdown", "Source and SASS hot spots", "Explain a step")
"""The page's sections, one drawn at a time (a tab each); the first is the default."""

SECTION_KEY = "why_tab"


@cache.resource(show_spinner="Reading the capture…")
def _capture(name: str, raw: str, cuda_sass: str | None, sass: str | None) -> why.WhyData:
    """A bundled capture, parsed once per server (read-only afterwards)."""
    return why.load_capture(name, Path(raw), Path(cuda_sass) if cuda_sass else None, Path(sass) if sass else None)


@cache.resource(show_spinner="Compiling and disassembling…")
def _static(kernel_id: str) -> A.StaticSass | str:
    try:
        return A.static_sass(get_kernel(kernel_id))
    except GemmLensError as exc:
        return str(exc)


_BY_DATA = {why.WhyData: report_token, S.KernelSource: report_token}
"""Captures and their sections are read-only once parsed and shared by every session: keyed by identity."""


@cache.resource(ttl=TTL_S, max_entries=FIGURE_ENTRIES, show_spinner=False, hash_funcs=_BY_DATA)
def _step(data: why.WhyData, base: str, cand: str) -> why.StepView:
    """why.explain_step, once per capture and pair of launches (every session reads the same view)."""
    return why.explain_step(data, base, cand)


@cache.resource(ttl=TTL_S, max_entries=FIGURE_ENTRIES, show_spinner=False, hash_funcs=_BY_DATA)
def _step_tables(data: why.WhyData, base: str, cand: str) -> tuple[Any, Any, Any, Any]:
    """(what moved, ranked, without its interpretation column; the tensor-core table, None when empty; the hottest
    lines before and after, each None without a source page) of one step, as Arrow, once per capture and pair of
    launches: a visit only serialises them."""
    view = _step(data, base, cand)
    tensor = why.tensor_table(view.explanation)
    before, after = (None if table is None else arrow(table) for table in (view.hot_before, view.hot_after))
    return arrow(view.ranked.drop(columns="interpretation")), None if tensor.empty else arrow(tensor), before, after


@dataclass(frozen=True)
class SourceTables:
    """A source-page section's tables, once per section object (read-only: the page only draws them). Each drawn
    table is also kept as Arrow (table_format.arrow): Streamlit converted every line and every SASS instruction
    (thousands of rows) from pandas on each visit."""

    hot: Any
    """The 10 hottest lines, as Arrow."""
    lines: pd.DataFrame | None
    """Every line, or None without line information."""
    lines_shown: Any
    hottest: int | None
    """The hottest line (None without line information)."""
    sass: pd.DataFrame
    """Every SASS instruction."""
    sass_shown: Any


@cache.resource(ttl=TTL_S, max_entries=FIGURE_ENTRIES, show_spinner=False, hash_funcs=_BY_DATA)
def _source_tables(kernel: S.KernelSource) -> SourceTables:
    lines = why.line_table(kernel) if kernel.lines else None
    hottest = int(why.hot_lines_table(kernel, 1).iloc[0]["line"]) if kernel.lines else None
    sass = why.sass_table(kernel)
    return SourceTables(
        hot=arrow(why.hot_lines_table(kernel, 10)),
        lines=lines,
        lines_shown=None if lines is None else arrow(lines),
        hottest=hottest,
        sass=sass,
        sass_shown=arrow(sass),
    )


@cache.resource(ttl=TTL_S, max_entries=FIGURE_ENTRIES, show_spinner=False, hash_funcs=_BY_DATA)
def _stall_view(data: why.WhyData, chosen: tuple[str, ...], scale: str) -> tuple[go.Figure, Any]:
    """(the stall figure, the meaning of each reason it shows, as Arrow) of the chosen launches, once per capture,
    launches and scale: a visit neither rebuilds the stall frame nor hashes it to find the figure."""
    frame = why.stall_frame(data, list(chosen))
    figure = stall_figure(frame, scale, "Warp stalls per launch", why.kernel_ids(data, chosen))
    shown = [r for r in ST.REASONS if r in set(frame["reason"])]
    return share_figures(figure), arrow(pd.DataFrame({"reason": shown, "meaning": [ST.meaning(r) for r in shown]}))


@cache.resource(ttl=TTL_S, max_entries=FIGURE_ENTRIES, show_spinner=False, hash_funcs=_BY_DATA)
def _step_stalls(data: why.WhyData, base: str, cand: str) -> go.Figure:
    """The stall figure of one step (`_step`'s stalls), once per capture and pair of launches."""
    view = _step(data, base, cand)
    figure = stall_figure(view.stalls, "cycles", f"Warp stalls: {base} → {cand}", why.kernel_ids(data, [base, cand]))
    return share_figures(figure)


@cache.resource(ttl=TTL_S, max_entries=FIGURE_ENTRIES, show_spinner=False, hash_funcs=_BY_DATA)
def _line_sass(kernel: S.KernelSource, line: int) -> Any:
    """why.line_sass_table as Arrow, once per section object and line."""
    return arrow(why.line_sass_table(kernel, line))


T = TypeVar("T")


def context_order(captures: list[tuple[str, str, str, T]], bundle: str | None, device: str | None) -> list:
    """Captures (label, GPU name, bundle or folder name, anything) in the order the reader's context asks: those of
    the sidebar's bundle first, then those of its GPU, then the rest, each group in the order given."""

    def rank(capture: tuple[str, str, str, T]) -> tuple[bool, bool]:
        _, gpu, where, _ = capture
        return where != bundle, gpu != device

    return sorted(captures, key=rank)


@cache.resource(show_spinner=False)
def _committed_captures() -> tuple[tuple[str, str, str, tuple[str, str | None, str | None]], ...]:
    """(label, GPU name, bundle or folder name, capture paths) of every committed full-set capture: the bundles'
    (ui.bundles, read once per process) and results/<gpu>-<date>/why*/'s. Found once per process like the bundles,
    instead of globbing the folders and reading each raw page's header on every visit."""
    found: list[tuple[str, str, str, tuple[str, str | None, str | None]]] = []
    bundles = ui.bundles()
    for bundle in bundles:
        for raw, cuda_sass, sass in why.bundled_captures(bundle.path):
            label = f"bundled {bundle.device_name}, {why.capture_name(raw)} ({bundle.date})"
            paths = (str(raw), str(cuda_sass) if cuda_sass else None, str(sass) if sass else None)
            found.append((label, bundle.device_name, bundle.name, paths))
    gpus = {b.name.split("/")[0]: b.device_name for b in bundles}
    for raw, cuda_sass, sass in why.later_captures(BUNDLED_RESULTS_DIR):
        folder = raw.parent.parent.name
        label = why.later_capture_label(raw)
        paths = (str(raw), str(cuda_sass) if cuda_sass else None, str(sass) if sass else None)
        found.append((label, why.folder_gpu(folder, gpus), folder, paths))
    return tuple(found)


def data_sources(chosen: Bundle | None) -> tuple[dict[str, Loader], dict[str, str]]:
    """(label -> loader, label -> GPU of a bundled capture): the bundled full-set captures, those of the sidebar's
    bundle first, then those of its GPU (context_order); then this session's uploads, its profile and the source
    pages handed over by the Reports page."""
    bundled: list[tuple[str, str, str, Loader]] = [
        (label, gpu, where, lambda label=label, paths=paths: _capture(label, *paths))
        for label, gpu, where, paths in _committed_captures()
    ]
    ordered = context_order(bundled, chosen.name if chosen else None, chosen.device_name if chosen else None)
    out: dict[str, Loader] = {label: loader for label, _, _, loader in ordered}
    devices = {label: device for label, device, _, _ in ordered}
    session = why.report_data("uploaded reports (this session)", ui.uploaded_reports()[0])
    if session is not None:
        out[session.name] = lambda data=session: data
    live = state.live_profile()
    profiled = why.report_data("ncu profile (this session)", [(live.report_path.name, live.report)] if live else [])
    if profiled is not None:
        out[profiled.name] = lambda data=profiled: data
    handed = {**dict(state.uploaded_source_pages()), **state.source_pages()}
    for name, page in handed.items():
        out[f"source page {name} (uploaded)"] = lambda name=name, page=page: why.source_page_data(name, page)
    return out, devices


def follow_sidebar(key: str, bundle: Bundle | None) -> None:
    """Forget the choice of widget `key` when the sidebar's bundle has changed since it was made, so the page starts
    again from the new bundle's (or its GPU's) data instead of keeping another GPU's."""
    mark = f"{key}:bundle"
    name = bundle.name if bundle else None
    if st.session_state.get(mark, name) != name:
        st.session_state.pop(key, None)
    st.session_state[mark] = name


def context_note(chosen: Bundle | None, shown: str, devices: dict[str, str]) -> None:
    """A caption when the data shown is not of the sidebar's GPU (no capture of that GPU is bundled)."""
    gpu = devices.get(shown)
    if chosen is None or gpu is None or gpu == chosen.device_name:
        return
    st.info(
        f"No warp-stall capture of the {ui.safe_md(chosen.device_name)} (the sidebar's bundle) is bundled: this is "
        f"the {ui.safe_md(gpu)}'s. Upload a report with stall metrics (ncu --set full) to see your GPU."
    )


SCALES = ["share", "cycles"]
ANY_TWO = "any two launches"


def _bind_stalls(data: why.WhyData, kept: bool = False) -> dict[str, list[str]]:
    """Bind the stall section's link parameters; returns its widgets' keys and the values each may hold."""
    labels = list(data.labels())
    permalink.bind(
        "launches", f"stall_pick:{data.name}", labels, multi=True, default=why.ladder_labels(data), kept=kept
    )
    permalink.bind("scale", "stall_scale", SCALES, default="share", kept=kept)
    return {f"stall_pick:{data.name}": labels, "stall_scale": SCALES}


def _source_labels(data: why.WhyData) -> list[str]:
    """The source section's kernels: the data's launches, then the catalog's kernels with a source it lacks."""
    return list(data.labels()) + [s.id for s in CATALOG if s.source and s.id not in data.labels()]


def _step_options(data: why.WhyData) -> tuple[list[tuple[str, str]], list[str]]:
    """(the ladder's steps as pairs of launches, the step picker's options: each step, then any two launches)."""
    pairs = why.ladder_pairs(data)
    return pairs, [f"{a} → {b}" for a, b in pairs] + [ANY_TWO]


def _bind_pair(labels: list[str], kept: bool = False) -> dict[str, list[str]]:
    """Bind the baseline and candidate of "any two launches"; returns their keys and the values each may hold."""
    permalink.bind("base", "x_base", labels, kept=kept)
    permalink.bind("cand", "x_cand", labels, kept=kept)
    return {"x_base": labels, "x_cand": labels}


def keep_closed(data: why.WhyData, shown: int) -> None:
    """Keep the choices of the sections not shown (all but SECTIONS[shown]): a link's values reach their widgets,
    the widgets' values stay in the link and through the runs that do not draw them (ui.keep_choices), so a
    reader who opens the section again, or a colleague opening the link, finds them as they were left."""
    kept: dict[str, Any] = {}
    if shown != 0:
        kept |= _bind_stalls(data, kept=True)
    if shown != 1:
        permalink.bind("kernel", f"src_kernel:{data.name}", labels := _source_labels(data), kept=True)
        kept |= {f"src_kernel:{data.name}": labels, "static_sass": None}
    if shown != 2:
        pairs, options = _step_options(data)
        permalink.bind("step", f"step:{data.name}", options, kept=True)
        kept[f"step:{data.name}"] = options
        if st.session_state.get(f"step:{data.name}", options[0]) == ANY_TWO or not pairs:
            kept |= _bind_pair(list(data.labels()), kept=True)
    ui.keep_choices(kept)


def stall_section(data: why.WhyData) -> None:
    labels = list(data.labels())
    _bind_stalls(data)
    chosen = st.multiselect("Launches", labels, default=why.ladder_labels(data), key=f"stall_pick:{data.name}")
    scale = st.radio(
        "Scale",
        ["share", "cycles"],
        horizontal=True,
        key="stall_scale",
        format_func=lambda s: {"cycles": "warp cycles per issued instruction", "share": "% of each launch"}[s],
    )
    figure, meanings = _stall_view(data, tuple(chosen), scale)
    st.plotly_chart(figure, key="stalls")
    if (box := ui.lazy_expander("What each stall reason means", key="stall_meanings")) is not None:
        with box:
            st.caption("Each bar splits ncu's Warp Cycles Per Issued Instruction (printed at its end) by stall reason.")
            st.dataframe(meanings, hide_index=True, width="stretch")


def present(config: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """The formats of `config` for the columns a table has: st.dataframe deep-copies every format it is given and
    sends them all, and a format of a column the table lacks changes nothing in the browser."""
    return {c: config[c] for c in names if c in config}


def _table(frame: Any, key: str, select: bool = False, height: int | None = None):
    """st.dataframe of a DataFrame or an Arrow table, with the Why page's column formats."""
    kwargs = {"on_select": "rerun", "selection_mode": "single-row"} if select else {}
    names = frame.column_names if hasattr(frame, "column_names") else list(frame.columns)
    stalls = {
        c: st.column_config.NumberColumn(c, format="localized", help="warp-stall samples of this reason")
        for c in names
        if c.startswith("stall: ") or c == why.OTHER_STALLS
    }
    return st.dataframe(
        frame,
        hide_index=True,
        width="stretch",
        column_config={**present(COLUMNS, names), **stalls},
        key=key,
        height=height or "auto",
        **kwargs,
    )


def source_section(data: why.WhyData) -> None:
    labels = _source_labels(data)
    default = next((i for i, lab in enumerate(labels) if data.catalog_id(lab) == "v4"), 0)
    permalink.bind("kernel", f"src_kernel:{data.name}", labels)
    label = st.selectbox("Kernel", labels, index=default, key=f"src_kernel:{data.name}")
    kernel = data.kernel_source(label)
    if kernel is not None:
        st.caption(
            f"{kernel.total_samples:,.0f} warp-stall samples over {len(kernel.instructions):,} SASS "
            f"instructions; source text: {ui.safe_md(kernel.source_note)}"
        )
        tables = _source_tables(kernel)
        sass = tables.sass
        st.subheader("Hottest lines (top 10 by warp-stall samples)")
        _table(tables.hot, key=f"hot:{data.name}:{label}")
        if tables.lines is not None:
            st.subheader("Source, line by line (select a row for its SASS)")
            event = _table(tables.lines_shown, key=f"lines:{data.name}:{label}", select=True, height=420)
            rows = event.selection.rows if event is not None else []
            line = int(tables.lines.iloc[rows[0]]["line"]) if rows else tables.hottest
            st.markdown(f"**SASS of line {line}**" + ("" if rows else " (the hottest; select a row for another)"))
            _table(_line_sass(kernel, line), key=f"sass:{data.name}:{label}")
        with st.expander("All SASS instructions (select one for its source line)"):
            event = _table(tables.sass_shown, key=f"all_sass:{data.name}:{label}", select=True, height=420)
            picked = event.selection.rows if event is not None else []
            if picked:
                lines = [int(n) for n in str(sass.iloc[picked[0]]["lines"]).split(", ") if n]
                texts = {ln.line: ln.text.strip() for ln in kernel.lines}
                for n in lines:
                    st.markdown(f"**Line {n}:** `{ui.safe_md(texts.get(n, ''))}`" if texts.get(n) else f"**Line {n}**")
                if not lines:
                    st.caption("No source line for this instruction (no line information).")
    else:
        st.info(
            "No source counters for this kernel in the chosen data: showing its static SASS (compiled here, no GPU)."
        )
    kid = data.catalog_id(label)
    if (
        kid
        and get_kernel(kid).source
        and (kernel is None or st.toggle("Static SASS and instruction mix", key="static_sass"))
    ):
        static_view(kid)


def static_view(kernel_id: str) -> None:
    spec = get_kernel(kernel_id)
    if spec.backend == "nvrtc" and not spec.arch and A.nvrtc_library() is None:
        st.caption("NVRTC is not installed here (requirements-dev.txt pins its wheel), so there is no static SASS.")
        return
    if (spec.arch or spec.backend == "nvcc") and tool_path("nvcc") is None:
        st.caption(
            "nvcc is not installed here, so there is no static SASS of this kernel (the launcher builds it with nvcc)."
        )
        return
    static = _static(kernel_id)
    if isinstance(static, str):
        ui.show_error(static)
        return
    st.subheader(f"Static SASS of {kernel_id}")
    st.caption(
        ui.safe_md(
            f"{static.arch}, built by {static.compiler} as the launcher builds it, disassembled by {static.tool}."
        )
    )
    # One above the other: beside the per-line table the mix's value columns and last rows were cut off at 1024 px.
    # Each row in its own unit (counts, a ratio, KB), and no "None" for the whole kernel's ratio.
    mix = compare_display(why.static_mix_table(static).set_index("instructions"))
    st.dataframe(mix, width="stretch", height=table_height(len(mix)))
    st.dataframe(why.static_lines_table(static), hide_index=True, width="stretch", height=420)


def explain_section(data: why.WhyData) -> None:
    pairs, options = _step_options(data)
    permalink.bind("step", f"step:{data.name}", options)
    step = st.selectbox("Step", options, key=f"step:{data.name}")
    if step == ANY_TWO or not pairs:
        labels = list(data.labels())
        left, right = st.columns(2)
        _bind_pair(labels)
        base = left.selectbox("Baseline", labels, key="x_base")
        cand = right.selectbox("Candidate", labels, index=data.default_candidate(), key="x_cand")
    else:
        base, cand = pairs[options.index(step)]
    if base == cand:
        st.caption("Pick two different launches to compare (this data set has one launch).")
        return
    view = _step(data, base, cand)
    expl = view.explanation
    st.success(ui.safe_md(expl.summary))
    if expl.adds:
        st.markdown(f"**What {ui.safe_md(cand)} adds (catalog):** {ui.safe_md(expl.adds)}")
    for warning in expl.warnings:
        st.caption(f"Note: {ui.safe_md(warning)}")
    for column, cell in zip(st.columns(3), view.cells, strict=True):
        column.metric(
            ui.safe_md(cell.label), cell.value, cell.delta, delta_color="inverse" if cell.rise_is_worse else "normal"
        )
    st.plotly_chart(_step_stalls(data, base, cand), key="step_stalls")
    st.subheader("What moved, ranked by how much of the time it explains")
    st.markdown("\n".join(f"{n}. {ui.safe_md(i.sentence)}" for n, i in enumerate(expl.top(5), 1)))
    ranked, tensor, hot_before, hot_after = _step_tables(data, base, cand)
    st.dataframe(ranked, hide_index=True, width="stretch", key="ranked")
    if tensor is not None:
        st.subheader("Tensor cores: pipe busy and shared-memory traffic per unit of work")
        st.dataframe(tensor, hide_index=True, width="stretch", key="tensor_view")
    for when, side, table in (("before", base, hot_before), ("after", cand, hot_after)):
        st.markdown(f"**Hottest lines {when}: {ui.safe_md(side)}**")
        if table is None:
            st.caption("No source page for this launch.")
        else:
            st.dataframe(
                table,
                hide_index=True,
                width="stretch",
                column_config=present(COMPACT, table.column_names),
                key=f"hot_{when}",
            )
    if view.diff:
        label = f"Code change: {ui.safe_md(base)} → {ui.safe_md(cand)}"
        if (box := ui.lazy_expander(label, key=f"diff:{base}:{cand}")) is not None:
            box.code(view.diff, language="diff")
