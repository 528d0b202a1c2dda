"""The launch identity (profiling.identity) read from the bundled real captures: which kernel, which size, ours or
not, and the one tensor-core rule; and the one size parser (profiling.shape)."""

from __future__ import annotations

from pathlib import Path

import pytest

from profiling.errors import InvalidInput
from profiling.identity import nvtx_range_name, parse_nvtx
from profiling.nsight.load import load_report
from profiling.shape import Shape, parse_shape, shape_from_label

ROOT = Path(__file__).resolve().parents[1]
WHY_1024 = ROOT / "results/h100-2026-11-22/ncu_why_1024_raw.csv"
FOREIGN = ROOT / "tests/fixtures/foreign/raw.csv"


def _by_kernel(path: Path) -> dict[str, object]:
    return {launch.identity.kernel_id: launch.identity for launch in load_report(path).launches}


def test_the_nvtx_contract_round_trips_and_finds_the_range_among_others() -> None:
    name = nvtx_range_name("v9-regdb-128x256x16-w64x64-t8x16-s3", Shape(4096, 1000, 333))
    assert name == "gemmlens:v9-regdb-128x256x16-w64x64-t8x16-s3:4096x1000x333"
    assert parse_nvtx(name) == ("v9-regdb-128x256x16-w64x64-t8x16-s3", Shape(4096, 1000, 333))
    # ncu's NVTX column as the raw page prints it: a range id, the domain and trailing fields.
    column = '1044  "<default domain>:gemmlens:wgmma-tma:4096x4096x4096:none:none:none:none:none:none"'
    assert parse_nvtx(column) == ("wgmma-tma", Shape(4096, 4096, 4096))
    assert parse_nvtx("gemmlens:v3:4096x4096") is None
    assert parse_nvtx("gemmlens:v3:1x1x12345678901") is None  # more digits than any dimension has
    assert parse_nvtx(None) is None


def test_the_ladder_capture_identifies_each_kernel_with_its_operation() -> None:
    ids = _by_kernel(WHY_1024)
    v3, v4 = ids["v3"], ids["v4"]
    assert v3.shape == Shape(1024, 1024, 1024) and v3.ours and v3.operation.name == "sgemm"
    assert not v3.tensor_core and not v4.tensor_core  # two FP32 kernels
    assert ids["wmma-addmm"].tensor_core and ids["wmma-addmm"].operation.name == "hgemm_addmm"
    assert ids["cublas"].ours and not ids["cublas"].tensor_core


def test_another_programs_kernels_are_not_ours_and_tensor_work_is_read_from_the_pipe() -> None:
    launches = load_report(FOREIGN).launches
    assert not any(launch.identity.ours for launch in launches)
    tensor = sorted({launch.function for launch in launches if launch.identity.tensor_core})
    assert tensor == [  # cuBLAS's Hopper GEMMs inside PyTorch; the elementwise and softmax kernels are not
        "nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA_NNT",
        "nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA_gelubias_NNT",
        "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT",
    ]


def test_sizes_are_parsed_in_one_place() -> None:
    assert parse_shape(" 7X1x2 ") == Shape(7, 1, 2)
    assert shape_from_label("4096x4096x4096") == Shape(4096, 4096, 4096)
    assert shape_from_label("#2") is None and shape_from_label("4096x4096") is None
    with pytest.raises(InvalidInput, match="not of the form MxNxK"):
        parse_shape("4096x4096")


def test_no_tensor_core_rows_for_a_step_between_two_fp32_kernels() -> None:
    from profiling.analysis import explain as X
    from profiling.app import why

    launches = load_report(WHY_1024).launches
    v3, v4 = X.find_launch(launches, "v3"), X.find_launch(launches, "v4")
    fp32 = X.explain(v3, v4)
    assert not fp32.tensor_core and "tensor_pipe_busy" not in {item.key for item in fp32.items}
    assert why.tensor_table(fp32).empty
    tensor = X.explain(X.find_launch(launches, "wmma-addmm"), X.find_launch(launches, "wmma-async"))
    assert tensor.tensor_core and "tensor pipe busy (ncu, % of peak)" in set(why.tensor_table(tensor)["measure"])


def test_a_helper_launch_of_a_tensor_core_operation_is_not_tensor_work() -> None:
    """cuBLAS HGEMM at 127x127x8191 runs a tensor-core kernel and a split-K reduction in one NVTX range: both are
    cublas-hgemm, only the first did tensor-core work (its pipe 5.1 % busy, the reduction's 0.01 %)."""
    launches = load_report(ROOT / "results/h100-2026-11-24/verdicts/ops_raw.csv").launches
    hgemm = [x for x in launches if x.identity.kernel_id == "cublas-hgemm" and x.identity.shape.m == 127]
    assert [(x.function, x.identity.tensor_core) for x in hgemm] == [
        ("Kernel2", True),
        ("splitKreduce_kernel", False),
    ]


def test_a_split_k_helper_launch_is_labelled_with_its_function() -> None:
    """The H200 capture of cuBLAS and sgemm-auto at 333x127x4096 (session 27): sgemm-auto's range holds the
    zeroing of C (2.0 us) and the GEMM; tables and legends tell them apart by the helper's function. cuBLAS's
    reduction is its library's own launch, not one of ours to name."""
    report = load_report(ROOT / "results" / "h200-2026-11-29" / "why_misses" / "ncu_why_misses_raw.csv")
    assert [x.label for x in report.launches if x.identity.m == 333] == [
        "cublas 333x127x4096",
        "cublas 333x127x4096",
        "sgemm-auto 333x127x4096 splitk_zero_c",
        "sgemm-auto 333x127x4096",
    ]
