"""The tuning sweep's bookkeeping: picking the fastest verified configuration and resolving it for a GPU."""

from __future__ import annotations

import json
import math
from pathlib import Path

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
        ("v8-async", 2048, IDS[1]),
        ("v8-async", 4096, IDS[2]),
        ("v9-regdb", 4096, V9_IDS[0]),
    ]


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


def _config(config_id: str) -> dict:
    config = tuning.config_by_id(config_id)
    assert config is not None
    return config


def test_shape_efficiency_sees_wave_tile_and_k_losses() -> None:
    big = _config("v9-regdb-128x256x16-w64x64-t8x16-s3")  # one block per SM
    small = _config("v8-async-64x64x16-w32x32-t8x4-s3")  # four blocks per SM
    # 1024^3: 128x256 tiles give 32 blocks for 132 SMs. 64x64 tiles give 256 blocks for 528 slots: each SM gets
    # 2 of its 4, so the one partial wave is taken as lasting sqrt(2/4) of a full one.
    assert tuning.shape_efficiency(big, 1024, 1024, 1024, 132) == pytest.approx(32 / 132)
    assert tuning.shape_efficiency(small, 1024, 1024, 1024, 132) == pytest.approx(256 / (528 * 0.5**0.5))
    # Whole waves lose nothing: 264 big tiles are two full waves.
    assert tuning.shape_efficiency(big, 128 * 12, 256 * 22, 4096, 132) == pytest.approx(1.0)
    # Edges: M = 129 needs a second row of 128-row tiles that is 1/128 full.
    assert tuning.shape_efficiency(big, 129, 256 * 132, 16, 132) == pytest.approx(129 / 256)
    # K = 17 pads the last 16-deep slice to 32.
    assert tuning.shape_efficiency(big, 128, 256 * 132, 17, 132) == pytest.approx(17 / 32)


def test_measured_record_picks_by_shape_not_nearest_size(tmp_path, monkeypatch) -> None:
    """With every configuration's measurement, a shape far from the swept ones gets tiles that fill the GPU."""
    monkeypatch.setattr(tuning, "TUNED_DIR", tmp_path)
    big, small = "v9-regdb-128x256x16-w64x64-t8x16-s3", "v9-regdb-128x128x16-w64x32-t8x8-s3"
    measured = [
        {"base": "v9-regdb", "m": 4096, "n": 4096, "k": 4096, "config": big, "tflops": 47.0},
        {"base": "v9-regdb", "m": 4096, "n": 4096, "k": 4096, "config": small, "tflops": 40.0},
    ]
    record = {"best": [{"m": 4096, "n": 4096, "k": 4096, "config": big}], "measured": measured}
    tuning.tuned_record_path("NVIDIA H100 80GB HBM3").write_text(json.dumps(record))
    assert tuning.tuned_config_id("NVIDIA H100 80GB HBM3", "v9-regdb", 4096, 4096, 4096) == big
    # 1024^3: 32 big tiles leave 100 of 132 SMs idle; the small tiles' 64 blocks lose less.
    assert tuning.tuned_config_id("NVIDIA H100 80GB HBM3", "v9-regdb", 1024, 1024, 1024) == small
    # A measurement at the asked shape itself wins over any prediction from elsewhere.
    measured.append({"base": "v9-regdb", "m": 1024, "n": 1024, "k": 1024, "config": big, "tflops": 30.0})
    measured.append({"base": "v9-regdb", "m": 1024, "n": 1024, "k": 1024, "config": small, "tflops": 20.0})
    tuning.tuned_record_path("NVIDIA H100 80GB HBM3").write_text(json.dumps(record))
    assert tuning.tuned_config_id("NVIDIA H100 80GB HBM3", "v9-regdb", 1024, 1024, 1024) == big
    # Another kernel's measurements never choose for this one.
    assert tuning.tuned_config_id("NVIDIA H100 80GB HBM3", "v8-async", 1024, 1024, 1024) is None


def test_measured_per_shape_keeps_only_verified_configurations() -> None:
    results = [_r("cublas", 4096, 50), _r(IDS[0], 4096, 40), _r(IDS[1], 4096, 45, "wrong"), _r(V9_IDS[0], 2048, 33)]
    kept = tuning.measured_per_shape(results)
    assert [(e["config"], e["m"], e["tflops"]) for e in kept] == [(IDS[0], 4096, 40), (V9_IDS[0], 2048, 33)]
    assert {e["base"] for e in kept} == {"v8-async", "v9-regdb"}


H100_SWEEP = Path(__file__).resolve().parents[1] / "results" / "h100-2026-11-22" / "tuning_shapes.json"


@pytest.mark.parametrize("base", ["v8-async", "v9-regdb"])
def test_shape_aware_choice_finds_the_best_configuration_of_a_shape_it_never_saw(base: str) -> None:
    """Leave one shape out of the real H100 sweep (every configuration at 7 shapes, 2026-11-22): predicting from the
    other six picks a configuration within 5 % of the measured best, where the nearest size's best loses up to 42 %."""
    measured = [
        e for e in tuning.measured_per_shape(json.loads(H100_SWEEP.read_text())["results"]) if e["base"] == base
    ]
    shapes = sorted({(e["m"], e["n"], e["k"]) for e in measured})
    assert len(shapes) == 7
    for shape in shapes:
        others = [e for e in measured if (e["m"], e["n"], e["k"]) != shape]
        here = {e["config"]: e["tflops"] for e in measured if (e["m"], e["n"], e["k"]) == shape}
        predicted = {c: tuning.predicted_tflops(others, _config(c), *shape, 132) for c in here}
        pick = max(predicted, key=lambda c: predicted[c] or 0.0)
        assert here[pick] >= 0.95 * max(here.values()), (shape, pick)


@pytest.mark.parametrize("sm_count", [108, 114])
def test_shape_efficiency_splits_for_the_gpus_own_sm_count(sm_count: int) -> None:
    """On an A100 (108 SMs) or an H100 PCIe (114), the split-K configurations split as that GPU's launch would
    (spec.split_count with its SM count), not as on 132 SMs. At 1024^3 the 64x64 configuration does not split
    there (it splits in two on 132 SMs), so its useful share is its v8-async twin's; the 128x128 one splits in 3,
    not 4."""
    big, small = tuning.SPLITK_TUNING_CONFIGS[0], tuning.SPLITK_TUNING_CONFIGS[1]
    assert tuning.config_split_count(small, 1024, 1024, 1024, sm_count) == 1
    assert tuning.config_split_count(small, 1024, 1024, 1024, 132) == 2
    twin = tuning.twin_config(small)
    assert tuning.shape_efficiency(small, 1024, 1024, 1024, sm_count) == pytest.approx(
        tuning.shape_efficiency(twin, 1024, 1024, 1024, sm_count)
    )
    assert tuning.config_split_count(big, 1024, 1024, 1024, sm_count) == 3
    # 64 tiles x 3 splits = 192 blocks, 2 per SM: one partial wave; BK 16, 64 slices -> 22 per split (66 padded).
    per_sm = tuning.blocks_per_sm(big)
    wave = math.sqrt(math.ceil(192 / sm_count) / per_sm)
    expected = 192 / (sm_count * per_sm * wave) * (64 / 66) * tuning.split_reduction_fill(3, 22 * 16)
    assert tuning.shape_efficiency(big, 1024, 1024, 1024, sm_count) == pytest.approx(expected)
