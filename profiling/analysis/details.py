"""A launch's Details view, as Nsight Compute's Details page arranges it but in one readable screen.

Speed-of-Light (SM, memory, L1/TEX, L2, DRAM as % of peak), pipe utilisation, the memory hierarchy (L1/TEX,
shared memory, L2, DRAM: bytes, throughput, hit rate) with the flows between its levels, occupancy with the limit
each resource sets, launch statistics, and the rules whole, sorted by estimated speedup.

Every figure is a metric of the report (ncu `--set full` names, checked on gh100 with ncu 2025.3.1) or one
product of them, listed once in DETAIL_METRICS with its label, unit and direction; the comparison of two launches
(profiling.analysis.launch_compare) reads the same list. A metric the report lacks (a `--set basic` capture) is
None, never a guess.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from profiling import metric_names as MN
from profiling.nsight.model import Finding, KernelLaunch

Direction = Literal["higher", "lower", "neutral"]
"""Which way a change is good: "higher" (throughput, hit rate), "lower" (time, bytes moved), "neutral"."""
SECTOR_BYTES = 32
WAVEFRONT_BYTES = 128
"""Bytes the L1 data pipe moves in one shared-memory wavefront (one 128-byte row of the 32 banks)."""


@dataclass(frozen=True)
class DetailMetric:
    """One figure of the Details view: where it is shown, its label, the metric (or product) it reads."""

    section: str
    label: str
    name: str
    unit: str
    direction: Direction


_SOL = "Speed of Light"
_PIPES = "Pipe utilisation"
_MEMORY = "Memory"
_OCC = "Occupancy"
_LAUNCH = "Launch"

DETAIL_METRICS: tuple[DetailMetric, ...] = (
    DetailMetric(_SOL, "Duration", MN.TIME, "ns", "lower"),
    DetailMetric(_SOL, "Compute (SM) throughput", MN.SM_THROUGHPUT, "%", "higher"),
    DetailMetric(_SOL, "Memory throughput", MN.MEMORY_THROUGHPUT, "%", "neutral"),
    DetailMetric(_SOL, "L1/TEX throughput", "l1tex__throughput.avg.pct_of_peak_sustained_active", "%", "neutral"),
    DetailMetric(_SOL, "L2 throughput", "lts__throughput.avg.pct_of_peak_sustained_elapsed", "%", "neutral"),
    DetailMetric(_SOL, "DRAM throughput", MN.DRAM_THROUGHPUT, "%", "neutral"),
    DetailMetric(_SOL, "Elapsed cycles", "gpc__cycles_elapsed.max", "cycle", "lower"),
    DetailMetric(_SOL, "SM frequency", "gpc__cycles_elapsed.avg.per_second", "hz", "neutral"),
    DetailMetric(_PIPES, "FMA", "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", "%", "neutral"),
    DetailMetric(_PIPES, "ALU", "sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active", "%", "neutral"),
    DetailMetric(_PIPES, "LSU", "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active", "%", "neutral"),
    DetailMetric(
        _PIPES, "Tensor (all)", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", "%", "neutral"
    ),
    DetailMetric(
        _PIPES,
        "Tensor (warp group)",
        "sm__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_active",
        "%",
        "neutral",
    ),  # fmt: skip
    DetailMetric(_PIPES, "FP64", "sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active", "%", "neutral"),
    DetailMetric(_PIPES, "XU", "sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active", "%", "neutral"),
    DetailMetric(_PIPES, "ADU", "sm__inst_executed_pipe_adu.avg.pct_of_peak_sustained_active", "%", "neutral"),
    DetailMetric(_PIPES, "CBU", "sm__inst_executed_pipe_cbu.avg.pct_of_peak_sustained_active", "%", "neutral"),
    DetailMetric(_PIPES, "Uniform", "sm__inst_executed_pipe_uniform.avg.pct_of_peak_sustained_active", "%", "neutral"),
    DetailMetric(_PIPES, "TMA", "sm__pipe_tma_cycles_active.avg.pct_of_peak_sustained_active", "%", "neutral"),
    DetailMetric(_PIPES, "Issue slots busy", "sm__inst_issued.avg.pct_of_peak_sustained_elapsed", "%", "higher"),
    DetailMetric(_MEMORY, "L1/TEX bytes (global, local)", "l1tex_bytes", "byte", "lower"),
    DetailMetric(_MEMORY, "L1/TEX hit rate", "l1tex__t_sector_hit_rate.pct", "%", "higher"),
    DetailMetric(_MEMORY, "Shared bytes", "shared_bytes", "byte", "lower"),
    DetailMetric(_MEMORY, "Shared wavefronts", MN.SHARED_WAVEFRONTS, "", "lower"),
    DetailMetric(_MEMORY, "L2 bytes", MN.L2_BYTES, "byte", "lower"),
    DetailMetric(_MEMORY, "L2 hit rate", "lts__t_sector_hit_rate.pct", "%", "higher"),
    DetailMetric(_MEMORY, "DRAM bytes", MN.DRAM_BYTES, "byte", "lower"),
    DetailMetric(_MEMORY, "DRAM bandwidth", "dram__bytes.sum.per_second", "byte/second", "neutral"),
    DetailMetric(_OCC, "Theoretical occupancy", MN.THEORETICAL_OCC, "%", "higher"),
    DetailMetric(_OCC, "Achieved occupancy", MN.ACHIEVED_OCC, "%", "higher"),
    DetailMetric(_OCC, "Block limit: registers", MN.LIMIT_REGISTERS, "block", "higher"),
    DetailMetric(_OCC, "Block limit: shared memory", MN.LIMIT_SHARED, "block", "higher"),
    DetailMetric(_OCC, "Block limit: warps", MN.LIMIT_WARPS, "block", "higher"),
    DetailMetric(_OCC, "Block limit: SM", MN.LIMIT_BLOCKS, "block", "higher"),
    DetailMetric(_OCC, "Block limit: barriers", "launch__occupancy_limit_barriers", "block", "higher"),
    DetailMetric(_LAUNCH, "Grid size", "launch__grid_size", "block", "neutral"),
    DetailMetric(_LAUNCH, "Block size", "launch__block_size", "thread", "neutral"),
    DetailMetric(_LAUNCH, "Registers per thread", MN.REGISTERS, "register", "lower"),
    DetailMetric(_LAUNCH, "Static shared memory per block", MN.SMEM_STATIC, "byte", "neutral"),
    DetailMetric(_LAUNCH, "Dynamic shared memory per block", MN.SMEM_DYNAMIC, "byte", "neutral"),
    DetailMetric(_LAUNCH, "Waves per SM", MN.WAVES, "", "neutral"),
    DetailMetric(_LAUNCH, "Threads", "launch__thread_count", "thread", "neutral"),
    DetailMetric(_LAUNCH, "SMs", "launch__sm_count", "SM", "neutral"),
)
BY_NAME: dict[str, DetailMetric] = {m.name: m for m in DETAIL_METRICS}

# Sectors that pass through L1/TEX for global and local memory (ld, st, atomics, reductions).
_L1_SECTORS = tuple(
    f"l1tex__t_sectors_pipe_lsu_mem_{space}_op_{op}.sum"
    for space in ("global", "local")
    for op in ("ld", "st", "atom", "red")
    if not (space == "local" and op in ("atom", "red"))
)
_LIMITS = {
    MN.LIMIT_REGISTERS: "registers",
    MN.LIMIT_SHARED: "shared memory",
    MN.LIMIT_WARPS: "warps",
    MN.LIMIT_BLOCKS: "blocks per SM",
    "launch__occupancy_limit_barriers": "barriers",
}


def value(launch: KernelLaunch, name: str) -> float | None:
    """A Details figure of a launch: a metric of the report, or one of the two products listed here (L1/TEX bytes
    from its sectors, shared bytes from its wavefronts); None when the report lacks what it needs."""
    if name == "l1tex_bytes":
        direct = launch.value(MN.L1_BYTES)
        if direct is not None:
            return direct
        sectors = [launch.value(n) for n in _L1_SECTORS]
        return SECTOR_BYTES * sum(s for s in sectors if s is not None) if any(s is not None for s in sectors) else None
    if name == "shared_bytes":
        wavefronts = launch.value(MN.SHARED_WAVEFRONTS)
        return None if wavefronts is None else WAVEFRONT_BYTES * wavefronts
    return launch.value(name)


@dataclass
class Figure:
    """One labelled value of the view, in base units (None: the report lacks it)."""

    label: str
    name: str
    value: float | None
    unit: str


@dataclass
class MemoryLevel:
    """One level of the memory chart: bytes moved, their rate over the launch, hit rate and % of its peak."""

    level: str
    bytes: float | None
    bytes_per_second: float | None
    hit_rate_pct: float | None
    peak_pct: float | None


@dataclass
class Occupancy:
    """Theoretical and achieved occupancy, and the blocks per SM each resource allows (the smallest limits)."""

    theoretical_pct: float | None
    achieved_pct: float | None
    limits: dict[str, float] = field(default_factory=dict)

    @property
    def limiters(self) -> list[str]:
        """The resources that set the block count (all that tie at the smallest limit)."""
        if not self.limits:
            return []
        low = min(self.limits.values())
        return [name for name, blocks in self.limits.items() if blocks == low]


@dataclass
class Details:
    """Everything the Details view shows for one launch."""

    speed_of_light: list[Figure]
    pipes: list[Figure]
    memory: list[MemoryLevel]
    flows: list[tuple[str, str, float]]
    """(from, to, bytes) between the kernel and the memory levels, for the flow chart."""
    occupancy: Occupancy
    launch: list[Figure]
    rules: list[Finding]


def _figures(launch: KernelLaunch, section: str) -> list[Figure]:
    return [Figure(m.label, m.name, value(launch, m.name), m.unit) for m in DETAIL_METRICS if m.section == section]


def _rate(moved: float | None, seconds: float | None) -> float | None:
    return moved / seconds if moved is not None and seconds else None


def rules_by_speedup(findings: list[Finding]) -> list[Finding]:
    """Rule results, the largest estimated speedup first, rules without an estimate after them in report order."""
    return sorted(findings, key=lambda f: (f.estimated_speedup_pct is None, -(f.estimated_speedup_pct or 0.0)))


def details(launch: KernelLaunch) -> Details:
    """The Details view of one launch (see the module docstring)."""
    duration = launch.value(MN.TIME)
    seconds = duration / 1e9 if duration else None
    l1 = value(launch, "l1tex_bytes")
    shared = value(launch, "shared_bytes")
    l2 = launch.value(MN.L2_BYTES)
    dram = launch.value(MN.DRAM_BYTES)
    memory = [
        MemoryLevel(
            "L1/TEX", l1, _rate(l1, seconds), launch.value("l1tex__t_sector_hit_rate.pct"),
            launch.value("l1tex__throughput.avg.pct_of_peak_sustained_active"),
        ),
        MemoryLevel(
            "Shared", shared, _rate(shared, seconds), None,
            launch.value("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed"),
        ),
        MemoryLevel(
            "L2", l2, _rate(l2, seconds), launch.value("lts__t_sector_hit_rate.pct"),
            launch.value("lts__throughput.avg.pct_of_peak_sustained_elapsed"),
        ),
        MemoryLevel(
            "DRAM", dram, launch.value("dram__bytes.sum.per_second") or _rate(dram, seconds), None,
            launch.value(MN.DRAM_THROUGHPUT),
        ),
    ]  # fmt: skip
    l1_to_l2 = [launch.value("l1tex__m_xbar2l1tex_read_bytes.sum"), launch.value("l1tex__m_l1tex2xbar_write_bytes.sum")]
    flows = [
        ("Kernel", "L1/TEX", l1),
        ("Kernel", "Shared", shared),
        ("L1/TEX", "L2", sum(v for v in l1_to_l2 if v is not None) if any(v is not None for v in l1_to_l2) else None),
        ("L2", "DRAM", dram),
    ]
    limits = {label: launch.value(name) for name, label in _LIMITS.items()}
    return Details(
        speed_of_light=_figures(launch, _SOL),
        pipes=sorted(_figures(launch, _PIPES), key=lambda f: -(f.value or 0.0)),
        memory=memory,
        flows=[(a, b, v) for a, b, v in flows if v],
        occupancy=Occupancy(
            launch.value(MN.THEORETICAL_OCC),
            launch.value(MN.ACHIEVED_OCC),
            {k: v for k, v in limits.items() if v is not None},
        ),
        launch=_figures(launch, _LAUNCH),
        rules=rules_by_speedup(list(launch.findings)),
    )
