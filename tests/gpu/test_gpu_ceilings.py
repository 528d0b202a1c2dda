"""On a GPU: measured ceilings are plausible against the device's theoretical peaks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]


def test_measured_ceilings_sit_below_theoretical_peaks(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "profiling", "ceilings", "--refresh", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**__import__("os").environ, "GEMMLENS_CACHE_DIR": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    measured = data["measured"]["ceilings"]
    theoretical = data["theoretical"]
    fma = measured["fp32_flops"]["value"]
    assert 0.5 * theoretical["fp32_flops"]["value"] < fma <= 1.02 * theoretical["fp32_flops"]["value"]
    dram = max(measured["dram_read_bytes_per_s"]["value"], measured["dram_copy_bytes_per_s"]["value"])
    assert 0.4 * theoretical["dram_bytes_per_s"]["value"] < dram <= 1.02 * theoretical["dram_bytes_per_s"]["value"]
    assert measured["l2_read_bytes_per_s"]["value"] > dram
    assert measured["shared_read_bytes_per_s"]["value"] > measured["l2_read_bytes_per_s"]["value"]
    assert list(tmp_path.glob("ceilings/*.json")), "the measurement is cached per device"
