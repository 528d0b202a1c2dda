"""GEMM Lens kernel catalog: CUDA sources under `src/` and their descriptions in `catalog.py`."""

from kernels.catalog import CATALOG, KernelSpec, get_kernel, kernel_ids, reference_for

__all__ = ["CATALOG", "KernelSpec", "get_kernel", "kernel_ids", "reference_for"]
