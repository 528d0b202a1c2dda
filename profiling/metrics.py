"""Canonical Nsight Compute metric names, display-label mapping, unit conversion and derived metrics.

Canonical names are ncu's raw metric names (`gpu__time_duration.sum`). Values are stored in base units:

    time: nsecond          (ncu's own base unit for gpu__time_duration; "us"/"ms"/"s" are converted)
    size: byte             ("Kbyte", "Mbyte", "Gbyte" use decimal SI prefixes, as ncu prints them)
    rate: byte/second, cycle/second (Hz), inst/cycle ...
    ratio: percent, or no unit

This module is imported by the capture script and by the app: it must stay light (no pandas at import time).
"""

from __future__ import annotations

# ---------------------------------------------------------------------------------------------
# The quick metric set (raw names). Every name here was checked against gh100 (see FIELD-NOTES);
# an unknown name aborts the whole ncu run with exit code 9, so add names only after checking them.
# ---------------------------------------------------------------------------------------------

LAUNCH_METRICS: tuple[str, ...] = (
    "launch__block_size",
    "launch__grid_size",
    "launch__thread_count",
    "launch__registers_per_thread",
    "launch__shared_mem_per_block_static",
    "launch__shared_mem_per_block_dynamic",
    "launch__shared_mem_per_block_driver",
    "launch__waves_per_multiprocessor",
)

OCCUPANCY_METRICS: tuple[str, ...] = (
    "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem",
    "launch__occupancy_limit_warps",
    "launch__occupancy_limit_blocks",
    "sm__maximum_warps_per_active_cycle_pct",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
)

BANK_CONFLICT_METRICS: tuple[str, ...] = (
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "smsp__sass_inst_executed_op_shared_ld.sum",
    "smsp__sass_inst_executed_op_shared_st.sum",
)

WORK_METRICS: tuple[str, ...] = (
    "gpu__time_duration.sum",
    "sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "sm__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
    # Hopper's wgmma/hmma op-path counters differ per architecture; the pipe counter exists everywhere.
    "sm__inst_executed_pipe_tensor.sum",
    "dram__bytes.sum",
    "lts__t_bytes.sum",
    "l1tex__t_bytes.sum",
)

CEILING_METRICS: tuple[str, ...] = (
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
    "sm__cycles_elapsed.avg.per_second",
    "dram__bytes.sum.peak_sustained",
    "dram__cycles_elapsed.avg.per_second",
    "lts__t_bytes.sum.peak_sustained",
    "lts__cycles_elapsed.avg.per_second",
    "l1tex__t_bytes.sum.peak_sustained",
    "l1tex__cycles_elapsed.avg.per_second",
)

QUICK_METRICS: tuple[str, ...] = (
    *LAUNCH_METRICS,
    *OCCUPANCY_METRICS,
    *BANK_CONFLICT_METRICS,
    *WORK_METRICS,
    *CEILING_METRICS,
)
