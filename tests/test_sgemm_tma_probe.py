"""scripts/sgemm_tma_probe.cu, issue 31's TMA-fed SGEMM measurement (dropped, results/h200-2026-12-01/tmaprobe/),
still builds as the probe builds it, so its numbers can be measured again (CPU, needs nvcc)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from kernels.compile_info import parse_ptxas_report
from profiling.paths import tool_path

ROOT = Path(__file__).resolve().parents[1]
needs_nvcc = pytest.mark.skipif(tool_path("nvcc") is None, reason="nvcc is not installed")


def _probe() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sgemm_tma_probe", ROOT / "scripts" / "sgemm_tma_probe.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@needs_nvcc
def test_every_entry_the_probe_launches_builds_for_sm_90a_without_spills(tmp_path: Path) -> None:
    probe = _probe()
    resources = parse_ptxas_report(probe.compile_probe(tmp_path / "probe.cubin"))
    # nvcc 13.0.88, as on the H200 that measured it: the TMA builds at the 255-register cap, the mixed ones at 208.
    assert {r.name: (r.arch, r.registers, r.spills, r.stack_bytes) for r in resources} == {
        "sgemm_tma_simt_s3": ("sm_90a", 255, 0, 0),
        "sgemm_tma_simt_s4": ("sm_90a", 255, 0, 0),
        "sgemm_mixed_s3": ("sm_90a", 208, 0, 0),
        "sgemm_mixed_s4": ("sm_90a", 208, 0, 0),
    }
    assert sorted(entry for entry, _, _ in probe.ENTRIES.values()) == sorted(r.name for r in resources)


def test_the_probe_asks_for_the_shared_memory_its_stages_take() -> None:
    probe = _probe()
    # A 128x16 and B 16x256 floats a stage; the mixed build's A is k-major rows of 132 floats (8,448 bytes, a
    # multiple of 128, so B's TMA box lands aligned after it). Plus an mbarrier a stage and 1 KB to align the base.
    assert (probe.STAGE_BYTES, probe.MIXED_STAGE_BYTES) == (24_576, 24_832)
    assert 4 * probe.MIXED_STAGE_BYTES + 8 * 4 + 1024 == 100_384 <= 227 * 1024
