"""Run store: schema and migrations, round trips, atomic saves (killed mid-save) and concurrent saves.

Every store test runs on SQLite, and on PostgreSQL when GEMMLENS_TEST_PG_URL is set (`.ci/postgres.sh`).
"""

from __future__ import annotations

import math
import os
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from profiling.errors import InvalidInput
from profiling.runs import convert, records, schema, store, values
from profiling.runs.store import RunStore, StoreError

REPO = Path(__file__).resolve().parents[1]
PG_URL = os.environ.get("GEMMLENS_TEST_PG_URL", "").strip()


def bench_doc(kernels: dict[str, float], *, size: int = 4096, created: str = "2026-11-22T01:23:45Z") -> dict:
    """A gemmlens.bench.v1 document (docs/results-format.md) with one result per kernel: median ms."""
    results = []
    for name, median in kernels.items():
        results.append(
            {
                "kernel": name,
                "title": f"{name} kernel",
                "operation": "sgemm",
                "m": size,
                "n": size,
                "k": size,
                "status": "ok",
                "error": None,
                "rel_error": 1.2e-7,
                "tolerance": 1e-5,
                "time_ms": {
                    "median": median,
                    "min": median * 0.97,
                    "max": median * 1.05,
                    "mean": median,
                    "stdev": 0.05,
                    "p10": median * 0.98,
                    "p90": median * 1.02,
                    "samples": 30,
                },
                "tflops": 2 * size**3 / (median * 1e-3) / 1e12,
                "pct_peak": 50.0,
                "pct_cublas": 80.0,
                "compile": {
                    "registers": 128,
                    "shared_static_bytes": 8192,
                    "local_bytes": 0,
                    "max_threads_per_block": 256,
                    "log": "",
                },
                "launch": {"grid": [32, 32], "block": [16, 16], "dynamic_smem_bytes": 1024},
                "nvml": {
                    "sm_clock_mhz": [1980, 1890],
                    "power_w": 612.0,
                    "temperature_c": 55,
                    "clock_event_reasons": ["SwPowerCap"],
                    "capped": True,
                },
            }
        )
    return {
        "schema": "gemmlens.bench.v1",
        "created_utc": created,
        "tool": {"gemmlens_commit": "abc1234", "cupy": "14.2.0", "python": "3.12.3"},
        "device": {
            "name": "NVIDIA H100 80GB HBM3",
            "cc": "9.0",
            "sm_count": 132,
            "max_sm_clock_mhz": 1980,
            "max_mem_clock_mhz": 2619,
            "driver": "580.159.04",
            "cuda_runtime": 13000,
            "cuda_driver": 13000,
        },
        "settings": {"repeats": 30, "warmup": 3, "l2_flush_bytes": 104857600, "tf32": False},
        "results": results,
    }


def big_record(label: str, n: int) -> dict:
    """A run record with n results (distinct sizes)."""
    return {
        "label": label,
        "kind": "bench",
        "device": {"name": "GPU"},
        "results": [{"kernel": f"k{i % 7}", "m": i + 1, "n": 64, "k": 64, "time_median_ms": 1.0} for i in range(n)],
    }


# ---------------------------------------------------------------------------------------------
# Backends
# ---------------------------------------------------------------------------------------------


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A URL to an empty store: an SQLite file, or a fresh schema on the test PostgreSQL server."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'store' / 'runs.sqlite'}"
        return
    if not PG_URL:
        pytest.skip('GEMMLENS_TEST_PG_URL is not set (start a server with `eval "$(.ci/postgres.sh)"`)')
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in PG_URL else "?"
    try:
        yield f"{PG_URL}{sep}options=-csearch_path%3D{schema}"
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f"DROP SCHEMA {schema} CASCADE")
        admin.dispose()


@pytest.fixture
def open_store(db_url: str) -> Iterator[Callable[..., RunStore]]:
    """Opens stores on db_url and closes them at teardown (PostgreSQL drops the schema afterwards)."""
    opened: list[RunStore] = []

    def _open(**kwargs: Any) -> RunStore:
        opened.append(RunStore(db_url, **kwargs))
        return opened[-1]

    yield _open
    for s in opened:
        s.close()


def child(code: str, *args: str) -> subprocess.Popen:
    """A Python child process running `code` with the repository importable."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(path: Path, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if proc.poll() is not None:
            raise AssertionError(f"child exited early ({proc.returncode}): {proc.stderr.read()[-2000:]}")
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError("child never reached the save hook")
        time.sleep(0.05)


# ---------------------------------------------------------------------------------------------
# Location and schema
# ---------------------------------------------------------------------------------------------


def test_default_url_follows_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("GEMMLENS_DB_URL", raising=False)
    monkeypatch.delenv("GEMMLENS_DB_PATH", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert store.default_db_url() == f"sqlite:///{tmp_path}/.local/share/gemmlens/runs.sqlite"
    monkeypatch.setenv("GEMMLENS_DB_PATH", str(tmp_path / "team.sqlite"))
    assert store.default_db_url() == f"sqlite:///{tmp_path / 'team.sqlite'}"
    monkeypatch.setenv("GEMMLENS_DB_URL", "postgresql+psycopg://u@db/runs")
    assert store.default_db_url() == "postgresql+psycopg://u@db/runs"


def test_sqlite_file_created_on_first_use_in_wal_mode(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("GEMMLENS_DB_URL", raising=False)
    path = tmp_path / "deep" / "dir" / "runs.sqlite"
    monkeypatch.setenv("GEMMLENS_DB_PATH", str(path))
    assert not path.exists()
    with store.open_store() as s:
        assert s.list_runs() == []
    assert path.exists()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT version FROM schema_version").fetchall() == [(schema.SCHEMA_VERSION,)]


def test_missing_store_not_created_when_asked_not_to(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no run store at"):
        RunStore(f"sqlite:///{tmp_path / 'absent.sqlite'}", create=False)
    assert not (tmp_path / "absent.sqlite").exists()


def test_bad_urls_give_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="not a database URL"):
        RunStore("no-scheme-here")
    with pytest.raises(InvalidInput, match="SQLite file"):
        RunStore("sqlite://")
    # Nothing listens on port 1: the message names the store and stays on one line.
    with pytest.raises(StoreError) as info:
        RunStore("postgresql+psycopg://nobody@127.0.0.1:1/none?connect_timeout=2")
    assert "could not open the run store" in str(info.value) and "\n" not in str(info.value)


def test_models_match_migrated_schema(open_store: Callable[..., RunStore]) -> None:
    s = open_store()
    inspector = sa.inspect(s.engine)
    for table in schema.Base.metadata.sorted_tables:
        migrated = {c["name"] for c in inspector.get_columns(table.name)}
        assert migrated == {c.name for c in table.columns}, table.name
    indexes = {i["name"] for i in inspector.get_indexes("results")}
    assert {"ix_results_run_id", "ix_results_kernel"} <= indexes


def test_v1_database_is_migrated_on_open(db_url: str) -> None:
    engine = store.make_engine(db_url)
    assert schema.migrate(engine, target=1) == 0
    with engine.begin() as conn:
        assert schema.schema_version(conn) == 1
        assert "meta" not in {c["name"] for c in sa.inspect(conn).get_columns("runs")}
        conn.execute(
            sa.text(
                "INSERT INTO runs (label, author, notes, created_at, saved_at, kind, device_name)"
                " VALUES ('old run', 'ann', '', :t, :t, 'bench', 'GPU')"
            ),
            {"t": values.to_utc("2025-01-02T03:04:05Z")},
        )
        old_id = conn.exec_driver_sql("SELECT max(id) FROM runs").scalar()
        conn.execute(
            sa.text(
                "INSERT INTO results (run_id, position, kernel, m, n, k, status, time_median_ms, metrics)"
                " VALUES (:run, 0, 'v1', 64, 64, 64, 'ok', 2.5, :metrics)"
            ),
            {"metrics": '{"tflops": 1.5}', "run": old_id},
        )
    engine.dispose()

    with RunStore(db_url) as s:
        with s.engine.connect() as conn:
            assert schema.schema_version(conn) == schema.SCHEMA_VERSION == 6
        old = s.get_run(old_id)
        assert old["label"] == "old run" and old["author"] == "ann" and old["meta"] == {}
        assert old["created_utc"] == "2025-01-02T03:04:05Z"
        assert old["results"][0]["time_median_ms"] == 2.5
        assert old["results"][0]["metrics"] == {"tflops": 1.5}
        assert old["results"][0]["derived"] == {} and old["results"][0]["extra"] == {}
        assert old["results"][0]["times_ms"] is None  # summaries only: the verdicts say so
        new_id = s.save_run(convert.run_from_bench(bench_doc({"v3": 3.0})))
        assert new_id != old_id and s.get_run(new_id)["meta"]["settings"]["repeats"] == 30
    # Opening again is a no-op (the version is current).
    with RunStore(db_url) as s:
        assert [r["id"] for r in s.list_runs()] == [new_id, old_id]


def test_v3_results_get_their_raw_times_from_the_kept_source_row(db_url: str) -> None:
    engine = store.make_engine(db_url)
    schema.migrate(engine, target=3)
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO runs (label, author, notes, created_at, saved_at, kind, device_name)"
                " VALUES ('v3 run', 'ann', '', :t, :t, 'bench', 'GPU')"
            ),
            {"t": values.to_utc("2026-01-02T03:04:05Z")},
        )
        run_id = conn.exec_driver_sql("SELECT max(id) FROM runs").scalar()
        for position, extra in enumerate(['{"times_ms": [1.5, 1.25, 1.75]}', '{"nvml": {}}']):
            conn.execute(
                sa.text(
                    "INSERT INTO results (run_id, position, kernel, m, n, k, status, time_median_ms, extra)"
                    " VALUES (:run, :pos, 'v1', 64, 64, 64, 'ok', 1.5, :extra)"
                ),
                {"run": run_id, "pos": position, "extra": extra},
            )
    engine.dispose()
    with RunStore(db_url) as s:
        first, second = s.read_run(run_id).results
    assert first.times_ms == (1.5, 1.25, 1.75) and second.times_ms is None


def test_raw_times_survive_save_read_and_export(db_url: str) -> None:
    doc = bench_doc({"v3": 3.0})
    doc["results"][0]["times_ms"] = [3.0, 2.9, 3.1, 3.05]
    with RunStore(db_url) as s:
        run_id = s.save_run(convert.run_from_bench(doc))
        run = s.read_run(run_id)
    result = next(r for r in run.results if r.kernel == doc["results"][0]["kernel"])
    assert result.times_ms == (3.0, 2.9, 3.1, 3.05)
    assert "times_ms" not in result.extra  # kept once, in its own column
    again = records.SavedRun.from_dict(run.to_dict())
    assert next(r for r in again.results if r.kernel == result.kernel).times_ms == result.times_ms


def test_newer_schema_is_refused(db_url: str) -> None:
    with RunStore(db_url) as s, s.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE schema_version SET version = 99")
    with pytest.raises(StoreError, match="schema version 99, newer than"):
        RunStore(db_url)


def test_foreign_runs_table_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE runs (x INTEGER)")
    with pytest.raises(StoreError, match="not a GEMM Lens store"):
        RunStore(f"sqlite:///{path}")


# ---------------------------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------------------------


def test_bench_run_round_trips(open_store: Callable[..., RunStore]) -> None:
    s = open_store()
    rec = convert.run_from_bench(bench_doc({"v3": 3.1, "v5": 2.2}), label="monday", author="ann", notes="n")
    run_id = s.save_run(rec)
    got = s.get_run(run_id)
    assert got["id"] == run_id and got["label"] == "monday" and got["author"] == "ann" and got["notes"] == "n"
    assert got["kind"] == "bench" and got["created_utc"] == "2026-11-22T01:23:45Z"
    assert got["catalog_commit"] == "abc1234"
    assert got["device"]["name"] == "NVIDIA H100 80GB HBM3" and got["device"]["cuda_runtime"] == 13000
    assert got["device_cc"] == "9.0"
    assert [r["kernel"] for r in got["results"]] == ["v3", "v5"]
    v3 = got["results"][0]
    assert (v3["m"], v3["n"], v3["k"]) == (4096, 4096, 4096)
    assert v3["time_median_ms"] == 3.1 and v3["time_min_ms"] == pytest.approx(3.1 * 0.97)
    assert v3["registers"] == 128 and v3["shared_bytes"] == 8192 + 1024
    assert v3["pct_cublas"] == 80.0 and v3["rel_error"] == 1.2e-7
    assert v3["metrics"]["nvml.power_w"] == 612.0 and v3["metrics"]["time_ms.p90"] == pytest.approx(3.1 * 1.02)
    assert v3["extra"]["nvml"]["clock_event_reasons"] == ["SwPowerCap"]  # the source row is kept whole
    # The record read back saves again unchanged (export/import relies on this).
    again = s.get_run(s.save_run(got))
    for key in ("label", "author", "notes", "created_utc", "kind", "device", "catalog_commit", "meta", "results"):
        assert again[key] == got[key], key


def test_saved_runs_read_back_equal(open_store: Callable[..., RunStore]) -> None:
    """The typed runs read back field for field (dates, JSON columns and float columns on either backend)."""
    s = open_store()
    bench = convert.bench_run(bench_doc({"v3": 3.1, "v5": 2.2}), label="typed", author="ann", notes="n")
    report = {
        "launches": [
            {
                "name": "k(float*)",
                "size_label": "big",
                "metrics": {"dram__bytes.sum": 5.0e8},
                "derived": {"ai": 0.25},
                "findings": [{"rule": "r"}],
            }
        ],
        "layout": "raw",
    }
    profile = convert.report_run(report, label="ncu", created_utc="2026-11-20T08:00:00+01:00")
    for run in (bench, profile):
        got = s.read_run(s.save_run(run))
        assert got.detached() == run and got.id is not None and got.saved is not None
        assert records.SavedRun.from_dict(s.get_run(got.id)) == got
    assert profile.created.isoformat() == "2026-11-20T07:00:00"  # kept in UTC


class FakeMetric:
    """Stands in for ncu_report.Metric: anything with .value and .unit is accepted."""

    def __init__(self, value: float, unit: str) -> None:
        self.value, self.unit = value, unit


def test_profile_report_record_maps_ncu_metrics(open_store: Callable[..., RunStore]) -> None:
    launch_metrics = {
        "gpu__time_duration.sum": {"value": 2_500_000.0, "unit": "nsecond"},
        "launch__registers_per_thread": {"value": 96, "unit": "register/thread"},
        "launch__shared_mem_per_block_static": {"value": 16384, "unit": "byte"},
        "launch__shared_mem_per_block_dynamic": {"value": 0, "unit": "byte"},
        "sm__warps_active.avg.pct_of_peak_sustained_active": {"value": 31.5, "unit": "%"},
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": {"value": 1000, "unit": ""},
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": {"value": 24, "unit": ""},
        "dram__bytes.sum": {"value": 2.0e8, "unit": "byte"},
        "sm__sass_thread_inst_executed_op_fadd_pred_on.sum": {"value": 0, "unit": "inst"},
        "sm__sass_thread_inst_executed_op_fmul_pred_on.sum": {"value": 0, "unit": "inst"},
        "sm__sass_thread_inst_executed_op_ffma_pred_on.sum": {"value": 5.0e10, "unit": "inst"},
        "some__metric_not_available": {"value": "n/a", "unit": ""},
    }
    report = {
        "launches": [
            {
                "id": 0,
                "name": "sgemm_v3(float const*, float*)",
                "block": [16, 16, 1],
                "grid": [32, 32, 1],
                "cc": "9.0",
                "device": "NVIDIA H100 80GB HBM3",
                "metrics": launch_metrics,
                "derived": {"bank_conflict_pct_ld": 12.5},
                "findings": [{"rule": "x", "speedup_pct": 10}],
            },
            {
                "id": 1,
                "name": "sgemm_v3(float const*, float*)",
                "metrics": {"gpu__time_duration.sum": FakeMetric(1e6, "nsecond")},
            },
        ],
        "warnings": ["one"],
    }
    rec = convert.run_from_report(report, label="ncu", author="bo", kind="upload")
    s = open_store()
    got = s.get_run(s.save_run(rec))
    assert got["kind"] == "upload" and got["device"] == {"name": "NVIDIA H100 80GB HBM3", "cc": "9.0"}
    assert got["meta"]["warnings"] == ["one"]
    first, second = got["results"]
    # Two unsized launches of the same kernel are told apart by occurrence.
    assert (first["size_label"], second["size_label"]) == ("#1", "#2")
    assert first["time_median_ms"] == pytest.approx(2.5)
    assert first["registers"] == 96 and first["shared_bytes"] == 16384
    assert first["occupancy_pct"] == 31.5 and first["bank_conflicts"] == 1024 and first["dram_bytes"] == 2.0e8
    assert first["tflops"] == pytest.approx(2 * 5.0e10 / 2.5e-3 / 1e12)
    assert first["derived"] == {"bank_conflict_pct_ld": 12.5}
    assert "some__metric_not_available" not in first["metrics"]
    assert first["extra"]["units"]["dram__bytes.sum"] == "byte"
    assert first["extra"]["findings"][0]["speedup_pct"] == 10
    assert second["time_median_ms"] == pytest.approx(1.0) and second["tflops"] is None


def test_invalid_records_are_refused_in_one_line() -> None:
    cases = [
        ({"kind": "bench"}, "needs a `results` list"),
        ({"kind": "movie", "results": []}, "run kind must be one of"),
        ({"results": [{"m": 1}]}, "result 1 has no kernel name"),
        ({"results": [], "created_utc": "yesterday"}, "not an ISO date"),
        ({"schema": "something.else", "results": []}, "not a run record"),
    ]
    for record, message in cases:
        with pytest.raises(InvalidInput, match=message) as info:
            records.normalize_run(record)
        assert "\n" not in str(info.value)
    with pytest.raises(InvalidInput, match="not a benchmark results file"):
        convert.run_from_bench({"schema": "gemmlens.bench.v0", "results": []})
    with pytest.raises(InvalidInput, match="no list of kernel launches"):
        convert.run_from_report({"kernels": []})


def test_non_finite_values_become_null(open_store: Callable[..., RunStore]) -> None:
    s = open_store()
    rec = {"results": [{"kernel": "v1", "time_median_ms": math.nan, "metrics": {"a": math.inf, "b": 1.0}}]}
    got = s.get_run(s.save_run(rec))["results"][0]
    assert got["time_median_ms"] is None and got["metrics"] == {"a": None, "b": 1.0}


def test_list_update_delete(open_store: Callable[..., RunStore]) -> None:
    s = open_store()
    older = s.save_run(convert.run_from_bench(bench_doc({"v1": 9.0}, created="2026-01-01T00:00:00Z")))
    newer = s.save_run(convert.run_from_bench(bench_doc({"v3": 3.0, "v5": 2.0}), label="new"))
    runs = s.list_runs()
    assert [r["id"] for r in runs] == [newer, older]  # newest first
    assert runs[0]["kernels"] == ["v3", "v5"] and runs[0]["n_results"] == 2 and "results" not in runs[0]

    s.update_run(older, label="renamed", notes="why")
    assert (s.get_run(older)["label"], s.get_run(older)["notes"]) == ("renamed", "why")
    with pytest.raises(InvalidInput, match="no run 12345"):
        s.update_run(12345, label="x")

    assert s.delete_run(older) is True
    assert s.delete_run(older) is False
    with pytest.raises(InvalidInput, match=f"no run {older} in the run store"):
        s.get_run(older)
    assert [r["id"] for r in s.list_runs()] == [newer]
    rows = s.result_rows()
    assert {r["run_id"] for r in rows} == {newer}  # results went with their run
    assert [r["kernel"] for r in s.result_rows(kernel="v5")] == ["v5"]


def test_import_is_all_or_nothing(open_store: Callable[..., RunStore]) -> None:
    s = open_store()
    good = convert.run_from_bench(bench_doc({"v1": 1.0}))
    with pytest.raises(InvalidInput):
        s.import_runs([good, {"results": [{"kernel": ""}]}])
    assert s.list_runs() == []
    ids = s.import_runs([good, good])
    assert len(ids) == 2 and len(s.list_runs()) == 2


# ---------------------------------------------------------------------------------------------
# Atomicity and concurrency
# ---------------------------------------------------------------------------------------------


def test_error_inside_save_rolls_back(open_store: Callable[..., RunStore], monkeypatch: pytest.MonkeyPatch) -> None:
    s = open_store()
    kept = s.save_run(big_record("kept", 3))

    def fail(done: int) -> None:
        raise RuntimeError(f"boom after {done} rows")

    monkeypatch.setattr(store, "_save_hook", fail)
    with pytest.raises(RuntimeError, match="boom after 500 rows"):
        s.save_run(big_record("broken", 1200))
    monkeypatch.setattr(store, "_save_hook", None)
    assert [r["label"] for r in s.list_runs()] == ["kept"]
    assert len(s.result_rows()) == 3
    assert len(s.get_run(kept)["results"]) == 3


SAVE_AND_PAUSE = """
    import pathlib, sys, time
    from profiling.runs import store
    url, marker, label, pause = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3], float(sys.argv[4])

    def hook(done):
        if not marker.exists():
            marker.write_text(str(done))
            time.sleep(pause)

    store._save_hook = hook
    n = 1600
    rec = {"label": label, "device": {"name": "GPU"},
           "results": [{"kernel": f"k{i % 7}", "m": i + 1, "n": 64, "k": 64, "time_median_ms": 1.0}
                       for i in range(n)]}
    with store.RunStore(url) as s:
        print(s.save_run(rec))
"""


def test_killed_mid_save_leaves_no_half_run(open_store: Callable[..., RunStore], db_url: str, tmp_path: Path) -> None:
    s = open_store()
    kept = s.save_run(big_record("kept", 10))
    marker = tmp_path / "inside-transaction"
    proc = child(SAVE_AND_PAUSE, db_url, str(marker), "killed", "600")
    try:
        wait_for(marker, proc)
        # The child is now inside its transaction with 500 of 1600 rows written and not committed.
        assert marker.read_text() == "500"
        assert [r["label"] for r in s.list_runs()] == ["kept"]  # readers are not blocked and see nothing
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL

    with RunStore(db_url) as after:
        assert [r["label"] for r in after.list_runs()] == ["kept"]
        assert len(after.result_rows()) == 10
        with after.engine.connect() as conn:
            assert conn.exec_driver_sql("SELECT count(*) FROM results").scalar() == 10
            if conn.dialect.name == "sqlite":
                assert conn.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"
        # The killed writer's lock is gone: the next save goes through.
        again = after.save_run(big_record("after", 600))
        assert len(after.get_run(again)["results"]) == 600
        assert len(after.get_run(kept)["results"]) == 10


def test_save_waits_for_another_process_in_its_transaction(
    open_store: Callable[..., RunStore], db_url: str, tmp_path: Path
) -> None:
    open_store()  # create and migrate first so both children only save
    marker_a = tmp_path / "a-inside"
    slow = child(SAVE_AND_PAUSE, db_url, str(marker_a), "slow", "3")
    wait_for(marker_a, slow)
    # While `slow` holds its transaction open, a second process saves: it must wait, not fail.
    fast = child(SAVE_AND_PAUSE, db_url, str(tmp_path / "b-inside"), "fast", "0")
    out_a, err_a = slow.communicate(timeout=120)
    out_b, err_b = fast.communicate(timeout=120)
    assert slow.returncode == 0, err_a[-2000:]
    assert fast.returncode == 0, err_b[-2000:]
    with RunStore(db_url) as s:
        runs = {r["label"]: r for r in s.list_runs()}
        assert set(runs) == {"slow", "fast"}
        assert runs["slow"]["id"] == int(out_a) and runs["fast"]["id"] == int(out_b)
        assert runs["slow"]["n_results"] == runs["fast"]["n_results"] == 1600


RACE = """
    import pathlib, sys, time
    from profiling.runs import store
    url, go, tag = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3]
    s = store.RunStore(url)
    while not go.exists():
        time.sleep(0.01)
    for i in range(6):
        s.save_run({"label": f"{tag}-{i}", "device": {"name": "GPU"},
                    "results": [{"kernel": f"{tag}{j % 3}", "m": j + 1} for j in range(700)]})
"""


def test_two_processes_saving_at_once_keep_all_runs(
    open_store: Callable[..., RunStore], db_url: str, tmp_path: Path
) -> None:
    open_store()
    go = tmp_path / "go"
    procs = [child(RACE, db_url, str(go), tag) for tag in ("a", "b")]
    time.sleep(1.0)  # both import and connect, then start together
    go.write_text("go")
    for proc in procs:
        _, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, err[-2000:]
    with RunStore(db_url) as s:
        runs = s.list_runs()
        assert sorted(r["label"] for r in runs) == sorted(f"{t}-{i}" for t in "ab" for i in range(6))
        assert all(r["n_results"] == 700 for r in runs)
        # Each run holds only its own rows, in order.
        for r in runs:
            got = s.get_run(r["id"])["results"]
            assert [x["m"] for x in got] == list(range(1, 701))
            assert {x["kernel"][0] for x in got} == {r["label"][0]}


def test_ncu_report_objects_are_accepted(open_store: Callable[..., RunStore]) -> None:
    """The parser's own Report/KernelLaunch/Metric objects, and their to_dict(), give the same run."""
    ncu = pytest.importorskip("profiling.nsight.report")
    launch = ncu.KernelLaunch(
        id="3",
        name="sgemm_v5<128, 8>(float const*, float*)",
        block=(256, 1, 1),
        grid=(32, 32, 1),
        cc="9.0",
        device="NVIDIA H100 80GB HBM3",
        metrics={
            "gpu__time_duration.sum": ncu.Metric(4_000_000.0, "nsecond"),
            "launch__registers_per_thread": ncu.Metric(128.0, "register/thread"),
            "dram__bytes.sum": ncu.Metric(3.0e8, "byte"),
        },
        derived={"fp32_flops": 1.0e11},
        findings=[ncu.Finding("SOLBottleneck", "WRN", "memory bound", estimated_speedup_pct=12.0)],
    )
    report = ncu.Report(launches=[launch], layout="raw", source="x.csv", warnings=["w"])
    s = open_store()
    from_object = s.get_run(s.save_run(convert.run_from_report(report, label="obj")))
    from_dict = s.get_run(s.save_run(convert.run_from_report(report.to_dict(), label="dict")))
    for got in (from_object, from_dict):
        r = got["results"][0]
        assert r["kernel"] == "sgemm_v5<128, 8>(float const*, float*)"
        assert r["time_median_ms"] == pytest.approx(4.0) and r["registers"] == 128 and r["dram_bytes"] == 3.0e8
        assert r["derived"] == {"fp32_flops": 1.0e11}
        assert r["extra"]["findings"][0]["estimated_speedup_pct"] == 12.0
        assert r["extra"]["block"] == [256, 1, 1] and r["extra"]["units"]["dram__bytes.sum"] == "byte"
        assert got["device"]["name"] == "NVIDIA H100 80GB HBM3" and got["meta"]["layout"] == "raw"


# ---------------------------------------------------------------------------------------------
# Hostile input, stores opened for reading, read-only stores
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "result,field",
    [
        ({"kernel": "v1", "m": 1e300, "n": 64, "k": 64}, "m 1e+300 is out of range"),
        ({"kernel": "v1", "registers": 1e30}, "registers 1e+30 is out of range"),
        ({"kernel": "v1", "shared_bytes": 2**31}, "shared_bytes 2.14748e+09 is out of range"),
        ({"kernel": "v1", "k": -(2**31) - 1}, "k -2.14748e+09 is out of range"),
    ],
)
def test_numbers_no_column_holds_are_refused_naming_the_field(
    open_store: Callable[..., RunStore], result: dict, field: str
) -> None:
    s = open_store()
    with pytest.raises(InvalidInput, match=re.escape(f"result 1 (v1): {field}")):
        s.save_run({"results": [result]})
    assert s.list_runs() == []


def test_the_largest_integers_a_column_holds_round_trip(open_store: Callable[..., RunStore]) -> None:
    s = open_store()
    top = values.STORE_INT_MAX
    got = s.get_run(s.save_run({"results": [{"kernel": "v1", "m": top, "n": top, "k": top, "registers": top}]}))
    assert got["results"][0]["m"] == top and got["results"][0]["registers"] == top
    with pytest.raises(InvalidInput, match="no run 99999999999999999999 in the run store"):
        s.read_run(99999999999999999999)
    with pytest.raises(InvalidInput, match="no run -1 in the run store"):
        s.read_run(-1)


def test_reading_never_creates_or_migrates(db_url: str, tmp_path: Path) -> None:
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    with pytest.raises(StoreError, match="not a GEMM Lens run store"):
        RunStore(f"sqlite:///{empty}", create=False)
    assert empty.read_bytes() == b""  # not even the header that switching to WAL writes
    engine = store.make_engine(db_url)
    schema.migrate(engine, target=1)
    engine.dispose()
    with pytest.raises(
        StoreError, match=rf"schema version 1, this GEMM Lens reads {schema.SCHEMA_VERSION} \(opened for reading\)"
    ):
        RunStore(db_url, create=False)
    engine = store.make_engine(db_url)
    with engine.connect() as conn:
        assert schema.schema_version(conn) == 1
    engine.dispose()


def test_a_store_opened_for_reading_reads_and_refuses_saves(db_url: str) -> None:
    with RunStore(db_url) as s:
        run_id = s.save_run({"label": "kept", "results": [{"kernel": "v1", "m": 8, "n": 8, "k": 8}]})
    with RunStore(db_url, create=False) as reader:
        assert reader.read_only and reader.read_run(run_id).label == "kept"
        with pytest.raises(
            StoreError, match="cannot save the run: the run store is read-only \\(opened for reading\\)"
        ):
            reader.save_run({"results": []})


@pytest.mark.parametrize("folder_writable", [True, False])
def test_a_store_this_user_may_not_write_is_read_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folder_writable: bool
) -> None:
    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    with RunStore(url) as s:
        run_id = s.save_run({"label": "kept", "results": [{"kernel": "v1", "m": 8, "n": 8, "k": 8}]})
    before = (tmp_path / "runs.sqlite").read_bytes()
    real_access = os.access

    def no_writes(path: Any, mode: int) -> bool:
        # Root ignores permissions, so the check the store makes is what the test takes away.
        if mode == os.W_OK and (Path(path).suffix == ".sqlite" or not folder_writable):
            return False
        return real_access(path, mode)

    monkeypatch.setattr(store.os, "access", no_writes)
    with RunStore(url) as s:
        assert s.read_only and s.display_url == url
        assert [r["label"] for r in s.list_runs()] == ["kept"] and s.read_run(run_id).results[0].m == 8
        for attempt, action in [
            (lambda: s.save_run({"results": []}), "save the run"),
            (lambda: s.import_runs([]), "import runs"),
            (lambda: s.update_run(run_id, label="x"), "update the run"),
            (lambda: s.delete_run(run_id), "delete the run"),
        ]:
            with pytest.raises(StoreError, match=f"cannot {action}: the run store is read-only \\(this user may not"):
                attempt()
    assert (tmp_path / "runs.sqlite").read_bytes() == before


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root ignores file permissions")
def test_a_store_in_a_read_only_folder_is_read(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    url = f"sqlite:///{folder / 'runs.sqlite'}"
    with RunStore(url) as s:
        s.save_run({"label": "kept", "results": []})
    folder.chmod(0o555)
    try:
        with RunStore(url) as s:
            assert [r["label"] for r in s.list_runs()] == ["kept"]
            with pytest.raises(StoreError, match="read-only"):
                s.save_run({"results": []})
    finally:
        folder.chmod(0o755)
