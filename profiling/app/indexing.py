"""The Indexing page (pages/9_Indexing.py): pick a kernel, shape, block, warp, K step and instruction; draw the
matrix view and the instruction lane by lane beside the same instruction of another kernel; list the predicted
figures and compare the whole launch with the bundled ncu captures. No GPU: everything comes from the indexing
models (kernels/indexing) and committed captures.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

import kernels as kernel_package
from kernels.indexing import MODELS, Access, KernelModel, model_for
from profiling.analysis import access_table
from profiling.analysis.access import global_cost, predict_launch, shared_cost, tile_map, warp_view
from profiling.analysis.access_check import TOLERANCE_PCT
from profiling.analysis.access_table import (
    CAPTURES_1024,
    CP_ASYNC_KERNELS,
    NOT_COMPARED,
    capture_comparisons,
    comparison_frame,
    differences,
    load_captures,
)
from profiling.app import cache, permalink, precompute, ui
from profiling.app.cache import share_figures
from profiling.app.table_format import arrow, table_height
from profiling.app.text import md_escape
from profiling.charts.access import access_pair_figure, access_title, block_tile_figure, matrix_figure
from profiling.errors import InvalidInput
from profiling.nsight import report as ncu_report
from profiling.paths import BUNDLED_RESULTS_DIR
from profiling.shape import Shape

# The ladder's two indexing lessons, each drawn against the other; every other kernel beside its predecessor.
PAIRS = {"v1": "v1-coalesced", "v1-coalesced": "v1", "v3": "v4", "v4": "v3"}
KERNELS = list(MODELS)
# Which instructions make the best first picture: a shared load shows conflicts, a global load coalescing.
PREFERRED = ("shared_ld", "global_ld", "shared_st", "global_st", "ldgsts")
NUMBER = st.column_config.NumberColumn(format="localized")
SECTIONS = ("Matrix view", "Lane by lane", "Whole launch", "Predicted against measured")
"""The page's sections, one tab each (the link's `tab`), the matrix view first and by default."""
SECTION_KEY = "idx_tab"
SIZE_WIDTH = 72
"""Pixels of the M, N and K inputs (five digits, as wide as their columns were at 1024 px); the kernel pickers share
the rest of the row."""


def partner(kernel: str) -> str:
    """The kernel drawn beside `kernel` unless the reader picks another: its pair, else the previous step."""
    if kernel in PAIRS:
        return PAIRS[kernel]
    i = KERNELS.index(kernel)
    return KERNELS[i - 1] if i else KERNELS[1]


@dataclass(frozen=True)
class Selection:
    kernel: str
    other: str | None
    shape: Shape
    block: tuple[int, int]
    warp: int
    step: int


def instructions(model: KernelModel, sel: Selection) -> list[tuple[str, Access]]:
    """(where, instruction) for the chosen warp: the K step's accesses, then the epilogue's."""
    step = [("K step", a) for a in model.step_accesses(sel.shape, sel.block, sel.warp, sel.step)]
    return step + [("after the K loop", a) for a in model.epilogue_accesses(sel.shape, sel.block, sel.warp)]


def clamped(model: KernelModel, sel: Selection) -> Selection:
    """The selection moved inside `model`'s grid, warps and steps (for the kernel drawn beside)."""
    gx, gy = model.grid(sel.shape)
    return Selection(
        model.spec.id,
        None,
        sel.shape,
        (min(sel.block[0], gx - 1), min(sel.block[1], gy - 1)),
        min(sel.warp, model.warps_per_block - 1),
        min(sel.step, model.steps(sel.shape) - 1),
    )


def counterpart(mine: list[Access], index: int, theirs: list[Access]) -> Access | None:
    """The instruction of the other kernel that does the same job: the same counter family and array, the same
    ordinal among those (the k-th aTile load against the k-th aTile load), else the same family."""
    acc = mine[index]
    same = [a for a in theirs if (a.category, a.array) == (acc.category, acc.array)]
    if not same:
        same = [a for a in theirs if a.category == acc.category]
    if not same:
        return None
    ordinal = sum(1 for a in mine[:index] if (a.category, a.array) == (acc.category, acc.array))
    return same[min(ordinal, len(same) - 1)]


def _cost(acc: Access) -> tuple:
    if acc.space == "global":
        c = global_cost(acc)
        return (c.sectors, c.lines)
    c = shared_cost(acc)
    return (c.wavefronts, c.degree)


def default_instruction(mine: list[Access], theirs: list[Access]) -> int:
    """The first instruction of the most telling family whose cost differs from the other kernel's, else the
    first of that family."""
    for category in PREFERRED:
        indices = [i for i, a in enumerate(mine) if a.category == category and a.active.any()]
        for i in indices:
            other = counterpart(mine, i, theirs)
            if other is not None and _cost(other) != _cost(mine[i]):
                return i
    return next((i for c in PREFERRED for i, a in enumerate(mine) if a.category == c and a.active.any()), 0)


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


@cache.resource(max_entries=128, show_spinner=False, hash_funcs={Selection: repr})
def instruction_shown(sel: Selection) -> Any:
    """instruction_table of the selection's warp (its `instructions`) as drawn (Arrow), once per selection and
    shared read-only, instead of built and converted on every visit."""
    return arrow(instruction_table(instructions(model_for(sel.kernel), sel)))


def instruction_table(items: list[tuple[str, Access]]) -> pd.DataFrame:
    """Per instruction of the warp: where, what, lanes, bytes per lane and the predicted cost in words."""
    rows = []
    for i, (where, acc) in enumerate(items):
        if acc.space == "global":
            g = global_cost(acc)
            cost = f"{_n(g.sectors, 'sector')}, {_n(g.lines, 'line')}" if g.requests else "no lane active: no request"
        else:
            c = shared_cost(acc)
            cost = f"{c.wavefronts} wavefronts (ideal {c.ideal}), {c.degree}-way"
        rows.append(
            {
                "#": i,
                "instruction": f"{acc.sass} {acc.label}",
                "predicted cost": cost,
                "lanes": int(acc.active.sum()),
                "B / lane": acc.width,
                "where": where,
            }
        )
    return pd.DataFrame(rows)


@st.cache_data(show_spinner="Predicting the whole launch...", max_entries=64)
def launch_table(kernel: str, m: int, n: int, k: int) -> pd.DataFrame:
    """The whole launch, per counter family: instructions, sectors or wavefronts, and per request (a shared-memory
    request is one instruction); for shared memory the wavefronts per instruction above the conflict-free count
    (global memory has no banks: the cell says so rather than staying empty)."""
    names = {
        "global_ld": "global loads",
        "global_st": "global stores",
        "shared_ld": "shared loads",
        "shared_st": "shared stores",
        "ldgsts": "cp.async shared writes (bank view)",
    }
    rows = []
    for cat, t in predict_launch(model_for(kernel), Shape(m, n, k)).totals.items():
        if not t.instructions:
            continue
        if cat.startswith("global"):
            rows.append(
                {
                    "family": names[cat],
                    "instructions": t.instructions,
                    "sectors / wavefronts": t.sectors,
                    "per request": t.sectors / t.requests if t.requests else 0.0,
                    "above conflict-free": NO_BANKS,
                }
            )
        else:
            rows.append(
                {
                    "family": names[cat],
                    "instructions": t.instructions,
                    "sectors / wavefronts": t.wavefronts,
                    "per request": t.wavefronts / t.instructions,
                    "above conflict-free": f"{(t.wavefronts - t.ideal) / t.instructions:.2f}",
                }
            )
    return pd.DataFrame(rows)


MEASURED_COLUMNS = [
    "quantity",
    "predicted",
    "measured",
    "difference %",
    "agrees",
    "capture",
    "counters",
    "kernel",
    "known gap",
]


NO_BANKS = "– (sectors: no banks)"
"""The whole-launch table's "above conflict-free" cell for a global-memory family."""


@cache.resource(show_spinner="Reading the bundled ncu captures...")
def measured_frame() -> pd.DataFrame:
    """bundled_measured_frame, once per server."""
    return bundled_measured_frame()


def bundled_measured_frame() -> pd.DataFrame:
    """Predicted against measured for every modelled kernel in every bundled capture at 1024: derived once per
    content of the captures and of the models and parser, and kept as Parquet (profiling.app.precompute)."""
    files = [BUNDLED_RESULTS_DIR / relative for _, relative in CAPTURES_1024]
    key = precompute.content_key([f for f in files if f.is_file()], code=[access_table, kernel_package, ncu_report])

    def build() -> dict[str, pd.DataFrame]:
        return {"measured": comparison_frame(capture_comparisons(load_captures()))[MEASURED_COLUMNS]}

    return precompute.cached_tables("indexing_measured", key, build)["measured"]


@cache.resource(max_entries=64, show_spinner=False)
def launch_shown(kernel: str, m: int, n: int, k: int) -> Any:
    """launch_table as drawn (Arrow), shared read-only: converted once per kernel and shape, not on every visit."""
    return arrow(launch_table(kernel, m, n, k))


@st.cache_data(show_spinner="Comparing with the bundled captures...", max_entries=32)
def measured_table(kernel: str) -> pd.DataFrame:
    """Predicted against measured for `kernel` in every bundled capture at 1024."""
    frame = measured_frame()
    return frame[frame["kernel"] == kernel].reset_index(drop=True)


def findings(kernel: str, frame: pd.DataFrame) -> tuple[list[str], list[str]]:
    """What the reader must know about the comparison: each difference beyond the tolerance with its size, and
    (once each) what is known of them and what is not compared."""
    gaps = differences(frame)
    lines = [
        f"{row['quantity']} ({row['capture']}): predicted {row['predicted']:.4g}, measured {row['measured']:.4g}, "
        f"{row['difference %']:+.1f} %"
        for _, row in gaps.iterrows()
    ]
    notes = list(dict.fromkeys(row["known gap"] or "Not explained yet." for _, row in gaps.iterrows()))
    if kernel in CP_ASYNC_KERNELS:
        notes.append(f"Not compared: {NOT_COMPARED}")
    return lines, notes


# --- widgets and sections ---------------------------------------------------------------------------------------


def controls() -> Selection:
    """Kernel, kernel beside it, shape, block, warp and K step (the bounds follow the kernel and shape)."""
    # Each row is one horizontal container: st.columns sent a block per column besides the row's own (nine of the
    # page's 39 messages a visit, docs/load-test.md round 15).
    row = st.container(horizontal=True)
    permalink.bind("kernel", "idx_kernel", KERNELS)
    kernel = row.selectbox("Kernel", KERNELS, key="idx_kernel")
    others = ["(none)", *[k for k in KERNELS if k != kernel]]
    permalink.bind("beside", f"idx_other_{kernel}", others, default=partner(kernel))
    other = row.selectbox("Beside it", others, index=others.index(partner(kernel)), key=f"idx_other_{kernel}")
    sizes = range(1, 16385)
    for name in ("m", "n", "k"):
        permalink.bind(name, f"idx_{name}", sizes, parse=int, default=1024)
    m = row.number_input("M", 1, 16384, 1024, key="idx_m", width=SIZE_WIDTH)
    n = row.number_input("N", 1, 16384, 1024, key="idx_n", width=SIZE_WIDTH)
    k = row.number_input("K", 1, 16384, 1024, key="idx_k", width=SIZE_WIDTH)
    model, shape = model_for(kernel), Shape(int(m), int(n), int(k))
    problem = model.spec.size_problem(shape.m, shape.n, shape.k)
    if problem:
        raise InvalidInput(problem)
    (gx, gy), scope = model.grid(shape), f"{kernel}_{shape.label}"
    steps = model.steps(shape)
    bounds = {"bx": gx, "by": gy, "warp": model.warps_per_block, "kstep": steps}
    for name, key in (("bx", "idx_bx"), ("by", "idx_by"), ("warp", "idx_warp"), ("kstep", "idx_step")):
        permalink.bind(name, f"{key}_{scope}", range(bounds[name]), parse=int, default=0)
    row = st.container(horizontal=True)
    bx = row.number_input(f"blockIdx.x (0..{gx - 1})", 0, gx - 1, 0, key=f"idx_bx_{scope}")
    by = row.number_input(f"blockIdx.y (0..{gy - 1})", 0, gy - 1, 0, key=f"idx_by_{scope}")
    warp = row.number_input(
        f"warp (0..{model.warps_per_block - 1})", 0, model.warps_per_block - 1, 0, key=f"idx_warp_{scope}"
    )
    step = row.number_input(f"K step (0..{steps - 1})", 0, steps - 1, 0, key=f"idx_step_{scope}")
    return Selection(kernel, None if other == "(none)" else other, shape, (int(bx), int(by)), int(warp), int(step))


# The pictures depend only on the selection (a few small values), not on the session: one copy per server,
# shared read-only (cache.share_figures: their dict form built once), so 20 people on this page do not each rebuild
# or re-encode them.
@cache.resource(max_entries=128, show_spinner=False, hash_funcs={Selection: repr})
def access_figure(sel: Selection, pick: int, paired: bool, _sides: list[tuple[str, Access]]):  # noqa: ANN201
    """The lane-by-lane picture of one instruction (and its counterpart): fixed by the selection and the pick."""
    return share_figures(access_pair_figure(_sides))


@cache.resource(max_entries=64, show_spinner=False)
def matrix_figures(kernel: str, m: int, n: int, k: int, block: tuple[int, int], warp: int, step: int) -> tuple:
    """The matrix view and the block's tile for one selection."""
    model = model_for(kernel)
    shape = Shape(m, n, k)
    view = warp_view(model, shape, block, warp, step)
    return share_figures((matrix_figure(view, model.bk), block_tile_figure(tile_map(model, shape, block), view)))


def show_matrix(sel: Selection) -> None:
    """The matrix view, then the chosen block's tile."""
    shape = sel.shape
    matrix, tile = matrix_figures(sel.kernel, shape.m, shape.n, shape.k, sel.block, sel.warp, sel.step)
    st.plotly_chart(matrix, key="idx_matrix")
    st.plotly_chart(tile, key="idx_tile")


def instruction_key(sel: Selection) -> str:
    """The instruction picker's key: one per kernel pair and K step, whose instructions it offers."""
    return f"idx_ins_{sel.kernel}_{sel.other}_{sel.step}"


def keep_instruction(sel: Selection) -> None:
    """While Lane by lane is closed: the instruction chosen there, or named by the link, is kept for it and stays
    in the link (permalink.bind kept=, ui.keep_choices)."""
    key = instruction_key(sel)
    if key not in st.session_state and not permalink.url_values("instruction"):
        return
    offered = range(len(instructions(model_for(sel.kernel), sel)))
    permalink.bind("instruction", key, offered, parse=int, kept=True)
    ui.keep_choices({key: offered})


def sections(sel: Selection) -> None:
    """The matrix view, one warp lane by lane, the whole launch and the comparison with the captures, as tabs of
    which only the open one is drawn: drawn together they sent four times the minimal page's messages a visit
    (docs/load-test.md, round 13)."""
    tabs, shown = permalink.open_tab("tab", SECTION_KEY, SECTIONS)
    if shown != 1:
        keep_instruction(sel)
    with tabs[shown]:
        (matrix_section, lane_section, launch_section, measured_section)[shown](sel)


def matrix_section(sel: Selection) -> None:
    """The matrix view and the chosen block's tile, with what they show."""
    st.caption(
        "First A, B and C with their block tiles: the chosen block's C tile, the A rows and B columns it reads, "
        "and the K slice of the chosen step. Then the chosen block's tile, element by element: which thread "
        "computes it, the chosen warp's lanes in colour."
    )
    show_matrix(sel)


def lane_section(sel: Selection) -> None:
    """One instruction of the chosen warp lane by lane, then the predicted cost of each of its instructions."""
    st.caption(
        "Global: each lane's bytes against the 32-byte sectors (grey bands: 128-byte lines) the request must "
        "move. Shared: each lane's 4-byte words against the 32 banks; colour is the wavefront that serves the "
        "word, and the top row the n-way: the most distinct words one bank serves in one phase."
    )
    show_access(sel)
    st.subheader("Predicted, per instruction of this warp")
    st.dataframe(
        instruction_shown(sel),
        hide_index=True,
        column_config={"instruction": st.column_config.TextColumn(width="medium")},
    )


def launch_section(sel: Selection) -> None:
    """The whole launch's predicted totals at the chosen shape."""
    st.caption(f"Predicted for the whole launch at {sel.shape.m} x {sel.shape.n} x {sel.shape.k}.")
    show_launch(sel)


def measured_section(sel: Selection) -> None:
    """The chosen kernel's predicted figures against the bundled ncu captures at 1024."""
    st.caption(
        "Whole-launch figures the models predict at 1024 x 1024 x 1024, beside the counters Nsight Compute "
        "measured on the H100 and H200 (the bundled captures); a difference beyond the tolerance is a finding about "
        "the model or the kernel, shown, not hidden."
    )
    show_measured(sel.kernel)


def show_access(sel: Selection) -> list[tuple[str, Access]]:
    """The instruction picker and its picture beside the other kernel's; returns the warp's instructions."""
    items = instructions(model_for(sel.kernel), sel)
    if not items:
        st.info(f"Warp {sel.warp} of block {sel.block} has no thread inside C: it returns before any access.")
        return items
    mine = [a for _, a in items]
    theirs: list[Access] = []
    if sel.other:
        other_model = model_for(sel.other)
        theirs = [a for _, a in instructions(other_model, clamped(other_model, sel))]
    labels = [f"{i}: {where} · {a.sass} {a.label}" for i, (where, a) in enumerate(items)]
    permalink.bind("instruction", instruction_key(sel), range(len(items)), parse=int)
    pick = st.selectbox(
        "Instruction",
        range(len(items)),
        index=default_instruction(mine, theirs),
        format_func=lambda i: labels[i],
        key=instruction_key(sel),
    )
    acc = mine[pick]
    sides = [(sel.kernel, acc)]
    twin = counterpart(mine, pick, theirs) if theirs else None
    if twin is not None:
        sides.append((sel.other, twin))
    st.plotly_chart(access_figure(sel, pick, twin is not None, sides), key="idx_access")
    for kid, a in sides:
        st.text(f"{kid}: {access_title(a)}")
    if sel.other and twin is None:
        st.caption(f"{sel.other} has no {acc.category.replace('_', ' ')} instruction to set beside this one.")
    return items


@dataclass(frozen=True)
class MeasuredView:
    """`show_measured`'s content for one kernel: the findings, and the table as drawn (Arrow, shared read-only)."""

    lines: tuple[str, ...]
    notes: tuple[str, ...]
    rows: int
    table: Any


@cache.resource(max_entries=32, show_spinner=False)
def measured_view(kernel: str) -> MeasuredView:
    """measured_table and findings of `kernel`, with the table as drawn, once per server: a visit neither copies
    the table out of a cache nor converts it to Arrow again."""
    frame = measured_table(kernel)
    lines, notes = findings(kernel, frame) if not frame.empty else ([], [])
    return MeasuredView(tuple(lines), tuple(notes), len(frame), arrow(frame.drop(columns=["known gap", "kernel"])))


def show_measured(kernel: str) -> None:
    """Predicted against measured in the bundled captures at 1024, with every difference spelled out."""
    view = measured_view(kernel)
    if not view.rows:
        st.info(f"No bundled capture holds a launch of {md_escape(kernel)} at 1024.")
        return
    if view.lines:
        st.warning(
            f"Predicted and measured differ by more than ±{TOLERANCE_PCT:g} % for {md_escape(kernel)}:\n\n"
            + "\n".join(f"- {md_escape(line)}" for line in view.lines)
        )
    for note in view.notes:
        st.info(md_escape(note))
    if not view.lines:
        st.success(f"Every compared figure of {md_escape(kernel)} agrees within ±{TOLERANCE_PCT:g} %.")
    st.dataframe(
        view.table,
        hide_index=True,
        height=table_height(view.rows),
        column_config={
            "difference %": st.column_config.NumberColumn(format="%+.2f"),
            "predicted": NUMBER,
            "measured": NUMBER,
        },
    )


def show_launch(sel: Selection) -> None:
    """The whole launch's predicted totals per counter family."""
    numbers = ("instructions", "sectors / wavefronts", "per request")
    table = launch_shown(sel.kernel, sel.shape.m, sel.shape.n, sel.shape.k)
    st.dataframe(table, hide_index=True, column_config={c: NUMBER for c in numbers})
