"""Programmatic dependent launch: which operations' launches are programmatic, what the launch facts record, the
launch arguments handed to cuda-bindings, and that the kernels so launched wait for the launch before them in their
machine code (NVRTC on the CPU; the timings and checks on a GPU are scripts/pdl_probe.py's)."""

from __future__ import annotations

import ctypes
from types import SimpleNamespace

import numpy as np
import pytest

from kernels.compile_info import entry_matches
from kernels.registry import get_kernel
from kernels.spec import SPLIT_K_PAD_ENTRY, SPLIT_K_UNPAD_ENTRY, SPLIT_K_ZERO_ENTRY
from kernels.tuning import config_by_id, spec_for
from profiling.analysis.sass import disassemble, find_binary, launcher_cubin, parse_nvdisasm
from profiling.gpu.compile import CompiledKernel
from profiling.gpu.device import compute_capability
from profiling.gpu.pdl import kernel_params
from profiling.gpu.runner import Problem, launch_facts
from profiling.shape import Shape

PADDED = "v9-splitk-256x128x16-w64x64-t16x8-s3-o4-sk-pad"
needs_nvdisasm = pytest.mark.skipif(find_binary("nvdisasm") is None, reason="nvdisasm is not installed")


def spec(config_id: str):
    return spec_for(config_by_id(config_id))


def test_v9_splitk_operations_launch_programmatically_on_hopper_only() -> None:
    padded = spec(PADDED)
    assert padded.programmatic_launches("9.0")
    assert padded.programmatic_launches("10.0")
    assert not padded.programmatic_launches("8.0")
    assert not padded.programmatic_launches("")
    assert spec("v9-splitk-64x64x16-w32x64-t8x8-s3-d8").programmatic_launches("9.0")


def test_the_compute_capability_the_launch_rule_reads_comes_from_the_device_properties() -> None:
    # CUDA's properties give NumPy integers on some CuPy builds; the rule compares the text.
    assert compute_capability({"major": np.int32(9), "minor": np.int32(0)}) == "9.0"
    assert compute_capability({"major": 10, "minor": 0}) == "10.0"
    assert spec(PADDED).programmatic_launches(compute_capability({"major": 9, "minor": 0}))
    assert not spec(PADDED).programmatic_launches(compute_capability({"major": 8, "minor": 6}))


def test_kernels_that_do_not_wait_are_never_launched_programmatically() -> None:
    # v8-splitk's multiply does not wait for the zeroing launch: a programmatic launch could add into C before it is 0.
    assert not get_kernel("v8-splitk").programmatic_launches("9.0")
    assert not get_kernel("v9-regdb").programmatic_launches("9.0")
    assert not spec("v9-splitk-256x128x16-w64x64-t16x8-s3-o4-sk-fused").programmatic_launches("9.0")


def test_launch_facts_mark_every_launch_after_the_first() -> None:
    facts = launch_facts(spec(PADDED).launched_at(127), Shape(4096, 127, 4096), 132, "9.0")
    assert [(launch["kernel"], launch.get("programmatic", False)) for launch in facts["launches"]] == [
        (SPLIT_K_PAD_ENTRY, False),
        ("sgemm_regdb_streamk<256,128,16,64,64,16,8,3,256,1,4>", True),
        (SPLIT_K_UNPAD_ENTRY, True),
    ]
    on_ampere = launch_facts(spec(PADDED).launched_at(127), Shape(4096, 127, 4096), 108, "8.0")
    assert not any("programmatic" in launch for launch in on_ampere["launches"])


class _Plain:
    """A CuPy kernel stand-in that records its plain launches."""

    def __init__(self, name: str, calls: list) -> None:
        self.name, self.calls = name, calls

    def __call__(self, grid, block, args, shared_mem=0) -> None:
        self.calls.append(("plain", self.name))


@pytest.mark.parametrize(
    ("config_id", "n", "expected"),
    [
        (PADDED, 127, [("plain", SPLIT_K_PAD_ENTRY), ("programmatic", "gemm"), ("programmatic", SPLIT_K_UNPAD_ENTRY)]),
        ("v9-splitk-64x64x16-w32x64-t8x8-s3-d8", 64, [("plain", SPLIT_K_ZERO_ENTRY), ("programmatic", "gemm")]),
        # Serial splits come first and do not wait: only the copy back after them is programmatic.
        (
            "v9-splitk-64x128x16-w32x64-t8x8-s3-d8-zf-padc",
            127,
            [("plain", "gemm"), ("programmatic", SPLIT_K_UNPAD_ENTRY)],
        ),
        ("v9-splitk-64x64x16-w32x64-t8x8-s3-d32-zf", 64, [("plain", "gemm")]),
    ],
)
def test_an_operation_s_first_launch_is_plain_and_the_launches_after_it_programmatic(
    monkeypatch, config_id: str, n: int, expected: list
) -> None:
    calls: list = []

    def programmatic_launch(fn, grid, block, args, shared_mem=0):
        return lambda: calls.append(("programmatic", fn.name))

    monkeypatch.setattr("profiling.gpu.pdl.programmatic_launch", programmatic_launch)
    built = spec(config_id).launched_at(n)
    helpers = {name: _Plain(name, calls) for name in built.helper_entries}
    problem = Problem.from_arrays(
        np, "sgemm", Shape(300, n, 2000), np.ones((300, 2000), np.float32), np.ones((2000, n), np.float32)
    )
    problem.launcher(CompiledKernel(built, _Plain("gemm", calls), {}, helpers), built, 132, programmatic=True)()
    assert calls == expected


def test_kernel_params_pass_arrays_by_address_and_scalars_by_their_type() -> None:
    array = SimpleNamespace(data=SimpleNamespace(ptr=0x7F0000001000))
    values, types = kernel_params((array, np.int32(-5), np.int64(1 << 40), np.float32(0.5)))
    assert values == (0x7F0000001000, -5, 1 << 40, 0.5)
    assert types == (ctypes.c_void_p, ctypes.c_int32, ctypes.c_int64, ctypes.c_float)


def test_kernel_params_refuse_a_python_int_with_what_to_pass() -> None:
    with pytest.raises(TypeError, match="no launch argument type for int: pass a device array or a NumPy scalar"):
        kernel_params((7,))


def functions(config_id: str, build_spec=None):
    built = build_spec or spec(config_id)
    cubin, _ = launcher_cubin(built, "sm_90")
    return parse_nvdisasm(disassemble(cubin, find_binary("nvdisasm")))


def first_memory_access(function) -> int:
    """Index of the function's first global load, store, copy into shared memory or reduction."""
    return next(i for i, ins in enumerate(function.instructions) if ins.base in ("LDG", "STG", "LDGSTS", "RED", "ATOM"))


@needs_nvdisasm
def test_every_kernel_of_a_v9_splitk_operation_waits_before_it_touches_memory() -> None:
    built = spec(PADDED)
    by_name = {f.name: f for f in functions(PADDED)}
    multiply = next(f for name, f in by_name.items() if entry_matches(name, built.entry))
    for function in (multiply, by_name[SPLIT_K_ZERO_ENTRY], by_name[SPLIT_K_PAD_ENTRY], by_name[SPLIT_K_UNPAD_ENTRY]):
        opcodes = [ins.base for ins in function.instructions]
        # griddepcontrol.wait is ACQBULK, griddepcontrol.launch_dependents PREEXIT.
        assert opcodes.index("ACQBULK") < first_memory_access(function), function.name
        assert "PREEXIT" in opcodes, function.name


@needs_nvdisasm
def test_serial_splits_are_first_launches_and_trigger_only_a_copy_back() -> None:
    # Serial splits need no zeroing launch, so nothing comes before them; where they pad C the copy back follows.
    for config_id, followed in (
        ("v9-splitk-64x64x16-w32x64-t8x8-s3-d32-zf", False),
        ("v9-splitk-64x128x16-w32x64-t8x8-s3-d8-ser", False),
        ("v9-splitk-64x128x16-w32x64-t8x8-s3-d8-zf-padc", True),
    ):
        built = spec(config_id).launched_at(127)
        function = next(f for f in functions(config_id, built) if entry_matches(f.name, built.entry))
        opcodes = {ins.base for ins in function.instructions}
        assert "ACQBULK" not in opcodes, config_id
        assert ("PREEXIT" in opcodes) == followed, config_id


@needs_nvdisasm
def test_kernels_outside_the_programmatic_sources_hold_no_wait() -> None:
    for kernel_id in ("v9-regdb", "v8-splitk"):
        opcodes = {ins.base for f in functions(kernel_id, get_kernel(kernel_id)) for ins in f.instructions}
        assert not opcodes & {"ACQBULK", "PREEXIT"}, kernel_id
