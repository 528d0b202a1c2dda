"""Whether two layouts of one report (raw page, details CSV, text output, summary) say the same: the same launches,
the same function names, and the same value for every metric both hold, to the precision ncu printed.

ncu prints auto-scaled units ("1.84 Tbyte/s", "345.18 us") with two decimals on the details page and six on the raw
page, so two readings of one value agree when they differ by less than half a unit in the last printed place of the
coarser one (and by at most 0.6 % for a value printed with few significant digits).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from profiling import metric_names as MN
from profiling.nsight import metrics as M
from profiling.nsight.model import KernelLaunch, Report

# ncu 2025.3.1 prints this sampling counter as "byte" on the details page and "warp" on the raw page (the same
# count): its value is compared, not its unit. Its raw export prints no unit for idc__requests.sum, which the
# .ncu-rep itself (read by the ncu-report wheel) gives as "request".
NCU_UNIT_QUIRKS = {"smsp__pcsamp_warps_issue_stalled_membar", MN.IDC_REQUESTS}
# ncu 2025.3.1's `--print-units base` export gets these wrong against its own default export of the same report
# (tests/fixtures/foreign/base_units): a per-Kbyte ratio is scaled the wrong way (1.164 %/Kbyte printed as
# 1,164 %/byte, not 0.001164), and a minimum that rounds to 0 % is printed unrounded as -0.15 %. They are listed
# apart, not counted as agreement or as our parser's error.
NCU_BASE_UNIT_QUIRKS = {
    "derived__pct_occupancy_per_shared_mem_size": "ncu scales a per-Kbyte ratio the wrong way in base units",
    MN.TENSOR_PIPE_MIN_PCT: (
        "ncu prints an unrounded negative minimum in base units where the default export rounds it to 0"
    ),
}
_SCALED_UNITS = ("byte", "hz", "cycle", "inst", "nsecond", "sector", "request", "warp", "thread", "wavefront")


@dataclass
class Agreement:
    """What comparing one layout with the reference found."""

    launches: int
    reference_launches: int
    names_agree: bool
    compared: int = 0
    disagreements: list[str] = field(default_factory=list)
    ncu_quirks: list[str] = field(default_factory=list)
    """Differences that are ncu's own (NCU_BASE_UNIT_QUIRKS), kept apart from disagreements."""

    @property
    def values_agree(self) -> bool:
        return self.compared > 0 and not self.disagreements


def printed_tolerance(value: float, unit: str) -> float:
    """Half a unit in the second decimal of `value` as ncu's auto units print it (the SI prefix it picks)."""
    base = unit.split("/", 1)[0]
    scale = 1.0
    if base in _SCALED_UNITS and abs(value) >= 1000:
        scale = 1000.0 ** math.floor(math.log10(abs(value)) / 3)
    return 0.0051 * scale


def values_agree(a: float, b: float, unit: str) -> bool:
    """Two readings of one metric agree to the precision ncu printed them with."""
    if a == b:
        return True
    tolerance = max(printed_tolerance(a, unit), printed_tolerance(b, unit), 0.006 * max(abs(a), abs(b)))
    return abs(a - b) <= tolerance


def _paired(reference: Report, other: Report) -> list[tuple[KernelLaunch, KernelLaunch]]:
    """Launches paired by id where both have ids that match, else in order."""
    by_id = {launch.id: launch for launch in reference.launches}
    if all(launch.id in by_id for launch in other.launches):
        return [(by_id[launch.id], launch) for launch in other.launches]
    return list(zip(reference.launches, other.launches, strict=False))


def _check(result: Agreement, where: str, name: str, mine: float, unit: str, theirs: float, their_unit: str) -> None:
    result.compared += 1
    same_unit = unit == their_unit or name in NCU_UNIT_QUIRKS
    if not same_unit or not values_agree(mine, theirs, unit):
        found = f"{where} {name}: {mine:g} {unit} vs {theirs:g} {their_unit}"
        (result.ncu_quirks if name in NCU_BASE_UNIT_QUIRKS else result.disagreements).append(found)


def compare(reference: Report, other: Report, names_only: bool = False) -> Agreement:
    """Compare `other` with `reference` (the raw page, usually): launch count, function names, and every canonical
    metric both hold that the report printed (derived stand-ins of M.FALLBACKS are left out). A per-kernel summary
    is compared with the mean, minimum and maximum of the reference's launches of each kernel (name, block, grid)."""
    if other.layout == "summary":
        return _compare_summary(reference, other)
    pairs = _paired(reference, other)
    names = len(reference.launches) == len(other.launches) and all(a.function == b.function for a, b in pairs)
    result = Agreement(len(other.launches), len(reference.launches), names)
    if names_only:
        return result
    for a, b in pairs:
        for name, metric in b.metrics.items():
            mine = a.metrics.get(name)
            if mine is None or metric.derived_from or mine.derived_from:
                continue
            _check(result, f"launch {b.id}", name, mine.value, mine.unit, metric.value, metric.unit)
    return result


def _compare_summary(reference: Report, summary: Report) -> Agreement:
    groups: dict[tuple[str, object, object], list[KernelLaunch]] = {}
    for launch in reference.launches:
        groups.setdefault((launch.name, launch.block, launch.grid), []).append(launch)
    found = [groups.get((s.name, s.block, s.grid), []) for s in summary.launches]
    names = sorted(groups) == sorted((s.name, s.block, s.grid) for s in summary.launches) and all(
        len(group) == (s.invocations or 0) for s, group in zip(summary.launches, found, strict=True)
    )
    result = Agreement(sum(s.invocations or 0 for s in summary.launches), len(reference.launches), names)
    for kernel, group in zip(summary.launches, found, strict=True):
        for name, metric in kernel.metrics.items():
            values = [launch.metrics.get(name) for launch in group]
            if not values or any(v is None or v.derived_from for v in values) or metric.derived_from:
                continue
            numbers = [v.value for v in values]
            unit = values[0].unit
            where = f"kernel {kernel.function}"
            _check(result, where, name, sum(numbers) / len(numbers), unit, metric.value, metric.unit)
            if metric.minimum is not None and metric.maximum is not None:
                _check(result, where, f"{name} (min)", min(numbers), unit, metric.minimum, metric.unit)
                _check(result, where, f"{name} (max)", max(numbers), unit, metric.maximum, metric.unit)
    return result


def derived_sources(report: Report) -> dict[str, str]:
    """Metric name -> formula, for each M.FALLBACKS metric some launch of `report` got from its other metrics."""
    found: dict[str, str] = {}
    for launch in report.launches:
        for target, *_ in M.FALLBACKS:
            metric = launch.metrics.get(target)
            if metric is not None and metric.derived_from:
                found.setdefault(target, metric.derived_from)
    return found
