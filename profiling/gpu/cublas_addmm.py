"""cuBLAS doing the catalog's AddMM itself: D = alpha*A*B + beta*C with float16 (or bfloat16) A, B and float32 C, D.

cupy.matmul on float16 inputs writes a float16 product and reads no C, so timing it measures less work than the
AddMM our kernels do (a 2-byte write per output element instead of a 4-byte read and a 4-byte write). cublasGemmEx
with float32 C and CUBLAS_COMPUTE_32F does the whole operation in one call, in place: the C it reads is the D it
writes. The same call with CUDA_R_16BF inputs is the BF16 AddMM (CuPy has no bfloat16 dtype: A and B are then the
uint16 bit patterns of profiling.gpu.bfloat16, which cuBLAS reads as bfloat16).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

# cudaDataType / cublasComputeType_t / cublasGemmAlgo_t values from CUDA's library_types.h and cublas_api.h.
CUDA_R_32F = 0
CUDA_R_16F = 2
CUDA_R_16BF = 14
# The cudaDataType of A and B for each input type an AddMM operation has (kernels.operations InputDtype).
INPUT_TYPES = {"float16": CUDA_R_16F, "bfloat16": CUDA_R_16BF}
CUBLAS_COMPUTE_32F = 68
CUBLAS_GEMM_DEFAULT = -1
CUBLAS_OP_N = 0


def addmm_in_place(
    a: Any, b: Any, out: Any, alpha: float, beta: float, input_dtype: str = "float16"
) -> Callable[[], None]:
    """A zero-argument launch of out := alpha * a @ b + beta * out (row-major a: m x k, b: k x n, both of
    `input_dtype`, "float16" or "bfloat16" as uint16 bits; out: m x n float32) through cublasGemmEx on CuPy's handle
    and current stream."""
    from cupy.cuda import device
    from cupy_backends.cuda.libs import cublas

    m, k = a.shape
    n = b.shape[1]
    if b.shape[0] != k or out.shape != (m, n):
        raise ValueError(f"shapes do not chain: a {a.shape}, b {b.shape}, out {out.shape}")
    if input_dtype not in INPUT_TYPES:
        raise ValueError(f"no cuBLAS AddMM of {input_dtype} inputs here ({', '.join(INPUT_TYPES)})")
    in_type = INPUT_TYPES[input_dtype]
    # Host scalars, kept alive by the closure: cuBLAS reads them at each call in host pointer mode.
    scalars = np.array([alpha, beta], dtype=np.float32)
    alpha_ptr, beta_ptr = scalars.ctypes.data, scalars.ctypes.data + 4
    a_ptr, b_ptr, out_ptr = a.data.ptr, b.data.ptr, out.data.ptr

    def launch() -> None:
        handle = device.get_cublas_handle()
        mode = cublas.getPointerMode(handle)
        cublas.setPointerMode(handle, cublas.CUBLAS_POINTER_MODE_HOST)
        try:
            # Row-major out (m x n) is column-major out^T (n x m) = b^T a^T: the operands swap, nothing transposes.
            cublas.gemmEx(
                handle,
                CUBLAS_OP_N,
                CUBLAS_OP_N,
                n,
                m,
                k,
                alpha_ptr,
                b_ptr,
                in_type,
                n,
                a_ptr,
                in_type,
                k,
                beta_ptr,
                out_ptr,
                CUDA_R_32F,
                n,
                CUBLAS_COMPUTE_32F,
                CUBLAS_GEMM_DEFAULT,
            )
        finally:
            cublas.setPointerMode(handle, mode)
        _ = scalars

    return launch
