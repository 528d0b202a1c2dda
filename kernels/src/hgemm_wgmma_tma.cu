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

// The 128-byte CUtensorMap, passed by value as a __grid_constant__ kernel parameter: TMA reads it from the
// parameter space, so no copy to global memory and no tensormap fence are needed.
struct alignas(64) TensorMap {
    unsigned long long opaque[16];
};

__device__ __forceinline__ unsigned smem_u32(const void* p)
{
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

// Arrive and announce `bytes` more transaction bytes for this phase (the TMA copies complete them).
__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void mbar_arrive(unsigned bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// Spin until the phase of parity `parity` has completed (a fresh barrier counts its "previous" phase, parity 1,
// as completed, which lets the producer fill every stage once before it waits).
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity)
{
    unsigned done;
    do {
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
    } while (!done);
}

// 2-D TMA load of the box at element coordinates (c0 innermost, c1) into shared memory, completing `bar`.
__device__ __forceinline__ void tma_load_2d(unsigned dst, const TensorMap* map, int c0, int c1, unsigned bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
                 ::"r"(dst), "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(bar)
                 : "memory");
}

// wgmma shared-memory matrix descriptor: start address, leading and stride byte offsets (all >> 4), and the
// swizzle mode in bits 62-63 (1 = 128-byte swizzle). Base offset (bits 49-51) stays 0: every swizzle atom
// starts 1024-byte aligned.
__device__ __forceinline__ unsigned long long make_desc(unsigned addr, unsigned lbo, unsigned sbo)
{
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | ((unsigned long long)((lbo >> 4) & 0x3FFF) << 16) |
           ((unsigned long long)((sbo >> 4) & 0x3FFF) << 32) | (1ull << 62);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int PENDING>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(PENDING) : "memory"); }

// Keeps the compiler from moving reads or writes of the accumulators across a wgmma fence or wait: the
// asynchronous wgmma writes them behind the compiler's back.
__device__ __forceinline__ void fence_accumulators(float (&d)[128])
{
#pragma unroll
    for (int i = 0; i < 128; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// d (64 x 256 per warp group, float) += A (64 x 16, K-major) * B (16 x 256, N-major), both from shared memory.
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], unsigned long long desc_a, unsigned long long desc_b)
{
    asm volatile("{\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
                 "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
                 "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
                 "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
                 "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
                 "%128, %129, 1, 1, 1, 0, %130;\n"
                 "}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
                   "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
                   "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
                   "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
                   "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
                   "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
                   "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
                   "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
                   "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
                   "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
                   "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
                   "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
                   "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
                   "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
                 : "l"(desc_a), "l"(desc_b), "n"(WGMMA_TRANS_B));
}

}  // namespace wgmma_tma

extern "C" __global__ void __launch_bounds__(wgmma_tma::THREADS, 1)
hgemm_wgmma_tma(const __grid_constant__ wgmma_tma::TensorMap map_a, const __grid_constant__ wgmma_tma::TensorMap map_b,
                const float* __restrict__ C, float* __restrict__ D, int M, int N, int K, float alpha, float beta)
{
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
    // Built for another target than sm_90a: wgmma and setmaxnreg do not exist there (the catalog refuses to
    // launch this kernel on such GPUs; this only keeps other builds of the file compiling).
    __trap();
#else
    using namespace wgmma_tma;
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
    const int grid_n = gridDim.x;
    const int grid_m = gridDim.y;
    const int pid = blockIdx.y * grid_n + blockIdx.x;
    const int group_size = GROUP_M * grid_n;
    const int first_m = (pid / group_size) * GROUP_M;
    const int rows_in_group = min(grid_m - first_m, GROUP_M);
    const int bm = (first_m + (pid % group_size) % rows_in_group) * BM;
    const int bn = ((pid % group_size) / rows_in_group) * BN;
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
                mbar_wait(empty0 + 8 * s, (round & 1) ^ 1);  // consumers are done with this stage's last use
                const unsigned full = full0 + 8 * s;
                // The zero-filled out-of-bounds parts of a box count as transferred bytes too.
                mbar_arrive_expect_tx(full, A_STAGE_BYTES + b_boxes * B_BOX_BYTES);
                const unsigned a_dst = smem_base + s * STAGE_BYTES;
                tma_load_2d(a_dst, &map_a, t * BK, bm, full);
                for (int j = 0; j < b_boxes; ++j)
                    tma_load_2d(a_dst + A_STAGE_BYTES + j * B_BOX_BYTES, &map_b, bn + j * B_BOX_N, t * BK, full);
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

    for (int t = 0; t < k_tiles; ++t) {
        const int s = t % STAGES;
        mbar_wait(full0 + 8 * s, (t / STAGES) & 1);
        const unsigned a_tile = smem_base + s * STAGE_BYTES + consumer * (64 * BK * 2);
        const unsigned b_tile = smem_base + s * STAGE_BYTES + A_STAGE_BYTES;
        fence_accumulators(d);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {
            // A, K-major: 16 halves = 32 bytes further along the swizzled 128-byte rows; 8-row groups 1024 B apart
            // (the leading byte offset is unused for swizzled K-major layouts).
            const unsigned long long da = make_desc(a_tile + kk * 32, 16, 1024);
            // B, N-major: 16 K rows of 128 bytes further down each box.
            const unsigned long long db = make_desc(b_tile + kk * 16 * 128, WGMMA_B_LBO, WGMMA_B_SBO);
            wgmma_m64n256k16(d, da, db);
        }
        wgmma_commit();
        // Let this slice's wgmmas run on; the previous slice's are finished after this wait, so its stage is free.
        wgmma_wait<1>();
        fence_accumulators(d);
        if (t > 0 && lane == 0) mbar_arrive(empty0 + 8 * ((t - 1) % STAGES));
    }
    wgmma_wait<0>();
    fence_accumulators(d);

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
