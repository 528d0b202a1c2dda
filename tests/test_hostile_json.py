"""Hostile JSON given to `compare` and to the Review page's import: each case is one line naming the first bad
field, never a traceback."""

from __future__ import annotations

import copy
import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

from profiling.cli import main
from profiling.errors import InvalidInput
from profiling.runs import convert, values
from profiling.runs.convert import read_run_file
from profiling.runs.export import read_runs_json

RUN = {
    "schema": "gemmlens.run.v1",
    "label": "one",
    "kind": "bench",
    "created_utc": "2026-11-22T01:23:45Z",
    "device": {"name": "NVIDIA H200", "cc": "9.0"},
    "results": [{"kernel": "v5", "m": 64, "n": 64, "k": 64, "status": "ok", "time_median_ms": 1.0}],
}


def _run(**changes: Any) -> dict[str, Any]:
    run = copy.deepcopy(RUN)
    for key, value in changes.items():
        if key.startswith("result_"):
            run["results"][0][key.removeprefix("result_")] = value
        else:
            run[key] = value
    return run


# (JSON text, what the one-line message must say); each goes to compare as a file and to the import.
CASES = {
    "deep": ("[" * 100_000 + "]" * 100_000, "nests deeper than 64 levels"),
    "deep_in_meta": (json.dumps(_run(meta=json.loads("[" * 200 + "]" * 200))), "nests deeper than 64 levels"),
    "year_1_east_of_utc": (json.dumps(_run(created_utc="0001-01-01T00:00:00+05:00")), "created_utc 0001-01-01"),
    "year_9999_west_of_utc": (json.dumps(_run(created_utc="9999-12-31T23:00:00-05:00")), "created_utc 9999-12-31"),
    "no_runs_key": ('{"schema":"gemmlens.runs.v1"}', "no `runs` list"),
    "derived_list": (json.dumps(_run(result_derived=[1, 2, 3])), "result 1: derived is not an object"),
    "lone_surrogate_kernel": (json.dumps(_run(result_kernel="\ud800")), "results[0].kernel holds a lone surrogate"),
    "lone_surrogate_key": (json.dumps(_run(meta={"\udfff": 1})), "a key in meta holds a lone surrogate"),
    "m_1e300": (json.dumps(_run(result_m=1e300)), "result 1 (v5): m 1e+300 is out of range"),
    "registers_1e30": (json.dumps(_run(result_registers=1e30)), "registers 1e+30 is out of range"),
    "id_huge": (json.dumps(_run(id=10**30)), "run id 1e+30 is out of range"),
    "int_of_5000_digits": ('{"a": ' + "9" * 5000 + "}", "is not"),
    "int_beyond_floats": (json.dumps(_run(result_time_median_ms=10**400)), None),  # read as no value
    "truncated": (json.dumps(RUN)[:-7], "is not"),
    "meta_text": (json.dumps(_run(meta=" ")), "run `meta` must be an object"),
    "m_of_401_digits": (json.dumps(_run(result_m=10**400)), "m an integer of 401 digits is out of range"),
}


@pytest.mark.parametrize("name", CASES)
def test_compare_reads_hostile_files_in_one_line(name: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    text, message = CASES[name]
    path = tmp_path / f"{name}.json"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    status = main(["compare", str(path), str(path)])
    captured = capsys.readouterr()
    if message is None:
        assert status == 0 and captured.err == ""
        return
    assert status == 2
    assert captured.err.startswith("error: ") and captured.err.count("\n") == 1
    assert message in captured.err and str(path) in captured.err


@pytest.mark.parametrize("name", CASES)
def test_the_review_import_reads_hostile_files_in_one_line(name: str) -> None:
    text, message = CASES[name]
    if name == "no_runs_key" or message is None:
        doc = json.loads(text)
        text = json.dumps({"schema": "gemmlens.runs.v1", "runs": [doc]}) if message is None else text
    data = text.encode("utf-8", "surrogatepass")
    if message is None:
        (run,) = read_runs_json(data)
        assert run.results[0].time_median_ms is None
        return
    with pytest.raises(InvalidInput) as info:
        read_runs_json(data, "upload.json")
    assert message in str(info.value) and "\n" not in str(info.value)


def test_the_import_names_the_run_and_result() -> None:
    export = {"schema": "gemmlens.runs.v1", "runs": [RUN, _run(result_m=1e300)]}
    with pytest.raises(InvalidInput, match=r"^run 2 of the export: result 1 \(v5\): m 1e\+300 is out of range"):
        read_runs_json(json.dumps(export))


def test_a_one_run_file_with_no_runs_key_or_many_runs(tmp_path: Path) -> None:
    path = tmp_path / "two.json"
    path.write_text(json.dumps({"schema": "gemmlens.runs.v1", "runs": [RUN, RUN]}))
    with pytest.raises(InvalidInput, match="holds 2 runs; compare needs a file with exactly one"):
        read_run_file(path)


def test_jsonable_is_bounded_and_cleans_text() -> None:
    deep: list = []
    for _ in range(10_000):
        deep = [deep]
    with pytest.raises(InvalidInput, match="nests deeper than 64 levels"):
        values.jsonable(deep)
    assert values.jsonable({"\ud800": ["a\udfffb", math.nan]}) == {"\ufffd": ["a\ufffdb", None]}
    json.dumps(values.jsonable({"k": "\ud800"})).encode("utf-8")


def test_check_json_tree_names_the_first_bad_place() -> None:
    values.check_json_tree({"a": [1, {"b": "ok"}]}, "f.json")
    with pytest.raises(InvalidInput, match=r"^f.json: a\[1\].b holds a lone surrogate"):
        values.check_json_tree({"a": [1, {"b": "\ud800"}], "z": "\udc00"}, "f.json")


def test_dates_out_of_range_in_utc_name_the_field() -> None:
    with pytest.raises(InvalidInput, match="saved_utc 0001-01-01T00:00:00\\+01:00 is out of range"):
        values.to_utc("0001-01-01T00:00:00+01:00", "saved_utc")
    assert values.to_utc("0001-01-01T00:00:00-01:00").year == 1


@pytest.mark.skipif(not Path("/dev/zero").exists() or not hasattr(os, "mkfifo"), reason="needs /dev/zero and FIFOs")
def test_compare_refuses_devices_and_pipes_without_reading_them(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    for path in (Path("/dev/zero"), fifo):  # endless, and blocking: neither may be read
        with pytest.raises(InvalidInput, match="is not a results file"):
            read_run_file(path)


def test_compare_refuses_files_over_the_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(convert, "MAX_RESULTS_FILE_BYTES", 100)
    path = tmp_path / "big.json"
    path.write_text(json.dumps(RUN))
    with pytest.raises(InvalidInput, match="results files that large are not read"):
        read_run_file(path)


CORPUS = sorted(p for p in (Path(__file__).parent / "fixtures" / "refused").iterdir() if p.name != "README.md")


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_compare_refuses_each_file_of_the_bad_input_corpus(path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["compare", str(path), str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1


def test_a_bench_number_beyond_any_float_reads_as_no_value(tmp_path: Path) -> None:
    """Found by Hypothesis: json_number(10**400) raised OverflowError."""
    row = {"kernel": "v5", "m": 64, "n": 64, "k": 64, "status": "ok", "tflops": 10**400, "time_ms": {"median": 1.0}}
    path = tmp_path / "bench.json"
    path.write_text(json.dumps({"schema": "gemmlens.bench.v1", "results": [row]}))
    (result,) = read_run_file(path).results
    assert result.tflops is None and result.time_median_ms == 1.0
