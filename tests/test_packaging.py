"""The pip route: the wheel carries every module, .cu source, page and bundled result, and `gemmlens` works.

The wheel is built from a copy of the checkout's files (what git carries), so a stale build/ folder cannot
hide a missing file. `.ci/install-smoke.sh` goes further: it installs the wheel with its dependencies.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
import zipfile
from pathlib import Path

import pytest

from profiling import app_command, cli, paths
from profiling.errors import GemmLensError

ROOT = Path(__file__).resolve().parent.parent
# In the wheel, the repo root's app, pages, results and Streamlit settings live under this folder.
APP_PACKAGE = "gemmlens_app"


def _checkout_files() -> list[str]:
    """The checkout's files as git carries them: tracked plus untracked-not-ignored, existing ones only."""
    try:
        listing = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: cannot tell which files the wheel must carry")
    return sorted(name for name in listing.decode().split("\0") if name and (ROOT / name).is_file())


def _setuptools_builds_wheels() -> bool:
    """Whether this environment's setuptools builds wheels itself (70.1+); else pip fetches one to build with."""
    try:
        major, minor = (int(part) for part in importlib.metadata.version("setuptools").split(".")[:2])
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return False
    return (major, minor) >= (70, 1)


@pytest.fixture(scope="module")
def checkout_files() -> list[str]:
    return _checkout_files()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory, checkout_files: list[str]) -> Path:
    source = tmp_path_factory.mktemp("source")
    for name in checkout_files:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    out = tmp_path_factory.mktemp("wheel")
    command = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(source)]
    if _setuptools_builds_wheels():
        command.insert(5, "--no-build-isolation")
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    (built,) = out.glob("gemm_lens-*.whl")
    return built


@pytest.fixture(scope="module")
def wheel_names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def _installed_name(checkout_name: str) -> str | None:
    """Where a checkout file must sit in the wheel, or None when it is not installed."""
    top = checkout_name.split("/", 1)[0]
    if top in ("profiling", "kernels"):
        if checkout_name.endswith(".py") or checkout_name.endswith((".cu", ".cuh")):
            return checkout_name
        return None
    if checkout_name in ("app.py", ".streamlit/config.toml") or top == "results":
        return f"{APP_PACKAGE}/{checkout_name}"
    if top == "pages" and checkout_name.endswith(".py"):
        return f"{APP_PACKAGE}/{checkout_name}"
    return None


@pytest.mark.slow
def test_wheel_carries_modules_cuda_sources_app_pages_and_bundled_results(
    checkout_files: list[str], wheel_names: set[str]
) -> None:
    expected = {name for f in checkout_files if (name := _installed_name(f))}
    missing = sorted(expected - wheel_names)
    # A new package folder under profiling/ or kernels/ must be added to [tool.setuptools] packages.
    assert not missing, f"missing from the wheel (pyproject.toml [tool.setuptools]): {missing}"
    # The things the app cannot run without, named so a broken mapping cannot pass by expecting nothing.
    assert f"{APP_PACKAGE}/app.py" in wheel_names
    assert sum(n.startswith(f"{APP_PACKAGE}/pages/") for n in wheel_names) == len(list((ROOT / "pages").glob("*.py")))
    assert sum(n.startswith("kernels/src/") for n in wheel_names) >= len(list((ROOT / "kernels" / "src").glob("*.cu")))
    assert "profiling/gpu/cuda/ceilings.cu" in wheel_names
    assert any(n.endswith(".ncu-rep") for n in wheel_names)
    assert f"{APP_PACKAGE}/results/tuning/nvidia-h200.json" in wheel_names


@pytest.mark.slow
def test_wheel_carries_nothing_but_the_package(wheel_names: set[str]) -> None:
    tops = {name.split("/", 1)[0] for name in wheel_names}
    assert tops == {"profiling", "kernels", APP_PACKAGE, "gemm_lens-0.1.0.dist-info"}
    assert not [n for n in wheel_names if "__pycache__" in n or n.endswith(".pyc")]


@pytest.mark.slow
def test_wheel_metadata_dependencies_are_requirements_txt_and_gemmlens_is_the_entry_point(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        metadata = archive.read("gemm_lens-0.1.0.dist-info/METADATA").decode()
        entry_points = archive.read("gemm_lens-0.1.0.dist-info/entry_points.txt").decode()
    requires = [
        line.removeprefix("Requires-Dist: ") for line in metadata.splitlines() if line.startswith("Requires-Dist:")
    ]
    lines = [line.strip() for line in (ROOT / "requirements.txt").read_text().splitlines()]
    pinned = [line for line in lines if line and not line.startswith("#")]
    assert requires == pinned
    assert "gemmlens = profiling.cli:gemmlens_main" in entry_points


@pytest.mark.slow
def test_unpacked_wheel_finds_its_app_and_bundled_results_from_another_directory(wheel: Path, tmp_path: Path) -> None:
    """The installed layout (site-packages holding profiling/, kernels/, gemmlens_app/) run from elsewhere."""
    site = tmp_path / "site-packages"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = dict(os.environ, PYTHONPATH=str(site))
    probe = "from profiling import paths; print(paths.APP_SCRIPT); print(paths.BUNDLED_RESULTS_DIR)"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(site / APP_PACKAGE / "app.py"), str(site / APP_PACKAGE / "results")]
    csv = site / APP_PACKAGE / "results" / "h200-2026-11-22" / "ncu_ladder_1024_raw.csv"
    done = subprocess.run(
        [sys.executable, "-m", "profiling", "report", str(csv)],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{csv}: 10 launch(es), raw layout")


def test_checkout_paths_point_at_the_repo_root() -> None:
    assert paths.APP_SCRIPT == ROOT / "app.py"
    assert paths.BUNDLED_RESULTS_DIR == ROOT / "results"
    assert paths.STREAMLIT_CONFIG == ROOT / ".streamlit" / "config.toml"


def test_gemmlens_help_lists_every_command_under_its_own_name(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--help"], prog="gemmlens")
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: gemmlens ")
    for name in ("app", "bench", "profile", "report", "sanitize", "occupancy", "compare", "tune", "ceilings"):
        assert f"    {name} " in out


def test_gemmlens_still_refuses_unknown_options_of_other_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["occupancy", "--cc", "9.0", "--threads", "256", "--registers", "64", "--bogus"], prog="gemmlens")
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err == "error: unrecognized arguments: --bogus (see `gemmlens --help`)\n"


def test_app_command_runs_streamlit_on_the_app_with_the_repo_settings_then_the_users(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started = []
    monkeypatch.setattr(os, "execv", lambda exe, argv: started.append((exe, argv)))
    assert cli.main(["app", "--server.port", "8600", "--theme.base=dark"], prog="gemmlens") == 0
    ((exe, argv),) = started
    assert exe == sys.executable
    # `streamlit run`, through the module that imports the dashboard's modules while the server starts
    assert argv[:5] == [sys.executable, "-m", "profiling.app.serve", "run", str(paths.APP_SCRIPT)]
    assert argv[-3:] == ["--server.port", "8600", "--theme.base=dark"]
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert "--server.maxUploadSize=190" in argv
    assert len(argv) == 5 + sum(len(options) for options in config.values()) + 3


def test_config_flags_write_booleans_as_streamlit_reads_them(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[server]\nheadless = true\nport = 9000\n[theme]\nbase = "dark"\n')
    flags = app_command.config_flags(config)
    assert flags == ["--server.headless=true", "--server.port=9000", "--theme.base=dark"]
    assert app_command.config_flags(tmp_path / "absent.toml") == []


def test_app_command_with_a_broken_config_says_so_in_one_line(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[server\n")
    with pytest.raises(GemmLensError, match="is not valid TOML"):
        app_command.config_flags(config)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.slow
def test_app_command_serves_the_dashboard_from_another_directory(tmp_path: Path) -> None:
    """Streamlit accepts every flag made from .streamlit/config.toml (a bad one would stop it starting)."""
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT), GEMMLENS_GPU="off")
    command = [sys.executable, "-m", "profiling", "app", "--server.port", str(port), "--server.address", "127.0.0.1"]
    log = tmp_path / "app.log"
    with log.open("w") as out:
        proc = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        health = None
        while health is None and time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as response:
                    health = response.read().decode()
            except OSError:
                time.sleep(0.5)
        assert health == "ok", log.read_text()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as response:
            assert "<title>Streamlit</title>" in response.read().decode()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_the_readme_says_which_python_the_package_needs() -> None:
    """pyproject's requires-python, said where the README says how to start the app."""
    root = Path(__file__).resolve().parent.parent
    needs = re.search(r'requires-python = ">=(\d+\.\d+)"', (root / "pyproject.toml").read_text()).group(1)
    start = (root / "README.md").read_text().split("## Start the app", 1)[1][:400]
    assert f"Python {needs} or newer" in start
