"""One GPU job at a time across every browser session: a queue served by one background thread, fair between users.

The app keeps a single `GpuJobQueue` (st.cache_resource), so two people pressing "Run" get their jobs
run one after the other and the second sees its place in the queue. Waiting jobs are served round-robin
between owners (one job of each owner in turn, each owner's own jobs in order), and one owner may have at most
`max_queued` jobs waiting. An owner is an Identity (profiling.team.roles), whose role must allow running GPU
jobs, or a plain name where no sign-in is configured (a queue made with `require_identity` refuses names). A job is a function of the
`GpuJob` it runs as: it reports progress through `job.report()` and should stop soon after
`job.cancel` is set (profiling.gpu.worker.run_job takes that Event directly). Jobs never touch CUDA in the
app process: they start worker children, so a crash fails the job, not the server.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from profiling.errors import GemmLensError, error_line
from profiling.team.roles import Identity, PermissionDenied, require

JobState = Literal["queued", "running", "done", "failed", "cancelled"]
FINISHED: frozenset[str] = frozenset({"done", "failed", "cancelled"})


@dataclass
class GpuJob:
    """One queued piece of GPU work and everything a page shows about it."""

    id: int
    label: str
    owner: str  # who queued it: an identity's id, or a name where there is no sign-in
    fn: Callable[[GpuJob], Any]
    state: JobState = "queued"
    progress: float = 0.0
    message: str = "waiting for the GPU"
    events: list[str] = field(default_factory=list)
    partial: list[Any] = field(default_factory=list)
    result: Any = None
    error: str | None = None
    cancel: threading.Event = field(default_factory=threading.Event)
    submitted: float = field(default_factory=time.time)
    started: float | None = None
    finished: float | None = None

    def report(self, progress: float | None = None, message: str | None = None, item: Any = None) -> None:
        """Called from the job: fraction done (0..1), a status line, and a partial result to keep."""
        if progress is not None:
            self.progress = min(max(float(progress), 0.0), 1.0)
        if message is not None:
            self.message = message
            self.events.append(message)
        if item is not None:
            self.partial.append(item)

    @property
    def finished_state(self) -> bool:
        return self.state in FINISHED

    @property
    def elapsed_s(self) -> float:
        if self.started is None:
            return 0.0
        return (self.finished or time.time()) - self.started


class QueueFull(GemmLensError):
    """An owner already has as many jobs waiting as one owner may."""


class GpuJobQueue:
    """GpuJobs run one at a time by a daemon thread (started on the first submit), round-robin between owners."""

    def __init__(self, keep_finished: int = 50, *, max_queued: int = 4, require_identity: bool = False) -> None:
        self._cond = threading.Condition()
        self._jobs: dict[int, GpuJob] = {}
        self._waiting: dict[str, deque[int]] = {}  # per owner, in the order submitted
        self._turns: deque[str] = deque()  # owners with waiting jobs, whose turn is next first
        self._running: int | None = None
        self._ids = itertools.count(1)
        self._thread: threading.Thread | None = None
        self._keep = keep_finished
        self.max_queued = max_queued
        self.require_identity = require_identity

    def submit(self, label: str, owner: Identity | str, fn: Callable[[GpuJob], Any]) -> GpuJob:
        """Queue `fn` to run on the GPU; returns its job at once (state "queued"). PermissionDenied when the owner
        may not run GPU jobs, QueueFull when it already has `max_queued` jobs waiting."""
        if isinstance(owner, Identity):
            require(owner, "run")
            name = owner.id
        elif self.require_identity:
            raise PermissionDenied("sign in first: running GPU jobs on this server needs a signed-in identity")
        else:
            name = owner
        with self._cond:
            mine = self._waiting.setdefault(name, deque())
            if len(mine) >= self.max_queued:
                raise QueueFull(
                    f"{name} already has {len(mine)} jobs waiting for the GPU, the most one user may queue: "
                    "wait for one to start, or cancel one"
                )
            job = GpuJob(id=next(self._ids), label=label, owner=name, fn=fn)
            self._jobs[job.id] = job
            mine.append(job.id)
            if name not in self._turns:
                self._turns.append(name)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._serve, name="gemmlens-gpu-queue", daemon=True)
                self._thread.start()
            self._cond.notify_all()
            return job

    def get(self, job_id: int | None) -> GpuJob | None:
        """The job with this id, or None (unknown or forgotten)."""
        with self._cond:
            return self._jobs.get(job_id) if job_id is not None else None

    def position(self, job_id: int) -> int | None:
        """0 while running, n when n jobs are ahead of it (the running one included), None when finished."""
        with self._cond:
            if self._running == job_id:
                return 0
            order = self._order()
            if job_id in order:
                return order.index(job_id) + (1 if self._running is not None else 0)
            return None

    def running(self) -> GpuJob | None:
        """The job holding the GPU now, if any."""
        with self._cond:
            return self._jobs.get(self._running) if self._running is not None else None

    def waiting(self) -> list[GpuJob]:
        """Queued jobs, next first (the order the round-robin will run them in, if nothing more is queued)."""
        with self._cond:
            return [self._jobs[i] for i in self._order()]

    def _order(self) -> list[int]:
        """Waiting job ids in the order they will run: one of each owner per round, owners in turn order."""
        queues = [list(self._waiting.get(owner, ())) for owner in self._turns]
        return [q[i] for i in range(max(map(len, queues), default=0)) for q in queues if i < len(q)]

    def _next(self) -> int:
        """Take the next job: the first waiting job of the owner whose turn it is; that owner goes to the back."""
        owner = self._turns.popleft()
        mine = self._waiting[owner]
        job_id = mine.popleft()
        if mine:
            self._turns.append(owner)
        else:
            del self._waiting[owner]
        return job_id

    def _unqueue(self, job: GpuJob) -> bool:
        """Remove a waiting job from its owner's queue; False when it was not waiting."""
        mine = self._waiting.get(job.owner)
        if not mine or job.id not in mine:
            return False
        mine.remove(job.id)
        if not mine:
            del self._waiting[job.owner]
            self._turns.remove(job.owner)
        return True

    def cancel(self, job_id: int) -> bool:
        """Cancel a job: a queued one never starts; a running one sees `job.cancel` set. False if finished."""
        with self._cond:
            job = self._jobs.get(job_id)
            if job is None or job.finished_state:
                return False
            job.cancel.set()
            if self._unqueue(job):
                job.state, job.message, job.finished = "cancelled", "cancelled before it started", time.time()
            self._cond.notify_all()
            return True

    def wait(self, job_id: int, timeout_s: float | None = None) -> GpuJob | None:
        """Block until the job finishes (or the timeout passes); returns the job."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        with self._cond:
            while True:
                job = self._jobs.get(job_id)
                if job is None or job.finished_state:
                    return job
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return job
                self._cond.wait(timeout=left if left is not None else 1.0)

    def _serve(self) -> None:
        while True:
            with self._cond:
                while not self._turns:
                    self._cond.wait()
                job = self._jobs[self._next()]
                self._running = job.id
                job.state, job.started, job.message = "running", time.time(), "running"
            try:
                job.result = job.fn(job)
                state: JobState = "cancelled" if job.cancel.is_set() else "done"
                error = None
            except GemmLensError as exc:
                state, error = "failed", error_line(exc, limit=500)
            except Exception as exc:  # noqa: BLE001 - any job failure is shown in the page; the server keeps going
                state, error = "failed", f"unexpected error: {type(exc).__name__}: {error_line(exc, limit=500)}"
            with self._cond:
                job.state, job.error, job.finished = state, error, time.time()
                job.message = error or ("cancelled" if state == "cancelled" else "finished")
                if state == "done":
                    job.progress = 1.0
                self._running = None
                self._forget_old()
                self._cond.notify_all()

    def _forget_old(self) -> None:
        done = [i for i, j in self._jobs.items() if j.finished_state]
        for job_id in done[: max(len(done) - self._keep, 0)]:
            del self._jobs[job_id]
