"""Device model: table consistency, ceilings from each source, trust order."""

from __future__ import annotations

import pytest

from profiling.device_model import (
    FP32_LANES_PER_SM,
    GPU_TABLE,
    DeviceInfo,
    best_ceilings,
    ceilings_from_device_info,
    ceilings_from_ncu,
    ceilings_from_table,
    fp32_lanes_per_sm,
    table_name_for,
)
from profiling.errors import InvalidInput

H100_INFO = {
    "name": "NVIDIA H100 80GB HBM3",
    "cc": "9.0",
    "sm_count": 132,
    "max_sm_clock_mhz": 1980,
    "max_mem_clock_mhz": 2619,
    "memory_bus_width_bits": 5120,
    "fp32_lanes_per_sm": 128,
}

# Measured with ncu on an H200 (docs/measured-facts.md, from tests/fixtures/ncu/raw.csv): 16,896 FFMA/cycle,
# 1,504 DRAM B/cycle at 3.1995 GHz.
H200_NCU = {
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained": 16896.0,
    "sm__cycles_elapsed.avg.per_second": 1.98e9,
    "dram__bytes.sum.peak_sustained": 1504.0,
    "dram__cycles_elapsed.avg.per_second": 3.1995e9,
}


@pytest.mark.parametrize("name", sorted(GPU_TABLE))
def test_table_fp32_formula_matches_datasheet(name):
    spec = GPU_TABLE[name]
    assert spec.fp32_flops / 1e12 == pytest.approx(spec.datasheet_fp32_tflops, rel=0.01)
    assert spec.tensor_fp16_tflops > spec.datasheet_fp32_tflops
    assert spec.source and spec.tensor_note


def test_lanes_per_cc():
    assert {cc: FP32_LANES_PER_SM[cc] for cc in ("7.0", "7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "12.0")} == {
        "7.0": 64,
        "7.5": 64,
        "8.0": 64,
        "8.6": 128,
        "8.9": 128,
        "9.0": 128,
        "10.0": 128,
        "12.0": 128,
    }
    with pytest.raises(InvalidInput):
        fp32_lanes_per_sm("6.1")


@pytest.mark.parametrize(
    ("device", "row"),
    [
        ("NVIDIA H100 80GB HBM3", "H100 SXM"),
        ("NVIDIA H100 PCIe", "H100 PCIe"),
        ("NVIDIA H200", "H200"),
        ("NVIDIA A100-SXM4-80GB", "A100 SXM 80GB"),
        ("NVIDIA A100-SXM4-40GB", "A100 SXM 40GB"),
        ("NVIDIA A10", "A10"),
        ("Tesla T4", "T4"),
        ("Tesla V100-SXM2-16GB", "V100 SXM2"),
        ("NVIDIA L4", "L4"),
        ("NVIDIA L40S", "L40S"),
        ("NVIDIA GeForce RTX 4090", "RTX 4090"),
        ("NVIDIA GeForce RTX 3090", "RTX 3090"),
        ("NVIDIA GeForce RTX 5090", None),
    ],
)
def test_device_names_map_to_rows(device, row):
    assert table_name_for(device) == row


def test_ceilings_from_table():
    c = ceilings_from_table("H100 SXM")
    assert c.fp32_flops.value == pytest.approx(66.9e12, rel=1e-3)
    assert c.fp32_flops.source == "built-in table: H100 SXM"
    assert c.tensor_fp16_flops.value == pytest.approx(989.4e12)
    assert c.dram_bytes_per_s.value == pytest.approx(3.35e12)
    assert c.l2_bytes_per_s is None
    with pytest.raises(InvalidInput, match="not in the built-in GPU table"):
        ceilings_from_table("Radeon")


def test_ceilings_from_device_info():
    c = ceilings_from_device_info(DeviceInfo.from_dict(H100_INFO))
    assert c.fp32_flops.value == pytest.approx(66.9e12, rel=1e-3)
    assert c.fp32_flops.source == "live device"
    # 2 x 2619 MHz x 5120 bit / 8 = 3.35 TB/s, the datasheet's figure.
    assert c.dram_bytes_per_s.value == pytest.approx(3.352e12, rel=1e-3)
    assert c.tensor_fp16_flops.source == "built-in table: H100 SXM"
    # Without fp32_lanes_per_sm the CC decides.
    info = {k: v for k, v in H100_INFO.items() if k != "fp32_lanes_per_sm"}
    assert ceilings_from_device_info(DeviceInfo.from_dict(info)).fp32_flops.value == c.fp32_flops.value


def test_ceilings_from_ncu_match_field_notes():
    c = ceilings_from_ncu(H200_NCU)
    assert c.fp32_flops.value == pytest.approx(66.9e12, rel=1e-3)
    assert c.dram_bytes_per_s.value == pytest.approx(4.81e12, rel=1e-3)
    assert c.fp32_flops.source == c.dram_bytes_per_s.source == "ncu report"
    assert c.l2_bytes_per_s is None and c.tensor_fp16_flops is None
    with_l2 = ceilings_from_ncu(
        {
            **H200_NCU,
            "lts__t_bytes.sum.peak_sustained": "5,120",
            "lts__cycles_elapsed.avg.per_second": 1.8e9,
            "l1tex__t_bytes.sum.peak_sustained": 16896.0,
            "l1tex__cycles_elapsed.avg.per_second": 1.98e9,
        }
    )
    assert with_l2.l2_bytes_per_s.value == pytest.approx(5120 * 1.8e9)
    assert with_l2.l1_bytes_per_s.value == pytest.approx(16896 * 1.98e9)


def test_best_ceilings_trust_order():
    # A power-capped run: ncu saw 1.89 GHz, so its FP32 ceiling wins over the live max clock.
    capped = {**H200_NCU, "sm__cycles_elapsed.avg.per_second": 1.89e9}
    c = best_ceilings(ncu_metrics=capped, device_info=DeviceInfo.from_dict(H100_INFO), device_name="H100 SXM")
    assert c.fp32_flops.source == "ncu report"
    assert c.fp32_flops.value == pytest.approx(16896 * 2 * 1.89e9)
    assert c.tensor_fp16_flops.source == "built-in table: H100 SXM"
    c = best_ceilings(device_info=DeviceInfo.from_dict(H100_INFO))
    assert c.fp32_flops.source == "live device" and c.dram_bytes_per_s.source == "live device"
    c = best_ceilings(device_name="NVIDIA L4")
    assert c.dram_bytes_per_s.source == "built-in table: L4"
    assert c.bandwidth("algorithmic") is c.dram_bytes_per_s
    with pytest.raises(InvalidInput, match="no ceilings known"):
        best_ceilings(device_name="Unknown GPU")


def test_the_nvrtc_version_is_the_one_cupy_builds_with() -> None:
    """requirements-dev.txt pins nvidia-cuda-nvrtc-cu12 12.9.86, the NVRTC CuPy finds without a GPU."""
    from profiling.gpu.device import nvrtc_version

    assert nvrtc_version() == "12.9"
