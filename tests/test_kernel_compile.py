"""Every catalog source compiles with nvcc for sm_80 and sm_90 with no register spills (CPU, needs nvcc)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernels.catalog import CATALOG
from kernels.compile_info import entry_matches, nvcc_resources, parse_ptxas_report
from profiling.paths import tool_path

SOURCES = sorted({s.source for s in CATALOG if s.source})
# Portable sources build for sm_80 and sm_90; an architecture-specific one (wgmma-tma: sm_90a) for its target only.
BUILDS = [
    (source, arch)
    for source in SOURCES
    for arch in sorted({s.arch for s in CATALOG if s.source == source and s.arch} or {"sm_80", "sm_90"})
]
needs_nvcc = pytest.mark.skipif(tool_path("nvcc") is None, reason="nvcc is not installed")


@needs_nvcc
@pytest.mark.parametrize("source,arch", BUILDS)
def test_source_compiles_without_spills(source: str, arch: str) -> None:
    specs = [s for s in CATALOG if s.source == source]
    resources, log = nvcc_resources(specs[0].source_path, arch)
    assert resources, f"ptxas reported no kernels:\n{log}"
    for spec in specs:
        mine = [r for r in resources if entry_matches(r.name, spec.entry)]
        assert mine, f"{spec.entry} not among {[r.name for r in resources]}"
        for r in mine:
            assert r.spills == 0, f"{spec.id} spills {r.spills} bytes on {arch}"
            assert r.stack_bytes == 0 or spec.backend == "nvcc", f"{spec.id} uses a {r.stack_bytes}-byte stack"
            assert r.registers * spec.threads_per_block <= 65536
            assert r.shared_bytes + spec.dynamic_smem_bytes <= 227 * 1024


NVCC_FIXTURES = Path(__file__).parent / "fixtures" / "nvcc"


def test_ptxas_report_parser_on_real_nvcc_output() -> None:
    """nvcc 13.0.88's `-Xptxas -v` report for the catalog's v3 kernel on sm_90 (tests/fixtures/nvcc/README.md)."""
    text = (NVCC_FIXTURES / "ptxas_v3_regblock_sm_90.txt").read_text()
    (r,) = parse_ptxas_report(text)
    assert (r.name, r.arch, r.registers, r.barriers, r.shared_bytes, r.stack_bytes, r.spills) == (
        "sgemm_v3_regblock",
        "sm_90",
        128,
        1,
        8192,
        0,
        0,
    )


def test_ptxas_report_parser_on_real_template_kernels() -> None:
    """Three instantiations of one template in one report, with cmem and compile-time lines (sm_80)."""
    resources = parse_ptxas_report((NVCC_FIXTURES / "ptxas_tiled_sm_80.txt").read_text())
    assert [(r.name, r.arch, r.registers, r.shared_bytes) for r in resources] == [
        ("_Z11sgemm_tiledILi32EEvPKfS1_Pfiii", "sm_80", 32, 8192),
        ("_Z11sgemm_tiledILi16EEvPKfS1_Pfiii", "sm_80", 32, 2048),
        ("_Z11sgemm_tiledILi8EEvPKfS1_Pfiii", "sm_80", 32, 512),
    ]
    assert all(r.barriers == 1 and r.spills == 0 and r.stack_bytes == 0 for r in resources)
    assert entry_matches(resources[1].name, "sgemm_tiled<16>")


def test_ptxas_report_parser_on_bad_input() -> None:
    """Hand-made text (not nvcc's): an entry without its "Used" line, and unrelated text, give nothing."""
    assert parse_ptxas_report("ptxas info    : Compiling entry function 'k' for 'sm_90'\n") == []
    assert parse_ptxas_report("nvcc fatal   : Unsupported gpu architecture 'sm_1'\n") == []


def test_template_entries_match_their_mangled_names() -> None:
    assert entry_matches("_Z11sgemm_tiledILi16EEvPKfS1_Pfiii", "sgemm_tiled<16>")
    assert not entry_matches("_Z11sgemm_tiledILi16EEvPKfS1_Pfiii", "sgemm_tiled<8>")
    assert entry_matches("sgemm_v1_naive", "sgemm_v1_naive")
    # An entry that leaves its FFMA order out is the default order's function, not a longer list's.
    order0 = "_Z18sgemm_regdb_splitkILi64ELi128ELi16ELi32ELi64ELi8ELi8ELi4ELi128ELi3ELi0EEvPKfS1_Pfiii"
    order3 = order0.replace("Li3ELi0EE", "Li3ELi3EE")
    assert entry_matches(order0, "sgemm_regdb_splitk<64,128,16,32,64,8,8,4,128,3>")
    assert not entry_matches(order3, "sgemm_regdb_splitk<64,128,16,32,64,8,8,4,128,3>")
    assert entry_matches(order3, "sgemm_regdb_splitk<64,128,16,32,64,8,8,4,128,3,3>")
