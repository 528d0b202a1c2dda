"""One definition per fact: each of these is written in exactly one module, and a second copy fails here.

- every ncu metric name the product reads by name: profiling/metric_names.py;
- the NVTX contract (`gemmlens:<id>:<MxNxK>`, its regex): profiling/identity.py;
- the tensor-core rule (which launch reads the tensor-pipe counters to decide): profiling/identity.py;
- size parsing (MxNxK text into a Shape): profiling/shape.py;
- TFLOP/s (FLOPs over seconds, in 1e12): profiling/shape.py;
- an unsteady result (its p90 over its p10 against a threshold): profiling/gpu/timing.py.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

from profiling import metric_names
from profiling.nsight import metric_registry as R

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(
    [*ROOT.glob("profiling/**/*.py"), *ROOT.glob("kernels/**/*.py"), *ROOT.glob("pages/*.py"), ROOT / "app.py"]
    + sorted(ROOT.glob("scripts/*.py"))
)


def relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def string_literals(path: Path) -> list[tuple[int, str]]:
    """(line, value) of every plain string literal of a file, docstrings included, f-strings left out."""
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
        if tok.type == tokenize.STRING and not tok.string.lstrip("rRbBuU").startswith(("f", "F")):
            try:
                value = ast.literal_eval(tok.string)
            except (ValueError, SyntaxError):
                continue
            if isinstance(value, str):
                out.append((tok.start[0], value))
    return out


def code_lines(path: Path) -> list[tuple[int, str]]:
    """(number, text) of each line that is code: comments and docstrings left out."""
    source = path.read_text()
    doc_lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                doc_lines.update(range(body[0].lineno, body[0].end_lineno + 1))
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            doc_lines.update(range(node.lineno, node.end_lineno + 1))  # attribute docstrings
    return [
        (n, line.split("#", 1)[0] if not line.lstrip().startswith("#") else "")
        for n, line in enumerate(source.splitlines(), 1)
        if n not in doc_lines
    ]


def names_in_module() -> set[str]:
    out = set()
    for name in dir(metric_names):
        value = getattr(metric_names, name)
        if name.isupper() and isinstance(value, str):
            out.add(value)
        elif name.isupper() and isinstance(value, tuple):
            out.update(v for v in value if isinstance(v, str))
    return out


NAMES = names_in_module()


def test_the_metric_names_module_holds_the_names_the_registry_reads() -> None:
    defs = [v for v in vars(R).values() if isinstance(v, R.MetricDef)]
    assert len(defs) >= 30
    read = {name for d in defs for name in d.names}
    prefixed = {n for n in read if n.startswith("TPC.")}  # a details page's section prefix on a known name
    assert read - prefixed <= NAMES, sorted(read - prefixed - NAMES)
    assert {n.split(".", 2)[2] for n in prefixed} <= NAMES


@pytest.mark.parametrize("path", [p for p in SOURCES if p.name != "metric_names.py"], ids=relative)
def test_no_metric_name_is_typed_twice(path: Path) -> None:
    typed = [(line, value) for line, value in string_literals(path) if value in NAMES]
    assert typed == [], f"{relative(path)} types metric names profiling/metric_names.py defines: {typed[:5]}"


NCU_NAME = re.compile(r"^(?:[A-Za-z]+\.){0,2}[a-z0-9]+__[a-z0-9_]+(?:\.[a-z0-9_]+)*$")
"""The shape of an ncu metric name: unit__counter, then its rollup and submetric (`lts__t_bytes.sum.per_second`),
optionally behind a details page's section prefix."""


@pytest.mark.parametrize("path", [p for p in SOURCES if p.name != "metric_names.py"], ids=relative)
def test_no_new_metric_name_is_typed_outside_the_names_module(path: Path) -> None:
    """A counter with its rollup (`dram__bytes.sum`) is a name the product reads: it belongs in metric_names.py even
    when no other module names it yet."""
    typed = [(line, value) for line, value in string_literals(path) if NCU_NAME.match(value) and "." in value]
    assert typed == [], f"{relative(path)} types ncu metric names; add them to profiling/metric_names.py: {typed[:5]}"


def test_no_metric_name_is_typed_in_two_modules() -> None:
    """The launch and device attributes the parsers map by name (`launch__stack_size`) are typed where they are read,
    but never in a second module."""
    where: dict[str, set[str]] = {}
    for path in SOURCES:
        for _, value in string_literals(path):
            if NCU_NAME.match(value):
                where.setdefault(value, set()).add(relative(path))
    twice = {name: sorted(paths) for name, paths in where.items() if len(paths) > 1}
    assert twice == {}, f"metric names typed in more than one module: {twice}"


NVTX_PATTERN = re.compile(r"gemmlens:[\[(]|gemmlens:\{|\\d\{1,10\}\)x")


@pytest.mark.parametrize("path", [p for p in SOURCES if p.name != "identity.py"], ids=relative)
def test_the_nvtx_contract_is_written_and_read_in_one_module(path: Path) -> None:
    found = [(n, line.strip()) for n, line in code_lines(path) if NVTX_PATTERN.search(line) or "gemmlens:" in line]
    assert found == [], f"{relative(path)} writes or parses the NVTX range itself: {found[:3]}"


TENSOR_DECISION = re.compile(
    r"(?i)tensor\w*\W[^\n]*[<>]=?\s*[\d.]|[<>]=?\s*[\d.]+[^\n]*(?i:tensor)|uses_tensor_cores\("
)


@pytest.mark.parametrize("path", [p for p in SOURCES if p.name != "identity.py"], ids=relative)
def test_only_the_identity_decides_tensor_core_work(path: Path) -> None:
    """No module but profiling/identity.py weighs tensor-pipe counters against a threshold or calls the rule; a
    view asks launch.identity.tensor_core (the catalog's OperationSpec.is_tensor_core answers for our kernels)."""
    found = [(n, line.strip()) for n, line in code_lines(path) if TENSOR_DECISION.search(line)]
    assert found == [], f"{relative(path)} decides tensor-core work itself (read launch.identity): {found[:3]}"


SIZE_PARSING = re.compile(r"""split\(\s*["'][xX]["']|\[xX\*?\]|\[xX\]|\(\\d\+\)\s*x""")


@pytest.mark.parametrize("path", [p for p in SOURCES if p.name not in ("shape.py", "identity.py")], ids=relative)
def test_sizes_are_parsed_in_one_module(path: Path) -> None:
    found = [(n, line.strip()) for n, line in code_lines(path) if SIZE_PARSING.search(line)]
    assert found == [], f"{relative(path)} parses MxNxK itself (use profiling.shape): {found[:3]}"


TFLOPS = re.compile(r"\bflops\b[^#\n]*/[^#\n]*1e12|\bflops\b[^#\n]*/\s*\w*_ns\b\s*/\s*1e3|1e-12\s*\*[^#\n]*\bflops\b")
"""A rate of FLOPs over a time in TFLOP/s (a peak worked out from clocks, or a FLOP/s figure scaled for display,
is not one)."""


@pytest.mark.parametrize("path", [p for p in SOURCES if p.name != "shape.py"], ids=relative)
def test_tflops_is_computed_in_one_function(path: Path) -> None:
    found = [(n, line.strip()) for n, line in code_lines(path) if TFLOPS.search(line)]
    assert found == [], f"{relative(path)} computes TFLOP/s itself (use profiling.shape.tflops): {found[:3]}"


UNSTEADY = re.compile(r"\bp90\b[^#\n]*/[^#\n]*\bp10\b|\bp90\b[^#\n]*>[^#\n]*\bp10\b|UNSTEADY_RATIO\s*=[^=]")
"""A ratio or comparison of a result's slowest tenth to its fastest, or the threshold set again."""


@pytest.mark.parametrize("path", [p for p in SOURCES if relative(p) != "profiling/gpu/timing.py"], ids=relative)
def test_unsteady_times_are_told_in_one_module(path: Path) -> None:
    found = [(n, line.strip()) for n, line in code_lines(path) if UNSTEADY.search(line)]
    assert found == [], f"{relative(path)} judges p90 against p10 itself (use profiling.gpu.timing): {found[:3]}"


def test_the_checks_catch_a_second_copy(tmp_path: Path) -> None:
    copy = tmp_path / "copy.py"
    copy.write_text(
        'T = "gpu__time_duration.sum"\n'
        'NEW = "l1tex__a_counter_nobody_named.sum"\n'
        'RANGE = re.compile(r"gemmlens:([A-Za-z0-9_.+-]+):(\\d{1,10})x(\\d{1,10})x(\\d{1,10})")\n'
        'm, n, k = text.split("x")\n'
        "rate = flops / seconds / 1e12\n"
        "tensor = pipe_busy >= 1.0 and tensor_inst > 0\n"
        "shaky = ref.time_ms.p90 / ref.time_ms.p10 > 2.0\n"
        "shaky = t.p90 > 2 * t.p10\n"
    )
    assert [v for _, v in string_literals(copy) if v in NAMES] == ["gpu__time_duration.sum"]
    assert [v for _, v in string_literals(copy) if NCU_NAME.match(v)] == [
        "gpu__time_duration.sum",
        "l1tex__a_counter_nobody_named.sum",
    ]
    lines = [line for _, line in code_lines(copy)]
    assert NVTX_PATTERN.search(lines[2]) and SIZE_PARSING.search(lines[3]) and TFLOPS.search(lines[4])
    assert TENSOR_DECISION.search(lines[5]) and UNSTEADY.search(lines[6]) and UNSTEADY.search(lines[7])
