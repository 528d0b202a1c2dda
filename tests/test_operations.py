"""Each operation is defined once (kernels.catalog.OPERATIONS) and every kernel question goes through it."""

from __future__ import annotations

import math

import pytest

from kernels.catalog import CATALOG, reference_for, reference_ids
from kernels.operations import OPERATIONS, operation_spec
from kernels.registry import find_kernel, get_kernel, is_tensor_core_kernel, operation_of
from kernels.tuning import TUNING_CONFIGS, V9_TUNING_CONFIGS
from profiling.errors import InvalidInput
from profiling.gpu.jobs import device_bytes_needed, element_bytes, tolerance_for
from profiling.shape import Shape

DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}


def test_every_kernel_names_a_defined_operation_whose_reference_matches() -> None:
    for spec in CATALOG:
        op = operation_spec(spec.operation)
        ref = get_kernel(op.reference_id)
        assert ref.is_reference and ref.operation == spec.operation
        assert reference_for(spec) is ref
    assert reference_ids() == {"sgemm": "cublas", "hgemm_addmm": "cublas-addmm", "bgemm_addmm": "cublas-addmm-bf16"}
    with pytest.raises(InvalidInput, match="known operations: sgemm, hgemm_addmm, bgemm_addmm"):
        operation_spec("dgemm")


@pytest.mark.parametrize("spec", CATALOG, ids=lambda s: s.id)
def test_input_element_size_matches_the_kernels_dtype(spec) -> None:
    assert element_bytes(spec) == (DTYPE_BYTES[spec.dtype], 4)
    assert spec.operation_spec.input_dtype == spec.dtype


def test_the_bf16_addmm_is_the_fp16_one_with_bfloat16_inputs() -> None:
    """bgemm_addmm differs from hgemm_addmm in its input type and reference only: same bytes, buffers, ceiling and
    tolerance, its own cuBLAS call (cublas-addmm-bf16, the same in-place cublasGemmEx with bfloat16 A and B)."""
    fp16, bf16 = OPERATIONS["hgemm_addmm"], OPERATIONS["bgemm_addmm"]
    assert (bf16.input_dtype, bf16.reference_id) == ("bfloat16", "cublas-addmm-bf16")
    same = ("input_bytes", "output_bytes", "device_buffers", "compute", "tolerance_floor", "tolerance_per_sqrt_k")
    assert [getattr(bf16, f) for f in same] == [getattr(fp16, f) for f in same]
    ref = get_kernel("cublas-addmm-bf16")
    assert (ref.is_reference, ref.library_call, ref.dtype, ref.group) == (True, "addmm", "bfloat16", "reference")
    assert operation_of("wgmma-persistent-bf16") is bf16 and operation_of("bgemm_wgmma_persistent") is bf16
    assert is_tensor_core_kernel("cublas-addmm-bf16") and is_tensor_core_kernel("wgmma-persistent-bf16")
    m, n, k = 64, 32, 16
    assert device_bytes_needed(get_kernel("wgmma-persistent-bf16"), Shape(m, n, k)) == device_bytes_needed(
        get_kernel("wgmma-persistent"), Shape(m, n, k)
    )
    # wgmma-streamk's partial sums and flags (20 MiB, the module's own) on top of the buffers of wgmma-staged.
    streamk, staged = get_kernel("wgmma-streamk"), get_kernel("wgmma-staged")
    assert device_bytes_needed(streamk, Shape(m, n, k)) == device_bytes_needed(staged, Shape(m, n, k)) + 20_972_800
    assert device_bytes_needed(staged, Shape(m, n, k)) == 2 * (m * k + k * n) + 4 * 3 * m * n


def test_tensor_core_work_is_exactly_the_half_precision_operations() -> None:
    assert [op.name for op in OPERATIONS.values() if op.is_tensor_core] == ["hgemm_addmm", "bgemm_addmm"]
    tensor = {s.id for s in CATALOG if s.is_tensor_core}
    assert tensor == {
        "cublas-addmm",
        "cublas-addmm-bf16",
        "cublas-hgemm",
        "wmma-addmm",
        "wmma-async",
        "wgmma-tma",
        "wgmma-pingpong",
        "wgmma-tma-store",
        "wgmma-persistent",
        "wgmma-cluster",
        "wgmma-persistent-bf16",
        "wgmma-staged",
        "wgmma-streamk",
        "wgmma-streamk-bf16",
        "wgmma-streamk-cluster",
        "wgmma-streamk-cluster-bf16",
    }
    assert all(s.group in ("tensor-core", "reference") for s in CATALOG if s.is_tensor_core)
    assert OPERATIONS["sgemm"].compute == "fp32" and OPERATIONS["hgemm_addmm"].compute == "tensor"


def test_tolerance_rules() -> None:
    sgemm, hgemm = OPERATIONS["sgemm"], OPERATIONS["hgemm_addmm"]
    assert sgemm.tolerance(8) == pytest.approx(1e-5)
    assert sgemm.tolerance(8192) == pytest.approx(8 * 1.1920929e-07 * math.sqrt(8192))
    assert hgemm.tolerance(8) == hgemm.tolerance(65536) == 1e-3
    assert tolerance_for(get_kernel("wmma-async"), Shape(64, 64, 4096)) == 1e-3
    assert tolerance_for(get_kernel("v5"), Shape(64, 64, 4096)) == sgemm.tolerance(4096)


def test_flops_and_device_bytes_follow_the_operation() -> None:
    assert OPERATIONS["sgemm"].flops(2, 3, 5) == OPERATIONS["hgemm_addmm"].flops(2, 3, 5) == 60
    m, n, k = 64, 32, 16
    # SGEMM: float A, B, C and the reference; AddMM: half A, B and float C, D and the reference.
    assert device_bytes_needed(get_kernel("v5"), Shape(m, n, k)) == 4 * (m * k + k * n) + 4 * 2 * m * n
    assert device_bytes_needed(get_kernel("wmma-addmm"), Shape(m, n, k)) == 2 * (m * k + k * n) + 4 * 3 * m * n


@pytest.mark.parametrize(
    "name,expected",
    [
        ("v5", "v5"),
        ("cublas-hgemm", "cublas-hgemm"),
        ("wmma-async 4096x4096x4096", "wmma-async"),
        ("hgemm_wmma_addmm", "wmma-addmm"),
        ("void hgemm_mma_async<128, 256, 4>(const __half *, const __half *, const float *, float *)", "wmma-async"),
        ("sgemm_v1_naive", "v1"),
        (V9_TUNING_CONFIGS[3]["id"], V9_TUNING_CONFIGS[3]["id"]),
        (TUNING_CONFIGS[2]["id"] + " 1024x1024x1024", TUNING_CONFIGS[2]["id"]),
    ],
)
def test_find_kernel_reads_ids_labels_and_function_names(name: str, expected: str) -> None:
    found = find_kernel(name)
    assert found is not None and found.id == expected


@pytest.mark.parametrize("name", ["", "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n", "nvjet_sm90_hsh_256x128", "my_hgemm"])
def test_foreign_kernels_are_not_guessed_from_their_names(name: str) -> None:
    assert find_kernel(name) is None and operation_of(name) is None and not is_tensor_core_kernel(name)


def test_a_records_own_operation_wins_over_its_name() -> None:
    assert is_tensor_core_kernel("wmma-addmm") and is_tensor_core_kernel("hgemm_mma_async")
    assert not is_tensor_core_kernel("v9-regdb") and not is_tensor_core_kernel("cublas")
    assert operation_of("anything", "hgemm_addmm") is OPERATIONS["hgemm_addmm"]
    assert not is_tensor_core_kernel("wmma-addmm", operation="sgemm")
    assert operation_of("v5", operation="unknown") is OPERATIONS["sgemm"]
