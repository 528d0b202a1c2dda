"""TMA tensor maps for the Hopper kernels (KernelSpec.operand_args "tensor_maps": A and B; "tensor_maps_cd": C and
D too), encoded with the CUDA driver's cuTensorMapEncodeTiled.

CuPy 14's cupy.cuda.driver has no binding for it and cuda-python is not a dependency, so the driver library is
called through ctypes (only in the worker child, which owns the CUDA context). The 128-byte CUtensorMap comes
back as a one-element numpy array of dtype V128: CuPy passes a size-one numpy array to a kernel by value (its
bytes are copied into the parameter buffer), which is what a `const __grid_constant__ CUtensorMap` parameter
takes. The parameter space is where TMA reads the map from, so no copy to global memory and no fence are needed.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from functools import cache

import numpy as np

from kernels.operations import DTYPE_BYTES
from kernels.spec import KernelSpec

TENSOR_MAP_BYTES = 128
# cuda.h enums (CUDA 12 and 13): CUtensorMapDataType.
DATA_TYPE_FLOAT16 = 6
DATA_TYPE_FLOAT32 = 7
DATA_TYPE_BFLOAT16 = 9
DATA_TYPES = {"float16": DATA_TYPE_FLOAT16, "bfloat16": DATA_TYPE_BFLOAT16, "float32": DATA_TYPE_FLOAT32}
INTERLEAVE_NONE = 0
SWIZZLES = {0: 0, 32: 1, 64: 2, 128: 3}  # CU_TENSOR_MAP_SWIZZLE_NONE / _32B / _64B / _128B, by the span in bytes
L2_PROMOTION_256B = 3
OOB_FILL_ZERO = 0  # CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE: out-of-bounds elements read as zero


@dataclass(frozen=True)
class TileMap:
    """A 2-D row-major matrix of `rows` x `cols` elements of `dtype` ("float16", "bfloat16" or "float32") read or
    written in boxes of `box_rows` x `box_cols`, in the driver's order: dimension 0 is the contiguous one (columns);
    shared memory holds the boxes in the `swizzle_bytes` swizzle (128, 64 or 32), which the kernel's wgmma
    descriptors name too, or as they are in memory (0)."""

    rows: int
    cols: int
    box_rows: int
    box_cols: int
    dtype: str = "float16"
    swizzle_bytes: int = 128

    @property
    def element_bytes(self) -> int:
        return DTYPE_BYTES.get(self.dtype, 0)

    @property
    def global_dims(self) -> tuple[int, int]:
        return (self.cols, self.rows)

    @property
    def global_strides(self) -> tuple[int]:
        """Byte stride of dimension 1 (a row); dimension 0's stride is the element size, implied."""
        return (self.cols * self.element_bytes,)

    @property
    def box_dims(self) -> tuple[int, int]:
        return (self.box_cols, self.box_rows)

    def problem(self) -> str | None:
        """Why the driver would refuse this map (its documented limits), or None."""
        width = self.element_bytes
        if self.dtype not in DATA_TYPES:
            return f"no TMA data type for {self.dtype} elements here ({', '.join(DATA_TYPES)})"
        if self.global_strides[0] % 16:
            return (
                f"a row of {self.cols} elements is {self.cols * width} bytes, not a multiple of 16 (TMA's stride rule)"
            )
        if not (0 < self.box_cols <= 256 and 0 < self.box_rows <= 256) or (self.box_cols * width) % 16:
            return f"box {self.box_rows}x{self.box_cols} is outside TMA's limits"
        if self.swizzle_bytes not in SWIZZLES:
            return f"no {self.swizzle_bytes}-byte swizzle (TMA has 32, 64 and 128, or none: 0)"
        if self.swizzle_bytes and self.box_cols * width > self.swizzle_bytes:
            return f"a box row of {self.box_cols * width} bytes exceeds the {self.swizzle_bytes}-byte swizzle span"
        return None


def operand_maps(spec: KernelSpec, m: int, n: int, k: int) -> tuple[TileMap, TileMap]:
    """The tensor maps of A (m x k) and B (k x n), of the operation's input type (float16 or bfloat16, 2 bytes), as
    the kernel reads them: A in BM x BK boxes, B in BK x 64 boxes (a 128-byte swizzle row holds 64 halves, so a
    BN-wide B tile is several boxes). A's swizzle is params["A_SWIZZLE_BYTES"] where a kernel's K slice is narrower
    than 128 bytes, else SWIZZLE_BYTES."""
    p = spec.params
    dtype = spec.operation_spec.input_dtype
    b_box_cols = p["SWIZZLE_BYTES"] // 2
    a_swizzle = p.get("A_SWIZZLE_BYTES", p["SWIZZLE_BYTES"])
    return (
        TileMap(m, k, p["BM"], p["BK"], dtype=dtype, swizzle_bytes=a_swizzle),
        TileMap(k, n, p["BK"], b_box_cols, dtype=dtype),
    )


def output_map(spec: KernelSpec, m: int, n: int) -> TileMap:
    """The tensor map of float C and D (m x n) for a kernel whose epilogue moves them by TMA (operand_args
    "tensor_maps_cd"): OUT_BOX_ROWS x OUT_BOX_COLS float boxes, one 128-byte swizzle row wide."""
    p = spec.params
    return TileMap(m, n, p["OUT_BOX_ROWS"], p["OUT_BOX_COLS"], dtype="float32")


@cache
def _driver() -> ctypes.CDLL:
    lib = ctypes.CDLL("libcuda.so.1")
    fn = lib.cuTensorMapEncodeTiled
    fn.restype = ctypes.c_int
    fn.argtypes = [
        ctypes.c_void_p,  # CUtensorMap*
        ctypes.c_int,  # data type
        ctypes.c_uint32,  # rank
        ctypes.c_void_p,  # global address
        ctypes.POINTER(ctypes.c_uint64),  # global dims
        ctypes.POINTER(ctypes.c_uint64),  # global strides (rank - 1)
        ctypes.POINTER(ctypes.c_uint32),  # box dims
        ctypes.POINTER(ctypes.c_uint32),  # element strides
        ctypes.c_int,  # interleave
        ctypes.c_int,  # swizzle
        ctypes.c_int,  # L2 promotion
        ctypes.c_int,  # OOB fill
    ]
    lib.cuGetErrorString.restype = ctypes.c_int
    lib.cuGetErrorString.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    return lib


def encode(tile: TileMap, address: int) -> np.ndarray:
    """The CUtensorMap of `tile` at device address `address`, as a one-element V128 numpy array (pass it to a
    CuPy kernel launch as is). Raises RuntimeError with the driver's message if the driver refuses it."""
    why = tile.problem()
    if why:
        raise RuntimeError(f"cannot build a TMA tensor map: {why}")
    if address % 16:
        raise RuntimeError(f"cannot build a TMA tensor map: address {address:#x} is not 16-byte aligned")
    lib = _driver()
    raw = ctypes.create_string_buffer(2 * TENSOR_MAP_BYTES)
    aligned = (ctypes.addressof(raw) + TENSOR_MAP_BYTES - 1) & ~(TENSOR_MAP_BYTES - 1)  # the struct is alignas(128)
    dims = (ctypes.c_uint64 * 2)(*tile.global_dims)
    strides = (ctypes.c_uint64 * 1)(*tile.global_strides)
    box = (ctypes.c_uint32 * 2)(*tile.box_dims)
    element_strides = (ctypes.c_uint32 * 2)(1, 1)
    status = lib.cuTensorMapEncodeTiled(
        aligned,
        DATA_TYPES[tile.dtype],
        2,
        address,
        dims,
        strides,
        box,
        element_strides,
        INTERLEAVE_NONE,
        SWIZZLES[tile.swizzle_bytes],
        L2_PROMOTION_256B,
        OOB_FILL_ZERO,
    )
    if status != 0:
        text = ctypes.c_char_p()
        lib.cuGetErrorString(status, ctypes.byref(text))
        message = text.value.decode() if text.value else f"CUresult {status}"
        raise RuntimeError(f"cuTensorMapEncodeTiled refused {tile}: {message}")
    out = np.zeros(1, dtype=np.dtype((np.void, TENSOR_MAP_BYTES)))
    ctypes.memmove(out.ctypes.data, aligned, TENSOR_MAP_BYTES)
    return out
