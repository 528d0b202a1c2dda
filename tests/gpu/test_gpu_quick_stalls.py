"""On a GPU with ncu: a quick-set profile now carries the per-issue stall ratios, and they say what the ladder
says: v3 waits on shared memory (short_scoreboard, mio_throttle) far more than v4, whose transposed A tile cuts the
bank conflicts. Also the time split of explain works on the quick set alone."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from profiling import metric_names as MN
from profiling.analysis import explain as X
from profiling.analysis import stalls as ST
from profiling.nsight import metrics as M
from profiling.nsight import runner as R
from profiling.paths import tool_path

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(tool_path("ncu") is None, reason="Nsight Compute (ncu) is not installed"),
]


def test_quick_set_profile_of_v3_and_v4_has_stall_ratios(tmp_path: Path) -> None:
    run = R.profile(["v3", "v4"], [(1024, 1024, 1024)], tmp_path / "quick.ncu-rep", metric_set="quick")
    by_id = {x.identity.kernel_id: x for x in run.report.launches}
    assert set(by_id) == {"v3", "v4"}
    shared = {}
    for kid, launch in by_id.items():
        missing = [n for n in M.STALL_METRICS if launch.value(n) is None]
        assert not missing, f"{kid}: ncu gave no value for {missing}"
        breakdown = ST.stall_breakdown(launch)
        assert breakdown.source == "smsp__average_warps_issue_stalled_*_per_issue_active"
        assert breakdown.total == pytest.approx(launch.value(MN.WARP_LATENCY_PER_ISSUE), rel=0.03)
        assert breakdown.values["selected"] == pytest.approx(1.0, abs=0.01)
        shared[kid] = breakdown.values.get("short_scoreboard", 0.0) + breakdown.values.get("mio_throttle", 0.0)
    assert shared["v3"] > 2 * shared["v4"], shared
    assert ST.stall_breakdown(by_id["v3"]).top(1)[0][0] == "short_scoreboard"
    expl = X.explain(by_id["v3"], by_id["v4"])
    assert expl.terms and abs(expl.terms["residual"]) < 0.05
    assert sum(expl.terms.values()) == pytest.approx(math.log(expl.time_after_ns / expl.time_before_ns))
    assert {"shared_ld_n_way", "stall:short_scoreboard"} & {i.key for i in expl.top(3)}
