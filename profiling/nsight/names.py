"""Kernel names as ncu prints them (demangled C++, or plain names from nvjet, Triton, CUTLASS), cut down to the
function's own name for display.

`void at::<unnamed>::distribution_elementwise_grid_stride_kernel<float, 4, ...>(at::TensorIteratorBase &, ...)` is
`distribution_elementwise_grid_stride_kernel`: the return type, the namespaces and classes, the template arguments
and the parameter list go; lambdas (`[lambda(float) (instance 1)]`), anonymous namespaces (`<unnamed>`,
`(anonymous namespace)`) and operator names (`operator ()`, `operator<<`) are read as single tokens, so the brackets
inside them do not confuse the nesting. A name cut short (ncu's raw page cuts very long ones) still gives its
function. The full name stays in `KernelLaunch.name`.
"""

from __future__ import annotations

import functools
import re

# Tokens whose brackets are not nesting: anonymous namespaces and lambdas, as ncu and c++filt print them.
_OPAQUE = re.compile(
    r"<unnamed>|\(anonymous namespace\)|\[lambda\([^\[\]]*?\) \(instance \d+\)\]|\{lambda\([^{}]*?\)#\d+\}"
)
# `operator` followed by its symbol: "operator ()", "operator<<", "operator new[]", "operator bool".
_OPERATOR = re.compile(
    r"\boperator\s*(\(\)|\[\]|->\*?|<<=?|>>=?|<=>|[-+*/%^&|~!=<>,]=?|&&|\|\||\+\+|--|new(?:\[\])?|delete(?:\[\])?|\"\"\s*\w+|[A-Za-z_][\w:]*)"
)
_OPEN, _CLOSE = "<([", ">)]"
MAX_NAME_CHARS = 20_000
"""Longer names are cut before reading (PyTorch's longest are a few thousand characters)."""


def _mask(name: str) -> str:
    """`name` with the characters of opaque tokens and operator symbols replaced by "_" (same length), so that
    the bracket scan below sees only real nesting."""
    masked = _OPAQUE.sub(lambda m: "_" * len(m.group(0)), name)
    return _OPERATOR.sub(lambda m: "operator" + "_" * (len(m.group(0)) - len("operator")), masked)


def _top_level(masked: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) of each depth-0 run of `masked`: kind "text", "<", "(" or "[" for bracketed groups."""
    runs: list[tuple[int, int, str]] = []
    depth, start, opener = 0, 0, ""
    for i, ch in enumerate(masked):
        if ch in _OPEN:
            if depth == 0:
                if i > start:
                    runs.append((start, i, "text"))
                start, opener = i, ch
            depth += 1
        elif ch in _CLOSE and depth > 0:
            depth -= 1
            if depth == 0:
                runs.append((start, i + 1, opener))
                start = i + 1
    if start < len(masked):
        runs.append((start, len(masked), "text" if depth == 0 else opener))
    return runs


@functools.lru_cache(maxsize=4096)  # a report names a few kernels thousands of times
def qualified_name(name: str) -> str:
    """The qualified function name without return type, template arguments or parameters:
    'void at::<unnamed>::foo<float>(int)' -> 'at::<unnamed>::foo'."""
    name = name.strip()[:MAX_NAME_CHARS]
    masked = _mask(name)
    parts: list[str] = []
    for start, end, kind in _top_level(masked):
        if kind == "(":
            # The parameter list ends the name; "(...)" right after "::" belongs to a scope such as a lambda's.
            if parts and "".join(parts).rstrip().endswith("::"):
                continue
            break
        if kind == "text":
            parts.append(name[start:end])
    text = "".join(parts).strip()
    # The return type ("void", "static void", "const T1 *") is everything before the last depth-0 space.
    if " " in text:
        masked_text = _mask(text)
        cut = masked_text.rfind(" ")
        text = text[cut + 1 :] if not masked_text[cut + 1 :].startswith("operator") else text
    return text.strip() or name


@functools.lru_cache(maxsize=4096)
def function_name(name: str) -> str:
    """The function's own name, for tables and charts: 'void at::<unnamed>::distribution_elementwise_grid_stride_
    kernel<float, 4, ...>(...)' -> 'distribution_elementwise_grid_stride_kernel'; a plain name comes back as is."""
    qualified = qualified_name(name)
    masked = _mask(qualified)
    # Split at depth-0 "::" (the masked text has no bracket groups left at depth 0 but opaque tokens).
    pieces, start = [], 0
    for match in re.finditer("::", masked):
        pieces.append(qualified[start : match.start()])
        start = match.end()
    pieces.append(qualified[start:])
    pieces = [p.strip() for p in pieces if p.strip()]
    if not pieces:
        return name.strip()[:200] or "?"
    last = pieces[-1]
    if last.startswith("operator") and len(pieces) > 1:
        return f"{pieces[-2]}::{last}"  # Functor::operator () says more than "operator ()"
    return last
