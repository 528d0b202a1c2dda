"""Warp-stall breakdown of a launch: why its warps did not issue, per reason, in ncu's own reason names.

Sources, best first (each launch uses the first it has):
- `smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio` (full set raw page; the details page's
  "Warp State Statistics: Stall <Reason>" rows with `--print-details all` are the same numbers): warp cycles per
  issued instruction spent in each state. They add up to ncu's "Warp Cycles Per Issued Instruction"
  (`smsp__average_warp_latency_per_inst_issued.ratio`), and "selected" is the one cycle each issue costs.
- `smsp__average_warp_latency_issue_stalled_<reason>` (ncu's per-reason latency ratios).
- `smsp__warp_issue_stalled_<reason>_per_warp_active.pct` (share of active warp cycles) times the total warp
  cycles per issued instruction when that is known.
- `smsp__pcsamp_warps_issue_stalled_<reason>` (sampled; full set), scaled the same way, else left as samples.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from profiling import metric_names as MN
from profiling.nsight.report import KernelLaunch

if TYPE_CHECKING:
    import pandas as pd

Kind = Literal["cycles_per_issue", "samples"]

# ncu's reason name -> what it means, in one plain line. Order: the reasons GEMM kernels meet most, first.
REASONS: dict[str, str] = {
    "long_scoreboard": "waiting for a global or local memory load (L1TEX) to return its data",
    "short_scoreboard": "waiting for a shared-memory load or another MIO result (special math, shuffles)",
    "mio_throttle": "the MIO queue (shared-memory and other MIO instructions) is full",
    "lg_throttle": "the global/local memory instruction queue (LSU) is full: too many LDG/STG in flight",
    "barrier": "waiting at __syncthreads() for the block's other warps",
    "wait": "a fixed-latency dependency: the previous arithmetic result is not ready yet",
    "math_pipe_throttle": "the math pipe (FMA, tensor) is busy: compute-bound, the good kind of stall",
    "not_selected": "ready, but the scheduler issued another warp: there are warps to spare",
    "selected": "issuing: the one cycle every instruction takes",
    "dispatch_stall": "the dispatcher could not send the chosen instruction on (pipe conflict)",
    "no_instruction": "the next instruction is not fetched yet (instruction cache miss or a branch)",
    "branch_resolving": "waiting for a branch target to be computed",
    "tex_throttle": "the texture queue is full",
    "drain": "after EXIT, waiting for the warp's memory writes to drain",
    "imc_miss": "waiting for an immediate-constant cache miss",
    "membar": "waiting at a memory barrier (fence)",
    "sleeping": "sleeping (nanosleep or a yield)",
    "gmma": "waiting for warpgroup MMA (wgmma) operands or results",
    "warpgroup_arrive": "waiting at a warpgroup arrive/wait for the tensor cores",
    "misc": "a miscellaneous hardware reason",
}

# Spellings that differ between metric families -> the name used here.
_ALIASES = {
    "no_instructions": "no_instruction",
    "stall_no_inst": "no_instruction",
    "dispatch": "dispatch_stall",
    "lg": "lg_throttle",
    "long_sb": "long_scoreboard",
    "short_sb": "short_scoreboard",
    "mio": "mio_throttle",
    "math": "math_pipe_throttle",
    "tex": "tex_throttle",
    "imc": "imc_miss",
    "sleep": "sleeping",
}

_PER_ISSUE = re.compile(r"^smsp__average_warps_issue_stalled_([a-z_]+?)_per_issue_active(?:\.ratio)?$")
_LATENCY = re.compile(r"^smsp__average_warp_latency_issue_stalled_([a-z_]+?)(?:\.ratio)?$")
_PCT_ACTIVE = re.compile(r"^smsp__warp_issue_stalled_([a-z_]+?)_per_warp_active(?:\.pct|\.ratio)?$")
_SAMPLED = re.compile(r"^smsp__pcsamp_warps_issue_stalled_([a-z_]+?)(_not_issued)?$")
# "Warp State Statistics: Stall Long Scoreboard", or with the body table's title between (the parser keys body
# items "Section: Body: Label"): "Warp State Statistics: Warp State (All Cycles): Stall Long Scoreboard".
_DETAILS_LABEL = re.compile(r"^Warp State Statistics: (?:Warp State \(All Cycles\): )?(?:Stall )?(.+)$")


def reason_name(raw: str) -> str:
    """'no_instructions' / 'Stall LG Throttle' / 'long_sb' -> ncu's reason name used here."""
    name = raw.strip().lower().replace(" ", "_").removeprefix("stall_")
    return _ALIASES.get(name, name)


def meaning(reason: str) -> str:
    """The one-line plain meaning of a reason ('' for an unknown one)."""
    return REASONS.get(reason, "")


@dataclass
class StallBreakdown:
    """One launch's stall reasons. `kind` "cycles_per_issue": warp cycles per issued instruction (they add up
    to `total`, ncu's Warp Cycles Per Issued Instruction); "samples": sampled warp states, no scale known."""

    label: str
    kind: Kind
    values: dict[str, float]
    source: str
    """Which metric family the values came from."""
    total: float
    samples: dict[str, float] = field(default_factory=dict)
    """The sampled counts too, when the launch has them."""

    def shares(self) -> dict[str, float]:
        """Each reason's fraction of the total."""
        whole = sum(self.values.values())
        return {r: v / whole for r, v in self.values.items()} if whole else {}

    def top(self, n: int = 3, include_selected: bool = False) -> list[tuple[str, float]]:
        ranked = sorted(self.values.items(), key=lambda kv: -kv[1])
        return [(r, v) for r, v in ranked if include_selected or r != "selected"][:n]

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "kind": self.kind,
            "source": self.source,
            "total": self.total,
            "reasons": [
                {"reason": r, "value": v, "share": s, "meaning": meaning(r)}
                for (r, v), s in zip(self.values.items(), self.shares().values(), strict=True)
            ],
            "samples": self.samples,
        }


def _collect(launch: KernelLaunch, pattern: re.Pattern[str]) -> dict[str, float]:
    found: dict[str, float] = {}
    for name, metric in launch.metrics.items():
        match = pattern.match(name)
        if match:
            reason = reason_name(match.group(1))
            found[reason] = found.get(reason, 0.0) + metric.value
    return found


def sampled_stalls(launch: KernelLaunch, not_issued: bool = False) -> dict[str, float]:
    """`smsp__pcsamp_warps_issue_stalled_*` counts by reason (the `_not_issued` ones when asked)."""
    found: dict[str, float] = {}
    for name, metric in launch.metrics.items():
        match = _SAMPLED.match(name)
        if match and bool(match.group(2)) == not_issued:
            reason = reason_name(match.group(1))
            found[reason] = found.get(reason, 0.0) + metric.value
    return found


def _details_stalls(launch: KernelLaunch) -> dict[str, float]:
    """'Warp State Statistics: Stall Long Scoreboard' rows of a details page (`--print-details all`)."""
    found: dict[str, float] = {}
    for key, metric in launch.unmapped.items():
        match = _DETAILS_LABEL.match(key)
        if not match or metric.unit != "inst":
            continue
        found[reason_name(match.group(1))] = metric.value
    return found


def _ordered(values: dict[str, float]) -> dict[str, float]:
    return dict(sorted(values.items(), key=lambda kv: -kv[1]))


def stall_breakdown(launch: KernelLaunch) -> StallBreakdown | None:
    """The launch's stall breakdown from the best source it has (see the module docstring), or None."""
    label = launch.label
    samples = _ordered(sampled_stalls(launch))
    total_cpi = launch.value(MN.WARP_LATENCY_PER_ISSUE)
    for pattern, source in (
        (_PER_ISSUE, "smsp__average_warps_issue_stalled_*_per_issue_active"),
        (_LATENCY, "smsp__average_warp_latency_issue_stalled_*"),
    ):
        values = _collect(launch, pattern)
        if values:
            return StallBreakdown(label, "cycles_per_issue", _ordered(values), source, sum(values.values()), samples)
    values = _details_stalls(launch)
    if values:
        return StallBreakdown(
            label, "cycles_per_issue", _ordered(values), "details: Warp State Statistics", sum(values.values()), samples
        )
    pct = _collect(launch, _PCT_ACTIVE)
    if pct and total_cpi:
        whole = sum(pct.values())
        values = {r: total_cpi * v / whole for r, v in pct.items()} if whole else {}
        return StallBreakdown(
            label,
            "cycles_per_issue",
            _ordered(values),
            "smsp__warp_issue_stalled_*_per_warp_active",
            total_cpi,
            samples,
        )
    if samples:
        whole = sum(samples.values())
        if total_cpi and whole:
            values = {r: total_cpi * v / whole for r, v in samples.items()}
            return StallBreakdown(
                label,
                "cycles_per_issue",
                values,
                "smsp__pcsamp_* scaled to the warp cycles per issued instruction",
                total_cpi,
                samples,
            )
        return StallBreakdown(label, "samples", samples, "smsp__pcsamp_warps_issue_stalled_*", whole, samples)
    return None


def stalls_frame(launches: list[KernelLaunch], labels: list[str] | None = None) -> pd.DataFrame:
    """Long-form table for a stacked bar per launch.

    Columns: label, reason, value (warp cycles per issued instruction, or samples), share (0-1), kind, meaning.
    Launches without stall data are left out.
    """
    import pandas as pd  # lazy: the CLI starts without pandas

    records = []
    for i, launch in enumerate(launches):
        breakdown = stall_breakdown(launch)
        if breakdown is None:
            continue
        label = labels[i] if labels else breakdown.label
        for reason, value in breakdown.values.items():
            share = value / breakdown.total if breakdown.total else 0.0
            records.append(
                {
                    "label": label,
                    "reason": reason,
                    "value": value,
                    "share": share,
                    "kind": breakdown.kind,
                    "meaning": meaning(reason),
                }
            )
    return pd.DataFrame.from_records(records, columns=["label", "reason", "value", "share", "kind", "meaning"])
