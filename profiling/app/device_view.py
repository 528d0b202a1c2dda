"""The Review page's "By device" section: the selected runs' results side by side per GPU model
(profiling.runs.by_device), as a table and grouped bars; one line when every result came from one GPU."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import streamlit as st

from profiling.app import cache, table_format
from profiling.app.text import md_escape
from profiling.charts import devices
from profiling.runs.by_device import DISAGREE_PCT, GpuIdentity
from profiling.runs.records import SavedRun

RUNS_KEY = "device_runs"
FOLLOW_KEY = "device_runs_follow"  # the Compare selection the choice last followed
RULE = (
    "Per kernel and size, each GPU's median time first, then the median over the model's GPUs. % of cuBLAS: against "
    f"cuBLAS timed on the same GPU. GPUs disagree: a model's GPUs differ by more than {DISAGREE_PCT:g} %. Speedup: "
    "the first model's time over the other's (above 1, the other is faster)."
)


def gpus_line(gpus: Sequence[GpuIdentity]) -> str:
    """ "NVIDIA H100 80GB HBM3: 2 GPUs (vm/GPU-02bc…, …); NVIDIA H200: 1 GPU (…)", Markdown-escaped."""
    models: dict[str, list[str]] = {}
    for gpu in gpus:
        models.setdefault(gpu.model, []).append(gpu.gpu or "unidentified")
    parts = [
        f"{model}: {len(ids)} GPU{'s' if len(ids) != 1 else ''} ({', '.join(ids)})" for model, ids in models.items()
    ]
    return md_escape("; ".join(parts))


def chosen_runs(ids: Sequence[int], compared: Sequence[int], names: Mapping[int, str]) -> list[int]:
    """The runs the section shows, picked among `ids`: the Compare tab's runs (`compared`) until the reader picks
    others, and again each time the Compare selection changes (a widget's default alone is read only once)."""
    compared = [i for i in compared if i in ids]
    if st.session_state.get(FOLLOW_KEY) != compared:
        st.session_state[FOLLOW_KEY] = compared
        st.session_state[RUNS_KEY] = compared
    else:  # runs the filters have since hidden leave the choice
        st.session_state[RUNS_KEY] = [i for i in st.session_state.get(RUNS_KEY, compared) if i in ids]
    return st.multiselect("Runs", list(ids), format_func=names.get, key=RUNS_KEY)


def by_device_section(runs: Sequence[SavedRun]) -> None:
    """Draw the section for `runs` (each read from the store): the GPUs, the table and the chart, or one line."""
    if not runs:
        st.caption("Choose one run or more to see their results per GPU.")
        return
    gpus, models, table = cache.device_groups(list(runs))
    if not gpus:
        st.caption("The selected run(s) hold no results.")
        return
    if len(gpus) == 1:
        st.caption(
            f"All results of the selected run(s) come from one GPU ({gpus_line(gpus)}): nothing to set side by side."
        )
        return
    st.caption(f"Results from {len(gpus)} GPUs. {gpus_line(gpus)}. {RULE}")
    st.dataframe(table_format.display(table), hide_index=True, width="stretch", key="by_device_table")
    st.plotly_chart(cache.figure(devices.device_tflops_figure, models), key="by_device_chart")
