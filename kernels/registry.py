"""Kernel lookup by id: catalog entries and the tuning configurations of the templated kernels."""

from __future__ import annotations

from kernels import tuning
from kernels.catalog import _BY_ID as CATALOG_BY_ID
from kernels.catalog import KernelSpec, catalog_entry


def get_kernel(kernel_id: str) -> KernelSpec:
    """The catalog entry or tuning configuration `kernel_id`; raises InvalidInput naming the known ids otherwise."""
    if kernel_id in CATALOG_BY_ID:
        return CATALOG_BY_ID[kernel_id]
    config = tuning.config_by_id(kernel_id)
    if config is None:
        return catalog_entry(kernel_id)  # raises, naming the known ids
    return tuning.spec_for(config)
