"""The tuning sweep's bookkeeping: picking the fastest verified configuration and resolving it for a GPU."""

from __future__ import annotations

import json

import pytest

from kernels import tuning
from kernels.registry import get_kernel
from kernels.tuning import best_per_size

IDS = [c["id"] for c in tuning.TUNING_CONFIGS]
V9_IDS = [c["id"] for c in tuning.V9_TUNING_CONFIGS]


def _r(kernel: str, n: int, tflops: float, status: str = "ok") -> dict:
    return {"kernel": kernel, "m": n, "n": n, "k": n, "status": status, "tflops": tflops, "pct_cublas": tflops * 2}


def test_best_ignores_wrong_results_and_the_reference() -> None:
    results = [_r("cublas", 4096, 50), _r(IDS[0], 4096, 40), _r(IDS[1], 4096, 45, "wrong"), _r(IDS[2], 4096, 42)]
    results += [_r(IDS[1], 2048, 30), _r(IDS[0], 2048, 20), _r(V9_IDS[0], 4096, 44), _r(V9_IDS[1], 4096, 43)]
    best = best_per_size(results)
    assert [(b["base"], b["m"], b["config"]) for b in best] == [
        ("v8-async", 2048, IDS[1]), ("v8-async", 4096, IDS[2]), ("v9-regdb", 4096, V9_IDS[0])
    ]  # fmt: skip


def test_tuned_config_resolves_by_nearest_recorded_size(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(tuning, "TUNED_DIR", tmp_path)
    assert tuning.tuned_config_id("NVIDIA H200", "v8-async", 4096, 4096, 4096) is None
    record = {
        "best": [
            {"m": 2048, "n": 2048, "k": 2048, "config": IDS[1]},
            {"m": 8192, "n": 8192, "k": 8192, "config": IDS[2]},
            {"m": 4096, "n": 4096, "k": 4096, "config": V9_IDS[3]},
        ]
    }
    tuning.tuned_record_path("NVIDIA H200").write_text(json.dumps(record))
    assert tuning.tuned_config_id("NVIDIA H200", "v8-async", 1024, 1024, 1024) == IDS[1]
    assert tuning.tuned_config_id("NVIDIA H200", "v8-async", 8000, 8000, 8000) == IDS[2]
    assert tuning.tuned_config_id("NVIDIA H200", "v9-regdb", 1024, 1024, 1024) == V9_IDS[3]
    assert tuning.tuned_config_id("NVIDIA H100 80GB HBM3", "v8-async", 8000, 8000, 8000) is None


@pytest.mark.parametrize("config_id", IDS + V9_IDS)
def test_every_tuning_config_is_a_launchable_spec(config_id: str) -> None:
    spec = get_kernel(config_id)
    assert spec.id == config_id and spec.operation == "sgemm" and spec.previous is not None
    assert spec.threads_per_block == spec.params["THREADS"]
    assert spec.grid(4096, 4096) == (4096 // spec.tile_n, 4096 // spec.tile_m)
