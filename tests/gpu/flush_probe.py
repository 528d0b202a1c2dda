"""Child process for tests/gpu/test_gpu_flush.py: shows, with the worker's own Session and timer, that the L2
flush runs before every timed launch. Prints one JSON object.

- "seen": the first and last byte of the flush buffer as read by a kernel at each launch the timer makes;
- "chase_ms": median time of a dependent-load chase through 2 MiB (it fits in any L2) with and without the
  flush, through runner._time_launches;
- "run_task_flush": whether run_task handed the session's flush buffer (or None) to the timer, per setting.
"""

from __future__ import annotations

import json

import cupy
import numpy as np

from profiling.gpu import runner
from profiling.gpu.jobs import BenchSettings
from profiling.gpu.timing import summarize
from profiling.shape import Shape

SOURCE = r"""
extern "C" __global__ void record_flush(const unsigned char* flush, unsigned long long nbytes, int* log, int* count) {
    const int i = atomicAdd(count, 1);
    log[2 * i] = flush[0];
    log[2 * i + 1] = flush[nbytes - 1];
}

// One thread follows next[] from slot 0: every load's address is the previous load's value, so the loads
// cannot overlap and the time is hops x load latency. ld.global.cg skips L1 (L2 or DRAM every hop).
extern "C" __global__ void chase(const unsigned int* next, int hops, unsigned int* sink) {
    unsigned int i = 0;
    for (int h = 0; h < hops; ++h) {
        asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(i) : "l"(next + i));
    }
    sink[0] = i;
}
"""

SLOTS, SLOT_WORDS = 8192, 64  # 8192 slots 256 B apart: 2 MiB, every hop on its own cache line


def main() -> None:
    session = runner.Session()
    flush = session.flush_buffer()
    module = cupy.RawModule(code=SOURCE)
    report: dict = {"l2_bytes": session.device["l2_bytes"], "flush_bytes": int(flush.nbytes)}

    # 1. The flush buffer's bytes as each launch sees them: warm-ups, the budget probe, then the timed ones.
    record = module.get_function("record_flush")
    log = cupy.full(2 * 256, -1, dtype=cupy.int32)
    count = cupy.zeros(1, dtype=cupy.int32)
    settings = BenchSettings(repeats=20, warmup=2, flush_l2=True)
    runner._time_launches(
        lambda: record((1,), (1,), (flush, np.uint64(flush.nbytes), log, count)),
        settings,
        flush,
        session.hold(settings),
    )
    launches = int(count.get()[0])
    report["launches"] = launches
    report["seen"] = log.get()[: 2 * launches].reshape(-1, 2).tolist()

    # 2. A chase through 2 MiB, timed with and without the flush.
    order = np.random.default_rng(7).permutation(SLOTS)
    order = np.concatenate([[0], order[order != 0]])  # the chase starts at slot 0
    table = np.zeros(SLOTS * SLOT_WORDS, dtype=np.uint32)
    table[order * SLOT_WORDS] = np.roll(order, -1) * SLOT_WORDS
    chain = cupy.asarray(table)
    sink = cupy.zeros(1, dtype=cupy.uint32)
    chase = module.get_function("chase")

    def launch() -> None:
        chase((1,), (1,), (chain, np.int32(SLOTS), sink))

    report["chase_ms"] = {}
    for flushed in (True, False, True, False):  # interleaved, so a clock change cannot favour one side
        chase_settings = BenchSettings(repeats=30, warmup=2, flush_l2=flushed)
        times = runner._time_launches(launch, chase_settings, flush if flushed else None, session.hold(chase_settings))
        report["chase_ms"].setdefault("flushed" if flushed else "unflushed", []).append(summarize(times)["median"])

    # 3. run_task hands the flush buffer to the timer exactly when the settings ask for it.
    handed: list[bool | None] = []
    timer = runner._time_launches

    def spy(launch, settings, flush_arg, hold):
        handed.append(None if flush_arg is None else flush_arg is session.flush)
        return timer(launch, settings, flush_arg, hold)

    runner._time_launches = spy
    for flush_l2 in (True, False):
        result = runner.run_task(
            session, "v1", Shape(64, 64, 64), BenchSettings(repeats=3, warmup=1, flush_l2=flush_l2), "bench"
        )
        assert result["status"] == "ok", result
    report["run_task_flush"] = handed
    print(json.dumps(report))


if __name__ == "__main__":
    main()
