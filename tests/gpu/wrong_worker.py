"""The GPU worker child with the test tree's deliberately wrong kernels (wrong_kernels.cu) added to its lookup.

tests/gpu/test_gpu_wrong_kernels.py starts it through `run_job(job, command=...)` in place of
`python -m profiling worker --job FILE`. Only the kernel lookup differs: compiling, the NaN poison, the
launch, the verification and the timing are the worker's own code, as for catalog kernels.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from kernels.spec import KernelSpec

SOURCE = Path(__file__).resolve().parent / "wrong_kernels.cu"


def _spec(kernel_id: str, entry: str, adds: str) -> KernelSpec:
    return KernelSpec(
        id=kernel_id,
        title=kernel_id,
        adds=adds,
        operation="sgemm",
        source=str(SOURCE),  # absolute: KernelSpec.source_path joins it onto kernels/src unchanged
        entry=entry,
        block=(16, 16),
        tile_m=16,
        tile_n=16,
        grid_order="cols_x",
        group="test",
    )


CONTROL = _spec("test-control", "sgemm_test_control", "the same tiled kernel, correct")
WRONG = (
    _spec("test-off-by-one", "sgemm_test_off_by_one", "the K loop stops one element short"),
    _spec("test-skip-last-k-tile", "sgemm_test_skip_last_k_tile", "runs (K - 1) / 16 tiles, not ceil(K / 16)"),
    _spec("test-corner-unwritten", "sgemm_test_corner_unwritten", "never writes the bottom-right 8x8 of C"),
    _spec("test-writes-nan", "sgemm_test_writes_nan", "writes a NaN at (M / 2, N / 2)"),
)
SPECS = {spec.id: spec for spec in (CONTROL, *WRONG)}


def main(argv: list[str]) -> int:
    from profiling.gpu import runner
    from profiling.gpu.jobs import Job
    from profiling.gpu.worker import child_main

    catalog_lookup = runner.get_kernel
    runner.get_kernel = lambda kernel_id: SPECS.get(kernel_id) or catalog_lookup(kernel_id)
    job = Job.from_dict(json.loads(Path(argv[argv.index("--job") + 1]).read_text()))
    return child_main(job)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
