"""Moved to profiling.device_model (the domain layer, so gpu/ and kernels/ can read it); this name stays importable
for code written against it."""

from profiling.device_model import *  # noqa: F403
