"""Numbers that would be wrong without a word: a report read from a real capture with one kind of bad cell or
structure each (negative counts, decimal commas, unknown units, two exports in one file, repeated identity columns,
multi-member and oversized gzip). Each is refused with one line, or read with a warning that names the place, and
never gives a wrong value.

Every input is a real capture (tests/fixtures/ncu) edited here; only the cells under test are typed by hand.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import zlib
from pathlib import Path

import pytest

from profiling.cli import main
from profiling.errors import ReportError
from profiling.nsight import load as L
from profiling.nsight import metrics as M
from profiling.nsight import raw_page, report_input
from profiling.nsight import report as P
from profiling.nsight import source as S
from profiling.nsight import units as U

FIXTURES = Path(__file__).parent / "fixtures"
REGS = "launch__registers_per_thread"
DRAM = "dram__bytes.sum"


def rows_of(name: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO((FIXTURES / "ncu" / name).read_text(encoding="utf-8-sig"))))


def csv_bytes(rows: list[list[str]]) -> bytes:
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    return out.getvalue().encode("utf-8")


def plain() -> P.Report:
    return P.parse_report_bytes((FIXTURES / "ncu" / "raw.csv").read_bytes(), "raw.csv")


def cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    got = capsys.readouterr()
    return code, got.out, got.err


# ---------------------------------------------------------------------------------------------
# Negative durations, bytes, registers and invocations
# ---------------------------------------------------------------------------------------------


def test_negative_duration_bytes_and_registers_are_missing_with_the_launch_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = rows_of("raw.csv")
    header = rows[0]
    time_col, dram_col, regs_col = header.index(M.TIME), header.index(DRAM), header.index(REGS)
    launch_id = rows[3][0]
    rows[3][time_col] = "-" + rows[3][time_col]
    rows[4][dram_col] = "-8.46"
    rows[5][regs_col] = "-32"
    path = tmp_path / "negative.csv"
    path.write_bytes(csv_bytes(rows))
    report = L.load_report(path)
    ok = plain()
    assert report.launches[1].value(M.TIME) is None
    assert report.launches[2].value(DRAM) is None and report.launches[3].value(REGS) is None
    assert "fp32_flops_per_second" not in report.launches[1].derived  # no "FP32 -35 TFLOP/s"
    assert report.launches[0].value(M.TIME) == ok.launches[0].value(M.TIME)
    assert report.launches[2].value(M.TIME) == ok.launches[2].value(M.TIME)
    warning = next(w for w in report.warnings if w.startswith(M.TIME))
    assert f"(launch {launch_id}) is negative" in warning and warning.endswith("taken as missing")
    assert sum(w.startswith((M.TIME, DRAM, REGS)) for w in report.warnings) == 3
    code, out, err = cli(["report", str(path)], capsys)
    assert code == 0 and "TFLOP/s" in out and " -" not in "".join(ln for ln in out.splitlines() if "TFLOP/s" in ln)
    assert "is negative" in out and "Traceback" not in err


def test_negative_values_on_the_details_page_and_invocations_in_the_summary() -> None:
    rows = rows_of("details.csv")
    header = rows[0]
    name_col, value_col = header.index("Metric Name"), header.index("Metric Value")
    for row in rows[1:]:
        if len(row) > value_col and row[name_col] == M.TIME and row[0] == "2":
            row[value_col] = "-5,000"
    report = P.parse_report_bytes(csv_bytes(rows), "details_negative.csv")
    by_id = {launch.id: launch for launch in report.launches}
    assert by_id["2"].value(M.TIME) is None and by_id["1"].value(M.TIME) is not None
    assert [w for w in report.warnings if w.startswith(M.TIME)] == [
        f"{M.TIME}: value '-5,000' (launch 2) is negative, which it cannot be; taken as missing"
    ]

    rows = rows_of("summary.csv")
    inv = rows[0].index("Invocations")
    for row in rows[1:]:
        row[inv] = "-3"
    report = P.parse_report_bytes(csv_bytes(rows), "summary_negative.csv")
    assert all(launch.invocations is None for launch in report.launches)
    assert sum(w.startswith("Invocations: value '-3'") for w in report.warnings) == 1


def test_negative_block_and_grid_sizes_are_not_read() -> None:
    rows = rows_of("raw.csv")
    rows[2][rows[0].index("Block Size")] = "(-128, 1, 1)"
    report = P.parse_report_bytes(csv_bytes(rows), "negative_block.csv")
    assert report.launches[0].block is None and report.launches[1].block == plain().launches[1].block
    assert any(w.startswith("Block Size: value '(-128, 1, 1)' (launch 0) is negative") for w in report.warnings)


# ---------------------------------------------------------------------------------------------
# Decimal commas and unknown units
# ---------------------------------------------------------------------------------------------


def test_decimal_comma_is_missing_with_a_warning_not_read_as_another_number() -> None:
    assert U.parse_number("1.234,5") is None and U.parse_number("0,5") is None
    assert U.parse_number("1,234.5") == 1234.5 and U.parse_number("4,420,544") == 4420544.0
    rows = rows_of("raw.csv")
    dram_col = rows[0].index(DRAM)
    rows[2][dram_col] = "1.234,5"
    report = P.parse_report_bytes(csv_bytes(rows), "decimal_comma.csv")
    assert report.launches[0].value(DRAM) is None  # not 1.2345 MB
    assert DRAM not in report.launches[0].attributes
    assert report.launches[1].value(DRAM) == plain().launches[1].value(DRAM)
    assert [w for w in report.warnings if w.startswith(DRAM)] == [
        f"{DRAM}: value '1.234,5' (launch 0) is not a number as ncu writes it (a decimal comma? ncu writes "
        "1,234.5); taken as missing"
    ]


def test_commas_in_a_later_block_are_read_as_in_the_first() -> None:
    """The raw page is read in blocks, and a block looks for commas only in the columns that held one before: a
    grouped number in a column that had none, a plain number and a decimal comma in a column of grouped numbers
    (the clock rate, "1,980,000") read as they do in the first block."""
    rows = rows_of("raw.csv")
    header, units, launches = rows[0], rows[1], rows[2:]
    clock = header.index("device__attribute_clock_rate")
    per_block = raw_page.CELLS_PER_BLOCK // len(header)
    edits = {DRAM: "1,234.5", "device__attribute_clock_rate": "512", REGS: "1,024"}

    def page(at: int) -> P.Report:
        body = [list(launches[n % len(launches)]) for n in range(3 * per_block)]
        for n, row in enumerate(body):
            row[0] = str(n)
        for name, cell in edits.items():
            body[at][header.index(name)] = cell
        body[at + 1][clock] = "1,5"
        return P.parse_report_bytes(csv_bytes([header, units, *body]), "commas.csv")

    first, later = page(0), page(2 * per_block + 5)
    assert "," in launches[0][clock] and "," not in launches[0][header.index(DRAM)]  # as the capture has them
    # The block in between holds commas only where the first did: its grouped clock rates are read all the same.
    middle = per_block + 1
    clock_rate = plain().launches[middle % len(launches)].value("device__attribute_clock_rate")
    assert later.launches[middle].value("device__attribute_clock_rate") == clock_rate == 1_980_000
    for name in edits:
        assert later.launches[2 * per_block + 5].value(name) == first.launches[0].value(name) is not None
    assert later.launches[2 * per_block + 6].value("device__attribute_clock_rate") is None
    assert first.launches[0].value(REGS) == 1024 and first.launches[0].value("device__attribute_clock_rate") == 512
    assert units[header.index(DRAM)] == "Mbyte" and first.launches[0].value(DRAM) == 1_234_500_000
    assert [w for w in later.warnings if "'1,5'" in w] == [
        f"device__attribute_clock_rate: value '1,5' (launch {2 * per_block + 6}) is not a number as ncu writes it (a "
        "decimal comma? ncu writes 1,234.5); taken as missing"
    ]


def test_decimal_comma_on_the_details_page() -> None:
    rows = rows_of("details.csv")
    header = rows[0]
    name_col, value_col = header.index("Metric Name"), header.index("Metric Value")
    for row in rows[1:]:
        if len(row) > value_col and row[name_col] == DRAM and row[0] == "0":
            row[value_col] = "8,46"
    report = P.parse_report_bytes(csv_bytes(rows), "details_comma.csv")
    assert report.launches[0].value(DRAM) is None
    assert any(
        w.startswith(f"{DRAM}: value '8,46' (launch 0) is not a number as ncu writes it") for w in report.warnings
    )


def test_unknown_unit_is_not_taken_as_the_base_unit() -> None:
    rows = rows_of("raw.csv")
    time_col = rows[0].index(M.TIME)
    rows[1][time_col] = "fortnight"
    report = P.parse_report_bytes(csv_bytes(rows), "fortnight.csv")
    assert all(launch.value(M.TIME) is None for launch in report.launches)
    assert f"column '{M.TIME}': unit 'fortnight' is not an Nsight Compute unit; its values are not read" in (
        report.warnings
    )
    assert report.launches[0].value(REGS) == plain().launches[0].value(REGS)

    rows = rows_of("details.csv")
    header = rows[0]
    name_col, unit_col = header.index("Metric Name"), header.index("Metric Unit")
    for row in rows[1:]:
        if len(row) > unit_col and row[name_col] == DRAM:
            row[unit_col] = "Kfortnight"
    report = P.parse_report_bytes(csv_bytes(rows), "details_fortnight.csv")
    assert all(launch.value(DRAM) is None for launch in report.launches)
    assert [w for w in report.warnings if w.startswith(DRAM)] == [
        f"{DRAM}: unit 'Kfortnight' is not an Nsight Compute unit; its values are not read"
    ]


def test_every_unit_of_the_real_captures_is_known() -> None:
    """The captures' units (raw units rows, details' Metric Unit) all read: no warning on real files."""
    for name in ("raw.csv", "full_raw.csv", "details.csv", "full_details.csv", "summary.csv"):
        report = P.parse_report_bytes((FIXTURES / "ncu" / name).read_bytes(), name)
        assert not [w for w in report.warnings if "not an Nsight Compute unit" in w], name


# ---------------------------------------------------------------------------------------------
# Two exports in one file, repeated identity columns
# ---------------------------------------------------------------------------------------------


def test_two_concatenated_raw_exports_read_both_without_a_header_launch() -> None:
    data = (FIXTURES / "ncu" / "raw.csv").read_bytes()
    report = P.parse_report_bytes(data + data, "twice.csv")
    assert len(report.launches) == 20
    assert not any(launch.id == "ID" or launch.name == "Kernel Name" for launch in report.launches)
    assert [launch.value(M.TIME) for launch in report.launches[10:]] == [
        launch.value(M.TIME) for launch in plain().launches
    ]
    assert (
        "row 13 repeats the header (two exports in one file?): skipped with its units row, the rows after them are read"
        in report.warnings
    )


def test_second_export_with_other_units_or_columns_is_not_read() -> None:
    rows = rows_of("raw.csv")
    other = rows_of("raw.csv")
    other[1][other[0].index(M.TIME)] = "usecond"  # the same columns, scaled otherwise
    report = P.parse_report_bytes(csv_bytes(rows + other), "two_units.csv")
    assert len(report.launches) == 10
    assert any(w.startswith("row 13 repeats the header but the units row after it differs") for w in report.warnings)

    details = rows_of("details.csv")
    report = P.parse_report_bytes(csv_bytes(rows + details), "raw_then_details.csv")
    assert len(report.launches) == 10
    assert any(w.startswith("row 13 starts a second export with other columns") for w in report.warnings)


def test_two_concatenated_details_exports() -> None:
    data = (FIXTURES / "ncu" / "details.csv").read_bytes()
    once = P.parse_report_bytes(data, "details.csv")
    report = P.parse_report_bytes(data + data, "details_twice.csv")
    assert [launch.id for launch in report.launches] == [launch.id for launch in once.launches]
    assert any("repeats the header (two exports in one file?)" in w for w in report.warnings)


def test_duplicate_id_and_kernel_name_columns_the_first_is_read_with_a_warning() -> None:
    rows = rows_of("raw.csv")
    id_col, name_col = rows[0].index("ID"), rows[0].index("Kernel Name")
    for i, row in enumerate(rows):
        row.extend([row[id_col], row[name_col]] if i < 2 else [f"9{row[id_col]}", "not_the_kernel"])
    report = P.parse_report_bytes(csv_bytes(rows), "dup_identity.csv")
    assert [launch.id for launch in report.launches] == [launch.id for launch in plain().launches]
    assert [launch.name for launch in report.launches] == [launch.name for launch in plain().launches]
    width = len(rows[0])
    assert f"column 'ID' appears more than once (columns {id_col + 1} and {width - 1}): the first is read" in (
        report.warnings
    )
    assert any(w.startswith("column 'Kernel Name' appears more than once") for w in report.warnings)


# ---------------------------------------------------------------------------------------------
# gzip: every member, and a cap on what it unpacks to
# ---------------------------------------------------------------------------------------------


def test_multi_member_gzip_upload_reads_every_launch() -> None:
    lines = (FIXTURES / "ncu" / "raw.csv").read_bytes().splitlines(keepends=True)
    cut = 6  # header, units row and 4 launches in the first member, 6 launches in the second
    data = gzip.compress(b"".join(lines[:cut])) + gzip.compress(b"".join(lines[cut:]))
    report = L.load_upload("two_members.csv.gz", data)
    assert len(report.launches) == 10
    assert [launch.value(M.TIME) for launch in report.launches] == [launch.value(M.TIME) for launch in plain().launches]
    padded = data + b"\x00" * 1024  # zero padding after the last member is allowed
    assert len(L.load_upload("padded.csv.gz", padded).launches) == 10
    with pytest.raises(ReportError, match="damaged gzip file .bytes after member 2 are no gzip member"):
        L.load_upload("trailing.csv.gz", data + b"garbage")
    with pytest.raises(ReportError, match="damaged gzip file .cut: it ends inside member 2"):
        L.load_upload("cut.csv.gz", data[:-20])


def _bomb(unpacked: int) -> bytes:
    """A gzip file of `unpacked` bytes of one repeated line, compressed in pieces (never all in memory)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    piece = b'"x","y"\n' * (1 << 17)
    parts = [packer.compress(piece) for _ in range(unpacked // len(piece))]
    return b"".join(parts) + packer.flush()


def test_gzip_bomb_is_refused_at_the_upload_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(L, "MAX_REPORT_BYTES", 4_000_000)
    bomb = _bomb(40 << 20)  # 40 MB unpacked, about 40 KB packed
    assert len(bomb) < 200_000
    with pytest.raises(ReportError, match=r"^bomb.csv.gz unpacks to over 4 MB; reports that large are not read"):
        L.load_upload("bomb.csv.gz", bomb)


def test_source_page_gzip_is_unpacked_as_a_stream_with_the_upload_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(S, "MAX_REPORT_BYTES", 4_000_000)
    path = tmp_path / "source.csv.gz"
    path.write_bytes(_bomb(40 << 20))
    with pytest.raises(ReportError, match=r"unpacks to over 4 MB"):
        S.parse_source_bytes(path.read_bytes(), str(path))
    code, out, err = cli(["source", str(path)], capsys)
    assert code == 2 and not out and err.count("\n") == 1 and "unpacks to over 4 MB" in err
    code, out, err = cli(["explain", "v1", "v2", "--source", str(path)], capsys)
    assert code == 2 and err.count("\n") == 1 and "unpacks to over 4 MB" in err


def test_gunzip_helper_reads_members_in_order() -> None:
    parts = [b"first\n", b"second\n", b"third\n"]
    data = b"".join(gzip.compress(p) for p in parts)
    assert bytes(report_input.gunzip(data, "x.gz", 100)) == b"".join(parts)
    with pytest.raises(ReportError, match="unpacks to over"):
        report_input.gunzip(data, "x.gz", 10)


def test_report_json_of_a_repaired_file_is_strict(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rows = rows_of("raw.csv")
    rows[2][rows[0].index(M.TIME)] = "-1"
    path = tmp_path / "neg.csv"
    path.write_bytes(csv_bytes(rows))
    code, out, _ = cli(["report", str(path), "--json"], capsys)
    doc = json.loads(out)
    assert code == 0 and M.TIME not in doc["launches"][0]["metrics"]
    assert any("is negative" in w for w in doc["warnings"])


@pytest.mark.parametrize(
    ("name", "launches", "warned"),
    [
        ("handmade_decimal_comma.csv", 2, ["value '1.234,5' (launch 0) is not a number", "value '0,5' (launch 0)"]),
        ("handmade_negative_counts.csv", 2, ["value '-5952' (launch 0) is negative", "Invocations: value '-3'"]),
        ("handmade_unknown_unit.csv", 1, ["unit 'fortnight' is not an Nsight Compute unit", "unit 'Kfortnight'"]),
        ("handmade_two_exports.csv", 2, ["row 4 repeats the header", "row 7 repeats the header but the units row"]),
        ("handmade_duplicate_identity_columns.csv", 1, ["column 'ID' appears more than once (columns 1 and 5)"]),
        ("handmade_two_members.csv.gz", 3, []),
    ],
)
def test_hostile_corpus_of_wrong_numbers(name: str, launches: int, warned: list[str]) -> None:
    report = L.load_report(FIXTURES / "hostile" / name)
    assert len(report.launches) == launches
    for text in warned:
        assert any(text in w for w in report.warnings), (text, report.warnings)
    durations = [launch.value(M.TIME) for launch in report.launches]
    assert all(d is None or d > 0 for d in durations)
    assert all(launch.id != "ID" and launch.name == "k" for launch in report.launches)


def test_a_cell_ending_in_a_quote_and_comma_does_not_shift_the_next_cell() -> None:
    # 'x",' is written '"x"","': its doubled quote and the separator after it make two overlapping '","', which a
    # split on '","' (and a count of them) takes as one, so the next cell would start inside this one.
    rows = rows_of("raw.csv")
    dram_col = rows[0].index(DRAM)
    before = rows[0][dram_col - 1]
    rows[2][dram_col - 1] = 'x",'
    report = P.parse_report_bytes(csv_bytes(rows), "quote_comma.csv")
    want = plain().launches[0]
    assert report.launches[0].value(DRAM) == want.value(DRAM) == 8458752.0
    assert report.launches[0].value(REGS) == want.value(REGS)
    assert (report.launches[0].attributes[before], report.launches[0].value(before)) == ('x",', None)
