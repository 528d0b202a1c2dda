"""Static SASS of the catalog kernels, built as the launcher builds them (NVRTC with CuPy's options, nvcc for the
sm_90a kernels) and disassembled for real (CPU only: needs nvcc and nvdisasm or cuobjdump)."""

from __future__ import annotations

import pytest

from kernels import get_kernel
from profiling.analysis import sass as A
from profiling.errors import GemmLensError, InvalidInput
from profiling.paths import tool_path

needs_tools = pytest.mark.skipif(
    tool_path("nvcc") is None or A.find_binary("nvdisasm") is None,
    reason="needs nvcc and nvdisasm (CUDA toolkit, or the nvidia-cuda-nvdisasm wheel)",
)


def loop(kernel_id: str) -> A.InstructionMix:
    mix = A.static_sass(get_kernel(kernel_id)).loop_mix
    assert mix is not None, f"{kernel_id}: no main loop found"
    return mix


@needs_tools
def test_register_blocking_multiplies_ffma_per_shared_load() -> None:
    v2, v3 = loop("v2"), loop("v3")
    assert v2.get("FFMA") == 32 and v2.math_per_shared_load < 1  # one FMA per 2 operands from shared memory
    assert v3.get("FFMA") == 512  # 8x8 accumulators x BK=8, fully unrolled
    assert v3.math_per_shared_load >= 16 and v3.counts.get("LDS.128", 0) == 32
    # v4 changes the A tile's layout, not the instructions: the mix is v3's.
    assert loop("v4").counts == v3.counts


@needs_tools
def test_double_buffering_halves_the_barriers() -> None:
    assert loop("v4").get("BAR") == 2 and loop("v5").get("BAR") == 1


@needs_tools
def test_cp_async_replaces_register_staged_loads() -> None:
    v7, v8 = loop("v7-warptile"), loop("v8-async")
    assert v7.get("LDG") > 0 and v7.get("LDGSTS") == 0 and v7.get("STS") > 0
    assert v8.get("LDG") == 0 and v8.get("LDGSTS") > 0 and v8.get("STS") == 0
    assert v8.counts.get("LDGDEPBAR") == 1


@needs_tools
def test_v9_issues_most_ffma_per_shared_load() -> None:
    v8, v9 = loop("v8-async"), loop("v9-regdb")
    assert v9.get("FFMA") == 2048  # 8x16 accumulators x BK=16
    assert v9.math_per_shared_load > v8.math_per_shared_load > 12
    assert v9.counts.get("LDS.128", 0) >= 96


@needs_tools
def test_tensor_core_kernels_use_hmma_and_ldmatrix() -> None:
    wmma, mma = loop("wmma-addmm"), loop("wmma-async")
    for mix in (wmma, mma):
        assert mix.get("HMMA") == 64 and mix.get("FFMA") == 0 and mix.get("LDSM") > 0
    assert wmma.get("LDG") > 0 and wmma.get("LDGSTS") == 0  # 16-byte copies through registers
    assert mma.get("LDGSTS") > 0 and mma.get("LDG") == 0  # cp.async pipeline


@needs_tools
def test_sass_per_cuda_line_lands_on_the_source() -> None:
    static = A.static_sass(get_kernel("v5"))
    lines = static.function.by_line()
    ffma_lines = {i.line for i in static.function.instructions if i.base == "FFMA"}
    assert [static.source_lines[n - 1].strip() for n in ffma_lines] == ["sum[xx][yy] +="]
    assert sum(len(lines[n]) for n in ffma_lines) >= 512
    # The shared loads belong to the two lines of the inner-product statement.
    lds_lines = {i.line for i in static.function.instructions if i.base == "LDS"}
    statement = ("sum[xx][yy] +=", "aTile[buffer_index][kk]")
    assert all(static.source_lines[n - 1].strip().startswith(statement) for n in lds_lines)
    sts_lines = {i.line for i in static.function.instructions if i.base == "STS"}
    assert sts_lines and all("Tile[buf]" in static.source_lines[n - 1] for n in sts_lines)
    data = static.to_dict()
    assert data["main_loop"]["mix"]["ffma"] == 512 and data["lines"][0]["instructions"]
    # v9's fragments are loaded inside inlined helpers: the call sites are kept too.
    v9 = A.static_sass(get_kernel("v9-regdb"))
    assert any(i.inlined_at for i in v9.function.instructions)


@needs_tools
def test_cuobjdump_listing_matches_nvdisasm() -> None:
    cuobjdump = A.find_binary("cuobjdump")
    if cuobjdump is None:
        pytest.skip("cuobjdump not installed")
    spec = get_kernel("v5")
    listing = A.disassemble(A.launcher_cubin(spec, "sm_90")[0], cuobjdump)
    (plain,) = [f for f in A.parse_cuobjdump(listing) if f.name == "sgemm_v5_double_buffer"]
    lined = A.static_sass(spec).function
    # Branch targets print as addresses there and as labels here; everything else is the same.
    assert [i.opcode for i in plain.instructions] == [i.opcode for i in lined.instructions]
    assert plain.main_loop() == lined.main_loop()


def test_library_references_and_bad_arch_are_refused() -> None:
    with pytest.raises(InvalidInput, match="no source"):
        A.static_sass(get_kernel("cublas"))
    with pytest.raises(InvalidInput, match="sm_90"):
        A.static_sass(get_kernel("v5"), arch="90; rm -rf /")


def test_missing_disassembler_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(A, "find_binary", lambda name: None)
    monkeypatch.setattr(A, "tool_path", lambda name: "/usr/bin/true")
    with pytest.raises(GemmLensError, match="neither nvdisasm nor cuobjdump") as err:
        A.static_sass(get_kernel("v5"))
    assert "\n" not in str(err.value)


@needs_tools
def test_lines_of_a_header_read_the_header() -> None:
    """v8-async's and v8-splitk's body lives in v8_body.cuh, v9-regdb's and v9-splitk's in v9_body.cuh:
    nvcc reports each inlined line by its own file, so the text comes from that file, not from the kernel's."""
    bodies = {
        "v8-async": "v8_body.cuh",
        "v8-splitk": "v8_body.cuh",
        "v9-regdb": "v9_body.cuh",
        "v9-splitk": "v9_body.cuh",
    }
    for kernel_id, file in bodies.items():
        static = A.static_sass(get_kernel(kernel_id))
        ffma = {k for k, ins in static.function.by_source_line().items() if any(i.base == "FFMA" for i in ins)}
        assert {f for f, _ in ffma} == {file}, kernel_id
        assert all("acc[i][j] = fmaf(" in static.line_text(f, n) for f, n in ffma), kernel_id
        rows = static.to_dict()["lines"]
        assert any(r["file"] == file and "acc[i][j] = fmaf(" in r["source"] for r in rows)
