"""Issue 31's SGEMM >= 98 %: v9 configurations built by other NVRTC versions (CPU), for scripts/v9_variants.py to time
on a GPU. The same source and options give other machine code from another compiler (nvcc 13.0.88 builds the tuned
tile 5 points slower than CuPy's NVRTC 13.0 on an H200, results/h200-2026-12-01/sgemm98_nvcc/), so which version
builds the fastest is worth measuring. Each libnvrtc (from an nvidia-cuda-nvrtc wheel: `pip download --no-deps
nvidia-cuda-nvrtc-cu12==12.6.85`, unzipped) compiles in a process of its own, as the launcher does (its options and
CuPy's), for sm_90; OUT/<version>/<config id>.cubin with <config id>.json, the mangled name of each entry.

Usage: python scripts/nvrtc_cubins.py OUT CONFIG_IDS LIBNVRTC [LIBNVRTC ...]
Then:  V9VAR_CUBINS=OUT python scripts/v9_variants.py CONFIG_IDS SHAPES   (on the GPU: a build "NVRTC <version>" each)
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernels.compile_info import CUPY_ADDED_OPTIONS, LAUNCH_OPTIONS  # noqa: E402
from kernels.tuning import config_by_id, spec_for  # noqa: E402
from profiling.analysis.sass import nvrtc_compile  # noqa: E402

ARCH = "sm_90"


def build_with(library: Path, out: Path, ids: list[str]) -> str:
    """Every configuration of `ids` built by the NVRTC at `library` into OUT/<its version>/; the version."""
    lib = ctypes.CDLL(str(library))
    major, minor = ctypes.c_int(), ctypes.c_int()
    lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    # The wheel's full version where the library sits in an unzipped wheel (.../nvidia_cuda_nvrtc_cu12-12.6.85/nvidia/
    # cuda_nvrtc/lib/libnvrtc.so.12), else NVRTC's own major.minor.
    wheel = re.search(r"-(\d+\.\d+\.\d+)$", library.resolve().parents[3].name)
    version = wheel.group(1) if wheel else f"{major.value}.{minor.value}"
    folder = out / version
    folder.mkdir(parents=True, exist_ok=True)
    for cid in ids:
        spec = spec_for(config_by_id(cid))
        entries = (spec.entry, *((spec.narrow_entry,) if spec.narrow_entry else ()))
        cubin, lowered = nvrtc_compile(
            lib, spec.read_source(), spec.source, ARCH, (*LAUNCH_OPTIONS, *CUPY_ADDED_OPTIONS), entries
        )
        (folder / f"{cid}.cubin").write_bytes(cubin)
        (folder / f"{cid}.json").write_text(json.dumps(lowered, indent=1))
    return version


def main() -> int:
    if sys.argv[1] == "--one":
        print(build_with(Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4].split(",")))
        return 0
    out, ids, libraries = Path(sys.argv[1]), sys.argv[2], sys.argv[3:]
    for library in libraries:
        # One process a library: every libnvrtc.so.12 has the same soname, so a second would not load beside the first.
        env = {**os.environ, "LD_LIBRARY_PATH": str(Path(library).parent)}
        done = subprocess.run(
            [sys.executable, __file__, "--one", library, str(out), ids], env=env, capture_output=True, text=True
        )
        print(f"{library}: {done.stdout.strip() or done.stderr.strip()[-300:]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
