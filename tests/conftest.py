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


@pytest.fixture
def offline_app(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """For a test that runs app.py through AppTest: no GPU work, a fresh run store in tmp_path, and no cached state
    from earlier tests."""
    import streamlit as st

    monkeypatch.setenv("GEMMLENS_GPU", "off")
    monkeypatch.setenv("GEMMLENS_DB_PATH", str(tmp_path / "runs.sqlite"))
    monkeypatch.delenv("GEMMLENS_DB_URL", raising=False)
    st.cache_data.clear()
    st.cache_resource.clear()
