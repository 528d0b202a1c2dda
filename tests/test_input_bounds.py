"""Every input has a bound that is stated, enforced and named in the refusal: wide raw pages, `report --json` of a
long one, the access model's launch size, job files, per-launch times, and the sizes and times of run documents.

Inputs are built here from real captures and results (tests/fixtures/ncu, results/); only the bad values are typed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from pathlib import Path

import pytest

from profiling.cli import main
from profiling.commands import json_text
from profiling.commands.report import json_chunks
from profiling.errors import InvalidInput
from profiling.nsight import load as L
from profiling.runs.convert import read_run_file
from profiling.runs.records import RunResult, SavedRun
from profiling.runs.values import MAX_RAW_TIMES

ROOT = Path(__file__).resolve().parent.parent
RAW = ROOT / "tests" / "fixtures" / "ncu" / "raw.csv"
BENCH = ROOT / "results" / "h100-2026-11-24" / "sgemm95_round1" / "bench.json"


def cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    got = capsys.readouterr()
    return code, got.out, got.err


def _bench() -> object:
    spec = importlib.util.spec_from_file_location("bench_parse", ROOT / "scripts" / "bench_parse.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------------------------------------
# Wide raw pages and report --json
# ---------------------------------------------------------------------------------------------


def test_wide_raw_page_reads_every_column_exactly(tmp_path: Path) -> None:
    """20,000 columns (the capture's metric columns repeated under new names): each repeat has its column's value."""
    path = tmp_path / "wide.csv"
    path.write_text(_bench().build_csv(RAW, 12, 20_000))
    report = L.load_report(path)
    plain = L.load_report(RAW)
    assert len(report.launches) == 12
    for launch, base in zip(report.launches, plain.launches + plain.launches[:2], strict=True):
        for name in ("gpu__time_duration.sum", "dram__bytes.sum", "launch__registers_per_thread"):
            repeats = [k for k in launch.metrics if re.fullmatch(re.escape(name) + r"_\d+", k)]
            assert repeats and all(launch.value(k) == base.value(name) for k in repeats), name
        assert launch.value("gpu__time_duration.sum") == base.value("gpu__time_duration.sum")
        assert launch.attributes.get("launch__func_cache_config") == base.attributes.get("launch__func_cache_config")


def test_wide_raw_page_memory_is_bounded(tmp_path: Path) -> None:
    """A raw page of 50,000 columns x 100 rows (about 43 MB) adds at most 4x its size over the libraries (a pandas
    Series per column per block once took 16x; 2.8x here, of which about 75 MB are the columns' names and units)."""
    bench = _bench()
    path = tmp_path / "wide.csv"
    path.write_text(bench.build_csv(RAW, 100, 50_000))
    size = path.stat().st_size
    got = bench.measure(path, "file")
    assert got["launches"] == 100
    added = got["peak_rss"] - got["rss_libraries"]
    assert added <= 4 * size, f"{added / 1e6:.0f} MB over the libraries for a {size / 1e6:.0f} MB file"


@pytest.mark.parametrize(
    "name", ["ncu/raw.csv", "ncu/details.csv", "ncu/summary.csv", "foreign/raw.csv", "foreign/details_all.csv.gz"]
)
def test_report_json_streamed_is_the_whole_document(name: str) -> None:
    path = ROOT / "tests" / "fixtures" / name
    report = L.load_upload(path.name, path.read_bytes()) if name.endswith(".gz") else L.load_report(path)
    chunks = list(json_chunks(report))
    assert len(chunks) == len(report.launches) + 2  # one piece per launch, and a head and a tail
    streamed = b"".join(chunks)
    assert json.loads(streamed) == json.loads(json_text(report.to_dict()))
    lines = streamed.decode("utf-8").splitlines()
    assert len(lines) == len(report.launches) + 2  # the head, a line per launch, the tail
    assert [json.loads(line.rstrip(",")).get("id") for line in lines[1:-1]] == [x.id for x in report.launches]


def test_report_json_streamed_keeps_changed_missing_and_odd_values() -> None:
    """Rows that differ from their table (a metric set apart with another unit, deleted ones, none left) and text
    orjson refuses as it is (a lone surrogate, from a hostile file name) give the document json_text writes."""
    from profiling.nsight.metric_table import Metric

    report = L.load_report(RAW)
    b"".join(json_chunks(report))  # written once before the changes: nothing of it may be kept
    first, second, third = report.launches[:3]
    first.metrics["gpu__time_duration.sum"] = Metric(6.5, "usecond", derived_from="a test")
    first.metrics["gemmlens__made_up.sum"] = Metric(2.0, "byte")
    del second.metrics["dram__bytes.sum"]
    for name in list(third.metrics):
        del third.metrics[name]
    report.source = "odd\ud800name.csv"
    doc = json.loads(b"".join(json_chunks(report)))
    assert doc == json.loads(json_text(report.to_dict()))
    assert doc["source"] == "odd\ufffdname.csv"
    assert doc["launches"][0]["metrics"]["gpu__time_duration.sum"] == {
        "value": 6.5,
        "unit": "usecond",
        "derived_from": "a test",
    }
    assert list(doc["launches"][0]["metrics"])[-2:] == ["gpu__time_duration.sum", "gemmlens__made_up.sum"]
    assert "dram__bytes.sum" not in doc["launches"][1]["metrics"]
    assert doc["launches"][1]["metrics"]["gpu__time_duration.sum"] == {"value": 4420992.0, "unit": "nsecond"}
    assert doc["launches"][2]["metrics"] == {}


def test_report_json_of_many_rows_with_several_patterns_of_missing_values(tmp_path: Path) -> None:
    """150 launches (rows written 64 at a time, grouped by which metrics they lack): every third launch lacks a
    metric, every fifth two others; the document is the one json_text writes, value for value."""
    path = tmp_path / "long.csv"
    width = len(RAW.read_text().splitlines()[0].split('","'))
    path.write_text(_bench().build_csv(RAW, 150, width))
    report = L.load_report(path)
    for n, launch in enumerate(report.launches):
        if n % 3 == 0:
            del launch.metrics["dram__bytes.sum"]
        if n % 5 == 0:
            del launch.metrics["gpu__time_duration.sum"], launch.metrics["launch__registers_per_thread"]
    doc = json.loads(b"".join(json_chunks(report)))
    assert doc == json.loads(json_text(report.to_dict()))
    metrics = [launch["metrics"] for launch in doc["launches"]]
    assert [n for n, m in enumerate(metrics) if "dram__bytes.sum" not in m] == list(range(0, 150, 3))
    assert [n for n, m in enumerate(metrics) if "gpu__time_duration.sum" not in m] == list(range(0, 150, 5))
    assert metrics[141]["gpu__time_duration.sum"] == {"value": 4420992.0, "unit": "nsecond"}  # the capture's row 1


def test_report_json_to_a_text_stream_without_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where stdout is a text stream with no byte buffer under it (an embedding program's StringIO), the same
    document is written as text."""
    import io

    stream = io.StringIO()
    monkeypatch.setattr("sys.stdout", stream)
    assert main(["report", str(RAW), "--json"]) == 0
    doc = json.loads(stream.getvalue())
    assert doc == json.loads(json_text(L.load_report(RAW).to_dict()))
    assert len(doc["launches"]) == 10 and doc["launches"][1]["metrics"]["gpu__time_duration.sum"]["value"] == 4420992.0


def test_report_json_cli_writes_launches_one_by_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(["report", str(RAW), "--json"], capsys)
    doc = json.loads(out)
    assert code == 0 and not err and len(doc["launches"]) == 10
    assert out.count("\n") >= 10  # a line per launch, not one document built whole
    first = L.load_report(RAW).launches[0]
    assert doc["launches"][0]["metrics"]["gpu__time_duration.sum"] == {
        "value": first.value("gpu__time_duration.sum"),
        "unit": "nsecond",
    }


# ---------------------------------------------------------------------------------------------
# access: the model's work bounded by what it draws
# ---------------------------------------------------------------------------------------------


def test_access_refuses_a_launch_too_big_to_follow_at_once(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(
        ["access", "--kernel", "v1", "--m", "1000000000", "--n", "1000000000", "--k", "1000000000"], capsys
    )
    assert code == 2 and not out
    assert err == (
        "error: v1 at 1000000000x1000000000x1000000000 launches 976,562,500,000,000 blocks; the access model looks "
        "at each and follows at most 4,194,304 (C of 16384 x 16384 in 8 x 8 tiles): pick smaller M and N\n"
    )
    code, _, err = cli(["access", "--kernel", "v1", "--m", "128", "--n", "128", "--k", "1000000"], capsys)
    assert code == 2 and "runs 1,000,000 K-loop iterations; the access model follows at most 16,384" in err


def test_access_still_follows_the_pages_largest_launch_shape() -> None:
    from kernels.indexing import model_for
    from profiling.analysis.access import work_problem
    from profiling.shape import Shape

    assert work_problem(model_for("tiled-8"), Shape(16384, 16384, 16384)) is None
    assert work_problem(model_for("v1"), Shape(16384, 16384, 16384)) is None
    assert work_problem(model_for("tiled-8"), Shape(16392, 16384, 64)) is not None


# ---------------------------------------------------------------------------------------------
# worker --job
# ---------------------------------------------------------------------------------------------


@pytest.mark.skipif(not Path("/dev/zero").exists() or not hasattr(os, "mkfifo"), reason="needs /dev/zero and FIFOs")
def test_worker_job_must_be_a_small_regular_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(["worker", "--job", "/dev/zero"], capsys)
    assert code == 2 and err == "error: job file /dev/zero is not a regular file (a device, pipe or folder)\n"
    fifo = tmp_path / "job.fifo"
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)  # a writer, so that opening it to read does not block
    try:
        code, _, err = cli(["worker", "--job", str(fifo)], capsys)
    finally:
        os.close(fd)
    assert code == 2 and "is not a regular file" in err
    big = tmp_path / "job.json"
    big.write_bytes(b" " * 4_000_001)
    code, _, err = cli(["worker", "--job", str(big)], capsys)
    assert code == 2 and err == f"error: job file {big} is over 4 MB; job files are a few KB\n"


# ---------------------------------------------------------------------------------------------
# Per-launch times and run documents
# ---------------------------------------------------------------------------------------------


def _bench_doc() -> dict:
    return json.loads(BENCH.read_text())


def test_too_many_launch_times_are_refused_with_the_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = _bench_doc()
    first = doc["results"][0]
    first["times_ms"] = (first["times_ms"] * (MAX_RAW_TIMES // len(first["times_ms"]) + 2))[: MAX_RAW_TIMES + 1]
    path = tmp_path / "many.json"
    path.write_text(json.dumps(doc))
    code, out, err = cli(["compare", str(BENCH), str(path)], capsys)
    assert code == 2 and not out
    assert err == (
        f"error: {path}: benchmark result 1 (cublas 2048x2048x2048): times_ms holds 100,001 launch times; at most "
        "100,000 are read (bench --repeats allows 10,000): keep a sample of them\n"
    )
    first["times_ms"] = first["times_ms"][:MAX_RAW_TIMES]
    path.write_text(json.dumps(doc))
    run = read_run_file(path)
    assert len(run.results[0].times_ms) == MAX_RAW_TIMES


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("m", -2048, "m -2048 is not a size (a whole number from 1)"),
        ("n", 0, "n 0 is not a size (a whole number from 1)"),
        ("m", True, "m true is not a size (a whole number from 1)"),
        ("k", 2048.5, "k 2048.5 is not a size (a whole number from 1)"),
        ("k", "big", "k 'big' is not a size (a whole number from 1)"),
        ("m", float("nan"), "m nan is not a size (a whole number from 1)"),
        ("n", float("inf"), "n inf is not a size (a whole number from 1)"),
        ("time_median_ms", -0.5, "time_median_ms -0.5 is not a time (times are above zero)"),
        ("time_median_ms", 0, "time_median_ms 0 is not a time (times are above zero)"),
        ("tflops", -35.0, "tflops -35 is negative, which it cannot be"),
        ("registers", -1, "registers -1 is negative, which it cannot be"),
    ],
)
def test_run_document_with_an_impossible_value_is_refused_before_storing(
    field: str, value: object, message: str
) -> None:
    record = {"kernel": "v5", "m": 2048, "n": 2048, "k": 2048, "time_median_ms": 1.5, field: value}
    with pytest.raises(InvalidInput, match=f"^result 1 \\(v5\\): {message.replace('(', '.').replace(')', '.')}$"):
        SavedRun.create([record], label="bad", kind="bench")
    assert RunResult.from_dict({"kernel": "v5", "m": 2048, "n": 2048, "k": 2048, "time_median_ms": 1.5}).m == 2048


def test_store_never_holds_an_impossible_size(tmp_path: Path) -> None:
    from profiling.runs.store import RunStore

    doc = _bench_doc()
    doc["results"][1]["m"] = -2048
    path = tmp_path / "neg.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InvalidInput, match=r"benchmark result 2 \(.*\): m -2048 is not a size"):
        read_run_file(path)
    store = RunStore(f"sqlite:///{tmp_path / 'runs.sqlite'}")
    try:
        with pytest.raises(InvalidInput, match="m true is not a size"):
            store.save_run({"schema": "gemmlens.run.v1", "kind": "bench", "results": [{"kernel": "v1", "m": True}]})
        assert store.list_runs() == []
    finally:
        store.close()


def test_negative_median_time_no_longer_gives_a_faster_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = _bench_doc()
    first = doc["results"][0]
    first["time_ms"]["median"] = -first["time_ms"]["median"]
    first.pop("times_ms", None)
    path = tmp_path / "negative_time.json"
    path.write_text(json.dumps(doc))
    code, out, err = cli(["compare", str(BENCH), str(path)], capsys)
    assert code == 2 and "faster" not in out
    assert "time_median_ms" in err and "is not a time (times are above zero)" in err


# ---------------------------------------------------------------------------------------------
# Review's JSON import: the role before a byte is read, then the size
# ---------------------------------------------------------------------------------------------


def _export_bytes() -> bytes:
    from profiling.runs.export import export_runs_json

    return export_runs_json([read_run_file(BENCH)]).encode()


def test_a_viewer_import_is_refused_before_a_byte_is_read() -> None:
    from profiling.runs.export import read_runs_upload
    from profiling.team.roles import Identity, PermissionDenied

    def never() -> bytes:
        raise AssertionError("the upload was read before the role was checked")

    viewer = Identity("vera@example.com", "viewer", "Vera", signed_in=True)
    with pytest.raises(PermissionDenied, match="^vera@example.com is a viewer: .* needs the runner or admin role"):
        read_runs_upload(viewer, "runs.json", 90_000_000, never)
    with pytest.raises(PermissionDenied, match="^sign in first: importing runs needs a signed-in identity$"):
        read_runs_upload(None, "runs.json", 10, never)


def test_an_import_over_the_cap_is_refused_before_it_is_read() -> None:
    from profiling.runs.export import MAX_IMPORT_BYTES, read_runs_upload
    from profiling.team.roles import Identity

    runner = Identity("rui@example.com", "runner", "Rui", signed_in=True)
    with pytest.raises(InvalidInput, match="^runs.json is 90 MB; run imports over 25 MB are not read"):
        read_runs_upload(runner, "runs.json", 90_000_000, lambda: pytest.fail("read before the size was checked"))
    data = _export_bytes()
    assert len(data) < MAX_IMPORT_BYTES
    (run,) = read_runs_upload(runner, "runs.json", len(data), lambda: data)
    assert run.results[0].kernel == "cublas" and len(run.results) == len(read_run_file(BENCH).results)


def test_review_page_offers_no_import_to_a_viewer(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from streamlit.testing.v1 import AppTest

    from profiling.app import auth
    from profiling.team.roles import Identity

    monkeypatch.setenv("GEMMLENS_GPU", "off")
    monkeypatch.setenv("GEMMLENS_DB_PATH", str(tmp_path / "runs.sqlite"))
    monkeypatch.delenv("GEMMLENS_DB_URL", raising=False)
    viewer = Identity("vera@example.com", "viewer", "Vera", signed_in=True)
    monkeypatch.setattr(auth, "current_identity", lambda: viewer)
    monkeypatch.setattr(auth, "may", lambda action: viewer.may(action))
    page = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    page.session_state["add_runs"] = True  # the Add runs expander open: it is drawn into only while open
    page.run().switch_page("pages/7_Review.py").run()
    assert not page.exception, [e.value for e in page.exception]
    assert not page.get("file_uploader")
    assert "Importing runs needs the runner or admin role." in [c.value for c in page.caption]


def test_review_page_gives_its_import_cap_to_the_browser(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A runner's import field carries the 25 MB cap to the browser (st.file_uploader's max_upload_size), which
    refuses a bigger file before sending it (tests/browser/test_import_cap_browser.py); the server's own limit is
    the reports' 190 MiB."""
    from streamlit.testing.v1 import AppTest

    from profiling.app import auth
    from profiling.runs.export import MAX_IMPORT_BYTES, MAX_IMPORT_MB
    from profiling.team.roles import Identity

    monkeypatch.setenv("GEMMLENS_GPU", "off")
    monkeypatch.setenv("GEMMLENS_DB_PATH", str(tmp_path / "runs.sqlite"))
    monkeypatch.delenv("GEMMLENS_DB_URL", raising=False)
    runner = Identity("rui@example.com", "runner", "Rui", signed_in=True)
    monkeypatch.setattr(auth, "current_identity", lambda: runner)
    monkeypatch.setattr(auth, "may", lambda action: runner.may(action))
    page = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    page.session_state["add_runs"] = True  # the Add runs expander open: it is drawn into only while open
    page.run().switch_page("pages/7_Review.py").run()
    assert not page.exception, [e.value for e in page.exception]
    (uploader,) = page.get("file_uploader")
    assert uploader.proto.label == "Import runs (JSON exported from this page, up to 25 MB)"
    assert uploader.proto.max_upload_size_mb == MAX_IMPORT_MB == 25
    assert MAX_IMPORT_BYTES == 25_000_000
