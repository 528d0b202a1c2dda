"""Shared pytest setup: the `gpu` marker skips itself where no CUDA GPU is usable."""

from __future__ import annotations

import pytest

from profiling.gpu.env import gpu_unavailable_reason


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = None
    for item in items:
        if "gpu" in item.keywords:
            if reason is None:
                reason = gpu_unavailable_reason() or ""
            if reason:
                item.add_marker(pytest.mark.skip(reason=f"needs a CUDA GPU: {reason}"))
