"""v9-clusterk (v9's K split over the blocks of one thread-block cluster, reduced in distributed shared memory): its
catalog entry and tuning configurations, the one launch it is (grid z = its cluster size, nothing zeroed first, one
kernel profiled), its refusal before compute capability 9.0, its source's reduction, the registers and shared memory
ptxas gives each configuration, that v9-regdb's and v9-splitk's machine code is unchanged by the mode, and how
sgemm-auto weighs it (CPU; the GPU tests are tests/gpu/test_gpu_v9_clusterk.py)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from kernels import auto, tuning
from kernels.catalog import CATALOG
from kernels.compile_info import entry_matches, nvcc_resources
from kernels.registry import find_kernel, get_kernel
from kernels.spec import SRC_DIR
from profiling.gpu.compile import CompiledKernel
from profiling.gpu.jobs import BenchSettings
from profiling.gpu.runner import Problem, launch_facts, run_task
from profiling.nsight.runner import kernel_name_regex
from profiling.paths import tool_path
from profiling.shape import Shape

CONFIGS = tuning.V9_CLUSTERK_TUNING_CONFIGS
DEFAULT = get_kernel("v9-clusterk")
ROOT = Path(__file__).resolve().parent.parent
needs_nvcc = pytest.mark.skipif(tool_path("nvcc") is None, reason="nvcc is not installed (CUDA toolkit absent)")


def test_catalog_entry_is_the_first_configuration_and_a_one_launch_step_after_v9_splitk() -> None:
    first = CONFIGS[0]
    assert (DEFAULT.source, DEFAULT.entry, DEFAULT.previous, DEFAULT.group) == (
        "v9_clusterk.cu",
        first["entry"],
        "v9-splitk",
        "beyond",
    )
    assert (DEFAULT.params, DEFAULT.dynamic_smem_bytes) == (first["params"], first["dynamic_smem_bytes"])
    assert (DEFAULT.tile_m, DEFAULT.tile_n, DEFAULT.block) == (first["tile_m"], first["tile_n"], first["block"])
    assert (DEFAULT.split_k, DEFAULT.cluster_split_k, DEFAULT.min_cc) == (False, True, "9.0")
    assert [s.id for s in CATALOG if s.cluster_split_k] == ["v9-clusterk"]
    assert first["id"] == "v9-clusterk-64x128x16-w32x64-t8x8-s3-c4"


def test_configurations_are_valid_instantiated_and_resolve_to_v9_clusterk() -> None:
    source = DEFAULT.read_source().replace(" ", "")
    assert [c["id"] for c in CONFIGS] == [
        "v9-clusterk-64x128x16-w32x64-t8x8-s3-c4",
        "v9-clusterk-64x128x16-w32x64-t8x8-s3-c8",
        "v9-clusterk-64x64x16-w32x64-t8x8-s3-c8",
        "v9-clusterk-128x128x16-w64x32-t8x8-s3-c2",
        "v9-clusterk-128x128x16-w64x32-t8x8-s3-c4",
        "v9-clusterk-128x256x16-w64x64-t8x16-s3-c2-o3",
        "v9-clusterk-128x128x8-w64x64-t8x16-s3-c4",
        "v9-clusterk-128x128x8-w64x64-t8x16-s3-c8",
    ]
    for c in CONFIGS:
        p = c["params"]
        assert tuning.v9_clusterk_problems(p) == [], c["id"]
        assert c["base"] == "v9-clusterk" and c["entry"].startswith("sgemm_regdb_clusterk<")
        assert c["entry"].replace(" ", "") + "(" in source, f"{c['entry']} is not instantiated in v9_clusterk.cu"
        # The partial tile, rows padded by 4 floats, reuses the pipeline's stages: the larger of the two.
        tile = p["BM"] * (p["BN"] + 4) * 4
        assert c["dynamic_smem_bytes"] == max(tuning.smem_bytes(p["BM"], p["BN"], p["BK"], p["STAGES"]), tile)
        spec = get_kernel(c["id"])
        assert (spec.source, spec.cluster_split_k, spec.split_k, spec.previous) == (
            "v9_clusterk.cu",
            True,
            False,
            "v9-splitk",
        )
        assert find_kernel(c["id"]).id == c["id"]
    assert "v9-clusterk" in tuning.tunable_bases() and "v9-clusterk" not in auto.AUTO_BASES
    assert [c["dynamic_smem_bytes"] for c in CONFIGS] == [37632, 37632, 25344, 67584, 67584, 133120, 67584, 67584]


def test_invalid_cluster_parameters_are_explained() -> None:
    p = dict(CONFIGS[0]["params"], SPLITS=16)
    assert any("SPLITS" in msg for msg in tuning.v9_clusterk_problems(p))
    p = dict(CONFIGS[5]["params"], MIN_BLOCKS=2)  # two 133 KB partial tiles do not fit one SM
    assert any("shared memory" in msg for msg in tuning.v9_clusterk_problems(p))
    with pytest.raises(ValueError, match="SPLITS"):
        tuning._v9_clusterk_config(64, 128, 16, 32, 64, 8, 8, 3, 128, 3, splits=3)


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: c["id"])
@pytest.mark.parametrize("shape", [(1, 1, 1), (17, 17, 17), (127, 127, 8191), (1024, 127, 4096), (4096, 4096, 333)])
def test_grid_z_is_the_cluster_size_at_every_shape(config, shape) -> None:
    spec = get_kernel(config["id"])
    splits = config["params"]["SPLITS"]
    assert spec.launch_grid(*shape, sm_count=132) == (*spec.grid(shape[0], shape[1]), splits)
    assert spec.split_count(*shape) == splits == tuning.config_split_count(config, *shape)


def test_it_is_refused_before_compute_capability_9_0_with_what_it_needs() -> None:
    for cc in ("7.5", "8.0", "8.6", "8.9"):
        assert DEFAULT.device_problem(cc) == (
            f"v9-clusterk needs compute capability 9.0 or newer (thread-block clusters and distributed shared "
            f"memory); this GPU is compute capability {cc}: pick another kernel"
        )
    assert all(DEFAULT.device_problem(cc) is None for cc in ("9.0", "10.0", "12.0"))
    assert get_kernel(CONFIGS[3]["id"]).device_problem("8.0").startswith(CONFIGS[3]["id"])


def test_the_worker_refuses_it_on_an_a100_before_compiling_or_launching() -> None:
    """The fake session has no problems, flush buffer or NVML: any GPU step would raise."""
    session = SimpleNamespace(device={"cc": "8.0", "name": "NVIDIA A100-SXM4-80GB"})
    for kernel_id in ("v9-clusterk", CONFIGS[2]["id"]):
        record = run_task(session, kernel_id, Shape(300, 264, 2000), BenchSettings(), "verify")
        assert record["status"] == "refused" and "compute capability 8.0" in record["error"], record


def test_profiled_and_explained_as_one_launch() -> None:
    # ncu's kernel filter names its function alone (a split-K kernel's also names the zeroing launch).
    assert kernel_name_regex(["v9-clusterk"]) == "regex:^(sgemm_regdb_clusterk)$"
    name = "void sgemm_regdb_clusterk<64, 128, 16, 32, 64, 8, 8, 3, 128, 3, 4, 0>(const float *, const float *)"
    assert find_kernel(name).id == "v9-clusterk"
    facts = launch_facts(DEFAULT, Shape(1024, 127, 4096), 132)
    assert facts == {
        "grid": [1, 16, 4],
        "block": [128, 1],
        "dynamic_smem_bytes": 37632,
        "split_k": 4,
        "cluster": [1, 1, 4],
    }  # no "launches": nothing runs before it


class _Recorder:
    def __init__(self, calls: list) -> None:
        self.calls = calls

    def __call__(self, grid, block, args, shared_mem=0) -> None:
        self.calls.append((grid, block, args, shared_mem))


def test_the_launcher_runs_one_kernel_with_z_splits_and_zeroes_nothing() -> None:
    calls: list = []
    a, b = np.ones((127, 8191), np.float32), np.ones((8191, 127), np.float32)
    problem = Problem.from_arrays(np, "sgemm", Shape(127, 127, 8191), a, b)
    spec = get_kernel(CONFIGS[2]["id"])
    problem.launcher(CompiledKernel(spec, _Recorder(calls), {}), spec, 132)()
    ((grid, block, args, smem),) = calls
    assert (grid, block, smem) == ((2, 2, 8), (64, 1), 25344)
    assert args[2] is problem.out and [int(v) for v in args[3:]] == [127, 127, 8191]


def _body_cluster_part() -> str:
    body = (SRC_DIR / "v9_body.cuh").read_text()
    return body[body.index("if constexpr (CLUSTER_SPLITS > 0) {\n        // The same ranges") :][:800]


def test_the_source_reduces_in_the_cluster_in_rank_order_with_plain_stores() -> None:
    text = DEFAULT.source_path.read_text()
    assert "__cluster_dims__(1, 1, S)" in text and "V9_CLUSTER_K_DIMS(SPLITS)" in text
    assert "atomicAdd" not in text and "red.global" not in text and "splitk_zero" not in text
    body = (SRC_DIR / "v9_body.cuh").read_text()
    assert "mapa.shared::cluster.u32" in body and "ld.shared::cluster.v4.f32" in body
    assert body.count("v9::cluster_sync();") == 2  # partial tiles complete; nobody leaves while others read
    assert "for (int s = 1; s < CLUSTER_SPLITS; ++s)" in body  # rank order, the same every run
    # A block whose K range is empty stays: it adds zeros and joins both barriers (no early return).
    part = _body_cluster_part()
    assert "return" not in part.split("    }\n", 1)[0] and "split_tiles == 0" in part


def test_never_predicted_without_its_own_measurement_and_auto_never_runs_it(monkeypatch) -> None:
    path = tuning.tuned_record_path("x").parent / "nvidia-h100-80gb-hbm3.json"
    measured = [e for e in json.loads(path.read_text())["measured"] if e["base"] != "v9-clusterk"]
    shapes = [(1024, 127, 4096), (4096, 127, 4096), (333, 333, 4096), (4096, 333, 8191), (4096, 4096, 4096)]
    for config in CONFIGS:
        for shape in shapes:
            assert tuning.predicted_tflops(measured, config, *shape, 132) is None, (config["id"], shape)
    monkeypatch.setattr(auto, "record_measurements", lambda device: ("h100.json", measured))
    before = {s: auto.auto_choice("NVIDIA H100 80GB HBM3", *s, sm_count=132) for s in shapes}
    assert not any(c.config_id.startswith("v9-clusterk") for c in before.values())

    fast = dict(base="v9-clusterk", m=1024, n=127, k=4096, config=CONFIGS[1]["id"], tflops=1000.0)
    monkeypatch.setattr(auto, "record_measurements", lambda device: ("h100.json", [*measured, fast]))
    here = auto.auto_choice("NVIDIA H100 80GB HBM3", 1024, 127, 4096, sm_count=132)
    assert here.config_id == before[(1024, 127, 4096)].config_id


def test_its_reduction_costs_each_split_a_fixed_depth_not_one_per_other_split() -> None:
    assert tuning.split_reduction_fill(8, 64, "v9-clusterk") == pytest.approx(64 / (64 + tuning.CLUSTER_REDUCTION_K))
    assert tuning.split_reduction_fill(8, 64, "v9-splitk") == pytest.approx(64 / (64 + 4.0 * 7))
    assert tuning.split_reduction_fill(1, 64, "v9-splitk") == 1.0
    # 1024x127x4096 on 64x128 tiles, 4 splits: 16 tiles x 4 = 64 blocks for 396 resident (3 per SM on 132 SMs).
    eff = tuning.shape_efficiency(CONFIGS[0], 1024, 127, 4096, 132)
    assert 0 < eff < tuning.shape_efficiency(CONFIGS[1], 1024, 127, 4096, 132)  # 8 splits fill more SMs


# ptxas's report for sm_90 (nvcc 13.0): registers per configuration, no spills, no stack.
REGISTERS_SM_90 = {
    "v9-clusterk-64x128x16-w32x64-t8x8-s3-c4": 168,
    "v9-clusterk-64x128x16-w32x64-t8x8-s3-c8": 168,
    "v9-clusterk-64x64x16-w32x64-t8x8-s3-c8": 168,
    "v9-clusterk-128x128x16-w64x32-t8x8-s3-c2": 128,
    "v9-clusterk-128x128x16-w64x32-t8x8-s3-c4": 128,
    "v9-clusterk-128x256x16-w64x64-t8x16-s3-c2-o3": 253,
    "v9-clusterk-128x128x8-w64x64-t8x16-s3-c4": 252,
    "v9-clusterk-128x128x8-w64x64-t8x16-s3-c8": 254,
}


@pytest.fixture(scope="module")
def sm_90_resources() -> list:
    if tool_path("nvcc") is None:
        pytest.skip("nvcc is not installed (CUDA toolkit absent)")
    resources, log = nvcc_resources(DEFAULT.source_path, "sm_90")
    assert resources, log
    return resources


def test_every_configuration_builds_for_sm_90_without_spills_at_its_pinned_registers(sm_90_resources) -> None:
    assert set(REGISTERS_SM_90) == {c["id"] for c in CONFIGS}
    for c in CONFIGS:
        (r,) = [r for r in sm_90_resources if entry_matches(r.name, c["entry"])]
        assert (r.registers, r.spills, r.stack_bytes, r.shared_bytes) == (REGISTERS_SM_90[c["id"]], 0, 0, 0), c["id"]
        # MIN_BLOCKS blocks per SM by registers and by shared memory (228 KB per SM, 1 KB reserved per block).
        min_blocks = c["params"]["MIN_BLOCKS"]
        assert r.registers * c["params"]["THREADS"] * min_blocks <= 65536
        assert min_blocks * (c["dynamic_smem_bytes"] + 1024) <= 228 * 1024 and c["dynamic_smem_bytes"] <= 227 * 1024


@needs_nvcc
def test_for_sm_80_it_builds_as_a_trap() -> None:
    """Older targets have no clusters: the kernel compiles (so every tool that builds the catalog for sm_80 still
    does) but only traps, and the catalog refuses such GPUs before compiling."""
    resources, log = nvcc_resources(DEFAULT.source_path, "sm_80")
    mine = [r for r in resources if entry_matches(r.name, DEFAULT.entry)]
    assert len(mine) == 1 and mine[0].registers <= 8 and mine[0].spills == 0, log


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout


BODY_BEFORE_CLUSTER_MODE = "c4f9d9a"


def _body_before_the_cluster_mode() -> str:
    """v9_body.cuh as it was before CLUSTER_SPLITS was added. A fixed commit, not the parent of the one that added it:
    that parent held a change to the odd-N copies which was measured slower and undone, so it is not the code v9-regdb
    and v9-splitk run."""
    try:
        return _git("show", f"{BODY_BEFORE_CLUSTER_MODE}:kernels/src/v9_body.cuh")
    except (OSError, subprocess.CalledProcessError):
        return ""


def _without_narrow_twins(text: str) -> str:
    """A source without the explicit instantiations of its N % 4 != 0 kernels, and without its stream-K, padded-C,
    serial and zero-first kernels (from the stream-K comment to the instantiations; they need the body's later
    Segment, STREAM_K, PAD_C, SERIAL and ZERO_FIRST)."""
    start, end = text.index("// Stream-K:"), text.index("// Explicit instantiations")
    text = text[:start] + text[end:]
    new_kernels = (
        "template __global__ void sgemm_regdb_splitk_narrow<",
        "template __global__ void sgemm_regdb_streamk",
        "template __global__ void sgemm_regdb_splitk_padc<",
        "template __global__ void sgemm_regdb_splitk_serial",
        "template __global__ void sgemm_regdb_splitk_zfirst",
    )
    return "\n".join(line for line in text.splitlines() if not line.startswith(new_kernels))


def _regdb_catalog_entry_only(text: str) -> str:
    """v9_regdb.cu with only the catalog entry's explicit instantiation (one kernel to build, not 25)."""
    args = get_kernel("v9-regdb").entry.split("<", 1)[1]
    keep = f"sgemm_regdb<{args}("
    return "\n".join(line for line in text.splitlines() if not line.startswith("template __global__") or keep in line)


@needs_nvcc
def test_the_cluster_mode_leaves_v9_regdb_and_v9_splitk_cubins_byte_identical(tmp_path: Path) -> None:
    """The new modes (CLUSTER_SPLITS, and NARROW for the kernels launched where N % 4 != 0) are defaulted template
    parameters of the shared body: v9_splitk.cu's kernels and v9-regdb's catalog kernel, built for sm_90 with the body
    before and after them, give the same cubin bytes (the narrow twins left out: they are new kernels)."""
    old_body = _body_before_the_cluster_mode()
    if not old_body:
        pytest.skip("no git history of kernels/src/v9_body.cuh here")
    nvcc = tool_path("nvcc")
    cubins = {}
    for label, body in (("before", old_body), ("after", (SRC_DIR / "v9_body.cuh").read_text())):
        folder = tmp_path / label
        folder.mkdir()
        for name in ("cp_async.cuh", "splitk_zero.cuh", "pdl.cuh"):
            shutil.copy(SRC_DIR / name, folder / name)
        (folder / "v9_splitk.cu").write_text(_without_narrow_twins((SRC_DIR / "v9_splitk.cu").read_text()))
        (folder / "v9_body.cuh").write_text(body)
        (folder / "v9_regdb.cu").write_text(_regdb_catalog_entry_only((SRC_DIR / "v9_regdb.cu").read_text()))
        for source in ("v9_regdb.cu", "v9_splitk.cu"):
            out = folder / f"{source}.cubin"
            subprocess.run(
                # Without the programmatic launches' waits (kernels/src/pdl.cuh), which the body before had not.
                [nvcc, "-arch=sm_90", "-std=c++17", "-DGEMMLENS_PDL=0", "-cubin", "-o", str(out), str(folder / source)],
                check=True,
                capture_output=True,
                timeout=300,
            )
            cubins[(label, source)] = out.read_bytes()
    for source in ("v9_regdb.cu", "v9_splitk.cu"):
        assert cubins[("before", source)] == cubins[("after", source)], f"{source}'s machine code changed"
    assert re.search(rb"sgemm_regdb_splitk", cubins[("after", "v9_splitk.cu")])
