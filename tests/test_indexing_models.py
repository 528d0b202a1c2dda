"""The indexing models (kernels/indexing) against their kernels: every model transcribes statements and tile
constants that are still in its .cu file, and on awkward shapes the C elements its blocks and threads compute,
and the C elements its stores write, cover C exactly once; its loads read exactly the A and B elements each
block needs, and its shared-memory reads only read what its shared stores wrote (CPU only)."""

from __future__ import annotations

import numpy as np
import pytest

from kernels import tuning
from kernels.catalog import CATALOG
from kernels.indexing import MODELS, model_for
from kernels.indexing_ladder import NaiveModel
from profiling.analysis.access import predict_launch
from profiling.errors import InvalidInput
from profiling.shape import Shape

KERNELS = list(MODELS)
TUNING_IDS = [c["id"] for c in tuning.TUNING_CONFIGS + tuning.V9_TUNING_CONFIGS]
# 1, 17, 129, 1000 and K that no tile divides; the tensor-core kernels take multiples of 16 only.
FP32_SHAPES = [Shape(1, 1, 1), Shape(17, 129, 33), Shape(129, 17, 1000), Shape(1000, 1000, 17)]
HALF_SHAPES = [Shape(16, 16, 16), Shape(144, 272, 48), Shape(1008, 400, 80)]
SMALL_FP32 = [Shape(130, 67, 37)]  # a partial tile row, N odd (scalar paths), K no tile divides
SMALL_HALF = [Shape(144, 272, 48)]


def shapes_for(kernel_id: str, small: bool = False) -> list[Shape]:
    half = model_for(kernel_id).spec.dtype == "float16"
    if small:
        return SMALL_HALF if half else SMALL_FP32
    return HALF_SHAPES if half else FP32_SHAPES


def test_every_source_kernel_of_the_catalog_has_a_model_and_references_have_none() -> None:
    # TMA kernels have no per-lane loads to draw: the copy engine, not the threads, computes the addresses.
    # v8-splitk is not modelled yet: v8-async's lanes with K offset per split and reductions into C; nor is
    # v9-clusterk (v9's lanes with K offset per split, then the cluster's reduction in distributed shared memory).
    # sgemm-auto runs another kernel's configuration, chosen per shape: that kernel's model is the one to look at.
    assert set(MODELS) == {
        s.id
        for s in CATALOG
        if not s.is_reference
        and not s.uses_tensor_maps
        and not s.split_k
        and not s.cluster_split_k
        and not s.chooses_at_launch
    }
    with pytest.raises(InvalidInput, match="Tensor Memory Accelerator"):
        model_for("wgmma-tma")
    with pytest.raises(InvalidInput, match="no indexing model for 'cublas'"):
        model_for("cublas")
    for config_id in TUNING_IDS:
        assert model_for(config_id).spec.id == config_id


@pytest.mark.parametrize("kernel_id", KERNELS + TUNING_IDS)
def test_model_statements_and_constants_are_those_of_the_source(kernel_id: str) -> None:
    model = model_for(kernel_id)
    assert model.missing_statements() == [], f"{kernel_id}: the .cu no longer says this; update the model"
    assert len(model.source_statements) >= 5
    if not isinstance(model, NaiveModel):  # the naive kernels index with blockDim: no constants to tie
        assert model.constants() and model.constants() == model.source_constants()
    if "BM" in model.constants():
        assert (model.constants()["BM"], model.constants()["BN"]) == (model.spec.tile_m, model.spec.tile_n)


def test_a_changed_source_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    model = model_for("v1")
    swapped = model.spec.read_source().replace("blockIdx.x * blockDim.x + threadIdx.x", "blockIdx.x * blockDim.x")
    assert model.missing_statements(swapped) == ["const int x = blockIdx.x * blockDim.x + threadIdx.x;"]
    model = model_for("v3")
    bigger = model.spec.read_source().replace("#define BK 8", "#define BK 16")
    monkeypatch.setattr(type(model.spec), "read_source", lambda self: bigger)
    assert model.source_constants()["BK"] == 16 != model.constants()["BK"]


def _count_stores(model, shape: Shape) -> np.ndarray:
    count = np.zeros((shape.m, shape.n), dtype=np.int64)
    for block in model.blocks(shape):
        for warp in range(model.warps_per_block):
            for acc in model.epilogue_accesses(shape, block, warp):
                if acc.category != "global_st":
                    continue
                for e in range(acc.width // acc.elem):
                    rows, cols = acc.row[acc.active], acc.col[acc.active] + e
                    assert (rows < shape.m).all() and (cols < shape.n).all(), f"{acc.label} stores outside C"
                    np.add.at(count, (rows, cols), 1)
    return count


@pytest.mark.parametrize("kernel_id", KERNELS)
def test_blocks_and_threads_compute_and_store_every_element_of_c_once(kernel_id: str) -> None:
    model = model_for(kernel_id)
    for shape in shapes_for(kernel_id):
        computed = np.zeros((shape.m, shape.n), dtype=np.int64)
        for block in model.blocks(shape):
            row0, col0 = model.block_origin(shape, block)
            rows, cols = model.thread_elements(shape, block)
            assert rows.shape[0] == model.spec.threads_per_block
            assert ((rows >= row0) & (rows < row0 + model.spec.tile_m)).all(), "a thread computes outside its tile"
            assert ((cols >= col0) & (cols < col0 + model.spec.tile_n)).all()
            inside = (rows < shape.m) & (cols < shape.n)
            np.add.at(computed, (rows[inside], cols[inside]), 1)
        assert (computed == 1).all(), (
            f"{kernel_id} {shape.label}: C elements computed {computed.min()}..{computed.max()} times"
        )
        stored = _count_stores(model, shape)
        assert (stored == 1).all(), f"{kernel_id} {shape.label}: C elements stored {stored.min()}..{stored.max()} times"


@pytest.mark.parametrize("config_id", TUNING_IDS)
def test_tuning_configurations_store_every_element_of_c_once(config_id: str) -> None:
    model = model_for(config_id)
    shape = Shape(300, 264, 72)
    assert (_count_stores(model, shape) == 1).all()


def _elements(acc) -> list[tuple[int, int]]:
    n = acc.width // acc.elem
    return [
        (int(r), int(c) + e) for r, c in zip(acc.row[acc.active], acc.col[acc.active], strict=True) for e in range(n)
    ]


def _byte_labels(accesses: list, arrays: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """(shared bytes, what each holds) over the active lanes of `accesses`: the tile element (array, row,
    column) and the byte within it, packed into one integer."""
    bytes_, labels = [], []
    for acc in accesses:
        offsets = np.arange(acc.width)
        aid = arrays.setdefault(acc.array, len(arrays))
        col = acc.col[acc.active][:, None] + offsets[None, :] // acc.elem
        row = np.broadcast_to(acc.row[acc.active][:, None], col.shape)
        bytes_.append((acc.addr[acc.active][:, None] + offsets[None, :]).ravel())
        labels.append((((aid << 20) + row) << 20) + col << 4 | (offsets[None, :] % acc.elem))
    if not bytes_:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(bytes_), np.concatenate([lab.ravel() for lab in labels])


def _check_shared_flow(accesses: list, where: str) -> None:
    """Every shared byte read was written, and holds the tile element the reader takes it for."""
    arrays: dict[str, int] = {}
    w_bytes, w_labels = _byte_labels([a for a in accesses if a.category in ("shared_st", "ldgsts")], arrays)
    r_bytes, r_labels = _byte_labels([a for a in accesses if a.category == "shared_ld"], arrays)
    pairs = np.unique(np.stack([w_bytes, w_labels]), axis=1)
    assert len(np.unique(pairs[0])) == pairs.shape[1], f"{where}: a shared byte is written as two elements"
    if len(r_bytes) == 0:
        return
    at = np.searchsorted(pairs[0], r_bytes)
    found = (at < pairs.shape[1]) & (pairs[0][np.minimum(at, pairs.shape[1] - 1)] == r_bytes)
    assert found.all(), f"{where}: shared bytes read that nothing wrote, e.g. {r_bytes[~found][:4]}"
    assert (pairs[1][at] == r_labels).all(), f"{where}: a read takes a byte for another element than was written"


@pytest.mark.parametrize("kernel_id", KERNELS)
def test_each_block_loads_the_a_and_b_it_needs_and_reads_back_what_it_stored(kernel_id: str) -> None:
    model = model_for(kernel_id)
    once = not isinstance(model, NaiveModel)  # a naive thread reads its own row and column
    for shape in shapes_for(kernel_id, small=True):
        for block in model.blocks(shape):
            row0, col0 = model.block_origin(shape, block)
            loop = [
                acc
                for warp in range(model.warps_per_block)
                for step in range(model.steps(shape))
                for acc in model.step_accesses(shape, block, warp, step)
            ]
            loads = {
                name: [e for a in loop if a.category == "global_ld" and a.array == name for e in _elements(a)]
                for name in ("A", "B")
            }
            rows = range(row0, min(row0 + model.spec.tile_m, shape.m))
            cols = range(col0, min(col0 + model.spec.tile_n, shape.n))
            need = {
                "A": {(r, k) for r in rows for k in range(shape.k)},
                "B": {(k, c) for k in range(shape.k) for c in cols},
            }
            for name in ("A", "B"):
                assert set(loads[name]) == need[name], f"{kernel_id} {shape.label} block {block}: wrong {name} elements"
                if once:
                    assert len(loads[name]) == len(need[name]), f"{kernel_id}: an {name} element is loaded twice"
            where = f"{kernel_id} {shape.label} block {block}"
            _check_shared_flow(loop, where)
            epilogue = [a for w in range(model.warps_per_block) for a in model.epilogue_accesses(shape, block, w)]
            _check_shared_flow(epilogue, where + " epilogue")


@pytest.mark.parametrize("kernel_id", KERNELS)
def test_summing_one_block_and_step_per_class_equals_summing_them_all(kernel_id: str) -> None:
    model = model_for(kernel_id)
    for shape in shapes_for(kernel_id, small=True):
        fast, full = predict_launch(model, shape), predict_launch(model, shape, exhaustive=True)
        for cat, totals in full.totals.items():
            assert vars(fast.totals[cat]) == vars(totals), f"{kernel_id} {shape.label} {cat}"
