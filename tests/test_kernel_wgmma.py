"""The Hopper kernels (wgmma-tma, wgmma-pingpong, wgmma-tma-store and the persistent steps, FP16 and BF16) on the CPU: it builds for sm_90a with no spills and with the Hopper
instructions in its SASS, every other GPU and every size that is not a multiple of 16 is refused with a message
before anything is compiled or launched, and its tensor maps describe A and B as the kernel reads them."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from kernels.catalog import CATALOG
from kernels.compile_info import entry_matches, module_gmem_bytes, nvcc_resources
from kernels.registry import get_kernel
from profiling.analysis.sass import static_sass
from profiling.gpu.jobs import BenchSettings
from profiling.gpu.tensor_map import DATA_TYPES, TileMap, operand_maps, output_map
from profiling.paths import tool_path
from profiling.shape import Shape

SPEC = get_kernel("wgmma-tma")
PINGPONG = get_kernel("wgmma-pingpong")
STORE = get_kernel("wgmma-tma-store")
HOPPER = (
    "wgmma-tma",
    "wgmma-pingpong",
    "wgmma-tma-store",
    "wgmma-persistent",
    "wgmma-cluster",
    "wgmma-persistent-bf16",
    "wgmma-staged",
    "wgmma-streamk",
    "wgmma-streamk-bf16",
    "wgmma-streamk-cluster",
    "wgmma-streamk-cluster-bf16",
)
needs_nvcc = pytest.mark.skipif(tool_path("nvcc") is None, reason="nvcc is not installed (CUDA toolkit absent)")


def test_catalog_entry_follows_wmma_async_and_is_hopper_only() -> None:
    ids = [s.id for s in CATALOG]
    assert ids.index("wgmma-tma") == ids.index("wmma-async") + 1
    assert (SPEC.previous, SPEC.group, SPEC.operation, SPEC.arch) == (
        "wmma-async",
        "tensor-core",
        "hgemm_addmm",
        "sm_90a",
    )
    assert SPEC.threads_per_block == SPEC.params["THREADS"] == 128 * (SPEC.params["CONSUMERS"] + 1)
    assert all(s.arch is None for s in CATALOG if s.id not in HOPPER)
    assert ids.index("wgmma-pingpong") == ids.index("wgmma-tma") + 1 and PINGPONG.previous == "wgmma-tma"
    assert (PINGPONG.arch, PINGPONG.operand_args, PINGPONG.persistent, SPEC.persistent) == (
        "sm_90a",
        "tensor_maps",
        True,
        False,
    )


def test_a_persistent_kernel_gets_one_block_per_sm_or_per_tile() -> None:
    assert PINGPONG.grid(4096, 4096, 132) == (132, 1)  # 1024 tiles of 128 x 128
    assert PINGPONG.grid(4096, 4096, 114) == (114, 1)
    assert PINGPONG.grid(256, 384, 132) == (6, 1)  # fewer tiles than SMs: one block each
    assert PINGPONG.grid(16, 16, 132) == (1, 1)
    assert PINGPONG.grid(8192, 8192) == (132, 1)  # no device at hand: an H100 SXM's 132 SMs
    assert SPEC.grid(4096, 4096, 132) == (16, 32)  # the others ignore the SM count


@needs_nvcc
def test_builds_for_sm_90a_without_spills_within_the_register_and_smem_limits() -> None:
    resources, log = nvcc_resources(SPEC.source_path, "sm_90a")
    (r,) = [r for r in resources if entry_matches(r.name, SPEC.entry)]
    assert r.arch == "sm_90a" and r.spills == 0 and r.stack_bytes == 0, log
    # 384 threads, one block per SM: at most 65536 / 384 -> 168 registers at launch (setmaxnreg moves them after).
    assert r.registers <= 168
    assert r.shared_bytes + SPEC.dynamic_smem_bytes <= 227 * 1024
    # The source's own budget, stated in the catalog: 4 stages of 16 KB (A) + 32 KB (B), plus 1 KB for alignment.
    assert SPEC.dynamic_smem_bytes == SPEC.params["STAGES"] * (128 * 64 * 2 + 64 * 256 * 2) + 1024


@needs_nvcc
def test_its_sass_is_hopper_tensor_core_code() -> None:
    try:
        sass = static_sass(SPEC, arch="sm_90")  # an sm_90a kernel is always shown for its own target
    except Exception as exc:  # noqa: BLE001 - the disassembler wheels may be absent
        pytest.skip(f"no disassembler: {exc}")
    text = "\n".join(i.text for i in sass.function.instructions)
    assert sass.arch == "sm_90a"
    assert re.search(r"HGMMA\.64x256x16\.F32.*tnspB", text), "wgmma m64n256k16 with B transposed (N-major)"
    assert "UTMALDG.2D" in text and "SYNCS" in text, "TMA loads and mbarrier waits"
    assert "USETMAXREG" in text
    assert "LDSM" not in text and "HMMA.16816" not in text, "no ldmatrix or mma.sync left"


@pytest.mark.parametrize("cc", ["8.0", "8.6", "8.9", "10.0", "12.0"])
def test_any_gpu_other_than_compute_capability_9_0_is_refused(cc: str) -> None:
    message = SPEC.device_problem(cc)
    assert message and "sm_90a" in message and f"compute capability {cc}" in message
    assert SPEC.device_problem("9.0") is None
    assert PINGPONG.device_problem(cc) and PINGPONG.device_problem("9.0") is None
    assert STORE.device_problem(cc) and STORE.device_problem("9.0") is None
    for kernel_id in HOPPER[3:]:
        message = get_kernel(kernel_id).device_problem(cc)
        assert message and message.startswith(kernel_id) and get_kernel(kernel_id).device_problem("9.0") is None
    # Portable kernels run anywhere, but for those that need a minimum compute capability (v9-clusterk's clusters).
    assert all(s.device_problem(cc) is None for s in CATALOG if s.id not in HOPPER and s.min_cc is None)


def test_the_worker_refuses_it_on_another_gpu_before_compiling_or_launching() -> None:
    """run_task with a session whose device is an A100: the refusal comes back as a result, no CUDA call made
    (the fake session has no problems, flush buffer or NVML, so any GPU step would raise)."""
    from profiling.gpu.runner import run_task

    session = SimpleNamespace(device={"cc": "8.0", "name": "NVIDIA A100-SXM4-80GB"})
    for kernel_id in HOPPER:
        record = run_task(session, kernel_id, Shape(256, 256, 256), BenchSettings(), "verify")
        assert record["status"] == "refused" and "compute capability 8.0" in record["error"]


@pytest.mark.parametrize("m,n,k", [(17, 16, 16), (16, 1, 16), (4096, 4096, 4100), (1, 1, 1)])
def test_sizes_that_are_not_multiples_of_16_are_refused(m: int, n: int, k: int) -> None:
    message = SPEC.size_problem(m, n, k)
    assert message and "multiples of 16" in message
    assert SPEC.size_problem(16, 16, 16) is None and SPEC.size_problem(1008, 4096, 1008) is None


def test_tensor_maps_describe_a_and_b_as_the_kernel_reads_them() -> None:
    map_a, map_b = operand_maps(SPEC, 1008, 4096, 272)
    # A (M x K): 128 x 64 boxes, K contiguous; one box row is 128 bytes, the swizzle span.
    assert (map_a.global_dims, map_a.global_strides, map_a.box_dims) == ((272, 1008), (544,), (64, 128))
    # B (K x N): 64 x 64 boxes (a 256-wide tile is four), N contiguous.
    assert (map_b.global_dims, map_b.global_strides, map_b.box_dims) == ((4096, 272), (8192,), (64, 64))
    assert map_a.problem() is None and map_b.problem() is None
    assert "multiple of 16" in TileMap(16, 20, 64, 64).problem()
    assert "128-byte swizzle" in TileMap(16, 128, 64, 128).problem()


@needs_nvcc
def test_pingpong_builds_without_spills_and_fits_one_block_per_sm() -> None:
    resources, log = nvcc_resources(PINGPONG.source_path, "sm_90a")
    (r,) = [r for r in resources if entry_matches(r.name, PINGPONG.entry)]
    assert r.arch == "sm_90a" and r.spills == 0 and r.stack_bytes == 0, log
    assert r.registers <= 168
    assert r.shared_bytes + PINGPONG.dynamic_smem_bytes <= 227 * 1024
    # 6 stages of 16 KB (A, 128 x 64) + 16 KB (B, 64 x 128), plus 1 KB for alignment.
    assert PINGPONG.dynamic_smem_bytes == PINGPONG.params["STAGES"] * (128 * 64 * 2 + 64 * 128 * 2) + 1024


@needs_nvcc
def test_pingpong_sass_issues_eight_m64n128k16_per_slice_with_one_wait() -> None:
    try:
        sass = static_sass(PINGPONG, arch="sm_90")
    except Exception as exc:  # noqa: BLE001 - the disassembler wheels may be absent
        pytest.skip(f"no disassembler: {exc}")
    text = [i.text for i in sass.function.instructions]
    mmas = [t for t in text if re.search(r"HGMMA\.64x128x16\.F32.*tnspB", t)]
    assert len(mmas) == 8, "4 K steps x 2 row halves, unrolled once"
    # The 8 wgmmas of a slice issue back to back: no wait for an earlier one between them.
    first, last = text.index(mmas[0]), text.index(mmas[-1])
    assert not any("DEPBAR" in t for t in text[first:last])
    assert "UTMALDG.2D" in " ".join(text) and "USETMAXREG" in " ".join(text)


def test_pingpong_reads_a_and_b_through_the_same_maps_as_wgmma_tma() -> None:
    assert operand_maps(PINGPONG, 1008, 4096, 272) == operand_maps(SPEC, 1008, 4096, 272)


def test_tma_store_entry_is_wgmma_tma_with_c_and_d_as_tensor_maps() -> None:
    ids = [s.id for s in CATALOG]
    assert ids.index("wgmma-tma-store") == ids.index("wgmma-pingpong") + 1 and STORE.previous == "wgmma-tma"
    assert (STORE.operand_args, STORE.persistent, SPEC.operand_args) == ("tensor_maps_cd", False, "tensor_maps")
    assert STORE.uses_tensor_maps and SPEC.uses_tensor_maps and not get_kernel("wmma-async").uses_tensor_maps
    # Same block, tile, pipeline and shared memory as the baseline: only the epilogue differs.
    same = {key: STORE.params[key] for key in SPEC.params}
    assert same == SPEC.params and (STORE.block, STORE.dynamic_smem_bytes) == (SPEC.block, SPEC.dynamic_smem_bytes)
    # The output tile (128 x 256 floats) fits in the 3 stages the last slice leaves free, in whole 8 KB boxes.
    box_bytes = STORE.params["OUT_BOX_ROWS"] * STORE.params["OUT_BOX_COLS"] * 4
    stage_bytes = (STORE.dynamic_smem_bytes - 1024) // STORE.params["STAGES"]
    assert stage_bytes % box_bytes == 0
    assert 128 * 256 * 4 <= (STORE.params["STAGES"] - 1) * stage_bytes


def test_c_and_d_maps_are_float_boxes_one_swizzle_row_wide() -> None:
    cd = output_map(STORE, 1008, 4096)
    assert (cd.global_dims, cd.global_strides, cd.box_dims, cd.element_bytes) == ((4096, 1008), (16384,), (32, 64), 4)
    assert cd.problem() is None
    assert "128-byte swizzle" in TileMap(16, 64, 64, 64, dtype="float32").problem()
    assert "multiple of 16" in TileMap(16, 18, 64, 32, dtype="float32").problem()  # 72-byte rows


@needs_nvcc
def test_tma_store_builds_without_spills_within_the_baselines_budget() -> None:
    resources, log = nvcc_resources(STORE.source_path, "sm_90a")
    (r,) = [r for r in resources if entry_matches(r.name, STORE.entry)]
    assert r.arch == "sm_90a" and r.spills == 0 and r.stack_bytes == 0, log
    assert r.registers <= 168
    assert r.shared_bytes + STORE.dynamic_smem_bytes <= 227 * 1024


@needs_nvcc
def test_tma_store_sass_stores_d_by_tma_and_no_thread_touches_c_or_d_in_global_memory() -> None:
    try:
        sass = static_sass(STORE, arch="sm_90")
    except Exception as exc:  # noqa: BLE001 - the disassembler wheels may be absent
        pytest.skip(f"no disassembler: {exc}")
    text = "\n".join(i.text for i in sass.function.instructions)
    assert re.search(r"HGMMA\.64x256x16\.F32.*tnspB", text)
    assert "UTMALDG.2D" in text and "UTMASTG.2D" in text, "TMA loads (A, B, C) and the TMA store of D"
    assert "UTMACMDFLUSH" in text or "DEPBAR" in text, "the bulk group is committed and waited for"
    assert not re.search(r"\b(STG|LDG)\.", text), "no per-thread global loads or stores left"


PERSISTENT = get_kernel("wgmma-persistent")
CLUSTER = get_kernel("wgmma-cluster")


def test_persistent_steps_follow_wgmma_tma_store_one_idea_each() -> None:
    ids = [s.id for s in CATALOG]
    assert ids.index("wgmma-persistent") == ids.index("wgmma-tma-store") + 1
    assert ids.index("wgmma-cluster") == ids.index("wgmma-persistent") + 1
    assert (PERSISTENT.previous, CLUSTER.previous) == ("wgmma-tma-store", "wgmma-persistent")
    for spec in (PERSISTENT, CLUSTER):
        assert (spec.arch, spec.operand_args, spec.persistent, spec.operation) == (
            "sm_90a",
            "tensor_maps_cd",
            True,
            "hgemm_addmm",
        )
        # The block, tile and slices of wgmma-tma-store: what changes is the schedule (and the cluster).
        assert (spec.block, spec.tile_m, spec.tile_n) == (STORE.block, STORE.tile_m, STORE.tile_n)
        assert {k: spec.params[k] for k in ("BM", "BN", "BK", "STAGES", "CONSUMERS")} == {
            k: STORE.params[k] for k in ("BM", "BN", "BK", "STAGES", "CONSUMERS")
        }
    assert (PERSISTENT.cluster, CLUSTER.cluster, STORE.cluster) == (1, 2, 1)


def test_a_clustered_persistent_grid_is_whole_clusters_of_vertically_adjacent_tiles() -> None:
    assert PERSISTENT.grid(4096, 4096, 132) == (132, 1)  # 512 tiles of 128 x 256
    assert PERSISTENT.grid(128, 512, 132) == (2, 1)
    assert CLUSTER.grid(4096, 4096, 132) == (132, 1)  # 256 units of two tiles: 66 clusters
    assert CLUSTER.grid(4096, 4096, 133) == (132, 1)  # never half a cluster
    assert CLUSTER.grid(16, 16, 132) == (2, 1)  # one tile: its cluster's second block is wholly outside
    assert CLUSTER.grid(384, 256, 132) == (4, 1)  # 3 tile rows: 2 units
    assert CLUSTER.grid(8192, 8192) == (132, 1)


def test_persistent_kernels_read_c_and_d_in_the_boxes_of_wgmma_tma_store() -> None:
    for spec in (PERSISTENT, CLUSTER):
        assert operand_maps(spec, 1008, 4096, 272) == operand_maps(STORE, 1008, 4096, 272)
        assert output_map(spec, 1008, 4096) == output_map(STORE, 1008, 4096)
        # The C tile (16 boxes of 8 KB) goes through three of the four 48 KB stages, six boxes each.
        stage_bytes = (spec.dynamic_smem_bytes - 1024) // spec.params["STAGES"]
        assert stage_bytes == 48 * 1024 and 128 * 256 * 4 <= 3 * stage_bytes


def test_a_narrower_slice_names_its_swizzle_and_the_driver_limits_hold() -> None:
    narrow = TileMap(4096, 4096, 128, 32, swizzle_bytes=64)  # 32-deep slices of A: 64-byte rows
    assert narrow.problem() is None
    assert "64-byte swizzle" in TileMap(4096, 4096, 128, 64, swizzle_bytes=64).problem()
    assert "no 48-byte swizzle" in TileMap(4096, 4096, 128, 16, swizzle_bytes=48).problem()
    # Unswizzled (scripts/sgemm_tma_probe.py's B): a box row may be 256 floats, 1 KB, past every swizzle span.
    assert TileMap(4096, 4096, 16, 256, dtype="float32", swizzle_bytes=0).problem() is None
    assert "exceeds the 128-byte swizzle span" in TileMap(4096, 4096, 16, 256, dtype="float32").problem()
    assert "outside TMA's limits" in TileMap(4096, 4096, 16, 512, dtype="float32", swizzle_bytes=0).problem()


@needs_nvcc
@pytest.mark.parametrize(
    "kernel_id",
    [
        "wgmma-persistent",
        "wgmma-cluster",
        "wgmma-persistent-bf16",
        "wgmma-staged",
        "wgmma-streamk",
        "wgmma-streamk-bf16",
        "wgmma-streamk-cluster",
        "wgmma-streamk-cluster-bf16",
    ],
)
def test_persistent_kernels_build_without_spills_for_one_block_per_sm(kernel_id: str) -> None:
    spec = get_kernel(kernel_id)
    resources, log = nvcc_resources(spec.source_path, "sm_90a")
    (r,) = [r for r in resources if entry_matches(r.name, spec.entry)]
    assert r.arch == "sm_90a" and r.spills == 0 and r.stack_bytes == 0, log
    assert r.registers <= 168
    assert r.shared_bytes + spec.dynamic_smem_bytes <= 227 * 1024
    # The module's own arrays, which the memory check counts (jobs.device_bytes_needed), are what ptxas allots.
    assert module_gmem_bytes(log) == spec.module_global_bytes
    assert spec.module_global_bytes == (20_972_800 if "streamk" in kernel_id else 0)


@needs_nvcc
def test_cluster_sass_multicasts_b_and_arrives_on_the_other_blocks_barriers_without_a_gpu_fence() -> None:
    try:
        sass = static_sass(CLUSTER, arch="sm_90")
    except Exception as exc:  # noqa: BLE001 - the disassembler wheels may be absent
        pytest.skip(f"no disassembler: {exc}")
    text = [i.text for i in sass.function.instructions]
    joined = "\n".join(text)
    assert len([t for t in text if re.search(r"HGMMA\.64x256x16\.F32.*tnspB", t)]) == 4
    assert "UTMALDG.2D.MULTICAST" in joined and "UTMASTG.2D" in joined
    assert "SYNCS.ARRIVE.TRANS64.RED" in joined, "arrivals on the other block's barriers (distributed shared memory)"
    # Only the two cluster barriers (start and end) may fence: none in the K loop.
    assert sum("MEMBAR.ALL.GPU" in t for t in text) <= 2
    assert not re.search(r"\b(STG|LDG)\.", joined), "no per-thread global loads or stores"


BF16 = get_kernel("wgmma-persistent-bf16")


def test_the_bf16_step_is_wgmma_persistent_with_bfloat16_inputs_and_nothing_else() -> None:
    ids = [s.id for s in CATALOG]
    assert ids.index("wgmma-persistent-bf16") > ids.index("wgmma-cluster")
    assert (BF16.previous, BF16.operation, BF16.dtype) == ("wgmma-persistent", "bgemm_addmm", "bfloat16")
    assert "bfloat16" in BF16.adds and "BFLOAT16" in BF16.adds
    differing = {k for k, v in BF16.to_dict().items() if PERSISTENT.to_dict()[k] != v}
    assert differing == {"id", "title", "adds", "operation", "source", "entry", "dtype", "design_doc", "previous"}
    # One body for both types: the BF16 source instantiates the persistent template with bfloat16 inputs.
    source = BF16.read_source()
    assert "persistent_addmm<1, hopper::Input::bf16>" in source and 'm64n256k16.f32." TYPE' in source


def test_bf16_tensor_maps_are_the_fp16_boxes_typed_bfloat16() -> None:
    fp16_a, fp16_b = operand_maps(PERSISTENT, 1008, 4096, 272)
    bf16_a, bf16_b = operand_maps(BF16, 1008, 4096, 272)
    assert (fp16_a.dtype, bf16_a.dtype, bf16_b.dtype) == ("float16", "bfloat16", "bfloat16")
    for fp16, bf16 in ((fp16_a, bf16_a), (fp16_b, bf16_b)):
        assert (bf16.global_dims, bf16.global_strides, bf16.box_dims, bf16.swizzle_bytes, bf16.element_bytes) == (
            fp16.global_dims,
            fp16.global_strides,
            fp16.box_dims,
            fp16.swizzle_bytes,
            fp16.element_bytes,
        )
        assert bf16.problem() is None
    assert output_map(BF16, 1008, 4096) == output_map(PERSISTENT, 1008, 4096)
    assert (DATA_TYPES["float16"], DATA_TYPES["bfloat16"], DATA_TYPES["float32"]) == (6, 9, 7)  # cuda.h
    assert "no TMA data type for int8" in TileMap(64, 64, 64, 64, dtype="int8").problem()


@needs_nvcc
def test_bf16_builds_with_the_fp16_kernels_registers_and_no_spills() -> None:
    (fp16,) = [
        r for r in nvcc_resources(PERSISTENT.source_path, "sm_90a")[0] if entry_matches(r.name, PERSISTENT.entry)
    ]
    resources, log = nvcc_resources(BF16.source_path, "sm_90a")
    (bf16,) = [r for r in resources if entry_matches(r.name, BF16.entry)]
    assert bf16.spills == 0 and bf16.stack_bytes == 0, log
    assert (bf16.registers, bf16.shared_bytes, bf16.barriers) == (fp16.registers, fp16.shared_bytes, fp16.barriers)


@needs_nvcc
@pytest.mark.parametrize(
    "bf16_id,fp16_id",
    [
        ("wgmma-persistent-bf16", "wgmma-persistent"),
        ("wgmma-streamk-bf16", "wgmma-streamk"),
        ("wgmma-streamk-cluster-bf16", "wgmma-streamk-cluster"),
    ],
)
def test_bf16_machine_code_is_the_fp16_kernels_with_bf16_multiplies(bf16_id: str, fp16_id: str) -> None:
    """Instruction for instruction the FP16 kernel's SASS, registers included; only the four HGMMA of a K slice
    (m64n256k16, B transposed) read bfloat16."""
    try:
        bf16, fp16 = (static_sass(get_kernel(i), arch="sm_90").function.instructions for i in (bf16_id, fp16_id))
    except Exception as exc:  # noqa: BLE001 - the disassembler wheels may be absent
        pytest.skip(f"no disassembler: {exc}")
    differ = [(b.text, f.text) for b, f in zip(bf16, fp16, strict=True) if b.text != f.text]
    assert len(differ) == 4
    for b, f in differ:
        assert re.match(r"HGMMA\.64x256x16\.F32\.BF16 .*tnspB", b) and b.replace(".F32.BF16", ".F32") == f


STAGED = get_kernel("wgmma-staged")


def test_the_staged_step_is_wgmma_persistent_with_its_own_epilogue_and_32_kb_of_staging() -> None:
    ids = [s.id for s in CATALOG]
    assert ids.index("wgmma-staged") > ids.index("wgmma-persistent-bf16")
    assert (STAGED.previous, STAGED.operation, STAGED.dtype, STAGED.arch) == (
        "wgmma-persistent",
        "hgemm_addmm",
        "float16",
        "sm_90a",
    )
    differing = {k for k, v in STAGED.to_dict().items() if PERSISTENT.to_dict()[k] != v}
    assert differing == {"id", "title", "adds", "source", "entry", "design_doc", "previous", "dynamic_smem_bytes"}
    # The ring (4 slots of 48 KB) and two 8 KB boxes of 64 x 32 floats for each of the two consumers.
    assert STAGED.dynamic_smem_bytes - PERSISTENT.dynamic_smem_bytes == 2 * 2 * 64 * 32 * 4 == 32768
    source = STAGED.read_source()
    assert "#define PERSISTENT_EPILOGUE 4" in source and "persistent_addmm<1>(" in source


@needs_nvcc
def test_staged_sass_stores_d_from_staging_boxes_one_at_a_time() -> None:
    try:
        sass = static_sass(STAGED, arch="sm_90")
    except Exception as exc:  # noqa: BLE001 - the disassembler wheels may be absent
        pytest.skip(f"no disassembler: {exc}")
    text = [i.text for i in sass.function.instructions]
    joined = "\n".join(text)
    assert len([t for t in text if re.search(r"HGMMA\.64x256x16\.F32", t)]) == 4
    # One TMA store per box of a consumer (8), each after the wait that frees its staging box.
    assert sum("UTMASTG.2D" in t for t in text) == 8
    assert not re.search(r"\b(STG|LDG)\.", joined), "no per-thread global loads or stores"


STREAMK = get_kernel("wgmma-streamk")


def test_the_streamk_step_is_wgmma_staged_with_its_own_schedule() -> None:
    ids = [s.id for s in CATALOG]
    assert ids.index("wgmma-streamk") == ids.index("wgmma-staged") + 1
    assert (STREAMK.previous, STREAMK.operation, STREAMK.dtype, STREAMK.arch) == (
        "wgmma-staged",
        "hgemm_addmm",
        "float16",
        "sm_90a",
    )
    differing = {k for k, v in STREAMK.to_dict().items() if STAGED.to_dict()[k] != v}
    assert differing == {"id", "title", "adds", "source", "entry", "design_doc", "previous", "module_global_bytes"}
    source = STREAMK.read_source()
    assert "#define PERSISTENT_EPILOGUE 4" in source and "#define PERSISTENT_STREAMK 1" in source
    # One block per SM, as the tail's flags need every block resident: 2048 tiles at 8192^3 on 132 SMs.
    assert STREAMK.grid(8192, 8192, 132) == (132, 1) and STREAMK.grid(128, 256, 132) == (1, 1)


@needs_nvcc
def test_streamk_sass_hands_partial_sums_over_through_global_memory_with_release_and_acquire() -> None:
    try:
        sass = static_sass(STREAMK, arch="sm_90")
    except Exception as exc:  # noqa: BLE001 - the disassembler wheels may be absent
        pytest.skip(f"no disassembler: {exc}")
    text = [i.text for i in sass.function.instructions]
    assert len([t for t in text if re.search(r"HGMMA\.64x256x16\.F32", t)]) == 4
    assert sum("UTMASTG.2D" in t for t in text) == 8
    # 32 float4 of sums stored per thread for a contribution and 32 loaded per contribution added (L2, not L1).
    assert sum(re.match(r"STG\.E\.(EF\.)?(STRONG\.GPU\.)?128", t) is not None for t in text) == 32, text
    assert sum(re.match(r"LDG\.E\.128\.STRONG\.GPU", t) is not None for t in text) == 32
    # The flag: raised after a GPU-scope fence, read with acquire semantics in a loop.
    assert any(t.startswith("MEMBAR") and "GPU" in t for t in text)


def test_the_streamk_bf16_step_is_wgmma_streamk_with_bfloat16_inputs_and_nothing_else() -> None:
    spec = get_kernel("wgmma-streamk-bf16")
    ids = [s.id for s in CATALOG]
    assert ids.index("wgmma-streamk-bf16") == ids.index("wgmma-streamk") + 1
    assert (spec.previous, spec.operation, spec.dtype) == ("wgmma-streamk", "bgemm_addmm", "bfloat16")
    differing = {k for k, v in spec.to_dict().items() if STREAMK.to_dict()[k] != v}
    assert differing == {"id", "title", "adds", "operation", "source", "entry", "dtype", "design_doc", "previous"}
    source = spec.read_source()
    assert "#define PERSISTENT_STREAMK 1" in source and "persistent_addmm<1, hopper::Input::bf16>(" in source


STREAMK_CLUSTER = get_kernel("wgmma-streamk-cluster")


def test_the_streamk_cluster_step_is_wgmma_streamk_in_two_block_clusters() -> None:
    ids = [s.id for s in CATALOG]
    assert ids.index("wgmma-streamk-cluster") == ids.index("wgmma-streamk-bf16") + 1
    assert (STREAMK_CLUSTER.previous, STREAMK_CLUSTER.operation, STREAMK_CLUSTER.dtype, STREAMK_CLUSTER.cluster) == (
        "wgmma-streamk",
        "hgemm_addmm",
        "float16",
        2,
    )
    differing = {k for k, v in STREAMK_CLUSTER.to_dict().items() if STREAMK.to_dict()[k] != v}
    assert differing == {"id", "title", "adds", "source", "entry", "design_doc", "previous", "cluster"}
    source = STREAMK_CLUSTER.read_source()
    assert "#define PERSISTENT_STREAMK 1" in source and "__cluster_dims__(2, 1, 1)" in source
    assert "persistent_addmm<2>(" in source
    # 1024 units of two tiles at 8192^3: 66 clusters on 132 SMs; one unit of two tiles at 256 x 256.
    assert STREAMK_CLUSTER.grid(8192, 8192, 132) == (132, 1) and STREAMK_CLUSTER.grid(256, 256, 132) == (2, 1)
    assert STREAMK_CLUSTER.grid(128, 256, 132) == (2, 1)  # the second block of the pair has no rows: it idles


@needs_nvcc
def test_streamk_cluster_sass_multicasts_b_and_hands_partial_sums_over() -> None:
    try:
        sass = static_sass(STREAMK_CLUSTER, arch="sm_90")
    except Exception as exc:  # noqa: BLE001 - the disassembler wheels may be absent
        pytest.skip(f"no disassembler: {exc}")
    text = [i.text for i in sass.function.instructions]
    joined = "\n".join(text)
    assert len([t for t in text if re.search(r"HGMMA\.64x256x16\.F32", t)]) == 4
    assert "UTMALDG.2D.MULTICAST" in joined and "SYNCS.ARRIVE.TRANS64.RED" in joined
    assert sum(re.match(r"STG\.E\.(EF\.)?(STRONG\.GPU\.)?128", t) is not None for t in text) == 32, text
    assert sum(re.match(r"LDG\.E\.128\.STRONG\.GPU", t) is not None for t in text) == 32
    # The producer runs in 64 registers, the consumers in 216 (setmaxnreg).
    assert re.search(r"USETMAXREG\.DEALLOC\.CTAPOOL 0x40\b", joined) and re.search(r"USETMAXREG.*0xd8\b", joined)


def test_the_streamk_cluster_bf16_step_is_wgmma_streamk_cluster_with_bfloat16_inputs_and_nothing_else() -> None:
    spec = get_kernel("wgmma-streamk-cluster-bf16")
    ids = [s.id for s in CATALOG]
    assert ids.index("wgmma-streamk-cluster-bf16") == ids.index("wgmma-streamk-cluster") + 1
    assert (spec.previous, spec.operation, spec.dtype, spec.cluster) == (
        "wgmma-streamk-cluster",
        "bgemm_addmm",
        "bfloat16",
        2,
    )
    differing = {k for k, v in spec.to_dict().items() if STREAMK_CLUSTER.to_dict()[k] != v}
    assert differing == {"id", "title", "adds", "operation", "source", "entry", "dtype", "design_doc", "previous"}
    source = spec.read_source()
    assert "#define PERSISTENT_SK_PRODUCER_REGS 64" in source and "__cluster_dims__(2, 1, 1)" in source
    assert "persistent_addmm<2, hopper::Input::bf16>(" in source
