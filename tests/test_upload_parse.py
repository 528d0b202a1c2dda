"""Uploads are parsed in a child process: the same report or the same one-line error as in the server, and a parser
that hangs or dies fails only that upload."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from profiling.app import upload_parse
from profiling.errors import GemmLensError, ReportError
from profiling.nsight.load import load_upload

ROOT = Path(__file__).resolve().parent.parent
RAW = ROOT / "tests" / "fixtures" / "ncu" / "raw.csv"


def test_a_real_capture_parses_in_the_child_like_in_the_server() -> None:
    data = RAW.read_bytes()
    here, there = load_upload(RAW.name, data), upload_parse.parse_in_child(RAW.name, data)
    assert [launch.name for launch in there.launches] == [launch.name for launch in here.launches]
    first_here, first_there = here.launches[0], there.launches[0]
    assert first_there.value("gpu__time_duration.sum") == first_here.value("gpu__time_duration.sum")
    assert dict(first_there.derived) == dict(first_here.derived)


def test_bad_input_gives_the_servers_message() -> None:
    data = b"\x00\x01 not a report"
    with pytest.raises(GemmLensError) as here:
        load_upload("x.csv", data)
    with pytest.raises(GemmLensError) as there:
        upload_parse.parse_in_child("x.csv", data)
    assert type(there.value) is type(here.value) and str(there.value) == str(here.value)


def test_a_hanging_or_dying_parser_fails_that_upload_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parent))
    for module, message in (
        ("upload_children.hang", "longer than 2 s"),
        ("upload_children.die", "parser stopped .*Segmentation fault"),
    ):
        with pytest.raises(ReportError, match=message):
            upload_parse.parse_in_child("x.csv", RAW.read_bytes(), timeout_s=2, module=module)


def test_a_file_parsed_by_one_server_process_is_read_back_by_another(tmp_path, monkeypatch) -> None:
    """Server processes share parsed uploads on disk: another process's parse is read back, not parsed again."""
    data = RAW.read_bytes()
    key = f"{RAW.name}:abc"
    script = (
        "import sys; from pathlib import Path; from profiling.app import upload_parse as u; "
        f"r = u.parse_shared({key!r}, {RAW.name!r}, Path({str(RAW)!r}).read_bytes(), Path({str(tmp_path)!r})); "
        "print(len(r.launches))"
    )
    other = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=True)
    assert other.stdout.strip() == "10"
    parses = []
    monkeypatch.setattr(upload_parse, "_child_answer", lambda *a: parses.append(a) or b"")
    here = upload_parse.parse_shared(key, RAW.name, data, tmp_path)
    assert parses == []  # read from the other process's answer
    assert [x.name for x in here.launches] == [x.name for x in load_upload(RAW.name, data).launches]
    assert here.launches[0].value("gpu__time_duration.sum") == load_upload(RAW.name, data).launches[0].value(
        "gpu__time_duration.sum"
    )


def test_errors_are_not_kept_and_file_names_never_become_paths(tmp_path) -> None:
    bad = b"\x00\x01 not a report"
    for _ in range(2):  # parsed (and refused) each time: a refusal is not kept
        with pytest.raises(GemmLensError):
            upload_parse.parse_shared("../../x.csv:1", "../../x.csv", bad, tmp_path / "uploads")
    assert list((tmp_path / "uploads").glob("*.pickle")) == []
    assert sorted(p.parent for p in tmp_path.rglob("*") if p.is_file()) == [tmp_path / "uploads"]
    upload_parse.parse_shared("../../raw.csv:2", "../../raw.csv", RAW.read_bytes(), tmp_path / "uploads")
    kept = list((tmp_path / "uploads").glob("*.pickle"))
    assert len(kept) == 1 and ".." not in kept[0].name and "raw" not in kept[0].name


def test_a_parse_kept_by_other_code_is_not_read_back(tmp_path, monkeypatch) -> None:
    """An answer pickled by another version of the code (its classes may lack fields the new ones have) is never
    unpickled: the kept parse is keyed by the code too, so the new code parses again."""
    data = RAW.read_bytes()
    assert len(upload_parse.code_version()) == 16
    upload_parse.parse_shared(f"{RAW.name}:1", RAW.name, data, tmp_path)
    assert len(list(tmp_path.glob("*.pickle"))) == 1
    parses = []
    monkeypatch.setattr(upload_parse, "_child_answer", lambda *a: parses.append(a) or b"")
    upload_parse.parse_shared(f"{RAW.name}:1", RAW.name, data, tmp_path)
    assert parses == []  # same code: read back
    monkeypatch.setattr(upload_parse, "code_version", lambda: "another version")
    with pytest.raises(ReportError):  # parsed again (by the stub, whose empty answer is a failed parse)
        upload_parse.parse_shared(f"{RAW.name}:1", RAW.name, data, tmp_path)
    assert len(parses) == 1
