"""The floor of Streamlit: the reference app `scripts/load_test.py` measures beside GEMM Lens in the same run.

Eleven pages with GEMM Lens's page titles, each a title, a 20-row dataframe, a 100-point plotly line and a file
uploader: what any Streamlit app with a table, a chart and an upload costs per visit on this machine, so GEMM Lens's
times can be read as a multiple of it instead of against numbers from another machine.

    streamlit run scripts/minimal_app.py
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

TITLES = (
    "Overview",
    "Kernels",
    "Benchmark",
    "Profile",
    "Roofline",
    "Occupancy",
    "Why",
    "Indexing",
    "Reports",
    "Details",
    "Review",
)


def page(title: str) -> None:
    """One page: a title, a 20-row dataframe, a 100-point plotly line, an uploader."""
    st.title(title)
    st.dataframe(pd.DataFrame({"row": range(20), "value": [math.sin(i / 3) for i in range(20)]}))
    x = list(range(100))
    st.plotly_chart(go.Figure(go.Scatter(x=x, y=[math.sin(v / 10) for v in x], mode="lines")))
    st.file_uploader("A file")


def _page_for(title: str) -> Callable[[], None]:
    def run() -> None:
        page(title)

    run.__name__ = title.lower()  # st.Page names a callable's page after the function
    return run


navigation = st.navigation(
    [st.Page(_page_for(t), title=t, url_path=t.lower(), default=i == 0) for i, t in enumerate(TITLES)]
)
navigation.run()
