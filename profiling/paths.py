"""Where GEMM Lens finds its own files: the source checkout, or the installed package."""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
# The folder that holds `profiling/` and `kernels/`: the repo root in a checkout, site-packages once installed.
SOURCE_ROOT = PACKAGE_DIR.parent


def _first_existing(*candidates: Path) -> Path:
    for path in candidates:
        if path.exists():
            return path
    return candidates[0]


# A checkout keeps the bundled measurements in `results/`; a wheel carries them as `profiling/bundled/`.
BUNDLED_RESULTS_DIR = _first_existing(SOURCE_ROOT / "results", PACKAGE_DIR / "bundled")
TUNED_DIR = BUNDLED_RESULTS_DIR / "tuning"
