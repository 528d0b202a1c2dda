"""The split-K kernel (v8-splitk): its split-count rule, launch grid and facts, and the launcher that zeroes C
before the kernel adds into it (CPU: fakes stand in for the compiled functions)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kernels.catalog import CATALOG
from kernels.registry import get_kernel
from kernels.spec import SPLIT_K_ZERO_ENTRY
from kernels.splitk_policy import MIN_SLICES_PER_SPLIT
from profiling.gpu.compile import CompiledKernel
from profiling.gpu.runner import ZERO_THREADS, Problem, launch_facts, zero_blocks
from profiling.shape import Shape

SPLITK = get_kernel("v8-splitk")


@pytest.mark.parametrize(
    "m,n,k,splits",
    [
        (127, 127, 8191, 64),  # one tile, 512 slices: isqrt(132 x 32) = 64 splits of 8 (kernels/splitk_policy.py)
        (64, 64, 65536, 256),  # one tile, 4096 slices: 256 splits of 16 put a block on every SM
        (333, 4096, 4096, 2),  # 96 tiles: two splits fill 192 of 264 resident blocks
        (4096, 4096, 333, 1),  # 1024 tiles already fill the GPU
        (1024, 1024, 1024, 4),  # 64 tiles
        (1, 1, 1, 1),
        (17, 17, 63, 1),  # 4 slices: too few to split
        (17, 17, 128, 2),
    ],
)
def test_split_count_fills_one_wave_of_resident_blocks(m, n, k, splits) -> None:
    assert SPLITK.split_count(m, n, k, 132) == splits
    assert SPLITK.launch_grid(m, n, k, 132) == (*SPLITK.grid(m, n), splits)


@pytest.mark.parametrize("sms", [114, 132, 144])
@pytest.mark.parametrize(
    "shape", [Shape(127, 127, 8191), Shape(64, 64, 65536), Shape(1, 4096, 4096), Shape(200, 300, 9999), Shape(5, 5, 17)]
)
def test_no_split_is_empty_or_past_one_wave(shape, sms) -> None:
    m, n, k = shape.m, shape.n, shape.k
    splits = SPLITK.split_count(m, n, k, sms)
    tiles = math.prod(SPLITK.grid(m, n))
    slices = math.ceil(k / SPLITK.params["BK"])
    per_split = math.ceil(slices / splits)  # what the kernel computes from gridDim.z
    assert 1 <= splits and (splits - 1) * per_split < slices <= splits * per_split
    assert splits == 1 or tiles * splits <= sms * SPLITK.params["MIN_BLOCKS"]
    assert splits == 1 or per_split >= MIN_SLICES_PER_SPLIT


def test_only_the_split_k_kernels_split() -> None:
    assert [s.id for s in CATALOG if s.split_k] == ["v8-splitk", "v9-splitk"]
    v8 = get_kernel("v8-async")
    assert v8.split_count(127, 127, 8191, 132) == 1 and v8.launch_grid(127, 127, 8191) == (1, 1, 1)
    assert SPLITK.split_count(127, 127, 8191) == 64  # no device at hand: an H100 SXM's 132 SMs
    # The multiply is v8-async's: same tiles, launch, shared memory.
    same = ("block", "tile_m", "tile_n", "grid_order", "params", "dynamic_smem_bytes", "operation")
    assert all(getattr(SPLITK, f) == getattr(v8, f) for f in same)
    assert SPLITK.entry.split("<")[1] == v8.entry.split("<")[1]


def test_source_defines_the_zeroing_kernel_and_adds_into_c() -> None:
    source = SPLITK.read_source()
    assert f'extern "C" __global__ void {SPLIT_K_ZERO_ENTRY}(' in source
    assert "blockIdx.z" in source and "atomicAdd" in source and "red.global.add.v4.f32" in source
    # No plain store into C: each split's partial product must be added to the others'.
    assert "c_row[col + c] =" not in source and "float4*>(c_row" not in source


class _Recorder:
    def __init__(self, name: str, calls: list) -> None:
        self.name, self.calls = name, calls

    def __call__(self, grid, block, args, shared_mem=0) -> None:
        self.calls.append((self.name, grid, block, args, shared_mem))


def _problem(m: int, n: int, k: int) -> Problem:
    a, b = np.ones((m, k), np.float32), np.ones((k, n), np.float32)
    return Problem.from_arrays(np, "sgemm", Shape(m, n, k), a, b)


def test_launcher_zeroes_c_then_runs_the_kernel_in_one_call() -> None:
    calls: list = []
    problem = _problem(127, 127, 8191)
    compiled = CompiledKernel(
        SPLITK, _Recorder("gemm", calls), {}, {SPLIT_K_ZERO_ENTRY: _Recorder(SPLIT_K_ZERO_ENTRY, calls)}
    )
    launch = problem.launcher(compiled, SPLITK, 132)
    assert calls == []  # building the callable launches nothing
    launch()
    (zero, gemm) = calls
    assert zero[0] == SPLIT_K_ZERO_ENTRY and zero[1] == (zero_blocks(127 * 127, 132),) and zero[2] == (ZERO_THREADS,)
    assert zero[3][0] is problem.out and int(zero[3][1]) == 127 * 127
    assert gemm[0] == "gemm" and gemm[1] == (1, 1, 64) and gemm[2] == SPLITK.block and gemm[4] == 49920
    assert gemm[3][2] is problem.out and [int(v) for v in gemm[3][3:]] == [127, 127, 8191]
    launch()
    assert [c[0] for c in calls] == [SPLIT_K_ZERO_ENTRY, "gemm"] * 2  # every timed call is the whole operation


def test_other_kernels_launch_once_with_a_z_of_one() -> None:
    calls: list = []
    v8 = get_kernel("v8-async")
    _problem(127, 127, 8191).launcher(CompiledKernel(v8, _Recorder("gemm", calls), {}), v8, 132)()
    assert [(c[0], c[1]) for c in calls] == [("gemm", (1, 1, 1))]


def test_zeroing_grid_covers_c_with_float4s_and_stays_small() -> None:
    assert zero_blocks(1, 132) == 1
    assert zero_blocks(127 * 127, 132) == math.ceil(127 * 127 / 4 / ZERO_THREADS) == 16
    assert zero_blocks(8192 * 8192, 132) == 132 * 8  # the grid-stride loop covers the rest
    assert zero_blocks(8192 * 8192, None) == 132 * 8


def test_launch_facts_name_the_splits_and_both_launches() -> None:
    facts = launch_facts(SPLITK, Shape(127, 127, 8191), 132)
    assert facts["grid"] == [1, 1, 64] and facts["split_k"] == 64
    assert [p["kernel"] for p in facts["launches"]] == [SPLIT_K_ZERO_ENTRY, SPLITK.entry]
    assert facts["launches"][0]["grid"] == [16, 1, 1]
    plain = launch_facts(get_kernel("v9-regdb"), Shape(4096, 4096, 4096), 132)
    assert plain["grid"] == [16, 32, 1] and "split_k" not in plain and "launches" not in plain


def test_ncu_kernel_filter_keeps_the_zeroing_launch_of_a_split_k_operation() -> None:
    from profiling.nsight.runner import kernel_name_regex

    assert kernel_name_regex(["v8-splitk"]) == f"regex:^({SPLIT_K_ZERO_ENTRY}|sgemm_splitk)$"
    assert kernel_name_regex(["v8-async", "v8-splitk"]) == f"regex:^(sgemm_async|{SPLIT_K_ZERO_ENTRY}|sgemm_splitk)$"


def _padded_launches(config_id: str, m: int, n: int, k: int) -> tuple[Problem, list]:
    """The launches one call of the operation of `config_id` at m x n x k makes, recorded (name, grid, block, args)."""
    spec = get_kernel(config_id)
    calls: list = []
    helpers = {name: _Recorder(name, calls) for name in spec.helper_entries}
    problem = _problem(m, n, k)
    problem.launcher(CompiledKernel(spec, _Recorder("gemm", calls), {}, helpers), spec, 132)()
    return problem, calls


def test_an_operation_padding_b_and_c_copies_b_multiplies_at_the_padded_n_and_copies_c_back() -> None:
    problem, calls = _padded_launches("v9-splitk-256x128x16-w64x64-t16x8-s3-o4-sk-pad", 300, 127, 50)
    assert [c[0] for c in calls] == ["splitk_zero_c_pad_b", "gemm", "splitk_unpad_c"]
    b_padded, c_padded = problem.padded_copies(128, True, True)
    assert b_padded.shape == (50, 128) and c_padded.shape == (300, 128)
    pad, gemm, unpad = (c[3] for c in calls)
    assert pad[0] is c_padded and int(pad[1]) == 300 * 128 and pad[2] is problem.b and pad[3] is b_padded
    assert [int(v) for v in pad[4:]] == [50, 127]
    assert calls[0][1] == (zero_blocks(300 * 128 + 50 * 128, 132),)
    assert gemm[1] is b_padded and gemm[2] is c_padded and [int(v) for v in gemm[3:]] == [300, 128, 50]
    assert unpad[0] is c_padded and unpad[1] is problem.out and [int(v) for v in unpad[2:]] == [300, 127]


def test_an_operation_padding_c_alone_zeroes_its_copy_and_reads_b_where_it_lies() -> None:
    problem, calls = _padded_launches("v9-splitk-64x128x16-w32x64-t8x8-s3-d8-padc", 300, 127, 50)
    assert [c[0] for c in calls] == [SPLIT_K_ZERO_ENTRY, "gemm", "splitk_unpad_c"]
    b_padded, c_padded = problem.padded_copies(128, False, True)
    assert b_padded is None
    zero, gemm, unpad = (c[3] for c in calls)
    assert zero[0] is c_padded and int(zero[1]) == 300 * 128
    assert gemm[1] is problem.b and gemm[2] is c_padded and [int(v) for v in gemm[3:]] == [300, 127, 50]
    assert unpad[1] is problem.out


def test_an_operation_padding_b_alone_zeroes_c_itself_and_adds_into_it_with_nothing_copied_back() -> None:
    problem, calls = _padded_launches("v9-splitk-256x128x16-w64x64-t16x8-s3-o4-sk-padb", 301, 127, 50)
    assert [c[0] for c in calls] == ["splitk_zero_c_pad_b", "gemm"]
    b_padded, c_padded = problem.padded_copies(128, True, False)
    assert b_padded.shape == (50, 128) and c_padded is None
    pad, gemm = (c[3] for c in calls)
    # C itself zeroed: 301 x 127 floats, not a whole number of float4s (the kernel zeroes the last 3 one by one).
    assert pad[0] is problem.out and int(pad[1]) == 301 * 127 and pad[2] is problem.b and pad[3] is b_padded
    assert [int(v) for v in pad[4:]] == [50, 127]
    assert calls[0][1] == (zero_blocks(301 * 127 + 50 * 128, 132),)
    # The multiply reads B's copy and adds into C, at N = 127 (it works out the copy's rows from N).
    assert gemm[1] is b_padded and gemm[2] is problem.out and [int(v) for v in gemm[3:]] == [301, 127, 50]


def test_a_tile_copy_operation_pads_b_and_c_and_passes_c_and_the_copies_to_its_multiply() -> None:
    problem, calls = _padded_launches("v9-splitk-64x128x16-w32x64-t8x8-s3-sk-pad-tcopy", 300, 127, 50)
    assert [c[0] for c in calls] == ["splitk_zero_c_pad_b", "gemm"]
    b_padded, c_padded = problem.padded_copies(128, True, True)
    pad, gemm = (c[3] for c in calls)
    assert pad[0] is c_padded and int(pad[1]) == 300 * 128 and pad[2] is problem.b and pad[3] is b_padded
    # The fused kernel's arguments: C and N as they are, then B's and C's copies.
    assert gemm[0] is problem.a and gemm[1] is problem.b and gemm[2] is problem.out
    assert [int(v) for v in gemm[3:6]] == [300, 127, 50] and gemm[6] is b_padded and gemm[7] is c_padded


def test_serial_splits_padding_c_launch_no_zeroing_and_at_n_multiple_of_4_nothing_is_padded() -> None:
    _, calls = _padded_launches("v9-splitk-64x128x16-w32x64-t8x8-s3-d8-ser-padc", 300, 127, 50)
    assert [c[0] for c in calls] == ["gemm", "splitk_unpad_c"]
    problem, calls = _padded_launches("v9-splitk-256x128x16-w64x64-t16x8-s3-o4-sk-pad", 300, 128, 50)
    assert [c[0] for c in calls] == [SPLIT_K_ZERO_ENTRY, "gemm"]
    assert calls[1][3][1] is problem.b and calls[1][3][2] is problem.out


class _CooperativeRecorder(_Recorder):
    """A RawKernel whose loaded function (`kernel`, cupy.cuda.Function) takes the cooperative launch flag."""

    @property
    def kernel(self) -> _CooperativeRecorder:
        return self

    def __call__(self, grid, block, args, shared_mem=0, enable_cooperative_groups=False) -> None:
        self.calls.append((self.name, grid, block, args, shared_mem, enable_cooperative_groups))


FUSED = "v9-splitk-256x128x16-w64x64-t16x8-s3-o4-sk-fused"


def test_a_fused_stream_k_operation_is_one_cooperative_launch_with_the_padded_copies_last() -> None:
    spec = get_kernel(FUSED)
    assert spec.fused and spec.helper_entries == () and spec.narrow_entry is None
    assert spec.operation_entries(127) == (spec.entry,) and spec.entry.startswith("sgemm_regdb_streamk_fused<256,128")
    calls: list = []
    problem = _problem(300, 127, 50)
    problem.launcher(CompiledKernel(spec, _CooperativeRecorder("gemm", calls), {}), spec, 132)()
    ((name, grid, block, args, smem, cooperative),) = calls
    # 2 tiles of 4 slices: stream_k_blocks gives each block at least MIN_SLICES_PER_SPLIT of them.
    assert name == "gemm" and grid == (2, 1, 1) and cooperative is True and smem == spec.dynamic_smem_bytes
    b_padded, c_padded = problem.padded_copies(128, True, True)
    assert args[0] is problem.a and args[1] is problem.b and args[2] is problem.out
    assert [int(v) for v in args[3:6]] == [300, 127, 50] and args[6] is b_padded and args[7] is c_padded
    facts = launch_facts(spec, Shape(300, 127, 50), 132)
    assert facts["fused"] is True and facts["padded_n"] == 128
    assert facts["launches"] == [{"kernel": spec.entry, "grid": [2, 1, 1], "block": [256, 1, 1]}]
    assert spec.launch_grid(4096, 127, 4096, 132) == (132, 1, 1)


def test_a_fused_stream_k_operation_at_n_multiple_of_4_passes_b_and_c_as_its_copies() -> None:
    spec = get_kernel(FUSED)
    calls: list = []
    problem = _problem(300, 128, 50)
    problem.launcher(CompiledKernel(spec, _CooperativeRecorder("gemm", calls), {}), spec, 132)()
    args = calls[0][3]
    assert args[6] is problem.b and args[7] is problem.out and calls[0][5] is True
    assert "padded_n" not in launch_facts(spec, Shape(300, 128, 50), 132)
