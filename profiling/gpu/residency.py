"""Whether a kernel whose blocks wait for other blocks of the same launch finishes when most SMs are taken.

wgmma-streamk (a block that finishes a shared tile waits for the flags of the blocks that ran its earlier slices)
and the serial split-K configurations (a tile's later splits wait for split 0) launch their blocks on the
assumption that a block only ever waits for a block of lower index, and that the GPU starts blocks in index order:
then a waited-for block has always started, and the launch cannot deadlock however few of its blocks fit at once.
If the assumption broke, a launch beside another program's kernels (another process, MPS, a green context) could
spin forever, which on one GPU stops everything.

The probe: hold all but `free_sms` SMs with one block each that takes an SM's whole shared memory and spins until
the host releases it; then run the kernel once on another stream, check its result, and only then release the
holders. A holder that ended on its own (MAX_HOLD_NS) means the kernel could not finish on the SMs left to it.
Run it in a child process (`python -m profiling.gpu.residency`), never in the dashboard: a failure is a hang.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from kernels.registry import get_kernel
from profiling.shape import Shape, parse_shape

MAX_HOLD_NS = 20_000_000_000
"""A holder gives its SM back by itself after this many nanoseconds of the GPU's global timer, released or not."""

HOLDER_SOURCE = r"""
extern "C" __global__ void gemmlens_hold_sm(const volatile unsigned int* release, unsigned int* started,
                                            unsigned int* ended, unsigned long long max_ns)
{
    extern __shared__ unsigned char whole_sm[];
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    unsigned int sm;
    asm("mov.u32 %0, %%smid;" : "=r"(sm));
    whole_sm[0] = 0;
    atomicAdd_system(started, 1u);
    unsigned int how = 2;  // 2: gave up after max_ns; 1: released by the host
    do {
        if (*release) { how = 1; break; }
        __nanosleep(2000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < max_ns);
    ended[2 * blockIdx.x] = how;
    ended[2 * blockIdx.x + 1] = sm;
    __threadfence_system();
}
"""


@dataclass
class ResidencyResult:
    """One probe: the kernel at `shape` with `free_sms` SMs left to it, against the same launch on the whole GPU."""

    kernel_id: str
    shape: str
    sm_count: int
    held_sms: int
    free_sms: int
    grid: list[int]
    finished: bool  # the kernel finished while the holders still held their SMs
    verified: bool
    rel_error: float
    holders_released: int  # holders that ended because the host released them (the rest gave up by themselves)
    holders_on_distinct_sms: int
    ms_whole_gpu: float
    ms_with_sms_held: float


def probe(kernel_id: str, shape: Shape, free_sms: int, wait_s: float = 15.0) -> ResidencyResult:
    """Run `kernel_id` at `shape` once on the whole GPU, then once with all but `free_sms` SMs held (see the module
    docstring); `wait_s` bounds the wait for it before the holders are let go."""
    from profiling.gpu.compile import compile_kernel
    from profiling.gpu.device import compute_capability
    from profiling.gpu.fp32_cupy import cupy
    from profiling.gpu.jobs import tolerance_for
    from profiling.gpu.runner import Problem

    spec = get_kernel(kernel_id).launched_at(shape.n)
    device = cupy.cuda.Device()
    props = cupy.cuda.runtime.getDeviceProperties(device.id)
    sm_count = int(props["multiProcessorCount"])
    # A holder takes the most shared memory a block may: no block of the kernel fits beside it on its SM.
    smem_optin = int(props["sharedMemPerBlockOptin"])
    compiled = compile_kernel(spec)
    problem = Problem(spec.operation, shape, 1)
    tolerance = tolerance_for(spec, shape)

    def timed(launch: Any, stream: Any) -> tuple[Any, Any]:
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        with stream:
            start.record()
            launch()
            stop.record()
        return start, stop

    stream = cupy.cuda.Stream(non_blocking=True)
    launch = problem.launcher(compiled, spec, sm_count, spec.programmatic_launches(compute_capability(props)))
    problem.poison(spec)
    # The poisoning runs on the legacy stream, which does not order itself with non-blocking ones.
    device.synchronize()
    ms_whole = []
    for _ in range(3):  # the first launch also loads the module
        start, stop = timed(launch, stream)
        stop.synchronize()
        ms_whole.append(cupy.cuda.get_elapsed_time(start, stop))

    held = sm_count - free_sms
    problem.poison(spec)
    device.synchronize()
    flags = cupy.cuda.alloc_pinned_memory(4 * (2 + 2 * held))
    words = np.frombuffer(flags, dtype=np.uint32, count=2 + 2 * held)
    words[:] = 0
    holder = cupy.RawKernel(HOLDER_SOURCE, "gemmlens_hold_sm")
    holder.max_dynamic_shared_size_bytes = smem_optin
    hold_stream = cupy.cuda.Stream(non_blocking=True)
    base = flags.ptr
    with hold_stream:
        holder(
            (held,),
            (1,),
            (np.uint64(base), np.uint64(base + 4), np.uint64(base + 8), np.uint64(MAX_HOLD_NS)),
            shared_mem=smem_optin,
        )
    deadline = time.monotonic() + 5.0
    while words[1] < held and time.monotonic() < deadline:
        time.sleep(0.001)
    if words[1] < held:
        words[0] = 1
        hold_stream.synchronize()
        raise RuntimeError(f"only {int(words[1])} of {held} holders started: cannot hold the SMs")

    start, stop = timed(launch, stream)
    deadline = time.monotonic() + wait_s
    while not stop.done and time.monotonic() < deadline:
        time.sleep(0.001)
    finished = bool(stop.done)
    words[0] = 1
    hold_stream.synchronize()
    stop.synchronize()
    ended = words[2:].reshape(held, 2)
    check = problem.check(spec.is_reference, tolerance, half_output=spec.library_call == "matmul")
    return ResidencyResult(
        kernel_id=kernel_id,
        shape=shape.label,
        sm_count=sm_count,
        held_sms=held,
        free_sms=free_sms,
        grid=list(spec.launch_grid(shape.m, shape.n, shape.k, sm_count)),
        finished=finished,
        verified=check.ok,
        rel_error=float(check.rel_error),
        holders_released=int((ended[:, 0] == 1).sum()),
        holders_on_distinct_sms=len(set(ended[:, 1].tolist())),
        ms_whole_gpu=float(min(ms_whole)),
        ms_with_sms_held=float(cupy.cuda.get_elapsed_time(start, stop)),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernel", required=True, help="catalog id or configuration id")
    parser.add_argument("--shape", required=True, help="MxNxK")
    parser.add_argument("--free-sms", type=int, default=4)
    args = parser.parse_args(argv)
    from profiling.gpu.device import compute_capability
    from profiling.gpu.fp32_cupy import cupy

    props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    refused = get_kernel(args.kernel).device_problem(compute_capability(props))
    if refused:
        print(json.dumps({"refused": refused}))
        return 0
    result = probe(args.kernel, parse_shape(args.shape), args.free_sms)
    print(json.dumps(asdict(result)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
