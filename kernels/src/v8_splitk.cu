// v8 split-K: v8-async's cp.async pipeline with the K loop split across gridDim.z blocks per output tile, for
// shapes whose M x N gives too few tiles to fill the GPU (127x127 is one 128x128 tile for 132 SMs) while K is
// large. Block z computes the partial product of its own range of BK-deep K slices and adds it into C with
// float reductions (RED.E.ADD.F32; red.global.add.v4.f32, one per 4 columns, on sm_90), so C must hold zeros
// first: the operation is two launches, splitk_zero_c then sgemm_splitk, timed and profiled together
// (profiling/gpu/runner.py Problem.launcher). The split count is chosen per shape on the host
// (kernels/spec.py KernelSpec.split_count); with one split this is v8-async plus a zeroing pass.
//
// Float addition is not associative and the reductions land in whatever order the blocks finish, so the last
// bits of C may differ between runs (the relative-error check does not care; a bitwise one would).
//
// Any M, N, K >= 1, as v8: cp.async zero-fills what lies outside the matrices, and a K range that ends inside a
// slice is padded with zeros the same way.

#include "cp_async.cuh"

namespace v8s {

using namespace cp_async;  // smem_addr, copy4, copy16, commit, wait<N>

constexpr int APAD = 4;
constexpr int GROUP_M = 8;

// C += v for one float; the result is unused, so this compiles to a reduction (RED), not an atomic round trip.
__device__ __forceinline__ void add1(float* p, float v) { atomicAdd(p, v); }

// C[0..3] += v with one 16-byte reduction where the hardware has it (sm_90), four otherwise; p is 16-byte aligned.
__device__ __forceinline__ void add4(float* p, float4 v)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w)
                 : "memory");
#else
    add1(p, v.x); add1(p + 1, v.y); add1(p + 2, v.z); add1(p + 3, v.w);
#endif
}

}  // namespace v8s

// The first launch of the operation: C = 0, 16-byte stores over the whole of it (cudaMalloc'd C is 256-byte
// aligned), the last count % 4 floats one by one. A kernel rather than cudaMemsetAsync so that ncu's capture of
// the operation shows it as a part.
extern "C" __global__ void splitk_zero_c(float* __restrict__ C, long long count)
{
    const long long vecs = count / 4;
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = first; i < vecs; i += stride) reinterpret_cast<float4*>(C)[i] = make_float4(0.f, 0.f, 0.f, 0.f);
    if (first < count - vecs * 4) C[vecs * 4 + first] = 0.0f;
}

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int THREADS>
__global__ void __launch_bounds__(THREADS, 512 / THREADS)
sgemm_splitk(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K)
{
    constexpr int WARPS_N = BN / WN;
    constexpr int LANES_M = WM / TM;
    constexpr int LANES_N = WN / TN;
    constexpr int FRAG_M = TM / 4;
    constexpr int FRAG_N = TN / 4;
    constexpr int FRAG_STRIDE_M = LANES_M * 4;
    constexpr int FRAG_STRIDE_N = LANES_N * 4;
    constexpr int A_LD = BM + v8s::APAD;
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
    const int group_size = v8s::GROUP_M * grid_n;
    const int first_m = (pid / group_size) * v8s::GROUP_M;
    const int rows_in_group = min(grid_m - first_m, v8s::GROUP_M);
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

    const unsigned smem_base = v8s::smem_addr(smem);

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
                v8s::copy4(as + (unsigned)((a_k + e) * A_LD + row) * 4u, ok ? src + k : A, ok);
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
                v8s::copy16(dst, ok ? src + gb_col : B, ok);
            } else {
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const bool ok = k_in && gb_col + e < N;
                    v8s::copy4(dst + 4u * e, ok ? src + gb_col + e : B, ok);
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

    // This block's K slices: gridDim.z splits of per_split slices each (the host picks gridDim.z so that none
    // is empty; an empty one would add nothing and return).
    const int all_tiles = (K + BK - 1) / BK;
    const int per_split = (all_tiles + gridDim.z - 1) / gridDim.z;
    const int t_first = blockIdx.z * per_split;
    const int k_tiles = min(per_split, all_tiles - t_first);
    if (k_tiles <= 0) return;
    const int k_first = t_first * BK;

    // Prologue: STAGES-1 slices in flight. A group is committed even when empty so that the group count,
    // and with it wait<STAGES-2> below, means the same thing on every iteration.
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < k_tiles) load_tile(s, k_first + s * BK);
        v8s::commit();
    }

    int read_stage = 0;
    int write_stage = STAGES - 1;
    for (int t = 0; t < k_tiles; ++t) {
        // Groups committed so far: STAGES-1+t. Leaving STAGES-2 pending means slice t has landed for this
        // thread; the barrier then makes every thread's part visible, and also guarantees that all warps
        // have finished computing slice t-1, whose buffer (write_stage) is refilled right after.
        v8s::wait<STAGES - 2>();
        __syncthreads();

        const int next = t + STAGES - 1;
        if (next < k_tiles) load_tile(write_stage, k_first + next * BK);
        v8s::commit();

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
    v8s::wait<0>();

    // acc[f*4 + r][g*4 + c] is C row tm0 + f*FRAG_STRIDE_M + r, column tn0 + g*FRAG_STRIDE_N + c: added into C.
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
                v8s::add4(c_row + col,
                          make_float4(acc[i][g * 4 + 0], acc[i][g * 4 + 1], acc[i][g * 4 + 2], acc[i][g * 4 + 3]));
            } else {
#pragma unroll
                for (int c = 0; c < 4; ++c)
                    if (col + c < N) v8s::add1(c_row + col + c, acc[i][g * 4 + c]);
            }
        }
    }
}

// Explicit instantiations of the catalog entry and the tuning configurations, so that an offline nvcc -cubin build
// emits them (NVRTC instantiates what the launcher names and skips this).
#ifndef __CUDACC_RTC__
template __global__ void sgemm_splitk<128,128,16,64,32,8,8,3,256>(const float*, const float*, float*, int, int, int);
// kernels/tuning.py SPLITK_TUNING_CONFIGS (the catalog entry's is the first).
template __global__ void sgemm_splitk<64,64,16,32,32,8,4,3,128>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_splitk<32,32,16,32,32,8,4,2,32>(const float*, const float*, float*, int, int, int);
#endif
