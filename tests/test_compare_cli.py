"""`python -m profiling compare`: exit statuses, output, run ids and result files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from profiling.cli import main
from profiling.runs.convert import read_run_file
from profiling.runs.store import RunStore

REPO = Path(__file__).resolve().parents[1]


def bench_doc(kernels: dict[str, float], size: int = 4096) -> dict:
    """A gemmlens.bench.v1 document (docs/results-format.md): one ok result per kernel, median ms."""
    return {
        "schema": "gemmlens.bench.v1",
        "created_utc": "2026-11-22T01:23:45Z",
        "tool": {"gemmlens_commit": "abc1234"},
        "device": {"name": "NVIDIA H100 80GB HBM3", "cc": "9.0"},
        "results": [
            {
                "kernel": name,
                "m": size,
                "n": size,
                "k": size,
                "status": "ok",
                "error": None,
                "time_ms": {"median": ms, "min": ms, "max": ms},
                "tflops": 2 * size**3 / (ms * 1e-3) / 1e12,
                "pct_cublas": 80.0,
                "compile": {"registers": 64},
            }
            for name, ms in kernels.items()
        ],
    }


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    docs = {
        "base": bench_doc({"v3": 3.0, "v5": 2.0, "v7": 1.0}),
        "slower": bench_doc({"v3": 3.3, "v5": 2.0}),  # v3 +10%
        "faster": bench_doc({"v3": 2.9, "v5": 1.5, "v9": 1.0}),
        "other": bench_doc({"x": 1.0}),
    }
    out = {}
    for name, doc in docs.items():
        out[name] = tmp_path / f"{name}.json"
        out[name].write_text(json.dumps(doc))
    broken = bench_doc({"v3": 3.0, "v5": 2.0})
    broken["results"][1].update(status="wrong", error="max rel error 0.3", time_ms={"median": 1.0})
    out["broken"] = tmp_path / "broken.json"
    out["broken"].write_text(json.dumps(broken))
    return out


def test_slower_candidate_fails_past_threshold(files: dict[str, Path], capsys: pytest.CaptureFixture) -> None:
    assert main(["compare", str(files["base"]), str(files["slower"]), "--fail-if-slower", "5"]) == 1
    out = capsys.readouterr().out
    assert "v3 4096x4096x4096 (+10.0%, medians only, no interval)" in out
    assert out.rstrip().splitlines()[-1].startswith("FAIL: 1 ")
    assert "v7 4096x4096x4096 (baseline)" in out  # reported as not compared, not as a failure
    # The same pair passes with a looser threshold, and without the flag it only prints.
    assert main(["compare", str(files["base"]), str(files["slower"]), "--fail-if-slower", "10.5"]) == 0
    assert "OK: nothing slower" in capsys.readouterr().out
    assert main(["compare", str(files["base"]), str(files["slower"])]) == 0


def test_faster_candidate_passes_and_prints_table(files: dict[str, Path], capsys: pytest.CaptureFixture) -> None:
    assert main(["compare", str(files["base"]), str(files["faster"]), "--fail-if-slower", "0"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    header = next(line for line in lines if line.lstrip().startswith("kernel"))
    assert "base ms" in header and "cand ms" in header and "verdict" in header
    v5 = next(line for line in lines if line.lstrip().startswith("v5 "))
    # These files saved no per-launch times: the change of the medians, and no verdict without an interval.
    assert "medians only: -25.0 %, no verdict" in v5 and "faster" not in v5


def test_kernel_that_breaks_fails_the_check(files: dict[str, Path], capsys: pytest.CaptureFixture) -> None:
    # v5 became faster on paper but wrong: that is a failure, not an improvement.
    assert main(["compare", str(files["base"]), str(files["broken"]), "--fail-if-slower", "50"]) == 1
    assert "v5 4096x4096x4096 (ok->wrong)" in capsys.readouterr().out


def test_run_ids_from_the_store(files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    with RunStore(url) as s:
        base_id = s.save_run(read_run_file(files["base"], label="baseline run"))
        slow_id = s.save_run(read_run_file(files["slower"]))
    assert main(["compare", str(base_id), str(slow_id), "--db", url, "--fail-if-slower", "5"]) == 1
    out = capsys.readouterr().out
    assert f"run {base_id} 'baseline run'" in out
    # A store id against a file works too.
    assert main(["compare", str(base_id), str(files["faster"]), "--db", url, "--fail-if-slower", "5"]) == 0


def test_default_store_from_environment(
    files: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "env.sqlite"
    monkeypatch.delenv("GEMMLENS_DB_URL", raising=False)
    monkeypatch.setenv("GEMMLENS_DB_PATH", str(path))
    with RunStore() as s:
        run_id = s.save_run(read_run_file(files["base"]))
    assert main(["compare", str(run_id), str(files["base"]), "--fail-if-slower", "0"]) == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["{base}", "{missing}"], "is neither a run id nor an existing results file"),
        (["{base}", "42", "--db", "sqlite:///{tmp}/absent.sqlite"], "no run store at"),
        (["{base}", "42", "--db", "sqlite:///{tmp}/runs.sqlite"], "no run 42 in the run store"),
        (["{base}", "{other}"], "nothing to compare"),
        (["{base}", "{garbage}"], "is not JSON"),
        (["{base}", "{tmp}"], "is a directory"),
        (["{base}", "{wrongschema}"], "unsupported JSON"),
        (["{base}", "{base}", "--fail-if-slower", "-3"], "--fail-if-slower must be a percentage"),
        (["{base}", "{base}", "--fail-if-slower", "nan"], "--fail-if-slower must be a percentage"),
        (["{base}", "{base}", "--db", "nonsense"], "not a database URL"),
    ],
)
def test_bad_input_one_line_exit_2(
    argv: list[str], message: str, files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    (tmp_path / "garbage.json").write_text("{not json")
    (tmp_path / "wrongschema.json").write_text('{"schema": "something"}')
    RunStore(f"sqlite:///{tmp_path / 'runs.sqlite'}").close()
    names = {
        "base": files["base"],
        "other": files["other"],
        "missing": tmp_path / "missing.json",
        "garbage": tmp_path / "garbage.json",
        "wrongschema": tmp_path / "wrongschema.json",
        "tmp": tmp_path,
    }
    args = [a.format(**names) for a in argv]
    assert main(["compare", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "absent.sqlite").exists()  # reading never creates a store


def test_entry_point_exit_status(files: dict[str, Path]) -> None:
    """The real `python -m profiling compare` process, as a CI job runs it."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "profiling", "compare", str(files["base"]), str(files["slower"])]
    slow = subprocess.run([*cmd, "--fail-if-slower", "5"], capture_output=True, text=True, cwd=REPO, env=env)
    assert slow.returncode == 1 and "FAIL" in slow.stdout
    bad = subprocess.run([*cmd, "--fail-if-slower", "x"], capture_output=True, text=True, cwd=REPO, env=env)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


REAL = Path(__file__).resolve().parents[1] / "results"


def test_real_runs_gate_on_the_interval(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Two back-to-back H100 runs of the same code pass; a 10 % slower copy of one fails, interval shown."""
    base = REAL / "h100-2026-11-24" / "verdicts" / "seq_4096_r100.json"
    again = REAL / "h100-2026-11-24" / "verdicts" / "again_seq_4096_r100.json"
    assert main(["compare", str(base), str(again), "--fail-if-slower", "2"]) == 0
    out = capsys.readouterr().out
    assert "95% bootstrap interval" in out and "same" in out and "OK: nothing slower" in out
    doc = json.loads(base.read_text())
    for r in doc["results"]:
        r["times_ms"] = [t * 1.1 for t in r["times_ms"]]
        r["time_ms"]["median"] *= 1.1
    slow = tmp_path / "slow.json"
    slow.write_text(json.dumps(doc))
    assert main(["compare", str(base), str(slow), "--fail-if-slower", "5"]) == 1
    out = capsys.readouterr().out
    assert "FAIL: 3 " in out and "v8-async 4096x4096x4096 (+10.0 % [+10.0, +10.0])" in out


def test_runs_of_two_gpu_models_cannot_gate_unless_cross_gpu(capsys: pytest.CaptureFixture) -> None:
    h100 = REAL / "h100-2026-11-22" / "bench_2048-4096.json"
    h200 = REAL / "h200-2026-11-22" / "bench_1024-4096.json"
    assert main(["compare", str(h100), str(h200), "--fail-if-slower", "2"]) == 2
    assert "not comparable" in capsys.readouterr().err
    assert main(["compare", str(h100), str(h200)]) == 0
    out = capsys.readouterr().out
    assert "WARNING: not comparable (GPU model: NVIDIA H100 80GB HBM3 -> NVIDIA H200)" in out
    assert "not comparable" in out.split("verdicts:")[1]
    main(["compare", str(h100), str(h200), "--cross-gpu"])
    assert "cross-GPU comparison" in capsys.readouterr().out


def test_runs_without_launch_times_get_no_verdict_and_the_reason_once(capsys: pytest.CaptureFixture) -> None:
    """The two bundled H200 runs of 2026-11-22 saved medians only: v1-coalesced at 4096 moved -2.2 %, which is no
    verdict without an interval, and the reason is printed once for the 48 pairs, not once per row."""
    earlier = REAL / "h200-2026-11-22" / "earlier" / "bench_1024-4096.json"
    later = REAL / "h200-2026-11-22" / "bench_1024-4096.json"
    assert main(["compare", str(earlier), str(later)]) == 0
    out = capsys.readouterr().out
    table = out.split("notes:")[0]
    row = next(line for line in table.splitlines() if line.lstrip().startswith("v1-coalesced 4096x4096x4096"))
    assert "medians only: -2.2 %, no verdict" in row
    rows = [line for line in table.splitlines() if "x" in line and " ok " in line]
    assert len(rows) == 48 and not any(word in line for line in rows for word in ("faster", "slower", "same"))
    assert out.count("neither run saved per-launch times") == 1
    assert "all 48 kernel/size pairs: neither run saved per-launch times" in out
