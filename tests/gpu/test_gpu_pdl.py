"""On a GPU of compute capability 9.0 or newer: v9-splitk's operations launched as the runner launches them there, the
launches after the first programmatic (profiling.gpu.pdl), match cuBLAS after one operation and after 20 enqueued back
to back, for each kind of operation (padding and copy-back launches around the multiply, C's copy alone, a zeroing
launch), as the build without the waits and with plain launches do; and the worker records which launches were
programmatic; ncu, which launches them plainly, captures every launch of such an operation."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernels.registry import get_kernel
from kernels.spec import SPLIT_K_PAD_ENTRY, SPLIT_K_UNPAD_ENTRY
from profiling.gpu.jobs import BenchSettings
from profiling.nsight import runner as R
from profiling.paths import tool_path
from profiling.shape import Shape
from tests.gpu.jobs import run_by_kernel_and_shape, run_probe

pytestmark = pytest.mark.gpu
PROBE = Path(__file__).resolve().parents[2] / "scripts" / "pdl_probe.py"
CASES = [
    ("300x127x2000", "v9-splitk-256x128x16-w64x64-t16x8-s3-o4-sk-pad"),
    ("333x127x4097", "v9-splitk-256x128x16-w64x64-t16x8-s3-o4-sk-padc"),
    ("129x17x1001", "v9-splitk-64x64x16-w32x64-t8x8-s3-d8"),
    ("127x127x4096", "v9-splitk-64x128x16-w32x64-t8x8-s3-d8-zf-padc"),
]


@pytest.fixture(scope="module")
def probe() -> dict:
    return run_probe(PROBE, "--repeats", "5", "--json", "--cases", ",".join(f"{s}:{c}" for s, c in CASES))


def test_every_build_and_launch_kind_matches_cublas_after_one_and_after_20(probe: dict) -> None:
    rows = probe["rows"]
    assert [(r["shape"], r["config_id"]) for r in rows if r["build"] == "as built, programmatic launches"] == CASES
    for row in rows:
        if row["build"] == "cuBLAS":
            continue
        assert row["check"].startswith("ok (") and row["after_back_to_back"].startswith("ok ("), row


def test_the_worker_records_the_programmatic_launches() -> None:
    spec = get_kernel("v9-splitk-256x128x16-w64x64-t16x8-s3-o4-sk-pad")
    device, results = run_by_kernel_and_shape("verify", [spec], [Shape(300, 127, 2000)], BenchSettings(repeats=1))
    result = results[(spec.id, Shape(300, 127, 2000))]
    assert result["status"] == "ok", result["error"]
    expected = spec.programmatic_launches(device["cc"])
    assert [launch.get("programmatic", False) for launch in result["launch"]["launches"]] == [False, expected, expected]


@pytest.mark.skipif(tool_path("ncu") is None, reason="Nsight Compute (ncu) is not installed")
def test_ncu_captures_the_three_launches_of_a_padded_operation(tmp_path: Path) -> None:
    config_id = "v9-splitk-256x128x16-w64x64-t16x8-s3-o4-sk-pad"
    run = R.profile([config_id], [(300, 127, 2000)], tmp_path / "pad.ncu-rep", metric_set="quick")
    assert [x.function for x in run.report.launches] == [SPLIT_K_PAD_ENTRY, "sgemm_regdb_streamk", SPLIT_K_UNPAD_ENTRY]
