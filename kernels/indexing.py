"""Indexing models: for every catalog kernel, which elements of A, B and C each lane of a warp touches, at
which global and shared-memory byte addresses, in which instruction (kernels/indexing_base.py explains;
the models live in indexing_ladder, indexing_vectorized, indexing_pipelined and indexing_tensor).

`model_for(kernel_id)` gives the model of a catalog entry or tuning configuration.
"""

from __future__ import annotations

from kernels.indexing_base import LANES, Access, KernelModel
from kernels.indexing_ladder import TiledModel, V1CoalescedModel, V1Model, V2Model, V3Model, V4Model, V5Model
from kernels.indexing_pipelined import V8Model, V9Model
from kernels.indexing_tensor import MmaAsyncModel, WmmaModel
from kernels.indexing_vectorized import V6Model, V7Model
from kernels.registry import get_kernel
from profiling.errors import InvalidInput

MODELS: dict[str, type[KernelModel]] = {
    "v1": V1Model,
    "v1-coalesced": V1CoalescedModel,
    "v2": V2Model,
    "tiled-8": TiledModel,
    "tiled-16": TiledModel,
    "tiled-32": TiledModel,
    "v3": V3Model,
    "v4": V4Model,
    "v5": V5Model,
    "v6-vectorized": V6Model,
    "v7-warptile": V7Model,
    "v8-async": V8Model,
    "v9-regdb": V9Model,
    "wmma-addmm": WmmaModel,
    "wmma-async": MmaAsyncModel,
}


def model_for(kernel_id: str) -> KernelModel:
    """The indexing model of a catalog kernel or tuning configuration (InvalidInput for library kernels)."""
    spec = get_kernel(kernel_id)
    base = kernel_id if kernel_id in MODELS else next((b for b in MODELS if kernel_id.startswith(b + "-")), None)
    if spec.uses_tensor_maps:
        raise InvalidInput(
            f"no indexing model for '{kernel_id}': the Tensor Memory Accelerator copies its tiles from tensor maps, "
            "so no lane computes a load address to draw; modelled kernels: " + ", ".join(MODELS)
        )
    if base is None or spec.is_reference:
        raise InvalidInput(
            f"no indexing model for '{kernel_id}' (library kernels have no source to model); "
            f"modelled kernels: {', '.join(MODELS)}"
        )
    return MODELS[base](spec)


__all__ = ["LANES", "MODELS", "Access", "KernelModel", "model_for"]
