"""Programmatic dependent launch (sm_90): a kernel launched with CUDA's programmatic stream serialization attribute
may be scheduled while the kernel before it in the stream still runs, and waits in its own code (`griddepcontrol.wait`,
kernels/src/pdl.cuh) for that kernel's writes. CuPy launches without launch attributes, so these launches go through
NVIDIA's driver bindings (cuda-bindings, `cuLaunchKernelEx`), on the CuPy function's handle and current stream.

Only kernels compiled with GEMMLENS_PDL=1 wait; launching any other kernel so could let it read what the kernel
before it has not yet written.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

import numpy as np

# ctypes type of each NumPy scalar type a catalog launch passes.
_SCALAR_CTYPES: dict[type, Any] = {
    np.int32: ctypes.c_int32,
    np.int64: ctypes.c_int64,
    np.uint32: ctypes.c_uint32,
    np.float32: ctypes.c_float,
}


def kernel_params(args: tuple[Any, ...]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """A launch's arguments as cuda-bindings' (values, ctypes types) pair: a device array (anything with
    `.data.ptr`, as a CuPy array) by its address, a NumPy scalar by its own type."""
    values: list[Any] = []
    types: list[Any] = []
    for arg in args:
        data = getattr(arg, "data", None)
        if data is not None and hasattr(data, "ptr"):
            values.append(int(data.ptr))
            types.append(ctypes.c_void_p)
            continue
        scalar_type = _SCALAR_CTYPES.get(type(arg))
        if scalar_type is None:
            raise TypeError(f"no launch argument type for {type(arg).__name__}: pass a device array or a NumPy scalar")
        values.append(arg.item())
        types.append(scalar_type)
    return tuple(values), tuple(types)


def programmatic_launch(
    function: Any, grid: tuple[int, ...], block: tuple[int, ...], args: tuple[Any, ...], shared_mem: int = 0
) -> Callable[[], None]:
    """A zero-argument callable that launches the CuPy kernel `function` (a RawKernel, or its loaded
    cupy.cuda.Function) on the current stream with programmatic stream serialization allowed."""
    import cupy
    from cuda.bindings import driver

    handle = driver.CUfunction(int(getattr(function, "kernel", function).ptr))
    params = kernel_params(args)
    attribute = driver.CUlaunchAttribute()
    attribute.id = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
    attribute.value.programmaticStreamSerializationAllowed = 1
    config = driver.CUlaunchConfig()
    config.gridDimX, config.gridDimY, config.gridDimZ = (*grid, 1, 1)[:3]
    config.blockDimX, config.blockDimY, config.blockDimZ = (*block, 1, 1)[:3]
    config.sharedMemBytes = shared_mem
    config.attrs = [attribute]
    config.numAttrs = 1

    def launch() -> None:
        # The stream is read at each launch: callers time the same launch inside different `with stream` blocks.
        config.hStream = driver.CUstream(cupy.cuda.get_current_stream().ptr)
        (error,) = driver.cuLaunchKernelEx(config, handle, params, 0)
        if error != driver.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"cuLaunchKernelEx failed: {driver.cuGetErrorName(error)[1].decode()} ({int(error)})")

    return launch
