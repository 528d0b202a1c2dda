"""GEMM Lens beyond one GPU: sweeps fanned out over every GPU of a node, or over a cluster, on Dask distributed.

- local.py: the clusters (`local-gpus`: one worker process per GPU; a scheduler address) and the option's check.
- share.py: the Dask task, run on a GPU worker: a share of the tasks through the GPU worker child (run_job).
- sweep.py: the client side: deal the tasks, stream progress, gather each result once, build the document.
- usecases.py: benchmark and tune on a cluster; profiling.py: ncu and compute-sanitizer on one.
- app.py: the app's GPU queue jobs when GEMMLENS_DASK_SCHEDULER names a scheduler.

Importing this package does not import Dask; its modules import it when a cluster is used. docs/scale-out.md
tells how to run a scheduler and workers.
"""
