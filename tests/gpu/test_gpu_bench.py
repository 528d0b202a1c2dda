"""On a GPU: a timed benchmark produces a complete, self-consistent results document."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]


def test_bench_cli_writes_a_complete_document(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "profiling",
            "bench",
            "--kernels",
            "v1,v5",
            "--sizes",
            "512",
            "--repeats",
            "5",
            "--json",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    assert doc["device"]["sm_count"] > 0 and doc["device"]["fp32_peak_tflops"] > 1
    by_kernel = {r["kernel"]: r for r in doc["results"]}
    assert set(by_kernel) == {"cublas", "v1", "v5"}
    for r in by_kernel.values():
        assert r["status"] == "ok"
        t = r["time_ms"]
        assert 0 < t["min"] <= t["median"] <= t["max"] and t["samples"] >= 3
        assert r["tflops"] == pytest.approx(2 * 512**3 / (t["median"] / 1e3) / 1e12)
    assert by_kernel["cublas"]["pct_cublas"] == pytest.approx(100.0)
    assert by_kernel["v5"]["compile"]["local_bytes"] == 0
    assert "v5" in done.stdout and "cublas" in done.stdout
