"""Canonical Nsight Compute metric names, display-label mapping, unit conversion and derived metrics.

Canonical names are ncu's raw metric names (`gpu__time_duration.sum`). Values are stored in base units:

    time: nsecond          (ncu's own base unit for gpu__time_duration; "us"/"ms"/"s" are converted)
    size: byte             ("Kbyte", "Mbyte", "Gbyte" use decimal SI prefixes, as ncu prints them)
    rate: byte/second, cycle/second (Hz), inst/cycle ...
    ratio: percent, or no unit

This module is imported by the capture script and by the app: it must stay light (no pandas at import time).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any

from profiling import metric_names as MN
from profiling.metric_names import ACHIEVED_OCC, FADD, FFMA, FMUL, SMSP_CYCLES, THEORETICAL_OCC, TIME

if TYPE_CHECKING:
    import numpy as np


# ---------------------------------------------------------------------------------------------
# The quick metric set (raw names). Every name here was checked against gh100 (docs/measured-facts.md);
# an unknown name aborts the whole ncu run with exit code 9, so add names only after checking them.
# ---------------------------------------------------------------------------------------------

LAUNCH_METRICS: tuple[str, ...] = (
    MN.BLOCK_SIZE,
    MN.GRID_SIZE,
    MN.THREADS,
    MN.REGISTERS,
    MN.SMEM_STATIC,
    MN.SMEM_DYNAMIC,
    MN.SMEM_DRIVER,
    MN.WAVES,
)

OCCUPANCY_METRICS: tuple[str, ...] = (
    MN.LIMIT_REGISTERS,
    MN.LIMIT_SHARED,
    MN.LIMIT_WARPS,
    MN.LIMIT_BLOCKS,
    MN.THEORETICAL_OCC,
    MN.ACHIEVED_OCC,
)

BANK_CONFLICT_METRICS: tuple[str, ...] = (
    MN.SHARED_LD_CONFLICTS,
    MN.SHARED_ST_CONFLICTS,
    MN.SHARED_LD_WAVEFRONTS,
    MN.SHARED_ST_WAVEFRONTS,
    MN.SHARED_LD_INST,
    MN.SHARED_ST_INST,
)

WORK_METRICS: tuple[str, ...] = (
    MN.TIME,
    MN.FADD,
    MN.FMUL,
    MN.FFMA,
    # Hopper's wgmma/hmma op-path counters differ per architecture; the pipe counter exists everywhere.
    MN.TENSOR_INST,
    MN.DRAM_BYTES,
    MN.L2_BYTES,
    MN.L1_BYTES,
)

CEILING_METRICS: tuple[str, ...] = (
    MN.FFMA_PEAK_PER_CYCLE,
    MN.SM_CLOCK,
    MN.DRAM_PEAK_PER_CYCLE,
    MN.DRAM_CLOCK,
    MN.L2_PEAK_PER_CYCLE,
    MN.L2_CLOCK,
    MN.L1_PEAK_PER_CYCLE,
    MN.L1_CLOCK,
)

STALL_REASONS_PER_ISSUE: tuple[str, ...] = (
    "barrier",
    "branch_resolving",
    "dispatch_stall",
    "drain",
    "gmma",
    "imc_miss",
    "lg_throttle",
    "long_scoreboard",
    "math_pipe_throttle",
    "membar",
    "mio_throttle",
    "misc",
    "no_instruction",
    "not_selected",
    "selected",
    "short_scoreboard",
    "sleeping",
    "tex_throttle",
    "wait",
)
# Warp cycles per issued instruction split by stall reason (profiling.analysis.stalls), their total, and the
# factors of the time split (profiling.analysis.explain): all in the H100 full-set captures and gh100's listing.
STALL_METRICS: tuple[str, ...] = (
    *(f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio" for r in STALL_REASONS_PER_ISSUE),
    MN.WARP_LATENCY_PER_ISSUE,
    MN.ISSUED,
    MN.WARPS_PER_SCHEDULER,
    MN.SMSP_ACTIVE_CYCLES,
    MN.SMSP_CYCLES,
)

QUICK_METRICS: tuple[str, ...] = (
    *LAUNCH_METRICS,
    *OCCUPANCY_METRICS,
    *BANK_CONFLICT_METRICS,
    *WORK_METRICS,
    *CEILING_METRICS,
    *STALL_METRICS,
)

# ---------------------------------------------------------------------------------------------
# Details-page display labels -> canonical names
# ---------------------------------------------------------------------------------------------

# Labels shown by `--page details` (ncu section files). Launch Statistics and Occupancy labels are
# checked row by row against `--print-metric-name name` output of the same report (test_ncu_report). A label can name
# different metrics in different sections ("Memory Throughput" is a % in Speed Of Light and a
# byte/second rate in Memory Workload Analysis), so those are keyed by the unit's kind below.
LABEL_TO_METRIC: dict[str, str] = {
    # Speed Of Light
    "Duration": MN.TIME,
    "DRAM Frequency": MN.DRAM_CLOCK,
    # ncu 2025.3's Speed Of Light section prints gpc__cycles_elapsed.avg.per_second as "SM Frequency"
    # (`--print-metric-name name` of the same report, tests/fixtures/foreign/details_names.csv).
    "SM Frequency": MN.SM_FREQUENCY,
    "Elapsed Cycles": MN.ELAPSED_CYCLES,
    "SM Active Cycles": MN.SM_ACTIVE_CYCLES,
    "Compute (SM) Throughput": MN.SM_THROUGHPUT,
    "DRAM Throughput": MN.DRAM_THROUGHPUT,
    "L1/TEX Cache Throughput": MN.L1TEX_THROUGHPUT,
    "L2 Cache Throughput": MN.L2_THROUGHPUT,
    # Launch Statistics
    "Block Size": MN.BLOCK_SIZE,
    "Grid Size": MN.GRID_SIZE,
    "Threads": MN.THREADS,
    "Registers Per Thread": MN.REGISTERS,
    "Static Shared Memory Per Block": MN.SMEM_STATIC,
    "Dynamic Shared Memory Per Block": MN.SMEM_DYNAMIC,
    "Driver Shared Memory Per Block": MN.SMEM_DRIVER,
    "Shared Memory Configuration Size": MN.SMEM_CONFIG_SIZE,
    "Waves Per SM": MN.WAVES,
    "# SMs": MN.SM_COUNT,
    "Stack Size": "launch__stack_size",
    "Function Cache Configuration": "launch__func_cache_config",
    "Cluster Scheduling Policy": "launch__cluster_scheduling_policy",
    "Cluster Size": "launch__cluster_size",
    "# TPCs": "launch__tpc_count",
    "Enabled TPC IDs": "launch__tpc_enabled",
    "Uses Green Context": "launch__uses_green_context",
    "Max Active Clusters": "launch__cluster_max_active",
    "Max Cluster Size": "launch__cluster_max_potential_size",
    "Overall GPU Occupancy": "launch__occupancy_cluster_gpu_pct",
    "Cluster Occupancy": "launch__occupancy_cluster_pct",
    # Occupancy
    "Block Limit Registers": MN.LIMIT_REGISTERS,
    "Block Limit Shared Mem": MN.LIMIT_SHARED,
    "Block Limit Warps": MN.LIMIT_WARPS,
    "Block Limit SM": MN.LIMIT_BLOCKS,
    "Block Limit Barriers": MN.LIMIT_BARRIERS,
    "Theoretical Occupancy": MN.THEORETICAL_OCC,
    "Theoretical Active Warps per SM": "sm__maximum_warps_avg_per_active_cycle",
    "Achieved Occupancy": MN.ACHIEVED_OCC,
    "Achieved Active Warps Per SM": MN.WARPS_ACTIVE_PER_CYCLE,
    # Memory / compute workload
    "L1/TEX Hit Rate": MN.L1TEX_HIT_RATE,
    "L2 Hit Rate": MN.L2_HIT_RATE,
    "Executed Ipc Active": MN.IPC_ACTIVE,
    "Executed Ipc Elapsed": MN.IPC_ELAPSED,
}

# (label, unit kind) -> canonical name, for labels whose meaning depends on the unit.
LABEL_BY_KIND: dict[tuple[str, str], str] = {
    ("Memory Throughput", "percent"): MN.MEMORY_THROUGHPUT,
    ("Memory Throughput", "rate"): MN.DRAM_BANDWIDTH,
}


def canonical_name(label: str, unit: str = "") -> str | None:
    """Canonical ncu metric name for a details-page label (or a raw name given as is), else None."""
    if "__" in label:
        return label
    name = LABEL_TO_METRIC.get(label)
    if name is not None:
        return name
    kind = "percent" if unit.strip() == "%" else ("rate" if "/" in unit else "other")
    return LABEL_BY_KIND.get((label, kind))


# ---------------------------------------------------------------------------------------------
# Derived metrics
# ---------------------------------------------------------------------------------------------


# level -> (bytes metric, peak bytes/cycle metric, cycles/second metric)
LEVEL_BYTES: dict[str, tuple[str, str, str]] = {
    "L1": (MN.L1_BYTES, MN.L1_PEAK_PER_CYCLE, MN.L1_CLOCK),
    "L2": (MN.L2_BYTES, MN.L2_PEAK_PER_CYCLE, MN.L2_CLOCK),
    "DRAM": (MN.DRAM_BYTES, MN.DRAM_PEAK_PER_CYCLE, MN.DRAM_CLOCK),
}

# Derived metric name -> unit (base units, as the canonical metrics).
DERIVED_UNITS: dict[str, str] = {
    "shared_ld_bank_conflict_pct": "%",
    "shared_ld_n_way": "wavefront/request",
    "shared_st_bank_conflict_pct": "%",
    "shared_st_n_way": "wavefront/request",
    "fp32_flops": "flop",
    "seconds": "second",
    "fp32_flops_per_second": "flop/second",
    "fp32_peak_flops_per_second": "flop/second",
    "fp32_pct_of_peak": "%",
    "l1_bytes_per_second": "byte/second",
    "l2_bytes_per_second": "byte/second",
    "dram_bytes_per_second": "byte/second",
    "l1_peak_bytes_per_second": "byte/second",
    "l2_peak_bytes_per_second": "byte/second",
    "dram_peak_bytes_per_second": "byte/second",
    "ai_l1": "flop/byte",
    "ai_l2": "flop/byte",
    "ai_dram": "flop/byte",
    "achieved_occupancy_pct": "%",
    "theoretical_occupancy_pct": "%",
    "occupancy_achieved_of_theoretical": "ratio",
}


DERIVED_NAMES: tuple[str, ...] = (
    "shared_ld_bank_conflict_pct",
    "shared_ld_n_way",
    "shared_st_bank_conflict_pct",
    "shared_st_n_way",
    "fp32_flops",
    "seconds",
    "fp32_flops_per_second",
    "fp32_peak_flops_per_second",
    "fp32_pct_of_peak",
    *(
        name
        for lv in ("l1", "l2", "dram")
        for name in (f"{lv}_bytes_per_second", f"{lv}_peak_bytes_per_second", f"ai_{lv}")
    ),
    "achieved_occupancy_pct",
    "theoretical_occupancy_pct",
    "occupancy_achieved_of_theoretical",
)
"""derive()'s outputs, in the order it gives them."""


# Metrics a report may lack but derive from others, as ncu's own sections do (the full set has dram__bytes_read.sum
# and dram__bytes_write.sum but no dram__bytes.sum; lts__t_sectors.sum but no lts__t_bytes.sum; FP32 instruction
# rates per elapsed cycle but no counts). Each: target, unit, inputs, the formula as shown, and how to combine the
# inputs (arrays or floats). The first whose inputs are all present wins; a metric the report holds is never replaced.
FALLBACKS: tuple[tuple[str, str, tuple[str, ...], str, Callable[..., Any]], ...] = (
    (
        MN.DRAM_BYTES,
        "byte",
        (MN.DRAM_READ, MN.DRAM_WRITE),
        "dram__bytes_read.sum + dram__bytes_write.sum",
        lambda read, write: read + write,
    ),
    (MN.L2_BYTES, "byte", (MN.L2_SECTORS,), "lts__t_sectors.sum x 32 bytes", lambda s: 32.0 * s),
    (
        MN.SM_CLOCK,
        "hz",
        (MN.SM_FREQUENCY,),
        "gpc__cycles_elapsed.avg.per_second (the details page's SM Frequency)",
        lambda hz: hz,
    ),
    *(
        fallback
        for op, name in (("fadd", FADD), ("fmul", FMUL), ("ffma", FFMA))
        for fallback in (
            (name, "inst", (f"smsp__{name[4:]}",), f"smsp__{name[4:]}", lambda x: x),
            (
                name,
                "inst",
                (f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum.per_cycle_elapsed", SMSP_CYCLES),
                f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum.per_cycle_elapsed x {SMSP_CYCLES}",
                lambda rate, cycles: rate * cycles,
            ),
        )
    ),
)


def fill_fallbacks(metrics: MutableMapping[str, Any], make: Callable[[float, str, str], Any]) -> list[str]:
    """Add each FALLBACKS metric that `metrics` lacks but whose inputs it holds, as make(value, unit, formula);
    returns the names added. `metrics` maps canonical names to objects with a `.value` in base units."""
    added: list[str] = []
    for target, unit, inputs, formula, combine in FALLBACKS:
        if target in metrics:
            continue
        values = [metrics.get(name) for name in inputs]
        if any(v is None for v in values):
            continue
        value = combine(*(float(v.value) for v in values))
        if math.isfinite(value):
            metrics[target] = make(value, unit, formula)
            added.append(target)
    return added


def _with_fallbacks(column: Callable[[str], np.ndarray]) -> Callable[[str], np.ndarray]:
    """`column` that gives a FALLBACKS target from its inputs where the report lacks it (NaN)."""
    import numpy as np

    targets: dict[str, list[tuple[tuple[str, ...], Callable[..., Any]]]] = {}
    for target, _, inputs, _, combine in FALLBACKS:
        targets.setdefault(target, []).append((inputs, combine))

    def lookup(name: str) -> np.ndarray:
        values = column(name)
        for inputs, combine in targets.get(name, ()):
            missing = np.isnan(values)
            if not missing.any():
                break
            with np.errstate(all="ignore"):
                values = np.where(missing, combine(*(column(i) for i in inputs)), values)
        return values

    return lookup


def derive(values: Mapping[str, float]) -> dict[str, float]:
    """Derived metrics from canonical values in base units; entries whose inputs are missing are left out.

    Bank conflicts follow NVIDIA's own rule (conflict % = conflicts / wavefronts, n-way = wavefronts /
    requests); FP32 FLOPs = fadd + fmul + 2 x ffma; arithmetic intensity per level = FLOPs / bytes there.
    One launch's values through derive_columns, so a whole raw page and one launch agree to the bit.
    """
    import numpy as np  # lazy: this module is imported where numpy is not needed (capture script, CLI start)

    def column(name: str) -> np.ndarray:
        value = values.get(name)
        return np.array([np.nan if value is None else value], dtype=np.float64)

    out = derive_columns(column)
    return {name: float(v[0]) for name, v in out.items() if not np.isnan(v[0])}


def derive_columns(column: Callable[[str], np.ndarray]) -> dict[str, np.ndarray]:
    """derive() over many launches at once: `column(name)` gives a float64 array per canonical metric (NaN =
    missing), and each derived metric comes back as one (NaN where its inputs are missing or it is not finite)."""
    import numpy as np

    column = _with_fallbacks(column)

    def truthy(x: np.ndarray) -> np.ndarray:
        return ~np.isnan(x) & (x != 0)

    out: dict[str, np.ndarray] = {}
    # Missing values are NaN and propagate; a zero denominator gives inf or NaN, dropped at the end.
    with np.errstate(all="ignore"):
        for op in ("ld", "st"):
            conflicts = column(f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum")
            wavefronts = column(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum")
            requests = column(f"smsp__sass_inst_executed_op_shared_{op}.sum")
            out[f"shared_{op}_bank_conflict_pct"] = 100.0 * conflicts / wavefronts
            out[f"shared_{op}_n_way"] = wavefronts / requests

        fadd, fmul, ffma = column(FADD), column(FMUL), column(FFMA)
        some = ~(np.isnan(fadd) & np.isnan(fmul) & np.isnan(ffma))
        total = np.nan_to_num(fadd, nan=0.0) + np.nan_to_num(fmul, nan=0.0) + 2.0 * np.nan_to_num(ffma, nan=0.0)
        flops = np.where(some, total, np.nan)
        out["fp32_flops"] = flops
        ns = column(TIME)
        seconds = np.where(truthy(ns), ns * 1e-9, np.nan)
        out["seconds"] = seconds
        out["fp32_flops_per_second"] = flops / seconds
        ffma_peak, sm_hz = column(f"{FFMA}.peak_sustained"), column(MN.SM_CLOCK)
        peak = np.where(truthy(ffma_peak) & truthy(sm_hz), 2.0 * ffma_peak * sm_hz, np.nan)
        out["fp32_peak_flops_per_second"] = peak
        out["fp32_pct_of_peak"] = 100.0 * out["fp32_flops_per_second"] / peak

        for level, (bytes_name, peak_name, hz_name) in LEVEL_BYTES.items():
            key = level.lower()
            moved = column(bytes_name)
            out[f"{key}_bytes_per_second"] = moved / seconds
            per_cycle, hz = column(peak_name), column(hz_name)
            out[f"{key}_peak_bytes_per_second"] = np.where(truthy(per_cycle) & truthy(hz), per_cycle * hz, np.nan)
            out[f"ai_{key}"] = flops / moved

        achieved, theoretical = column(ACHIEVED_OCC), column(THEORETICAL_OCC)
        out["achieved_occupancy_pct"] = achieved
        out["theoretical_occupancy_pct"] = theoretical
        out["occupancy_achieved_of_theoretical"] = achieved / theoretical
        return {name: np.where(np.isfinite(v), v, np.nan) for name, v in out.items()}


# ncu's `--query-metrics` lists base names; a requested name may add a rollup and submetrics.
# Dot-separated words only: no two parts of the pattern can match the same characters, so it runs in linear time
# (a pattern like `[A-Za-z0-9_]+__[A-Za-z0-9_]+...` tries every "__" split: 0.9 s for 8,000 characters).
_NAME_RE = re.compile(r"[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*")
MAX_METRIC_NAME_CHARS = 256
"""ncu's longest names are about 100 characters; anything much longer is not a metric name."""


def base_metric_name(name: str) -> str:
    """'dram__bytes.sum.per_second' -> 'dram__bytes' (what `ncu --query-metrics` lists)."""
    return name.split(".", 1)[0]


def looks_like_metric_name(name: str) -> bool:
    """True for strings shaped like an ncu metric name (unit__counter[.rollup...]), at most 256 characters."""
    if len(name) > MAX_METRIC_NAME_CHARS or _NAME_RE.fullmatch(name) is None:
        return False
    # unit__counter: a "__" with at least one character on either side, before the first dot.
    return "__" in base_metric_name(name)[1:-1]
