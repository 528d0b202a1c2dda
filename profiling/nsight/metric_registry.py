"""The metric registry: one MetricDef per quantity GEMM Lens shows, and the views built from it.

A MetricDef names the ncu metric(s) it reads (the first one present wins, so fallbacks follow it) or the derived
value it is (profiling.nsight.metrics.derive, with its formula in words), its unit and display scale, a short
label, a one-line meaning, which direction is better, and what it applies to. The Reports key-metric table
(KEY_TABLE), the `report` command's lines (REPORT_LINE, THROUGHPUT), the Why page's counters
(profiling.analysis.evidence) and the frame every export reads (FRAME) are lists of these, so a label, a unit or
a scale is written once.

Bank conflicts have one vocabulary here, worded the same on every page and in every command:
- wavefronts per request, against the ideal for the access width (1 at 32 bits per thread, 2 at 64, 4 at 128);
- the conflict rate: excess wavefronts / all wavefronts (0 % is conflict-free whatever the width);
- the n-way of one shared-memory instruction (the most distinct 128-byte rows a warp touches in one bank), which
  belongs to instructions (the Indexing page, `access`, `source`) and is not a property of a launch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from profiling import metric_names as M
from profiling.nsight.model import KernelLaunch
from profiling.shape import tflops

Direction = Literal["lower", "higher", ""]
Applies = Literal["any", "tensor_core"]
Compute = Callable[[KernelLaunch], "float | None"]

WAVEFRONTS_PER_REQUEST_MEANING = (
    "1 per request is conflict-free at 32 bits per thread, 2 at 64 and 4 at 128; each one above that is a bank "
    "conflict the warp waits for"
)
CONFLICT_RATE_MEANING = "excess wavefronts / all wavefronts: 0 % is conflict-free whatever the access width"
N_WAY_LABEL = "n-way"
N_WAY_MEANING = (
    "the most distinct 128-byte rows a warp touches in one bank in one shared-memory instruction: 1 is "
    "conflict-free; defined for shared-memory instructions only"
)
# ncu's source-page column "L1 Conflicts Shared N-Way" is not that n-way: on every row of the bundled H100 source
# captures (results/h100-2026-11-22, 844 rows) it equals floor(L1 Wavefronts Shared / Instructions Executed), the wavefronts one
# warp instruction took with the conflict-free ones included. v3's A-tile LDS.128 reads 32 there (ideal 4), which
# is the 8-way the Indexing page predicts; v4's reads 8, its 2-way. The source views show it under this label.
WAVEFRONTS_PER_INSTRUCTION_LABEL = "wavefronts per instruction"
WAVEFRONTS_PER_INSTRUCTION_MEANING = (
    "shared-memory wavefronts one warp instruction took, the conflict-free ones included (ncu's 'L1 Conflicts Shared "
    "N-Way'): 1 is ideal for LDS.32, 2 for LDS.64, 4 for LDS.128; divided by that ideal it is the instruction's n-way"
)


@dataclass(frozen=True)
class MetricDef:
    """One quantity GEMM Lens shows. `names`: ncu metrics read, the first present wins; `derived`: the key of a
    value profiling.nsight.metrics.derive works out (`formula` says how); `compute`: a function of the launch for
    anything else. Shown value = base-unit value x `scale`, in `unit`."""

    key: str
    label: str
    unit: str = ""
    scale: float = 1.0
    meaning: str = ""
    names: tuple[str, ...] = ()
    derived: str = ""
    formula: str = ""
    better: Direction = ""
    applies: Applies = "any"
    compute: Compute | None = None
    base_unit: str = ""  # the unit of base_value where the display scale converts it (ns shown as µs)

    @property
    def raw_unit(self) -> str:
        """The unit of base_value (what the Details page and launch comparison show): 'ns', 'byte', '%', ''."""
        return self.base_unit or (self.unit if self.scale == 1 else "")

    @property
    def title(self) -> str:
        """A table column's heading: 'duration (µs)', 'registers', 'FP32 TFLOP/s'."""
        return f"{self.label} ({self.unit})" if self.unit and self.unit not in self.label else self.label

    def base_value(self, launch: KernelLaunch) -> float | None:
        """The value in base units (ns, bytes, counts, %), or None when the launch lacks it."""
        if self.compute is not None:
            return self.compute(launch)
        if self.derived:
            return launch.derived.get(self.derived)
        for name in self.names:
            value = launch.value(name)
            if value is not None:
                return value
        return None

    def value(self, launch: KernelLaunch) -> float | None:
        """The value as shown: base value x scale."""
        value = self.base_value(launch)
        return value * self.scale if value is not None else None

    def shown_for(self, *launches: KernelLaunch) -> bool:
        """Whether a view shows it for these launches: a tensor-core quantity only where one of them is tensor-core
        work (launch.identity), anything else always."""
        return self.applies != "tensor_core" or any(launch.identity.tensor_core for launch in launches)


def _d(key: str, label: str, unit: str, scale: float, meaning: str, better: Direction = "", **kw: object) -> MetricDef:
    return MetricDef(key, label, unit, scale, meaning, better=better, **kw)  # type: ignore[arg-type]


# Work and time: the one TFLOP/s.


def gemm_flops(launch: KernelLaunch) -> float | None:
    """The FLOPs a launch's rate is counted in: 2MNK of its size when known (the worker's NVTX range), else ncu's
    FP32 FLOPs (fadd + fmul + 2 ffma), else 64 per warp-level FFMA."""
    if launch.identity.gemm_flops is not None:
        return launch.identity.gemm_flops
    flops = launch.derived.get("fp32_flops")
    if flops is None and (ffma := ffma_instructions(launch)) is not None:
        flops = 64.0 * ffma  # 32 threads x 2 FLOPs per warp-level FFMA
    return flops


def launch_tflops(launch: KernelLaunch) -> float | None:
    """TFLOP/s of a launch: gemm_flops over its duration."""
    ns = launch.value(M.TIME)
    return tflops(gemm_flops(launch), ns * 1e-9 if ns else None)


def ffma_instructions(launch: KernelLaunch) -> float | None:
    """Warp-level FFMA instructions: the thread count (quick set) or its rate x elapsed cycles (full set) / 32."""
    threads = launch.value(M.FFMA)
    if threads is None:
        rate = launch.value(M.FFMA_PER_CYCLE)
        cycles = launch.value(M.SMSP_CYCLES)
        threads = rate * cycles if rate is not None and cycles else None
    return threads / 32.0 if threads is not None else None


def _total(*names: str) -> Compute:
    """Sum of the metrics present (None when none is)."""

    def get(launch: KernelLaunch) -> float | None:
        values = [v for v in (launch.value(n) for n in names) if v is not None]
        return sum(values) if values else None

    return get


def _ratio(num: float | None, den: float | None) -> float | None:
    return num / den if num is not None and den else None


shared_load_instructions = _total(M.SHARED_LD_INST, M.LDSM_INST)


def ffma_per_shared_load(launch: KernelLaunch) -> float | None:
    ffma, loads = ffma_instructions(launch), shared_load_instructions(launch)
    return ffma / loads if ffma and loads else None


def global_sectors_per_request(launch: KernelLaunch) -> float | None:
    return _ratio(launch.value(M.GLOBAL_LD_SECTORS), launch.value(M.GLOBAL_LD_REQUESTS))


def shared_busy_per_gflop(launch: KernelLaunch) -> float | None:
    """Shared-memory bank busy cycles (reads + writes, ncu's % of peak x elapsed cycles) per GFLOP of the GEMM:
    how much shared-memory traffic each unit of work costs, whether it moves through LSU (LDS, ldmatrix) or
    straight into the tensor cores (wgmma operands, TMA writes)."""
    reads, writes = launch.value(M.BANK_READS_PCT), launch.value(M.BANK_WRITES_PCT)
    cycles = launch.value(M.SM_CYCLES)
    flops = gemm_flops(launch)
    if reads is None or writes is None or not cycles or not flops:
        return None
    return (reads + writes) / 100.0 * cycles / (flops / 1e9)


def _shared_wavefronts(launch: KernelLaunch) -> float | None:
    total = launch.value(M.SHARED_WAVEFRONTS)
    return total if total is not None else _total(M.SHARED_LD_WAVEFRONTS, M.SHARED_ST_WAVEFRONTS)(launch)


def _l2_bytes(launch: KernelLaunch) -> float | None:
    moved = launch.value(M.L2_BYTES)
    sectors = launch.value(M.L2_SECTORS)
    return moved if moved is not None else (32.0 * sectors if sectors is not None else None)


def _dram_bytes(launch: KernelLaunch) -> float | None:
    moved = launch.value(M.DRAM_BYTES)
    return moved if moved is not None else _total(M.DRAM_READ, M.DRAM_WRITE)(launch)


# ---------------------------------------------------------------------------------------------
# The definitions
# ---------------------------------------------------------------------------------------------

DURATION = _d("duration_ns", "duration", "µs", 1e-3, "kernel time on the GPU", "lower", names=(M.TIME,), base_unit="ns")
REGISTERS = _d(
    "registers",
    "registers",
    "",
    1,
    "registers bound how many warps fit, and buy reuse",
    names=(M.REGISTERS,),
    base_unit="register",
)
SMEM_STATIC = _d(
    "smem_static_bytes",
    "smem static",
    "KB",
    1 / 1024,
    "shared memory per block declared in the kernel",
    names=(M.SMEM_STATIC,),
    base_unit="byte",
)
SMEM_DYNAMIC = _d(
    "smem_dynamic_bytes",
    "smem dynamic",
    "KB",
    1 / 1024,
    "shared memory per block requested at launch",
    names=(M.SMEM_DYNAMIC,),
    base_unit="byte",
)
SMEM_DRIVER = _d("smem_driver_bytes", "smem driver", "KB", 1 / 1024, "", names=(M.SMEM_DRIVER,))
_LIMIT = "blocks per SM this resource allows: the smallest limit sets the occupancy"
LIMIT_REGISTERS = _d(
    "limit_registers", "block limit registers", "", 1, _LIMIT, "higher", names=(M.LIMIT_REGISTERS,), base_unit="block"
)
LIMIT_SHARED = _d(
    "limit_shared_mem", "block limit shared mem", "", 1, _LIMIT, "higher", names=(M.LIMIT_SHARED,), base_unit="block"
)
LIMIT_WARPS = _d("limit_warps", "block limit warps", "", 1, _LIMIT, "higher", names=(M.LIMIT_WARPS,), base_unit="block")
LIMIT_BLOCKS = _d("limit_blocks", "block limit SM", "", 1, _LIMIT, "higher", names=(M.LIMIT_BLOCKS,), base_unit="block")
WAVES = _d(
    "waves_per_sm",
    "waves per SM",
    "",
    1,
    "blocks per SM slot: below 1, some SMs have nothing to do",
    "higher",
    names=(M.WAVES,),
)
THEORETICAL_OCC = _d(
    "theoretical_occupancy_pct",
    "theoretical occ.",
    "%",
    1,
    "the most warps the SM can hold for this launch's registers, shared memory and block size, as a share of 64",
    "higher",
    derived="theoretical_occupancy_pct",
    names=(M.THEORETICAL_OCC,),
)
ACHIEVED_OCC = _d(
    "achieved_occupancy_pct",
    "achieved occ.",
    "%",
    1,
    "resident warps as a share of the SM's 64: more of them hide more latency",
    "higher",
    derived="achieved_occupancy_pct",
    names=(M.ACHIEVED_OCC,),
)
LD_CONFLICT_RATE = _d(
    "shared_ld_bank_conflict_pct",
    "shared-load conflict rate",
    "%",
    1,
    CONFLICT_RATE_MEANING,
    "lower",
    derived="shared_ld_bank_conflict_pct",
    formula=f"100 x {M.SHARED_LD_CONFLICTS} / {M.SHARED_LD_WAVEFRONTS}",
)
ST_CONFLICT_RATE = _d(
    "shared_st_bank_conflict_pct",
    "shared-store conflict rate",
    "%",
    1,
    CONFLICT_RATE_MEANING,
    "lower",
    derived="shared_st_bank_conflict_pct",
    formula=f"100 x {M.SHARED_ST_CONFLICTS} / {M.SHARED_ST_WAVEFRONTS}",
)
LD_WAVEFRONTS_PER_REQUEST = _d(
    "shared_ld_n_way",
    "shared-load wavefronts per request",
    "wavefronts",
    1,
    WAVEFRONTS_PER_REQUEST_MEANING,
    "lower",
    derived="shared_ld_n_way",
    formula=f"{M.SHARED_LD_WAVEFRONTS} / {M.SHARED_LD_INST}",
)
ST_WAVEFRONTS_PER_REQUEST = _d(
    "shared_st_n_way",
    "shared-store wavefronts per request",
    "wavefronts",
    1,
    WAVEFRONTS_PER_REQUEST_MEANING + "; extra ones keep the MIO queue busy",
    "lower",
    derived="shared_st_n_way",
    formula=f"{M.SHARED_ST_WAVEFRONTS} / {M.SHARED_ST_INST}",
)
DRAM = _d(
    "dram_bytes",
    "DRAM",
    "MB",
    1e-6,
    "bytes read from and written to device memory",
    "lower",
    names=(M.DRAM_BYTES,),
    base_unit="byte",
)
L2 = _d("l2_bytes", "L2", "MB", 1e-6, "bytes moved through L2", "lower", names=(M.L2_BYTES,), base_unit="byte")
L1 = _d("l1_bytes", "L1", "MB", 1e-6, "bytes moved through L1", "lower", names=(M.L1_BYTES,))
TENSOR_INSTRUCTIONS = _d("tensor_inst", "tensor-pipe instructions", "", 1, "", names=(M.TENSOR_INST,))
FP32_TFLOPS = _d(
    "fp32_flops_per_second",
    "FP32 TFLOP/s",
    "TFLOP/s",
    1e-12,
    "FP32 FLOPs ncu counted over the duration",
    "higher",
    derived="fp32_flops_per_second",
    formula=f"({M.FADD} + {M.FMUL} + 2 x {M.FFMA}) / {M.TIME}",
)
FP32_PCT_OF_PEAK = _d(
    "fp32_pct_of_peak",
    "% of FP32 peak",
    "%",
    1,
    "FP32 TFLOP/s against the FMA peak at the report's clock",
    "higher",
    derived="fp32_pct_of_peak",
)
_OF_PEAK = "% of the unit's peak: a share of capacity used, neither better nor worse by itself"
SM_THROUGHPUT = _d("sm_throughput_pct", "SM throughput", "%", 1, _OF_PEAK, names=(M.SM_THROUGHPUT,))
MEMORY_THROUGHPUT = _d("memory_throughput_pct", "memory throughput", "%", 1, _OF_PEAK, names=(M.MEMORY_THROUGHPUT,))
DRAM_THROUGHPUT = _d("dram_throughput_pct", "DRAM throughput", "%", 1, _OF_PEAK, names=(M.DRAM_THROUGHPUT,))
TENSOR_PIPE_BUSY = _d(
    "tensor_pipe_busy",
    "tensor pipe busy (ncu, % of peak)",
    "%",
    1,
    "share of cycles the tensor cores were busy (HMMA from mma.sync, GMMA from wgmma)",
    "higher",
    applies="tensor_core",
    names=(*M.TENSOR_PIPE_BUSY, f"TPC.TriageCompute.{M.TENSOR_PIPE_BUSY[1]}"),
)

# The Why page's counters (profiling.analysis.evidence gives each its stall reasons).
SHARED_WAVEFRONTS = _d(
    "shared_wavefronts",
    "shared-memory wavefronts",
    "",
    1,
    "shared-memory traffic in L1 data-pipe cycles",
    "lower",
    compute=_shared_wavefronts,
    names=(M.SHARED_WAVEFRONTS,),
)
SHARED_LOADS = _d(
    "shared_loads",
    "shared-load instructions (LDS + LDSM)",
    "",
    1,
    "wider loads (LDS.128) and register reuse issue fewer of them",
    "lower",
    compute=shared_load_instructions,
)
FFMA_PER_SHARED_LOAD = _d(
    "ffma_per_shared_load",
    "FFMA per shared load",
    "",
    1,
    "register blocking: how many FMAs each shared-memory load feeds",
    "higher",
    compute=ffma_per_shared_load,
)
GLOBAL_EXCESS_SECTORS = _d(
    "global_excess_sectors",
    "excess global sectors",
    "",
    1,
    "32-byte sectors fetched beyond what the accessed bytes need: uncoalesced or narrow access",
    "lower",
    names=(M.GLOBAL_EXCESS_SECTORS,),
)
GLOBAL_SECTORS_PER_REQUEST = _d(
    "global_sectors_per_request",
    "sectors per global load request",
    "",
    1,
    "32-byte sectors one warp-wide load touches (4 for a coalesced LDG.32)",
    "lower",
    compute=global_sectors_per_request,
)
GLOBAL_LOADS = _d(
    "global_loads",
    "global load instructions (LDG)",
    "",
    1,
    "register-staged loads from global memory",
    "lower",
    names=(M.GLOBAL_LD_INST,),
)
LDGSTS = _d(
    "ldgsts",
    "cp.async copies (LDGSTS)",
    "",
    1,
    "global-to-shared copies that bypass registers and need no wait until the data is used",
    names=(M.LDGSTS_INST,),
)
L2_TRAFFIC = _d("l2_bytes", "L2 traffic", "bytes", 1, "bytes moved through L2", "lower", compute=_l2_bytes)
DRAM_TRAFFIC = _d(
    "dram_bytes",
    "DRAM traffic",
    "bytes",
    1,
    "bytes read from and written to device memory",
    "lower",
    compute=_dram_bytes,
)
ACHIEVED_OCCUPANCY = _d(
    "achieved_occupancy",
    "achieved occupancy",
    "%",
    1,
    ACHIEVED_OCC.meaning,
    "higher",
    derived="achieved_occupancy_pct",
)
REGISTERS_PER_THREAD = _d("registers", "registers per thread", "", 1, REGISTERS.meaning, names=(M.REGISTERS,))
SHARED_BUSY_PER_GFLOP = _d(
    "shared_busy_per_gflop",
    "shared-memory bank cycles per GFLOP",
    "",
    1,
    "shared-memory traffic per unit of work: ldmatrix into registers costs more of it than wgmma reading "
    "its operands from shared memory",
    "lower",
    compute=shared_busy_per_gflop,
)
WAVES_PER_SM = _d("waves", "waves per SM", "", 1, WAVES.meaning, "higher", names=(M.WAVES,))

# The Details page's own figures (profiling.analysis.details lays out these and the ones above by section), in base
# units.
SECTOR_BYTES = 32
WAVEFRONT_BYTES = 128
"""Bytes the L1 data pipe moves in one shared-memory wavefront (one 128-byte row of the 32 banks)."""
# Sectors that pass through L1/TEX for global and local memory (ld, st, atomics, reductions).
_L1_SECTORS = tuple(
    M.L1TEX_SECTORS.format(space=space, op=op)
    for space in ("global", "local")
    for op in ("ld", "st", "atom", "red")
    if not (space == "local" and op in ("atom", "red"))
)


def l1tex_bytes(launch: KernelLaunch) -> float | None:
    """Bytes through L1/TEX for global and local memory: ncu's total, else 32 bytes per sector."""
    direct = launch.value(M.L1_BYTES)
    sectors = _total(*_L1_SECTORS)(launch) if direct is None else None
    return direct if direct is not None else (SECTOR_BYTES * sectors if sectors is not None else None)


def shared_bytes(launch: KernelLaunch) -> float | None:
    """Shared-memory bytes: wavefronts x 128 bytes."""
    wavefronts = launch.value(M.SHARED_WAVEFRONTS)
    return None if wavefronts is None else WAVEFRONT_BYTES * wavefronts


def _peak(key: str, label: str, name: str, better: Direction = "", applies: Applies = "any") -> MetricDef:
    return _d(key, label, "%", 1, _OF_PEAK if not better else "", better, names=(name,), applies=applies)


L1TEX_THROUGHPUT = _peak("l1tex_throughput_pct", "L1/TEX throughput", M.L1TEX_THROUGHPUT)
L2_THROUGHPUT = _peak("l2_throughput_pct", "L2 throughput", M.L2_THROUGHPUT)
ELAPSED_CYCLES = _d("elapsed_cycles", "elapsed cycles", "cycle", 1, "", "lower", names=(M.ELAPSED_CYCLES,))
SM_FREQUENCY = _d("sm_frequency", "SM frequency", "hz", 1, "", names=(M.SM_FREQUENCY,))
PIPES: tuple[MetricDef, ...] = tuple(
    _peak(
        f"pipe_{label.split()[0].lower()}_pct",
        f"{label} pipe",
        M.PIPE_PCT.format(name),
        applies="tensor_core" if label.startswith("tensor") else "any",
    )
    for label, name in (
        ("FMA", "pipe_fma_cycles_active"),
        ("ALU", "pipe_alu_cycles_active"),
        ("LSU", "inst_executed_pipe_lsu"),
        ("tensor (all)", "pipe_tensor_cycles_active"),
        ("tensor (warp group)", "inst_executed_pipe_tensor_op_gmma"),
        ("FP64", "pipe_fp64_cycles_active"),
        ("XU", "inst_executed_pipe_xu"),
        ("ADU", "inst_executed_pipe_adu"),
        ("CBU", "inst_executed_pipe_cbu"),
        ("uniform", "inst_executed_pipe_uniform"),
        ("TMA", "pipe_tma_cycles_active"),
    )
)
"""Each pipe's utilisation, % of its peak (the tensor pipes only for tensor-core work)."""
ISSUE_SLOTS = _peak("issue_slots_pct", "issue slots busy", M.ISSUE_SLOTS, "higher")
L1TEX_BYTES = _d(
    "l1tex_bytes", "L1/TEX bytes (global, local)", "byte", 1, "", "lower", compute=l1tex_bytes, names=(M.L1_BYTES,)
)
L1TEX_HIT_RATE = _peak("l1tex_hit_rate_pct", "L1/TEX hit rate", M.L1TEX_HIT_RATE, "higher")
SHARED_BYTES = _d(
    "shared_bytes", "shared bytes", "byte", 1, "shared-memory wavefronts x 128 bytes", "lower", compute=shared_bytes
)
L2_HIT_RATE = _peak("l2_hit_rate_pct", "L2 hit rate", M.L2_HIT_RATE, "higher")
DRAM_BANDWIDTH = _d("dram_bandwidth", "DRAM bandwidth", "byte/second", 1, "", names=(M.DRAM_BANDWIDTH,))
LIMIT_BARRIERS = _d(
    "limit_barriers", "block limit barriers", "", 1, _LIMIT, "higher", names=(M.LIMIT_BARRIERS,), base_unit="block"
)
GRID_SIZE = _d("grid_size", "grid size", "block", 1, "", names=(M.GRID_SIZE,))
BLOCK_SIZE = _d("block_size", "block size", "thread", 1, "", names=(M.BLOCK_SIZE,))
THREADS = _d("threads", "threads", "thread", 1, "", names=(M.THREADS,))
SM_COUNT = _d("sm_count", "SMs", "SM", 1, "", names=(M.SM_COUNT,))

# ---------------------------------------------------------------------------------------------
# The views built from them
# ---------------------------------------------------------------------------------------------

KEY_TABLE: tuple[MetricDef, ...] = (
    DURATION,
    REGISTERS,
    SMEM_STATIC,
    SMEM_DYNAMIC,
    THEORETICAL_OCC,
    ACHIEVED_OCC,
    LD_CONFLICT_RATE,
    LD_WAVEFRONTS_PER_REQUEST,
    ST_CONFLICT_RATE,
    ST_WAVEFRONTS_PER_REQUEST,
    DRAM,
    L2,
    L1,
    FP32_TFLOPS,
    FP32_PCT_OF_PEAK,
)
"""The Reports page's key-metric table and its side-by-side comparison, in column order."""
REPORT_LINE: tuple[MetricDef, ...] = (DURATION, REGISTERS, THEORETICAL_OCC, ACHIEVED_OCC, DRAM)
"""The `report` command's first line per launch."""
THROUGHPUT: tuple[MetricDef, ...] = (SM_THROUGHPUT, MEMORY_THROUGHPUT, DRAM_THROUGHPUT)
"""Nsight Compute's "GPU Speed Of Light Throughput": what its users read first, % of each unit's peak."""
FRAME_COLUMNS: tuple[MetricDef, ...] = (
    DURATION,
    REGISTERS,
    SMEM_STATIC,
    SMEM_DYNAMIC,
    SMEM_DRIVER,
    LIMIT_REGISTERS,
    LIMIT_SHARED,
    LIMIT_WARPS,
    LIMIT_BLOCKS,
    WAVES,
    DRAM,
    L2,
    L1,
    TENSOR_INSTRUCTIONS,
)
"""The measured columns of profiling.nsight.report.key_metrics_frame (base units), each from its first ncu name."""


def key_table_columns() -> dict[str, tuple[str, float]]:
    """Frame column -> (table heading, display scale) of KEY_TABLE."""
    return {d.key: (d.title, d.scale) for d in KEY_TABLE}


def key_table_help() -> dict[str, str]:
    """Table heading -> the one-line meaning a column's tooltip shows."""
    return {d.title: d.meaning for d in KEY_TABLE if d.meaning}
