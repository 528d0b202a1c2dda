"""Warp-stall breakdowns on REAL captures: the H100 full-set raw pages, the foreign program's details page."""

from __future__ import annotations

import copy
import gzip
from pathlib import Path

import pytest

from profiling import metric_names as MN
from profiling.analysis import stalls as ST
from profiling.nsight import load as L
from profiling.nsight import report as P
from profiling.nsight import source as S
from profiling.nsight import source_load as SL

ROOT = Path(__file__).resolve().parent.parent
H100 = ROOT / "results" / "h100-2026-11-22"
FOREIGN = ROOT / "tests" / "fixtures" / "foreign"


def capture(name: str) -> Path:
    path = H100 / name
    if not path.is_file():
        pytest.skip(f"real capture {name} not in results/h100-2026-11-22")
    return path


@pytest.fixture(scope="module", params=(1024, 4096))
def raw(request: pytest.FixtureRequest) -> tuple[int, P.Report]:
    return request.param, L.load_report(capture(f"ncu_why_{request.param}_raw.csv"))


def by_id(report: P.Report) -> dict[str, P.KernelLaunch]:
    return {x.identity.kernel_id: x for x in report.launches if x.identity.kernel_id}


def test_per_issue_reasons_add_up_to_ncus_warp_cycles_per_issued_instruction(raw: tuple[int, P.Report]) -> None:
    _, report = raw
    for launch in report.launches:
        breakdown = ST.stall_breakdown(launch)
        assert breakdown is not None and breakdown.kind == "cycles_per_issue"
        assert breakdown.source.endswith("_per_issue_active")
        assert breakdown.total == pytest.approx(launch.value(MN.WARP_LATENCY_PER_ISSUE), rel=0.02)
        assert breakdown.values["selected"] == pytest.approx(1.0, abs=0.002)  # each issue costs one cycle
        assert set(breakdown.values) <= set(ST.REASONS)
        assert all(ST.meaning(r) for r in breakdown.values)


def test_each_ladder_kernel_is_stalled_where_its_design_says(raw: tuple[int, P.Report]) -> None:
    n, report = raw
    kernels = by_id(report)

    def top(kid: str) -> str:
        return ST.stall_breakdown(kernels[kid]).top(1)[0][0]

    assert top("v1") == "lg_throttle"  # uncoalesced: the LSU queue fills with row-strided loads
    assert top("v2") == "mio_throttle"  # 32-way conflicting shared accesses
    assert top("v3") == "short_scoreboard"  # waiting on shared-memory loads in the FMA loop
    assert top("v5") == "short_scoreboard"
    assert top("v8-async") == "not_selected"  # warps to spare: issue-bound
    if n == 4096:
        assert top("v1-coalesced") == "long_scoreboard"
        assert top("v4") == "long_scoreboard"


def test_sampled_stalls_equal_the_source_pages_per_reason(raw: tuple[int, P.Report]) -> None:
    n, report = raw
    page = SL.read_source_file(capture(f"source_why_{n}_sass.csv.gz"))
    for launch, kernel in zip(report.launches, page.kernels, strict=True):
        sampled = {r: v for r, v in ST.sampled_stalls(launch).items() if v}
        assert sampled == {r: v for r, v in kernel.stall_totals().items() if v}
        assert sum(sampled.values()) == launch.value("smsp__pcsamp_sample_count")
        not_issued = {r: v for r, v in ST.sampled_stalls(launch, not_issued=True).items() if v}
        assert sum(not_issued.values()) == sum(i.samples_not_issued for i in kernel.instructions.values())


def test_details_page_warp_state_rows_equal_the_raw_ratios() -> None:
    details = P.parse_report_bytes(gzip.open(FOREIGN / "details_all.csv.gz").read(), source="details_all.csv")
    raw = L.load_report(FOREIGN / "raw.csv")
    raw_by_id = {x.id: x for x in raw.launches}
    checked = 0
    for launch in details.launches:
        mine = ST.stall_breakdown(launch)
        if launch.id not in raw_by_id or mine is None:
            continue
        theirs = ST.stall_breakdown(raw_by_id[launch.id])
        assert mine.source.startswith("details")
        for reason, value in theirs.values.items():
            assert mine.values.get(reason, 0.0) == pytest.approx(value, abs=0.006)  # printed to 2 decimals
        checked += 1
    assert checked >= 10


def test_sampled_counts_alone_are_scaled_to_cycles_per_issue(raw: tuple[int, P.Report]) -> None:
    _, report = raw
    launch = by_id(report)["v5"]
    only_samples = copy.copy(launch)
    only_samples.metrics = {
        k: m
        for k, m in launch.metrics.items()
        if k.startswith("smsp__pcsamp_warps_issue_stalled") or k == MN.WARP_LATENCY_PER_ISSUE
    }
    scaled = ST.stall_breakdown(only_samples)
    assert scaled.kind == "cycles_per_issue" and scaled.source.startswith("smsp__pcsamp")
    assert scaled.total == launch.value(MN.WARP_LATENCY_PER_ISSUE)
    samples = ST.sampled_stalls(launch)
    assert scaled.shares()["short_scoreboard"] == pytest.approx(samples["short_scoreboard"] / sum(samples.values()))
    # The per-issue ratios and the samples agree on what dominates.
    assert scaled.top(1)[0][0] == ST.stall_breakdown(launch).top(1)[0][0]
    del only_samples.metrics[MN.WARP_LATENCY_PER_ISSUE]
    bare = ST.stall_breakdown(only_samples)
    assert bare.kind == "samples" and bare.total == sum(samples.values())


def test_a_quick_set_launch_without_stall_metrics_has_no_breakdown() -> None:
    report = L.load_report(ROOT / "tests" / "fixtures" / "ncu" / "raw.csv")
    assert all(ST.stall_breakdown(x) is None for x in report.launches)


def test_reason_names_across_metric_families() -> None:
    assert ST.reason_name("no_instructions") == "no_instruction"
    assert ST.reason_name("Stall LG Throttle") == "lg_throttle"
    assert ST.reason_name("Long Scoreboard") == "long_scoreboard"
    assert ST.reason_name("Selected") == "selected"
    assert set(S.STALL_COLUMNS.values()) <= set(ST.REASONS)


def test_stalls_frame_for_a_stacked_bar(raw: tuple[int, P.Report]) -> None:
    _, report = raw
    frame = ST.stalls_frame(report.launches[:3])
    assert list(frame.columns) == ["label", "reason", "value", "share", "kind", "meaning"]
    assert frame["label"].nunique() == 3
    assert frame.groupby("label")["share"].sum().round(6).eq(1.0).all()
