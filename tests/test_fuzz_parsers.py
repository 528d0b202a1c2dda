"""Property tests (Hypothesis) on the report parser: every CSV layout, seeded with the real captures.

The property: `parse_report_bytes` / `parse_report_text` / `load_report` give a Report whose numbers are all
finite (and which is strict JSON), or a ReportError of one line; never another exception. Inputs: arbitrary
bytes and text, and real captures (raw, details, summary, ncu stdout with program output) cut, with rows
duplicated, dropped and shuffled, cells replaced by extremes (nan, inf, 1e400, 5,000 digits, control
characters, huge cells), ncu and program lines inserted, and the result written in another encoding.

The budget is CI-sized and the same on every run (derandomized); GEMMLENS_FUZZ_EXAMPLES=2000 runs more, and
new ones each time.
"""

from __future__ import annotations

import csv
import io
import math
import os
import random
from pathlib import Path

import pytest

from profiling.analysis.roofline import launch_points
from profiling.errors import ReportError
from profiling.nsight import load as L
from profiling.nsight import report as P

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

# CI runs the same 40 examples per test every time; a longer run (GEMMLENS_FUZZ_EXAMPLES=2000) explores new ones,
# and Hypothesis prints the failing example to reproduce.
EXAMPLES = int(os.environ.get("GEMMLENS_FUZZ_EXAMPLES", "40"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize="GEMMLENS_FUZZ_EXAMPLES" not in os.environ,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
NCU = Path(__file__).parent / "fixtures" / "ncu"
SEEDS = ("raw.csv", "details.csv", "summary.csv", "stdout_mixed.txt", "full_details.csv", "err_target_crashed.txt")
EXTREMES = (
    "nan",
    "NaN",
    "-nan",
    "inf",
    "-inf",
    "Infinity",
    "1e400",
    "-1e400",
    "1e308",
    "1e-400",
    "9" * 5000,
    "1" + ",000" * 200,
    "",
    "n/a",
    "(!) n/a",
    "0",
    "-0",
    "1_000",
    " 12 ",
    "0x10",
    "true",
    '"',
    '""',
    ",",
    "\n",
    "\r",
    "\x00",
    "\x1f",
    "\x0b\x0c\x1c\x85\u2028",
    "\ud800",
    "é" * 3,
    "(99999999999, 1, 1)",
    "gemmlens:v1:" + "9" * 40 + "x1x1",
    "k" * 140_000,
)
NOISE = (
    '==PROF== Profiling "k" - 0: 0%....50%....100% - 1 pass',
    "==WARNING== Note: Running with unmodified GPU clocks.",
    "==ERROR== An error was reported by the driver:",
    'program says "hello, world", 1,2,3',
    "",
    "\ufeff",
)
ENCODINGS = ("utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "latin-1", "cp1252")


def _seed_lines(name: str) -> list[str]:
    path = NCU / name
    if not path.is_file():
        pytest.fail(f"real ncu capture {name} is missing from tests/fixtures/ncu")
    return path.read_text(encoding="utf-8-sig").splitlines(keepends=True)


SEED_LINES = {name: _seed_lines(name) for name in SEEDS}


def check(report_or_error) -> None:
    """The property, on a parse's outcome (a Report, or the exception it raised)."""
    if isinstance(report_or_error, BaseException):
        assert isinstance(report_or_error, ReportError), repr(report_or_error)
        message = str(report_or_error)
        assert message and "\n" not in message
        return
    report = report_or_error
    assert report.launches
    for launch in report.launches:
        for metric in [*launch.metrics.values(), *launch.unmapped.values()]:
            assert all(v is None or math.isfinite(v) for v in (metric.value, metric.minimum, metric.maximum))
        assert all(math.isfinite(v) for v in launch.derived.values())
        assert all(f.estimated_speedup_pct is None or math.isfinite(f.estimated_speedup_pct) for f in launch.findings)
        assert launch.label  # sizes and the block/grid go through int()
    import json

    json.dumps(report.to_dict(), allow_nan=False)
    P.key_metrics_frame(report)
    launch_points(report)


def outcome(parse, *args):
    try:
        return parse(*args)
    except Exception as exc:  # the property decides which exceptions are allowed
        return exc


# ---------------------------------------------------------------------------------------------
# Mutations of real captures
# ---------------------------------------------------------------------------------------------


def _cells(line: str) -> list[str]:
    try:
        return next(csv.reader([line]), [])
    except csv.Error:
        return []


def _line(cells: list[str]) -> str:
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerow(cells)
    return out.getvalue()


@st.composite
def mutated_capture(draw: st.DrawFn) -> bytes:
    lines = list(SEED_LINES[draw(st.sampled_from(SEEDS))])
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(("cell", "cell", "cell", "duplicate", "drop", "shuffle", "noise", "cut", "byte")))
        if not lines:
            break
        at = draw(st.integers(0, len(lines) - 1))
        if kind == "cell":
            cells = _cells(lines[at])
            if cells:
                column = draw(st.integers(0, len(cells) - 1))
                cells[column] = draw(st.one_of(st.sampled_from(EXTREMES), st.text(max_size=12)))
                lines[at] = _line(cells)
        elif kind == "duplicate":
            lines.insert(at, lines[at])
        elif kind == "drop":
            del lines[at]
        elif kind == "shuffle":
            body = lines[1:]
            random.Random(draw(st.integers(0, 2**16))).shuffle(body)
            lines = lines[:1] + body
        elif kind == "noise":
            lines.insert(at, draw(st.sampled_from(NOISE)) + "\n")
        elif kind == "cut":
            text = "".join(lines)
            lines = [text[: draw(st.integers(0, len(text)))]]
        else:
            text = "".join(lines)
            pos = draw(st.integers(0, max(0, len(text) - 1)))
            lines = [text[:pos] + chr(draw(st.integers(0, 0x2FF))) + text[pos + 1 :]]
    return "".join(lines).encode(draw(st.sampled_from(ENCODINGS)), errors="replace")


@FUZZ
@given(mutated_capture())
def test_mutated_captures_give_a_finite_report_or_one_line(data: bytes) -> None:
    check(outcome(P.parse_report_bytes, data, "fuzz.csv"))


@FUZZ
@given(mutated_capture())
def test_mutated_captures_as_text_and_as_files(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    check(outcome(P.parse_report_text, data.decode("utf-8", errors="replace"), "fuzz.txt"))
    path = tmp_path_factory.mktemp("fuzz") / "fuzz.csv"
    path.write_bytes(data)
    check(outcome(L.load_report, path))


@FUZZ
@given(st.binary(max_size=4096))
def test_arbitrary_bytes(data: bytes) -> None:
    check(outcome(P.parse_report_bytes, data, "bytes.bin"))


@FUZZ
@given(st.text(max_size=2048))
def test_arbitrary_text(text: str) -> None:
    check(outcome(P.parse_report_text, text, "text.txt"))


@FUZZ
@given(
    st.sampled_from(("raw.csv", "details.csv", "summary.csv")),
    st.lists(st.text(st.characters(codec="utf-8"), max_size=30), min_size=1, max_size=40),
)
def test_header_of_a_real_capture_then_arbitrary_rows(seed: str, cells: list[str]) -> None:
    header = SEED_LINES[seed][0]
    rows = [_line(cells[i : i + 7]) for i in range(0, len(cells), 7)]
    check(outcome(P.parse_report_bytes, (header + "".join(rows)).encode(), seed))


# ---------------------------------------------------------------------------------------------
# Numbers: exact, whatever path a column takes
# ---------------------------------------------------------------------------------------------

RAW_ROWS = list(csv.reader(io.StringIO("".join(SEED_LINES["raw.csv"]))))
PLAIN_COL = RAW_ROWS[0].index("launch__registers_per_thread")  # unit register/thread: factor 1
SCALED_COL = RAW_ROWS[0].index("dram__bytes.sum")  # unit Mbyte: x 1e6, rounded to 3 decimals


def _printed(x: float, style: int) -> str:
    if style == 0:
        return repr(x)
    if style == 1:
        return f"{x:,.2f}"
    if style == 2:
        return f"{x:,.6f}"
    return f"{x:.17g}"


@FUZZ
@given(
    st.lists(
        st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300), min_size=10, max_size=10
    ),
    st.lists(st.integers(0, 3), min_size=10, max_size=10),
    st.booleans(),
)
def test_numbers_are_read_as_float_reads_them(values: list[float], styles: list[int], with_text: bool) -> None:
    rows = [list(r) for r in RAW_ROWS]
    texts = [_printed(x, s) for x, s in zip(values, styles, strict=True)]
    if with_text:
        texts[3] = "some text"  # the column's other cells then take the path through Python
    for row, text in zip(rows[2:], texts, strict=True):
        row[PLAIN_COL] = text
        row[SCALED_COL] = text
    report = P.parse_report_bytes("".join(_line(r) for r in rows).encode(), "numbers.csv")
    for launch, text in zip(report.launches, texts, strict=True):
        if text == "some text":
            assert launch.attributes["launch__registers_per_thread"] == text
            continue
        exact = float(text.replace(",", ""))
        if exact < 0:  # a register count or a size below zero is wrong: missing, with a warning
            assert launch.value("launch__registers_per_thread") is None
            assert launch.value("dram__bytes.sum") in (None, 0.0)  # a tiny negative Mbyte rounds to -0.0 bytes
            assert any(w.startswith("launch__registers_per_thread: value") for w in report.warnings)
            continue
        assert launch.value("launch__registers_per_thread") == exact
        scaled = round(exact * 1e6, 3)
        assert launch.value("dram__bytes.sum") == (scaled if math.isfinite(scaled) else None)


@FUZZ
@given(st.floats(allow_nan=False, allow_infinity=False), st.integers(-3, 3))
def test_round3_is_pythons_round(x: float, shift: int) -> None:
    import numpy as np

    from profiling.nsight.raw_page import round3

    near_tie = math.floor(x * 1000) / 1000 + 0.0005 + shift * 1e-17 if abs(x) < 1e12 else x
    for value in (x, near_tie):
        assert round3(np.array([value]))[0] == round(value, 3)
