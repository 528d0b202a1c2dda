"""A launch's Details view, as Nsight Compute's Details page arranges it but in one readable screen.

Speed-of-Light (SM, memory, L1/TEX, L2, DRAM as % of peak), pipe utilisation, the memory hierarchy (L1/TEX,
shared memory, L2, DRAM: bytes, throughput, hit rate) with the flows between its levels, occupancy with the limit
each resource sets, launch statistics, and the rules whole, sorted by estimated speedup.

Every figure is a metric of the report (ncu `--set full` names, checked on gh100 with ncu 2025.3.1) or one
product of them, defined in the metric registry (profiling.nsight.metric_registry: label, unit, direction) and laid
out here by section (DETAIL_METRICS); the comparison of two launches (profiling.analysis.launch_compare) reads the
same list. A metric the report lacks (a `--set basic` capture) is
None, never a guess.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from profiling import metric_names as MN
from profiling.nsight import metric_registry as R
from profiling.nsight.metric_registry import MetricDef
from profiling.nsight.model import Finding, KernelLaunch

Direction = Literal["higher", "lower", "neutral"]
"""Which way a change is good: "higher" (throughput, hit rate), "lower" (time, bytes moved), "neutral"."""


@dataclass(frozen=True)
class DetailMetric:
    """One figure of the Details view: the section it is shown in and the registry's definition of it (label,
    unit, direction and how it is read are the registry's, so every view words it the same)."""

    section: str
    metric: MetricDef

    @property
    def name(self) -> str:
        """The ncu name it reads (the registry key for a product of several)."""
        return self.metric.names[0] if self.metric.names else self.metric.key

    @property
    def label(self) -> str:
        return self.metric.label

    @property
    def unit(self) -> str:
        return self.metric.raw_unit

    @property
    def direction(self) -> Direction:
        return self.metric.better or "neutral"


_SOL = "Speed of Light"
_PIPES = "Pipe utilisation"
_MEMORY = "Memory"
_OCC = "Occupancy"
_LAUNCH = "Launch"
_LAYOUT: tuple[tuple[str, tuple[MetricDef, ...]], ...] = (
    (
        _SOL,
        (
            R.DURATION,
            R.SM_THROUGHPUT,
            R.MEMORY_THROUGHPUT,
            R.L1TEX_THROUGHPUT,
            R.L2_THROUGHPUT,
            R.DRAM_THROUGHPUT,
            R.ELAPSED_CYCLES,
            R.SM_FREQUENCY,
        ),
    ),
    (_PIPES, (*R.PIPES, R.ISSUE_SLOTS)),
    (
        _MEMORY,
        (
            R.L1TEX_BYTES,
            R.L1TEX_HIT_RATE,
            R.SHARED_BYTES,
            R.SHARED_WAVEFRONTS,
            R.L2,
            R.L2_HIT_RATE,
            R.DRAM,
            R.DRAM_BANDWIDTH,
        ),
    ),
    (
        _OCC,
        (
            R.THEORETICAL_OCC,
            R.ACHIEVED_OCC,
            R.LIMIT_REGISTERS,
            R.LIMIT_SHARED,
            R.LIMIT_WARPS,
            R.LIMIT_BLOCKS,
            R.LIMIT_BARRIERS,
        ),
    ),
    (_LAUNCH, (R.GRID_SIZE, R.BLOCK_SIZE, R.REGISTERS, R.SMEM_STATIC, R.SMEM_DYNAMIC, R.WAVES, R.THREADS, R.SM_COUNT)),
)
DETAIL_METRICS: tuple[DetailMetric, ...] = tuple(DetailMetric(s, m) for s, defs in _LAYOUT for m in defs)
BY_NAME: dict[str, DetailMetric] = {m.name: m for m in DETAIL_METRICS}

_LIMITS = {
    MN.LIMIT_REGISTERS: "registers",
    MN.LIMIT_SHARED: "shared memory",
    MN.LIMIT_WARPS: "warps",
    MN.LIMIT_BLOCKS: "blocks per SM",
    MN.LIMIT_BARRIERS: "barriers",
}


def value(launch: KernelLaunch, name: str) -> float | None:
    """A Details figure of a launch by the name it reads (DetailMetric.name) as the registry reads it, or any other
    metric of the report; None when the report lacks what it needs."""
    known = BY_NAME.get(name)
    return known.metric.base_value(launch) if known is not None else launch.value(name)


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
    return [
        Figure(m.label, m.name, value(launch, m.name), m.unit)
        for m in DETAIL_METRICS
        if m.section == section and m.metric.shown_for(launch)
    ]


def _rate(moved: float | None, seconds: float | None) -> float | None:
    return moved / seconds if moved is not None and seconds else None


def rules_by_speedup(findings: list[Finding]) -> list[Finding]:
    """Rule results, the largest estimated speedup first, rules without an estimate after them in report order."""
    return sorted(findings, key=lambda f: (f.estimated_speedup_pct is None, -(f.estimated_speedup_pct or 0.0)))


def details(launch: KernelLaunch) -> Details:
    """The Details view of one launch (see the module docstring)."""
    duration = launch.value(MN.TIME)
    seconds = duration / 1e9 if duration else None
    l1 = R.L1TEX_BYTES.base_value(launch)
    shared = R.SHARED_BYTES.base_value(launch)
    l2 = launch.value(MN.L2_BYTES)
    dram = launch.value(MN.DRAM_BYTES)
    memory = [
        MemoryLevel(
            "L1/TEX",
            l1,
            _rate(l1, seconds),
            launch.value(MN.L1TEX_HIT_RATE),
            launch.value(MN.L1TEX_THROUGHPUT),
        ),
        MemoryLevel(
            "Shared",
            shared,
            _rate(shared, seconds),
            None,
            launch.value(MN.SHARED_PIPE_PCT),
        ),
        MemoryLevel(
            "L2",
            l2,
            _rate(l2, seconds),
            launch.value(MN.L2_HIT_RATE),
            launch.value(MN.L2_THROUGHPUT),
        ),
        MemoryLevel(
            "DRAM",
            dram,
            launch.value(MN.DRAM_BANDWIDTH) or _rate(dram, seconds),
            None,
            launch.value(MN.DRAM_THROUGHPUT),
        ),
    ]
    l1_to_l2 = [launch.value(MN.L2_TO_L1_BYTES), launch.value(MN.L1_TO_L2_BYTES)]
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
