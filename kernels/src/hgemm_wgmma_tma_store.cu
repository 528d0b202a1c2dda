// wgmma-tma-store: wgmma-tma with an asynchronous epilogue (sm_90a only). Same operation, operands, main loop
// and edge rules (D = alpha*A*B + beta*C, half A and B row-major through TMA tensor maps, float C and D, M, N, K
// multiples of 16); C and D now come as TMA tensor maps too (float32, 64-row x 32-column boxes, 128-byte
// swizzled). What wgmma-tma leaves on the table at 4096^3: each block's epilogue (a 128 KB float C tile read
// and a 128 KB D tile written from registers, ~10 us of a ~55 us tile) runs while the SM's tensor cores idle,
// and the next block cannot start until every one of those global stores has been issued.
// - C through TMA into the freed pipeline stages: once the consumers release the stages of the last slices but
//   one, the producer copies the block's C tile into three of them (16 boxes of 64 x 32 floats, 8 KB each; a
//   box never straddles a stage) while the last slice is multiplied. The tile was prefetched into L2 with
//   cp.async.bulk.prefetch.tensor a few slices earlier.
// - Each consumer warp group adds alpha*acc + beta*C in shared memory (each thread reads and rewrites the same
//   float2 places it owns in the swizzled boxes: the 128-byte swizzle spreads a warp's eight rows over all 32
//   banks, so no conflicts), makes its writes visible to the async proxy, syncs its 128 threads on a named
//   barrier, and one thread issues TMA bulk tensor stores of its eight boxes. It waits only until TMA has READ
//   the boxes (cp.async.bulk.wait_group.read): the block then exits and the global writes drain while the next
//   block on the SM already runs its main loop. TMA clips rows and columns outside D.

#include "hopper_wgmma.cuh"

namespace wgmma_tma_store {

constexpr int BM = 128;
constexpr int BN = 256;
constexpr int BK = 64;           // halves per K slice: one 128-byte swizzle row of A
constexpr int STAGES = 4;
constexpr int CONSUMERS = 2;     // warp groups that multiply, 64 rows each
constexpr int THREADS = 128 * (CONSUMERS + 1);
constexpr int GROUP_M = 8;
constexpr int B_BOX_N = 64;      // a 128-byte swizzled box holds 64 halves across
constexpr int A_STAGE_BYTES = BM * BK * 2;            // 16 KB
constexpr int B_BOX_BYTES = B_BOX_N * BK * 2;         // 8 KB: 64 K rows of 128 bytes
constexpr int STAGE_BYTES = A_STAGE_BYTES + (BN / B_BOX_N) * B_BOX_BYTES;  // 48 KB
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + 1024;  // + slack to align the tiles to 1024 bytes
// Epilogue boxes of C and D: 64 rows (one consumer's) x 32 floats (one 128-byte swizzle row).
constexpr int OUT_BOX_ROWS = 64;
constexpr int OUT_BOX_COLS = 32;
constexpr int OUT_BOX_BYTES = OUT_BOX_ROWS * OUT_BOX_COLS * 4;         // 8 KB
constexpr int OUT_BOXES_PER_CONSUMER = BN / OUT_BOX_COLS;              // 8
constexpr int OUT_BOXES_PER_STAGE = STAGE_BYTES / OUT_BOX_BYTES;        // 6
constexpr int OUT_BOXES = CONSUMERS * OUT_BOXES_PER_CONSUMER;           // 16
constexpr int OUT_STAGES = (OUT_BOXES + OUT_BOXES_PER_STAGE - 1) / OUT_BOXES_PER_STAGE;  // 3
constexpr int PRODUCER_REGS = 40;
constexpr int CONSUMER_REGS = 232;  // 128 * 40 + 256 * 232 = 64512 <= 65536 registers per SM
static_assert(SMEM_BYTES <= 227 * 1024, "the dynamic shared memory of one block (catalog: dynamic_smem_bytes)");
static_assert(PRODUCER_REGS * 128 + CONSUMER_REGS * 128 * CONSUMERS <= 65536, "setmaxnreg budget");
// The epilogue uses the stages of every slice but the last; a consumer's boxes span two consecutive of them.
static_assert(OUT_STAGES <= STAGES - 1, "the output tile fits in the stages the last slice does not hold");
// Consumer 0's boxes 0-7 lie in epilogue stages 0 and 1, consumer 1's boxes 8-15 in stages 1 and 2.
static_assert(CONSUMERS == 2 && OUT_BOXES_PER_CONSUMER == 8 && OUT_BOXES_PER_STAGE == 6, "box to stage map");

// Where epilogue box `box` (consumer * 8 + column strip) lives: the (box / 6)-th stage after the last slice's,
// in ring order, i.e. the stages of slices k_tiles - 4, -3, -2 (released in that order). 1024-byte aligned.
__device__ __forceinline__ unsigned out_box_addr(unsigned smem_base, int k_tiles, int box)
{
    const int stage = (k_tiles + box / OUT_BOXES_PER_STAGE) % STAGES;
    return smem_base + stage * STAGE_BYTES + (box % OUT_BOXES_PER_STAGE) * OUT_BOX_BYTES;
}

// 2-D TMA store of a shared-memory box to the tensor at element coordinates (c0 innermost, c1), in the
// executing thread's bulk async-group. Elements outside the tensor are not written.
__device__ __forceinline__ void tma_store_2d(const hopper::TensorMap* map, int c0, int c1, unsigned src)
{
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n"
                 ::"l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(src)
                 : "memory");
}

__device__ __forceinline__ void tma_prefetch_l2_2d(const hopper::TensorMap* map, int c0, int c1)
{
    asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];\n"
                 ::"l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1)
                 : "memory");
}

__device__ __forceinline__ void ld_shared_f2(unsigned addr, float& x, float& y)
{
    asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];\n" : "=f"(x), "=f"(y) : "r"(addr) : "memory");
}

__device__ __forceinline__ void st_shared_f2(unsigned addr, float x, float y)
{
    asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(addr), "f"(x), "f"(y) : "memory");
}

}  // namespace wgmma_tma_store

extern "C" __global__ void __launch_bounds__(wgmma_tma_store::THREADS, 1)
hgemm_wgmma_tma_store(const __grid_constant__ hopper::TensorMap map_a, const __grid_constant__ hopper::TensorMap map_b,
                      const __grid_constant__ hopper::TensorMap map_c, const __grid_constant__ hopper::TensorMap map_d,
                      int M, int N, int K, float alpha, float beta)
{
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
    // Built for another target than sm_90a: wgmma and setmaxnreg do not exist there.
    __trap();
#else
    using namespace wgmma_tma_store;
    using namespace hopper;
    extern __shared__ unsigned char smem_raw[];
    __shared__ __align__(8) unsigned long long full_bar[STAGES];
    __shared__ __align__(8) unsigned long long empty_bar[STAGES];
    __shared__ __align__(8) unsigned long long out_bar[OUT_STAGES];  // C tile (or nothing) landed in a stage

    // Swizzled tiles must start on 1024-byte boundaries for TMA's and wgmma's swizzle patterns to agree.
    const unsigned smem_base = (smem_u32(smem_raw) + 1023u) & ~1023u;
    const unsigned full0 = smem_u32(&full_bar[0]);
    const unsigned empty0 = smem_u32(&empty_bar[0]);
    const unsigned out0 = smem_u32(&out_bar[0]);

    const int tid = threadIdx.x;
    const int group = tid / 128;  // 0: producer; 1..CONSUMERS: consumers

    // Grouped block order (grid is (N / BN, M / BM) tiles, blockIdx.x walking columns), as in wgmma-tma.
    int bm, bn;
    grouped_block_origin<BM, BN, GROUP_M>(bm, bn);
    const int k_tiles = (K + BK - 1) / BK;
    const bool use_c = beta != 0.0f;

    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full0 + 8 * s, 1);                  // the producer's arrive.expect_tx
            mbar_init(empty0 + 8 * s, 4 * CONSUMERS);    // one arrive per consumer warp
        }
        for (int s = 0; s < OUT_STAGES; ++s) mbar_init(out0 + 8 * s, 1);  // the producer's arrive.expect_tx
        // Make the initialised barriers visible to the async proxy (TMA) before any copy signals them.
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    }
    __syncthreads();  // the last block-wide barrier: the producer's idle threads leave early below

    // An epilogue box (consumer c, column strip j) is copied and stored only if it overlaps C: rows
    // bm + 64c.., columns bn + 32j.. (a partly outside box is zero-filled on load and clipped on store).
    const int out_rows = M - bm;
    const int out_cols = N - bn;

    if (group == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(PRODUCER_REGS));
        if (tid == 0) {
            const int prefetch_at = max(0, k_tiles - 2 * STAGES);
            // B boxes wholly right of N are not loaded (their stale columns are never stored).
            const int b_boxes = min(BN / B_BOX_N, (N - bn + B_BOX_N - 1) / B_BOX_N);
            for (int t = 0; t < k_tiles; ++t) {
                const int s = t % STAGES;
                const unsigned round = t / STAGES;
                load_slice<BK, B_BOX_N, A_STAGE_BYTES, B_BOX_BYTES, STAGE_BYTES>(
                    smem_base, full0, empty0, s, round, &map_a, &map_b, t, bm, bn, b_boxes);
                if (t == prefetch_at && use_c) {
                    for (int box = 0; box < OUT_BOXES; ++box) {
                        const int r = (box / OUT_BOXES_PER_CONSUMER) * OUT_BOX_ROWS;
                        const int c = (box % OUT_BOXES_PER_CONSUMER) * OUT_BOX_COLS;
                        if (r < out_rows && c < out_cols) tma_prefetch_l2_2d(&map_c, bn + c, bm + r);
                    }
                }
            }
            // The epilogue's stages: wait until the consumers release them (the slices k_tiles - 4 .. - 2, a
            // stage never used counts as released), then copy C's boxes in, or with beta == 0 just signal.
            for (int o = 0; o < OUT_STAGES; ++o) {
                const int t = k_tiles + o;
                mbar_wait(empty0 + 8 * (t % STAGES), ((t / STAGES) & 1) ^ 1);
                const int first = o * OUT_BOXES_PER_STAGE;
                const int last = min(first + OUT_BOXES_PER_STAGE, OUT_BOXES);
                unsigned bytes = 0;
                if (use_c) {
                    for (int box = first; box < last; ++box) {
                        const int r = (box / OUT_BOXES_PER_CONSUMER) * OUT_BOX_ROWS;
                        const int c = (box % OUT_BOXES_PER_CONSUMER) * OUT_BOX_COLS;
                        if (r < out_rows && c < out_cols) bytes += OUT_BOX_BYTES;
                    }
                }
                const unsigned bar = out0 + 8 * o;
                mbar_arrive_expect_tx(bar, bytes);
                if (use_c) {
                    for (int box = first; box < last; ++box) {
                        const int r = (box / OUT_BOXES_PER_CONSUMER) * OUT_BOX_ROWS;
                        const int c = (box % OUT_BOXES_PER_CONSUMER) * OUT_BOX_COLS;
                        if (r < out_rows && c < out_cols)
                            tma_load_2d(out_box_addr(smem_base, k_tiles, box), &map_c, bn + c, bm + r, bar);
                    }
                }
            }
        }
        return;
    }

    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(CONSUMER_REGS));
    const int consumer = group - 1;
    const int warp = (tid / 32) % 4;  // warp within the warp group: rows 16*warp .. +15 of its 64
    const int lane = tid % 32;

    float d[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) d[i] = 0.0f;

    // B boxes: 64-column boxes 8 KB apart, 8-row groups 1024 bytes apart.
    consume_slices<STAGES, STAGE_BYTES, A_STAGE_BYTES, BK, B_BOX_BYTES, 1024, 1>(d, smem_base, full0, empty0, consumer,
                                                                               lane, k_tiles);

    // This consumer's boxes (consumer * 8 .. + 7) lie in epilogue stages `consumer` and `consumer + 1`; each box
    // waits for its own stage's barrier (a completed phase passes at once), so consumer 1 works on its boxes in
    // stage 1 while C still arrives in stage 2 (the stage of slice k_tiles - 2, released last).
    const int first_box = consumer * OUT_BOXES_PER_CONSUMER;

    // Accumulator layout of m64nN (as mma.sync's m16n8, per warp): for each 8-column chunk j, the lane holds
    // (row lane/4, columns 8j + 2*(lane%4) + {0,1}) in d[4j], d[4j+1] and the same columns 8 rows lower in
    // d[4j+2], d[4j+3]. In a box (64 rows of 128 bytes, 128-byte swizzled) row r's 16-byte chunk q sits at
    // r*128 + 16*(q ^ (r % 8)); here r % 8 == lane / 4.
    const int row_in_box = warp * 16 + lane / 4;
    const unsigned swz = lane / 4;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
        if (j % 4 == 0) mbar_wait(out0 + 8 * ((first_box + j / 4) / OUT_BOXES_PER_STAGE), 0);
        const unsigned box = out_box_addr(smem_base, k_tiles, first_box + j / 4);
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
    // (Barrier 0 is __syncthreads'; an immediate id lets ptxas reserve only the ids used.)
    if (consumer == 0)
        asm volatile("bar.sync 1, 128;\n" ::: "memory");
    else
        asm volatile("bar.sync 2, 128;\n" ::: "memory");
    if (warp == 0 && lane == 0) {
        const int r = consumer * OUT_BOX_ROWS;
        if (r < out_rows) {
            for (int j = 0; j < OUT_BOXES_PER_CONSUMER; ++j) {
                const int c = j * OUT_BOX_COLS;
                if (c < out_cols) tma_store_2d(&map_d, bn + c, bm + r, out_box_addr(smem_base, k_tiles, first_box + j));
            }
        }
        asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
        // Only shared memory must outlive the reads: the global writes finish after this block has exited.
        asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
    }
#endif
}
