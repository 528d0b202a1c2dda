// wgmma-pingpong: wgmma-tma made persistent, with its two consumer warp groups taking turns (sm_90a only).
// Same operation, operands and edge rules (D = alpha*A*B + beta*C, half A and B row-major through TMA tensor
// maps, float C and D, M, N, K multiples of 16). What wgmma-tma leaves on the table at 4096^3:
// - Its epilogue (read C, write D: 128 MB in float32 at 4096) runs while the tensor cores idle, and every block
//   starts with an empty pipeline. Here the grid is one block per SM (the catalog's persistent grid) and each
//   block walks the tiles blockIdx.x, blockIdx.x + gridDim.x, ... in grouped order.
// - Ping-pong: each consumer warp group owns a whole 128 x 128 tile (two m64n128k16 per 16-deep K step, 128 float
//   accumulators per thread) and the two take alternate tiles. While one multiplies, the other runs its
//   epilogue, so the tensor cores see one warp group's wgmmas after the other's with no gap.
// - The producer (one thread) fills one stage sequence for all tiles of the block in order, running up to STAGES
//   slices ahead, across tile boundaries: the next tile's first slices are in shared memory before it starts.
// Ordering: an mbarrier wait checks only a phase's parity, so a consumer may wait for a stage's slice only when
// that stage has no older slice still outstanding. A "turn" barrier gives that: consumer c starts a tile's
// K loop only after all four warps of the other consumer have seen the last slice of the previous tile arrive
// (so every older slice of every stage has arrived). The same barrier makes the multiplies alternate.

#include "hopper_wgmma.cuh"

namespace wgmma_pingpong {

constexpr int BM = 128;  // one consumer warp group's tile: 2 x 64 rows
constexpr int BN = 128;
constexpr int BK = 64;   // halves per K slice: one 128-byte swizzle row of A
constexpr int STAGES = 6;
constexpr int CONSUMERS = 2;
constexpr int THREADS = 128 * (CONSUMERS + 1);
constexpr int GROUP_M = 8;
constexpr int B_BOX_N = 64;                           // a 128-byte swizzled box holds 64 halves across
constexpr int A_STAGE_BYTES = BM * BK * 2;            // 16 KB
constexpr int A_HALF_BYTES = 64 * BK * 2;             // rows 64..127 of the A tile: 8 KB further
constexpr int B_BOX_BYTES = B_BOX_N * BK * 2;         // 8 KB: 64 K rows of 128 bytes
constexpr int STAGE_BYTES = A_STAGE_BYTES + (BN / B_BOX_N) * B_BOX_BYTES;  // 32 KB
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + 1024;  // + slack to align the tiles to 1024 bytes
constexpr int PRODUCER_REGS = 40;
constexpr int CONSUMER_REGS = 232;
static_assert(SMEM_BYTES <= 227 * 1024, "the dynamic shared memory of one block (catalog: dynamic_smem_bytes)");
static_assert(PRODUCER_REGS * 128 + CONSUMER_REGS * 128 * CONSUMERS <= 65536, "setmaxnreg budget");

// Row and column of C where tile `tile` starts: tiles numbered in groups of GROUP_M tile rows, walking down a
// group's rows first, so the tiles in flight at once share A's row panels and B's column panels in L2.
__device__ __forceinline__ void tile_origin(int tile, int tiles_m, int tiles_n, int& bm, int& bn)
{
    const int group_size = GROUP_M * tiles_n;
    const int first_m = (tile / group_size) * GROUP_M;
    const int rows_in_group = min(tiles_m - first_m, GROUP_M);
    bm = (first_m + (tile % group_size) % rows_in_group) * BM;
    bn = ((tile % group_size) / rows_in_group) * BN;
}

}  // namespace wgmma_pingpong

extern "C" __global__ void __launch_bounds__(wgmma_pingpong::THREADS, 1)
hgemm_wgmma_pingpong(const __grid_constant__ hopper::TensorMap map_a, const __grid_constant__ hopper::TensorMap map_b,
                     const float* __restrict__ C, float* __restrict__ D, int M, int N, int K, float alpha, float beta)
{
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __trap();  // built for another target than sm_90a (the catalog refuses to launch it there)
#else
    using namespace wgmma_pingpong;
    using namespace hopper;
    extern __shared__ unsigned char smem_raw[];
    __shared__ __align__(8) unsigned long long full_bar[STAGES];
    __shared__ __align__(8) unsigned long long empty_bar[STAGES];
    __shared__ __align__(8) unsigned long long turn_bar[CONSUMERS];  // turn_bar[c]: consumer c may start

    const unsigned smem_base = (smem_u32(smem_raw) + 1023u) & ~1023u;
    const unsigned full0 = smem_u32(&full_bar[0]);
    const unsigned empty0 = smem_u32(&empty_bar[0]);
    const unsigned turn0 = smem_u32(&turn_bar[0]);

    const int tid = threadIdx.x;
    const int group = tid / 128;  // 0: producer; 1..CONSUMERS: consumers
    const int tiles_m = (M + BM - 1) / BM;
    const int tiles_n = (N + BN - 1) / BN;
    const int num_tiles = tiles_m * tiles_n;
    const int k_tiles = (K + BK - 1) / BK;

    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full0 + 8 * s, 1);  // the producer's arrive.expect_tx
            mbar_init(empty0 + 8 * s, 4);  // one arrive per warp of the one consumer that used the slice
        }
        for (int c = 0; c < CONSUMERS; ++c) mbar_init(turn0 + 8 * c, 4);  // one arrive per warp of the other
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    }
    __syncthreads();  // the last block-wide barrier: the producer's idle threads leave early below

    if (group == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(PRODUCER_REGS));
        if (tid == 0) {
            const int prefetch_at = max(0, k_tiles - 2 * STAGES);
            int g = 0;  // slices loaded so far by this block, over all its tiles: the stage sequence
            for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
                int bm, bn;
                tile_origin(tile, tiles_m, tiles_n, bm, bn);
                // B boxes wholly right of N are not loaded (their stale columns are never stored).
                const int b_boxes = min(BN / B_BOX_N, (N - bn + B_BOX_N - 1) / B_BOX_N);
                for (int t = 0; t < k_tiles; ++t, ++g) {
                    const int s = g % STAGES;
                    const unsigned round = g / STAGES;
                    load_slice<BK, B_BOX_N, A_STAGE_BYTES, B_BOX_BYTES, STAGE_BYTES>(
                        smem_base, full0, empty0, s, round, &map_a, &map_b, t, bm, bn, b_boxes);
                    if (t == prefetch_at && beta != 0.0f) {
                        // This tile's C into L2 a few slices before its epilogue reads it.
                        const int rows = min(BM, M - bm);
                        const unsigned bytes = (unsigned)min(BN, N - bn) * 4u;  // N % 16 == 0: a multiple of 64
                        for (int r = 0; r < rows; ++r)
                            asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n"
                                         ::"l"(C + (size_t)(bm + r) * N + bn), "r"(bytes) : "memory");
                    }
                }
            }
        }
        return;
    }

    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(CONSUMER_REGS));
    const int consumer = group - 1;
    const int warp = (tid / 32) % 4;  // warp within the warp group: rows 16*warp .. +15 of each 64
    const int lane = tid % 32;
    const bool use_c = beta != 0.0f;

    float d[2][64];  // rows 0..63 and 64..127 of the tile
    // n: the block's n-th tile, which consumer n % 2 takes; its slices are n*k_tiles .. in the stage sequence.
    int n = consumer;
    for (int tile = blockIdx.x + consumer * gridDim.x; tile < num_tiles; tile += CONSUMERS * gridDim.x, n += CONSUMERS) {
        int bm, bn;
        tile_origin(tile, tiles_m, tiles_n, bm, bn);
        if (n > 0) mbar_wait(turn0 + 8 * consumer, ((n - 1) / CONSUMERS) & 1);
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int i = 0; i < 64; ++i) d[h][i] = 0.0f;

        const int g0 = n * k_tiles;
        for (int t = 0; t < k_tiles; ++t) {
            const int g = g0 + t;
            const int s = g % STAGES;
            mbar_wait(full0 + 8 * s, (g / STAGES) & 1);
            if (t == k_tiles - 1) {
                // Every slice of this tile has arrived: the other consumer may start on the next tile's.
                __syncwarp();
                if (lane == 0) mbar_arrive(turn0 + 8 * (1 - consumer));
            }
            const unsigned a_tile = smem_base + s * STAGE_BYTES;
            const unsigned b_tile = a_tile + A_STAGE_BYTES;
            fence_accumulators(d[0]);
            fence_accumulators(d[1]);
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < BK / 16; ++kk) {
                // B, N-major: 16 K rows of 128 bytes further down each box; the two boxes 8 KB apart.
                const unsigned long long db = make_desc(b_tile + kk * 16 * 128, B_BOX_BYTES, 1024);
                // A, K-major: 16 halves = 32 bytes along the swizzled rows; 8-row groups 1024 B apart.
                wgmma_m64n128k16(d[0], make_desc(a_tile + kk * 32, 16, 1024), db);
                wgmma_m64n128k16(d[1], make_desc(a_tile + A_HALF_BYTES + kk * 32, 16, 1024), db);
            }
            wgmma_commit();
            wgmma_wait<1>();  // the previous slice's wgmmas are done: its stage is free
            fence_accumulators(d[0]);
            fence_accumulators(d[1]);
            if (t > 0 && lane == 0) mbar_arrive(empty0 + 8 * ((g - 1) % STAGES));
        }
        wgmma_wait<0>();
        fence_accumulators(d[0]);
        fence_accumulators(d[1]);
        if (lane == 0) mbar_arrive(empty0 + 8 * ((g0 + k_tiles - 1) % STAGES));

        // Epilogue, while the other consumer multiplies. Accumulator layout of m64nN per warp: for each 8-column
        // chunk j, the lane holds (row lane/4, columns 8j + 2*(lane%4) + {0,1}) in d[4j], d[4j+1] and the same
        // columns 8 rows lower in d[4j+2], d[4j+3]. N % 16 == 0 keeps each column pair wholly in or out.
#pragma unroll
        for (int h = 0; h < 2; ++h) {
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const int row = bm + h * 64 + warp * 16 + lane / 4 + half * 8;
                if (row >= M) continue;
#pragma unroll
                for (int j = 0; j < BN / 8; ++j) {
                    const int col = bn + j * 8 + (lane % 4) * 2;
                    if (col >= N) continue;
                    float2 v = make_float2(alpha * d[h][4 * j + 2 * half], alpha * d[h][4 * j + 2 * half + 1]);
                    if (use_c) {
                        const float2 c = __ldg(reinterpret_cast<const float2*>(C + (size_t)row * N + col));
                        v.x = fmaf(beta, c.x, v.x);
                        v.y = fmaf(beta, c.y, v.y);
                    }
                    *reinterpret_cast<float2*>(D + (size_t)row * N + col) = v;
                }
            }
        }
    }
#endif
}
