"""Commands that do GPU work check where its results go before the work starts (`--json`, `--save`, `tune --record`,
`profile -o`), and a destination that fails afterwards anyway never loses the results.

The GPU worker is the scripted one of tests/test_usecases.py, which speaks the real protocol and records every job
it was given: "nothing was run" is checked as "the worker got no job".
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from test_usecases import worker  # noqa: F401 - the scripted worker fixture, used by name

from kernels import tuning
from profiling import usecases
from profiling.cli import main
from profiling.commands import tune as tune_command

BENCH = ["bench", "--kernels", "v5", "--sizes", "64"]
TUNE = ["tune", "--kernels", "v8-async", "--sizes", "256", "--repeats", "2"]


@pytest.fixture
def gpu(worker, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):  # noqa: F811
    """The scripted worker for every command; the run store and the temporary folder in tmp_path."""
    monkeypatch.setattr(usecases, "worker_command", worker)
    monkeypatch.setenv("GEMMLENS_DB_PATH", str(tmp_path / "runs.sqlite"))
    monkeypatch.delenv("GEMMLENS_DB_URL", raising=False)
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    return worker


def refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one-line error of a command that exits with status 2 (after the progress lines of any work done)."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if not line.startswith("  ")]  # progress lines are indented
    assert len(errors) == 1 and errors[0].startswith("error: ") and "Traceback" not in err, err
    return errors[0].removeprefix("error: ")


@pytest.mark.parametrize(
    "argv,message",
    [
        ([*BENCH, "--json", "/"], "--json / is a folder: name a file in it (e.g. /results.json); nothing was run"),
        (
            [*TUNE, "--json", "/nonexistent/x.json"],
            "--json /nonexistent/x.json: its folder /nonexistent does not exist; create it first (nothing was run)",
        ),
        (
            [*BENCH, "--ab", "v5,v3", "--json", "/nonexistent/ab.json"],
            "--json /nonexistent/ab.json: its folder /nonexistent does not exist; create it first (nothing was run)",
        ),
        (
            ["profile", "--kernels", "v5", "--sizes", "64", "-o", "/nonexistent/run"],
            "-o/--output /nonexistent/run.ncu-rep: its folder /nonexistent does not exist; create it first "
            "(nothing was run)",
        ),
    ],
)
def test_an_output_that_cannot_be_written_is_refused_before_any_work(
    gpu, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert refused(argv, capsys) == message
    assert gpu.jobs() == []


def test_an_output_under_a_file_or_a_read_only_store_is_refused_before_any_work(
    gpu, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    plain = tmp_path / "notes.txt"
    plain.write_text("x")
    assert refused([*BENCH, "--json", str(plain / "r.json")], capsys) == (
        f"--json {plain / 'r.json'}: its folder {plain} is not a folder; nothing was run"
    )
    monkeypatch.setenv("GEMMLENS_DB_URL", "postgresql+psycopg://nobody@127.0.0.1:1/none?connect_timeout=5")
    message = refused([*BENCH, "--save", "nightly"], capsys)
    assert message.startswith("--save: could not open the run store (postgresql+psycopg://nobody@127.0.0.1:1/none")
    assert message.endswith("nothing was run")
    monkeypatch.delenv("GEMMLENS_DB_URL")
    monkeypatch.setattr(tune_command, "TUNED_DIR", plain / "tuning")
    assert refused([*TUNE, "--record"], capsys) == (
        f"--record: the folder {plain / 'tuning'} cannot be created here ({plain} is not writable); nothing was run"
    )
    assert gpu.jobs() == []


def test_results_whose_json_file_fails_after_the_work_are_kept(
    gpu, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()

    def command(job_file: Path) -> list[str]:
        shutil.rmtree(out)  # the folder goes away while the GPU works
        return gpu(job_file)

    monkeypatch.setattr(usecases, "worker_command", command)
    message = refused([*BENCH, "--json", str(out / "r.json")], capsys)
    assert message.startswith(f"cannot write {out / 'r.json'}: No such file or directory; the results were kept in ")
    kept = Path(message.rsplit(" ", 1)[1])
    assert kept.parent == tmp_path / "tmp" and kept.name.startswith("gemmlens-results-")
    assert [r["kernel"] for r in json.loads(kept.read_text())["results"]] == ["cublas", "v5"]


def test_results_whose_save_fails_after_the_work_are_kept(
    gpu, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def command(job_file: Path) -> list[str]:
        monkeypatch.setenv("GEMMLENS_DB_URL", "postgresql+psycopg://nobody@127.0.0.1:1/gone?connect_timeout=5")
        return gpu(job_file)  # the store the check opened is gone by the time the results are saved

    monkeypatch.setattr(usecases, "worker_command", command)
    message = refused([*BENCH, "--save", "nightly"], capsys)
    assert message.startswith("could not save the run (")
    kept = Path(message.rsplit(" ", 1)[1])
    assert [r["kernel"] for r in json.loads(kept.read_text())["results"]] == ["cublas", "v5"]
    # With --json too, the file is where the results are.
    monkeypatch.delenv("GEMMLENS_DB_URL")
    out = tmp_path / "r.json"
    message = refused([*BENCH, "--json", str(out), "--save", "nightly"], capsys)
    assert message.endswith(f"the results were kept in {out}")
    assert [r["kernel"] for r in json.loads(out.read_text())["results"]] == ["cublas", "v5"]


def test_a_tuning_record_that_fails_after_the_sweep_keeps_the_sweep(
    gpu, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    records = tmp_path / "records"
    monkeypatch.setattr(tuning, "TUNED_DIR", records / "tuning")
    monkeypatch.setattr(tune_command, "TUNED_DIR", records / "tuning")

    def command(job_file: Path) -> list[str]:
        records.write_text("now a file")  # the record's folder cannot be made any more
        return gpu(job_file)

    monkeypatch.setattr(usecases, "worker_command", command)
    out = tmp_path / "sweep.json"
    message = refused([*TUNE, "--record", "--json", str(out)], capsys)
    assert message.startswith("could not record the fastest configurations for scripted GPU: ")
    sweep = json.loads(out.read_text())
    assert sweep["tuning"]["best"][0]["base"] == "v8-async" and sweep["tuning"]["record_errors"]
