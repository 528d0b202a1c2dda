"""The occupancy calculator agrees with the CUDA driver's occupancy API, as recorded on a real GPU.

Every bundled benchmark result carries `launch.max_active_blocks_per_sm` from
cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor, with the kernel's registers and shared memory.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profiling.analysis.occupancy import theoretical_occupancy

RESULTS = Path(__file__).resolve().parent.parent / "results"


def _recorded_launches() -> list[tuple[str, dict]]:
    seen: dict[tuple, tuple[str, dict]] = {}
    for path in sorted(RESULTS.rglob("bench*.json")):
        doc = json.loads(path.read_text())
        for r in doc["results"]:
            launch, comp = r.get("launch"), r.get("compile")
            if launch and comp and "max_active_blocks_per_sm" in launch:
                key = (r["kernel"], doc["device"]["name"])
                seen[key] = (doc["device"]["cc"], r)
    return [(f"{k[0]}@{k[1]}", v) for k, v in seen.items()]


RECORDED = _recorded_launches()


def test_real_results_are_bundled() -> None:
    assert len(RECORDED) >= 9, "bundled results must cover the ladder"


@pytest.mark.parametrize("name,entry", RECORDED, ids=[n for n, _ in RECORDED])
def test_calculator_matches_driver(name: str, entry: tuple[str, dict]) -> None:
    cc, r = entry
    comp, launch = r["compile"], r["launch"]
    threads = launch["block"][0] * launch["block"][1]
    result = theoretical_occupancy(
        cc, threads, comp["registers"], comp["shared_static_bytes"] + launch["dynamic_smem_bytes"]
    )
    assert result.active_blocks_per_sm == launch["max_active_blocks_per_sm"], result.describe()
