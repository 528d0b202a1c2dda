"""Occupancy: theoretical occupancy of any launch (bundled, live or uploaded), with what-if inputs."""

from __future__ import annotations

import streamlit as st

from profiling.analysis.occupancy import supported_ccs
from profiling.app import occupancy_view, state, ui

st.title("Occupancy")
bundle = state.frame().bundle

configs = occupancy_view.launch_configs(ui.report_sources(bundle).values(), ui.bench_sources(bundle).values())
if bundle is not None:
    ui.bundled_caption(bundle)

labels = occupancy_view.launch_labels(configs)
pick = st.selectbox("Launch", range(len(labels)), format_func=labels.__getitem__, key="occ_pick")
base = configs[pick] if pick < len(configs) else occupancy_view.CUSTOM

ccs = supported_ccs()
row = st.container(horizontal=True)  # one block: st.columns sent one per column besides (round 15)
cc = row.selectbox("Compute capability", ccs, index=ccs.index(base.cc) if base.cc in ccs else 0, key=f"cc{pick}")
threads = row.number_input("Threads per block", 1, 1024, base.threads, key=f"threads{pick}")
registers = row.number_input("Registers per thread", 1, 255, base.registers, key=f"regs{pick}")
smem = row.number_input("Shared memory per block (B)", 0, 232448, base.shared_mem, step=1024, key=f"smem{pick}")

with ui.user_errors():
    occupancy_view.what_if_section(base, cc, int(threads), int(registers), int(smem))
