"""An SQLite run store read by a process that may not write it (a read-only folder or mount, another user's store)
sees everything its writer acknowledged: runs and audit entries still in the write-ahead log of a live writer, and
the store a killed writer left. Where the log cannot be read, one line says why and what to do.

Two ways to take the write permission away: the store's own check (os.access, patched: the test process may be
root, whom permissions do not stop), and for real, a reader child process that runs as `nobody` (under root) or
reads a folder chmod 555 (as any other user).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from profiling.runs import engine, store
from profiling.runs.store import RunStore, StoreError

REPO = Path(__file__).resolve().parents[1]
RUN = {"label": "acked", "results": [{"kernel": "v1", "m": 8, "n": 8, "k": 8, "time_median_ms": 1.0}]}


def no_writes_here(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """The store's check says this process may not write `folder` or anything in it."""
    real_access = os.access

    def access(path: Any, mode: int) -> bool:
        inside = Path(path).resolve().is_relative_to(folder.resolve())
        return False if mode == os.W_OK and inside else real_access(path, mode)

    monkeypatch.setattr(engine.os, "access", access)


def python(code: str, *args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


WRITER = """
import json, sys, time
from profiling.runs.store import RunStore
url, acks, n, end = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
store = RunStore(url)
with store.engine.connect() as conn:  # keep the log in the log: no checkpoint folds it into the file
    conn.exec_driver_sql("PRAGMA wal_autocheckpoint = 0")
for i in range(n):
    run_id = store.save_run({"label": f"run {i}", "results": [{"kernel": "v1", "m": 8, "n": 8, "k": 8}]})
    with open(acks, "a") as f:  # acknowledged: save_run returned
        f.write(f"{run_id}\\n")
    time.sleep(0.05)
if end == "killed":
    import os
    os._exit(0)  # no close, no checkpoint: the runs are in the -wal file only
store.close()
"""


def acked(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def test_a_read_only_reader_sees_every_run_a_live_writer_acknowledged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "store"
    url = f"sqlite:///{folder / 'runs.sqlite'}"
    RunStore(url).close()  # the store exists before the reader opens it
    acks = tmp_path / "acks"
    writer = python(WRITER, url, str(acks), "40", "closed")
    no_writes_here(monkeypatch, folder)
    with RunStore(url) as reader:  # the team server's store, read from a folder this user may not write
        assert reader.read_only and "may not write" in str(reader.read_only_reason)
        checked = 0
        while writer.poll() is None or checked < len(acked(acks)):
            ids = acked(acks)  # read the acknowledgements first: every one of them must be visible
            listed = {r["id"] for r in reader.list_runs()}
            logged = {e["run_id"] for e in reader.audit_log() if e["action"] == "save"}
            assert set(ids) <= listed and set(ids) <= logged, (ids, listed, logged)
            if ids:
                assert reader.read_run(ids[-1]).label == f"run {len(ids) - 1}"
            checked = len(ids)
            time.sleep(0.02)
    assert writer.returncode == 0, writer.stderr.read()
    assert len(acked(acks)) == 40 and checked == 40


@pytest.fixture
def shared_folder() -> Iterator[Path]:
    """A folder that another user (nobody) can reach: pytest's own tmp folders are private to their owner."""
    folder = Path(tempfile.mkdtemp(prefix="gemmlens-ro-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        folder.chmod(0o755)
        shutil.rmtree(folder)


READER = """
import json, os, sys
from profiling.runs.store import RunStore
warm = RunStore("sqlite:///" + sys.argv[2])  # every module the reader needs, loaded before giving up root
warm.list_runs(); warm.audit_log(); warm.close()
if os.geteuid() == 0:
    os.setgid(65534); os.setuid(65534)  # nobody: may read the store's folder, not write it
try:
    with RunStore(sys.argv[1]) as store:
        out = {"read_only": store.read_only, "runs": [r["label"] for r in store.list_runs()],
               "audit": [e["action"] for e in store.audit_log()]}
except Exception as exc:
    out = {"error": f"{type(exc).__name__}: {exc}"}
print(json.dumps(out))
"""


def read_as_another_user(folder: Path, tmp_path: Path) -> dict:
    """What a process that may not write `folder` reads from its store (as nobody under root; else with the
    folder made read-only)."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
    try:
        reader = python(READER, f"sqlite:///{folder / 'runs.sqlite'}", str(tmp_path / "warm.sqlite"))
        out, err = reader.communicate(timeout=120)
    finally:
        folder.chmod(0o755)
    assert reader.returncode == 0, err
    return json.loads(out)


@pytest.mark.skipif(os.name != "posix", reason="file permissions and setuid are POSIX")
def test_a_store_whose_writer_was_killed_is_read_by_another_user(shared_folder: Path, tmp_path: Path) -> None:
    acks = tmp_path / "acks"
    writer = python(WRITER, f"sqlite:///{shared_folder / 'runs.sqlite'}", str(acks), "3", "killed")
    assert writer.wait(timeout=120) == 0, writer.stderr.read()
    assert (shared_folder / "runs.sqlite-wal").stat().st_size > 0  # the runs are in the log, not the file
    got = read_as_another_user(shared_folder, tmp_path)
    assert got == {"read_only": True, "runs": ["run 2", "run 1", "run 0"], "audit": ["save", "save", "save"]}


@pytest.mark.skipif(os.name != "posix", reason="file permissions and setuid are POSIX")
def test_a_cleanly_closed_store_in_a_read_only_folder_is_read(shared_folder: Path, tmp_path: Path) -> None:
    with RunStore(f"sqlite:///{shared_folder / 'runs.sqlite'}") as s:
        s.save_run(RUN)
    assert not (shared_folder / "runs.sqlite-wal").exists()  # the last connection folded the log into the file
    got = read_as_another_user(shared_folder, tmp_path)
    assert got == {"read_only": True, "runs": ["acked"], "audit": ["save"]}


@pytest.mark.skipif(os.name != "posix", reason="file permissions and setuid are POSIX")
def test_a_log_that_cannot_be_read_is_an_error_not_a_store_without_its_runs(
    shared_folder: Path, tmp_path: Path
) -> None:
    acks = tmp_path / "acks"
    writer = python(WRITER, f"sqlite:///{shared_folder / 'runs.sqlite'}", str(acks), "2", "killed")
    assert writer.wait(timeout=120) == 0, writer.stderr.read()
    shm = shared_folder / "runs.sqlite-shm"
    shm.chmod(0o000 if os.geteuid() != 0 else 0o600)  # the writer's index, private to the writer
    got = read_as_another_user(shared_folder, tmp_path)
    error = got["error"]
    assert error.startswith(f"StoreError: cannot read the run store {shared_folder / 'runs.sqlite'}: its write-ahead")
    assert "runs.sqlite-shm beside it, which this user may not create or open" in error
    assert f"open the store once as a user who may write {shared_folder}" in error and "\n" not in error


def test_the_store_opened_for_reading_reads_the_log_in_its_own_process(tmp_path: Path) -> None:
    """The same live-writer guarantee for `compare` and `audit`, which open stores for reading (create=False)."""
    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    writer = python(WRITER, url, str(tmp_path / "acks"), "3", "killed")
    assert writer.wait(timeout=120) == 0, writer.stderr.read()
    with RunStore(url, create=False) as reader:
        assert [r["label"] for r in reader.list_runs()] == ["run 2", "run 1", "run 0"]


def test_display_url_is_the_url_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    RunStore(url).close()
    no_writes_here(monkeypatch, tmp_path)
    with RunStore(url) as s:
        assert s.display_url == url and s.read_only
    with pytest.raises(StoreError, match="no run store at"):
        store.RunStore(f"sqlite:///{tmp_path / 'absent.sqlite'}", create=False)
