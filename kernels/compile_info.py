"""Compile facts from nvcc's resource report (`-Xptxas -v`): registers, shared memory, stack and spills.

Runs on any machine with nvcc, GPU or not, so CI and the Kernels page can show them.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from profiling.paths import tool_path

# What profiling.gpu.compile builds a kernel with, and what CuPy adds to every build of it: the static SASS views
# (profiling.analysis.sass) and scripts/sass_identity.py build with both, so they show the binary that runs.
LAUNCH_OPTIONS = ("-std=c++17", "-lineinfo")
CUPY_ADDED_OPTIONS = ("-ftz=true",)


def cuda_include_dirs() -> list[str]:
    """The CUDA toolkit's include folders (CUDA_HOME, CUDA_PATH, /usr/local/cuda) that exist: NVRTC builds need them
    for cuda_fp16.h and the like."""
    dirs = []
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and os.path.isdir(os.path.join(root, "include")):
            dirs.append(os.path.join(root, "include"))
    return list(dict.fromkeys(dirs))


_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '(sm_\d+a?)'")
_PROPS = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers(?:, used (\d+) barriers)?(?:, (\d+) bytes smem)?")
_GMEM = re.compile(r"ptxas info\s*: (\d+) bytes gmem")


@dataclass(frozen=True)
class FunctionResources:
    """What ptxas reports for one kernel (mangled name as ptxas prints it)."""

    name: str
    arch: str
    registers: int
    barriers: int
    shared_bytes: int
    stack_bytes: int
    spill_store_bytes: int
    spill_load_bytes: int

    @property
    def spills(self) -> int:
        return self.spill_store_bytes + self.spill_load_bytes


def parse_ptxas_report(text: str) -> list[FunctionResources]:
    """Per-kernel resources from the text nvcc prints with -Xptxas -v."""
    found: list[FunctionResources] = []
    name = arch = None
    props: tuple[int, int, int] | None = None
    for line in text.splitlines():
        if m := _ENTRY.search(line):
            name, arch, props = m.group(1), m.group(2), None
        elif (m := _PROPS.search(line)) and name:
            props = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
        elif (m := _USED.search(line)) and name:
            stack, st, ld = props or (0, 0, 0)
            found.append(
                FunctionResources(
                    name=name,
                    arch=arch or "",
                    registers=int(m.group(1)),
                    barriers=int(m.group(2) or 0),
                    shared_bytes=int(m.group(3) or 0),
                    stack_bytes=stack,
                    spill_store_bytes=st,
                    spill_load_bytes=ld,
                )
            )
            name = None
    return found


def module_gmem_bytes(text: str) -> int:
    """Bytes of `__device__` variables in the compiled module(s), from the `N bytes gmem` lines of -Xptxas -v: memory
    the module holds on the GPU from the moment it is loaded (KernelSpec.module_global_bytes)."""
    return sum(int(m.group(1)) for m in _GMEM.finditer(text))


def nvcc_resources(source: Path, arch: str = "sm_90", timeout_s: float = 180.0) -> tuple[list[FunctionResources], str]:
    """Compile `source` to a cubin for `arch`; returns the kernels' resources and the compiler log.

    Raises RuntimeError with the compiler's message when nvcc is missing or the source does not compile.
    """
    nvcc = tool_path("nvcc")
    if nvcc is None:
        raise RuntimeError("nvcc not found: install the CUDA toolkit or put nvcc on PATH")
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
            [nvcc, f"-arch={arch}", "-std=c++17", "-cubin", "-Xptxas", "-v", "-o", f"{tmp}/out.cubin", str(source)],
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
    log = done.stdout + done.stderr
    if done.returncode != 0:
        raise RuntimeError(f"nvcc failed on {source.name} for {arch}:\n{log.strip()[-2000:]}")
    return parse_ptxas_report(log), log


def compile_cubin(source_text: str, arch: str, out: Path, options: list[str], timeout_s: float = 180.0) -> None:
    """Compile CUDA source text to a cubin for exactly `arch` (e.g. sm_90a) at `out`, written atomically.

    Raises RuntimeError with the compiler's message when nvcc is missing or the source does not compile.
    """
    nvcc = tool_path("nvcc")
    if nvcc is None:
        raise RuntimeError(f"nvcc not found: building a kernel for {arch} needs the CUDA toolkit on PATH")
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "kernel.cu"
        src.write_text(source_text)
        done = subprocess.run(
            [nvcc, f"-arch={arch}", *options, "-cubin", "-o", f"{tmp}/out.cubin", str(src)],
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
        if done.returncode != 0:
            raise RuntimeError(f"nvcc failed for {arch}:\n{(done.stdout + done.stderr).strip()[-2000:]}")
        # Copy next to the target, then rename: a concurrent worker never loads a half-written cubin.
        partial = out.with_suffix(f".{os.getpid()}.partial")
        partial.write_bytes(Path(f"{tmp}/out.cubin").read_bytes())
        partial.replace(out)


def entry_matches(mangled: str, entry: str) -> bool:
    """Whether a ptxas (possibly Itanium-mangled) name is the kernel named by a catalog name expression."""
    base, _, targs = entry.partition("<")
    if mangled == base:
        return True
    if f"{len(base)}{base}" not in mangled:
        return False
    if not targs:
        return True
    # Integer template arguments mangle as Li<value>E, in order, and the list closes with E; the arguments a name
    # expression leaves out are defaults, which mangle too: 0 in every template of kernels/src, so
    # 'k<64,3>' is k<64,3,0> and not k<64,3,3>.
    values = [v.strip() for v in targs.rstrip(">").split(",")]
    return re.search(re.escape("".join(f"Li{v}E" for v in values)) + r"(?:Li0E)*E", mangled) is not None
