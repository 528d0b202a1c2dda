"""One-line error text and child-process handling shared by the worker, the profilers and the app."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from profiling.errors import error_line, first_line, last_line
from profiling.gpu.process import kill_process_group, worker_command


def test_first_and_last_line_skip_blank_lines_and_strip() -> None:
    text = "\n  \n  Traceback (most recent call last):\n  File x\n\nRuntimeError: boom  \n\n"
    assert first_line(text) == "Traceback (most recent call last):"
    assert last_line(text) == "RuntimeError: boom"
    assert first_line("") == last_line("  \n ") == ""


def test_long_lines_are_cut_with_an_ellipsis() -> None:
    assert first_line("x" * 50, limit=10) == "x" * 9 + "…"
    assert len(last_line("y" * 500)) == 400
    assert first_line("exactly ten", limit=11) == "exactly ten"


def test_error_line_falls_back_to_the_type_name() -> None:
    assert error_line(ValueError("bad size\nsecond line")) == "bad size"
    assert error_line(KeyError()) == "KeyError"
    assert error_line(RuntimeError("  \n  ")) == "RuntimeError"


def test_worker_command_runs_the_profiling_module() -> None:
    assert worker_command(Path("/tmp/j.json")) == [sys.executable, "-m", "profiling", "worker", "--job", "/tmp/j.json"]
    assert worker_command("j", python="py")[0] == "py"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in state  # a zombie has already died


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to see the grandchild")
def test_kill_process_group_takes_the_grandchildren_too() -> None:
    proc = subprocess.Popen(
        ["sh", "-c", "sleep 60 & echo $!; wait"], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    grandchild = int(proc.stdout.readline())
    assert _alive(grandchild)
    kill_process_group(proc)
    proc.wait(timeout=10)
    deadline = time.monotonic() + 10
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(grandchild), "the grandchild outlived its process group"
    proc.stdout.close()
    kill_process_group(proc)  # a group that is gone already is not an error
