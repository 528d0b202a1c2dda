"""Early address rewrites (profiling.analysis.sass.early_address_rewrites) on real SASS: v9-regdb's tuned tile as
NVRTC builds it for sm_90 with CuPy's options (tests/fixtures/sass/), against the H200's ncu source capture of that
kernel at 2048^3 (results/h200-2026-11-29/why_sgemm/): the listing is the binary that ran, instruction for
instruction, and the writes found statically are the kernel's two worst long-scoreboard stalls."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from kernels import get_kernel
from profiling.analysis import sass as A
from profiling.commands.sass import format_static
from profiling.nsight.source_load import read_source_file

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "sass"
CAPTURE = ROOT / "results" / "h200-2026-11-29" / "why_sgemm" / "source_why_sgemm_2048_cuda_sass.csv.gz"


def listing(name: str) -> A.SassFunction:
    (function,) = A.parse_cuobjdump(gzip.decompress((FIXTURES / name).read_bytes()).decode())
    return function


def opcode(text: str) -> str:
    """ncu's SASS text without its predicate: '@!P1 IADD3 R4, ...' -> 'IADD3'."""
    words = text.split()
    return words[1] if words[0].startswith("@") else words[0]


def form(text: str) -> tuple[str, str, list[str]]:
    """An instruction as (predicate, opcode, its operands sorted), reuse flags dropped."""
    found = text.replace(".reuse", "").split()
    predicate = found.pop(0) if found[0].startswith("@") else ""
    return predicate, found[0], sorted("".join(found[1:]).split(","))


def main_loop(function: A.SassFunction) -> list[A.SassInstruction]:
    loop = function.main_loop()
    assert loop is not None
    return function.region(*loop)


def test_the_tuned_tile_hands_its_copies_address_registers_on_early() -> None:
    found = A.early_address_rewrites(main_loop(listing("v9_tuned_nvrtc_sm90.sass.gz")))
    assert [(copy.text, write.text) for copy, write in found] == [
        ("LDGSTS.E [R195+0x420], desc[UR8][R114.64+0x8], !P6", "IMAD.WIDE R114, R85, 0x4, R190"),
        ("LDGSTS.E [R195+0x630], desc[UR8][R114.64+0xc], !P4", "IMAD.WIDE R114, R85, 0x4, R190"),
        ("LDGSTS.E [R195+0x730], desc[UR8][R114.64+0xc], !P4", "IMAD.WIDE.U32 R194, R3, 0x30, R10"),
        # A fragment load into R44..R47 overwrites the shared-memory address R45 of a B copy.
        ("LDGSTS.E.BYPASS.128 [R45+0x5100], desc[UR8][R194.64], P5", "LDS.128 R44, [R196+0xc0]"),
    ]
    after = [(write.offset - copy.offset) // A.SASS_INSTRUCTION_BYTES for copy, write in found]
    assert after == [16, 12, 12, 16]
    # 12 to 16 instructions on: a window of 11 sees none of them.
    assert A.early_address_rewrites(main_loop(listing("v9_tuned_nvrtc_sm90.sass.gz")), window=11) == []


def test_those_writes_are_the_kernel_s_worst_long_scoreboard_stalls_on_the_h200() -> None:
    built = listing("v9_tuned_nvrtc_sm90.sass.gz")
    (ran,) = read_source_file(CAPTURE).kernels
    ran_instructions = [ran.instructions[address] for address in sorted(ran.instructions)]
    # The same binary: 6,184 instructions with the same opcodes in the same order.
    assert len(ran_instructions) == len(built.instructions) == 6184
    assert [opcode(i.sass) for i in ran_instructions] == [i.opcode for i in built.instructions]
    # ... and the same operands (ncu prints no register reuse flags, branch targets as addresses, and a copy's
    # operands in another order).
    base = min(ran.instructions)
    assert [form(re.sub(r"0x7f[0-9a-f]+", lambda m: hex(int(m[0], 16) - base), i.sass)) for i in ran_instructions] == [
        form(f"{i.predicate} {i.text}") for i in built.instructions
    ]
    index = {ins.offset: n for n, ins in enumerate(built.instructions)}
    writes = sorted({index[write.offset] for _, write in A.early_address_rewrites(main_loop(built))})
    waits = [i.stalls.get("long_scoreboard", 0.0) for i in ran_instructions]
    assert [waits[n] for n in writes] == [904.0, 621.0, 31.0]
    # The two worst of the kernel's long-scoreboard stalls, and 1,556 of its 1,743 samples.
    assert sorted(waits, reverse=True)[:2] == [904.0, 621.0]
    assert sum(waits) == 1743.0


def test_copies_spread_over_four_k_steps_leave_one_early_address_write_of_the_copies() -> None:
    """The measurement build V9_SPREAD_COPIES=4 (a slice's copies in four parts, kernels/src/v9_body.cuh): one
    instruction writes a copy's global address early, and two fragment loads a copy's shared one."""
    found = A.early_address_rewrites(main_loop(listing("v9_tuned_nvrtc_sm90_spread4.sass.gz")))
    assert [write.text for _, write in found] == [
        "FFMA.FTZ R15, R57.reuse, R36, R80",
        "LDS.128 R40, [R20+0x630]",
        "LDS.128 R44, [R192+0xc0]",
    ]


def test_the_sass_command_names_them_under_the_main_loop() -> None:
    static = A.StaticSass(
        "v9-regdb", "sgemm_regdb_ordered", "sm_90", listing("v9_tuned_nvrtc_sm90.sass.gz"), [], "cuobjdump"
    )
    text = format_static(static).splitlines()
    start = text.index(
        "  cp.async copies whose address registers are rewritten within 16 instructions (the write waits on the long "
        "scoreboard until the copy has read them): 4"
    )
    assert text[start + 1 : start + 5] == [
        "    LDGSTS.E [R195+0x420], desc[UR8][R114.64+0x8], !P6  ->  IMAD.WIDE R114, R85, 0x4, R190",
        "    LDGSTS.E [R195+0x630], desc[UR8][R114.64+0xc], !P4  ->  IMAD.WIDE R114, R85, 0x4, R190",
        "    LDGSTS.E [R195+0x730], desc[UR8][R114.64+0xc], !P4  ->  IMAD.WIDE.U32 R194, R3, 0x30, R10",
        "    LDGSTS.E.BYPASS.128 [R45+0x5100], desc[UR8][R194.64], P5  ->  LDS.128 R44, [R196+0xc0]",
    ]
    rewrites = static.to_dict(listing=False)["main_loop"]["early_address_rewrites"]
    assert [r["instructions_after"] for r in rewrites] == [16, 12, 12, 16]
    assert rewrites[2]["write"] == "IMAD.WIDE.U32 R194, R3, 0x30, R10"


@pytest.mark.skipif(A.find_binary("nvdisasm") is None, reason="needs nvdisasm (the nvidia-cuda-nvdisasm wheel)")
def test_the_static_view_shows_the_binary_that_ran() -> None:
    """The sass command and the Why page build an NVRTC kernel as the launcher does (NVRTC, CuPy's -ftz=true): the
    tuned tile's main loop is the H200's, instruction for instruction, with its four early writes. nvcc's build of
    the same file allocates registers otherwise."""
    static = A.static_sass(get_kernel("v9-regdb-128x256x16-w64x64-t8x16-s3-o3"))
    assert static.compiler == "NVRTC"
    ran = main_loop(listing("v9_tuned_nvrtc_sm90.sass.gz"))
    shown = main_loop(static.function)

    # nvdisasm names branch targets by label, cuobjdump by address: a branch is compared by its opcode.
    def same(i: A.SassInstruction) -> tuple:
        return (i.opcode,) if i.base == "BRA" else form(f"{i.predicate} {i.text}")

    assert len(shown) == len(ran) == 2212
    assert [same(i) for i in shown] == [same(i) for i in ran]
    assert len(static.loop_address_rewrites()) == 4
