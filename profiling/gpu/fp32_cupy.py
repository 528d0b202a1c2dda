"""CuPy with cuBLAS in true FP32: every GPU module imports `cupy` from here.

CuPy reads CUPY_TF32 once, when it is first imported, so it is set before that import in one place.
"""

import os

# cuBLAS must compute true FP32 (CUBLAS_COMPUTE_32F), the reference our SGEMM kernels are checked against.
os.environ["CUPY_TF32"] = "0"

import cupy  # noqa: E402

__all__ = ["cupy"]
