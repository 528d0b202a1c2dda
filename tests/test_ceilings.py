"""CPU side of the measured ceilings: conversion to roofline ceilings and the per-device cache."""

from __future__ import annotations

from pathlib import Path

from profiling.analysis.ceilings import cache_path, load_cached, measured_to_ceilings, save_cached


def test_dram_ceiling_takes_the_faster_of_read_and_copy() -> None:
    measured = {
        "fp32_flops": {"value": 6.0e13, "how": "fma"},
        "dram_read_bytes_per_s": {"value": 3.9e12},
        "dram_copy_bytes_per_s": {"value": 4.2e12},
        "l2_read_bytes_per_s": {"value": 1.1e13},
        "shared_read_bytes_per_s": {"value": 3.0e13},
    }
    c = measured_to_ceilings(measured, "measured 2026-11-22")
    assert c.dram_bytes_per_s.value == 4.2e12
    assert c.fp32_flops.source == "measured 2026-11-22" and c.fp32_flops.note == "fma"
    assert c.bandwidth("L2").value == 1.1e13 and c.bandwidth("L1").value == 3.0e13


def test_cache_round_trip_per_device(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("GEMMLENS_CACHE_DIR", str(tmp_path))
    assert load_cached("NVIDIA H200") is None
    save_cached({"device": "NVIDIA H200", "ceilings": {"fp32_flops": {"value": 1.0}}})
    assert cache_path("NVIDIA H200").name == "nvidia-h200.json"
    assert load_cached("NVIDIA H200")["ceilings"]["fp32_flops"]["value"] == 1.0
    assert load_cached("NVIDIA H100 80GB HBM3") is None
