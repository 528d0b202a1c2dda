// Measurement (scripts/sgemm_tma_probe.py), not a catalog kernel: v9-regdb's tuned tile (128x256x16, warps of
// 64x64, 8x16 outputs a thread) with its copies taken off the threads. TMA loads each K slice of A and B into shared
// memory and completes an mbarrier, so the warps issue only shared-memory loads, FFMAs and one barrier a slice.
// v9's A copies are 4-byte cp.async that transpose A into k-major rows; the profile of cuBLAS's SIMT kernel against
// the tuned tile (results/h200-2026-11-29/sgemm_order5/) puts 0.096 long-scoreboard and 0.057 MIO-throttle warp
// cycles an issued instruction on those copies and their addresses, against cuBLAS's 0.017 and 0.001.
//
// TMA cannot transpose 4-byte elements, so A stays row-major in shared memory, 16 floats (64 bytes) a row in TMA's
// 64-byte swizzle: the 16-byte chunk c of row r sits at chunk c ^ ((r >> 1) & 3). A thread reads 4 k steps of a row
// with one 16-byte load. Its 8 rows are 8 apart (lane group g of 8 owns rows g, g + 8, ...), so the 8 lane groups of
// a load read rows g = 0..7, whose (r & 1, c ^ (r >> 1)) are all different: 8 different 16-byte bank groups, no
// conflict. B stays as v9 reads it: [k][n] rows of 256 floats, one TMA box a slice.
//
// Measured, dropped (H200, results/h200-2026-12-01/tmaprobe_first/ and tmaprobe/): 89-91 % of cuBLAS at 2048-8192^3,
// against v9-regdb's 94-98 %. The copies' stalls go (long scoreboard 0.09 -> 0.03, MIO throttle 0.06 -> 0.01 warp
// cycles an instruction), but dispatch stalls rise from 0.21 to 0.47: ptxas moves most of the sums between registers.
// The mixed build keeps v9's fragments and still reads 90-91 % (short scoreboard 0.28 against 0.05).
//
// Needs K % 4 == 0 and N % 4 == 0 (TMA's 16-byte row strides). TMA fills what lies outside A and B with zeros, so M,
// N and K need no other condition.
#include "cp_async.cuh"
#include "hopper_wgmma.cuh"

namespace probe {

constexpr int BM = 128, BN = 256, BK = 16;
constexpr int WM = 64, WN = 64, TN = 16;
constexpr int WARPS_N = BN / WN;           // 4
constexpr int THREADS = 256;
constexpr int LANES_N = WN / TN;           // 4: a warp is 8 lane groups (rows) of 4 lanes (columns)
constexpr int A_STAGE_BYTES = BM * BK * 4;  // 8 KB
constexpr int B_STAGE_BYTES = BK * BN * 4;  // 16 KB
constexpr int STAGE_BYTES = A_STAGE_BYTES + B_STAGE_BYTES;
constexpr int GROUP_M = 8;

// The mbarrier and TMA wrappers of the catalog's Hopper kernels.
using hopper::mbar_arrive_expect_tx;
using hopper::mbar_init;
using hopper::mbar_wait;
using hopper::tma_load_2d;
using hopper::TensorMap;

// Where this block's tile starts (rows bm, columns bn of C) on the probe's 1-D grid, in groups of GROUP_M block
// rows (hopper::grouped_block_origin's order, which reads a 2-D grid).
__device__ __forceinline__ void grouped_origin(int M, int N, int& bm, int& bn)
{
    const int grid_m = (M + BM - 1) / BM, grid_n = (N + BN - 1) / BN;
    const int pid = blockIdx.x;
    const int group_size = GROUP_M * grid_n;
    const int first_m = (pid / group_size) * GROUP_M;
    const int rows_in_group = min(grid_m - first_m, GROUP_M);
    bm = (first_m + (pid % group_size) % rows_in_group) * BM;
    bn = ((pid % group_size) / rows_in_group) * BN;
}

// Thread 0 sets up the STAGES full barriers at full0, 8 bytes apart, one arrival each; the block waits for it.
template <int STAGES>
__device__ __forceinline__ void init_full_barriers(unsigned full0)
{
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) mbar_init(full0 + 8 * s, 1);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
}

}  // namespace probe

template <int STAGES>
__device__ __forceinline__ void sgemm_tma_simt(const probe::TensorMap* map_a, const probe::TensorMap* map_b,
                                               float* __restrict__ C, int M, int N, int K)
{
    using namespace probe;
    extern __shared__ unsigned char smem_raw[];
    // The swizzle is a function of the address's bits 7-8, so the A stages start 1024-byte aligned.
    const unsigned raw = static_cast<unsigned>(__cvta_generic_to_shared(smem_raw));
    const unsigned base = (raw + 1023u) & ~1023u;
    const unsigned full0 = base + STAGES * STAGE_BYTES;
    // A 16-byte load at shared address `addr`, written as C++ so that the compiler schedules it freely.
    auto lds128 = [&](unsigned addr) { return *reinterpret_cast<const float4*>(smem_raw + (addr - raw)); };

    const int tid = threadIdx.x;
    int bm, bn;
    grouped_origin(M, N, bm, bn);
    const int k_tiles = (K + BK - 1) / BK;
    init_full_barriers<STAGES>(full0);

    auto issue = [&](int t) {
        const int s = t % STAGES;
        const unsigned full = full0 + 8 * s;
        const unsigned dst = base + s * STAGE_BYTES;
        mbar_arrive_expect_tx(full, STAGE_BYTES);
        tma_load_2d(dst, map_a, t * BK, bm, full);
        tma_load_2d(dst + A_STAGE_BYTES, map_b, bn, t * BK, full);
    };
    if (tid == 0)
        for (int t = 0; t < STAGES - 1 && t < k_tiles; ++t) issue(t);

    const int warp = tid >> 5, lane = tid & 31;
    const int group = lane / LANES_N;                                   // 0..7: this lane's rows are group + 8 i
    const int a_row0 = (warp / WARPS_N) * WM + group;
    const int tn0 = (warp % WARPS_N) * WN + (lane % LANES_N) * 4;        // columns tn0 + 16 g + 0..3
    // Row a_row0 + 8 i of a stage's A: (r >> 1) & 3 is ((group >> 1) + 4 i) & 3 = (group >> 1) & 3 for every i.
    const unsigned a_row_addr = (unsigned)a_row0 * 64u;
    const unsigned a_xor = (unsigned)((group >> 1) & 3);
    const unsigned b_addr0 = A_STAGE_BYTES + (unsigned)tn0 * 4u;

    float acc[8][TN];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

    // One chunk of A's rows at a time: row i of the next chunk is loaded as soon as this chunk's last k step is done
    // with row i, so the registers live at once are 128 sums, 32 of A and 2 x 16 of B (double-buffered A took 64 and
    // left ptxas moving the sums between registers to find aligned quadruples for the loads).
    float a[8][4];    // [row i][k within the chunk]
    float b[2][TN];   // [k step parity][column]

    auto load_a_row = [&](unsigned stage, int chunk, int i) {
        const float4 v = lds128(stage + a_row_addr + (unsigned)i * 512u + ((chunk ^ a_xor) << 4));
        a[i][0] = v.x; a[i][1] = v.y; a[i][2] = v.z; a[i][3] = v.w;
    };
    auto load_b = [&](unsigned stage, int k, float(&dst)[TN]) {
#pragma unroll
        for (int g = 0; g < 4; ++g) {
            const float4 v = lds128(stage + b_addr0 + (unsigned)(k * BN + 16 * g) * 4u);
            dst[4 * g + 0] = v.x; dst[4 * g + 1] = v.y; dst[4 * g + 2] = v.z; dst[4 * g + 3] = v.w;
        }
    };

    mbar_wait(full0, 0);
#pragma unroll
    for (int i = 0; i < 8; ++i) load_a_row(base, 0, i);
    load_b(base, 0, b[0]);

    for (int t = 0; t < k_tiles; ++t) {
        // Slice t + 1 has landed, so this slice's k steps can read ahead into it without a branch; the barrier also
        // says every warp is done with slice t - 1's stage, which slice t + STAGES - 1 refills now.
        const int s = t % STAGES;
        const int sn = (s + 1 == STAGES) ? 0 : s + 1;
        if (t + 1 < k_tiles) mbar_wait(full0 + 8 * sn, ((t + 1) / STAGES) & 1);
        __syncthreads();
        if (tid == 0 && t + STAGES - 1 < k_tiles) issue(t + STAGES - 1);
        const unsigned stage = base + s * STAGE_BYTES;
        const unsigned next_stage = base + sn * STAGE_BYTES;
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const int chunk = k >> 2, kk = k & 3;
            if (k + 1 < BK)
                load_b(stage, k + 1, b[(k + 1) & 1]);
            else
                load_b(next_stage, 0, b[0]);
#pragma unroll
            for (int i = 0; i < 8; ++i) {
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i][kk], b[k & 1][j], acc[i][j]);
                if (kk == 3) {
                    // The next chunk's row i: the next slice's first chunk after this slice's last.
                    if (chunk + 1 < BK / 4)
                        load_a_row(stage, chunk + 1, i);
                    else
                        load_a_row(next_stage, 0, i);
                }
            }
        }
    }

#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = bm + a_row0 + 8 * i;
        if (row >= M) continue;
        float* c_row = C + (size_t)row * N;
#pragma unroll
        for (int g = 0; g < 4; ++g) {
            const int col = bn + tn0 + 16 * g;
            if (col < N)
                *reinterpret_cast<float4*>(c_row + col) =
                    make_float4(acc[i][4 * g + 0], acc[i][4 * g + 1], acc[i][4 * g + 2], acc[i][4 * g + 3]);
        }
    }
}

// The mixed build: B by TMA as above, A by v9's 4-byte cp.async copies, which transpose it into k-major rows (padded
// by 4 floats), so a thread's fragments and FFMAs are v9's (a k step's 8 rows in two 16-byte loads, ORDER 3). Only
// B's copies and their addresses leave the threads. Needs N % 4 == 0; any K.
namespace probe {
constexpr int APAD = 4;
constexpr int A_LD = BM + APAD;
constexpr int MIXED_A_BYTES = (BK * A_LD * 4 + 127) / 128 * 128;  // B's box lands 128-byte aligned after it
constexpr int MIXED_STAGE_BYTES = MIXED_A_BYTES + B_STAGE_BYTES;
}  // namespace probe

template <int STAGES>
__device__ __forceinline__ void sgemm_mixed(const float* __restrict__ A, const probe::TensorMap* map_b,
                                            float* __restrict__ C, int M, int N, int K)
{
    using namespace probe;
    extern __shared__ unsigned char smem_raw[];
    const unsigned raw = static_cast<unsigned>(__cvta_generic_to_shared(smem_raw));
    const unsigned base = (raw + 1023u) & ~1023u;
    const unsigned full0 = base + STAGES * MIXED_STAGE_BYTES;
    auto lds128 = [&](unsigned addr) { return *reinterpret_cast<const float4*>(smem_raw + (addr - raw)); };

    const int tid = threadIdx.x;
    int bm, bn;
    grouped_origin(M, N, bm, bn);
    const int k_tiles = (K + BK - 1) / BK;
    init_full_barriers<STAGES>(full0);

    // A: thread tid copies k group tid % 4 (4 k) of rows tid / 4 and tid / 4 + 64.
    const int a_kq = tid % 4, a_row = tid / 4;
    const float* a_src[2] = {A + (size_t)min(bm + a_row, M - 1) * K, A + (size_t)min(bm + a_row + 64, M - 1) * K};
    const bool a_row_in[2] = {bm + a_row < M, bm + a_row + 64 < M};
    auto issue = [&](int t) {
        const int s = t % STAGES;
        const unsigned dst = base + s * MIXED_STAGE_BYTES;
        const int k0 = t * BK + 4 * a_kq;
#pragma unroll
        for (int j = 0; j < 2; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e)
                cp_async::copy4(dst + (unsigned)((4 * a_kq + e) * A_LD + a_row + 64 * j) * 4u, a_src[j] + min(k0 + e, K - 1),
                                a_row_in[j] && k0 + e < K);
        cp_async::commit();
        if (tid == 0) {
            const unsigned full = full0 + 8 * s;
            mbar_arrive_expect_tx(full, B_STAGE_BYTES);
            tma_load_2d(dst + MIXED_A_BYTES, map_b, bn, t * BK, full);
        }
    };
    for (int t = 0; t < STAGES - 1; ++t) {
        if (t < k_tiles)
            issue(t);
        else
            cp_async::commit();  // every iteration commits one group, so the waits below count the same
    }

    const int warp = tid >> 5, lane = tid & 31;
    const int tm0 = (warp / WARPS_N) * WM + (lane / LANES_N) * 4;  // rows tm0 + 32 f + 0..3
    const int tn0 = (warp % WARPS_N) * WN + (lane % LANES_N) * 4;  // columns tn0 + 16 g + 0..3
    const unsigned a_addr0 = (unsigned)tm0 * 4u;
    const unsigned b_addr0 = MIXED_A_BYTES + (unsigned)tn0 * 4u;

    float acc[8][TN];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
    float a[2][8], b[2][TN];
    auto load_frags = [&](unsigned stage, int k, float(&da)[8], float(&db)[TN]) {
#pragma unroll
        for (int f = 0; f < 2; ++f) {
            const float4 v = lds128(stage + a_addr0 + (unsigned)(k * A_LD + 32 * f) * 4u);
            da[4 * f + 0] = v.x; da[4 * f + 1] = v.y; da[4 * f + 2] = v.z; da[4 * f + 3] = v.w;
        }
#pragma unroll
        for (int g = 0; g < 4; ++g) {
            const float4 v = lds128(stage + b_addr0 + (unsigned)(k * BN + 16 * g) * 4u);
            db[4 * g + 0] = v.x; db[4 * g + 1] = v.y; db[4 * g + 2] = v.z; db[4 * g + 3] = v.w;
        }
    };

    cp_async::wait<STAGES - 2>();
    mbar_wait(full0, 0);
    __syncthreads();
    load_frags(base, 0, a[0], b[0]);

    for (int t = 0; t < k_tiles; ++t) {
        // As the TMA build: slice t + 1 has landed (this thread's A copies, everyone's after the barrier, and B), and
        // slice t - 1's stage is free for slice t + STAGES - 1.
        const int s = t % STAGES;
        const int sn = (s + 1 == STAGES) ? 0 : s + 1;
        cp_async::wait<STAGES - 3>();
        if (t + 1 < k_tiles) mbar_wait(full0 + 8 * sn, ((t + 1) / STAGES) & 1);
        __syncthreads();
        if (t + STAGES - 1 < k_tiles)
            issue(t + STAGES - 1);
        else
            cp_async::commit();
        const unsigned stage = base + s * MIXED_STAGE_BYTES;
        const unsigned next_stage = base + sn * MIXED_STAGE_BYTES;
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const int cur = k & 1;
            if (k + 1 < BK)
                load_frags(stage, k + 1, a[cur ^ 1], b[cur ^ 1]);
            else
                load_frags(next_stage, 0, a[cur ^ 1], b[cur ^ 1]);
            // v9's ORDER 3: one row from each 4-row fragment in turn, the odd ones walked backwards.
#pragma unroll
            for (int ii = 0; ii < 8; ++ii) {
                const int i = (ii % 2) * 4 + ii / 2;
#pragma unroll
                for (int jj = 0; jj < TN; ++jj) {
                    const int j = (ii & 1) ? TN - 1 - jj : jj;
                    acc[i][j] = fmaf(a[cur][i], b[cur][j], acc[i][j]);
                }
            }
        }
    }
    cp_async::wait<0>();

#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = bm + tm0 + 32 * (i / 4) + (i % 4);
        if (row >= M) continue;
        float* c_row = C + (size_t)row * N;
#pragma unroll
        for (int g = 0; g < 4; ++g) {
            const int col = bn + tn0 + 16 * g;
            if (col < N)
                *reinterpret_cast<float4*>(c_row + col) =
                    make_float4(acc[i][4 * g + 0], acc[i][4 * g + 1], acc[i][4 * g + 2], acc[i][4 * g + 3]);
        }
    }
}

#define MIXED_ENTRY(NAME, STAGES)                                                                                     \
    extern "C" __global__ void __launch_bounds__(probe::THREADS, 1)                                                 \
        NAME(const float* __restrict__ A, const __grid_constant__ probe::TensorMap map_b, float* __restrict__ C,    \
             int M, int N, int K)                                                                                    \
    {                                                                                                                \
        sgemm_mixed<STAGES>(A, &map_b, C, M, N, K);                                                                  \
    }
MIXED_ENTRY(sgemm_mixed_s3, 3)
MIXED_ENTRY(sgemm_mixed_s4, 4)

// One entry per stage count, by a plain name (the probe loads the cubin and looks them up).
#define PROBE_ENTRY(NAME, STAGES)                                                                                     \
    extern "C" __global__ void __launch_bounds__(probe::THREADS, 1)                                                 \
        NAME(const __grid_constant__ probe::TensorMap map_a, const __grid_constant__ probe::TensorMap map_b,       \
             float* __restrict__ C, int M, int N, int K)                                                             \
    {                                                                                                                \
        sgemm_tma_simt<STAGES>(&map_a, &map_b, C, M, N, K);                                                          \
    }
PROBE_ENTRY(sgemm_tma_simt_s3, 3)
PROBE_ENTRY(sgemm_tma_simt_s4, 4)
