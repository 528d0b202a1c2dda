// wmma-async: the WMMA AddMM (hgemm_wmma.cu) rebuilt for throughput. Same operation and edge rules
// (D = alpha*A*B + beta*C, half A/B row-major, float C/D, M, N, K multiples of 16), different machinery:
// - cp.async multi-stage pipeline (STAGES buffers of 32-deep K slices): copies go global -> shared without
//   registers and STAGES-1 slices are in flight while one is computed; the WMMA kernel loads, waits at a
//   barrier, then computes, with nothing overlapping inside a block.
// - Bigger tiles per warp: 128x256 block tile, 8 warps of 64x64 (WMMA: 32x64), i.e. 4 x 8 mma tiles per
//   warp reusing each A fragment 8 times and each B fragment 4 times, twice the FLOPs per shared-memory byte.
// - ldmatrix-friendly layout: operands are read with ldmatrix.x4 (A) and ldmatrix.x4.trans (B, which is
//   row-major K x N) straight into mma.sync.m16n8k16 fragments. Instead of skew padding, 16-byte chunks are
//   XOR-swizzled (A: chunk ^ ((row >> 1) & 3) within a 64-byte row; B: chunk ^ (row & 7) within each group
//   of 8 chunks), so the 8 row addresses of every ldmatrix phase and every cp.async warp-write hit 8
//   different 16-byte bank groups, with no wasted shared memory.
// - Fragments of the next 16-deep K step are loaded while the current step's 32 mma run.
// - The epilogue applies alpha and beta straight from the accumulator registers (each quad of lanes writes
//   32 contiguous bytes of a row), so no shared-memory staging and no extra barrier.
// - Blocks are visited in groups of 8 block-rows so that co-resident blocks share A and B panels in L2.
// mma.sync is the instruction the WMMA API compiles to on sm_80/sm_90 (HMMA.16816); on Hopper the faster
// wgmma path is out of reach of both. Written as PTX so NVRTC compiles it without toolkit headers; A and B
// arrive as raw IEEE half bit patterns (unsigned short).

namespace mma_async {

constexpr int BK = 32;  // halves per K slice: 64-byte A rows, 4 chunks of 16 bytes
constexpr int WM = 64;
constexpr int WN = 64;
constexpr int GROUP_M = 8;

__device__ __forceinline__ unsigned smem_addr(const void* p)
{
    unsigned r;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
    return r;
}

// src_bytes = 0 zero-fills the 16 bytes without reading; `src` then only needs to be a valid address.
__device__ __forceinline__ void copy16(unsigned dst, const void* src, bool valid)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0));
}

__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

template <int PENDING>
__device__ __forceinline__ void wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory"); }

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], unsigned addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

// d += a * b for one 16x8 tile, K = 16, float accumulation.
__device__ __forceinline__ void mma16816(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Byte offset of 16-byte chunk `c` of row `r` in a swizzled A slice ([BM][BK] halves, 4 chunks per row).
__device__ __forceinline__ unsigned a_offset(int r, int c) { return (unsigned)(r * BK + ((c ^ ((r >> 1) & 3)) << 3)) * 2u; }

// Byte offset of chunk `c` of K row `r` in a swizzled B slice ([BK][BN] halves).
template <int BN>
__device__ __forceinline__ unsigned b_offset(int r, int c) { return (unsigned)(r * BN + ((c ^ (r & 7)) << 3)) * 2u; }

}  // namespace mma_async

template <int BM, int BN, int STAGES>
__global__ void __launch_bounds__((BM / mma_async::WM) * (BN / mma_async::WN) * 32, 1)
hgemm_mma_async(const unsigned short* __restrict__ A, const unsigned short* __restrict__ B,
                const float* __restrict__ C, float* __restrict__ D, int M, int N, int K, float alpha, float beta)
{
    using namespace mma_async;
    constexpr int WARPS_N = BN / WN;
    constexpr int THREADS = (BM / WM) * WARPS_N * 32;
    constexpr int MI = WM / 16;  // mma tiles down a warp tile
    constexpr int NI = WN / 8;   // mma tiles across
    constexpr int A_STAGE_BYTES = BM * BK * 2;
    constexpr int STAGE_BYTES = A_STAGE_BYTES + BK * BN * 2;
    constexpr int A_VECS = BK / 8;  // 16-byte chunks per A row
    constexpr int B_VECS = BN / 8;  // per B row
    constexpr int A_COPIES = BM * A_VECS / THREADS;
    constexpr int B_COPIES = BK * B_VECS / THREADS;
    static_assert(BM % WM == 0 && BN % WN == 0 && BN % 64 == 0, "whole warp tiles; B swizzle groups of 8 chunks");
    static_assert(A_COPIES * THREADS == BM * A_VECS && B_COPIES * THREADS == BK * B_VECS, "copies split evenly");
    static_assert(THREADS % A_VECS == 0 && THREADS % B_VECS == 0, "each thread keeps one chunk column");
    static_assert(STAGES >= 2, "a pipeline needs two buffers");

    extern __shared__ __align__(128) unsigned char smem[];
    const unsigned smem_base = smem_addr(smem);

    const int tid = threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const int wm0 = (warp / WARPS_N) * WM;
    const int wn0 = (warp % WARPS_N) * WN;

    // Grouped block order (grid is (N / BN, M / BM) tiles, blockIdx.x walking columns).
    const int grid_n = gridDim.x;
    const int grid_m = gridDim.y;
    const int pid = blockIdx.y * grid_n + blockIdx.x;
    const int group_size = GROUP_M * grid_n;
    const int first_m = (pid / group_size) * GROUP_M;
    const int rows_in_group = min(grid_m - first_m, GROUP_M);
    const int bm = (first_m + (pid % group_size) % rows_in_group) * BM;
    const int bn = ((pid % group_size) / rows_in_group) * BN;

    // Copy roles: thread tid always copies chunk column a_c of A rows a_r0 + j*A_ROW_STEP and chunk column
    // b_c of B rows b_r0 + j*B_ROW_STEP. A warp writes 512 contiguous bytes of shared memory per copy.
    constexpr int A_ROW_STEP = THREADS / A_VECS;
    constexpr int B_ROW_STEP = THREADS / B_VECS;
    const int a_r0 = tid / A_VECS;
    const int a_c = tid % A_VECS;
    const int b_r0 = tid / B_VECS;
    const int b_c = tid % B_VECS;
    const bool b_col_in = bn + b_c * 8 < N;
    const unsigned short* a_src = A + (size_t)(bm + a_r0) * K + a_c * 8;  // dereferenced only when in bounds
    const unsigned short* b_src = B + (size_t)b_r0 * N + bn + b_c * 8;

    auto load_slice = [&](int stage, int k0) {
        const unsigned as = smem_base + (unsigned)(stage * STAGE_BYTES);
        const unsigned bs = as + A_STAGE_BYTES;
        const bool a_k_in = k0 + a_c * 8 < K;  // K % 16 == 0: an 8-half chunk is wholly in or out
#pragma unroll
        for (int j = 0; j < A_COPIES; ++j) {
            const int r = a_r0 + j * A_ROW_STEP;
            const bool ok = a_k_in && bm + r < M;
            copy16(as + a_offset(r, a_c), ok ? (const void*)(a_src + (size_t)j * A_ROW_STEP * K + k0) : (const void*)A, ok);
        }
#pragma unroll
        for (int j = 0; j < B_COPIES; ++j) {
            const int r = b_r0 + j * B_ROW_STEP;
            const bool ok = b_col_in && k0 + r < K;
            copy16(bs + b_offset<BN>(r, b_c), ok ? (const void*)(b_src + (size_t)(k0 + j * B_ROW_STEP) * N) : (const void*)B, ok);
        }
    };

    // Per-lane ldmatrix addressing. A (x4): lanes 0-15 give rows 0-15 of the 16x16 tile at its first 8-wide
    // K chunk, lanes 16-31 the same rows at the second: registers come back as mma's a0..a3.
    // B (x4.trans): lanes 0-15 give K rows 0-15 at an 8-column chunk, lanes 16-31 the next chunk: registers
    // come back as b0, b1 of two adjacent 8-column mma tiles.
    const int ld_row = lane & 15;
    const int ld_hi = lane >> 4;

    auto load_frags = [&](unsigned (&af)[MI][4], unsigned (&bf)[NI][2], unsigned as, unsigned bs, int kk) {
#pragma unroll
        for (int mi = 0; mi < MI; ++mi) ldmatrix_x4(af[mi], as + a_offset(wm0 + mi * 16 + ld_row, kk * 2 + ld_hi));
#pragma unroll
        for (int p = 0; p < NI / 2; ++p) {
            unsigned r[4];
            ldmatrix_x4_trans(r, bs + b_offset<BN>(kk * 16 + ld_row, (wn0 + p * 16) / 8 + ld_hi));
            bf[2 * p][0] = r[0];
            bf[2 * p][1] = r[1];
            bf[2 * p + 1][0] = r[2];
            bf[2 * p + 1][1] = r[3];
        }
    };

    float acc[MI][NI][4];
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < NI; ++ni)
#pragma unroll
            for (int t = 0; t < 4; ++t) acc[mi][ni][t] = 0.0f;

    const int k_tiles = (K + BK - 1) / BK;

    // Empty groups are committed too, so that wait<STAGES-2> means "slice t has landed" on every iteration.
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < k_tiles) load_slice(s, s * BK);
        commit();
    }

    int read_stage = 0;
    int write_stage = STAGES - 1;
    for (int t = 0; t < k_tiles; ++t) {
        wait<STAGES - 2>();
        // Makes every thread's copies of slice t visible, and proves all warps are done with slice t-1,
        // whose buffer is refilled next.
        __syncthreads();

        const int next = t + STAGES - 1;
        if (next < k_tiles) load_slice(write_stage, next * BK);
        commit();

        const unsigned as = smem_base + (unsigned)(read_stage * STAGE_BYTES);
        const unsigned bs = as + A_STAGE_BYTES;
        unsigned af[2][MI][4];
        unsigned bf[2][NI][2];
        load_frags(af[0], bf[0], as, bs, 0);
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {
            if (kk + 1 < BK / 16) load_frags(af[(kk + 1) & 1], bf[(kk + 1) & 1], as, bs, kk + 1);
#pragma unroll
            for (int mi = 0; mi < MI; ++mi)
#pragma unroll
                for (int ni = 0; ni < NI; ++ni) mma16816(acc[mi][ni], af[kk & 1][mi], bf[kk & 1][ni][0], bf[kk & 1][ni][1]);
        }

        read_stage = (read_stage + 1 == STAGES) ? 0 : read_stage + 1;
        write_stage = (write_stage + 1 == STAGES) ? 0 : write_stage + 1;
    }
    wait<0>();

    // Accumulator layout of m16n8: lane holds (row lane/4, columns 2*(lane%4) + {0,1}) in d0, d1 and the
    // same columns 8 rows lower in d2, d3. N % 16 == 0 keeps each column pair wholly in or out.
    const bool use_c = beta != 0.0f;
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int row = bm + wm0 + mi * 16 + (lane >> 2) + half * 8;
            if (row >= M) continue;
#pragma unroll
            for (int ni = 0; ni < NI; ++ni) {
                const int col = bn + wn0 + ni * 8 + (lane & 3) * 2;
                if (col >= N) continue;
                float2 v = make_float2(alpha * acc[mi][ni][half * 2], alpha * acc[mi][ni][half * 2 + 1]);
                if (use_c) {
                    const float2 c = *reinterpret_cast<const float2*>(C + (size_t)row * N + col);
                    v.x = fmaf(beta, c.x, v.x);
                    v.y = fmaf(beta, c.y, v.y);
                }
                *reinterpret_cast<float2*>(D + (size_t)row * N + col) = v;
            }
        }
    }
}

// Explicit instantiation for offline nvcc -cubin builds (NVRTC instantiates through name expressions).
#ifndef __CUDACC_RTC__
template __global__ void hgemm_mma_async<128,256,4>(const unsigned short*, const unsigned short*, const float*, float*,
                                                    int, int, int, float, float);
#endif
