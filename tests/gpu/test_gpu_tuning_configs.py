"""On a GPU: every tuning configuration of the templated SGEMM kernels (v8-async, v9-regdb incl. its FFMA orders,
v8-splitk) matches cuBLAS at awkward sizes: 1, 17 and 129 cubed, M or N of 1, K not a multiple of the slice, and
edge tiles in both directions. The catalog tests run only each kernel's default or tuned configuration; the tuned
choice may pick any of these."""

from __future__ import annotations

import pytest

from kernels.registry import get_kernel
from kernels.tuning import all_tuning_configs
from profiling.shape import Shape
from tests.gpu.jobs import run_by_kernel_and_shape, selected_values

pytestmark = pytest.mark.gpu

CONFIG_IDS = [c["id"] for c in all_tuning_configs()]
SHAPES = [
    Shape(1, 1, 1),
    Shape(17, 17, 17),
    Shape(129, 129, 129),
    Shape(1, 333, 77),
    Shape(333, 1, 77),
    Shape(300, 264, 72),
    Shape(257, 130, 1001),
]


@pytest.fixture(scope="module")
def verified(request: pytest.FixtureRequest) -> dict[tuple[str, Shape], dict]:
    config_ids = selected_values(request, "config_id", CONFIG_IDS)
    return run_by_kernel_and_shape("verify", [get_kernel(config_id) for config_id in config_ids], SHAPES)[1]


@pytest.mark.parametrize("config_id", CONFIG_IDS)
def test_configuration_matches_cublas_at_awkward_sizes(verified, config_id: str) -> None:
    mine = {shape: r for (kernel, shape), r in verified.items() if kernel == config_id}
    assert set(mine) == set(SHAPES)
    spec = get_kernel(config_id)
    for shape, r in mine.items():
        if spec.pads_n and shape.n % 4 == 0:
            # A padded configuration is its unpadded twin wherever N % 4 == 0: it refuses and names the twin.
            assert r["status"] == "refused", f"{config_id} at {shape.label}"
            assert f"run {config_id.removesuffix(spec.padded_suffix)}" in r["error"], r["error"]
            continue
        assert r["status"] == "ok", f"{config_id} at {shape.label}: {r['error']}"
        assert r["rel_error"] <= r["tolerance"], f"{config_id} at {shape.label}"


def test_v9_configurations_run_their_narrow_kernel_where_n_is_not_a_multiple_of_4(verified) -> None:
    """What ran is what the result names: a v9 configuration's narrow twin at N = 1, 17, 129, 333 and 1, its own
    kernel at N = 264 and 130."""
    seen = set()
    for (kernel, shape), r in verified.items():
        spec = get_kernel(kernel)
        if spec.narrow_entry:
            assert r["config"] == (spec.narrow_entry if shape.n % 4 else spec.entry), f"{kernel} at {shape.label}"
            seen.add(shape.n % 4 == 0)
    assert seen == {True, False}
