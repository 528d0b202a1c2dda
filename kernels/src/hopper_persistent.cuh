// The persistent Hopper AddMM body shared by wgmma-persistent (CLUSTER 1) and wgmma-cluster (CLUSTER 2): one block
// per SM walks output tiles of 128 x 256 in grouped order; a producer warp group (one thread issues the TMA
// copies) streams 32-deep K slices through a 4-stage ring across tile boundaries, and the float C tile of each
// block tile into a dedicated 128 KB epilogue buffer while the tile's K loop runs; two consumer warp groups
// multiply (m64n256k16, 64 rows each) and write alpha * acc + beta * C in that buffer, which TMA stores to D.
// Same operation, operands and edge rules as wgmma-tma-store (D = alpha*A*B + beta*C, half A and B row-major, float
// C and D, all four as TMA tensor maps; M, N, K multiples of 16; edges zero-filled on load and clipped on store).
//
// Shared memory (230,400 bytes, one block per SM): the ring, 4 x 24 KB, and the epilogue buffer, 16 boxes of 64 x 32
// floats. A slice is 32 halves deep so that the ring and a whole C tile fit together: A's box rows are then 64
// bytes, so A uses the 64-byte swizzle (its wgmma descriptors say so); B's boxes stay 64 columns x 128 bytes.
//
// Ordering between the roles, all through mbarriers (a phase's parity is what a wait checks):
// - full[s] / empty[s]: the ring. A stage is refilled when every consumer warp that read it (of every block of the
//   cluster, whose copies land in it too) has released it.
// - epi_full[c] / epi_empty[c] (per consumer, its 8 boxes): the producer copies C into consumer c's boxes (or, with
//   beta == 0, only signals) once c's TMA stores of the previous tile have read them; c's storing thread waits for
//   those reads a few slices into the next tile, so it never holds up the multiplies.
// With CLUSTER 2 the two blocks of a cluster take vertically adjacent tiles (same columns of B): each block's
// producer loads half of the B boxes and multicasts them into both blocks' stages, so B crosses L2 once per pair.

#pragma once

#include "hopper_wgmma.cuh"

namespace wgmma_persistent {

// Slice depth and ring length: 32 x 4 (A in the 64-byte swizzle) or 64 x 2 (A in the 128-byte swizzle) fit beside
// the epilogue buffer; scripts/wgmma_variants.py builds both.
#ifndef PERSISTENT_BK
#define PERSISTENT_BK 32
#endif
#ifndef PERSISTENT_STAGES
#define PERSISTENT_STAGES 4
#endif
#ifndef PERSISTENT_GROUP_M
#define PERSISTENT_GROUP_M 8
#endif
constexpr int BM = 128;
constexpr int BN = 256;
constexpr int BK = PERSISTENT_BK;  // halves per K slice: one swizzle row of A (64 or 128 bytes)
constexpr int STAGES = PERSISTENT_STAGES;
static_assert(BK == 32 || BK == 64, "A's swizzle is 64 bytes for 32-deep slices, 128 bytes for 64-deep ones");
constexpr int CONSUMERS = 2;  // warp groups that multiply, 64 rows each
constexpr int THREADS = 128 * (CONSUMERS + 1);
constexpr int GROUP_M = PERSISTENT_GROUP_M;  // tile rows per group of the tile order
constexpr int B_BOX_N = 64;   // a 128-byte swizzled box of B holds 64 halves across
constexpr int B_BOXES = BN / B_BOX_N;
constexpr int A_STAGE_BYTES = BM * BK * 2;                          // 8 KB
constexpr int A_CONSUMER_BYTES = 64 * BK * 2;                       // 4 KB: one consumer's 64 rows
constexpr int B_BOX_BYTES = B_BOX_N * BK * 2;                       // 4 KB: 32 K rows of 128 bytes
constexpr int STAGE_BYTES = A_STAGE_BYTES + B_BOXES * B_BOX_BYTES;  // 24 KB
constexpr int OUT_BOX_ROWS = 64;  // C and D boxes: one consumer's rows x one 128-byte swizzle row of floats
constexpr int OUT_BOX_COLS = 32;
constexpr int OUT_BOX_BYTES = OUT_BOX_ROWS * OUT_BOX_COLS * 4;  // 8 KB
constexpr int OUT_BOXES_PER_CONSUMER = BN / OUT_BOX_COLS;       // 8
constexpr int EPI_BYTES = CONSUMERS * OUT_BOXES_PER_CONSUMER * OUT_BOX_BYTES;  // 128 KB
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + EPI_BYTES + 1024;  // + slack to align to 1024 bytes
constexpr int PRODUCER_REGS = 40;
constexpr int CONSUMER_REGS = 232;
// When the producer copies a tile's C: after this many of the tile's slices (or its last), so that the consumers'
// storing threads have released the previous tile's boxes (they do at slice EPI_RELEASE_SLICE) and it never waits.
constexpr int C_LOAD_SLICE = 2 * STAGES;
constexpr int EPI_RELEASE_SLICE = 2;
static_assert(SMEM_BYTES + 128 <= 227 * 1024, "dynamic plus static shared memory of one block (catalog: dynamic_smem_bytes)");
static_assert(PRODUCER_REGS * 128 + CONSUMER_REGS * 128 * CONSUMERS <= 65536, "setmaxnreg budget");
static_assert(EPI_RELEASE_SLICE < C_LOAD_SLICE, "the producer waits for the release only after it happened");

// wgmma descriptor of a K-major operand in the 64-byte swizzle (layout type 2 in bits 62-63): 8-row groups of 64-byte
// rows, `sbo` bytes apart; the leading byte offset is unused for swizzled K-major layouts.
__device__ __forceinline__ unsigned long long make_desc_sw64(unsigned addr, unsigned sbo)
{
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | (1ull << 16) |
           ((unsigned long long)((sbo >> 4) & 0x3FFF) << 32) | (2ull << 62);
}

// 2-D TMA load multicast to the blocks of the cluster named in `mask` (same shared-memory offset and barrier in
// each); each receiving block's barrier is credited with the box's bytes.
__device__ __forceinline__ void tma_load_2d_multicast(unsigned dst, const hopper::TensorMap* map, int c0, int c1,
                                                      unsigned bar, unsigned short mask)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
                 "[%0], [%1, {%2, %3}], [%4], %5;\n"
                 ::"r"(dst), "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
                 : "memory");
}

__device__ __forceinline__ void tma_store_2d(const hopper::TensorMap* map, int c0, int c1, unsigned src)
{
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n"
                 ::"l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(src)
                 : "memory");
}

// Arrive on the barrier at the same shared-memory offset in block `rank` of the cluster (this block included). The
// default CTA-scope release: with .release.cluster ptxas puts a MEMBAR.ALL.GPU before every arrive, which made the
// clustered kernel four times slower (the stage's reads by wgmma are complete after wgmma.wait_group anyway).
__device__ __forceinline__ void mbar_arrive_cluster(unsigned bar, unsigned rank)
{
    asm volatile("{\n .reg .b32 remote;\n mapa.shared::cluster.u32 remote, %0, %1;\n"
                 " mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n"
                 ::"r"(bar), "r"(rank)
                 : "memory");
}

// A consumer warp is done with a stage: tell this block's producer and, with clusters, the other blocks' (whose
// multicasts also write into this block's stage).
template <int CLUSTER>
__device__ __forceinline__ void release_stage(unsigned empty_bar)
{
    if constexpr (CLUSTER == 1) {
        hopper::mbar_arrive(empty_bar);
    } else {
#pragma unroll
        for (int r = 0; r < CLUSTER; ++r) mbar_arrive_cluster(empty_bar, r);
    }
}

__device__ __forceinline__ void ld_shared_f2(unsigned addr, float& x, float& y)
{
    asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];\n" : "=f"(x), "=f"(y) : "r"(addr) : "memory");
}

__device__ __forceinline__ void st_shared_f2(unsigned addr, float x, float y)
{
    asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(addr), "f"(x), "f"(y) : "memory");
}

// The tiles of a launch: `count` units of CLUSTER vertically adjacent 128 x 256 tiles, in groups of GROUP_M tile
// rows walked down a group's rows first (the units in flight together share A's row panels and B's column panels
// in L2); unit u's block `rank` computes rows bm.., columns bn.. of D.
template <int CLUSTER>
struct TileOrder {
    int tiles_n, units_m, count;

    __device__ __forceinline__ TileOrder(int M, int N)
    {
        tiles_n = (N + BN - 1) / BN;
        units_m = ((M + BM - 1) / BM + CLUSTER - 1) / CLUSTER;
        count = units_m * tiles_n;
    }

    __device__ __forceinline__ void origin(int unit, int rank, int& bm, int& bn) const
    {
        constexpr int group_m = GROUP_M / CLUSTER;
        const int group_size = group_m * tiles_n;
        const int first_m = (unit / group_size) * group_m;
        const int rows_in_group = min(units_m - first_m, group_m);
        bm = ((first_m + (unit % group_size) % rows_in_group) * CLUSTER + rank) * BM;
        bn = ((unit % group_size) / rows_in_group) * BN;
    }
};

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

template <int CLUSTER>
__device__ __forceinline__ void persistent_addmm(const hopper::TensorMap& map_a, const hopper::TensorMap& map_b,
                                                 const hopper::TensorMap& map_c, const hopper::TensorMap& map_d,
                                                 int M, int N, int K, float alpha, float beta)
{
    using namespace hopper;
    extern __shared__ unsigned char smem_raw[];
    __shared__ __align__(8) unsigned long long full_bar[STAGES];
    __shared__ __align__(8) unsigned long long empty_bar[STAGES];
    __shared__ __align__(8) unsigned long long epi_full_bar[CONSUMERS];
    __shared__ __align__(8) unsigned long long epi_empty_bar[CONSUMERS];

    // Swizzled tiles must start on 1024-byte boundaries for TMA's and wgmma's swizzle patterns to agree.
    const unsigned smem_base = (smem_u32(smem_raw) + 1023u) & ~1023u;
    const unsigned epi_base = smem_base + STAGES * STAGE_BYTES;
    const unsigned full0 = smem_u32(&full_bar[0]);
    const unsigned empty0 = smem_u32(&empty_bar[0]);
    const unsigned epi_full0 = smem_u32(&epi_full_bar[0]);
    const unsigned epi_empty0 = smem_u32(&epi_empty_bar[0]);

    const int tid = threadIdx.x;
    const int group = tid / 128;  // 0: producer; 1..CONSUMERS: consumers

    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full0 + 8 * s, 1);                          // the producer's arrive.expect_tx
            mbar_init(empty0 + 8 * s, 4 * CONSUMERS * CLUSTER);  // each consumer warp of each block of the cluster
        }
        for (int c = 0; c < CONSUMERS; ++c) {
            mbar_init(epi_full0 + 8 * c, 1);   // the producer's arrive.expect_tx (C's boxes, or none)
            mbar_init(epi_empty0 + 8 * c, 1);  // consumer c's storing thread, once TMA has read its boxes
        }
        // Make the initialised barriers visible to the async proxy (TMA) and to the other blocks of the cluster.
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    }
    if constexpr (CLUSTER > 1)
        cluster_sync();  // no block multicasts into or arrives on another's barriers before they exist
    else
        __syncthreads();

    if (group == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(PRODUCER_REGS));
        if (tid == 0) {
            const unsigned rank = CLUSTER > 1 ? cluster_rank() : 0;
            const int first_unit = blockIdx.x / CLUSTER;
            const int unit_stride = gridDim.x / CLUSTER;
            const TileOrder<CLUSTER> order(M, N);
            const int k_tiles = (K + BK - 1) / BK;
            const bool use_c = beta != 0.0f;
            unsigned slice = 0;  // slices issued by this block so far: the ring position and round
            int iter = 0;
            for (int unit = first_unit; unit < order.count; unit += unit_stride, ++iter) {
                int bm, bn;
                order.origin(unit, rank, bm, bn);
                // B boxes wholly right of N are not loaded (their stale columns are never stored).
                const int b_boxes = min(B_BOXES, (N - bn + B_BOX_N - 1) / B_BOX_N);
                const int c_at = min(k_tiles - 1, C_LOAD_SLICE);
                for (int t = 0; t < k_tiles; ++t, ++slice) {
                    const int s = slice % STAGES;
                    mbar_wait(empty0 + 8 * s, ((slice / STAGES) & 1) ^ 1);
                    const unsigned full = full0 + 8 * s;
                    mbar_arrive_expect_tx(full, A_STAGE_BYTES + b_boxes * B_BOX_BYTES);
                    const unsigned dst = smem_base + s * STAGE_BYTES;
                    tma_load_2d(dst, &map_a, t * BK, bm, full);
                    for (int j = 0; j < b_boxes; ++j) {
                        const unsigned b_dst = dst + A_STAGE_BYTES + j * B_BOX_BYTES;
                        if constexpr (CLUSTER > 1) {
                            if (j % CLUSTER == static_cast<int>(rank))
                                tma_load_2d_multicast(b_dst, &map_b, bn + j * B_BOX_N, t * BK, full,
                                                      (unsigned short)((1u << CLUSTER) - 1));
                        } else {
                            tma_load_2d(b_dst, &map_b, bn + j * B_BOX_N, t * BK, full);
                        }
                    }
                    if (t == c_at) {
                        // This tile's C into each consumer's boxes, once its stores of the last tile have read them.
                        for (int c = 0; c < CONSUMERS; ++c) {
                            mbar_wait(epi_empty0 + 8 * c, (iter & 1) ^ 1);
                            const int r = c * OUT_BOX_ROWS;
                            const bool rows_in = use_c && r < M - bm;
                            int boxes = 0;
                            for (int j = 0; j < OUT_BOXES_PER_CONSUMER; ++j) boxes += rows_in && j * OUT_BOX_COLS < N - bn;
                            const unsigned bar = epi_full0 + 8 * c;
                            mbar_arrive_expect_tx(bar, boxes * OUT_BOX_BYTES);
                            for (int j = 0; j < boxes; ++j)
                                tma_load_2d(epi_base + (c * OUT_BOXES_PER_CONSUMER + j) * OUT_BOX_BYTES, &map_c,
                                            bn + j * OUT_BOX_COLS, bm + r, bar);
                        }
                    }
                }
            }
        }
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(CONSUMER_REGS));
        const unsigned rank = CLUSTER > 1 ? cluster_rank() : 0;
        const int first_unit = blockIdx.x / CLUSTER;
        const int unit_stride = gridDim.x / CLUSTER;
        const TileOrder<CLUSTER> order(M, N);
        const int k_tiles = (K + BK - 1) / BK;
        const bool use_c = beta != 0.0f;
        const int consumer = group - 1;
        const int warp = (tid / 32) % 4;  // warp within the warp group: rows 16*warp .. +15 of its 64
        const int lane = tid % 32;
        const bool storer = warp == 0 && lane == 0;
        const unsigned my_boxes = epi_base + consumer * OUT_BOXES_PER_CONSUMER * OUT_BOX_BYTES;
        // Accumulator layout of m64nN (per warp as mma.sync's m16n8): for each 8-column chunk j the lane holds
        // (row lane/4, columns 8j + 2*(lane%4) + {0,1}) in d[4j], d[4j+1], and the same columns 8 rows lower in
        // d[4j+2], d[4j+3]. In a box (64 rows of 128 bytes, 128-byte swizzled) row r's 16-byte chunk q sits at
        // r*128 + 16*(q ^ (r % 8)); here r % 8 == lane / 4.
        const int row_in_box = warp * 16 + lane / 4;
        const unsigned swz = lane / 4;

        unsigned slice = 0;
        int iter = 0;
        float d[128];
        for (int unit = first_unit; unit < order.count; unit += unit_stride, ++iter) {
            int bm, bn;
            order.origin(unit, rank, bm, bn);
#pragma unroll
            for (int i = 0; i < 128; ++i) d[i] = 0.0f;
            const int release_at = min(k_tiles - 1, EPI_RELEASE_SLICE);
            for (int t = 0; t < k_tiles; ++t, ++slice) {
                const int s = slice % STAGES;
                mbar_wait(full0 + 8 * s, (slice / STAGES) & 1);
                const unsigned a_tile = smem_base + s * STAGE_BYTES + consumer * A_CONSUMER_BYTES;
                const unsigned b_tile = smem_base + s * STAGE_BYTES + A_STAGE_BYTES;
                fence_accumulators(d);
                wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < BK / 16; ++kk) {
                    // A, K-major: 16 halves = 32 bytes along the swizzled rows; 8-row groups 8 rows apart.
                    const unsigned long long da = BK == 32 ? make_desc_sw64(a_tile + kk * 32, 512)
                                                           : make_desc(a_tile + kk * 32, 16, 1024);
                    // B, N-major: 16 K rows of 128 bytes further down each box; boxes B_BOX_BYTES apart.
                    const unsigned long long db = make_desc(b_tile + kk * 16 * 128, B_BOX_BYTES, 1024);
                    wgmma_m64n256k16<1>(d, da, db);
                }
                wgmma_commit();
                // Let this slice's wgmmas run on; the previous slice's are finished after this wait.
                wgmma_wait<1>();
                fence_accumulators(d);
                if (t > 0 && lane == 0) release_stage<CLUSTER>(empty0 + 8 * ((slice - 1) % STAGES));
                if (iter > 0 && t == release_at && storer) {
                    // The previous tile's D stores have read this consumer's boxes: C of this tile may come in.
                    asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
                    mbar_arrive(epi_empty0 + 8 * consumer);
                }
            }
            wgmma_wait<0>();
            fence_accumulators(d);
            if (lane == 0) release_stage<CLUSTER>(empty0 + 8 * ((slice - 1) % STAGES));

            // Epilogue: alpha * acc + beta * C in place in this consumer's boxes, then TMA stores them to D.
            mbar_wait(epi_full0 + 8 * consumer, iter & 1);
#pragma unroll
            for (int j = 0; j < BN / 8; ++j) {
                const unsigned box = my_boxes + (j / 4) * OUT_BOX_BYTES;
                const unsigned chunk = (j % 4) * 2 + (lane % 4) / 2;
                const unsigned in_row = ((chunk ^ swz) * 16) + (lane % 2) * 8;
#pragma unroll
                for (int half = 0; half < 2; ++half) {
                    const unsigned addr = box + (row_in_box + half * 8) * 128 + in_row;
                    float x = alpha * d[4 * j + 2 * half];
                    float y = alpha * d[4 * j + 2 * half + 1];
                    if (use_c) {
                        float cx, cy;
                        ld_shared_f2(addr, cx, cy);
                        x = fmaf(beta, cx, x);
                        y = fmaf(beta, cy, y);
                    }
                    st_shared_f2(addr, x, y);
                }
            }
            // Generic-proxy writes -> visible to TMA (async proxy), then all 128 threads of this warp group done.
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
            if (consumer == 0)
                asm volatile("bar.sync 1, 128;\n" ::: "memory");
            else
                asm volatile("bar.sync 2, 128;\n" ::: "memory");
            if (storer) {
                const int r = consumer * OUT_BOX_ROWS;
                if (r < M - bm) {
                    for (int j = 0; j < OUT_BOXES_PER_CONSUMER; ++j) {
                        const int c = j * OUT_BOX_COLS;
                        if (c < N - bn) tma_store_2d(&map_d, bn + c, bm + r, my_boxes + j * OUT_BOX_BYTES);
                    }
                }
                asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
            }
        }
        // Only shared memory must outlive the reads: the global writes finish after this block has exited.
        if (storer) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
    }
    // A block must not exit while the other block of its cluster may still arrive on its barriers.
    if constexpr (CLUSTER > 1) cluster_sync();
}

}  // namespace wgmma_persistent
