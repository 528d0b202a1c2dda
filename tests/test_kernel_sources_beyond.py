"""The beyond-the-ladder kernels build cleanly: no spills, registers within their launch bounds,
shared memory within the per-block and per-SM limits, tuning configurations valid (CPU; compiling needs nvcc).

NVIDIA's limits used here (CUDA Programming Guide, compute capability table): per-block opt-in shared
memory 163 KB on sm_80 and 227 KB on sm_90, per-SM shared memory 164 KB and 228 KB, 1 KB reserved per
block, 48 KB without opt-in, 64K registers per SM.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
from functools import cache

import pytest
from cuda.pathfinder import DynamicLibNotFoundError, load_nvidia_dynamic_lib

from kernels.compile_info import FunctionResources, entry_matches, nvcc_resources
from kernels.registry import get_kernel
from kernels.tuning import SPLITK_TUNING_CONFIGS, TUNING_CONFIGS, all_tuning_configs, problems, smem_bytes, spec_for
from profiling.paths import tool_path

BEYOND_IDS = [
    "v6-vectorized",
    "v7-warptile",
    "v8-async",
    "v8-splitk",
    "v9-regdb",
    "v9-splitk",
    "v9-clusterk",
    "wmma-addmm",
    "wmma-async",
]
SPECS = [get_kernel(i) for i in BEYOND_IDS]
# Every launchable configuration: the catalog entries plus the v8, v9, both split-K and the cluster split-K sweeps.
CONFIGS = SPECS + [spec_for(c) for c in all_tuning_configs()]
# ... and the kernels launched instead where N % 4 != 0 (v9-regdb's and v9-splitk's narrow twins).
CONFIGS += [spec.launched_at(127) for spec in CONFIGS if spec.narrow_entry]


def _config_id(spec) -> str:
    return spec.id + ("-narrow" if spec.entry == spec.narrow_entry else "")


LIMITS = {
    "sm_80": {"block_optin": 163 * 1024, "sm": 164 * 1024},
    "sm_90": {"block_optin": 227 * 1024, "sm": 228 * 1024},
}
RESERVED_PER_BLOCK = 1024
DEFAULT_BLOCK_SMEM = 48 * 1024
REGISTERS_PER_SM = 65536

needs_nvcc = pytest.mark.skipif(tool_path("nvcc") is None, reason="nvcc is not installed (CUDA toolkit absent)")


@cache
def _resources(source: str, arch: str) -> tuple[FunctionResources, ...]:
    resources, log = nvcc_resources(next(s for s in SPECS if s.source == source).source_path, arch)
    assert resources, f"ptxas reported no kernels for {source}:\n{log}"
    return tuple(resources)


def _find(spec, arch: str) -> FunctionResources:
    found = [r for r in _resources(spec.source, arch) if entry_matches(r.name, spec.entry)]
    assert len(found) == 1, f"{spec.entry}: expected one compiled kernel, got {[r.name for r in found]}"
    return found[0]


def test_each_source_opens_with_a_comment_on_what_it_adds() -> None:
    for spec in SPECS:
        first = spec.read_source().lstrip().splitlines()[0]
        assert first.startswith("//") and len(first) > 20, f"{spec.source} must open with a comment"


@needs_nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("spec", CONFIGS, ids=_config_id)
def test_compiles_without_spills_within_launch_bounds_and_smem_limits(spec, arch: str) -> None:
    r = _find(spec, arch)
    assert r.spill_store_bytes == 0 and r.spill_load_bytes == 0, f"{spec.id} spills {r.spills} bytes on {arch}"
    assert r.stack_bytes == 0, f"{spec.id} uses a {r.stack_bytes}-byte stack frame on {arch}"

    # __launch_bounds__(threads, MIN_BLOCKS) caps the registers so that MIN_BLOCKS blocks fit an SM.
    min_blocks = spec.params["MIN_BLOCKS"]
    cap = min(255, REGISTERS_PER_SM // (spec.threads_per_block * min_blocks))
    assert r.registers <= cap, f"{spec.id}: {r.registers} registers > {cap} on {arch}"

    limits = LIMITS[arch]
    per_block = r.shared_bytes + spec.dynamic_smem_bytes
    assert per_block <= limits["block_optin"], f"{spec.id}: {per_block} B of shared memory per block on {arch}"
    if spec.dynamic_smem_bytes == 0:
        assert r.shared_bytes <= DEFAULT_BLOCK_SMEM
    assert min_blocks * (per_block + RESERVED_PER_BLOCK) <= limits["sm"], (
        f"{spec.id}: {min_blocks} blocks of {per_block} B do not fit one SM's shared memory on {arch}"
    )


@needs_nvcc
def test_128x128_sgemm_kernels_keep_two_blocks_per_sm() -> None:
    for spec in CONFIGS:
        if spec.operation == "sgemm" and (spec.tile_m, spec.tile_n, spec.threads_per_block) == (128, 128, 256):
            assert _find(spec, "sm_90").registers <= 128, spec.id


def test_tuning_configs_are_valid_and_the_catalog_default_is_the_first() -> None:
    assert 1 <= len(TUNING_CONFIGS) <= 8
    assert len({c["entry"] for c in TUNING_CONFIGS}) == len(TUNING_CONFIGS)
    source = get_kernel("v8-async").read_source().replace(" ", "")
    for c in TUNING_CONFIGS:
        p = c["params"]
        assert problems(p) == [], c["id"]
        assert c["dynamic_smem_bytes"] == smem_bytes(p["BM"], p["BN"], p["BK"], p["STAGES"])
        assert (c["tile_m"], c["tile_n"], c["block"]) == (p["BM"], p["BN"], (p["THREADS"], 1))
        assert c["entry"].replace(" ", "") + "(" in source, f"{c['entry']} is not instantiated in v8_async.cu"
    default = get_kernel("v8-async")
    first = TUNING_CONFIGS[0]
    assert (default.entry, default.dynamic_smem_bytes, default.params) == (
        first["entry"],
        first["dynamic_smem_bytes"],
        first["params"],
    )


def test_split_k_configs_are_valid_and_instantiated() -> None:
    source = get_kernel("v8-splitk").read_source().replace(" ", "")
    for c in SPLITK_TUNING_CONFIGS:
        assert problems(c["params"]) == [], c["id"]
        assert c["dynamic_smem_bytes"] == smem_bytes(*(c["params"][k] for k in ("BM", "BN", "BK", "STAGES")))
        assert c["entry"].replace(" ", "") + "(" in source, f"{c['entry']} is not instantiated in v8_splitk.cu"
    assert get_kernel("v8-splitk").entry == SPLITK_TUNING_CONFIGS[0]["entry"]


def test_invalid_tuning_parameters_are_explained() -> None:
    bad = dict(TUNING_CONFIGS[0]["params"], WM=48)
    assert any("warp tiles" in msg for msg in problems(bad))


def test_tensor_core_shared_memory_sizes_match_their_layouts() -> None:
    w = get_kernel("wmma-addmm").params
    ab = (w["BM"] * (w["BK"] + w["SKEW_HALF"]) + w["BK"] * (w["BN"] + w["SKEW_HALF"])) * 2
    assert get_kernel("wmma-addmm").dynamic_smem_bytes == max(ab, w["BM"] * w["BN"] * 4) == 65536
    a = get_kernel("wmma-async").params
    assert get_kernel("wmma-async").dynamic_smem_bytes == a["STAGES"] * (a["BM"] * a["BK"] + a["BK"] * a["BN"]) * 2


def test_tensor_core_kernels_refuse_sizes_that_are_not_multiples_of_16() -> None:
    for kernel_id in ("wmma-addmm", "wmma-async"):
        spec = get_kernel(kernel_id)
        assert spec.size_problem(4096, 4096, 4096) is None
        assert spec.size_problem(4096, 4096, 4000) is None
        message = spec.size_problem(100, 64, 64)
        assert message and "multiples of 16" in message and "112x64x64" in message


def _nvrtc() -> ctypes.CDLL | None:
    """libnvrtc as CuPy finds it (cuda.pathfinder: the nvidia-cuda-nvrtc wheel of requirements-dev.txt, conda,
    the system), else $NVRTC_LIBRARY, the linker's search path or a toolkit under /usr/local/cuda*."""
    candidates = [os.environ.get("NVRTC_LIBRARY")]
    try:
        candidates.append(load_nvidia_dynamic_lib("nvrtc").abs_path)
    except DynamicLibNotFoundError:
        pass
    candidates.append(ctypes.util.find_library("nvrtc"))
    for pattern in (
        "/usr/local/cuda*/lib64/libnvrtc.so*",
        "/usr/local/lib/python3*/*-packages/nvidia/cu1*/lib/libnvrtc.so*",
    ):
        candidates += sorted(glob.glob(pattern))
    for path in filter(None, candidates):
        try:
            return ctypes.CDLL(path)
        except OSError:
            continue
    return None


@pytest.mark.parametrize("spec", CONFIGS, ids=_config_id)
def test_compiles_under_nvrtc_as_the_launcher_does(spec) -> None:
    """The launcher compiles through NVRTC without the toolkit headers: no #include may be needed."""
    assert "#include" not in spec.read_source(), f"{spec.source} must build without headers"
    lib = _nvrtc()
    if lib is None:
        pytest.skip("libnvrtc not found (set NVRTC_LIBRARY to check the NVRTC build)")
    prog = ctypes.c_void_p()
    assert lib.nvrtcCreateProgram(ctypes.byref(prog), spec.read_source().encode(), b"k.cu", 0, None, None) == 0
    try:
        assert lib.nvrtcAddNameExpression(prog, spec.entry.encode()) == 0
        opts = [b"-std=c++17", b"-lineinfo", b"-arch=compute_90"]
        rc = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, log)
        assert rc == 0, log.value.decode(errors="replace")
        lowered = ctypes.c_char_p()
        assert lib.nvrtcGetLoweredName(prog, spec.entry.encode(), ctypes.byref(lowered)) == 0
        assert entry_matches(lowered.value.decode(), spec.entry)
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
