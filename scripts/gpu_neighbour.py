"""A noisy neighbour on the GPU, for the verdicts stage: bursts of cuBLAS SGEMMs switched on and off, so a kernel
timed meanwhile sees its speed change with the phase (as it would beside another team's job on a shared node).

Usage: python scripts/gpu_neighbour.py SECONDS [ON_S OFF_S]   (default 0.35 s on, 0.35 s off)
"""

from __future__ import annotations

import sys
import time

import cupy

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
on_s = float(sys.argv[2]) if len(sys.argv) > 2 else 0.35
off_s = float(sys.argv[3]) if len(sys.argv) > 3 else 0.35
a = cupy.random.random((4096, 4096), dtype=cupy.float32)
b = cupy.random.random((4096, 4096), dtype=cupy.float32)
out = cupy.empty_like(a)
stream = cupy.cuda.Stream(non_blocking=True)
end = time.monotonic() + seconds
bursts = 0
while time.monotonic() < end:
    burst_end = time.monotonic() + on_s
    with stream:
        while time.monotonic() < burst_end:
            cupy.matmul(a, b, out=out)
            stream.synchronize()
    bursts += 1
    time.sleep(off_s)
print(f"neighbour: {bursts} bursts of {on_s} s on / {off_s} s off")
