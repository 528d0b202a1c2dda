"""Every result document names the code and tools behind it: the git commit (or $GEMMLENS_COMMIT where the
tree has no .git, as on the GPU machines), a digest of the kernel and GPU sources, and the CUDA/CuPy versions."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from profiling.device_model import DeviceInfo
from profiling.paths import SOURCE_ROOT
from profiling.runs import results as R

# The versions of results/h200-2026-12-01/catalog_nvrtc/bench_4096.json's device (the first to say which NVRTC).
DEVICE = {
    "cupy": "14.2.0",
    "nvrtc": "13.0",
    "cuda_runtime": 13020,
    "cuda_driver": 13000,
    "driver": "580.159.04",
    "python": "3.12.3",
}


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv(R.COMMIT_ENV, raising=False)
    root = tmp_path / "checkout"
    (root / "kernels" / "src").mkdir(parents=True)
    (root / "kernels" / "src" / "k.cu").write_text("// a kernel\n")
    (root / "profiling" / "gpu").mkdir(parents=True)
    (root / "profiling" / "gpu" / "runner.py").write_text("# the runner\n")
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    return root


def test_commit_of_a_clean_and_a_dirty_checkout(repo: Path) -> None:
    short = _git(repo, "rev-parse", "--short", "HEAD")
    assert R.git_commit(repo) == short
    (repo / "notes.txt").write_text("untracked files do not change the code that ran\n")
    assert R.git_commit(repo) == short
    (repo / "kernels" / "src" / "k.cu").write_text("// an edited kernel\n")
    assert R.git_commit(repo) == f"{short}-dirty"


def test_a_tree_without_git_has_no_commit_unless_told(repo: Path, tmp_path: Path, monkeypatch) -> None:
    """Why every committed result says null: the GPU machine gets a copy of the files, not the repository."""
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy, ignore=shutil.ignore_patterns(".git"))
    assert R.git_commit(copy) is None
    monkeypatch.setenv(R.COMMIT_ENV, "abc1234")
    assert R.git_commit(copy) == "abc1234"


def test_source_digest_follows_the_kernel_and_gpu_code_only(repo: Path, tmp_path: Path) -> None:
    first = R.source_digest(repo)
    assert len(first) == 16 and int(first, 16) >= 0
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy, ignore=shutil.ignore_patterns(".git"))
    assert R.source_digest(copy) == first  # the same code gives the same digest anywhere
    (copy / "README.md").write_text("docs do not change results\n")
    assert R.source_digest(copy) == first
    (copy / "profiling" / "gpu" / "runner.py").write_text("# the runner, changed\n")
    assert R.source_digest(copy) != first
    # A header a kernel includes is kernel code too (v8_body.cuh holds v8-async's and v8-splitk's body).
    second = R.source_digest(copy)
    (copy / "kernels" / "src" / "body.cuh").write_text("// a shared kernel body\n")
    assert R.source_digest(copy) != second


def test_documents_record_commit_digest_and_tool_versions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(R.COMMIT_ENV, "0123abc")
    doc = R.build_document(DeviceInfo.from_dict(DEVICE), {"repeats": 3}, [], "2026-11-22T00:00:00Z")
    assert doc.tool == {
        "gemmlens_commit": "0123abc",
        "source_digest": R.source_digest(SOURCE_ROOT),
        "cupy": "14.2.0",
        "nvrtc": "13.0",
        "cuda_runtime": 13020,
        "cuda_driver": 13000,
        "nvidia_driver": "580.159.04",
        "python": "3.12.3",
    }
    # A device description from before the NVRTC was recorded: the tool's entry says it is not known.
    older = {k: v for k, v in DEVICE.items() if k != "nvrtc"}
    assert R.build_document(DeviceInfo.from_dict(older), {}, [], "2026-11-22T00:00:00Z").tool["nvrtc"] is None


def test_this_checkout_has_a_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(R.COMMIT_ENV, raising=False)
    if not (SOURCE_ROOT / ".git").exists():
        pytest.fail("the tests run from a git checkout (CI clones one); a copy without .git records no commit")
    commit = R.git_commit()
    assert commit and commit.split("-")[0] == _git(SOURCE_ROOT, "rev-parse", "--short", "HEAD")
