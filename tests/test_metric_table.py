"""The compact metric store behind the raw page: `launch.metrics` keeps a dict's API over a shared table.

Checked on the real raw capture (tests/fixtures/ncu/raw.csv), against the same values as plain dicts.
"""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

import numpy as np
import pytest

from profiling.nsight import load as L
from profiling.nsight import metrics as M
from profiling.nsight import report as P
from profiling.nsight.metric_table import MetricRow, MetricTable
from profiling.nsight.raw_page import round3

RAW = Path(__file__).parent / "fixtures" / "ncu" / "raw.csv"
REGS = "launch__registers_per_thread"


@pytest.fixture(scope="module")
def report() -> P.Report:
    return L.load_report(RAW)


def test_raw_launches_share_one_table_and_read_like_dicts(report: P.Report) -> None:
    first, second = report.launches[0], report.launches[1]
    assert isinstance(first.metrics, MetricRow)
    assert first.metrics._table is second.metrics._table  # names and units stored once per report
    plain = dict(first.metrics.items())
    assert len(first.metrics) == len(plain) == len(list(first.metrics)) > 300
    assert first.metrics == plain and plain == dict(first.metrics)
    assert first.metrics[M.TIME] == P.Metric(first.value(M.TIME), "nsecond")
    assert first.metrics.get("no__such.metric") is None and "no__such.metric" not in first.metrics
    assert 42 not in first.metrics
    with pytest.raises(KeyError):
        first.metrics["no__such.metric"]
    assert all(isinstance(v, float) for v in first.metric_values().values())
    # Missing values (n/a) are absent, not NaN: every listed metric has a finite value.
    assert all(np.isfinite(m.value) for m in first.metrics.values())


def test_assignment_and_deletion(report: P.Report) -> None:
    launch = copy.deepcopy(report.launches[0])
    other = report.launches[1]
    before = other.value(REGS)
    metrics = launch.metrics
    metrics[REGS] = P.Metric(7.0, "register/thread")  # same unit: written into the table row
    assert launch.value(REGS) == 7.0 and metrics[REGS].unit == "register/thread"
    metrics[M.TIME] = P.Metric(5.0, "usecond")  # another unit: kept aside, and wins
    assert metrics[M.TIME] == P.Metric(5.0, "usecond") and launch.value(M.TIME) == 5.0
    metrics["gemmlens__extra.sum"] = P.Metric(1.0, "", minimum=0.5, maximum=2.0)
    assert list(metrics)[-1] == "gemmlens__extra.sum" and metrics["gemmlens__extra.sum"].minimum == 0.5
    assert list(metrics).count(M.TIME) == 1
    n = len(metrics)
    del metrics[REGS]
    assert REGS not in metrics and len(metrics) == n - 1 and launch.value(REGS) is None
    with pytest.raises(KeyError):
        del metrics[REGS]
    assert metrics.setdefault(REGS, P.Metric(9.0, "register/thread")).value == 9.0
    assert other.value(REGS) == before  # other launches' rows are untouched


def test_pickle_and_deepcopy_keep_values(report: P.Report) -> None:
    again = pickle.loads(pickle.dumps(report))
    assert [launch.to_dict() for launch in again.launches] == [launch.to_dict() for launch in report.launches]
    assert again.launches[0].metrics._table is again.launches[1].metrics._table
    copied = copy.deepcopy(report.launches[2])
    assert copied.to_dict() == report.launches[2].to_dict()


def test_derived_per_block_equals_derive_per_launch(report: P.Report) -> None:
    """The raw page's derived metrics come from derive_columns over a block; one launch through derive()
    gives the same numbers to the bit, with the same keys in the same order."""
    for launch in report.launches:
        one = M.derive(dict(launch.metric_values()))
        assert list(one.items()) == list(launch.derived.items())
    assert list(report.launches[0].derived) == [n for n in M.DERIVED_NAMES if n in report.launches[0].derived]


def test_merge_adds_details_metrics_to_raw_launches(report: P.Report) -> None:
    raw = L.load_report(RAW)
    details = L.load_report(RAW.parent / "details.csv")
    extra = {n for launch in details.launches for n in launch.metrics} - {n for n in raw.launches[0].metrics}
    P.merge_findings(raw, details)
    assert raw.launches[0].findings
    assert all(name in raw.launches[0].metrics for name in extra if name in details.launches[0].metrics)
    assert raw.launches[0].value(M.TIME) == report.launches[0].value(M.TIME)  # the raw page's value stays


def test_table_checks_its_inputs() -> None:
    with pytest.raises(ValueError, match="unique"):
        MetricTable(["a", "a"], ["", ""])
    table = MetricTable(["a", "b"], ["ns", ""])
    with pytest.raises(ValueError, match="C-contiguous"):
        table.rows(np.zeros((2, 3)))
    rows = table.rows(np.array([[1.0, np.nan], [np.nan, np.nan]]))
    assert dict(rows[0]) == {"a": P.Metric(1.0, "ns")} and dict(rows[1]) == {} and len(rows[1]) == 0


@pytest.mark.parametrize(
    "value",
    [0.0005, 0.0015, 2.0005, 1.0005, 509471.99999999994, 1234.5675, -0.0025, 4.4209920000000005e6, 1e16 + 0.5, 2.0**52],
)
def test_round3_rounds_as_python_does(value: float) -> None:
    assert round3(np.array([value]))[0] == round(value, 3)
