"""Launch configurations for the occupancy calculator (profiling.analysis.occupancy), read from results documents
and ncu reports, and why achieved occupancy falls short of theoretical."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from profiling import metric_names as MN
from profiling.nsight import report as ncu_report
from profiling.runs.results import ResultsDocument
from profiling.shape import INT32_MAX


@dataclass(frozen=True)
class LaunchConfig:
    """What theoretical occupancy needs about one kernel, plus ncu's achieved value when known."""

    name: str
    source: str
    cc: str
    threads: int
    registers: int
    shared_mem: int
    achieved_pct: float | None = None
    ncu_theoretical_pct: float | None = None
    waves_per_sm: float | None = None


def launch_configs_from_bench(document: ResultsDocument) -> list[LaunchConfig]:
    """One config per compiled kernel in a results document (block, registers, static + dynamic smem)."""
    cc = document.device.cc or "9.0"
    seen: dict[str, LaunchConfig] = {}
    for r in document.results:
        block = (r.launch or {}).get("block")
        if r.kernel in seen or not r.registers or not block:
            continue
        threads = math.prod(int(b) for b in block)
        seen[r.kernel] = LaunchConfig(r.kernel, "benchmark", cc, threads, r.registers, r.shared_bytes or 0)
    return list(seen.values())


def launch_configs_from_reports(reports: Sequence[tuple[str, ncu_report.Report]]) -> list[LaunchConfig]:
    """One config per launch in ncu reports (launch__* metrics), with ncu's theoretical and achieved occupancy."""
    out = []
    for source, report in reports:
        for launch in report.launches:
            threads = _count(launch.value(MN.BLOCK_SIZE) or (math.prod(launch.block) if launch.block else None))
            regs = _count(launch.value(MN.REGISTERS))
            smem = _count((launch.value(MN.SMEM_STATIC) or 0) + (launch.value(MN.SMEM_DYNAMIC) or 0))
            if not threads or not regs or smem is None:
                continue
            out.append(
                LaunchConfig(
                    name=launch.label,
                    source=source,
                    cc=str(launch.cc or "9.0"),
                    threads=threads,
                    registers=regs,
                    shared_mem=smem,
                    achieved_pct=launch.derived.get("achieved_occupancy_pct"),
                    ncu_theoretical_pct=launch.derived.get("theoretical_occupancy_pct"),
                    waves_per_sm=launch.value(MN.WAVES),
                )
            )
    return out


def _count(value: float | None) -> int | None:
    """A launch attribute (threads, registers, bytes) as an int; None when it is missing, not finite, or more than
    any launch can have (an edited or corrupt report: 1e30 registers), so that launch is left out like one without."""
    if value is None or not math.isfinite(value) or not 0 <= value <= INT32_MAX:
        return None
    return int(value)


def occupancy_gap_note(theoretical_pct: float, achieved_pct: float | None, waves_per_sm: float | None) -> str | None:
    """Why achieved occupancy falls well short of theoretical, in words; None when the gap is small.

    A grid of less than one wave leaves SMs idle for the whole kernel and a partial last wave idles them at the
    end; otherwise warps and blocks finishing unevenly leave slots empty until the next block is scheduled.
    """
    if achieved_pct is None or theoretical_pct <= 0:
        return None
    gap = theoretical_pct - achieved_pct
    if gap < max(5.0, 0.2 * theoretical_pct):
        return None
    reasons = []
    if waves_per_sm is not None and waves_per_sm < 1:
        reasons.append(
            f"the grid fills only {waves_per_sm:.2f} of one wave, so most SMs hold fewer blocks than they could "
            "(more, smaller blocks or a larger problem fill them)"
        )
    elif waves_per_sm is not None and waves_per_sm < 4 and waves_per_sm % 1 < 0.5:
        reasons.append(
            f"{waves_per_sm:.2f} waves: the partial last wave leaves SMs idle at the end of the kernel (tail effect)"
        )
    reasons.append("warps and blocks finishing at different times leave slots empty until the next block starts")
    return (
        f"Achieved {achieved_pct:.1f}% is {gap:.1f} points below the theoretical {theoretical_pct:.1f}%: "
        + "; ".join(reasons)
        + "."
    )
