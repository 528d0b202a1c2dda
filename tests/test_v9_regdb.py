"""v9-regdb (register double buffering): its tuning configurations and a CPU emulation of the kernel's index
mapping and cp.async pipeline (kernels/emulate_v9.py) on awkward sizes. Compile checks (spills, registers,
shared memory, NVRTC) run with the other beyond-the-ladder kernels in test_kernel_sources_beyond.py."""

from __future__ import annotations

import numpy as np
import pytest

from kernels import emulate_v9, tuning
from kernels.registry import find_kernel, get_kernel
from kernels.spec import SRC_DIR
from profiling.identity import match_by_launch


def test_v9_configs_are_valid_instantiated_and_the_catalog_default_is_the_first() -> None:
    configs = tuning.V9_TUNING_CONFIGS
    assert 4 <= len(configs) <= 29 and len({c["entry"] for c in configs}) == len(configs)
    source = get_kernel("v9-regdb").read_source().replace(" ", "")
    for c in configs:
        p = c["params"]
        assert tuning.v9_problems(p) == [], c["id"]
        assert c["id"].startswith("v9-regdb-") and c["base"] == "v9-regdb"
        assert c["dynamic_smem_bytes"] == tuning.smem_bytes(p["BM"], p["BN"], p["BK"], p["STAGES"])
        assert c["entry"].replace(" ", "") + "(" in source, f"{c['entry']} is not instantiated in v9_regdb.cu"
        # Its N % 4 != 0 kernel: the same tile arguments and MIN_BLOCKS, then the FFMA order, given even when 0.
        order = p.get("ORDER", 0)
        tile = ",".join(str(p[k]) for k in ("BM", "BN", "BK", "WM", "WN", "TM", "TN", "STAGES", "THREADS"))
        if c["id"] == "v9-regdb-128x256x8-w64x64-t8x16-s3-o3":  # its twin would spill on sm_80
            assert c["narrow_entry"] is None and "sgemm_regdb_narrow<128,256,8,64,64,8,16,3,256,1,3>" not in source
            continue
        assert c["narrow_entry"] == f"sgemm_regdb_narrow<{tile},{p['MIN_BLOCKS']},{order}>", c["id"]
        assert c["narrow_entry"] + "(" in source, f"{c['narrow_entry']} is not instantiated in v9_regdb.cu"
    default, first = get_kernel("v9-regdb"), configs[0]
    assert default.narrow_entry == first["narrow_entry"] == "sgemm_regdb_narrow<128,256,16,64,64,8,16,3,256,1,0>"
    assert (default.entry, default.dynamic_smem_bytes, default.params) == (
        first["entry"],
        first["dynamic_smem_bytes"],
        first["params"],
    )
    assert (default.tile_m, default.tile_n, default.block) == (first["tile_m"], first["tile_n"], first["block"])


def test_v9_configs_resolve_to_v9_specs_and_v8_ones_stay_v8() -> None:
    for c in tuning.V9_TUNING_CONFIGS:
        spec = get_kernel(c["id"])
        assert (spec.id, spec.source, spec.entry, spec.previous) == (c["id"], "v9_regdb.cu", c["entry"], "v8-async")
        assert spec.grid(4096, 4096) == (4096 // spec.tile_n, 4096 // spec.tile_m)
    for c in tuning.TUNING_CONFIGS:
        assert get_kernel(c["id"]).source == "v8_async.cu"
    ids = {c["id"] for c in tuning.TUNING_CONFIGS}
    assert not ids & {c["id"] for c in tuning.V9_TUNING_CONFIGS}


def test_invalid_v9_parameters_are_explained() -> None:
    p = dict(tuning.V9_TUNING_CONFIGS[0]["params"])
    assert any("STAGES" in m for m in tuning.v9_problems(dict(p, STAGES=2)))
    assert any("MIN_BLOCKS" in m for m in tuning.v9_problems(dict(p, MIN_BLOCKS=9)))
    assert any("warp tiles" in m for m in tuning.v9_problems(dict(p, WM=48)))


@pytest.mark.parametrize("grid_m,grid_n", [(1, 1), (3, 5), (8, 2), (9, 7), (17, 3), (32, 16), (33, 33)])
def test_grouped_block_order_visits_every_block_once(grid_m: int, grid_n: int) -> None:
    origins = emulate_v9.block_origins(grid_m * 128, grid_n * 256, 128, 256)
    assert sorted(origins) == sorted((i * 128, j * 256) for i in range(grid_m) for j in range(grid_n))


@pytest.mark.parametrize("config", tuning.V9_TUNING_CONFIGS, ids=lambda c: c["id"])
@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (130, 67, 37), (257, 129, 17), (129, 4, 64)])
def test_emulated_kernel_computes_a_times_b_and_writes_each_output_once(config, m: int, n: int, k: int) -> None:
    emulate_v9.check(config["params"], m, n, k)


@pytest.mark.parametrize("config", tuning.V9_TUNING_CONFIGS, ids=lambda c: c["id"])
@pytest.mark.parametrize("m,n,k", [(130, 67, 37), (257, 129, 17), (1, 257, 33), (40, 6, 70)])
def test_emulated_narrow_kernel_computes_a_times_b_and_writes_each_output_once(config, m: int, n: int, k: int) -> None:
    """sgemm_regdb_narrow, the kernel launched where N % 4 != 0: B copied one column per thread."""
    emulate_v9.check(config["params"], m, n, k, narrow=True)


@pytest.mark.parametrize("config", tuning.V9_TUNING_CONFIGS, ids=lambda c: c["id"])
@pytest.mark.parametrize("spread", [2, 4, 8])
def test_copies_spread_over_the_next_slice_keep_the_pipeline_race_free(config, spread: int) -> None:
    """The measurement build V9_SPREAD_COPIES=P (kernels/src/v9_body.cuh): a slice's copies in P parts, part 0 after
    the barrier and the others at the next slice's first k steps, still give A @ B with every read after its slice
    landed and every copy after the last read of its stage, in both kernels."""
    if spread > config["params"]["BK"]:
        pytest.skip("one part per k step at most (the source's static_assert)")
    for m, n, k in [(130, 68, 37), (257, 129, 81)]:
        emulate_v9.check(config["params"], m, n, k, spread=spread)
        emulate_v9.check(config["params"], m, n, k, narrow=True, spread=spread)


def test_emulation_catches_a_spread_slice_committed_after_its_wait() -> None:
    p = tuning.config_by_id("v9-regdb-128x256x16-w64x64-t8x16-s3-o3")["params"]
    rng = np.random.default_rng(1)
    a, b = rng.integers(-2, 3, (40, 3 * p["BK"])).astype(float), rng.integers(-2, 3, (3 * p["BK"], 12)).astype(float)
    c, _ = emulate_v9.emulate(p, a, b, spread=4)
    assert np.array_equal(c, a @ b)
    with pytest.raises(emulate_v9.PipelineError, match="slice 2 read before it landed"):
        emulate_v9.emulate(p, a, b, spread=4, _commit_late=True)


def test_the_kernel_launched_depends_on_n_modulo_4() -> None:
    """Where B's rows are 16-byte aligned the catalog's kernel runs, elsewhere its narrow twin; a kernel without
    one (v8-async) runs at every N, and a narrow kernel's name in a report is still v9-regdb."""
    v9 = get_kernel("v9-regdb")
    assert v9.launched_at(128).entry == "sgemm_regdb<128,256,16,64,64,8,16,3,256,1>"
    assert v9.launched_at(127).entry == "sgemm_regdb_narrow<128,256,16,64,64,8,16,3,256,1,0>"
    assert v9.launched_at(130).entry == v9.narrow_entry and v9.launched_at(130).id == "v9-regdb"
    ordered = get_kernel("v9-regdb-128x256x16-w64x64-t8x16-s3-o3")
    assert ordered.launched_at(333).entry == "sgemm_regdb_narrow<128,256,16,64,64,8,16,3,256,1,3>"
    v8 = get_kernel("v8-async")
    assert v8.launched_at(127) is v8
    name = "void sgemm_regdb_narrow<128, 256, 16, 64, 64, 8, 16, 3, 256, 1, 3>(const float *, const float *, float *)"
    assert find_kernel(name).id == "v9-regdb"
    assert v9.functions == ("sgemm_regdb", "sgemm_regdb_narrow") and v8.functions == ("sgemm_async",)
    # A launch of ours without its NVTX range: the twin's name, block and grid say v9-regdb and M x N too.
    assert match_by_launch("sgemm_regdb_narrow", (256, 1, 1), (1, 8, 1)) == ("v9-regdb", 1024, 256)


def test_emulation_catches_a_missing_barrier(monkeypatch) -> None:
    """The race check is live: a pipeline whose k-loop barrier does not publish the next slice is refused."""
    config = tuning.V9_TUNING_CONFIGS[0]
    p = config["params"]
    rng = np.random.default_rng(1)
    a, b = rng.integers(-2, 3, (40, 3 * p["BK"])).astype(float), rng.integers(-2, 3, (3 * p["BK"], 12)).astype(float)
    c, writes = emulate_v9.emulate(p, a, b)
    assert np.array_equal(c, a @ b) and np.all(writes == 1)
    with pytest.raises(emulate_v9.PipelineError):
        emulate_v9.emulate(p, a, b, _skip_loop_barrier=True)


def test_the_narrow_kernels_that_copy_a_coalesced_are_the_kernels_own_rule() -> None:
    """v9_body.cuh's A_COALESCED and kernels.tuning.narrow_copies_a_coalesced are one rule: the narrow kernels of up
    to 64 accumulators a thread and at most 4 A rows a thread copy A a warp to 4 rows x 8 consecutive k; the tuned
    128x256 tile (128 accumulators, 255 registers) and the 5-stage 128x64x8 split tile (8 rows a thread) do not."""
    body = (SRC_DIR / "v9_body.cuh").read_text()
    assert "    constexpr bool A_COALESCED = NARROW && TM * TN <= 64 && A_ROW_COPIES <= 4;\n" in body
    ids = tuning.a_coalesced_ids()
    assert len(ids) == 25 and ids[:6] == [
        "v9-regdb-128x128x16-w64x32-t8x8-s3",
        "v9-regdb-128x128x8-w64x32-t8x8-s4",
        "v9-regdb-64x128x16-w32x64-t8x8-s3",
        "v9-regdb-64x64x8-w32x32-t8x4-s3",
        "v9-regdb-64x64x16-w32x32-t8x4-s3",
        "v9-regdb-64x64x16-w32x32-t8x4-s3-o1",
    ]
    assert ids[-3:] == [
        "v9-splitk-64x128x16-w32x64-t8x8-s4-o3-fill",
        "v9-splitk-64x128x16-w32x64-t8x8-s4-o3-fill-zf",
        "v9-splitk-64x128x16-w32x64-t8x8-s3-d8-zf-padc",
    ]
    # The 64x64 tile of 64 threads copies 8 A rows a thread.
    assert (
        "v9-splitk-64x64x16-w32x64-t8x8-s3-d32-ser" not in ids and "v9-splitk-64x64x16-w32x64-t8x8-s3-d32-zf" not in ids
    )
    assert "v9-splitk-64x64x16-w32x64-t8x8-s3-d8-zf-padc" not in ids
    assert "v9-regdb-128x256x16-w64x64-t8x16-s3-o3" not in ids
    assert not any(i.startswith("v9-splitk-128x64x8") for i in ids)
    assert tuning.narrow_copies_a_coalesced(dict(BM=64, BK=16, THREADS=128, TM=8, TN=4))
    assert not tuning.narrow_copies_a_coalesced(dict(BM=128, BK=8, THREADS=128, TM=8, TN=8))
