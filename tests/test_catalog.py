"""Catalog consistency, launch geometry and size constraints (CPU only)."""

from __future__ import annotations

import math
import re

import pytest

from kernels.catalog import CATALOG, kernel_ids, reference_for
from kernels.registry import get_kernel
from profiling.errors import InvalidInput


def test_ids_are_unique_and_lookup_works() -> None:
    ids = kernel_ids()
    assert len(ids) == len(set(ids))
    for kernel_id in ids:
        assert get_kernel(kernel_id).id == kernel_id


def test_unknown_kernel_names_the_known_ones() -> None:
    with pytest.raises(InvalidInput, match="known kernels: cublas"):
        get_kernel("v99")


@pytest.mark.parametrize("spec", [s for s in CATALOG if not s.is_reference], ids=lambda s: s.id)
def test_every_kernel_has_a_source_that_defines_its_entry(spec) -> None:
    source = spec.read_source()
    assert source.lstrip().startswith("//"), f"{spec.source} must open with a comment on what it adds"
    base_name = spec.entry.split("<")[0]
    assert re.search(rf"\b{re.escape(base_name)}\s*\(", source), f"{spec.entry} not defined in {spec.source}"
    if "<" in spec.entry:
        # nvcc -cubin only emits code for explicit instantiations, which the compile tests rely on.
        assert f"{base_name}<{spec.entry.split('<', 1)[1]}" in source.replace(" ", "")
    else:
        assert 'extern "C"' in source
    assert spec.adds and spec.title and spec.design_doc
    assert spec.threads_per_block <= 1024


@pytest.mark.parametrize("spec", [s for s in CATALOG if s.previous], ids=lambda s: s.id)
def test_previous_links_point_into_the_catalog(spec) -> None:
    prev = get_kernel(spec.previous).operation_spec
    if prev.name != spec.operation:
        # A step may change the input type alone (wgmma-persistent-bf16 after wgmma-persistent): it then moves the
        # same bytes and does the same FLOPs on the same units, so the two times compare like for like.
        op = spec.operation_spec
        facts = ("input_bytes", "output_bytes", "device_buffers", "compute")
        assert [getattr(op, f) for f in facts] == [getattr(prev, f) for f in facts], spec.id


def test_every_kernel_has_a_reference_in_the_catalog() -> None:
    for spec in CATALOG:
        if not spec.is_reference:
            ref = reference_for(spec)
            assert ref is not None and ref.is_reference and ref.operation == spec.operation


@pytest.mark.parametrize("m,n", [(1, 1), (7, 33), (128, 129), (4096, 1000), (2049, 2049)])
@pytest.mark.parametrize("spec", [s for s in CATALOG if not s.is_reference and not s.persistent], ids=lambda s: s.id)
def test_grid_covers_the_output_exactly_once(spec, m, n) -> None:
    # (A persistent kernel's blocks loop over the tiles: tests/test_kernel_wgmma.py checks its grid.)
    gx, gy = spec.grid(m, n)
    rows, cols = (gx, gy) if spec.grid_order == "rows_x" else (gy, gx)
    assert rows * spec.tile_m >= m and (rows - 1) * spec.tile_m < m
    assert cols * spec.tile_n >= n and (cols - 1) * spec.tile_n < n
    assert rows == math.ceil(m / spec.tile_m)


def test_seed_indexing_puts_rows_on_grid_x() -> None:
    assert get_kernel("v1").grid(64, 32) == (2, 1)
    assert get_kernel("v1-coalesced").grid(64, 32) == (1, 2)
    assert get_kernel("v3").grid(300, 129) == (3, 2)


def test_ladder_kernels_accept_any_size() -> None:
    for kernel_id in ("v1", "v1-coalesced", "v2", "tiled-8", "tiled-16", "tiled-32", "v3", "v4", "v5"):
        assert get_kernel(kernel_id).size_problem(7, 1, 333) is None


def test_constrained_kernel_names_its_constraint() -> None:
    constrained = [s for s in CATALOG if s.multiple_of > 1]
    for spec in constrained:
        message = spec.size_problem(spec.multiple_of + 1, spec.multiple_of, spec.multiple_of)
        assert message and f"multiples of {spec.multiple_of}" in message
        assert spec.size_problem(spec.multiple_of, spec.multiple_of, spec.multiple_of) is None
