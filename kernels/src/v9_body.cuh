// The body of the v9 kernels (sgemm_regdb and sgemm_regdb_ordered in v9_regdb.cu, sgemm_regdb_splitk in
// v9_splitk.cu, sgemm_regdb_clusterk in v9_clusterk.cu): register double buffering over v8's cp.async pipeline.
// SPLIT (false for v9_regdb.cu's kernels) makes a block multiply only the blockIdx.z-th of gridDim.z ranges of K
// slices and add its partial tile into C with float reductions instead of storing it; with STREAM_K the tile and
// the K range are the caller's `segment` instead (a block of sgemm_regdb_streamk runs the body once per segment).
// CLUSTER_SPLITS (0 for all but v9_clusterk.cu's kernel) splits K the same way over the CLUSTER_SPLITS blocks of a
// thread-block cluster, which sum their partial tiles through distributed shared memory and store C once. The body
// is inlined into each __global__ kernel, so each keeps its name, its launch bounds and its machine code
// (scripts/sass_identity.py compares them).
//
// kernels/sources.py inlines this file (and cp_async.cuh, which it includes) where a kernel includes it.
#pragma once

#include "cp_async.cuh"
#include "pdl.cuh"

namespace v9 {

using namespace cp_async;  // smem_addr, copy4, copy16, commit, wait<N>

#ifndef V9_B_ROWWISE
#define V9_B_ROWWISE 0
#endif
#ifndef V9_K_UNROLL
#define V9_K_UNROLL 0  // 0: a slice's BK k steps fully unrolled
#endif
#ifndef V9_K_TAIL
#define V9_K_TAIL 0
#endif
#ifndef V9_SK_HYBRID
#define V9_SK_HYBRID 0  // measurement (scripts/pdl_probe.py --builds hybrid): see streamk_run in v9_splitk.cu
#endif

// Rows of the transposed A tile are padded by 4 floats (16-byte aligned rows for LDS.128).
constexpr int APAD = 4;
constexpr int GROUP_M = 8;

// C[0..3] += v (p 16-byte aligned) with one 16-byte reduction where the hardware has it (sm_90), four otherwise.
// The result is unused, so atomicAdd compiles to a reduction (RED), not an atomic round trip.
__device__ __forceinline__ void add4(float* p, float4 v)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w)
                 : "memory");
#else
    atomicAdd(p, v.x); atomicAdd(p + 1, v.y); atomicAdd(p + 2, v.z); atomicAdd(p + 3, v.w);
#endif
}

// C[0..1] += (x, y) (p 8-byte aligned), as add4.
__device__ __forceinline__ void add2(float* p, float x, float y)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("red.global.add.v2.f32 [%0], {%1, %2};" ::"l"(p), "f"(x), "f"(y) : "memory");
#else
    atomicAdd(p, x); atomicAdd(p + 1, y);
#endif
}

// C[0..3] += (x, y, z, w) at any 4-byte aligned p, in the widest reductions p's alignment allows: where
// N % 4 != 0 a row's start moves by N floats, so a quarter of the rows (odd N) or half (N % 4 == 2) take one
// 16-byte reduction, the others two 8-byte ones or, at odd places, 4 + 8 + 4 bytes. Fewer reductions per float cut
// a split-K epilogue's L2 operations up to four times.
__device__ __forceinline__ void add4_unaligned(float* p, float x, float y, float z, float w)
{
    const unsigned long long a = reinterpret_cast<unsigned long long>(p);
    if ((a & 15) == 0) {
        add4(p, make_float4(x, y, z, w));
    } else if ((a & 7) == 0) {
        add2(p, x, y);
        add2(p + 2, z, w);
    } else {
        atomicAdd(p, x);
        add2(p + 1, y, z);
        atomicAdd(p + 3, w);
    }
}

// Rows of the partial C tile a cluster-split block leaves in shared memory are padded by 4 floats: where a warp's
// lanes are 8 rows of 4 (WN / TN = 4), the float4 stores of lanes 4 rows apart then fall on other banks.
constexpr int CPAD = 4;

// One stream-K segment (sgemm_regdb_streamk in v9_splitk.cu): output tile `tile` of a grid_m x grid_n tile grid, in
// the grouped order below, over `k_tiles` K slices from slice `k_first`.
struct Segment {
    int tile;
    int grid_m;
    int grid_n;
    int k_first;
    int k_tiles;
};

// Tile `pid`'s row and column in a grid_m x grid_n tile grid, in the grouped order: consecutive ids cover GROUP_M
// tile rows before moving right.
__device__ __forceinline__ int2 grouped_tile(int pid, int grid_m, int grid_n)
{
    const int group_size = GROUP_M * grid_n;
    const int first_m = (pid / group_size) * GROUP_M;
    const int rows_in_group = min(grid_m - first_m, GROUP_M);
    return make_int2(first_m + (pid % group_size) % rows_in_group, (pid % group_size) / rows_in_group);
}

// A serial split's arrival at its tile's count; the last of the non-empty splits resets it for the next launch
// (splits past the end of K returned at the start and never arrive).
__device__ __forceinline__ void serial_arrive(unsigned* tile_arrivals, int K, int BK)
{
    const int all_tiles = (K + BK - 1) / BK;
    const int per_split = (all_tiles + (int)gridDim.z - 1) / (int)gridDim.z;
    const unsigned live = (unsigned)((all_tiles + per_split - 1) / per_split);
    if (atomicAdd(tile_arrivals, 1u) == live - 1) atomicExch(tile_arrivals, 0u);
}

// A load with acquire semantics at GPU scope: what the thread that released the value wrote before is visible after.
__device__ __forceinline__ unsigned load_acquire(const unsigned* p)
{
    unsigned v;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
#else
    v = *(volatile const unsigned*)p;
    __threadfence();
#endif
    return v;
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// Thread-block cluster primitives (sm_90): this block's rank in its cluster, a barrier over every thread of the
// cluster (arrive has release and wait acquire semantics, so shared-memory writes before it are visible to the
// whole cluster after it), the address of the same shared-memory location in block `rank`, and a 16-byte load
// from another block's shared memory.
__device__ __forceinline__ unsigned cluster_rank()
{
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}

__device__ __forceinline__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}

__device__ __forceinline__ unsigned map_to_rank(unsigned local, unsigned rank)
{
    unsigned remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(local), "r"(rank));
    return remote;
}

__device__ __forceinline__ float4 load_cluster4(unsigned addr)
{
    float4 v;
    asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "r"(addr)
                 : "memory");
    return v;
}
#endif

}  // namespace v9

// The whole kernel for one B copy width: VEC (N % 4 == 0) copies B in 16-byte pieces, otherwise in 4-byte
// pieces. Instantiating both keeps the main loop free of branches on the width. SPLIT: this block's K range is
// the blockIdx.z-th of gridDim.z ranges of whole slices (the host picks gridDim.z so that none is empty), and the
// epilogue adds into C, which holds zeros first. CLUSTER_SPLITS > 0 (sm_90, a grid of exactly CLUSTER_SPLITS
// blocks on z, clusters of (1, 1, CLUSTER_SPLITS)): the blockIdx.z-th of CLUSTER_SPLITS ranges, which may be
// empty; the epilogue reduces the cluster's partial tiles in shared memory (smem must hold BM x (BN + CPAD)
// floats) and stores each C element once. NARROW (with VEC false: the kernels of their own that the host launches
// where N % 4 != 0) copies B one column per thread and adds split-K partial tiles in the widest reductions each
// address allows. It is a separate instantiation, not a change of the !VEC path, because the VEC and !VEC bodies
// share their kernel function's registers: the narrow copies in the same function cost the 16-byte path 2-10
// points of cuBLAS on the H100. PAD_C (NARROW and SPLIT: the padded-C kernels, KernelSpec.pads_n without pads_b):
// C's rows are N rounded up to a multiple of 4 floats long, so every partial 4-column group takes one 16-byte
// reduction while B is still read where it lies. SERIAL (SPLIT without STREAM_K: the serial kernels of
// v9_splitk.cu): split 0 stores its partial tile, the other splits wait for its arrival in `arrivals` (a count per
// tile) and add theirs, so C needs no zeroing first. ZERO_FIRST (SERIAL): split 0 zeroes its tile of C (PAD_C: of
// C's copy) before its main loop and arrives then, and every split adds, so no split waits behind another's additions.
// PAD_B (VEC and SPLIT: the padded-B kernels, KernelSpec.pads_b without pads_c): B's rows are N rounded up to a
// multiple of 4 floats long (a copy, zeros past N), so B takes the 16-byte copies, while the partial tiles are added
// into C where it lies as the narrow kernels add them.
template <bool VEC, int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int THREADS, int ORDER,
          bool SPLIT = false, int CLUSTER_SPLITS = 0, bool NARROW = false, bool STREAM_K = false, bool PAD_C = false,
          bool SERIAL = false, bool ZERO_FIRST = false, bool PAD_B = false>
__device__ __forceinline__ void regdb_body(const float* __restrict__ A, const float* __restrict__ B,
                                           float* __restrict__ C, int M, int N, int K, float* smem,
                                           v9::Segment segment = {}, unsigned* __restrict__ arrivals = nullptr)
{
    constexpr int WARPS_N = BN / WN;
    constexpr int LANES_M = WM / TM;
    constexpr int LANES_N = WN / TN;
    constexpr int FRAG_M = TM / 4;
    constexpr int FRAG_N = TN / 4;
    constexpr int FRAG_STRIDE_M = LANES_M * 4;
    constexpr int FRAG_STRIDE_N = LANES_N * 4;
    constexpr int A_LD = BM + v9::APAD;
    constexpr int A_STAGE = BK * A_LD;
    constexpr int STAGE_FLOATS = A_STAGE + BK * BN;
    constexpr int KQ = BK / 4;                              // 4-wide K groups per A row
    constexpr int A_UNITS = BM * KQ / THREADS;              // (row, 4 k) groups per thread
    constexpr int A_ROWS_PER_PASS = THREADS / KQ;
    constexpr int B_VECS_PER_ROW = BN / 4;
    constexpr int B_UNITS = BK * B_VECS_PER_ROW / THREADS;  // float4 slots per thread
    constexpr int B_ROWS_PER_PASS = THREADS / B_VECS_PER_ROW;

    static_assert(THREADS % 32 == 0, "whole warps");
    static_assert((BM / WM) * (BN / WN) * 32 == THREADS, "one warp per warp tile");
    static_assert(LANES_M * LANES_N == 32, "a warp tile is covered by exactly 32 lanes");
    static_assert(TM % 4 == 0 && TN % 4 == 0 && WM % TM == 0 && WN % TN == 0, "4x4 fragments");
    static_assert(BK % 4 == 0 && (BM * KQ) % THREADS == 0 && THREADS % KQ == 0, "A copy units divide evenly");
    static_assert((BK * B_VECS_PER_ROW) % THREADS == 0 && THREADS % B_VECS_PER_ROW == 0, "B copy units divide evenly");
    static_assert(STAGES >= 3, "slice t+STAGES-1 is copied into the buffer of slice t-1 while slice t+1 is read");
    static_assert(!(SPLIT && CLUSTER_SPLITS), "one way of splitting K");
    static_assert(!STREAM_K || SPLIT, "a stream-K segment adds its partial tile into C like a split");
    static_assert(CLUSTER_SPLITS == 0 || BM % CLUSTER_SPLITS == 0, "each block of a cluster reduces whole rows");
    static_assert(!PAD_C || (NARROW && SPLIT), "a padded C is the narrow split kernels' reduction target");
    static_assert(!SERIAL || (SPLIT && !STREAM_K), "serial splits are blockIdx.z splits");
    static_assert(!ZERO_FIRST || SERIAL, "split 0 zeroes C itself where it would store first");
    static_assert(!PAD_B || (VEC && SPLIT && !NARROW), "a padded B is the 16-byte split kernels' operand");

    const int tid = threadIdx.x;

    // SPLIT: this block's K slices are split_tiles of them from slice k_first (k_tiles below). Without SPLIT the
    // code is v9's as it was, k_tiles computed where it always was, so the kernels' machine code stays the same.
    int k_first = 0;
    int split_tiles = 0;
    if constexpr (STREAM_K) {
        k_first = segment.k_first;
        split_tiles = segment.k_tiles;
    } else if (SPLIT) {
        const int all_tiles = (K + BK - 1) / BK;
        const int per_split = (all_tiles + (int)gridDim.z - 1) / (int)gridDim.z;
        k_first = (int)blockIdx.z * per_split;
        split_tiles = min(per_split, all_tiles - k_first);
        if (split_tiles <= 0) return;  // the whole block: no barrier is skipped by part of it
    }
    if constexpr (CLUSTER_SPLITS > 0) {
        // The same ranges over the cluster's blocks. A block whose range is empty (K shorter than the cluster's
        // slices) still runs: its accumulators stay zero, it joins both cluster barriers and its shared memory
        // holds zeros for the others. Its copies are all src-size 0 from slice 0, so their addresses lie in A and B.
        const int all_tiles = (K + BK - 1) / BK;
        const int per_split = (all_tiles + CLUSTER_SPLITS - 1) / CLUSTER_SPLITS;
        k_first = (int)blockIdx.z * per_split;
        split_tiles = max(0, min(per_split, all_tiles - k_first));
        if (split_tiles == 0) k_first = 0;
    }
    // Copies take absolute K positions (k_begin + slice * BK), so the zero-fill past K works for every split.
    const int k_begin = k_first * BK;

    // Grouped block order: consecutive block ids cover GROUP_M block-rows before moving right.
    const int grid_n = STREAM_K ? segment.grid_n : (int)gridDim.x;
    const int grid_m = STREAM_K ? segment.grid_m : (int)gridDim.y;
    const int pid = STREAM_K ? segment.tile : (int)(blockIdx.y * grid_n + blockIdx.x);
    const int2 tile_at = v9::grouped_tile(pid, grid_m, grid_n);
    const int bm = tile_at.x * BM;
    const int bn = tile_at.y * BN;
    // A split-K launch waits here for the launch before it (kernels/src/pdl.cuh): nothing above reads or writes memory.
    // At the body's start instead, the 128x128 split (128 registers) spilled 12 bytes. Serial splits are their
    // operation's first launch, with nothing to wait for; where they pad C the copy back follows them.
    if constexpr (!SERIAL) pdl_wait();
    if constexpr (!SERIAL || PAD_C) pdl_launch_dependents();
    if constexpr (ZERO_FIRST) {
        if (blockIdx.z == 0) {
            // C's copy's padding columns too (PAD_C): 16-byte additions of the last column group land there.
            const int ldc = PAD_C ? (N + 3) & ~3 : N;
            const int rows = min(BM, M - bm);
            const int cols = min(BN, ldc - bn);
            for (int e = tid; e < BM * BN; e += THREADS)
                if (e / BN < rows && e % BN < cols) C[(size_t)(bm + e / BN) * ldc + bn + e % BN] = 0.0f;
            __syncthreads();
            if (tid == 0) {
                __threadfence();
                v9::serial_arrive(arrivals + (blockIdx.y * gridDim.x + blockIdx.x), K, BK);
            }
        }
    }

    // A copy role: unit j is row a_row0 + j*A_ROWS_PER_PASS, k a_k .. a_k+3 of the slice, stored transposed.
    // A row outside A keeps a pointer into row 0 (never read: its copies have src-size 0).
    const int a_row0 = tid / KQ;
    const int a_k = (tid % KQ) * 4;
    const float* a_src[A_UNITS];
    bool a_row_in[A_UNITS];
#pragma unroll
    for (int j = 0; j < A_UNITS; ++j) {
        const int grow = bm + a_row0 + j * A_ROWS_PER_PASS;
        a_row_in[j] = grow < M;
        a_src[j] = A + ((a_row_in[j] ? (size_t)grow * K : 0) + a_k);
    }
    // The narrow kernels' role (A_COALESCED), as cuBLAS's kernels copy A: a warp's 32 lanes on 4 rows x 8
    // consecutive k, so each row gives one whole 32-byte sector and the transposed stores fall on 32 banks. The role
    // above has a warp on 8 rows x 4 k groups: two sectors of each row for 16 bytes of them, four times over (ncu:
    // 12.6 M excess sectors at 2048^3 against cuBLAS's 0). Unit j is row ac_row0 + j*A_PASS_ROWS, k ac_k + h*A_KL
    // (load_tile). On an H200 it took the narrow 64x64x16 tile from 81 to 88.5 % of cuBLAS at 4096x333x333 in the
    // grid (91 % in interleaved rounds), and the grid from 74 to 77 of 80 shapes at 90 %. The 16-byte kernels keep
    // the role above: at 255 registers this one spills there (the tuned tile fell from 97 to 87 %), as it does past
    // 4 rows a thread (256-row tiles) and in the 128-accumulator stream-K narrow kernel, so it is the narrow
    // kernels' of up to 64 accumulators a thread; results/h200-2026-11-29/a_coalesced/ and grid_acoal/.
    // V9_A_COALESCED (measurement) gives it to every kernel.
    constexpr int A_KL = BK < 8 ? BK : 8;
    constexpr int A_PASS_ROWS = THREADS / A_KL;
    constexpr int A_ROW_COPIES = BM / A_PASS_ROWS;
    constexpr int A_K_COPIES = BK / A_KL;
#ifdef V9_A_COALESCED
    constexpr bool A_COALESCED = true;
#else
    constexpr bool A_COALESCED = NARROW && TM * TN <= 64 && A_ROW_COPIES <= 4;
#endif
    static_assert(!A_COALESCED || (THREADS % A_KL == 0 && BM % A_PASS_ROWS == 0), "A copy units divide evenly");
    // B copy role: unit j is K row b_row0 + j*B_PASS_ROWS of the slice, columns b_col .. b_col+3 (VEC: one 16-byte
    // copy; otherwise four 4-byte ones). B_ONE_COLUMN (NARROW, a whole number of block rows per pass): four times
    // the units, each one column b_col, consecutive threads on consecutive columns, so that a warp's copy reads
    // 128 contiguous bytes of a row of B; four copies of a 4-column group would each touch four times the sectors.
    constexpr bool B_ONE_COLUMN = NARROW && !VEC && THREADS % BN == 0;
#if V9_B_ROWWISE
    // V9_B_ROWWISE (measurement, scripts/v9_variants.py): B_ONE_COLUMN with a warp on one K row, lane l on columns
    // l, l+32, ...: a thread's copies of a row share one address register (the others at immediate offsets of 128
    // bytes), so a slice's copies build BK * 32 / THREADS row addresses instead of BK * BN / THREADS. Kept apart
    // from the built path, whose statements the indexing models (kernels/indexing_pipelined.py) quote.
    constexpr bool B_ROWWISE = B_ONE_COLUMN && BN % 32 == 0 && (BK * 32) % THREADS == 0;
    constexpr int B_HALVES = B_ROWWISE ? BN / 32 : 1;
    constexpr int B_COPIES = B_ROWWISE ? BK * 32 / THREADS : B_ONE_COLUMN ? 4 * B_UNITS : B_UNITS;
    constexpr int B_PASS_ROWS = B_ROWWISE ? THREADS / 32 : B_ONE_COLUMN ? THREADS / BN : B_ROWS_PER_PASS;
    const int b_row0 = B_ROWWISE ? tid / 32 : B_ONE_COLUMN ? tid / BN : tid / B_VECS_PER_ROW;
    const int b_col = B_ROWWISE ? tid % 32 : B_ONE_COLUMN ? tid % BN : (tid % B_VECS_PER_ROW) * 4;
#else
    constexpr bool B_ROWWISE = false;
    constexpr int B_HALVES = 1;
    constexpr int B_COPIES = B_ONE_COLUMN ? 4 * B_UNITS : B_UNITS;
    constexpr int B_PASS_ROWS = B_ONE_COLUMN ? THREADS / BN : B_ROWS_PER_PASS;
    const int b_row0 = B_ONE_COLUMN ? tid / BN : tid / B_VECS_PER_ROW;
    const int b_col = B_ONE_COLUMN ? tid % BN : (tid % B_VECS_PER_ROW) * 4;
#endif
    const int gb_col = bn + b_col;
    const int ldb = PAD_B ? (N + 3) & ~3 : N;
    const float* b_src = B + ((size_t)(k_begin + b_row0) * ldb + gb_col);  // advanced by BK rows per slice
    const size_t b_pass = (size_t)B_PASS_ROWS * ldb;
    const size_t b_slice = (size_t)BK * ldb;
    // Columns of this thread's B group inside B: all 4 (VEC: N % 4 == 0, whole groups are in or out; PAD_B: the last
    // group's columns past N are the copy's zeros) or b_cols (B_ONE_COLUMN: its one column when b_cols > 0).
#if V9_B_ROWWISE
    const int b_cols = B_ROWWISE ? max(N - gb_col, 0) : min(max(N - gb_col, 0), 4);
#else
    const int b_cols = min(max(N - gb_col, 0), 4);
#endif

    const unsigned smem_base = v9::smem_addr(smem);
    const unsigned a_dst = smem_base + (unsigned)(a_k * A_LD + a_row0) * 4u;
    const unsigned b_dst = smem_base + (unsigned)(A_STAGE + b_row0 * BN + b_col) * 4u;

    // Copies slice `k0` into `stage`. Branch-free, so that the compiler can interleave it with the FMAs of
    // the k step it sits in: a slice past the end (live == false) becomes all src-size-0 copies, i.e. zeros
    // written to a stage that is never read again. Out-of-range elements are never read (src-size 0), so
    // their source addresses are not clamped.
#if V9_SPREAD_COPIES
    // V9_SPREAD_COPIES=P (measurement, scripts/v9_variants.py): a slice's copies in P parts, copy c in part c % P;
    // part 0 right after the barrier as built, the others at k steps 0..P-2 of the next slice, then one commit. As
    // built all of a slice's copies leave at once behind the barrier, and a thread's next address writes wait for
    // them to read their registers (the tuned tile's long-scoreboard stalls, why_sgemm/). Built (NVRTC, sm_90), P = 4
    // drops the two early address writes that held 1,525 of those stall samples, leaves three others
    // (early_address_rewrites: 4 as built), at 224 registers and 2,274 loop instructions (255, 2,212). Measured,
    // dropped: P = 4 and 8 2-3 points slower at 2048-8192^3, P = 2 12 (H200, results/h200-2026-11-30/sgemm98/).
    static_assert(V9_SPREAD_COPIES >= 1 && V9_SPREAD_COPIES <= BK, "one part per k step at most");
#define V9_IN_PART(c) ((c) % V9_SPREAD_COPIES == part)
    auto load_tile = [&](int stage, int k0, bool live, int part) {
#else
    auto load_tile = [&](int stage, int k0, bool live) {
#endif
        const unsigned so = (unsigned)(stage * STAGE_FLOATS) * 4u;
#if V9_ASSUME_FULL_K
        // V9_ASSUME_FULL_K (measurement, scripts/v9_variants.py; wrong where K % BK != 0): every live slice is
        // whole, so a copy's predicate is its row's or column group's, fixed for the kernel, and `live`: what the
        // slices after a K residue taken first would need, as CUTLASS's kernels take it. Measured, not kept: the
        // tuned tile fell from 96 to 84 % of cuBLAS on an H200 (results/h200-2026-11-29/sgemm_fullk/).
        const int a_left = live ? BK : 0;
        const int b_left = live ? BK : 0;
#else
        const int a_left = live ? K - k0 - a_k : 0;  // elements of this thread's 4-wide K group inside A
#endif
        if constexpr (A_COALESCED) {
            // Set up here, not beside the role above: declared there, even unused, they changed the other kernels'
            // machine code. One row pointer, the others a pass of rows further (a row outside A is never read).
            const int ac_row0 = tid / A_KL;
            const int ac_k = tid % A_KL;
            const float* ac_src0 = A + ((size_t)(bm + ac_row0) * K + ac_k);
            const size_t ac_pass = (size_t)A_PASS_ROWS * K;
            const unsigned ac_dst = smem_base + (unsigned)(ac_k * A_LD + ac_row0) * 4u;
            const int ac_left = live ? K - k0 - ac_k : 0;  // this thread's k is inside A when h*A_KL < ac_left
#pragma unroll
            for (int j = 0; j < A_ROW_COPIES; ++j) {
                const float* src = ac_src0 + j * ac_pass + k0;
                const bool row_in = bm + ac_row0 + j * A_PASS_ROWS < M;
#pragma unroll
                for (int h = 0; h < A_K_COPIES; ++h)
#if V9_SPREAD_COPIES
                    if (V9_IN_PART(j * A_K_COPIES + h))
#endif
                    v9::copy4(ac_dst + so + (unsigned)(h * A_KL * A_LD + j * A_PASS_ROWS) * 4u, src + h * A_KL,
                              row_in && h * A_KL < ac_left);
            }
        } else {
#if V9_A_ROWS_INNER
            // V9_A_ROWS_INNER (measurement, scripts/v9_variants.py): the rows inner, so every row's address is live
            // through the slice's copies. As built, ptxas gives the second row the register pair of the first right
            // after the first's last copy, and the IMAD.WIDE that writes it waits for that LDGSTS to read it: 904 and
            // 621 of the tuned tile's 1,743 long-scoreboard stall samples at 2048^3 on an H200 (why_sgemm/). Built
            // (NVRTC, sm_90), it leaves 3 of the 4 early address writes, the IMAD.WIDE of the 904 samples gone.
            // Measured, dropped: 2.4-2.9 points slower at 2048-8192^3 (H200, results/h200-2026-11-30/sgemm98/).
#pragma unroll
            for (int e = 0; e < 4; ++e)
#pragma unroll
                for (int j = 0; j < A_UNITS; ++j)
#if V9_SPREAD_COPIES
                    if (V9_IN_PART(e * A_UNITS + j))
#endif
                    v9::copy4(a_dst + so + (unsigned)(e * A_LD + j * A_ROWS_PER_PASS) * 4u, a_src[j] + k0 + e,
                              a_row_in[j] && e < a_left);
#else
#pragma unroll
            for (int j = 0; j < A_UNITS; ++j) {
                const float* src = a_src[j] + k0;
#pragma unroll
                for (int e = 0; e < 4; ++e)
#if V9_SPREAD_COPIES
                    if (V9_IN_PART(j * 4 + e))
#endif
                    v9::copy4(a_dst + so + (unsigned)(e * A_LD + j * A_ROWS_PER_PASS) * 4u, src + e,
                              a_row_in[j] && e < a_left);
            }
#endif
        }
#if !V9_ASSUME_FULL_K
        const int b_left = live ? K - k0 - b_row0 : 0;  // unit j's K row is inside B when j*B_PASS_ROWS < b_left
#endif
#pragma unroll
        for (int j = 0; j < B_COPIES; ++j) {
#if V9_SPREAD_COPIES
            if (!V9_IN_PART(A_UNITS * 4 + j)) continue;
#endif
            const bool k_in = j * B_PASS_ROWS < b_left;
            const unsigned dst = b_dst + so + (unsigned)(j * B_PASS_ROWS * BN) * 4u;
            const float* src = b_src + j * b_pass;
            if (VEC) {
                v9::copy16(dst, src, k_in && b_cols > 0);
            } else if (B_ROWWISE) {
#pragma unroll
                for (int h = 0; h < B_HALVES; ++h) v9::copy4(dst + 128u * h, src + 32 * h, k_in && b_cols > 32 * h);
            } else if (B_ONE_COLUMN) {
                v9::copy4(dst, src, k_in && b_cols > 0);
            } else {
#pragma unroll
                for (int e = 0; e < 4; ++e) v9::copy4(dst + 4u * e, src + e, k_in && e < b_cols);
            }
        }
#if V9_SPREAD_COPIES
        if (part == V9_SPREAD_COPIES - 1) b_src += b_slice;
#else
        b_src += b_slice;
#endif
    };

    const int warp = tid >> 5;
    const int lane = tid & 31;
    const int tm0 = (warp / WARPS_N) * WM + (lane / LANES_N) * 4;
    const int tn0 = (warp % WARPS_N) * WN + (lane % LANES_N) * 4;
    // This thread's fragments in stage 0; a stage's are STAGE_FLOATS further on.
    const float* a_frag_base = smem + tm0;
    const float* b_frag_base = smem + A_STAGE + tn0;

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

    float a[2][TM], b[2][TN];

    const int k_tiles = (SPLIT || CLUSTER_SPLITS) ? split_tiles : (K + BK - 1) / BK;

    // Prologue: STAGES-1 slices in flight. A group is committed even when empty so that the group count,
    // and with it the waits below, means the same thing on every iteration.
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
#if V9_SPREAD_COPIES
#pragma unroll
        for (int p = 0; p < V9_SPREAD_COPIES; ++p) load_tile(s, k_begin + s * BK, s < k_tiles, p);
#else
        load_tile(s, k_begin + s * BK, s < k_tiles);
#endif
        v9::commit();
    }
    // Groups committed: STAGES-1 (slices 0..STAGES-2); slice 0 has landed with STAGES-2 still pending.
    v9::wait<STAGES - 2>();
    __syncthreads();

    int rd = 0;           // stage holding slice t
    int wr = STAGES - 1;  // stage that receives slice t+STAGES-1 (it held slice t-1)
#if V9_SPREAD_COPIES
    int pend_stage = 0, pend_k0 = 0;  // the slice whose parts 1..P-1 go out during this one
    bool pend_live = false;
#endif

#pragma unroll
    for (int f = 0; f < FRAG_M; ++f) {
        const float4 v = *reinterpret_cast<const float4*>(a_frag_base + f * FRAG_STRIDE_M);
        a[0][f * 4 + 0] = v.x; a[0][f * 4 + 1] = v.y; a[0][f * 4 + 2] = v.z; a[0][f * 4 + 3] = v.w;
    }
#pragma unroll
    for (int f = 0; f < FRAG_N; ++f) {
        const float4 v = *reinterpret_cast<const float4*>(b_frag_base + f * FRAG_STRIDE_N);
        b[0][f * 4 + 0] = v.x; b[0][f * 4 + 1] = v.y; b[0][f * 4 + 2] = v.z; b[0][f * 4 + 3] = v.w;
    }

    for (int t = 0; t < k_tiles; ++t) {
        const float* As = a_frag_base + rd * STAGE_FLOATS;
        const float* Bs = b_frag_base + rd * STAGE_FLOATS;
#if V9_K_UNROLL
        // V9_K_UNROLL=U (measurement, scripts/v9_variants.py): the slice's k steps as a loop of U-step bodies
        // instead of all BK unrolled, so the main loop's code is about U/BK of its size. As built the tuned tile's
        // loop is 2,212 instructions (35 KB), and after another kernel's code each launch takes about 10 us longer
        // (results/h200-2026-11-30/grid_interleaved/), which points at the instruction caches. Measured, dropped
        // (H200, results/h200-2026-11-30/sgemm98_kloop/, icache/): the cost is instruction fetch (ncu: 0.68 warp
        // cycles an instruction stalled on no_instruction after cuBLAS, 0.06 after itself), and every rolled build
        // is rid of it (0.0-1.0 us) but 12-18 points slower at 2048-8192^3 (dispatch stalls 0.43 against 0.21).
        static_assert(V9_K_UNROLL % 2 == 0 && BK % V9_K_UNROLL == 0, "an even number of k steps that divides BK");
#if V9_K_TAIL
        // V9_K_TAIL=1 (measurement, scripts/v9_variants.py): the slice's last U steps, the barrier and the next copies
        // among them, are a body of their own after the loop, so the loop's bodies have no branch (the rolled builds'
        // had one in every body: the barrier's, taken once a slice). Part 0 is the loop, part 1 the tail, one pass.
        // Built (NVRTC, sm_90) for the tuned tile: U = 4, 4,104 instructions, a 4-step loop of 546 in a slice of
        // 1,159 (18.5 KB), 255 registers and a 24-byte stack; U = 2, 3,024, a loop of 278 in 624, 242 registers.
        // Measured, dropped (H200, results/h200-2026-11-30/sgemm98_ktail/): at 2048-8192^3 U = 2 reads 89.0-89.7 % of
        // cuBLAS and U = 4 85.0-86.6 %, in rounds and after itself alike, against 94.2-97.8 % as built.
#pragma unroll
        for (int part = 0; part < 2; ++part)
#pragma unroll 1
            for (int k0 = part ? BK - V9_K_UNROLL : 0; k0 < (part ? BK : BK - V9_K_UNROLL); k0 += V9_K_UNROLL)
#pragma unroll
                for (int kk = 0; kk < V9_K_UNROLL; ++kk) {
                    const int k = k0 + kk;
                    const int cur = kk & 1;
                    const bool last_step = part == 1 && kk == V9_K_UNROLL - 1;
#else
#pragma unroll 1
        for (int k0 = 0; k0 < BK; k0 += V9_K_UNROLL)
#pragma unroll
            for (int kk = 0; kk < V9_K_UNROLL; ++kk) {
                const int k = k0 + kk;
                const int cur = kk & 1;  // U is even, so kk's parity is k's, and known where the code is built
                const bool last_step = kk == V9_K_UNROLL - 1 && k0 == BK - V9_K_UNROLL;
#endif
#else
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const int cur = k & 1;
            const bool last_step = k == BK - 1;
#endif
            const int nxt = cur ^ 1;
            const float* An = As + (k + 1) * A_LD;
            const float* Bn = Bs + (k + 1) * BN;
#if V9_SPREAD_COPIES
            if (k < V9_SPREAD_COPIES - 1 && t > 0) {
                load_tile(pend_stage, pend_k0, pend_live, k + 1);
                if (k == V9_SPREAD_COPIES - 2) v9::commit();
            }
#endif
            if (last_step) {
                // Groups committed: STAGES-1+t (slices 0..t+STAGES-2). Leaving STAGES-3 pending means slice
                // t+1 has landed for this thread; the barrier makes every thread's part visible and also
                // guarantees that every warp has read its last fragment of slice t-1 (those loads were issued
                // in iteration t-1 and at step BK-2 of iteration t-2), whose stage `wr` is refilled now.
                v9::wait<STAGES - 3>();
                __syncthreads();
                const int next = t + STAGES - 1;
#if V9_SPREAD_COPIES
                pend_stage = wr;
                pend_k0 = k_begin + next * BK;
                pend_live = next < k_tiles;
                load_tile(pend_stage, pend_k0, pend_live, 0);
                if (V9_SPREAD_COPIES == 1) v9::commit();
#else
                load_tile(wr, k_begin + next * BK, next < k_tiles);
                v9::commit();
#endif
                rd = (rd + 1 == STAGES) ? 0 : rd + 1;
                wr = (wr + 1 == STAGES) ? 0 : wr + 1;
                // k = 0 of slice t+1 (for the last slice: stale shared memory, loaded and never used).
                An = a_frag_base + rd * STAGE_FLOATS;
                Bn = b_frag_base + rd * STAGE_FLOATS;
            }
#pragma unroll
            for (int f = 0; f < FRAG_M; ++f) {
                const float4 v = *reinterpret_cast<const float4*>(An + f * FRAG_STRIDE_M);
                a[nxt][f * 4 + 0] = v.x; a[nxt][f * 4 + 1] = v.y; a[nxt][f * 4 + 2] = v.z; a[nxt][f * 4 + 3] = v.w;
            }
#pragma unroll
            for (int f = 0; f < FRAG_N; ++f) {
                const float4 v = *reinterpret_cast<const float4*>(Bn + f * FRAG_STRIDE_N);
                b[nxt][f * 4 + 0] = v.x; b[nxt][f * 4 + 1] = v.y; b[nxt][f * 4 + 2] = v.z; b[nxt][f * 4 + 3] = v.w;
            }
            // The FFMA order decides which operand the register reuse cache can hold from one FFMA to the next
            // and so how many register-bank conflicts (dispatch stalls) the k step pays; each accumulator still
            // sums its k terms in the same order, so the result is bitwise the same for every ORDER.
            if (ORDER == 5) {
                // cuBLAS's order (its sm80 256x128x8 FFMA kernel's SASS): 2x2 blocks of (row pair, column pair),
                // each (i0,j0) (i0,j1) (i1,j0) (i1,j1), so both A and B operands come out of the reuse cache on
                // alternate FFMAs; per 4-row fragment, column pairs in turn, its row pairs walked in a snake.
                // Measured, not kept: ptxas turns the blocks into column walks, and the tuned tile fell from 96 to
                // 83 % of cuBLAS on an H200 (results/h200-2026-11-29/sgemm_order5/).
#pragma unroll
                for (int f = 0; f < FRAG_M; ++f)
#pragma unroll
                    for (int jp = 0; jp < TN / 2; ++jp)
#pragma unroll
                        for (int pp = 0; pp < 2; ++pp) {
                            const int i0 = f * 4 + 2 * ((jp & 1) ? 1 - pp : pp);
                            const int j0 = 2 * jp;
                            acc[i0][j0] = fmaf(a[cur][i0], b[cur][j0], acc[i0][j0]);
                            acc[i0][j0 + 1] = fmaf(a[cur][i0], b[cur][j0 + 1], acc[i0][j0 + 1]);
                            acc[i0 + 1][j0] = fmaf(a[cur][i0 + 1], b[cur][j0], acc[i0 + 1][j0]);
                            acc[i0 + 1][j0 + 1] = fmaf(a[cur][i0 + 1], b[cur][j0 + 1], acc[i0 + 1][j0 + 1]);
                        }
            } else if (ORDER == 2) {  // columns of the outer product, every other column walked backwards
#pragma unroll
                for (int j = 0; j < TN; ++j)
#pragma unroll
                    for (int ii = 0; ii < TM; ++ii) {
                        const int i = (j & 1) ? TM - 1 - ii : ii;
                        acc[i][j] = fmaf(a[cur][i], b[cur][j], acc[i][j]);
                    }
            } else {
                // Rows of the outer product: in order (0, 1, 4) or one from each 4-row fragment in turn (3); every
                // row forwards (0), or the odd (1, 3) or even (4) rows walked backwards.
#pragma unroll
                for (int ii = 0; ii < TM; ++ii) {
                    const int i = ORDER == 3 ? (ii % FRAG_M) * 4 + ii / FRAG_M : ii;
                    const bool backwards = ORDER == 0 ? false : ORDER == 4 ? (ii & 1) == 0 : (ii & 1) == 1;
#pragma unroll
                    for (int jj = 0; jj < TN; ++jj) {
                        const int j = backwards ? TN - 1 - jj : jj;
                        acc[i][j] = fmaf(a[cur][i], b[cur][j], acc[i][j]);
                    }
                }
            }
        }
    }
    // Only empty groups can still be pending here; draining them keeps the exit free of in-flight copies.
#if V9_SPREAD_COPIES
    v9::commit();  // the last slice's part 0 (past the end: zeros into a stage never read) is in no group yet
#endif
    v9::wait<0>();
#if V9_SPREAD_COPIES
#undef V9_IN_PART
#endif

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (CLUSTER_SPLITS > 0) {
        // 1. The pipeline's stages become this block's partial tile: once every warp has read its last fragments
        //    and every copy has landed (the wait above, per thread; the barrier, for all).
        constexpr int C_LD = BN + v9::CPAD;
        __syncthreads();
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            float* c_row = smem + (tm0 + (i / 4) * FRAG_STRIDE_M + (i % 4)) * C_LD + tn0;
#pragma unroll
            for (int g = 0; g < FRAG_N; ++g)
                *reinterpret_cast<float4*>(c_row + g * FRAG_STRIDE_N) =
                    make_float4(acc[i][g * 4 + 0], acc[i][g * 4 + 1], acc[i][g * 4 + 2], acc[i][g * 4 + 3]);
        }
        // 2. Every block's partial tile is complete and visible to the cluster.
        v9::cluster_sync();
        // 3. Block `rank` sums rows [rank*ROWS, (rank+1)*ROWS) of the tile over all the cluster's blocks, always in
        //    rank order 0, 1, ..., so C is the same bits on every run, and stores them once.
        constexpr int ROWS = BM / CLUSTER_SPLITS;
        constexpr int VECS_PER_ROW = BN / 4;
        const unsigned rank = v9::cluster_rank();
        const unsigned local = v9::smem_addr(smem);
        unsigned part[CLUSTER_SPLITS];
#pragma unroll
        for (int s = 0; s < CLUSTER_SPLITS; ++s) part[s] = v9::map_to_rank(local, (unsigned)s);
        for (int u = tid; u < ROWS * VECS_PER_ROW; u += THREADS) {
            const int r = (int)rank * ROWS + u / VECS_PER_ROW;
            const int c = (u % VECS_PER_ROW) * 4;
            const unsigned offset = (unsigned)(r * C_LD + c) * 4u;
            float4 v[CLUSTER_SPLITS];
#pragma unroll
            for (int s = 0; s < CLUSTER_SPLITS; ++s) v[s] = v9::load_cluster4(part[s] + offset);
            float4 sum = v[0];
#pragma unroll
            for (int s = 1; s < CLUSTER_SPLITS; ++s) {
                sum.x += v[s].x; sum.y += v[s].y; sum.z += v[s].z; sum.w += v[s].w;
            }
            const int row = bm + r;
            const int col = bn + c;
            if (row < M) {
                float* dst = C + (size_t)row * N + col;
                if (VEC && col < N) {
                    *reinterpret_cast<float4*>(dst) = sum;
                } else {
                    if (col < N) dst[0] = sum.x;
                    if (col + 1 < N) dst[1] = sum.y;
                    if (col + 2 < N) dst[2] = sum.z;
                    if (col + 3 < N) dst[3] = sum.w;
                }
            }
        }
        // 4. No block leaves (and frees its shared memory) while another may still read it.
        v9::cluster_sync();
    } else
#endif
    {
        // SERIAL: split 0 stores its partial tile and the other splits add theirs once it is there, so C needs no
        // zeroing launch first (v9_splitk.cu). `add` is SPLIT itself in every other kernel.
        bool add = SPLIT;
#if V9_SK_HYBRID
        // A stream-K segment over a whole tile is the only one on that tile: it stores, as v9-regdb does.
        if constexpr (STREAM_K) add = !(segment.k_first == 0 && segment.k_tiles == (K + BK - 1) / BK);
#endif
        unsigned* tile_arrivals = nullptr;
        if constexpr (SERIAL) {
            tile_arrivals = arrivals + (blockIdx.y * gridDim.x + blockIdx.x);
            if (blockIdx.z == 0) {
                add = ZERO_FIRST;
            } else {
                if (tid == 0)
                    while (v9::load_acquire(tile_arrivals) == 0) __nanosleep(64);
                __syncthreads();
            }
        }
        // acc[f*4 + r][g*4 + c] is C row tm0 + f*FRAG_STRIDE_M + r, column tn0 + g*FRAG_STRIDE_N + c.
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            const int row = bm + tm0 + (i / 4) * FRAG_STRIDE_M + (i % 4);
            if (row >= M) continue;
            float* c_row = C + (size_t)row * (PAD_C ? (N + 3) & ~3 : N);
#pragma unroll
            for (int g = 0; g < FRAG_N; ++g) {
                const int col = bn + tn0 + g * FRAG_STRIDE_N;
                if (((VEC && !PAD_B) || PAD_C) && col < N) {
                    const float4 v = make_float4(acc[i][g * 4 + 0], acc[i][g * 4 + 1], acc[i][g * 4 + 2], acc[i][g * 4 + 3]);
                    if (add)
                        v9::add4(c_row + col, v);
                    else
                        *reinterpret_cast<float4*>(c_row + col) = v;
                } else if ((NARROW || PAD_B) && add && col + 3 < N) {
                    v9::add4_unaligned(c_row + col, acc[i][g * 4 + 0], acc[i][g * 4 + 1], acc[i][g * 4 + 2],
                                       acc[i][g * 4 + 3]);
                } else {
#pragma unroll
                    for (int c = 0; c < 4; ++c)
                        if (col + c < N) {
                            if (add)
                                atomicAdd(c_row + col + c, acc[i][g * 4 + c]);
                            else
                                c_row[col + c] = acc[i][g * 4 + c];
                        }
                }
            }
        }
        if constexpr (SERIAL) {
            // Every split arrives once its part is in C (split 0 of ZERO_FIRST did when it had zeroed its tile).
            if (!ZERO_FIRST || blockIdx.z != 0) {
                __syncthreads();
                if (tid == 0) {
                    __threadfence();
                    v9::serial_arrive(tile_arrivals, K, BK);
                }
            }
        }
    }
}
