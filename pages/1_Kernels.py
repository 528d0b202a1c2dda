"""Kernels: the catalog, each kernel's source, what it adds, its diff against the previous version, compile facts."""

from __future__ import annotations

import streamlit as st

from kernels.catalog import CATALOG
from kernels.registry import get_kernel
from profiling.app import cache, kernel_facts, kernels_view, state

st.title("Kernels")
bundle = state.frame().bundle

st.dataframe(cache.shown_table(kernel_facts.catalog_table), hide_index=True, width="stretch")

ids = [s.id for s in CATALOG]
kernel_id = st.selectbox("Kernel", ids, index=ids.index("v3") if "v3" in ids else 0, key="kernel")
spec = get_kernel(kernel_id)
kernels_view.about_section(spec)
kernels_view.compile_facts_section(spec, bundle)
kernels_view.source_section(spec)
