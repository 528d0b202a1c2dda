"""The counters an explanation weighs (profiling.analysis.explain): each read from a launch in either metric set
(the quick set's names or the full set's), with the stall reasons it drives and one neutral line on what it is."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from profiling.nsight.report import KernelLaunch

Getter = Callable[[KernelLaunch], float | None]

SHARED = ("short_scoreboard", "mio_throttle")
GLOBAL = ("long_scoreboard", "lg_throttle")
# Reasons that more resident warps could hide; "selected", "not_selected", "math_pipe_throttle" and
# "dispatch_stall" mean the scheduler had work to issue.
LATENCY = (
    "long_scoreboard",
    "short_scoreboard",
    "mio_throttle",
    "lg_throttle",
    "barrier",
    "wait",
    "no_instruction",
    "branch_resolving",
    "tex_throttle",
    "membar",
    "drain",
    "imc_miss",
)
UTILIZATION = "sm_utilization"
"""The time-split term for idle SM sub-partitions (too few blocks, a tail)."""
GROUP_NAMES: dict[tuple[str, ...], str] = {
    SHARED: "shared-memory stalls (short_scoreboard, mio_throttle)",
    GLOBAL: "global-memory stalls (long_scoreboard, lg_throttle)",
    LATENCY: "latency stalls (every reason more warps could hide)",
    (UTILIZATION,): "idle SMs",
}


def group_name(reasons: tuple[str, ...]) -> str:
    return GROUP_NAMES.get(reasons, ", ".join(reasons))


def metric(name: str) -> Getter:
    return lambda launch: launch.value(name)


def derived(name: str) -> Getter:
    return lambda launch: launch.derived.get(name)


def first(*getters: Getter) -> Getter:
    """The first getter that has a value."""

    def get(launch: KernelLaunch) -> float | None:
        for getter in getters:
            value = getter(launch)
            if value is not None:
                return value
        return None

    return get


def total(*names: str) -> Getter:
    """Sum of the metrics present (None when none is)."""

    def get(launch: KernelLaunch) -> float | None:
        values = [v for v in (launch.value(n) for n in names) if v is not None]
        return sum(values) if values else None

    return get


def scaled(name: str, factor: float) -> Getter:
    def get(launch: KernelLaunch) -> float | None:
        value = launch.value(name)
        return value * factor if value is not None else None

    return get


def ratio(num: float | None, den: float | None) -> float | None:
    return num / den if num is not None and den else None


def ffma_instructions(launch: KernelLaunch) -> float | None:
    """Warp-level FFMA instructions: the thread count (quick set) or its rate x elapsed cycles (full set) / 32."""
    threads = launch.value("sm__sass_thread_inst_executed_op_ffma_pred_on.sum")
    if threads is None:
        rate = launch.value("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed")
        cycles = launch.value("smsp__cycles_elapsed.avg")
        threads = rate * cycles if rate is not None and cycles else None
    return threads / 32.0 if threads is not None else None


shared_load_instructions = total("smsp__sass_inst_executed_op_shared_ld.sum", "smsp__inst_executed_op_ldsm.sum")


def ffma_per_shared_load(launch: KernelLaunch) -> float | None:
    ffma, loads = ffma_instructions(launch), shared_load_instructions(launch)
    return ffma / loads if ffma and loads else None


def global_sectors_per_request(launch: KernelLaunch) -> float | None:
    return ratio(
        launch.value("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
        launch.value("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
    )


def gemm_flops(launch: KernelLaunch) -> float | None:
    """2MNK from the worker's NVTX range; else ncu's FP32 FLOPs (fadd + fmul + 2 ffma) when measured."""
    if launch.identity.gemm_flops is not None:
        return launch.identity.gemm_flops
    flops = launch.derived.get("fp32_flops")
    if flops is None and (ffma := ffma_instructions(launch)) is not None:
        flops = 64.0 * ffma  # 32 threads x 2 FLOPs per warp-level FFMA
    return flops


def tflops(launch: KernelLaunch) -> float | None:
    flops, ns = gemm_flops(launch), launch.value("gpu__time_duration.sum")
    return flops / ns / 1e3 if flops and ns else None


@dataclass(frozen=True)
class Counter:
    """A measured quantity that moves time through the stall reasons it drives."""

    key: str
    label: str
    unit: str
    reasons: tuple[str, ...]
    better: str
    """"lower", "higher", or "" when neither direction is better in itself."""
    get: Getter
    meaning: str
    applies: str = "any"
    """"any" launch, or "tensor_core": weighed only in a step where a launch did tensor-core work."""


def shared_busy_per_gflop(launch: KernelLaunch) -> float | None:
    """Shared-memory bank busy cycles (reads + writes, ncu's % of peak x elapsed cycles) per GFLOP of the GEMM:
    how much shared-memory traffic each unit of work costs, whether it moves through LSU (LDS, ldmatrix) or
    straight into the tensor cores (wgmma operands, TMA writes)."""
    reads = launch.value("l1tex__data_bank_reads.sum.pct_of_peak_sustained_elapsed")
    writes = launch.value("l1tex__data_bank_writes.sum.pct_of_peak_sustained_elapsed")
    cycles = launch.value("sm__cycles_elapsed.avg")
    flops = gemm_flops(launch)
    if reads is None or writes is None or not cycles or not flops:
        return None
    return (reads + writes) / 100.0 * cycles / (flops / 1e9)


COUNTERS: tuple[Counter, ...] = (
    Counter(
        "shared_ld_n_way", "shared-load bank conflicts", "-way", SHARED, "lower", derived("shared_ld_n_way"),
        "wavefronts per shared-load request: 1 is conflict-free, each extra one a replay the warp waits for",
    ),
    Counter(
        "shared_st_n_way", "shared-store bank conflicts", "-way", SHARED, "lower", derived("shared_st_n_way"),
        "wavefronts per shared-store request: extra ones keep the MIO queue busy",
    ),
    Counter(
        "shared_wavefronts", "shared-memory wavefronts", "", SHARED, "lower",
        first(
            metric("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"),
            total("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                  "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"),
        ),
        "shared-memory traffic in L1 data-pipe cycles",
    ),
    Counter(
        "shared_loads", "shared-load instructions (LDS + LDSM)", "", SHARED, "lower", shared_load_instructions,
        "wider loads (LDS.128) and register reuse issue fewer of them",
    ),
    Counter(
        "ffma_per_shared_load", "FFMA per shared load", "", SHARED, "higher", ffma_per_shared_load,
        "register blocking: how many FMAs each shared-memory load feeds",
    ),
    Counter(
        "global_excess_sectors", "excess global sectors", "", GLOBAL, "lower",
        metric("derived__memory_l2_theoretical_sectors_global_excessive"),
        "32-byte sectors fetched beyond what the accessed bytes need: uncoalesced or narrow access",
    ),
    Counter(
        "global_sectors_per_request", "sectors per global load request", "", GLOBAL, "lower",
        global_sectors_per_request, "32-byte sectors one warp-wide load touches (4 for a coalesced LDG.32)",
    ),
    Counter(
        "global_loads", "global load instructions (LDG)", "", GLOBAL, "lower",
        metric("smsp__sass_inst_executed_op_global_ld.sum"), "register-staged loads from global memory",
    ),
    Counter(
        "ldgsts", "cp.async copies (LDGSTS)", "", GLOBAL, "", metric("smsp__inst_executed_op_ldgsts.sum"),
        "global-to-shared copies that bypass registers and need no wait until the data is used",
    ),
    Counter(
        "l2_bytes", "L2 traffic", "bytes", GLOBAL, "lower",
        first(metric("lts__t_bytes.sum"), scaled("lts__t_sectors.sum", 32.0)), "bytes moved through L2",
    ),
    Counter(
        "dram_bytes", "DRAM traffic", "bytes", ("long_scoreboard",), "lower",
        first(metric("dram__bytes.sum"), total("dram__bytes_read.sum", "dram__bytes_write.sum")),
        "bytes read from and written to device memory",
    ),
    Counter(
        "achieved_occupancy", "achieved occupancy", "%", LATENCY, "higher", derived("achieved_occupancy_pct"),
        "resident warps as a share of the SM's 64: more of them hide more latency",
    ),
    Counter(
        "registers", "registers per thread", "", LATENCY, "", metric("launch__registers_per_thread"),
        "registers bound how many warps fit, and buy reuse",
    ),
    Counter(
        "tensor_pipe_busy", "tensor pipe busy (ncu, % of peak)", "%", (UTILIZATION,), "higher",
        first(metric("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"),
              metric("TPC.TriageCompute.sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed")),
        "share of cycles the tensor cores were busy (HMMA from mma.sync, GMMA from wgmma)", "tensor_core",
    ),
    Counter(
        "shared_busy_per_gflop", "shared-memory bank cycles per GFLOP", "", SHARED, "lower", shared_busy_per_gflop,
        "shared-memory traffic per unit of work: ldmatrix into registers costs more of it than wgmma reading "
        "its operands from shared memory",
    ),
    Counter(
        "waves", "waves per SM", "", (UTILIZATION,), "higher", metric("launch__waves_per_multiprocessor"),
        "blocks per SM slot: below 1, some SMs have nothing to do",
    ),
)  # fmt: skip
