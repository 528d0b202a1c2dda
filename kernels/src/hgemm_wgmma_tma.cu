// wgmma-tma: the tensor-core AddMM on Hopper's own machinery (sm_90a only). Same operation and edge rules as
// wmma-async (D = alpha*A*B + beta*C, half A (M x K) and B (K x N) row-major, float C and D, M, N, K multiples
// of 16), but none of its instructions:
// - The Tensor Memory Accelerator copies tiles: one thread issues cp.async.bulk.tensor for a whole 128x64 A tile
//   and a 64x256 B tile (four 64x64 boxes) per K slice, described by two tensor maps (cuTensorMapEncodeTiled on
//   the host). No thread computes an address or a bound: the hardware zero-fills boxes that hang over the edge of
//   A or B, so K that is not a multiple of 64 and M, N below a tile need no code.
// - TMA writes the tiles 128-byte swizzled, the layout wgmma reads without bank conflicts; nothing is ever
//   loaded into registers (wmma-async: ldmatrix of every fragment, each byte of the tiles read by 2-4 warps).
// - wgmma.mma_async: a warp group (128 threads) multiplies a 64x256x16 block per instruction straight from
//   shared memory, described by 64-bit matrix descriptors, asynchronously; mma.sync does 16x8x16 per warp.
// - mbarrier pipeline of STAGES slices with transaction counts: a "full" barrier per stage completes when TMA has
//   written its bytes, an "empty" barrier when the consumers' wgmmas that read it have finished.
// - Warp specialisation: warp group 0 only produces (one thread issues the copies; setmaxnreg gives its
//   registers away), warp groups 1 and 2 only consume, each owning 64 rows x 256 columns of the 128 x 256 block
//   tile in 128 float accumulators per thread.
// - The epilogue applies alpha and beta from the accumulator registers; the producer prefetches the block's C
//   tile into L2 while the last slices are multiplied.

#include "hopper_wgmma.cuh"

#ifndef WGMMA_B_LBO
#define WGMMA_B_LBO 8192  // B descriptor: bytes between 64-column (N) swizzle atoms = one 64x64 TMA box
#endif
#ifndef WGMMA_B_SBO
#define WGMMA_B_SBO 1024  // B descriptor: bytes between 8-row (K) core-matrix groups = 8 rows of 128 bytes
#endif
#ifndef WGMMA_TRANS_B
#define WGMMA_TRANS_B 1  // B is N-major (row-major K x N): wgmma's imm-trans-b = 1
#endif

namespace wgmma_tma {

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
constexpr int PRODUCER_REGS = 40;
constexpr int CONSUMER_REGS = 232;  // 128 * 40 + 256 * 232 = 64512 <= 65536 registers per SM
static_assert(SMEM_BYTES <= 227 * 1024, "the dynamic shared memory of one block (catalog: dynamic_smem_bytes)");
static_assert(PRODUCER_REGS * 128 + CONSUMER_REGS * 128 * CONSUMERS <= 65536, "setmaxnreg budget");

}  // namespace wgmma_tma

extern "C" __global__ void __launch_bounds__(wgmma_tma::THREADS, 1)
hgemm_wgmma_tma(const __grid_constant__ hopper::TensorMap map_a, const __grid_constant__ hopper::TensorMap map_b,
                const float* __restrict__ C, float* __restrict__ D, int M, int N, int K, float alpha, float beta)
{
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
    // Built for another target than sm_90a: wgmma and setmaxnreg do not exist there (the catalog refuses to
    // launch this kernel on such GPUs; this only keeps other builds of the file compiling).
    __trap();
#else
    using namespace wgmma_tma;
    using namespace hopper;
    extern __shared__ unsigned char smem_raw[];
    __shared__ __align__(8) unsigned long long full_bar[STAGES];
    __shared__ __align__(8) unsigned long long empty_bar[STAGES];

    // Swizzled tiles must start on 1024-byte boundaries for TMA's and wgmma's swizzle patterns to agree.
    const unsigned smem_base = (smem_u32(smem_raw) + 1023u) & ~1023u;
    const unsigned full0 = smem_u32(&full_bar[0]);
    const unsigned empty0 = smem_u32(&empty_bar[0]);

    const int tid = threadIdx.x;
    const int group = tid / 128;  // 0: producer; 1..CONSUMERS: consumers

    // Grouped block order (grid is (N / BN, M / BM) tiles, blockIdx.x walking columns), as in wmma-async.
    int bm, bn;
    grouped_block_origin<BM, BN, GROUP_M>(bm, bn);
    const int k_tiles = (K + BK - 1) / BK;

    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full0 + 8 * s, 1);                  // the producer's arrive.expect_tx
            mbar_init(empty0 + 8 * s, 4 * CONSUMERS);    // one arrive per consumer warp
        }
        // Make the initialised barriers visible to the async proxy (TMA) before any copy signals them.
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    }
    __syncthreads();  // the last block-wide barrier: the producer's idle threads leave early below

    if (group == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(PRODUCER_REGS));
        if (tid == 0) {
            // Prefetch this block's C tile into L2 a few slices before the epilogue reads it.
            const int prefetch_at = max(0, k_tiles - 2 * STAGES);
            // B boxes wholly right of N are not loaded (their stale columns are never stored): only boxes that
            // overlap the matrix are copied, the standard partial-box case of TMA.
            const int b_boxes = min(BN / B_BOX_N, (N - bn + B_BOX_N - 1) / B_BOX_N);
            for (int t = 0; t < k_tiles; ++t) {
                const int s = t % STAGES;
                const unsigned round = t / STAGES;
                load_slice<BK, B_BOX_N, A_STAGE_BYTES, B_BOX_BYTES, STAGE_BYTES>(
                    smem_base, full0, empty0, s, round, &map_a, &map_b, t, bm, bn, b_boxes);
                if (t == prefetch_at && beta != 0.0f) {
                    const int rows = min(BM, M - bm);
                    const unsigned bytes = (unsigned)min(BN, N - bn) * 4u;  // N % 16 == 0: a multiple of 64
                    for (int r = 0; r < rows; ++r)
                        asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n"
                                     ::"l"(C + (size_t)(bm + r) * N + bn), "r"(bytes) : "memory");
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

    consume_slices<STAGES, STAGE_BYTES, A_STAGE_BYTES, BK, WGMMA_B_LBO, WGMMA_B_SBO, WGMMA_TRANS_B>(
        d, smem_base, full0, empty0, consumer, lane, k_tiles);

    // Accumulator layout of m64nN (as mma.sync's m16n8, per warp): for each 8-column chunk j, the lane holds
    // (row lane/4, columns 8j + 2*(lane%4) + {0,1}) in d[4j], d[4j+1] and the same columns 8 rows lower in
    // d[4j+2], d[4j+3]. N % 16 == 0 keeps each column pair wholly in or out.
    const bool use_c = beta != 0.0f;
    const int row0 = bm + consumer * 64 + warp * 16 + lane / 4;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
        const int row = row0 + half * 8;
        if (row >= M) continue;
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
            const int col = bn + j * 8 + (lane % 4) * 2;
            if (col >= N) continue;
            float2 v = make_float2(alpha * d[4 * j + 2 * half], alpha * d[4 * j + 2 * half + 1]);
            if (use_c) {
                const float2 c = __ldg(reinterpret_cast<const float2*>(C + (size_t)row * N + col));
                v.x = fmaf(beta, c.x, v.x);
                v.y = fmaf(beta, c.y, v.y);
            }
            *reinterpret_cast<float2*>(D + (size_t)row * N + col) = v;
        }
    }
#endif
}
