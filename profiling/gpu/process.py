"""Child processes: the GPU worker's command line, and killing a child together with everything it started.

The parent (profiling.gpu.worker), Nsight Compute and compute-sanitizer (profiling.nsight) all start the
same worker and stop their children the same way, so both live here once.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys


def worker_command(job_file: str | os.PathLike[str], python: str | None = None) -> list[str]:
    """Command line that starts the GPU worker on a job file (also the target ncu and compute-sanitizer launch)."""
    return [python or sys.executable, "-m", "profiling", "worker", "--job", str(job_file)]


def kill_process_group(proc: subprocess.Popen) -> None:
    """SIGKILL the process group `proc` leads (it was started with start_new_session=True), so that a profiler's
    target or a hung kernel's process goes with it; falls back to killing `proc` alone where that is refused."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # already gone
    except PermissionError:
        proc.kill()
