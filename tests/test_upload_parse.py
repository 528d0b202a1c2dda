"""Uploads are parsed in a child process: the same report or the same one-line error as in the server, and a parser
that hangs or dies fails only that upload."""

from __future__ import annotations

from pathlib import Path

import pytest

from profiling.app import upload_parse
from profiling.errors import GemmLensError, ReportError
from profiling.nsight.load import load_upload

RAW = Path(__file__).resolve().parent / "fixtures" / "ncu" / "raw.csv"


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
    for module, message in (("upload_children.hang", "longer than 2 s"),
                            ("upload_children.die", "parser stopped .*Segmentation fault")):  # fmt: skip
        with pytest.raises(ReportError, match=message):
            upload_parse.parse_in_child("x.csv", RAW.read_bytes(), timeout_s=2, module=module)
