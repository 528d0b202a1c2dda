"""The counters an explanation weighs (profiling.analysis.explain): each read from a launch in either metric set
(the quick set's names or the full set's), with the stall reasons it drives and one neutral line on what it is."""

from __future__ import annotations

from dataclasses import dataclass

from profiling.nsight import metric_registry as R
from profiling.nsight.metric_registry import MetricDef
from profiling.nsight.report import KernelLaunch

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


@dataclass(frozen=True)
class Counter:
    """A measured quantity (its MetricDef: label, unit, meaning, direction, what it applies to) and the stall
    reasons through which it moves time; `through_occupancy`: it moves them only by changing how many warps fit."""

    metric: MetricDef
    reasons: tuple[str, ...]
    through_occupancy: bool = False

    @property
    def key(self) -> str:
        return self.metric.key

    @property
    def label(self) -> str:
        return self.metric.label

    @property
    def unit(self) -> str:
        return self.metric.unit

    @property
    def better(self) -> str:
        """ "lower", "higher", or "" when neither direction is better in itself."""
        return self.metric.better

    @property
    def meaning(self) -> str:
        return self.metric.meaning

    @property
    def applies(self) -> str:
        return self.metric.applies

    def get(self, launch: KernelLaunch) -> float | None:
        return self.metric.base_value(launch)


COUNTERS: tuple[Counter, ...] = (
    Counter(R.LD_WAVEFRONTS_PER_REQUEST, SHARED),
    Counter(R.ST_WAVEFRONTS_PER_REQUEST, SHARED),
    Counter(R.SHARED_WAVEFRONTS, SHARED),
    Counter(R.SHARED_LOADS, SHARED),
    Counter(R.FFMA_PER_SHARED_LOAD, SHARED),
    Counter(R.GLOBAL_EXCESS_SECTORS, GLOBAL),
    Counter(R.GLOBAL_SECTORS_PER_REQUEST, GLOBAL),
    Counter(R.GLOBAL_LOADS, GLOBAL),
    Counter(R.LDGSTS, GLOBAL),
    Counter(R.L2_TRAFFIC, GLOBAL),
    Counter(R.DRAM_TRAFFIC, ("long_scoreboard",)),
    Counter(R.ACHIEVED_OCCUPANCY, LATENCY),
    Counter(R.REGISTERS_PER_THREAD, LATENCY, through_occupancy=True),
    Counter(R.TENSOR_PIPE_BUSY, (UTILIZATION,)),
    Counter(R.SHARED_BUSY_PER_GFLOP, SHARED),
    Counter(R.WAVES_PER_SM, (UTILIZATION,)),
)


def occupancy_moved(counter: Counter, before: KernelLaunch, after: KernelLaunch) -> bool:
    """Whether a through-occupancy counter can have moved time between the launches: the most warps an SM holds
    (theoretical occupancy) differs, or is unknown in one of them. 202 -> 255 registers with one 256-thread block
    per SM either way leaves the warps that hide latency as they were."""
    if not counter.through_occupancy:
        return True
    occ = [R.THEORETICAL_OCC.base_value(x) for x in (before, after)]
    return None in occ or abs(occ[0] - occ[1]) > 0.5
