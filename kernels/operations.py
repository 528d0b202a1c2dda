"""GEMM operations: what each one is, its cuBLAS reference, element sizes, tolerance and compute ceiling
(kernels.catalog re-exports these names)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from profiling.errors import InvalidInput

Operation = Literal["sgemm", "hgemm_addmm", "bgemm_addmm"]
ComputeCeiling = Literal["fp32", "tensor"]
InputDtype = Literal["float32", "float16", "bfloat16"]

FP32_EPSILON = 1.1920929e-07
# Bytes per element of each input type A and B may have.
DTYPE_BYTES: dict[str, int] = {"float32": 4, "float16": 2, "bfloat16": 2}


@dataclass(frozen=True)
class OperationSpec:
    """What a GEMM operation is, once: every "which reference?", "how many bytes?", "how close is correct?" and
    "is this tensor-core work?" question about a kernel is answered by its operation's entry here.

    `input_dtype`: the element type of A and B ("bfloat16" has no CuPy dtype: its operands are held as uint16 bit
    patterns, profiling.gpu.bfloat16). `output_bytes`: bytes per element of C (and D). `device_buffers`: the m x n
    buffers one run holds besides A and B (the output and the reference's, plus C for AddMM). The relative-error
    bound for a correct kernel is max(`tolerance_floor`, `tolerance_per_sqrt_k` * sqrt(K)).
    """

    name: Operation
    title: str
    reference_id: str
    input_dtype: InputDtype
    output_bytes: int
    device_buffers: int
    compute: ComputeCeiling
    tolerance_floor: float
    tolerance_per_sqrt_k: float = 0.0

    @property
    def input_bytes(self) -> int:
        """Bytes per element of A and B."""
        return DTYPE_BYTES[self.input_dtype]

    @property
    def is_tensor_core(self) -> bool:
        """Whether the multiply runs on the tensor cores (measured against the FP16 tensor ceiling, which is also
        the BF16 one on Hopper)."""
        return self.compute == "tensor"

    def flops(self, m: int, n: int, k: int) -> int:
        """FLOPs of one run: 2*M*N*K multiply-adds; AddMM's alpha/beta epilogue (3*M*N) is left out, as cuBLAS
        and the published TFLOP/s figures count it."""
        return 2 * m * n * k

    def tolerance(self, k: int) -> float:
        """Relative-error bound ||C - ref|| / ||ref|| for a correct kernel at inner dimension `k`."""
        return max(self.tolerance_floor, self.tolerance_per_sqrt_k * math.sqrt(k))


OPERATIONS: dict[str, OperationSpec] = {
    # float32 rounding grows about as eps * sqrt(K) for random inputs: 8 eps sqrt(K), never below 1e-5.
    "sgemm": OperationSpec(
        name="sgemm",
        title="SGEMM C = A*B (float32)",
        reference_id="cublas",
        input_dtype="float32",
        output_bytes=4,
        device_buffers=2,
        compute="fp32",
        tolerance_floor=1e-5,
        tolerance_per_sqrt_k=8 * FP32_EPSILON,
    ),
    # fp16 operands with fp32 accumulation land near 1e-4 against an fp32 product of the same half inputs;
    # 1e-3 leaves room without letting wrong results pass.
    "hgemm_addmm": OperationSpec(
        name="hgemm_addmm",
        title="HGEMM AddMM D = alpha*A*B + beta*C (float16 A, B; float32 C, D)",
        reference_id="cublas-addmm",
        input_dtype="float16",
        output_bytes=4,
        device_buffers=3,
        compute="tensor",
        tolerance_floor=1e-3,
    ),
    # bfloat16 operands are rounded from float32 before the run and checked against the float32 AddMM of those
    # rounded values, which bfloat16 holds exactly (as are their products in float32): what is left is the order of
    # the float32 accumulation, as for float16, so the same 1e-3.
    "bgemm_addmm": OperationSpec(
        name="bgemm_addmm",
        title="BF16 GEMM AddMM D = alpha*A*B + beta*C (bfloat16 A, B; float32 C, D)",
        reference_id="cublas-addmm-bf16",
        input_dtype="bfloat16",
        output_bytes=4,
        device_buffers=3,
        compute="tensor",
        tolerance_floor=1e-3,
    ),
}


def operation_spec(name: str) -> OperationSpec:
    """The operation called `name`; InvalidInput naming the known ones otherwise."""
    if name in OPERATIONS:
        return OPERATIONS[name]
    raise InvalidInput(f"unknown operation '{name}'; known operations: {', '.join(OPERATIONS)}")
