"""What the Kernels page shows about a catalog entry: its table row, summary, diff and compile facts."""

from __future__ import annotations

import difflib
from typing import Any

import pandas as pd

from kernels.catalog import CATALOG
from kernels.compile_info import entry_matches, nvcc_resources
from kernels.registry import get_kernel
from kernels.spec import KernelSpec
from profiling.runs.results import ResultsDocument


def kernel_diff(spec: KernelSpec) -> str:
    """Unified diff of this kernel's source against its `previous` kernel's ("" when either has none)."""
    if not spec.previous or not spec.source:
        return ""
    prev = get_kernel(spec.previous)
    if not prev.source:
        return ""
    a, b = prev.read_source().splitlines(keepends=True), spec.read_source().splitlines(keepends=True)
    return "".join(difflib.unified_diff(a, b, fromfile=f"{prev.id}: {prev.source}", tofile=f"{spec.id}: {spec.source}"))


def bundled_compile_facts(document: ResultsDocument) -> pd.DataFrame:
    """Compile facts the worker recorded (NVRTC, the bench's arch) per kernel: registers, shared memory,
    local (spill) bytes; one row per kernel, from its first result that has them."""
    rows: dict[str, dict[str, Any]] = {}
    for r in document.results:
        comp, launch = r.compile_info or {}, r.launch or {}
        if not comp or r.kernel in rows:
            continue
        rows[r.kernel] = {
            "kernel": r.kernel,
            "arch": comp.get("arch"),
            "backend": comp.get("backend"),
            "registers": r.registers,
            "shared static (B)": r.shared_static_bytes,
            "shared dynamic (B)": comp.get("dynamic_smem_bytes", launch.get("dynamic_smem_bytes")),
            "local/spill (B)": r.spill_bytes,
            "max threads/block": comp.get("max_threads_per_block"),
            "blocks/SM": launch.get("max_active_blocks_per_sm"),
        }
    return pd.DataFrame(list(rows.values()))


def nvcc_compile_facts(spec: KernelSpec, arch: str = "sm_90") -> pd.DataFrame:
    """ptxas facts of the catalog entry (nvcc -Xptxas -v); other instantiations in the file are left out.

    Raises RuntimeError when nvcc is missing or fails (see kernels.compile_info.nvcc_resources).
    """
    if spec.source_path is None or spec.entry is None:
        return pd.DataFrame()
    found, _ = nvcc_resources(spec.source_path, arch=spec.arch or arch)  # sm_90a kernels: their own target
    matching = [f for f in found if entry_matches(f.name, spec.entry)] or found
    return pd.DataFrame(
        [
            {
                "function": f.name,
                "arch": f.arch,
                "registers": f.registers,
                "barriers": f.barriers,
                "shared static (B)": f.shared_bytes,
                "stack (B)": f.stack_bytes,
                "spill stores (B)": f.spill_store_bytes,
                "spill loads (B)": f.spill_load_bytes,
            }
            for f in matching
        ]
    )


def catalog_table() -> pd.DataFrame:
    """The catalog as a table: id, title, group, operation, previous, source file."""
    return pd.DataFrame(
        [
            {
                "id": s.id,
                "title": s.title,
                "group": s.group,
                "operation": s.operation,
                "previous": s.previous or "",
                "source": s.source or "(library)",
            }
            for s in CATALOG
        ]
    )


def kernel_summary(spec: KernelSpec) -> pd.DataFrame:
    """Launch shape and parameters of a catalog entry as a two-column table."""
    rows = [
        ("operation", spec.operation),
        ("dtype", spec.dtype),
        ("entry", spec.entry or "(library)"),
        *((("entry where N % 4 != 0", spec.narrow_entry),) if spec.narrow_entry else ()),
        ("block", "x".join(map(str, spec.block))),
        ("tile (M x N)", f"{spec.tile_m}x{spec.tile_n}"),
        ("grid order", spec.grid_order),
        ("dynamic shared memory (B)", str(spec.dynamic_smem_bytes)),
        ("sizes must be multiples of", str(spec.multiple_of)),
        ("previous", spec.previous or "-"),
        ("group", spec.group),
        *((f"param {k}", str(v)) for k, v in spec.params.items()),
    ]
    return pd.DataFrame(rows, columns=["property", "value"])
