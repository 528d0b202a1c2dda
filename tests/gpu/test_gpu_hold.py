"""On a GPU: behind the launch hold, a host slower than its kernel is not timed; without it, it is; and a hold that
is never released ends by its own time-out. tests/gpu/hold_probe.py runs in a child process."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from tests.gpu.jobs import run_probe

pytestmark = pytest.mark.gpu
PROBE = Path(__file__).resolve().parent / "hold_probe.py"


@pytest.fixture(scope="module")
def probe() -> dict:
    return run_probe(PROBE)


def test_without_the_hold_the_hosts_sleep_is_timed(probe: dict) -> None:
    # The kernel spins 20 us; the host sleeps 300 us before each launch, so the GPU reaches each start event and
    # waits there for the launch: the timing holds the host's sleep.
    assert statistics.median(probe["as_enqueued_ms"]) > 0.2, probe["as_enqueued_ms"]


def test_behind_the_hold_only_the_kernel_is_timed(probe: dict) -> None:
    held = probe["held_ms"]
    assert len(held) == 40
    assert 0.018 < statistics.median(held) < 0.04, held
    assert max(held) < 0.06, held


def test_a_hold_nobody_releases_ends_by_its_time_out(probe: dict) -> None:
    assert 45 < probe["forgotten_hold_ms"] < 500, probe["forgotten_hold_ms"]
