"""Whether two versions of kernels/src compile to the same machine code, function by function (CPU only: needs
nvcc and nvdisasm; NVRTC from the nvidia-cuda-nvrtc wheel CuPy uses for the --nvrtc builds).

Each `.cu` file present in both versions is compiled with `nvcc -cubin` for its targets (sm_90a for a file that
uses wgmma, else sm_80 and sm_90; hgemm_wgmma_tma.cu also with wgmma_probe.py's swapped B offsets), with and
without -lineinfo, and disassembled with `nvdisasm -c`. Per function, the instruction text is compared after
dropping addresses and encodings and renaming branch labels and calls of CUDA's internal helpers in order of
appearance (both are numbered across the whole cubin); register numbers and everything else must match. With --nvrtc the files the launcher
compiles through NVRTC (no sm_90a ones) are also built as CuPy does: our headers inlined
(kernels/sources.py), the launcher's options and CuPy's -ftz=true (kernels.compile_info), every explicitly
instantiated template named as a name expression,
each side NVRTC_REPEATS times in fresh processes (NVRTC does not always give the same code twice).

    python scripts/sass_identity.py BEFORE AFTER [--files v8_async.cu ...] [--nvrtc]

BEFORE and AFTER are git revisions of this checkout, or directories (a checkout, or a kernels/src folder).
Prints one row per function and build, then a summary; exits 1 when any function differs or is missing.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kernels.compile_info import CUPY_ADDED_OPTIONS, LAUNCH_OPTIONS, cuda_include_dirs  # noqa: E402
from kernels.sources import inline_local_includes  # noqa: E402
from profiling.analysis.sass import find_binary, nvrtc_cubin  # noqa: E402
from profiling.paths import tool_path  # noqa: E402

# Extra builds of a file: the -D variants a script compiles it with (scripts/wgmma_probe.py).
DEFINE_VARIANTS = {"hgemm_wgmma_tma.cu": [["-DWGMMA_B_LBO=1024", "-DWGMMA_B_SBO=8192"]]}
_SECTION = re.compile(r"^//-+ \.text\.(\S+)\s+-+$")
_INSTRUCTION = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;?\s*(?:/\*.*\*/)?\s*$")
_LABEL_DEF = re.compile(r"^(\.L_x_\d+):$")
_LABEL = re.compile(r"\.L_x_\d+")
# CUDA's internal helpers (64-bit division: `$__internal_7_$__cuda_sm20_div_s64`) are numbered per module, so a new
# kernel that calls one renumbers them in every other function: they are renamed in order of appearance, as labels.
_INTERNAL = re.compile(r"\$__internal_\d+_\$")
# NVRTC 12.9 is not deterministic: the same text compiled in fresh processes now and then gives other (valid)
# code, about 1 compile in 8 for v8_async.cu's 8 instantiations, unchanged source included. Each side of an NVRTC
# build is compiled this many times; a function counts as identical when some listing occurs on both sides.
NVRTC_REPEATS = 3
_NVRTC_CHILD = "--nvrtc-child"  # argv[1] of the child process that runs one NVRTC build
_INSTANTIATION = re.compile(r"^template\s+__global__\s+void\s+(\w+\s*<[^>]*>)\s*\(", re.M)


@dataclass(frozen=True)
class Build:
    """One compilation of one file: compiler, target and options."""

    file: str
    compiler: str  # "nvcc" or "nvrtc"
    arch: str
    options: tuple[str, ...]

    @property
    def label(self) -> str:
        return " ".join([self.compiler, self.arch, *self.options])


def source_dir(version: str, tmp: Path) -> Path:
    """kernels/src of a directory, or of a git revision of this checkout unpacked under `tmp`."""
    path = Path(version)
    if path.is_dir():
        return path / "kernels" / "src" if (path / "kernels" / "src").is_dir() else path
    out = tmp / re.sub(r"\W", "_", version)
    out.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", version, "kernels/src"], capture_output=True, check=False
    )
    if archive.returncode != 0:
        sys.exit(f"{version!r} is neither a directory nor a git revision: {archive.stderr.decode().strip()}")
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive.stdout, check=True)
    return out / "kernels" / "src"


def builds_of(name: str, text: str, nvrtc: bool) -> list[Build]:
    """The builds a file gets (see the module docstring)."""
    archs = ["sm_90a"] if "wgmma" in text else ["sm_80", "sm_90"]
    out = []
    for arch in archs:
        for defines in [[], *DEFINE_VARIANTS.get(name, [])]:
            for lineinfo in ([], ["-lineinfo"]):
                out.append(Build(name, "nvcc", arch, tuple(["-std=c++17", *lineinfo, *defines])))
    if nvrtc and archs != ["sm_90a"]:
        out.append(Build(name, "nvrtc", "sm_90", (*LAUNCH_OPTIONS, *CUPY_ADDED_OPTIONS)))
    return out


def compile_nvcc(src: Path, build: Build, out: Path) -> None:
    cmd = [tool_path("nvcc") or "nvcc", f"-arch={build.arch}", *build.options, "-cubin", "-o", str(out), str(src)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}:\n{done.stderr[-2000:]}")


def compile_nvrtc(src: Path, build: Build, out: Path) -> None:
    """NVRTC in a fresh process per build: run in a thread of a process that had already compiled other code,
    NVRTC 12.9 now and then gave different (valid) code for the same text, so a build must not share a process."""
    cmd = [sys.executable, __file__, _NVRTC_CHILD, str(src), str(out), build.arch, *build.options]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])


def _compile_nvrtc(src: Path, arch: str, options: list[str], out: Path) -> None:
    text = inline_local_includes(src)
    flags = (*options, *(f"-I{d}" for d in cuda_include_dirs()))
    out.write_bytes(nvrtc_cubin("", text, src.name, arch, flags, tuple(_INSTANTIATION.findall(text))))


def functions(cubin: Path, nvdisasm: str) -> dict[str, list[str]]:
    """Instruction text per function, addresses and encodings dropped, labels and CUDA's internal helpers renamed in
    order of appearance."""
    listing = subprocess.run([nvdisasm, "-c", str(cubin)], capture_output=True, text=True, check=True).stdout
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for raw in listing.splitlines():
        if raw.startswith("//---"):
            section = _SECTION.match(raw)
            current = found.setdefault(section.group(1), []) if section else None
            continue
        if current is None:
            continue
        stripped = raw.strip()
        if _LABEL_DEF.match(stripped):
            current.append(stripped)
        elif match := _INSTRUCTION.match(raw):
            current.append(match.group(1))
    return {name: _renumber_labels(lines) for name, lines in found.items()}


def _renumber_labels(lines: list[str]) -> list[str]:
    names: dict[str, str] = {}
    helpers: dict[str, str] = {}
    return [
        _INTERNAL.sub(
            lambda m: helpers.setdefault(m.group(0), f"$__internal_{len(helpers)}_$"),
            _LABEL.sub(lambda m: names.setdefault(m.group(0), f".L{len(names)}"), line),
        )
        for line in lines
    ]


def build_functions(src_dir: Path, build: Build, work: Path, nvdisasm: str) -> dict[str, list[list[str]]]:
    """Each function's listings: one per compile (NVRTC builds are repeated, see NVRTC_REPEATS)."""
    found: dict[str, list[list[str]]] = {}
    for _ in range(NVRTC_REPEATS if build.compiler == "nvrtc" else 1):
        handle, name = tempfile.mkstemp(suffix=".cubin", dir=work)
        os.close(handle)
        out = Path(name)
        (compile_nvcc if build.compiler == "nvcc" else compile_nvrtc)(src_dir / build.file, build, out)
        for function, lines in functions(out, nvdisasm).items():
            if lines not in found.setdefault(function, []):
                found[function].append(lines)
    return found


def count(listings: list[list[str]] | None) -> int | str:
    if listings is None:
        return "-"
    return "/".join(str(sum(1 for line in lines if not line.startswith(".L"))) for lines in listings)


def _first(a: list[str], b: list[str]) -> str:
    """Where two listings part: the first differing instruction, by position."""
    at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return f"at #{at}: {a[at] if at < len(a) else '(end)'!r} / {b[at] if at < len(b) else '(end)'!r}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--files", nargs="*", help="file names in kernels/src (default: every .cu in both)")
    parser.add_argument("--nvrtc", action="store_true", help="also build the NVRTC-compiled files as CuPy does")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    nvdisasm = find_binary("nvdisasm")
    if nvdisasm is None or tool_path("nvcc") is None:
        sys.exit("needs nvcc and nvdisasm (CUDA toolkit, or the nvidia-cuda-nvdisasm wheel)")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        before, after = source_dir(args.before, tmp / "before"), source_dir(args.after, tmp / "after")
        names = args.files or sorted({p.name for p in before.glob("*.cu")} & {p.name for p in after.glob("*.cu")})
        work = tmp / "cubins"
        work.mkdir()
        builds = [b for name in names for b in builds_of(name, (after / name).read_text(), args.nvrtc)]
        jobs = [(d, b) for b in builds for d in (before, after)]
        with ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(lambda job: build_functions(job[0], job[1], work, nvdisasm), jobs))
    differing = 0
    print(f"{'build':<52} {'function':<72} {'before':>7} {'after':>7}  result")
    for index, build in enumerate(builds):
        old, new = results[2 * index], results[2 * index + 1]
        for function in sorted(set(old) | set(new)):
            a, b = old.get(function), new.get(function)
            same = a is not None and b is not None and any(x in b for x in a)
            differing += not same
            if same:
                result = "identical" + (f" (NVRTC gave {len(a)} / {len(b)} variants)" if len(a) + len(b) > 2 else "")
            else:
                result = "missing" if a is None or b is None else f"DIFFERENT {_first(a[0], b[0])}"
            print(f"{build.file + ' ' + build.label:<52} {function:<72} {count(a):>7} {count(b):>7}  {result}")
    total = sum(len(set(results[2 * i]) | set(results[2 * i + 1])) for i in range(len(builds)))
    print(f"\n{total - differing} of {total} functions identical in {len(builds)} builds of {len(names)} files")
    return 1 if differing else 0


if __name__ == "__main__":
    if sys.argv[1:2] == [_NVRTC_CHILD]:
        source, output, target, *flags = sys.argv[2:]
        _compile_nvrtc(Path(source), target, flags, Path(output))
        sys.exit(0)
    sys.exit(main())
