"""The catalog entry of sgemm-auto (kernels.catalog appends it; kernels/auto.py makes the choice at launch)."""

from __future__ import annotations

from dataclasses import replace

from kernels.spec import KernelSpec

AUTO_ADDS = (
    "Not a kernel of its own: at each launch the runner picks, among every tile configuration of v8-async, v9-regdb, "
    "v8-splitk, v9-splitk and v9-clusterk, the one with the highest predicted TFLOP/s at the asked shape on this GPU (kernels/auto.py: the "
    "GPU's tuning record, each configuration's nearest measurement scaled by wave fill, edge tiles, K padding and, "
    "for split-K, its splits and their reductions into C). Without a record: v9's 128x256 tiles for large M x N, "
    "v8's 64x64 where those leave SMs idle, split-K on 64x64 tiles where even those do not reach every SM and K is "
    "deep. Each result's config names the choice and whether a record or the default made it. Its own source and "
    "entry are v9-regdb's, the default for a large square shape."
)


def auto_entry(v9: KernelSpec) -> KernelSpec:
    """sgemm-auto: v9-regdb's static fields (what it runs at a large square shape without a record), its own id,
    title and text, no ladder step before it, and `chooses_at_launch`."""
    return replace(
        v9,
        id="sgemm-auto",
        title="tuned SGEMM: the catalog's fastest configuration for this GPU and shape",
        adds=AUTO_ADDS,
        design_doc="cuBLAS's per-shape heuristics (a kernel and split count per shape); CUTLASS split-K; chooses "
        "among v8-async, v9-regdb, v8-splitk, v9-splitk and v9-clusterk",
        previous=None,
        chooses_at_launch=True,
    )
