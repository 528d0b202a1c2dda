"""Property tests (Hypothesis) of the numbers a report gives: a real capture (tests/fixtures/ncu/raw.csv) with
negative, non-finite, decimal-comma and unit cells put in, several exports in one file, and gzip files of several
members. The property each time: the value is the capture's own, or missing with a warning naming the metric;
never another number.

Few examples per test and a fixed seed (derandomized), so that they run in CI in a few seconds; like
tests/test_fuzz_parsers.py, GEMMLENS_FUZZ_EXAMPLES=2000 runs more, and new ones each time.
"""

from __future__ import annotations

import csv
import gzip
import io
import os
from pathlib import Path

import pytest

from profiling.nsight import load as L
from profiling.nsight import report as P
from profiling.nsight import units as U
from profiling.nsight.raw_page import round3

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

EXAMPLES = int(os.environ.get("GEMMLENS_FUZZ_EXAMPLES", "25"))
PROPERTY = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize="GEMMLENS_FUZZ_EXAMPLES" not in os.environ,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
RAW = Path(__file__).parent / "fixtures" / "ncu" / "raw.csv"
ROWS = list(csv.reader(io.StringIO(RAW.read_text(encoding="utf-8-sig"))))
HEADER, UNITS = ROWS[0], ROWS[1]
PLAIN = P.parse_report_bytes(RAW.read_bytes(), "raw.csv")
# Metrics whose values cannot be negative (a duration, bytes, registers, instructions) and one of each kind of unit.
COUNTS = ("gpu__time_duration.sum", "dram__bytes.sum", "launch__registers_per_thread", "smsp__inst_executed.sum")
COUNT_COLS = [HEADER.index(name) for name in COUNTS if name in HEADER]


def csv_bytes(rows: list[list[str]]) -> bytes:
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    return out.getvalue().encode("utf-8")


def edited(cells: dict[tuple[int, int], str]) -> P.Report:
    """raw.csv with cells[(row, column)] replaced (row 0 is the first launch)."""
    rows = [list(r) for r in ROWS]
    for (r, c), text in cells.items():
        rows[r + 2][c] = text
    return P.parse_report_bytes(csv_bytes(rows), "edited.csv")


def unchanged_elsewhere(report: P.Report, changed: set[tuple[int, str]]) -> None:
    for r, (launch, base) in enumerate(zip(report.launches, PLAIN.launches, strict=True)):
        for name in COUNTS:
            if (r, name) not in changed:
                assert launch.value(name) == base.value(name), (r, name)


launch_index = st.integers(0, len(PLAIN.launches) - 1)
count_column = st.sampled_from(COUNT_COLS)


@PROPERTY
@given(
    st.dictionaries(st.tuples(launch_index, count_column), st.floats(max_value=-1e-300, min_value=-1e300), max_size=6)
)
def test_negative_counts_are_missing_with_a_warning(cells: dict[tuple[int, int], float]) -> None:
    report = edited({k: repr(v) for k, v in cells.items()})
    changed = {(r, HEADER[c]) for r, c in cells}
    for r, name in changed:
        assert report.launches[r].value(name) is None
        assert any(w.startswith(f"{name}: value '-") and "is negative" in w for w in report.warnings), name
    unchanged_elsewhere(report, changed)


@PROPERTY
@given(
    st.dictionaries(
        st.tuples(launch_index, count_column),
        st.sampled_from(["nan", "NaN", "inf", "-inf", "Infinity", "1e400", "-1e400"]),
        min_size=1,
        max_size=6,
    )
)
def test_non_finite_cells_are_missing_with_a_warning(cells: dict[tuple[int, int], str]) -> None:
    report = edited(cells)
    changed = {(r, HEADER[c]) for r, c in cells}
    for r, name in changed:
        assert report.launches[r].value(name) is None
        assert any(w.startswith(f"{name}: value ") for w in report.warnings), name
    unchanged_elsewhere(report, changed)


@PROPERTY
@given(st.floats(min_value=0, max_value=1e12, allow_nan=False), launch_index, count_column)
def test_decimal_comma_is_never_read_as_another_number(x: float, r: int, c: int) -> None:
    german = f"{x:,.2f}".replace(",", "_").replace(".", ",").replace("_", ".")  # 1234.5 -> "1.234,50"
    english = f"{x:,.2f}"  # "1,234.50"
    assert U.parse_number(german) is None and U.malformed_number(german)
    assert U.parse_number(english) == float(english.replace(",", ""))
    report = edited({(r, c): german})
    name = HEADER[c]
    assert report.launches[r].value(name) is None
    assert any(w.startswith(f"{name}: value {german!r}") and "decimal comma" in w for w in report.warnings)
    unchanged_elsewhere(report, {(r, name)})


units = st.one_of(
    st.sampled_from(
        ["ns", "us", "ms", "usecond", "Kbyte", "Mbyte", "Gbyte/s", "cycle", "inst", "%", "register/thread"]
    ),
    st.text(alphabet="abcdefghijklmnopqrstuvwxyzKMGT/%", min_size=1, max_size=12),
)


@PROPERTY
@given(units, st.integers(1, 10**6))
def test_a_unit_is_read_as_its_scale_or_not_at_all(unit: str, raw: int) -> None:
    column = HEADER.index("dram__bytes.sum")
    rows = [list(r) for r in ROWS]
    rows[1][column] = unit
    rows[2][column] = str(raw)
    report = P.parse_report_bytes(csv_bytes(rows), "units.csv")
    value = report.launches[0].value("dram__bytes.sum")
    if U.unit_problem(unit) is not None:
        assert value is None and all(launch.value("dram__bytes.sum") is None for launch in report.launches)
        assert any("is not an Nsight Compute unit; its values are not read" in w for w in report.warnings)
    else:
        factor, _ = U.to_base(unit)
        expected = raw * factor if factor <= 1.0 else float(round3(__import__("numpy").array([raw * factor]))[0])
        assert value == expected


@PROPERTY
@given(st.integers(1, 4), st.integers(0, 10))
def test_concatenated_exports_give_every_launch_and_no_header_launch(copies: int, keep: int) -> None:
    """`copies` exports in one file, each with its first `keep` launches."""
    part = csv_bytes([HEADER, UNITS, *ROWS[2 : 2 + keep]])
    report_or_error: P.Report | None
    try:
        report_or_error = P.parse_report_bytes(part * copies, "concatenated.csv")
    except P.ReportError as exc:
        assert keep == 0 and "no kernel launches" in str(exc)
        return
    report = report_or_error
    assert len(report.launches) == copies * keep
    assert not any(launch.id == "ID" or launch.name == "Kernel Name" for launch in report.launches)
    for i, launch in enumerate(report.launches):
        assert launch.value("gpu__time_duration.sum") == PLAIN.launches[i % keep].value("gpu__time_duration.sum")
    assert sum("repeats the header" in w for w in report.warnings) == copies - 1


@PROPERTY
@given(st.lists(st.integers(1, len(RAW.read_bytes()) - 1), max_size=5, unique=True), st.integers(0, 9))
def test_multi_member_gzip_reads_every_member(cuts: list[int], level: int) -> None:
    data = RAW.read_bytes()
    edges = [0, *sorted(cuts), len(data)]
    packed = b"".join(gzip.compress(data[a:b], compresslevel=level) for a, b in zip(edges, edges[1:], strict=False))
    report = L.load_upload("members.csv.gz", packed)
    assert [launch.value("gpu__time_duration.sum") for launch in report.launches] == [
        launch.value("gpu__time_duration.sum") for launch in PLAIN.launches
    ]
