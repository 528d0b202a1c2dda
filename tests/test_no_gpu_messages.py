"""Without a GPU: the words for a machine with no NVIDIA GPU or driver, and `ceilings` showing the ceilings measured
earlier (cached or bundled) with their device, date and source."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profiling import usecases
from profiling.cli import main
from profiling.errors import WorkerError
from profiling.gpu import env as gpu_env

NO_GPU_HERE = gpu_env.no_gpu_or_driver() is not None


def test_no_device_node_and_no_driver_is_said_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gpu_env.sys, "platform", "linux")
    monkeypatch.setattr(gpu_env.ctypes.util, "find_library", lambda name: None)
    reason = gpu_env.no_gpu_or_driver(tmp_path)
    assert reason is not None and reason.startswith("no NVIDIA GPU or driver was found on this machine")
    monkeypatch.setattr(gpu_env, "no_gpu_or_driver", lambda dev=None: reason)
    assert gpu_env.cuda_start_failure("CUDARuntimeError: cudaErrorInsufficientDriver") == reason


def test_a_driver_or_a_device_leaves_cudas_own_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gpu_env.sys, "platform", "linux")
    monkeypatch.setattr(gpu_env.ctypes.util, "find_library", lambda name: "libcuda.so.1")
    assert gpu_env.no_gpu_or_driver(tmp_path) is None  # a driver without a device node: CUDA says what is wrong
    monkeypatch.setattr(gpu_env.ctypes.util, "find_library", lambda name: None)
    (tmp_path / "nvidia0").touch()
    assert gpu_env.no_gpu_or_driver(tmp_path) is None
    monkeypatch.setattr(gpu_env, "no_gpu_or_driver", lambda dev=None: None)
    message = gpu_env.cuda_start_failure("CUDARuntimeError: cudaErrorInsufficientDriver: driver too old")
    assert message == "no usable CUDA GPU (CUDARuntimeError: cudaErrorInsufficientDriver: driver too old)"


@pytest.mark.skipif(not NO_GPU_HERE, reason="this machine has an NVIDIA device node or driver")
@pytest.mark.parametrize("argv", [["bench", "--sizes", "64", "--kernels", "v1"], ["tune", "--sizes", "64"]])
def test_gpu_commands_without_gpu_or_driver_say_so(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("error: the GPU worker could not start: no NVIDIA GPU or driver was found")
    assert "insufficient" not in err


def _no_gpu(*args: object, **kwargs: object) -> usecases.CeilingsRun:
    raise WorkerError("the GPU worker failed: no NVIDIA GPU or driver was found on this machine")


def test_ceilings_without_a_gpu_prints_the_bundled_ones(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GEMMLENS_CACHE_DIR", str(tmp_path / "empty-cache"))
    monkeypatch.setattr(usecases, "run_ceilings", _no_gpu)
    assert main(["ceilings"]) == 0
    out, err = capsys.readouterr()
    assert (
        out.splitlines()[0]
        == "NVIDIA H200 (cc 9.0); measured 2026-11-22T00:49:13Z [bundled: h200-2026-11-22/ceilings.json]"
    )
    assert "FP32 FMA   measured    65.07 TFLOP/s" in out
    assert err.startswith("note: nothing measured now (the GPU worker failed: no NVIDIA GPU or driver")
    assert main(["ceilings", "--refresh"]) == 2  # measuring again needs the GPU
    assert "error: the GPU worker failed" in capsys.readouterr().err


def test_ceilings_without_a_gpu_lists_the_cache_first_in_strict_json(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GEMMLENS_CACHE_DIR", str(tmp_path / "cache"))
    cached = tmp_path / "cache" / "ceilings" / "nvidia-a100.json"
    cached.parent.mkdir(parents=True)
    ceilings = {"fp32_flops": {"value": 1.9e13, "how": "FMA chains"}, "l2_read_bytes_per_s": {"value": 5e12}}
    cached.write_text(
        json.dumps({"device": "NVIDIA A100-SXM4-40GB", "measured_utc": "2026-10-01T00:00:00Z", "ceilings": ceilings})
    )
    (cached.parent / "broken.json").write_text("{not json")
    monkeypatch.setattr(usecases, "run_ceilings", _no_gpu)
    assert main(["ceilings", "--json"]) == 0
    recorded = json.loads(capsys.readouterr().out, parse_constant=lambda c: pytest.fail(f"non-strict JSON: {c}"))
    first, second = recorded["recorded"]
    assert first["source"] == f"cached in {cached}" and first["measured"]["device"] == "NVIDIA A100-SXM4-40GB"
    assert first["theoretical"]["fp32_flops"]["source"].startswith("built-in table")
    assert second["source"] == "bundled: h200-2026-11-22/ceilings.json" and second["device"]["sm_count"] == 132


def test_ceilings_with_nothing_recorded_is_the_workers_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GEMMLENS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(usecases, "recorded_measurements", lambda: [])
    monkeypatch.setattr(usecases, "run_ceilings", _no_gpu)
    assert main(["ceilings"]) == 2
    assert capsys.readouterr().err.startswith("error: the GPU worker failed: no NVIDIA GPU or driver")
