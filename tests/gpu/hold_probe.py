"""Child process of test_gpu_hold.py: a kernel of known length, launched by a host that sleeps before each launch,
timed by the worker's timer without and with the launch hold; and a hold nobody releases. Prints one JSON line."""

from __future__ import annotations

import json
import time

import cupy
import numpy as np

from profiling.gpu.hold import LaunchHold
from profiling.gpu.timing import time_launches

SPIN_NS = 20_000
HOST_SLEEP_S = 0.0003
SPIN_SOURCE = r"""
extern "C" __global__ void spin(unsigned long long ns)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)); } while (now - start < ns);
}
"""


def main() -> None:
    spin = cupy.RawKernel(SPIN_SOURCE, "spin")

    def slow_host_launch() -> None:
        time.sleep(HOST_SLEEP_S)  # a host slower than the kernel, as Python is beside a kernel of microseconds
        spin((1,), (1,), (np.uint64(SPIN_NS),))

    as_enqueued = time_launches(cupy, slow_host_launch, 2, 40, 4.0, None)
    held = time_launches(cupy, slow_host_launch, 2, 40, 4.0, None, LaunchHold(cupy))
    forgotten = LaunchHold(cupy, max_ns=50_000_000)
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    start.record()
    forgotten.enqueue()  # never released: ends by its own time-out
    end.record()
    end.synchronize()
    print(
        json.dumps(
            {
                "spin_us": SPIN_NS / 1000,
                "as_enqueued_ms": as_enqueued,
                "held_ms": held,
                "forgotten_hold_ms": cupy.cuda.get_elapsed_time(start, end),
            }
        )
    )


if __name__ == "__main__":
    main()
