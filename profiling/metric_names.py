"""Nsight Compute metric names GEMM Lens reads by name, each typed here once and imported everywhere else.

ncu's raw names (`gpu__time_duration.sum`) are the canonical names of every report model
(profiling.nsight.metrics); profiling.nsight.metric_registry says what each quantity the product shows is.
This module is the bottom layer: it imports nothing.
"""

from __future__ import annotations

TIME = "gpu__time_duration.sum"
REGISTERS = "launch__registers_per_thread"
SMEM_STATIC = "launch__shared_mem_per_block_static"
SMEM_DYNAMIC = "launch__shared_mem_per_block_dynamic"
SMEM_DRIVER = "launch__shared_mem_per_block_driver"
LIMIT_REGISTERS = "launch__occupancy_limit_registers"
LIMIT_SHARED = "launch__occupancy_limit_shared_mem"
LIMIT_WARPS = "launch__occupancy_limit_warps"
LIMIT_BLOCKS = "launch__occupancy_limit_blocks"
WAVES = "launch__waves_per_multiprocessor"
ACHIEVED_OCC = "sm__warps_active.avg.pct_of_peak_sustained_active"
THEORETICAL_OCC = "sm__maximum_warps_per_active_cycle_pct"
SHARED_LD_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
SHARED_ST_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
SHARED_LD_WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
SHARED_ST_WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
SHARED_WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"
SHARED_LD_INST = "smsp__sass_inst_executed_op_shared_ld.sum"
SHARED_ST_INST = "smsp__sass_inst_executed_op_shared_st.sum"
LDSM_INST = "smsp__inst_executed_op_ldsm.sum"
LDGSTS_INST = "smsp__inst_executed_op_ldgsts.sum"
GLOBAL_LD_INST = "smsp__sass_inst_executed_op_global_ld.sum"
GLOBAL_LD_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
GLOBAL_LD_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
GLOBAL_EXCESS_SECTORS = "derived__memory_l2_theoretical_sectors_global_excessive"
BANK_READS_PCT = "l1tex__data_bank_reads.sum.pct_of_peak_sustained_elapsed"
BANK_WRITES_PCT = "l1tex__data_bank_writes.sum.pct_of_peak_sustained_elapsed"
DRAM_BYTES = "dram__bytes.sum"
DRAM_READ = "dram__bytes_read.sum"
DRAM_WRITE = "dram__bytes_write.sum"
L2_BYTES = "lts__t_bytes.sum"
L2_SECTORS = "lts__t_sectors.sum"
L1_BYTES = "l1tex__t_bytes.sum"
SM_CYCLES = "sm__cycles_elapsed.avg"
SMSP_CYCLES = "smsp__cycles_elapsed.avg"
FADD = "sm__sass_thread_inst_executed_op_fadd_pred_on.sum"
FMUL = "sm__sass_thread_inst_executed_op_fmul_pred_on.sum"
FFMA = "sm__sass_thread_inst_executed_op_ffma_pred_on.sum"
FFMA_PER_CYCLE = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed"
TENSOR_INST = "sm__inst_executed_pipe_tensor.sum"
TENSOR_PIPE_BUSY: tuple[str, ...] = (
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
    "sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_elapsed",
)
"""The tensor pipe's busy share (% of peak), in the order ncu's metric sets carry it."""
SM_THROUGHPUT = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
MEMORY_THROUGHPUT = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
DRAM_THROUGHPUT = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"
ISSUED = "smsp__inst_issued.sum"
WARPS_PER_SCHEDULER = "smsp__warps_active.avg.per_cycle_active"
SMSP_ACTIVE_CYCLES = "smsp__cycles_active.avg"
