"""Explain a step: what changed between two launches and how much each change explains of the time.

The time of a launch splits exactly into factors ncu measures per SM sub-partition (SMSP):

    duration = instructions issued x (warp cycles per issued instruction / active warps per scheduler)
               / (share of elapsed cycles the SMSPs were active) / (SM cycles per ns)

and warp cycles per issued instruction is the sum of its stall reasons (profiling.analysis.stalls). So
ln(time after / time before) is a sum of terms: the instruction count, one term per stall reason (its cycles per
issued instruction divided by the active warps: its share of each scheduler's issue slots), idle SMs (too few
blocks, a tail) and the clock. The "selected" reason is one cycle per instruction, so its term is the change in
warps per scheduler. The terms rank the stall reasons; other counters (profiling.analysis.evidence: wavefronts
per shared request, bytes, occupancy, FFMA per shared load...) rank by their own relative change weighted by the terms of the
stall reasons they drive, i.e. by what limits the kernel. Every number and sentence comes from the two launches.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from kernels.catalog import CATALOG, catalog_entry, library_ids, reference_for
from kernels.spec import KernelSpec
from profiling import metric_names as M
from profiling.analysis import evidence as E
from profiling.analysis import stalls as ST
from profiling.nsight import metric_registry as R
from profiling.nsight.report import KernelLaunch
from profiling.nsight.source import KernelSource

CLOCK_SHOWN = math.log(1.005)
"""A clock change of 0.5 % or more is ranked, and named in the summary where it is a third of the time's change or
more (under ncu at 8192^3 on an H200, wgmma-streamk ran 5.1 % below cuBLAS's clock in 4.1 % fewer cycles)."""
MAX_LOG_RATIO = math.log(64.0)
"""A counter that appears or vanishes (0 -> x) counts as a 64x change, no more."""
TIME, ISSUED, WARPS, ACTIVE, ELAPSED = M.TIME, M.ISSUED, M.WARPS_PER_SCHEDULER, M.SMSP_ACTIVE_CYCLES, M.SMSP_CYCLES


@dataclass
class Item:
    """One ranked entry: a term of the time split, or a counter."""

    key: str
    label: str
    unit: str
    before: float
    after: float
    score: float
    carried: float
    """The ln-time change this term carries, or that the counter's stall reasons carry together."""
    sentence: str
    short: str

    @property
    def effect_pct(self) -> float:
        """The time change `carried` alone would make, in %."""
        return 100.0 * (math.exp(self.carried) - 1.0)

    def to_dict(self) -> dict[str, Any]:
        data = {k: getattr(self, k) for k in ("key", "label", "unit", "before", "after", "score", "carried")}
        return {**data, "effect_pct": self.effect_pct, "sentence": self.sentence, "short": self.short}


@dataclass
class Explanation:
    """What `explain` shows for two launches."""

    baseline: str
    candidate: str
    baseline_id: str | None = None
    candidate_id: str | None = None
    adds: str | None = None
    time_before_ns: float | None = None
    time_after_ns: float | None = None
    tflops_before: float | None = None
    tflops_after: float | None = None
    clock_before_ghz: float | None = None
    clock_after_ghz: float | None = None
    """The SM clock over each launch: its elapsed cycles over its duration. At a power limit the kernel that does the
    same work in fewer cycles can still take longer, at a lower clock."""
    pct_of_reference_before: float | None = None
    pct_of_reference_after: float | None = None
    reference_name: str = "cuBLAS"
    """What "% of" names: "cuBLAS", or the library kernel's title where the data lacks the operation's reference."""
    items: list[Item] = field(default_factory=list)
    terms: dict[str, float] = field(default_factory=dict)
    stalls_before: ST.StallBreakdown | None = None
    stalls_after: ST.StallBreakdown | None = None
    hot_lines_before: list[dict[str, Any]] = field(default_factory=list)
    hot_lines_after: list[dict[str, Any]] = field(default_factory=list)
    summary: str = ""
    warnings: list[str] = field(default_factory=list)
    tensor_core: bool = False
    """Whether either launch did tensor-core work (its identity): only then are tensor-core counters weighed."""

    def top(self, n: int = 3) -> list[Item]:
        return self.items[:n]

    def to_dict(self) -> dict[str, Any]:
        skip = {"items", "stalls_before", "stalls_after"}
        data = {k: v for k, v in self.__dict__.items() if k not in skip}
        data["items"] = [i.to_dict() for i in self.items]
        data["stalls_before"] = self.stalls_before.to_dict() if self.stalls_before else None
        data["stalls_after"] = self.stalls_after.to_dict() if self.stalls_after else None
        return data


def _log_ratio(before: float, after: float) -> float:
    """ln(after / before); a value that appears or vanishes counts as a 64x change."""
    if before <= 0 and after <= 0:
        return 0.0
    floor = max(before, after) / 64.0
    return max(-MAX_LOG_RATIO, min(MAX_LOG_RATIO, math.log(max(after, floor) / max(before, floor))))


def _log_mean(a: float, b: float) -> float:
    if a <= 0 or b <= 0:
        return max(a, b, 1e-30)
    return a if abs(a - b) <= 1e-12 * a else (a - b) / math.log(a / b)


def fmt(value: float, unit: str = "") -> str:
    """A counter value for a sentence: '17.0' (wavefronts), '48%', '318.2 MB', '41.94M', '16.00'."""
    if unit == "wavefronts":
        return f"{value:.1f}"
    if unit == "%":
        return f"{value:.0f}%"
    if unit == "bytes":
        return f"{value / 1e6:,.1f} MB"
    if unit == "GHz":
        return f"{value:.3f} GHz"
    if abs(value) >= 1e6:
        return f"{value / 1e6:,.2f}M"
    if abs(value) >= 100 or value == int(value):
        return f"{value:,.0f}"
    return f"{value:.2f}"


def change_text(before: float, after: float) -> str:
    """'+35%', '-99%', '12x', 'new', 'gone'."""
    if before == 0:
        return "new"
    if after == 0:
        return "gone"
    ratio = after / before
    return f"{ratio:.0f}x" if ratio >= 10 else f"{100 * (ratio - 1):+.0f}%"


def launch_clock_ghz(launch: KernelLaunch) -> float | None:
    """The SM clock over a launch in GHz (SMSP elapsed cycles per ns of its duration), None without both metrics."""
    cycles, ns = launch.value(ELAPSED), launch.value(TIME)
    return cycles / ns if cycles and ns else None


def time_terms(b: KernelLaunch, a: KernelLaunch, sb: ST.StallBreakdown | None, sa: ST.StallBreakdown | None) -> dict:
    """The ln-time terms ("instructions", "stall:<reason>", "sm_utilization", "clock", "residual"), or {} when a
    launch lacks the instruction, warp or per-issue stall metrics (the quick set before it had stall ratios)."""
    values = [(x.value(TIME), x.value(ISSUED), x.value(WARPS), x.value(ACTIVE), x.value(ELAPSED)) for x in (b, a)]
    if any(not v for pair in values for v in pair) or not sb or not sa:
        return {}
    if sb.kind != "cycles_per_issue" or sa.kind != "cycles_per_issue":
        return {}
    (tb, nb, wb, actb, elb), (ta, na, wa, acta, ela) = values
    reasons = list(dict.fromkeys([*sb.values, *sa.values]))
    slot_b = {r: sb.values.get(r, 0.0) / wb for r in reasons}
    slot_a = {r: sa.values.get(r, 0.0) / wa for r in reasons}
    scale = _log_mean(sum(slot_a.values()), sum(slot_b.values()))
    terms = {"instructions": math.log(na / nb)}
    terms.update({f"stall:{r}": (slot_a[r] - slot_b[r]) / scale for r in reasons})
    terms[E.UTILIZATION] = -math.log((acta / ela) / (actb / elb))
    terms["clock"] = -math.log(launch_clock_ghz(a) / launch_clock_ghz(b))
    terms["residual"] = math.log(ta / tb) - sum(terms.values())
    return terms


def explain(
    baseline: KernelLaunch,
    candidate: KernelLaunch,
    reference_before: KernelLaunch | None = None,
    reference_after: KernelLaunch | None = None,
    source_before: KernelSource | None = None,
    source_after: KernelSource | None = None,
) -> Explanation:
    """The ranked explanation of `candidate` against `baseline` (see the module docstring). The references
    (cuBLAS of the same shape) give % of cuBLAS; the source-page kernels give the hottest lines."""
    hb, ha = baseline.identity, candidate.identity
    out = Explanation(
        baseline=baseline.label,
        candidate=candidate.label,
        baseline_id=hb.kernel_id,
        candidate_id=ha.kernel_id,
        adds=next((s.adds for s in CATALOG if ha.ours and s.id == ha.kernel_id), None),
        tensor_core=hb.tensor_core or ha.tensor_core,
        time_before_ns=baseline.value(TIME),
        time_after_ns=candidate.value(TIME),
        tflops_before=R.launch_tflops(baseline),
        tflops_after=R.launch_tflops(candidate),
        stalls_before=ST.stall_breakdown(baseline),
        stalls_after=ST.stall_breakdown(candidate),
        clock_before_ghz=launch_clock_ghz(baseline),
        clock_after_ghz=launch_clock_ghz(candidate),
    )
    for ref, kernel, side in ((reference_before, baseline, "before"), (reference_after, candidate, "after")):
        ref_ns, ns = (ref.value(TIME) if ref else None), kernel.value(TIME)
        if ref_ns and ns:
            setattr(out, f"pct_of_reference_{side}", 100.0 * ref_ns / ns)
            out.reference_name = reference_name(ref)
    if hb.shape and ha.shape and hb.shape != ha.shape:
        out.warnings.append("the two launches ran different sizes: compare their counters with care")
    out.terms = time_terms(baseline, candidate, out.stalls_before, out.stalls_after)
    if not out.terms:
        out.warnings.append(
            "no time split: it needs instructions issued, active warps and per-issue stall reasons in both launches "
            "(the full set); counters are weighted by the stall shares alone"
        )
    out.items = _rank(baseline, candidate, out)
    out.summary = summary_line(out)
    if source_before is not None:
        out.hot_lines_before = source_before.hottest_lines(5)
    if source_after is not None:
        out.hot_lines_after = source_after.hottest_lines(5)
    return out


def _weight(reasons: tuple[str, ...], out: Explanation) -> tuple[float, float]:
    """(0-1 weight, ln-time carried) of a counter's stall reasons: from the time split, else the stall shares."""
    if out.terms:
        carried = sum(out.terms.get(r if r == E.UTILIZATION else f"stall:{r}", 0.0) for r in reasons)
        magnitude = sum(abs(v) for k, v in out.terms.items() if k != "residual") or 1.0
        return min(1.0, abs(carried) / magnitude), carried
    shares = [s.shares() for s in (out.stalls_before, out.stalls_after) if s is not None and s.total]
    if not shares:
        return 0.5, 0.0  # nothing says what limits the kernel: rank by the change alone
    return min(1.0, max(sum(sh.get(r, 0.0) for r in reasons) for sh in shares)), 0.0


def _term_items(b: KernelLaunch, a: KernelLaunch, out: Explanation) -> list[Item]:
    items = []
    for key, term in out.terms.items():
        effect = f"on its own {100 * (math.exp(term) - 1):+.0f}% time"
        if key == "stall:selected":
            wb, wa = b.value(WARPS), a.value(WARPS)
            sentence = (
                f"active warps per scheduler {wb:.2f} -> {wa:.2f}: each issue is one cycle of one warp, so "
                f"fewer warps must each issue more ({effect})"
            )
            items.append(
                Item(
                    key,
                    "warps per scheduler",
                    "",
                    wb,
                    wa,
                    abs(term),
                    term,
                    sentence,
                    f"warps per scheduler {wb:.1f} -> {wa:.1f}",
                )
            )
        elif key.startswith("stall:"):
            reason = key.split(":", 1)[1]
            cb, ca = out.stalls_before.values.get(reason, 0.0), out.stalls_after.values.get(reason, 0.0)
            stall_b, stall_a = cb * b.value(ISSUED) / b.value(WARPS), ca * a.value(ISSUED) / a.value(WARPS)
            pct = f"{100 * (stall_a / stall_b - 1):+.0f}%" if stall_b else "appeared"
            sentence = (
                f"{reason} ({ST.meaning(reason)}): {cb:.2f} -> {ca:.2f} warp cycles per issued "
                f"instruction, {pct} stall cycles per scheduler ({effect})"
            )
            items.append(
                Item(
                    key, f"{reason} stalls", "cycles/inst", cb, ca, abs(term), term, sentence, f"{reason} stalls {pct}"
                )
            )
        elif key == "instructions":
            nb, na = b.value(ISSUED), a.value(ISSUED)
            sentence = f"instructions issued {fmt(nb)} -> {fmt(na)} ({effect} at the same cycles per instruction)"
            items.append(
                Item(
                    key,
                    "instructions issued",
                    "",
                    nb,
                    na,
                    abs(term),
                    term,
                    sentence,
                    f"instructions {100 * (na / nb - 1):+.0f}%",
                )
            )
        elif key == E.UTILIZATION:
            ub, ua = (100 * x.value(ACTIVE) / x.value(ELAPSED) for x in (b, a))
            sentence = (
                f"schedulers active {ub:.0f}% -> {ua:.0f}% of the elapsed time; the rest idle for want of "
                f"blocks, or in the tail ({effect})"
            )
            items.append(
                Item(
                    key, "schedulers active", "%", ub, ua, abs(term), term, sentence, f"SMs busy {ub:.0f}% -> {ua:.0f}%"
                )
            )
        elif key == "clock" and abs(term) >= CLOCK_SHOWN and out.clock_before_ghz and out.clock_after_ghz:
            cb, ca = out.clock_before_ghz, out.clock_after_ghz
            sentence = (
                f"SM clock {cb:.3f} -> {ca:.3f} GHz (elapsed cycles per ns of the launch): at a power limit the clock "
                f"falls with the power a kernel draws ({effect} at the same cycles)"
            )
            items.append(
                Item(key, "SM clock", "GHz", cb, ca, abs(term), term, sentence, f"SM clock {cb:.2f} -> {ca:.2f} GHz")
            )
    return items


def _rank(b: KernelLaunch, a: KernelLaunch, out: Explanation) -> list[Item]:
    items = _term_items(b, a, out)
    for counter in E.COUNTERS:
        if counter.applies == "tensor_core" and not out.tensor_core:
            continue
        before, after = counter.get(b), counter.get(a)
        if before is None or after is None or not E.occupancy_moved(counter, b, a):
            continue
        change = _log_ratio(before, after)
        if abs(change) < math.log(1.05):
            continue
        weight, carried = _weight(counter.reasons, out)
        improved = (after < before) if counter.better == "lower" else (after > before)
        agrees = not counter.better or not carried or improved == (carried < 0)
        score = abs(change) * weight * (1.0 if agrees else 0.3)
        pct = change_text(before, after)
        sentence = (
            f"{counter.label} {fmt(before, counter.unit)} -> {fmt(after, counter.unit)} ({pct}): {counter.meaning}"
        )
        if carried:
            sentence += f"; {E.group_name(counter.reasons)} carry {100 * (math.exp(carried) - 1):+.0f}% time"
        short = f"{counter.label} {fmt(before, counter.unit)} -> {fmt(after, counter.unit)}"
        items.append(Item(counter.key, counter.label, counter.unit, before, after, score, carried, sentence, short))
    items.sort(key=lambda i: -i.score)
    # A counter whose stall reasons an earlier counter already stands for adds less: wavefronts per request and
    # the wavefront total of the same loads tell one story.
    seen: set[tuple[str, ...]] = set()
    groups = {c.key: c.reasons for c in E.COUNTERS}
    for item in items:
        group = groups.get(item.key)
        if group is not None:
            if group in seen:
                item.score *= 0.5
            seen.add(group)
    items.sort(key=lambda i: -i.score)
    return items


def summary_line(expl: Explanation, top: int = 3) -> str:
    """'v3 -> v4: time -47% (512.6 -> 273.8 us); shared-load wavefronts per request 17.0 -> 5.0; ...'."""
    head = f"{expl.baseline_id or expl.baseline} -> {expl.candidate_id or expl.candidate}"
    parts = []
    if expl.time_before_ns and expl.time_after_ns:
        pct = 100 * (expl.time_after_ns / expl.time_before_ns - 1)
        parts.append(f"time {pct:+.0f}% ({expl.time_before_ns / 1e3:,.1f} -> {expl.time_after_ns / 1e3:,.1f} us)")
        clocks = expl.clock_before_ghz, expl.clock_after_ghz
        if clocks[0] and clocks[1] and _clock_tells(expl.time_after_ns / expl.time_before_ns, clocks[1] / clocks[0]):
            # time = cycles / clock: say which of the two moved the time
            cycles = expl.time_after_ns * clocks[1] / (expl.time_before_ns * clocks[0])
            parts.append(
                f"cycles {100 * (cycles - 1):+.1f}% at a {100 * (clocks[1] / clocks[0] - 1):+.1f}% SM clock "
                f"({clocks[0]:.3f} -> {clocks[1]:.3f} GHz)"
            )
    parts.extend(i.short for i in expl.top(top) if i.key != "clock")
    return f"{head}: " + "; ".join(parts)


def _clock_tells(time_ratio: float, clock_ratio: float) -> bool:
    """Whether the clock is part of the story: it moved CLOCK_SHOWN or more, and by at least a third of the time
    (a 47 % faster step whose launch ran at a 0.7 % lower clock is told by its cycles)."""
    moved = abs(math.log(clock_ratio))
    return moved >= CLOCK_SHOWN and 3 * moved >= abs(math.log(time_ratio))


def ladder_steps() -> list[tuple[str, str]]:
    """(previous, kernel) for every catalog step (the tile-width study aside), in catalog order."""
    return [(s.previous, s.id) for s in CATALOG if s.previous and s.group != "tile-width"]


def _catalog_spec(launch: KernelLaunch) -> KernelSpec | None:
    """The catalog entry of one of our launches (None for other programs' kernels and tuning configurations)."""
    ident = launch.identity
    return next((s for s in CATALOG if ident.ours and s.id == ident.kernel_id), None)


def reference_launch(launches: list[KernelLaunch], launch: KernelLaunch) -> KernelLaunch | None:
    """The library launch `launch` is compared with in `launches`: its operation's reference (kernels.catalog) at
    the same M; where the data has none, another library kernel of that operation at that M (a capture made when
    the AddMM's reference was cublas-hgemm); None for launches that are not catalog kernels."""
    ident = launch.identity
    spec = _catalog_spec(launch)
    ref = reference_for(spec) if spec else None
    if spec is None or ref is None:
        return None
    others = sorted(k for k in library_ids() if k != ref.id and catalog_entry(k).operation == spec.operation)
    for kernel_id in (ref.id, *others):
        found = find_launch(launches, kernel_id, ident.m)
        if found is not None:
            return found
    return None


def reference_name(reference: KernelLaunch | None) -> str:
    """How "% of ..." names `reference`: "cuBLAS" for an operation's own reference, else the kernel's title."""
    if reference is None or not reference.identity.ours:
        return "cuBLAS"
    kernel_id = reference.identity.kernel_id
    spec = catalog_entry(kernel_id)
    return "cuBLAS" if reference_for(spec) is spec else spec.title


def is_side_launch(launch: KernelLaunch) -> bool:
    """A launch in a catalog kernel's NVTX range that is one of split-K's helpers, not the step
    (LaunchIdentity.is_split_k_helper)."""
    return launch.identity.is_split_k_helper(launch.function)


def kernel_launches(launches: list[KernelLaunch], kernel_id: str, size: int | None = None) -> list[KernelLaunch]:
    """The launches of catalog kernel `kernel_id` (with M = `size` when given), shape by shape in report order; of
    one shape's, the GEMM first, then the helpers (is_side_launch), and among GEMM launches the longest first, so
    cuBLAS's split-K GEMM comes before its reduction."""
    found = [
        x
        for x in launches
        if x.identity.ours and x.identity.kernel_id == kernel_id and (size is None or x.identity.m == size)
    ]
    first_seen: dict[str, int] = {}
    for n, x in enumerate(found):
        first_seen.setdefault(x.identity.size, n)
    return sorted(found, key=lambda x: (first_seen[x.identity.size], is_side_launch(x), -(x.value(TIME) or 0.0)))


def find_launch(launches: list[KernelLaunch], kernel_id: str, size: int | None = None) -> KernelLaunch | None:
    """The first launch of catalog kernel `kernel_id` (with M = `size` when given), of its entry function if it
    has one there (kernel_launches)."""
    found = kernel_launches(launches, kernel_id, size)
    return found[0] if found else None
