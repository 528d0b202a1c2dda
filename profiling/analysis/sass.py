"""Static SASS of a catalog kernel without a GPU: compile with `nvcc -cubin -lineinfo`, disassemble with nvdisasm
(line information, `-gi`) or cuobjdump (`-sass`, no lines), then count the instruction mix the ladder changes:
FFMA per shared-memory load, LDS vs LDS.128, LDG vs LDGSTS (cp.async), barriers, HMMA.

nvdisasm and cuobjdump come with the CUDA toolkit, or from the PyPI wheels nvidia-cuda-nvdisasm and
nvidia-cuda-cuobjdump (their binaries sit under site-packages/nvidia/cu13/bin, found here too).
"""

from __future__ import annotations

import ctypes
import functools
import glob
import hashlib
import importlib.util
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernels.compile_info import CUPY_ADDED_OPTIONS, LAUNCH_OPTIONS, cuda_include_dirs, entry_matches
from kernels.spec import KernelSpec
from profiling.errors import GemmLensError, InvalidInput
from profiling.paths import tool_path

INSTALL_HINT = (
    "install the CUDA toolkit, or `pip install nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump` (the PyPI wheels; "
    "found under site-packages/nvidia/*/bin)"
)

_SECTION = re.compile(r"^//-+ \.text\.(\S+)\s+-+$")
_LABEL = re.compile(r"^(\.L_x_\d+|\.L_\w+):")
_LOCATION = re.compile(r'^\s*//## File "([^"]*)", line (\d+)(?: inlined at "([^"]*)", line (\d+))?')
_INSTRUCTION = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*(?:/\*.*\*/)?\s*$")
_CUOBJDUMP_FUNCTION = re.compile(r"^\s*Function : (\S+)")
_PREDICATE = re.compile(r"^(@!?U?P[T0-9]+)\s+")
_BRANCH_TARGET = re.compile(r"`\((\.L\w+)\)|\b(0x[0-9a-f]+)\b")
_WIDTHS = {"U8": 8, "S8": 8, "U16": 16, "S16": 16, "32": 32, "64": 64, "128": 128}


class SassError(GemmLensError):
    """nvcc, nvdisasm or cuobjdump is missing or failed."""


@dataclass(frozen=True)
class SassInstruction:
    """One instruction of the static listing; `line` is the innermost CUDA line (an inlined function's own line),
    `inlined_at` the call sites outward."""

    offset: int
    text: str
    predicate: str = ""
    line: int | None = None
    file: str | None = None
    inlined_at: tuple[int, ...] = ()

    @property
    def opcode(self) -> str:
        """'LDS.128 R4, [R2]' -> 'LDS.128'."""
        return self.text.split(None, 1)[0] if self.text else ""

    @property
    def base(self) -> str:
        """'LDS.128' -> 'LDS'."""
        return self.opcode.split(".", 1)[0]

    def width_bits(self) -> int:
        """Access width of a load or store (32 unless the opcode says .64, .128, .U8...)."""
        for part in self.opcode.split(".")[1:]:
            if part in _WIDTHS:
                return _WIDTHS[part]
        return 32

    def to_dict(self) -> dict[str, Any]:
        return {
            "offset": f"0x{self.offset:04x}",
            "sass": f"{self.predicate} {self.text}".strip(),
            "line": self.line,
            "inlined_at": list(self.inlined_at),
        }


def classify(ins: SassInstruction) -> str | None:
    """The mix class of an instruction: 'FFMA', 'LDS.128', 'LDG.32', 'LDGSTS.128', 'BAR', 'HMMA'... or None."""
    base, opcode = ins.base, ins.opcode
    if base == "HFMA2":
        return None if ".MMA" in opcode else base  # HFMA2.MMA is how ptxas moves a constant into a register
    if base in ("FFMA", "FADD", "FMUL", "HMMA", "HGMMA", "IMMA", "LDSM", "LDGDEPBAR", "DEPBAR", "EXIT"):
        return base
    if base in ("LDS", "STS", "LDG", "STG", "LDGSTS", "LDL", "STL"):
        return f"{base}.{ins.width_bits()}"
    if base == "BAR":
        return "BAR"
    if base in ("BRA", "BRX", "JMP"):
        return "BRA"
    return None


@dataclass
class InstructionMix:
    """Instruction counts of one region (the whole kernel or its main loop)."""

    counts: dict[str, int] = field(default_factory=dict)
    total: int = 0

    def get(self, prefix: str) -> int:
        """Sum of classes starting with `prefix` ('LDS' -> LDS.32 + LDS.64 + LDS.128)."""
        return sum(n for k, n in self.counts.items() if k == prefix or k.startswith(prefix + "."))

    @property
    def shared_loads(self) -> int:
        return self.get("LDS") + self.get("LDSM")

    @property
    def math(self) -> int:
        """FFMA for the FP32 kernels, HMMA / HGMMA for the tensor-core ones."""
        return self.get("FFMA") + self.get("HMMA") + self.get("HGMMA")

    @property
    def math_per_shared_load(self) -> float | None:
        return self.math / self.shared_loads if self.shared_loads else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "counts": dict(sorted(self.counts.items())),
            "ffma": self.get("FFMA"),
            "hmma": self.get("HMMA") + self.get("HGMMA"),
            "lds": self.get("LDS"),
            "lds_128": self.counts.get("LDS.128", 0),
            "ldsm": self.get("LDSM"),
            "sts": self.get("STS"),
            "ldg": self.get("LDG"),
            "ldgsts": self.get("LDGSTS"),
            "bar": self.get("BAR"),
            "math_per_shared_load": self.math_per_shared_load,
        }


def count_mix(instructions: list[SassInstruction]) -> InstructionMix:
    mix = InstructionMix(total=len(instructions))
    for ins in instructions:
        cls = classify(ins)
        if cls is not None:
            mix.counts[cls] = mix.counts.get(cls, 0) + 1
    return mix


@dataclass
class SassFunction:
    """One kernel's static SASS."""

    name: str
    instructions: list[SassInstruction]
    labels: dict[str, int] = field(default_factory=dict)
    has_lines: bool = False

    def loops(self) -> list[tuple[int, int]]:
        """(first, last) offsets of each backward branch's region, innermost first."""
        found = set()
        for ins in self.instructions:
            if ins.base not in ("BRA", "BRX", "JMP"):
                continue
            match = _BRANCH_TARGET.search(ins.text)
            if not match:
                continue
            target = self.labels.get(match.group(1)) if match.group(1) else int(match.group(2), 16)
            if target is not None and target <= ins.offset:
                found.add((target, ins.offset))
        return sorted(found, key=lambda r: (r[1] - r[0], r[0]))

    def region(self, first: int, last: int) -> list[SassInstruction]:
        return [i for i in self.instructions if first <= i.offset <= last]

    def main_loop(self) -> tuple[int, int] | None:
        """The loop holding the most FFMA/HMMA (the innermost of equals): the GEMM's k loop."""
        best, best_math = None, 0
        for first, last in self.loops():
            math = count_mix(self.region(first, last)).math
            if math > best_math:
                best, best_math = (first, last), math
        return best

    def by_line(self) -> dict[int, list[SassInstruction]]:
        """Instructions per innermost CUDA line, in line order."""
        lines: dict[int, list[SassInstruction]] = {}
        for ins in self.instructions:
            if ins.line is not None:
                lines.setdefault(ins.line, []).append(ins)
        return dict(sorted(lines.items()))

    def by_source_line(self) -> dict[tuple[str, int], list[SassInstruction]]:
        """Instructions per innermost (file name, line): a kernel's lines and those of the headers it includes
        (v8_body.cuh holds v8-async's body) share line numbers, so the file is part of the key."""
        lines: dict[tuple[str, int], list[SassInstruction]] = {}
        for ins in self.instructions:
            if ins.line is not None:
                lines.setdefault((Path(ins.file).name if ins.file else "", ins.line), []).append(ins)
        return dict(sorted(lines.items()))


# How many instructions after a cp.async copy (LDGSTS) a write of one of its address registers counts as early: the
# copy reads its registers only when the load/store unit takes it, and a write before that waits on the long
# scoreboard. v9-regdb's tuned tile (NVRTC, sm_90) writes them 12-16 instructions on, behind a slice's 12 copies
# issued at once: at 2048^3 on an H200, 1,556 of its 1,743 long-scoreboard samples sat on three such writes.
ADDRESS_REWRITE_WINDOW = 16
SASS_INSTRUCTION_BYTES = 16  # every instruction since Volta (sm_70)
_ADDRESS = re.compile(r"\[([^\]]*)\]")
_ADDRESS_REGISTER = re.compile(r"\bR(\d+)(\.64)?")
_DESTINATION = re.compile(r"^\S+\s+R(\d+)\b")


def _address_registers(ins: SassInstruction) -> set[int]:
    """The general registers inside an instruction's [...] operands (both halves of an R.64 pair)."""
    found: set[int] = set()
    for operand in _ADDRESS.findall(ins.text):
        for number, pair in _ADDRESS_REGISTER.findall(operand):
            found.update((int(number), int(number) + 1) if pair else (int(number),))
    return found


def _written_registers(ins: SassInstruction) -> set[int]:
    """The general registers an instruction writes from its first operand on: one, two for a .WIDE or .64 result,
    a load's width in words (LDS.128: four). Stores, copies and branches (whose first operand, if any, is read)
    write none."""
    if ins.base in ("LDGSTS", "STS", "STG", "STL", "ST", "RED", "ATOM", "BAR", "BRA", "DEPBAR", "EXIT"):
        return set()
    match = _DESTINATION.match(ins.text)
    if not match:
        return set()
    first = int(match.group(1))
    if ins.base in ("LDS", "LDG", "LDL", "LD"):
        words = ins.width_bits() // 32
    else:
        words = 2 if ".WIDE" in ins.opcode or ".64" in ins.opcode else 1
    return set(range(first, first + max(words, 1)))


def early_address_rewrites(
    instructions: list[SassInstruction], window: int = ADDRESS_REWRITE_WINDOW
) -> list[tuple[SassInstruction, SassInstruction]]:
    """(copy, write) for each cp.async copy (LDGSTS) one of whose address registers an instruction within `window`
    after it writes: where ptxas hands a copy's address registers on while the copy may not have read them yet."""
    found = []
    for i, ins in enumerate(instructions):
        if ins.base != "LDGSTS":
            continue
        registers = _address_registers(ins)
        for later in instructions[i + 1 : i + 1 + window]:
            if _written_registers(later) & registers:
                found.append((ins, later))
                break
    return found


@dataclass
class StaticSass:
    """What `sass --kernel` shows: the kernel's SASS, its mix, its main loop's mix and SASS per CUDA line."""

    kernel_id: str
    entry: str
    arch: str
    function: SassFunction
    source_lines: list[str]
    """The kernel's own file as nvcc compiled it (on disk, headers not pasted in)."""
    tool: str
    headers: dict[str, list[str]] = field(default_factory=dict)
    """Lines of our headers (kernels/src/*.cuh) by file name: inlined code reports their line numbers."""
    compiler: str = "nvcc"
    """What built it, as the launcher does: "NVRTC" (with CuPy's options) or "nvcc" (the sm_90a kernels)."""

    def line_text(self, file: str | None, line: int) -> str:
        """The text of `line` of `file` (a header of ours by its name, else the kernel's own file)."""
        lines = self.headers.get(Path(file).name, self.source_lines) if file else self.source_lines
        return lines[line - 1] if 0 < line <= len(lines) else ""

    @property
    def mix(self) -> InstructionMix:
        return count_mix(self.function.instructions)

    @property
    def loop_mix(self) -> InstructionMix | None:
        loop = self.function.main_loop()
        return count_mix(self.function.region(*loop)) if loop else None

    def loop_address_rewrites(self) -> list[tuple[SassInstruction, SassInstruction]]:
        """early_address_rewrites of the main loop (none without one)."""
        loop = self.function.main_loop()
        return early_address_rewrites(self.function.region(*loop)) if loop else []

    def loop_lines(self) -> list[int]:
        loop = self.function.main_loop()
        if loop is None:
            return []
        return sorted({i.line for i in self.function.region(*loop) if i.line is not None})

    def to_dict(self, listing: bool = True) -> dict[str, Any]:
        loop = self.function.main_loop()
        data: dict[str, Any] = {
            "kernel": self.kernel_id,
            "entry": self.entry,
            "function": self.function.name,
            "arch": self.arch,
            "compiler": self.compiler,
            "tool": self.tool,
            "mix": self.mix.to_dict(),
            "main_loop": None,
        }
        if loop is not None:
            data["main_loop"] = {
                "first": f"0x{loop[0]:04x}",
                "last": f"0x{loop[1]:04x}",
                "lines": self.loop_lines(),
                "mix": self.loop_mix.to_dict() if self.loop_mix else None,
                "early_address_rewrites": [
                    {
                        "copy": copy.to_dict()["sass"],
                        "write": write.to_dict()["sass"],
                        "instructions_after": (write.offset - copy.offset) // SASS_INSTRUCTION_BYTES,
                    }
                    for copy, write in self.loop_address_rewrites()
                ],
            }
        if listing:
            data["lines"] = [
                {
                    "file": file,
                    "line": line,
                    "source": self.line_text(file, line),
                    "mix": count_mix(ins).to_dict(),
                    "instructions": [i.to_dict() for i in ins],
                }
                for (file, line), ins in self.function.by_source_line().items()
            ]
            data["instructions"] = [i.to_dict() for i in self.function.instructions]
        return data


# ---------------------------------------------------------------------------------------------
# Parsing disassembler output
# ---------------------------------------------------------------------------------------------


def parse_nvdisasm(text: str) -> list[SassFunction]:
    """Functions of `nvdisasm -c -g` / `-gi` output, with each instruction's source line when printed."""
    functions: list[SassFunction] = []
    current: SassFunction | None = None
    pending: list[tuple[str, int]] = []
    labels: list[str] = []
    location: tuple[str | None, int | None, tuple[int, ...]] = (None, None, ())
    for raw in text.splitlines():
        if raw.startswith("//---"):
            section = _SECTION.match(raw)
            current = SassFunction(name=section.group(1), instructions=[]) if section else None
            if current is not None:
                functions.append(current)
            pending, labels, location = [], [], (None, None, ())
            continue
        if current is None:
            continue
        loc = _LOCATION.match(raw)
        if loc:
            pending.append((loc.group(1), int(loc.group(2))))
            current.has_lines = True
            continue
        label = _LABEL.match(raw.strip())
        if label:
            labels.append(label.group(1))  # names the next instruction's offset
            continue
        ins = _INSTRUCTION.match(raw)
        if not ins:
            continue
        if pending:
            # nvdisasm -gi prints the innermost location first, then each call site outward.
            location = (pending[0][0], pending[0][1], tuple(line for _, line in pending[1:]))
            pending = []
        offset = int(ins.group(1), 16)
        for name in labels:
            current.labels[name] = offset
        labels = []
        body = ins.group(2).strip()
        predicate = ""
        pred = _PREDICATE.match(body)
        if pred:
            predicate, body = pred.group(1), body[pred.end() :]
        current.instructions.append(
            SassInstruction(offset, body, predicate, line=location[1], file=location[0], inlined_at=location[2])
        )
    return [f for f in functions if f.instructions]


def parse_cuobjdump(text: str) -> list[SassFunction]:
    """Functions of `cuobjdump -sass` output (no line information)."""
    functions: list[SassFunction] = []
    current: SassFunction | None = None
    for raw in text.splitlines():
        head = _CUOBJDUMP_FUNCTION.match(raw)
        if head:
            current = SassFunction(name=head.group(1), instructions=[])
            functions.append(current)
            continue
        ins = _INSTRUCTION.match(raw)
        if current is None or not ins:
            continue
        body = ins.group(2).strip()
        predicate = ""
        pred = _PREDICATE.match(body)
        if pred:
            predicate, body = pred.group(1), body[pred.end() :]
        current.instructions.append(SassInstruction(int(ins.group(1), 16), body, predicate))
    return [f for f in functions if f.instructions]


# ---------------------------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------------------------


def find_binary(name: str) -> str | None:
    """A CUDA binary: PATH / CUDA_HOME / /usr/local/cuda (profiling.paths.tool_path), then the PyPI wheels'
    site-packages/nvidia/*/bin."""
    found = tool_path(name)
    if found:
        return found
    spec = importlib.util.find_spec("nvidia")
    for root in (spec.submodule_search_locations or []) if spec else []:
        for candidate in sorted(glob.glob(os.path.join(root, "*", "bin", name)), reverse=True):
            if os.access(candidate, os.X_OK):
                return candidate
    return None


def _run(args: list[str], what: str, timeout_s: float) -> str:
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise SassError(f"{what} did not finish within {timeout_s:.0f} s") from None
    except OSError as exc:
        raise SassError(f"{what} could not be started: {exc}") from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()
        raise SassError(f"{what} failed: {tail[-1][:300] if tail else f'exit {done.returncode}'}")
    return done.stdout


@functools.cache
def compile_cubin(source_sha: str, source: str, arch: str, nvcc: str) -> bytes:
    """`nvcc -cubin -lineinfo` of one source file (cached per process: v9's file takes about 10 s to build).

    `source_sha` (the text's hash) is only part of the cache key, so an edited file is compiled again.
    """
    del source_sha
    with tempfile.TemporaryDirectory() as tmp:
        cubin = os.path.join(tmp, "out.cubin")
        _run(
            [nvcc, f"-arch={arch}", "-std=c++17", "-cubin", "-lineinfo", "-o", cubin, source],
            f"nvcc on {Path(source).name}",
            timeout_s=300,
        )
        return Path(cubin).read_bytes()


def nvrtc_library() -> Path | None:
    """The NVRTC CuPy loads (the nvidia-cuda-nvrtc wheel), else the toolkit's; None where there is neither."""
    candidates = []
    spec = importlib.util.find_spec("nvidia.cuda_nvrtc")
    for root in (spec.submodule_search_locations or []) if spec else []:
        candidates.append(Path(root) / "lib" / "libnvrtc.so.12")
    return next((p for p in [*candidates, Path("/usr/local/cuda/lib64/libnvrtc.so")] if p.is_file()), None)


def _libnvrtc() -> ctypes.CDLL:
    """NVRTC, called through ctypes: CuPy's own binding returned a cubin cut short (nvdisasm: invalid ELF)."""
    path = nvrtc_library()
    if path is None:
        raise SassError(
            "NVRTC was not found: install the nvidia-cuda-nvrtc-cu12 wheel (requirements-dev.txt) or the CUDA toolkit"
        )
    return ctypes.CDLL(str(path))


@functools.cache
def nvrtc_cubin(
    source_sha: str, text: str, name: str, arch: str, options: tuple[str, ...], names: tuple[str, ...]
) -> bytes:
    """NVRTC's cubin of `text` (a kernel's source with our headers inlined, kernels.sources) for `arch` with
    `options`, each of `names` (template instances) asked for by name, as CuPy builds a catalog kernel (cached per
    process; `source_sha` only keys the cache)."""
    del source_sha
    return nvrtc_compile(_libnvrtc(), text, name, arch, options, names)[0]


def nvrtc_compile(
    lib: ctypes.CDLL, text: str, name: str, arch: str, options: tuple[str, ...], names: tuple[str, ...]
) -> tuple[bytes, dict[str, str]]:
    """The cubin the NVRTC library `lib` builds of `text` for `arch` with `options`, and the mangled (lowered) name
    of each of `names`."""
    flags = [o.encode() for o in (f"-arch={arch}", *options)]
    program = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(program), text.encode(), name.encode(), 0, None, None) != 0:
        raise SassError(f"NVRTC could not take {name}")
    try:
        for expression in names:
            lib.nvrtcAddNameExpression(program, expression.replace(" ", "").encode())
        if lib.nvrtcCompileProgram(program, len(flags), (ctypes.c_char_p * len(flags))(*flags)) != 0:
            size = ctypes.c_size_t()
            lib.nvrtcGetProgramLogSize(program, ctypes.byref(size))
            log = ctypes.create_string_buffer(size.value)
            lib.nvrtcGetProgramLog(program, log)
            raise SassError(f"NVRTC on {name} failed: {log.value.decode(errors='replace').strip()[-300:]}")
        size = ctypes.c_size_t()
        lib.nvrtcGetCUBINSize(program, ctypes.byref(size))
        cubin = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetCUBIN(program, cubin)
        lowered = {}
        for expression in names:
            mangled = ctypes.c_char_p()
            lib.nvrtcGetLoweredName(program, expression.replace(" ", "").encode(), ctypes.byref(mangled))
            lowered[expression] = (mangled.value or b"").decode()
        return cubin.raw, lowered
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(program))


def disassemble(cubin: bytes, tool: str) -> str:
    """The listing of a cubin: `nvdisasm -c -gi` (with source lines) or `cuobjdump -sass`."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "out.cubin")
        Path(path).write_bytes(cubin)
        if Path(tool).name.startswith("nvdisasm"):
            return _run([tool, "-c", "-gi", path], "nvdisasm", timeout_s=120)
        return _run([tool, "-sass", path], "cuobjdump", timeout_s=120)


def launcher_cubin(spec: KernelSpec, arch: str) -> tuple[bytes, str]:
    """`spec`'s cubin for `arch` built as the launcher builds it (profiling.gpu.compile), and what built it: NVRTC
    with the launcher's and CuPy's options, or nvcc for an architecture-specific or nvcc-backend kernel."""
    text = spec.read_source()
    sha = hashlib.sha256(text.encode()).hexdigest()
    if spec.backend == "nvrtc" and not spec.arch:
        # ptxas allocates registers differently for nvcc's build of the same file: the tuned v9 tile's early
        # address writes differ, so only this build is the one that ran.
        options = (*LAUNCH_OPTIONS, *CUPY_ADDED_OPTIONS, *(f"-I{d}" for d in cuda_include_dirs()))
        return nvrtc_cubin(sha, text, spec.source, arch, options, (spec.entry,)), "NVRTC"
    nvcc = tool_path("nvcc")
    if nvcc is None:
        raise SassError(
            "nvcc was not found: install the CUDA toolkit (or the nvidia-cuda-nvcc wheel) or put it on PATH"
        )
    return compile_cubin(sha, str(spec.source_path), arch, nvcc), "nvcc"


def static_sass(spec: KernelSpec, arch: str = "sm_90") -> StaticSass:
    """Compile `spec`'s source for `arch` (for an architecture-specific kernel, always its own target, e.g.
    sm_90a) and disassemble its entry; SassError when a tool is missing or fails."""
    if spec.source_path is None or not spec.entry:
        raise InvalidInput(f"{spec.id} is a library reference with no source to compile")
    arch = spec.arch or arch
    if not re.fullmatch(r"sm_\d+[a-z]?", arch):
        raise InvalidInput(f"arch must look like sm_90 (got {arch!r})")
    disasm = find_binary("nvdisasm") or find_binary("cuobjdump")
    if disasm is None:
        raise SassError(f"neither nvdisasm nor cuobjdump was found; {INSTALL_HINT}")
    cubin, compiler = launcher_cubin(spec, arch)
    listing = disassemble(cubin, disasm)
    tool = Path(disasm).name
    functions = parse_nvdisasm(listing) if tool.startswith("nvdisasm") else parse_cuobjdump(listing)
    mine = [f for f in functions if entry_matches(f.name, spec.entry)]
    if not mine:
        names = ", ".join(f.name for f in functions[:8])
        raise SassError(f"{spec.entry} not found in the disassembly of {spec.source} (it holds: {names})")
    headers = {p.name: p.read_text().splitlines() for p in spec.source_path.parent.glob("*.cuh")}
    own = spec.source_path.read_text().splitlines()
    return StaticSass(spec.id, spec.entry, arch, mine[0], own, tool, headers, compiler)
