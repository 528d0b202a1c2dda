"""The report parser on hostile input: values that are not finite, unreadable files, huge cells,
chatty programs before the CSV, other text encodings, and the hand-made corpus in tests/fixtures/hostile.

Variants of real captures (tests/fixtures/ncu) are made here by editing their cells; only the corpus files
and the few byte strings below are typed by hand, as bad input.
"""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from profiling.analysis.roofline import launch_points
from profiling.cli import main
from profiling.errors import ReportError
from profiling.nsight import load as L
from profiling.nsight import metrics as M
from profiling.nsight import report as P
from profiling.nsight import report_input

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures"
HOSTILE = FIXTURES / "hostile"
REGS = "launch__registers_per_thread"


def real(name: str) -> Path:
    path = FIXTURES / "ncu" / name
    if not path.is_file():
        pytest.fail(f"real ncu capture {name} is missing from tests/fixtures/ncu")
    return path


def rows_of(name: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(real(name).read_text(encoding="utf-8-sig"))))


def csv_bytes(rows: list[list[str]]) -> bytes:
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    return out.getvalue().encode("utf-8")


def assert_finite(report: P.Report) -> None:
    """No NaN or infinity anywhere a number is kept, and the report is strict JSON."""
    for launch in report.launches:
        for metric in [*launch.metrics.values(), *launch.unmapped.values()]:
            for value in (metric.value, metric.minimum, metric.maximum):
                assert value is None or math.isfinite(value), (launch.id, metric)
        assert all(math.isfinite(v) for v in launch.derived.values()), launch.id
        assert all(f.estimated_speedup_pct is None or math.isfinite(f.estimated_speedup_pct) for f in launch.findings)
    json.dumps(report.to_dict(), allow_nan=False)


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ---------------------------------------------------------------------------------------------
# Values that are not finite (items 1 and 4)
# ---------------------------------------------------------------------------------------------


def test_nan_metric_is_missing_with_one_warning_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = rows_of("raw.csv")
    col = rows[0].index(REGS)
    for row in rows[2:]:
        row[col] = "nan"
    path = tmp_path / "nan_regs.csv"
    path.write_bytes(csv_bytes(rows))
    report = L.load_report(path)
    plain = L.load_report(real("raw.csv"))
    assert all(launch.value(REGS) is None and REGS not in launch.metrics for launch in report.launches)
    assert [w for w in report.warnings if REGS in w] == [
        f"{REGS}: value 'nan' is not a finite number; taken as missing"
    ]
    assert_finite(report)
    for a, b in zip(report.launches, plain.launches, strict=True):
        assert {k: m for k, m in b.metrics.items() if k != REGS} == dict(a.metrics.items())
    code, out, err = run_cli(["report", str(path)], capsys)
    assert code == 0 and "registers -" in out and "Traceback" not in out + err
    code, out, _ = run_cli(["report", str(path), "--json"], capsys)
    assert code == 0 and "NaN" not in out


def test_infinite_huge_and_overflowing_values_are_missing() -> None:
    rows = rows_of("raw.csv")
    header, units = rows[0], rows[1]
    time_col, dram_col, regs_col = header.index(M.TIME), header.index("dram__bytes.sum"), header.index(REGS)
    assert units[dram_col] == "Mbyte"
    rows[2][time_col], rows[3][time_col], rows[4][regs_col] = "inf", "1e400", "-inf"
    rows[5][dram_col] = "1e303"  # finite, but x 1e6 bytes per Mbyte overflows
    report = P.parse_report_bytes(csv_bytes(rows), "inf.csv")
    launches = report.launches
    assert launches[0].value(M.TIME) is None and launches[1].value(M.TIME) is None
    assert launches[2].value(REGS) is None and launches[3].value("dram__bytes.sum") is None
    assert launches[4].value(M.TIME) == P.parse_report_bytes(real("raw.csv").read_bytes()).launches[4].value(M.TIME)
    named = sorted(w.split(":")[0] for w in report.warnings)
    assert named == sorted([M.TIME, REGS, "dram__bytes.sum"])
    assert "seconds" not in launches[0].derived
    assert_finite(report)


def test_details_page_nan_values_and_speedups() -> None:
    rows = rows_of("details.csv")
    header = rows[0]
    name_col, value_col, speedup_col = (header.index(c) for c in ("Metric Name", "Metric Value", "Estimated Speedup"))
    durations = speedups = 0
    for row in rows[1:]:
        if row[name_col] == M.TIME:
            row[value_col], durations = "nan", durations + 1
        elif len(row) > speedup_col and row[speedup_col]:
            row[speedup_col], speedups = "inf", speedups + 1
    assert durations == 10 and speedups > 0
    report = P.parse_report_bytes(csv_bytes(rows), "details_nan.csv")
    assert all(launch.value(M.TIME) is None for launch in report.launches)
    assert all(f.estimated_speedup_pct is None for launch in report.launches for f in launch.findings)
    assert sum(M.TIME in w for w in report.warnings) == 1
    assert_finite(report)


def test_summary_invocations_nan_and_1e400(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rows = rows_of("summary.csv")
    header = rows[0]
    inv_col, name_col = header.index("Invocations"), header.index("Kernel Name")
    kernels = list(dict.fromkeys(row[name_col] for row in rows[1:]))
    for row in rows[1:]:
        if row[name_col] == kernels[0]:
            row[inv_col] = "nan"
        elif row[name_col] == kernels[1]:
            row[inv_col] = "1e400"
    path = tmp_path / "summary_nan.csv"
    path.write_bytes(csv_bytes(rows))
    report = L.load_report(path)
    by_name = {launch.name: launch for launch in report.launches}
    assert by_name[kernels[0]].invocations is None and by_name[kernels[1]].invocations is None
    assert all(by_name[k].invocations == 1 for k in kernels[2:])
    assert [w for w in report.warnings if w.startswith("Invocations")] == [
        "Invocations: value 'nan' is not a finite number; taken as missing"
    ]
    assert_finite(report)
    code, _, err = run_cli(["report", str(path)], capsys)
    assert code == 0 and "Traceback" not in err


# ---------------------------------------------------------------------------------------------
# Files, cells and streams (items 4 and 7)
# ---------------------------------------------------------------------------------------------


def test_unreadable_file_gives_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "secret.csv"
    path.write_bytes(real("raw.csv").read_bytes())
    path.chmod(0)
    opened = Path.open

    def refuse(self: Path, *args, **kwargs):  # root reads a mode-0 file anyway: refuse as the OS would
        if self == path:
            raise PermissionError(13, "Permission denied", str(self))
        return opened(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", refuse)
    with pytest.raises(ReportError, match=r"^cannot read .*secret\.csv: Permission denied$"):
        L.load_report(path)
    code, out, err = run_cli(["report", str(path)], capsys)
    assert code == 2 and err.startswith("error: cannot read") and err.count("\n") == 1 and not out


def test_read_error_in_the_middle_gives_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "flaky.csv"
    path.write_bytes(real("raw.csv").read_bytes())
    data = path.read_bytes()

    class Flaky(io.BytesIO):
        def read(self, size: int | None = -1) -> bytes:
            if self.tell() >= report_input.SNIFF_BYTES // 2:
                raise OSError(5, "Input/output error")
            return super().read(size if size is None or size < 0 else min(size, 8192))

        def read1(self, size: int = -1) -> bytes:
            return self.read(size)

        def readinto(self, buffer) -> int:
            chunk = self.read(len(buffer))
            buffer[: len(chunk)] = chunk
            return len(chunk)

    monkeypatch.setattr(Path, "open", lambda self, *a, **k: Flaky(data))
    with pytest.raises(ReportError, match="cannot read .*Input/output error"):
        L.load_report(path)


def test_quoted_cells_over_the_csv_field_limit() -> None:
    """csv's default field limit is 131,072 characters ("field larger than field limit")."""
    rows = rows_of("raw.csv")
    name_col = rows[0].index("Kernel Name")
    long_name = "void " + "k" * 200_000 + "()"
    rows[2][name_col] = long_name
    report = P.parse_report_bytes(csv_bytes(rows), "long_name.csv")
    assert report.launches[0].name == long_name
    assert report.launches[1].to_dict() == L.load_report(real("raw.csv")).launches[1].to_dict()

    rows = rows_of("raw.csv")
    rows[1][rows[0].index("launch__grid_size")] = "u" * 200_000  # in the units row, and in a cut last row
    rows[-1] = rows[-1][:20] + ["x" * 200_000]
    report = P.parse_report_bytes(csv_bytes(rows), "long_unit.csv")
    # A unit no ncu word makes up is not taken as the base unit: the column is not read, and a warning says so.
    assert "launch__grid_size" not in report.launches[0].metrics
    assert any(w.startswith("column 'launch__grid_size': unit 'uuuu") for w in report.warnings)
    assert any("fields (truncated file?)" in w for w in report.warnings)

    rows = rows_of("details.csv")
    desc_col = rows[0].index("Rule Description")
    target = next(row for row in rows[1:] if len(row) > desc_col and row[desc_col])
    target[desc_col] = "why " * 80_000
    report = P.parse_report_bytes(csv_bytes(rows), "long_rule.csv")
    descriptions = [f.description for launch in report.launches for f in launch.findings]
    assert ("why " * 80_000).strip() in descriptions


class CountingStream(io.BytesIO):
    """Counts the bytes read, to show the parse reads its input once."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.bytes_read = 0

    def read(self, size: int | None = -1) -> bytes:
        chunk = super().read(size)
        self.bytes_read += len(chunk)
        return chunk

    def read1(self, size: int = -1) -> bytes:
        chunk = super().read1(size)
        self.bytes_read += len(chunk)
        return chunk

    def readinto(self, buffer) -> int:
        n = super().readinto(buffer)
        self.bytes_read += n
        return n


def test_chatty_program_before_the_csv_is_read_through_once() -> None:
    """A program that prints 20,000 lines (with quotes and commas) before ncu's CSV: the header search used to
    stop after 5,000 lines. The whole stream is searched, and read once (plus the encoding sniff)."""
    capture = real("stdout_mixed.txt").read_bytes()
    chatter = b"".join(b'step %d: loss="0.5", lr=1e-3, ok\n' % i for i in range(20_000))
    data = chatter + capture
    stream = CountingStream(data)
    report = P.parse_report_stream(stream, "chatty.txt")
    plain = P.parse_report_bytes(capture, "stdout_mixed.txt")
    assert [launch.to_dict() for launch in report.launches] == [launch.to_dict() for launch in plain.launches]
    assert report.warnings == plain.warnings
    assert stream.bytes_read <= len(data) + report_input.SNIFF_BYTES


def test_header_with_too_many_columns_is_refused_before_it_is_split() -> None:
    data = b'"ID","Kernel Name"' + b',"a"' * (report_input.MAX_COLUMNS + 1) + b"\n"
    with pytest.raises(ReportError, match="has over 100,000 columns"):
        P.parse_report_bytes(data, "wide.csv")


def test_ncu_errors_before_no_csv_are_kept_whole() -> None:
    """err_target_crashed.txt: ncu splits the failure over two ==ERROR== lines."""
    with pytest.raises(ReportError) as info:
        L.load_report(real("err_target_crashed.txt"))
    assert "ncu said: An error was reported by the driver: LaunchFailed" in str(info.value)
    assert "\n" not in str(info.value)


# ---------------------------------------------------------------------------------------------
# Encodings (item 18)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("codec", "bom", "label"),
    [
        ("utf-8", b"\xef\xbb\xbf", None),
        ("utf-16-le", b"\xff\xfe", "UTF-16"),
        ("utf-16-be", b"\xfe\xff", "UTF-16"),
        ("utf-16-le", b"", "UTF-16 LE"),
        ("utf-16-be", b"", "UTF-16 BE"),
        ("utf-32-le", b"\xff\xfe\x00\x00", "UTF-32"),
    ],
)
def test_utf8_utf16_utf32_with_and_without_bom(codec: str, bom: bytes, label: str | None) -> None:
    text = real("raw.csv").read_text(encoding="utf-8-sig")
    report = P.parse_report_bytes(bom + text.encode(codec), f"raw_{codec}.csv")
    plain = L.load_report(real("raw.csv"))
    assert [launch.to_dict() for launch in report.launches] == [launch.to_dict() for launch in plain.launches]
    if label is None:
        assert report.warnings == []
    else:
        assert report.warnings == [f"raw_{codec}.csv is {label} text (ncu writes UTF-8): read as {label}"]


def test_latin1_bytes_are_read_with_a_warning() -> None:
    data = real("raw.csv").read_bytes()
    data = data.replace(b'"sgemm_v1_naive"', b'"sgemm_v1_na\xefve"', 1)
    report = P.parse_report_bytes(data, "latin1.csv")
    assert any(launch.name == "sgemm_v1_na\u00efve" for launch in report.launches)
    assert report.warnings == [
        "latin1.csv is not UTF-8 (ncu writes UTF-8): read as Latin-1, so accented text may show wrongly"
    ]
    assert len(report.launches) == len(L.load_report(real("raw.csv")).launches)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("handmade_binary_start.bin", "a binary file (NUL bytes; not UTF-8 or UTF-16 text)"),
        ("handmade_utf16_not_csv.txt", "(the file was read as UTF-16 text)"),
        ("handmade_bad_utf16_after_bom.csv", "(the file is not valid UTF-16 text; it was read as Latin-1)"),
        ("handmade_nul_after_header.csv", "NUL characters after its header"),
    ],
)
def test_messages_say_which_encoding_was_seen(name: str, expected: str) -> None:
    with pytest.raises(ReportError) as info:
        L.load_report(HOSTILE / name)
    assert expected in str(info.value) and "\n" not in str(info.value)


# ---------------------------------------------------------------------------------------------
# The hand-made corpus
# ---------------------------------------------------------------------------------------------

CORPUS = sorted(p for p in HOSTILE.iterdir() if p.name.startswith(("handmade_", "fuzzfound_")))


def test_corpus_is_there() -> None:
    assert len(CORPUS) >= 25


@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
def test_hostile_file_gives_a_finite_report_or_one_line(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        report = L.load_report(path)
    except ReportError as exc:
        message = str(exc)
        assert message and "\n" not in message and "Traceback" not in message
        code, out, err = run_cli(["report", str(path)], capsys)
        assert code == 2 and not out and err == f"error: {message}\n"
    else:
        assert report.launches
        assert_finite(report)
        for launch in report.launches:
            assert launch.label  # the NVTX range's sizes and the block/grid go through int()
        P.key_metrics_frame(report)
        launch_points(report)
        for args in (["report", str(path)], ["report", str(path), "--json"]):
            code, out, err = run_cli(args, capsys)
            assert code == 0 and "Traceback" not in out + err
        json.loads(out)


# ---------------------------------------------------------------------------------------------
# Memory (item 6): a child process, so that its peak RSS is the parse's
# ---------------------------------------------------------------------------------------------


def _bench() -> object:
    spec = importlib.util.spec_from_file_location("bench_parse", ROOT / "scripts" / "bench_parse.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("mode", ["file", "bytes"])
def test_big_raw_page_memory_is_bounded(tmp_path: Path, mode: str) -> None:
    """A 40 MB raw page (the real capture's rows repeated): the parse adds at most 3x the file to the RSS the
    libraries take (the 200 MB target, 4x in all, is scripts/bench_parse.py --size-mb 200)."""
    bench = _bench()
    path = tmp_path / "big.csv"
    launches = bench.write_big_csv(real("raw.csv"), 40_000_000, path)
    got = bench.measure(path, mode)
    size = path.stat().st_size
    assert got["launches"] == launches
    added = got["peak_rss"] - got["rss_libraries"] - (size if mode == "bytes" else 0)
    assert added <= 3 * size, f"{added / 1e6:.0f} MB over the libraries for a {size / 1e6:.0f} MB file"


def test_bench_script_runs() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bench_parse.py"), "--launches", "200", "--repeat", "1"],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    # The 2 s target is the benchmark's to judge (exit 1, "TOO SLOW"); on a loaded CI machine wall time varies, so
    # the test pins what was parsed and that the exit status agrees with the verdict printed.
    assert "parsed 200 launches x 300 columns" in done.stdout, done.stdout + done.stderr
    assert done.returncode == (1 if "TOO SLOW" in done.stdout else 0), done.stdout + done.stderr
