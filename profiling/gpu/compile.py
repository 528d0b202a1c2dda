"""Compile catalog kernels with CuPy (cached per process) and read their registers, shared and local memory,
with nvcc's -Xptxas -v report where nvcc is installed."""

from __future__ import annotations

import functools
import os
import subprocess
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kernels.catalog import KernelSpec
from profiling.gpu.fp32_cupy import cupy


@dataclass
class CompiledKernel:
    """A compiled catalog kernel and the compiler's facts about it."""

    spec: KernelSpec
    function: Any
    info: dict[str, Any]


_COMPILED: dict[tuple, CompiledKernel] = {}


def _cuda_include_dirs() -> list[str]:
    dirs = []
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and os.path.isdir(os.path.join(root, "include")):
            dirs.append(os.path.join(root, "include"))
    return list(dict.fromkeys(dirs))


def compile_kernel(spec: KernelSpec) -> CompiledKernel:
    """Compile a catalog kernel (cached per process) and read its registers, shared and local memory."""
    key = (spec.source, spec.entry, spec.backend)
    if key in _COMPILED:
        return replace(_COMPILED[key], spec=spec)
    arch = f"sm_{cupy.cuda.Device().compute_capability}"
    options: list[str] = ["-std=c++17", "-lineinfo"]
    if spec.backend == "nvrtc":
        options += [f"-I{d}" for d in _cuda_include_dirs()]
    module = cupy.RawModule(
        code=spec.read_source(), options=tuple(options), name_expressions=[spec.entry], backend=spec.backend
    )
    function = module.get_function(spec.entry)
    if spec.dynamic_smem_bytes > 48 * 1024:
        function.max_dynamic_shared_size_bytes = spec.dynamic_smem_bytes
    attrs = function.attributes
    info = {
        "arch": arch,
        "backend": spec.backend,
        "options": options,
        "registers": int(attrs["num_regs"]),
        "shared_static_bytes": int(attrs["shared_size_bytes"]),
        "local_bytes": int(attrs["local_size_bytes"]),
        "max_threads_per_block": int(attrs["max_threads_per_block"]),
        "dynamic_smem_bytes": spec.dynamic_smem_bytes,
        "log": _ptxas_log(spec, arch),
    }
    compiled = CompiledKernel(spec, function, info)
    _COMPILED[key] = compiled
    return compiled


@functools.cache
def _nvcc_report(source: str, arch: str) -> tuple[list, str]:
    from kernels.compile_info import nvcc_resources

    return nvcc_resources(Path(source), arch, timeout_s=120)


def _ptxas_log(spec: KernelSpec, arch: str) -> str:
    """nvcc's -Xptxas -v report for this kernel where nvcc is installed (NVRTC prints none), else ""."""
    from kernels.compile_info import entry_matches

    try:
        resources, log = _nvcc_report(str(spec.source_path), arch)
    except (RuntimeError, OSError, subprocess.TimeoutExpired):
        return ""
    mine = [r.name for r in resources if entry_matches(r.name, spec.entry)]
    lines = log.splitlines()
    # Keep the lines of this kernel's block: from its "Compiling entry function" to its "Used N registers".
    keep, inside = [], False
    for line in lines:
        if "Compiling entry function" in line:
            inside = any(f"'{name}'" in line for name in mine)
        if inside:
            keep.append(line.strip())
            if "Used " in line and "registers" in line:
                inside = False
    return "\n".join(keep)


def max_active_blocks(compiled: CompiledKernel) -> int:
    """Blocks per SM the driver's occupancy calculator allows for this kernel's launch."""
    return int(
        cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
            compiled.function.kernel.ptr, compiled.spec.threads_per_block, compiled.spec.dynamic_smem_bytes
        )
    )
