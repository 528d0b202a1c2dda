"""Compile catalog kernels with CuPy (cached per process) and read their registers, shared and local memory,
with nvcc's -Xptxas -v report where nvcc is installed."""

from __future__ import annotations

import functools
import hashlib
import os
import subprocess
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kernels.compile_info import LAUNCH_OPTIONS, cuda_include_dirs
from kernels.spec import KernelSpec
from profiling.gpu.fp32_cupy import cupy


@dataclass
class CompiledKernel:
    """A compiled catalog kernel and the compiler's facts about it."""

    spec: KernelSpec
    function: Any
    info: dict[str, Any]
    # Other kernels of the same module the operation launches, by name (a split-K kernel's zeroing of C; where it
    # pads N, the padding of B with the zeroing and the copy of C back).
    helpers: dict[str, Any] = field(default_factory=dict)


_COMPILED: dict[tuple, CompiledKernel] = {}


def compile_cache_key(spec: KernelSpec, defines: tuple[str, ...] = ()) -> tuple:
    """What makes two specs one compiled kernel: the source, entry and backend, the other kernels of the module
    its operation launches (a padded configuration shares its entry with its twin, and takes more of them), and the
    macros it is built with."""
    return (spec.source, spec.entry, spec.backend, spec.helper_entries, defines)


def compile_kernel(spec: KernelSpec, defines: tuple[str, ...] = ()) -> CompiledKernel:
    """Compile a catalog kernel (cached per process) and read its registers, shared and local memory. `defines`
    ("NAME=VALUE") are macros of the build, for measurement builds (GEMMLENS_PDL, kernels/src/pdl.cuh)."""
    key = compile_cache_key(spec, defines)
    if key in _COMPILED:
        return replace(_COMPILED[key], spec=spec)
    arch = spec.arch or f"sm_{cupy.cuda.Device().compute_capability}"
    options: list[str] = [*LAUNCH_OPTIONS, *(f"-D{d}" for d in defines)]
    if spec.arch:
        module = cupy.RawModule(path=str(_nvcc_cubin(spec, options)))
    else:
        if spec.backend == "nvrtc":
            options += [f"-I{d}" for d in cuda_include_dirs()]
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
    helpers = {name: module.get_function(name) for name in spec.helper_entries}
    compiled = CompiledKernel(spec, function, info, helpers)
    _COMPILED[key] = compiled
    return compiled


def _nvcc_cubin(spec: KernelSpec, options: list[str]) -> Path:
    """An architecture-specific kernel (spec.arch, e.g. sm_90a) compiled ahead of time by nvcc into a cubin, cached
    under the source's hash.

    Why not RawModule(code=...): CuPy always adds its own -arch from the device's compute capability (sm_90, which
    has no wgmma or setmaxnreg) and its NVRTC path reads the architecture as a number, so "90a" cannot be asked
    for there; nvcc builds exactly the target named, and CuPy loads the cubin. The entry must be extern "C".
    """
    from kernels.compile_info import compile_cubin

    source = spec.read_source()
    digest = hashlib.sha256("\n".join([source, spec.arch or "", *options]).encode()).hexdigest()[:20]
    root = Path(os.environ.get("GEMMLENS_CUBIN_DIR") or Path(tempfile.gettempdir()) / "gemmlens-cubins")
    cubin = root / f"{spec.source}-{spec.arch}-{digest}.cubin"
    if not cubin.is_file():
        root.mkdir(parents=True, exist_ok=True)
        compile_cubin(source, spec.arch or "", cubin, options)
    return cubin


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
