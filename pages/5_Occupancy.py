"""Occupancy: theoretical occupancy of any launch (bundled, live or uploaded), with what-if inputs."""

from __future__ import annotations

import streamlit as st

from profiling import charts
from profiling.analysis import launches
from profiling.analysis.occupancy import supported_ccs, theoretical_occupancy
from profiling.app import cache, state, tables, ui

st.title("Occupancy")
bundle = state.frame().bundle

configs: list[launches.LaunchConfig] = []
for reports in ui.report_sources(bundle).values():
    configs += launches.launch_configs_from_reports(reports)
for document in ui.bench_sources(bundle).values():
    configs += launches.launch_configs_from_bench(document)
if bundle is not None:
    ui.bundled_caption(bundle)

labels = [f"{c.name} — {c.source}" for c in configs] + ["(enter your own)"]
pick = st.selectbox("Launch", range(len(labels)), format_func=labels.__getitem__, key="occ_pick")
base = configs[pick] if pick < len(configs) else launches.LaunchConfig("custom", "what-if", "9.0", 256, 64, 0)

ccs = supported_ccs()
c1, c2, c3, c4 = st.columns(4)
cc = c1.selectbox("Compute capability", ccs, index=ccs.index(base.cc) if base.cc in ccs else 0, key=f"cc{pick}")
threads = c2.number_input("Threads per block", 1, 1024, base.threads, key=f"threads{pick}")
registers = c3.number_input("Registers per thread", 1, 255, base.registers, key=f"regs{pick}")
smem = c4.number_input("Shared memory per block (B)", 0, 232448, base.shared_mem, step=1024, key=f"smem{pick}")

with ui.user_errors():
    result = theoretical_occupancy(cc, int(threads), int(registers), int(smem))
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Theoretical occupancy", f"{result.occupancy_pct:.1f}%")
    m2.metric("Active warps per SM", f"{result.active_warps_per_sm} / {result.max_warps_per_sm}")
    m3.metric("Blocks per SM", result.active_blocks_per_sm)
    if base.achieved_pct is not None:
        m4.metric("ncu achieved", f"{base.achieved_pct:.1f}%",
                  help=f"ncu theoretical: {base.ncu_theoretical_pct}")  # fmt: skip
    st.text(f"Limited by {result.describe()}")
    gap = launches.occupancy_gap_note(result.occupancy_pct, base.achieved_pct, base.waves_per_sm)
    if gap:
        st.text(gap)
    st.dataframe(tables.display(tables.occupancy_limits_table(result)), hide_index=True)
    st.caption("How to read the curves: each shows the active warps per SM as one resource varies and the others "
               "stay at this launch's values; the red ring is this launch. A step down means one block fewer fits "
               "on an SM; the flat top is the hardware's warp limit.")  # fmt: skip
    for i, fig in enumerate(cache.figure(charts.occupancy_figures, cc, int(threads), int(registers), int(smem))):
        st.plotly_chart(fig, key=f"occ{i}")
