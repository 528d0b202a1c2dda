"""`python -m profiling worker --job FILE`: the GPU worker child (started by the parent, ncu or compute-sanitizer)."""

from __future__ import annotations

import argparse
import json

from profiling.errors import InvalidInput
from profiling.gpu.jobs import Job
from profiling.gpu.worker import child_main

HELP = "run a GPU job file in this process (internal: started by GEMM Lens, ncu or compute-sanitizer)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--job", required=True, help="job description JSON file")


def run(args: argparse.Namespace) -> int:
    try:
        with open(args.job) as fh:
            job = Job.from_dict(json.load(fh))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InvalidInput(f"cannot read job file {args.job}: {exc}") from None
    return child_main(job)
