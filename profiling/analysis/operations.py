"""Moved to profiling.launch_operations (below runs/, which groups saved launches with it); this name stays
importable for code written against it."""

from profiling.launch_operations import *  # noqa: F403
from profiling.launch_operations import OPERATION_COLUMNS, operations_frame  # noqa: F401
