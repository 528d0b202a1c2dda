"""A numpy emulation of kernels/src/v9_regdb.cu: every index the kernel computes, the cp.async pipeline and
the register double buffer, run on the CPU (no GPU needed).

It mirrors the source statement by statement, vectorised over the threads of a block, and checks what the
GPU cannot show us without running:
- C == A @ B exactly (small integer inputs, float64 accumulation), every output element written exactly once
  and nothing written outside C; every block of the grid visited once by the grouped block order;
- each copy's source lies inside A or B when its src-size is non-zero and is the element the tile needs,
  each copy's destination lies inside its stage, and every live element of every stage is written once;
- the pipeline is race-free: a fragment read finds its slice landed (cp.async.wait_group of this thread's
  group) and published (a __syncthreads after that wait), and a copy into a stage comes after a barrier that
  follows the last read of that stage and after the stage's previous copy has landed. Writes land only at
  the wait that covers their group, so a read of stale data would also show up as a wrong C.

`python -m kernels.emulate_v9` runs every tuning configuration on a set of awkward sizes.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from kernels.tuning import V9_TUNING_CONFIGS, a_coalesced_geometry, narrow_copies_a_coalesced
from profiling.shape import Shape

APAD = 4
GROUP_M = 8


class PipelineError(AssertionError):
    pass


def block_origins(m: int, n: int, bm_: int, bn_: int) -> list[tuple[int, int]]:
    """(bm, bn) of every block in launch order, as the kernel's grouped order computes them."""
    grid_n, grid_m = math.ceil(n / bn_), math.ceil(m / bm_)
    out = []
    for by in range(grid_m):
        for bx in range(grid_n):
            pid = by * grid_n + bx
            group_size = GROUP_M * grid_n
            first_m = (pid // group_size) * GROUP_M
            rows_in_group = min(grid_m - first_m, GROUP_M)
            bm = (first_m + (pid % group_size) % rows_in_group) * bm_
            bn = ((pid % group_size) // rows_in_group) * bn_
            out.append((bm, bn))
    return out


def emulate(
    p: dict[str, int],
    A: np.ndarray,
    B: np.ndarray,
    _skip_loop_barrier: bool = False,
    narrow: bool = False,
    spread: int = 0,
    _commit_late: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """C as the kernel computes it, and the number of writes to each element of C (`_skip_loop_barrier`
    drops the k loop's __syncthreads, to show that the race check catches it). `narrow`: as the kernel the host
    launches where N % 4 != 0 (sgemm_regdb_narrow, the body's NARROW), whose B copies take one column each and,
    with up to 64 accumulators a thread, whose A copies take a warp to 4 rows x 8 consecutive k (A_COALESCED).
    `spread` P: the measurement build V9_SPREAD_COPIES=P, a slice's copies in P parts (copy c in part c % P), part 0
    after the barrier, parts 1..P-1 at k steps 0..P-2 of the next slice, then its commit (`_commit_late`: that commit
    after the slice's wait instead, to show that the race check catches a slice its wait does not cover)."""
    BM, BN, BK, WM, WN, TM, TN, S, T = (p[k] for k in ("BM", "BN", "BK", "WM", "WN", "TM", "TN", "STAGES", "THREADS"))
    M, K = A.shape
    N = B.shape[1]
    VEC = N % 4 == 0
    WARPS_N = BN // WN
    LANES_M, LANES_N = WM // TM, WN // TN
    FRAG_M, FRAG_N = TM // 4, TN // 4
    FSM, FSN = LANES_M * 4, LANES_N * 4
    A_LD = BM + APAD
    A_STAGE = BK * A_LD
    SF = A_STAGE + BK * BN
    KQ = BK // 4
    A_UNITS = BM * KQ // T
    ARP = T // KQ
    BVR = BN // 4
    B_UNITS = BK * BVR // T
    BRP = T // BVR
    # NARROW with whole block rows per pass: one column per copy, consecutive threads on consecutive columns.
    ONE_COL = narrow and not VEC and T % BN == 0
    # The narrow kernels of up to 64 accumulators a thread copy A coalesced: a warp on 4 rows x 8 consecutive k.
    A_KL, A_PASS_ROWS, A_ROW_COPIES = a_coalesced_geometry(p)
    A_COALESCED = narrow and narrow_copies_a_coalesced(p)
    B_COPIES = 4 * B_UNITS if ONE_COL else B_UNITS
    BPR = T // BN if ONE_COL else BRP
    assert (BM // WM) * (BN // WN) * 32 == T and LANES_M * LANES_N == 32 and S >= 3
    assert (BM * KQ) % T == 0 and T % KQ == 0 and (BK * BVR) % T == 0 and T % BVR == 0

    Af, Bf = A.ravel(), B.ravel()
    C = np.full((M, N), np.nan)
    writes = np.zeros((M, N), dtype=np.int64)
    origins = block_origins(M, N, BM, BN)
    assert sorted(origins) == sorted(
        {(i * BM, j * BN) for i in range(math.ceil(M / BM)) for j in range(math.ceil(N / BN))}
    )

    tid = np.arange(T)

    def run_block(bm: int, bn: int) -> None:
        smem = np.full(S * SF, np.nan)  # what the stages hold (NaN: never written)
        # --- copy roles ---
        a_row0 = tid // KQ
        a_k = (tid % KQ) * 4
        a_grow = [bm + a_row0 + j * ARP for j in range(A_UNITS)]
        a_row_in = [g < M for g in a_grow]
        a_src = [np.where(a_row_in[j], a_grow[j] * K, 0) + a_k for j in range(A_UNITS)]
        b_row0 = tid // BN if ONE_COL else tid // BVR
        b_col = tid % BN if ONE_COL else (tid % BVR) * 4
        gb_col = bn + b_col
        b_src = b_row0 * N + gb_col
        b_pass = BPR * N
        b_slice = BK * N
        b_cols = np.minimum(np.maximum(N - gb_col, 0), 4)
        a_dst = a_k * A_LD + a_row0
        ac_row0, ac_k = tid // A_KL, tid % A_KL
        ac_dst = ac_k * A_LD + ac_row0
        b_dst = A_STAGE + b_row0 * BN + b_col

        # --- pipeline bookkeeping (uniform over the block: every thread runs the same sequence) ---
        groups: list[list[tuple]] = []  # committed groups: list of pending writes (dst, value)
        open_group: list[tuple] = []
        landed = []  # per group: landed (for every thread, as all run the same waits)
        visible_after_bar = []  # per group: a barrier followed its landing
        barrier_epoch = 0
        stage_state = [{"slice": None, "group": None, "last_read_epoch": -1} for _ in range(S)]
        calls = 0

        parts = max(spread, 1)
        touched = np.zeros(SF, dtype=np.int64)

        def load_tile(stage: int, k0: int, live: bool, part: int = 0) -> None:
            nonlocal b_src, calls, touched
            assert k0 == calls * BK, "load_tile calls must come in slice order (b_src advances per slice)"
            if part == parts - 1:
                calls += 1
            st = stage_state[stage]
            if st["group"] is not None and not landed[st["group"]]:
                raise PipelineError(f"copy into stage {stage} while its previous copy is in flight")
            if st["last_read_epoch"] >= barrier_epoch:
                raise PipelineError(f"copy into stage {stage} without a barrier after its last read")
            so = stage * SF
            if part == 0:
                touched = np.zeros(SF, dtype=np.int64)
            # A copy's index c, in v9_body.cuh's order, puts it in part c % P.
            # (destination, source index, copied, the element it must be) of each of this slice's A copies
            a_copies = []
            if A_COALESCED:
                ac_left = (K - k0 - ac_k) if live else np.zeros_like(ac_k)
                for j in range(A_ROW_COPIES):
                    grow = bm + ac_row0 + j * A_PASS_ROWS
                    src = (bm + ac_row0) * K + ac_k + j * A_PASS_ROWS * K + k0
                    for h in range(BK // A_KL):
                        dst = ac_dst + so + h * A_KL * A_LD + j * A_PASS_ROWS
                        ok = (grow < M) & (h * A_KL < ac_left)
                        if (j * (BK // A_KL) + h) % parts == part:
                            a_copies.append((dst, src + h * A_KL, ok, grow * K + k0 + ac_k + h * A_KL))
            else:
                a_left = (K - k0 - a_k) if live else np.zeros_like(a_k)
                for j in range(A_UNITS):
                    for e in range(4):
                        dst = a_dst + so + e * A_LD + j * ARP
                        ok = a_row_in[j] & (e < a_left)
                        if (j * 4 + e) % parts == part:
                            a_copies.append((dst, a_src[j] + k0 + e, ok, a_grow[j] * K + k0 + a_k + e))
            for dst, s_idx, ok, want in a_copies:
                if np.any(ok):
                    assert np.all(s_idx[ok] < M * K) and np.all(s_idx[ok] >= 0)
                    assert np.array_equal(s_idx[ok], want[ok]), "A copy reads the wrong element"
                val = np.where(ok, Af[np.where(ok, s_idx, 0)], 0.0)
                assert np.all((dst >= so) & (dst < so + A_STAGE))
                np.add.at(touched, dst - so, 1)
                open_group.extend(zip(dst.tolist(), val.tolist(), strict=True))
            b_left = (K - k0 - b_row0) if live else np.zeros_like(b_row0)
            for j in range(B_COPIES):
                if (A_UNITS * 4 + j) % parts != part:
                    continue
                k_in = j * BPR < b_left
                dst = b_dst + so + j * BPR * BN
                src = b_src + j * b_pass
                for e in range(1 if ONE_COL else 4):
                    ok = k_in & (b_cols > 0) if VEC or ONE_COL else k_in & (e < b_cols)
                    s_idx = src + e
                    if np.any(ok):
                        assert np.all(s_idx[ok] < K * N) and np.all(s_idx[ok] >= 0)
                        want = (k0 + b_row0 + j * BPR) * N + gb_col + e
                        assert np.array_equal(s_idx[ok], want[ok]), "B copy reads the wrong element"
                        if VEC:  # 16-byte copy: source 16-byte aligned and the whole group inside B's row
                            assert np.all(s_idx[ok] % 4 == e) and np.all(gb_col[ok] + 3 < N)
                    val = np.where(ok, Bf[np.where(ok, s_idx, 0)], 0.0)
                    d = dst + e
                    assert np.all((d >= so + A_STAGE) & (d < so + SF))
                    np.add.at(touched, d - so, 1)
                    open_group.extend(zip(d.tolist(), val.tolist(), strict=True))
            if part < parts - 1:
                return
            b_src = b_src + b_slice
            # Every element of the stage except the A padding is written exactly once per fill.
            live_mask = np.ones(SF, dtype=bool)
            for kk in range(BK):
                live_mask[kk * A_LD + BM : (kk + 1) * A_LD] = False
            assert np.all(touched[live_mask] == 1) and np.all(touched[~live_mask] == 0)
            st["slice"] = k0 // BK
            st["group"] = len(groups)  # the group this copy will be committed in

        def commit() -> None:
            nonlocal open_group
            groups.append(open_group)
            landed.append(False)
            visible_after_bar.append(False)
            open_group = []

        def wait(pending: int) -> None:
            for g in range(len(groups) - pending):
                if not landed[g]:
                    for d, v in groups[g]:
                        smem[d] = v
                    landed[g] = True

        def syncthreads() -> None:
            nonlocal barrier_epoch
            barrier_epoch += 1
            for g in range(len(groups)):
                if landed[g]:
                    visible_after_bar[g] = True

        def read(rd: int, k: int, want_slice: int | None):
            st = stage_state[rd]
            if want_slice is not None:  # a fragment that will be used
                if st["slice"] != want_slice:
                    raise PipelineError(f"stage {rd} holds slice {st['slice']}, slice {want_slice} wanted")
                if not visible_after_bar[st["group"]]:
                    raise PipelineError(f"slice {want_slice} read before it landed and a barrier published it")
            elif st["group"] is not None and not landed[st["group"]]:
                raise PipelineError("unused fragment load races with an in-flight copy")
            st["last_read_epoch"] = barrier_epoch
            a = np.empty((T, TM))
            b = np.empty((T, TN))
            base = rd * SF
            for f in range(FRAG_M):
                for r in range(4):
                    a[:, f * 4 + r] = smem[base + k * A_LD + tm0 + f * FSM + r]
            for f in range(FRAG_N):
                for c in range(4):
                    b[:, f * 4 + c] = smem[base + A_STAGE + k * BN + tn0 + f * FSN + c]
            return a, b

        warp, lane = tid >> 5, tid & 31
        tm0 = (warp // WARPS_N) * WM + (lane // LANES_N) * 4
        tn0 = (warp % WARPS_N) * WN + (lane % LANES_N) * 4
        # float4 fragment reads are 16-byte aligned
        assert np.all(tm0 % 4 == 0) and np.all(tn0 % 4 == 0) and A_LD % 4 == 0 and A_STAGE % 4 == 0 and SF % 4 == 0

        acc = np.zeros((T, TM, TN))
        k_tiles = (K + BK - 1) // BK
        for s in range(S - 1):
            for part in range(parts):
                load_tile(s, s * BK, s < k_tiles, part)
            commit()
        wait(S - 2)
        syncthreads()
        rd, wr = 0, S - 1
        fa = [None, None]
        fb = [None, None]
        fa[0], fb[0] = read(0, 0, 0)
        pending = (0, 0, False)  # the slice whose parts 1..P-1 go out during this one
        for t in range(k_tiles):
            for k in range(BK):
                cur = k & 1
                nxt = cur ^ 1
                if spread and k < parts - 1 and t > 0:
                    load_tile(*pending, k + 1)
                    if k == parts - 2 and not _commit_late:
                        commit()
                if k == BK - 1:
                    wait(S - 3)
                    if not _skip_loop_barrier:
                        syncthreads()
                    if spread and _commit_late and t > 0:
                        commit()
                    nxt_slice = t + S - 1
                    pending = (wr, nxt_slice * BK, nxt_slice < k_tiles)
                    load_tile(*pending, 0)
                    if parts == 1:
                        commit()
                    rd = 0 if rd + 1 == S else rd + 1
                    wr = 0 if wr + 1 == S else wr + 1
                    fa[nxt], fb[nxt] = read(rd, 0, t + 1 if t + 1 < k_tiles else None)
                else:
                    fa[nxt], fb[nxt] = read(rd, k + 1, t)
                acc += fa[cur][:, :, None] * fb[cur][:, None, :]
        if spread:
            commit()  # the last slice's part 0 (past the end) is in no group yet
        wait(0)
        assert all(landed)

        for i in range(TM):
            row = bm + tm0 + (i // 4) * FSM + (i % 4)
            for g in range(FRAG_N):
                col = bn + tn0 + g * FSN
                for th in range(T):
                    if row[th] >= M:
                        continue
                    if VEC and col[th] < N:
                        cols = range(col[th], col[th] + 4)
                    else:
                        cols = [col[th] + c for c in range(4) if col[th] + c < N]
                    for c in cols:
                        assert 0 <= c < N
                        cidx = c - col[th]
                        C[row[th], c] = acc[th, i, g * 4 + cidx]
                        writes[row[th], c] += 1

    for bm, bn in origins:
        run_block(bm, bn)
    return C, writes


def check(p: dict[str, int], m: int, n: int, k: int, seed: int = 0, narrow: bool = False, spread: int = 0) -> None:
    rng = np.random.default_rng(seed)
    A = rng.integers(-4, 5, size=(m, k)).astype(np.float64)
    B = rng.integers(-4, 5, size=(k, n)).astype(np.float64)
    C, writes = emulate(p, A, B, narrow=narrow, spread=spread)
    size = Shape(m, n, k).label
    assert np.all(writes == 1), f"{size}: writes per element {np.unique(writes)}"
    assert np.array_equal(C, A @ B), f"{size}: wrong result, max err {np.nanmax(np.abs(C - A @ B))}"


SIZES = [(1, 1, 1), (130, 67, 37), (257, 129, 17), (64, 260, 8), (300, 520, 50), (1, 257, 33), (129, 4, 64)]


def main(argv: list[str]) -> int:
    sizes = SIZES
    for c in V9_TUNING_CONFIGS:
        for m, n, k in sizes:
            check(c["params"], m, n, k, narrow=n % 4 != 0)
        print(f"ok {c['id']}: {', '.join(Shape(*size).label for size in sizes)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
