"""On a GPU: raw per-launch times in every timed result, and an interleaved A/B through the real worker."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from profiling.abtest import ab_summary
from profiling.runs.results import ResultsDocument

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "profiling", *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def test_timed_results_keep_every_launch(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    done = _cli("bench", "--kernels", "v5", "--sizes", "512", "--repeats", "12", "--json", str(out))
    assert done.returncode == 0, done.stderr
    for r in json.loads(out.read_text())["results"]:
        times = r["times_ms"]
        assert len(times) == r["time_ms"]["samples"] == 12
        assert min(times) == r["time_ms"]["min"] and max(times) == r["time_ms"]["max"]


def test_interleaved_ab_pairs_two_verified_kernels(tmp_path: Path) -> None:
    out = tmp_path / "ab.json"
    done = _cli("bench", "--ab", "v3,v8-async", "--sizes", "1024", "--repeats", "20", "--json", str(out))
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    assert doc["ab"] == {"a": "v3", "b": "v8-async", "paired": True}
    a, b = doc["results"]
    assert (a["kernel"], b["kernel"]) == ("v3", "v8-async") and a["status"] == b["status"] == "ok"
    assert len(a["times_ms"]) == len(b["times_ms"]) == 20 and a["ab"]["partner"] == "v8-async"
    summary = ab_summary(ResultsDocument.from_dict(doc), "v3", "v8-async", paired=True, threshold_pct=2.0)
    # v8-async is several times faster than v3 at 1024 on any Hopper GPU: the verdict cannot be anything else.
    assert list(summary["verdict"]) == ["faster"] and summary["B/A"].iloc[0] < 0.7
    assert "B/A" in done.stdout and "faster" in done.stdout


def test_an_ab_with_a_rest_runs_every_pair_after_it(tmp_path: Path) -> None:
    out = tmp_path / "ab_rest.json"
    done = _cli(
        "bench", "--ab", "v3,v8-async", "--sizes", "1024", "--repeats", "6", "--rest", "0.5", "--json", str(out)
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    assert doc["settings"]["rest_s"] == 0.5
    a, b = doc["results"]
    assert a["status"] == b["status"] == "ok" and len(a["times_ms"]) == len(b["times_ms"]) == 6
    assert a["ab"]["order"] == (
        "alternating, each after an L2 flush, each pair after 0.5 s of rest and an untimed launch of both"
    )
    summary = ab_summary(ResultsDocument.from_dict(doc), "v3", "v8-async", paired=True, threshold_pct=2.0)
    assert list(summary["verdict"]) == ["faster"] and summary["B/A"].iloc[0] < 0.7
