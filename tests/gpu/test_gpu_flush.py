"""On a GPU: the L2 flush happens before every timed launch, and it is what a timing without it lacks.

tests/gpu/flush_probe.py runs in a child process (the parent keeps no CUDA context) with the worker's own
Session, flush buffer, timer and run_task, and prints what it saw.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from profiling.gpu.timing import flush_byte
from tests.gpu.jobs import run_probe

pytestmark = pytest.mark.gpu
PROBE = Path(__file__).resolve().parent / "flush_probe.py"


@pytest.fixture(scope="module")
def probe() -> dict:
    return run_probe(PROBE)


def test_the_flush_buffer_is_twice_the_l2(probe: dict) -> None:
    assert probe["l2_bytes"] > 0 and probe["flush_bytes"] >= 2 * probe["l2_bytes"]


def test_every_timed_launch_sees_its_own_flush(probe: dict) -> None:
    # 2 warm-ups and the budget probe run before any flush; then 20 timed launches, each after a memset of
    # the whole buffer with flush_byte(i): a kernel reading the first and last byte sees exactly that value.
    assert probe["launches"] == 2 + 1 + 20
    timed = probe["seen"][3:]
    assert timed == [[flush_byte(i), flush_byte(i)] for i in range(20)]


def test_a_flushed_launch_reads_from_dram(probe: dict) -> None:
    # A chase of 8192 dependent loads through 2 MiB: without the flush every hop hits the L2 (the previous
    # launch left the whole 2 MiB there), with it every hop misses to DRAM. Measured with this chase and the
    # worker's timer on an H100 80GB HBM3: 2.858 ms flushed, 1.204 ms not (349 and 147 ns per
    # hop), 2.37x, the same at 32768 hops. 1.5x leaves a wide margin for another chip (H200) and clocks, while
    # a flush that never runs gives 1.00x (the same launch, timed the same way).
    flushed = statistics.median(probe["chase_ms"]["flushed"])
    unflushed = statistics.median(probe["chase_ms"]["unflushed"])
    assert flushed > 1.5 * unflushed, probe["chase_ms"]


def test_run_task_hands_the_flush_buffer_to_the_timer(probe: dict) -> None:
    # run_task with flush_l2=True passes the session's buffer; with flush_l2=False, none.
    assert probe["run_task_flush"] == [True, None]
