"""The quick set's stall ratios: every name is one ncu 2025.3 wrote in the REAL H100 full-set captures, and a raw
page holding only the quick set's columns of those captures (what `profile --set quick` now exports) gives the
same stall breakdown and a complete time split."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import pytest

from profiling.analysis import explain as X
from profiling.analysis import stalls as ST
from profiling.nsight import load as L
from profiling.nsight import metrics as M
from profiling.nsight import report as P

ROOT = Path(__file__).resolve().parent.parent
RAW = ROOT / "results" / "h100-2026-11-22" / "ncu_why_4096_raw.csv"


def quick_columns_only(path: Path) -> str:
    """The capture with its identifying columns (no "__" in the name) and the quick set's metric columns."""
    rows = list(csv.reader(io.StringIO(path.read_text())))
    keep = [i for i, name in enumerate(rows[0]) if "__" not in name or name in M.QUICK_METRICS]
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows([[r[i] for i in keep] for r in rows])
    return out.getvalue()


def test_every_stall_metric_of_the_quick_set_was_captured_on_an_h100() -> None:
    header = next(csv.reader(io.StringIO(RAW.read_text())))
    assert set(M.STALL_METRICS) <= set(header)
    assert set(M.STALL_METRICS) <= set(M.QUICK_METRICS)
    per_issue = [n for n in M.STALL_METRICS if n.endswith("_per_issue_active.ratio")]
    assert {ST.reason_name(n.split("stalled_")[1].split("_per_issue")[0]) for n in per_issue} <= set(ST.REASONS)


def test_a_quick_set_raw_page_gives_the_stall_breakdown_and_the_time_split() -> None:
    quick = P.parse_report_text(quick_columns_only(RAW), source="quick.csv")
    full = L.load_report(RAW)
    assert not any(name.startswith("smsp__pcsamp") for name in quick.launches[0].metrics)  # no sampling in it
    for q, f in zip(quick.launches, full.launches, strict=True):
        mine, theirs = ST.stall_breakdown(q), ST.stall_breakdown(f)
        assert mine.source == "smsp__average_warps_issue_stalled_*_per_issue_active"
        assert mine.values == pytest.approx(theirs.values) and mine.total == pytest.approx(theirs.total)
    by_id = {x.identity.kernel_id: x for x in quick.launches}
    expl = X.explain(by_id["v3"], by_id["v4"])
    assert expl.terms and abs(expl.terms["residual"]) < 0.03
    assert sum(expl.terms.values()) == pytest.approx(math.log(expl.time_after_ns / expl.time_before_ns))
    # what the GPU test checks on a fresh quick-set profile: v3 waits on shared memory far more than v4
    shared = ("short_scoreboard", "mio_throttle")
    v3, v4 = (sum(ST.stall_breakdown(by_id[k]).values.get(r, 0.0) for r in shared) for k in ("v3", "v4"))
    assert v3 > 2 * v4
