"""A kernel that holds the GPU's stream while the host enqueues the launches to be timed (nvbench's blocking kernel).

Event timings measure the GPU's clock between two events on the stream. When the host enqueues more slowly than the
GPU runs (a launch of a few microseconds after a 30 us L2 flush, through Python), the GPU reaches a start event and
then waits for the host to enqueue the kernel: the wait lands inside the timing. On an H100 a serial split-K run
went from 81 us a launch to 116-172 us from its 18th launch on and stayed there, and cuBLAS's small shapes showed
p90s of 1.5-3.4x their p10, while the kernels themselves had not changed.

Here one single-thread kernel spins until the host has enqueued a batch of launches (timing.HELD_LAUNCHES) and
then writes a ticket into pinned host memory; the GPU then runs the batch back to back, without waiting for the
host inside any timing. A hold never outlives MAX_HOLD_NS, so a host that dies cannot leave the GPU spinning.
"""

from __future__ import annotations

from typing import Any

import numpy as np

MAX_HOLD_NS = 5_000_000_000
"""A hold ends by itself after this many nanoseconds of the GPU's global timer, released or not."""

HOLD_SOURCE = r"""
extern "C" __global__ void gemmlens_hold(const volatile unsigned int* release, unsigned int ticket,
                                         unsigned long long max_ns)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        if (*release >= ticket) return;
        __nanosleep(1000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < max_ns);
}
"""


class LaunchHold:
    """`enqueue` puts a hold on the current stream; `release` lets the latest one go, once the host has enqueued
    what follows it. One per worker session: the release word lives in pinned host memory, which the GPU reads
    directly (unified addressing: the host pointer is valid in kernels)."""

    def __init__(self, cupy: Any, max_ns: int = MAX_HOLD_NS) -> None:
        self._memory = cupy.cuda.alloc_pinned_memory(4)
        self._release = np.frombuffer(self._memory, dtype=np.uint32, count=1)
        self._release[0] = 0
        self._ticket = 0
        self._max_ns = max_ns
        self._kernel = cupy.RawKernel(HOLD_SOURCE, "gemmlens_hold")

    def enqueue(self) -> None:
        """A hold on the current stream: what is enqueued after it runs once `release` is called."""
        self._ticket += 1
        self._kernel((1,), (1,), (np.uint64(self._memory.ptr), np.uint32(self._ticket), np.uint64(self._max_ns)))

    def release(self) -> None:
        """Let the latest hold go."""
        self._release[0] = self._ticket
