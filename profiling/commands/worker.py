"""`python -m profiling worker --job FILE`: the GPU worker child (started by the parent, ncu or compute-sanitizer)."""

from __future__ import annotations

import argparse
import json
import os
import stat

from profiling.errors import InvalidInput
from profiling.gpu.jobs import Job
from profiling.gpu.worker import child_main

HELP = "run a GPU job file in this process (internal: started by GEMM Lens, ncu or compute-sanitizer)"
INTERNAL = True
"""Not listed in `--help`: only GEMM Lens itself starts it."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--job", required=True, help="job description JSON file")


MAX_JOB_BYTES = 4 * 1000 * 1000
"""A job file names kernels, sizes and settings: a few KB. More is no job file (`--job /dev/zero`)."""


def read_job(path: str) -> Job:
    """The job in `path`: a regular file of at most MAX_JOB_BYTES of JSON; InvalidInput with one line otherwise."""
    try:
        with open(path, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise InvalidInput(f"job file {path} is not a regular file (a device, pipe or folder)")
            data = fh.read(MAX_JOB_BYTES + 1)
        if len(data) > MAX_JOB_BYTES:
            raise InvalidInput(f"job file {path} is over {MAX_JOB_BYTES / 1e6:.0f} MB; job files are a few KB")
        return Job.from_dict(json.loads(data))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InvalidInput(f"cannot read job file {path}: {exc}") from None


def run(args: argparse.Namespace) -> int:
    return child_main(read_job(args.job))
