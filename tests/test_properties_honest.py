"""Property tests (Hypothesis) of the numbers a report gives: a real capture (tests/fixtures/ncu/raw.csv) with
negative, non-finite, decimal-comma and unit cells put in, several exports in one file, and gzip files of several
members. The property each time: the value is the capture's own, or missing with a warning naming the metric;
never another number. And `report --json` of any such file, written a row at a time from the float table, is the
report's model written whole by orjson, byte for byte.

Few examples per test and a fixed seed (derandomized), so that they run in CI in a few seconds; like
tests/test_fuzz_parsers.py, GEMMLENS_FUZZ_EXAMPLES=2000 runs more, and new ones each time. Hypothesis is imported
outright (requirements-dev.txt pins it): without it these tests fail rather than skip.
"""

from __future__ import annotations

import csv
import gzip
import io
import os
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from profiling.commands import json_bytes
from profiling.commands.report import json_chunks
from profiling.nsight import load as L
from profiling.nsight import report as P
from profiling.nsight import units as U
from profiling.nsight.raw_page import round3

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


def whole_json(report: P.Report) -> bytes:
    """`report --json` as orjson writes the model whole (json_bytes of each launch's to_dict(), its metrics moved
    last), with the streamed document's line breaks."""
    lines = []
    for launch in report.launches:
        data = launch.to_dict()
        metrics = data.pop("metrics")
        lines.append(json_bytes(data)[:-1] + b',"metrics":' + json_bytes(metrics) + b"}")
    head = json_bytes({"source": report.source, "layout": report.layout})[:-1] + b',"launches":['
    tail = b"\n]," + json_bytes({"warnings": report.warnings})[1:] + b"\n"
    return head + (b"\n" + b",\n".join(lines) if lines else b"") + tail


odd_cells = st.sampled_from(
    ["-5", "-0.001", "nan", "-inf", "1e400", "1.234,5", "1,234", "1,2,3", "12 fortnight", "n/a", "", "  7  ", "abc"]
    + ['say "hi"', '","', 'x"\n"y', "two\nlines", "0.509472", "4,420,992.5", "\u00e9t\u00e9", "1e-7", "123456789e10"]
)


METRIC_COLS = [c for c, name in enumerate(HEADER) if PLAIN.launches[0].value(name) is not None]


@PROPERTY
@given(st.dictionaries(st.tuples(launch_index, st.sampled_from(METRIC_COLS)), odd_cells, max_size=10))
@example({(1, METRIC_COLS[5]): 'x"\n"y', (2, METRIC_COLS[0]): 'say "hi"', (3, METRIC_COLS[-1]): "two\nlines"})
@example({(0, METRIC_COLS[3]): "1,234", (4, METRIC_COLS[7]): "1.234,5", (5, METRIC_COLS[2]): "-inf"})
def test_report_json_is_the_model_byte_for_byte(cells: dict[tuple[int, int], str]) -> None:
    """Any cells (negative, not finite, decimal comma, thousands, unknown unit, text, quotes, line breaks) in metric
    columns: every other cell keeps the capture's value, and the streamed JSON (metrics and derived values written
    from their float tables) equals the model's."""
    rows = [list(r) for r in ROWS]
    for (r, c), text in cells.items():
        rows[r + 2][c] = text
    report = P.parse_report_bytes(csv_bytes(rows), "odd.csv")
    assert [launch.id for launch in report.launches] == [launch.id for launch in PLAIN.launches]
    for r, (launch, base) in enumerate(zip(report.launches, PLAIN.launches, strict=True)):
        for c in METRIC_COLS:
            if (r, c) not in cells:
                assert launch.value(HEADER[c]) == base.value(HEADER[c]), (r, HEADER[c])
    assert b"".join(json_chunks(report)) == whole_json(report)
