"""Kernel lookup by id: catalog entries and the tuning configurations of the templated kernels, and the
operation a kernel named in a saved run or a report performs."""

from __future__ import annotations

import re

from kernels.catalog import _BY_ID as CATALOG_BY_ID
from kernels.catalog import CATALOG, catalog_entry
from kernels.operations import OPERATIONS, OperationSpec
from kernels.spec import KernelSpec
from kernels.tuning import all_tuning_configs, config_by_id, spec_for

# The function name ncu reports for a catalog kernel: its entry without template arguments ("sgemm_async").
# sgemm-auto borrows v9-regdb's entry and runs other kernels' too: a function name never means it.
# The kernels launched where N % 4 != 0 (KernelSpec.narrow_entry) are their entry's.
_BY_FUNCTION = {name: spec for spec in CATALOG if not spec.chooses_at_launch for name in spec.functions}
# Tuning configurations with a function of their own (v9's FFMA-order variants, sgemm_regdb_ordered; v9-splitk's
# stream-K kernels, sgemm_regdb_streamk) are their base kernel's.
for _config in all_tuning_configs():
    for _name in spec_for(_config).functions:
        _BY_FUNCTION.setdefault(_name, catalog_entry(_config["base"]))
_NAME_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_.+-]*")


def get_kernel(kernel_id: str) -> KernelSpec:
    """The catalog entry or tuning configuration `kernel_id`; raises InvalidInput naming the known ids otherwise."""
    if kernel_id in CATALOG_BY_ID:
        return CATALOG_BY_ID[kernel_id]
    config = config_by_id(kernel_id)
    if config is None:
        return catalog_entry(kernel_id)  # raises, naming the known ids
    return spec_for(config)


def find_kernel(name: str) -> KernelSpec | None:
    """The catalog kernel a name from a saved run or a report stands for, or None when it is not one of ours.

    Accepts a catalog or tuning id ("v8-async", "v9-regdb-128x256x16-w64x64-t8x16-s3"), a launch label that
    starts with one ("v5 4096x4096x4096"), and a kernel function name as ncu prints it ("sgemm_async",
    "void sgemm_regdb<128, 256, ...>(const float *, ...)"; several entries of one templated function give one of
    them, all of the same operation).
    """
    text = name.strip()
    first = text.split(None, 1)[0] if text else ""
    for candidate in (text, first):
        if candidate in CATALOG_BY_ID:
            return CATALOG_BY_ID[candidate]
        if config_by_id(candidate) is not None:
            return get_kernel(candidate)
    function = text.removeprefix("void ").split("<", 1)[0].split("(", 1)[0].strip()
    match = _NAME_TOKEN.fullmatch(function)
    return _BY_FUNCTION.get(match.group(0)) if match else None


def operation_of(name: str, operation: str | None = None) -> OperationSpec | None:
    """The operation of a kernel named in a saved run or a report: the record's own `operation` field when it
    has a known one, else the catalog's answer for the name; None for a kernel that is not ours (a foreign
    kernel's tensor-core use is read from its tensor-pipe counters instead, profiling.nsight.report)."""
    if operation in OPERATIONS:
        return OPERATIONS[operation]
    spec = find_kernel(name)
    return spec.operation_spec if spec else None


def is_tensor_core_kernel(name: str, operation: str | None = None) -> bool:
    """Whether a kernel named in a saved run is tensor-core work (measured against the FP16 tensor ceiling)."""
    op = operation_of(name, operation)
    return op is not None and op.is_tensor_core
