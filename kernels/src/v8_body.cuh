// The body of the v8 kernels (sgemm_async in v8_async.cu, sgemm_splitk in v8_splitk.cu): v7's warp-tiled compute
// fed by cp.async through STAGES shared-memory buffers, with every tile size a template parameter. What differs
// between the kernels is a policy type:
//   template <int BK> static bool slices(int K, int& first, int& count)  this block's K slices (first slice, how
//       many); false when it has none (it then returns without touching C)
//   static void store4(float* p, float4 v)                   what the epilogue does with 4 finished accumulators
//       (p 16-byte aligned) and with one, at row[col + c]: store them into C (v8-async) or add them to C
//   static void store1(float* row, int col, int c, float v)  (v8-splitk). store1 gets the parts of the address
//       because the kernels form it differently (row[col + c], row + col + c) and ptxas gives each its own code.
// The body is inlined into each __global__ kernel, so each keeps its name, its launch bounds and its machine
// code (scripts/sass_identity.py compared them instruction by instruction with the copies they replaced).
//
// kernels/sources.py inlines this file (and cp_async.cuh, which it includes) where a kernel includes it.
#pragma once

#include "cp_async.cuh"

namespace v8 {

using namespace cp_async;  // smem_addr, copy4, copy16, commit, wait<N>

// Rows of the transposed A tile are padded by 4 floats: with BK = 8 the two half-warps that copy k and
// k+4 land 16 banks apart, and rows stay 16-byte aligned for LDS.128.
constexpr int APAD = 4;
constexpr int GROUP_M = 8;

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int THREADS, class Policy>
__device__ __forceinline__ void sgemm_body(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                           int M, int N, int K)
{
    constexpr int WARPS_N = BN / WN;
    constexpr int LANES_M = WM / TM;
    constexpr int LANES_N = WN / TN;
    constexpr int FRAG_M = TM / 4;
    constexpr int FRAG_N = TN / 4;
    constexpr int FRAG_STRIDE_M = LANES_M * 4;
    constexpr int FRAG_STRIDE_N = LANES_N * 4;
    constexpr int A_LD = BM + APAD;
    constexpr int A_STAGE = BK * A_LD;
    constexpr int STAGE_FLOATS = A_STAGE + BK * BN;
    constexpr int KQ = BK / 4;                           // 4-wide K groups per A row
    constexpr int A_UNITS = BM * KQ / THREADS;           // (row, 4 k) groups per thread
    constexpr int A_ROWS_PER_PASS = THREADS / KQ;
    constexpr int B_VECS_PER_ROW = BN / 4;
    constexpr int B_UNITS = BK * B_VECS_PER_ROW / THREADS;  // float4 slots per thread
    constexpr int B_ROWS_PER_PASS = THREADS / B_VECS_PER_ROW;

    static_assert(THREADS % 32 == 0 && THREADS <= 512, "whole warps, at least one block of 512 per SM");
    static_assert((BM / WM) * (BN / WN) * 32 == THREADS, "one warp per warp tile");
    static_assert(LANES_M * LANES_N == 32, "a warp tile is covered by exactly 32 lanes");
    static_assert(TM % 4 == 0 && TN % 4 == 0 && WM % TM == 0 && WN % TN == 0, "4x4 fragments");
    static_assert(BK % 4 == 0 && (BM * KQ) % THREADS == 0 && THREADS % KQ == 0, "A copy units divide evenly");
    static_assert((BK * B_VECS_PER_ROW) % THREADS == 0 && THREADS % B_VECS_PER_ROW == 0, "B copy units divide evenly");
    static_assert(STAGES >= 2, "a pipeline needs two buffers");

    extern __shared__ __align__(16) float smem[];

    const int tid = threadIdx.x;

    // Grouped block order: consecutive block ids cover GROUP_M block-rows before moving right.
    const int grid_n = gridDim.x;
    const int grid_m = gridDim.y;
    const int pid = blockIdx.y * grid_n + blockIdx.x;
    const int group_size = GROUP_M * grid_n;
    const int first_m = (pid / group_size) * GROUP_M;
    const int rows_in_group = min(grid_m - first_m, GROUP_M);
    const int bm = (first_m + (pid % group_size) % rows_in_group) * BM;
    const int bn = ((pid % group_size) / rows_in_group) * BN;

    // A copy role: unit u = tid + j*THREADS is row u / KQ, K group u % KQ (a warp copies 32 / KQ whole
    // row segments of BK floats, so each instruction touches few sectors and neighbouring k share them).
    const int a_row0 = tid / KQ;
    const int a_k = (tid % KQ) * 4;
    // B copy role: unit u is K row u / (BN/4), columns (u % (BN/4)) * 4 .. +3.
    const int b_row0 = tid / B_VECS_PER_ROW;
    const int b_col = (tid % B_VECS_PER_ROW) * 4;
    const int gb_col = bn + b_col;
    const bool b_vec = (N & 3) == 0;

    const unsigned smem_base = smem_addr(smem);

    auto load_tile = [&](int stage, int k0) {
        const unsigned as = smem_base + (unsigned)(stage * STAGE_FLOATS) * 4u;
        const unsigned bs = as + (unsigned)A_STAGE * 4u;
#pragma unroll
        for (int j = 0; j < A_UNITS; ++j) {
            const int row = a_row0 + j * A_ROWS_PER_PASS;
            const int grow = bm + row;
            const bool row_in = grow < M;
            const float* src = A + (size_t)(row_in ? grow : 0) * K;
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int k = k0 + a_k + e;
                const bool ok = row_in && k < K;
                copy4(as + (unsigned)((a_k + e) * A_LD + row) * 4u, ok ? src + k : A, ok);
            }
        }
#pragma unroll
        for (int j = 0; j < B_UNITS; ++j) {
            const int row = b_row0 + j * B_ROWS_PER_PASS;
            const int k = k0 + row;
            const bool k_in = k < K;
            const float* src = B + (size_t)(k_in ? k : 0) * N;
            const unsigned dst = bs + (unsigned)(row * BN + b_col) * 4u;
            if (b_vec) {
                const bool ok = k_in && gb_col < N;
                copy16(dst, ok ? src + gb_col : B, ok);
            } else {
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const bool ok = k_in && gb_col + e < N;
                    copy4(dst + 4u * e, ok ? src + gb_col + e : B, ok);
                }
            }
        }
    };

    const int warp = tid >> 5;
    const int lane = tid & 31;
    const int tm0 = (warp / WARPS_N) * WM + (lane / LANES_N) * 4;
    const int tn0 = (warp % WARPS_N) * WN + (lane % LANES_N) * 4;

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

    // This block's K slices (Policy::slices; false: none, the block adds nothing).
    int t_first, k_tiles;
    if (!Policy::template slices<BK>(K, t_first, k_tiles)) return;
    const int k_first = t_first * BK;

    // Prologue: STAGES-1 slices in flight. A group is committed even when empty so that the group count,
    // and with it wait<STAGES-2> below, means the same thing on every iteration.
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < k_tiles) load_tile(s, k_first + s * BK);
        commit();
    }

    int read_stage = 0;
    int write_stage = STAGES - 1;
    for (int t = 0; t < k_tiles; ++t) {
        // Groups committed so far: STAGES-1+t. Leaving STAGES-2 pending means slice t has landed for this
        // thread; the barrier then makes every thread's part visible, and also guarantees that all warps
        // have finished computing slice t-1, whose buffer (write_stage) is refilled right after.
        wait<STAGES - 2>();
        __syncthreads();

        const int next = t + STAGES - 1;
        if (next < k_tiles) load_tile(write_stage, k_first + next * BK);
        commit();

        const float* As = smem + read_stage * STAGE_FLOATS;
        const float* Bs = As + A_STAGE;
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[TM], b[TN];
#pragma unroll
            for (int f = 0; f < FRAG_M; ++f) {
                const float4 v = *reinterpret_cast<const float4*>(As + k * A_LD + tm0 + f * FRAG_STRIDE_M);
                a[f * 4 + 0] = v.x; a[f * 4 + 1] = v.y; a[f * 4 + 2] = v.z; a[f * 4 + 3] = v.w;
            }
#pragma unroll
            for (int f = 0; f < FRAG_N; ++f) {
                const float4 v = *reinterpret_cast<const float4*>(Bs + k * BN + tn0 + f * FRAG_STRIDE_N);
                b[f * 4 + 0] = v.x; b[f * 4 + 1] = v.y; b[f * 4 + 2] = v.z; b[f * 4 + 3] = v.w;
            }
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }

        read_stage = (read_stage + 1 == STAGES) ? 0 : read_stage + 1;
        write_stage = (write_stage + 1 == STAGES) ? 0 : write_stage + 1;
    }
    // Only empty groups can still be pending here; draining them keeps the exit free of in-flight copies.
    wait<0>();

    // acc[f*4 + r][g*4 + c] is C row tm0 + f*FRAG_STRIDE_M + r, column tn0 + g*FRAG_STRIDE_N + c: handed to the
    // policy's store4 (16-byte aligned) or store1.
    const bool c_vec = (N & 3) == 0;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = bm + tm0 + (i / 4) * FRAG_STRIDE_M + (i % 4);
        if (row >= M) continue;
        float* c_row = C + (size_t)row * N;
#pragma unroll
        for (int g = 0; g < FRAG_N; ++g) {
            const int col = bn + tn0 + g * FRAG_STRIDE_N;
            if (c_vec && col < N) {
                Policy::store4(c_row + col,
                               make_float4(acc[i][g * 4 + 0], acc[i][g * 4 + 1], acc[i][g * 4 + 2], acc[i][g * 4 + 3]));
            } else {
#pragma unroll
                for (int c = 0; c < 4; ++c)
                    if (col + c < N) Policy::store1(c_row, col, c, acc[i][g * 4 + c]);
            }
        }
    }
}

}  // namespace v8
