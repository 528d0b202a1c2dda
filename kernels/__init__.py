"""GEMM Lens kernel catalog: CUDA sources under `src/` and their descriptions in `catalog.py`."""

from kernels.catalog import CATALOG, kernel_ids, reference_for
from kernels.registry import get_kernel
from kernels.spec import KernelSpec

__all__ = ["CATALOG", "KernelSpec", "get_kernel", "kernel_ids", "reference_for"]
