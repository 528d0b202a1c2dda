"""Where GEMM Lens finds its own files: the source checkout, or the installed package."""

from __future__ import annotations

import glob
import os
import re
import shutil
from collections.abc import Iterable
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
# The folder that holds `profiling/` and `kernels/`: the repo root in a checkout, site-packages once installed.
SOURCE_ROOT = PACKAGE_DIR.parent

# A checkout keeps app.py, pages/, results/ and .streamlit/ at the repo root; `pip install` puts them in a
# `gemmlens_app/` folder beside `profiling/` (see [tool.setuptools] in pyproject.toml).
INSTALLED_APP_DIR = SOURCE_ROOT / "gemmlens_app"
APP_DIR = INSTALLED_APP_DIR if (INSTALLED_APP_DIR / "app.py").is_file() else SOURCE_ROOT
APP_SCRIPT = APP_DIR / "app.py"
STREAMLIT_CONFIG = APP_DIR / ".streamlit" / "config.toml"
BUNDLED_RESULTS_DIR = APP_DIR / "results"
TUNED_DIR = BUNDLED_RESULTS_DIR / "tuning"

_CAPTURE_SIZE = re.compile(r"_(\d+)_raw\.csv$")


def capture_size(raw: Path) -> int | None:
    """The size (M) in a bundled capture's name: ncu_why_4096_raw.csv, ncu_why_hopper_4096_raw.csv; None without."""
    match = _CAPTURE_SIZE.search(raw.name)
    return int(match.group(1)) if match else None


def largest_first(raws: Iterable[Path]) -> list[Path]:
    """Bundled captures in the order offered, the first being the default: the largest size first, as
    `explain` (whose default is the largest size) and the Why page both choose; names without a size last."""
    return sorted(raws, key=lambda raw: (-(capture_size(raw) or -1), raw.name))


def _version_key(path: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", path))


def tool_path(name: str) -> str | None:
    """Path of a CUDA command-line tool (nvcc, ncu, compute-sanitizer): PATH, then $CUDA_HOME/bin or
    $CUDA_PATH/bin, /usr/local/cuda/bin, and the tool's own install folders (newest Nsight Compute first)."""
    found = shutil.which(name)
    if found:
        return found
    candidates = []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        home = os.environ.get(var)
        if home:
            candidates.append(os.path.join(home, "bin", name))
    candidates.append(os.path.join("/usr/local/cuda/bin", name))
    if name == "ncu":
        installed = glob.glob("/opt/nvidia/nsight-compute/*/ncu")
        candidates.extend(sorted(installed, key=_version_key, reverse=True))
    if name == "compute-sanitizer":
        candidates.append("/usr/local/cuda/compute-sanitizer/compute-sanitizer")
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None
