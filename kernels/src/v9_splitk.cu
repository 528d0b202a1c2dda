// v9 split-K: v9-regdb's register-double-buffered body (v9_body.cuh) with the K loop split across gridDim.z blocks
// per output tile, for shapes whose M x N gives too few tiles to fill the GPU while K is deep (1024x1024 is 32 of
// v9's 128x256 tiles for 132 SMs; 127x127 is one). Block z multiplies its own range of BK-deep K slices and adds
// its partial tile into C with float reductions (red.global.add.v4.f32 on sm_90), so C must hold zeros first:
// the operation is two launches, splitk_zero_c then sgemm_regdb_splitk, timed and profiled together, as
// v8-splitk's (the serial kernels below need no zeroing launch). The split count is chosen per shape on the host
// (kernels/spec.py KernelSpec.split_count).
//
// Float addition is not associative and the reductions land in whatever order the blocks finish, so the last
// bits of C may differ between runs.
//
// Any M, N, K >= 1, as v9: cp.async zero-fills what lies outside the matrices, and a K range that ends inside a
// slice is padded with zeros the same way.

// Every launch of these operations waits for the launch before it in its own code (kernels/src/pdl.cuh), so the runner
// makes the launches after an operation's first programmatic dependent launches on sm_90 (kernels/spec.py
// PROGRAMMATIC_SOURCES): the next launch is scheduled while the one before drains. GEMMLENS_PDL=0 builds without.
#ifndef GEMMLENS_PDL
#define GEMMLENS_PDL 1
#endif

#include "splitk_zero.cuh"
#include "v9_body.cuh"

// ORDER is v9's FFMA order (v9_regdb.cu); every tile size is a template argument (kernels/tuning.py
// V9_SPLITK_TUNING_CONFIGS).
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int THREADS, int MIN_BLOCKS,
          int ORDER = 0>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
sgemm_regdb_splitk(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N,
                   int K)
{
    static_assert(THREADS * MIN_BLOCKS <= 2048, "MIN_BLOCKS blocks must fit one SM's 2048 threads");
    extern __shared__ __align__(16) float smem[];
    if ((N & 3) == 0)
        regdb_body<true, BM, BN, BK, WM, WN, TM, TN, STAGES, THREADS, ORDER, true>(A, B, C, M, N, K, smem);
    else
        regdb_body<false, BM, BN, BK, WM, WN, TM, TN, STAGES, THREADS, ORDER, true>(A, B, C, M, N, K, smem);
}

// The kernel the host launches where N % 4 != 0 (KernelSpec.narrow_entry), as v9_regdb.cu's sgemm_regdb_narrow:
// B copied one column per thread, partial tiles added in the widest reductions each address allows.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int THREADS, int MIN_BLOCKS,
          int ORDER>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
sgemm_regdb_splitk_narrow(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M,
                          int N, int K)
{
    static_assert(THREADS * MIN_BLOCKS <= 2048, "MIN_BLOCKS blocks must fit one SM's 2048 threads");
    extern __shared__ __align__(16) float smem[];
    regdb_body<false, BM, BN, BK, WM, WN, TM, TN, STAGES, THREADS, ORDER, true, 0, true>(A, B, C, M, N, K, smem);
}

// Padded operations (KernelSpec.pads_n), for N % 4 != 0: B's and C's rows are then 4-byte aligned only, and the
// narrow kernels' 4-byte copies of B and reductions into C make them 12-26 % slower at deep K (4096x127x8191 and
// 333x127x8191 against N = 128 on an H200). The operation instead runs the 16-byte kernel at N rounded up to a
// multiple of 4 (n4) on copies of B and C with rows of n4 floats: splitk_zero_c_pad_b writes those copies (C's zeros,
// B's columns then zeros), the kernel multiplies, and splitk_unpad_c copies C's first N columns back. The padded-B
// operations (KernelSpec.pads_c false) copy B alone: splitk_zero_c_pad_b zeroes C itself and writes B's copy, and the
// padded-B kernel adds into C where it lies, with no copy back.
// Threads `first`, `first` + `stride`, ... of splitk_zero_c_pad_b's work: count floats of Cp zeroed (C's copy,
// M x n4, or C itself, M x N) as zero_c_part does, then B's copy written, a 4-column group a thread. IN_FLIGHT > 1:
// each thread loads IN_FLIGHT groups of B of its grid-stride run before it stores them (as unpad_c_part).
template <int IN_FLIGHT = 1>
__device__ __forceinline__ void zero_c_pad_b_part(float* __restrict__ Cp, long long count, const float* __restrict__ B,
                                                  float* __restrict__ Bp, int K, int N, long long first,
                                                  long long stride)
{
    const long long c_vecs = count / 4;
    const int row_vecs = (N + 3) / 4;
    const long long all = c_vecs + (long long)K * row_vecs;
    // IN_FLIGHT > 1 where every index a thread reaches fits 32 bits, with 32-bit index arithmetic (64-bit divisions
    // cost as much as the copy).
    if (IN_FLIGHT > 1 && all + stride * IN_FLIGHT <= 0x7fffffffLL) {
        const int c_groups = (int)c_vecs;
        const int groups = (int)all;
        const int step = (int)stride;
        for (int base = (int)first; base < groups; base += step * IN_FLIGHT) {
            float4 v[IN_FLIGHT];
#pragma unroll
            for (int u = 0; u < IN_FLIGHT; ++u) {
                const long long i = base + (long long)u * step;
                const int g = (int)min(max(i - c_groups, 0LL), (long long)groups - c_groups - 1);  // B's group
                const int row = g / row_vecs;
                const int col = (g - row * row_vecs) * 4;
                const float* src = B + (long long)row * N + col;
                const bool in_b = i >= c_groups && i < groups;
                v[u] = make_float4(in_b ? src[0] : 0.f, in_b && col + 1 < N ? src[1] : 0.f,
                                   in_b && col + 2 < N ? src[2] : 0.f, in_b && col + 3 < N ? src[3] : 0.f);
            }
#pragma unroll
            for (int u = 0; u < IN_FLIGHT; ++u) {
                const long long i = base + (long long)u * step;
                if (i < c_groups)
                    reinterpret_cast<float4*>(Cp)[i] = make_float4(0.f, 0.f, 0.f, 0.f);
                else if (i < groups)
                    reinterpret_cast<float4*>(Bp)[i - c_groups] = v[u];
            }
        }
    } else {
        for (long long i = first; i < all; i += stride) {
            if (i < c_vecs) {
                reinterpret_cast<float4*>(Cp)[i] = make_float4(0.f, 0.f, 0.f, 0.f);
                continue;
            }
            const long long v = i - c_vecs;
            const long long row = v / row_vecs;
            const int col = (int)(v - row * row_vecs) * 4;
            const float* src = B + row * N + col;
            reinterpret_cast<float4*>(Bp)[v] = make_float4(src[0], col + 1 < N ? src[1] : 0.f,
                                                           col + 2 < N ? src[2] : 0.f, col + 3 < N ? src[3] : 0.f);
        }
    }
    if (first < count - c_vecs * 4) Cp[c_vecs * 4 + first] = 0.0f;
}

extern "C" __global__ void splitk_zero_c_pad_b(float* __restrict__ Cp, long long count, const float* __restrict__ B,
                                               float* __restrict__ Bp, int K, int N)
{
    pdl_enter();
    zero_c_pad_b_part(Cp, count, B, Bp, K, N, (long long)blockIdx.x * blockDim.x + threadIdx.x,
                      (long long)gridDim.x * blockDim.x);
}

// One float per thread where the grid allows (the host launches unpad_blocks: a thread's loads do not wait on each
// other's), and 32-bit index arithmetic below 2^31 floats: a grid-stride loop of 64-bit divisions, 4 floats a
// thread, took 4.0-4.6 us at 127x127 and 333x127 on an H100, against 2.4-2.9 us for a zeroing launch beside the
// same multiply.
// The copy of splitk_unpad_c, by this launch's threads over a grid-stride loop. L2_ONLY: Cp read past the L1
// (ld.global.cg), for a copy in the launch that wrote Cp (sgemm_regdb_streamk_fused), whose L1 may still hold lines of
// Cp from before the other blocks' additions. IN_FLIGHT > 1: each thread loads IN_FLIGHT floats of its grid-stride
// run before it stores them, for a grid of one block per SM (the fused kernel's), whose threads would otherwise wait
// on L2 once per float.
template <bool L2_ONLY, int IN_FLIGHT = 1>
__device__ __forceinline__ void unpad_c_part(const float* __restrict__ Cp, float* __restrict__ C, int M, int N)
{
    const int n4 = (N + 3) & ~3;
    const long long count = (long long)M * N;
    const long long stride = (long long)gridDim.x * blockDim.x;
    // IN_FLIGHT > 1 where every index a thread reaches fits 32 bits, with 32-bit index arithmetic as below.
    if (IN_FLIGHT > 1 && count + stride * IN_FLIGHT <= 0x7fffffffLL) {
        const int total = (int)count;
        const int step = (int)stride;
        for (int base = blockIdx.x * blockDim.x + threadIdx.x; base < total; base += step * IN_FLIGHT) {
            float v[IN_FLIGHT];
#pragma unroll
            for (int u = 0; u < IN_FLIGHT; ++u) {
                const int j = (int)min(base + (long long)u * step, (long long)total - 1);
                const int row = j / N;
                const float* src = Cp + ((long long)row * n4 + (j - row * N));
                v[u] = L2_ONLY ? __ldcg(src) : *src;
            }
#pragma unroll
            for (int u = 0; u < IN_FLIGHT; ++u)
                if (base + (long long)u * step < total) C[base + u * step] = v[u];
        }
    } else {
        for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
            if (count <= 0x7fffffffLL) {
                const int j = (int)i;
                const int row = j / N;
                const float* src = Cp + ((long long)row * n4 + (j - row * N));
                C[j] = L2_ONLY ? __ldcg(src) : *src;
            } else {
                const long long row = i / N;
                const float* src = Cp + (row * n4 + (i - row * N));
                C[i] = L2_ONLY ? __ldcg(src) : *src;
            }
        }
    }
}

extern "C" __global__ void splitk_unpad_c(const float* __restrict__ Cp, float* __restrict__ C, int M, int N)
{
    pdl_enter();
    unpad_c_part<false>(Cp, C, M, N);
}

// streamk_run's after_segment is called by every thread with the segment's tile and slice count, once the segment's
// additions are issued and the block has passed a barrier (the tile-copy kernel copies a tile it completed); by
// default it does nothing.
struct NoSegmentHook {
    __device__ __forceinline__ void operator()(int, int) const {}
};

// Stream-K: the launch is one wave of gridDim.x blocks, and the grid_m x grid_n tiles' K slices, laid end to end
// tile after tile, are cut into gridDim.x equal runs, one per block. A block's run covers the end of one tile, any
// whole tiles, and the start of another; it multiplies each piece as one segment and adds that partial tile into
// C (zeroed first, as for the splits above). Where tiles x splits would leave part of a wave idle (48 tiles of
// 128x256 at 333x4096 fill 96 or 144 of 132 SMs), every SM gets the same number of slices.
template <bool VEC, int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int THREADS, int ORDER,
          bool NARROW, bool PAD_C = false, bool PAD_B = false, typename AfterSegment = NoSegmentHook>
__device__ __forceinline__ void streamk_run(const float* __restrict__ A, const float* __restrict__ B,
                                            float* __restrict__ C, int M, int N, int K, float* smem,
                                            AfterSegment after_segment = {})
{
    const int grid_m = (M + BM - 1) / BM;
    const int grid_n = (N + BN - 1) / BN;
    const int slices = (K + BK - 1) / BK;
    // tiles x slices < 2^31: KernelSpec.size_problem refuses larger launches (STREAM_K_MAX_SLICES in kernels/spec.py).
#if V9_SK_HYBRID
    // V9_SK_HYBRID=1 (measurement, scripts/pdl_probe.py --builds hybrid): the whole waves of tiles first, one tile a
    // block as v9-regdb runs them (consecutive blocks on consecutive tiles of the grouped order, each stored whole),
    // and stream-K only over the tiles of the last, partial wave. At 8192^3 the 128x256 tile's 2,048 tiles are 15.5
    // waves of 132: v9-regdb's last wave leaves 64 SMs idle for a tile's time, and pure stream-K has each block's
    // 15.5 tiles spread over the grid at once (block b on tiles 15.5 b on), not in grouped order. One call of the
    // body for both kinds of segment: a second would share its registers with the loop (as above). Measured, dropped
    // (H200, results/h200-2026-12-01/skhybrid/): the 128x256 tile 4.4-4.8 % slower than as built at 2048-8192^3,
    // even at 2048^3 where its segments are the same; the 256x128 tile 0.7 % faster at 8192^3 (96.1 % of cuBLAS),
    // still under v9-regdb's 97.3 %.
    const int dp_tiles = grid_m * grid_n / (int)gridDim.x * (int)gridDim.x;
    int dp_next = blockIdx.x;
    const long long first = (long long)dp_tiles * slices;
    const long long total = (long long)grid_m * grid_n * slices - first;
    int it = (int)(first + total * blockIdx.x / gridDim.x);
    const int end = (int)(first + total * (blockIdx.x + 1) / gridDim.x);
    while (dp_next < dp_tiles || it < end) {
        int tile, k_first, k_tiles;
        if (dp_next < dp_tiles) {
            tile = dp_next;
            k_first = 0;
            k_tiles = slices;
            dp_next += gridDim.x;
        } else {
            tile = it / slices;
            k_first = it - tile * slices;
            k_tiles = min(slices - k_first, end - it);
            it += k_tiles;
        }
        regdb_body<VEC, BM, BN, BK, WM, WN, TM, TN, STAGES, THREADS, ORDER, true, 0, NARROW, true, PAD_C, false, false,
                   PAD_B>(A, B, C, M, N, K, smem, v9::Segment{tile, grid_m, grid_n, k_first, k_tiles});
        __syncthreads();
        after_segment(tile, k_tiles);
    }
#else
    const long long total = (long long)grid_m * grid_n * slices;
    int it = (int)(total * blockIdx.x / gridDim.x);
    const int end = (int)(total * (blockIdx.x + 1) / gridDim.x);
    while (it < end) {
        const int tile = it / slices;
        const int k_first = it - tile * slices;
        const int k_tiles = min(slices - k_first, end - it);
        regdb_body<VEC, BM, BN, BK, WM, WN, TM, TN, STAGES, THREADS, ORDER, true, 0, NARROW, true, PAD_C, false, false,
                   PAD_B>(A, B, C, M, N, K, smem, v9::Segment{tile, grid_m, grid_n, k_first, k_tiles});
        it += k_tiles;
        // Every warp has read its last fragments of this segment before the next one's prologue refills the stages.
        __syncthreads();
        after_segment(tile, k_tiles);
    }
#endif
}

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int THREADS, int MIN_BLOCKS,
          int ORDER = 0>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
sgemm_regdb_streamk(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N,
                    int K)
{
    static_assert(THREADS * MIN_BLOCKS <= 2048, "MIN_BLOCKS blocks must fit one SM's 2048 threads");
    extern __shared__ __align__(16) float smem[];
    // Only the 16-byte body: the host launches sgemm_regdb_streamk_narrow where N % 4 != 0 (KernelSpec.launched_at),
    // and a second body in this function would share its registers with the segment loop (256x128 then spills).
    if ((N & 3) == 0)
        streamk_run<true, BM, BN, BK, WM, WN, TM, TN, STAGES, THREADS, ORDER, false>(A, B, C, M, N, K, smem);
}

// Its N % 4 != 0 kernel, as sgemm_regdb_splitk_narrow.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int THREADS, int MIN_BLOCKS,
          int ORDER>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
sgemm_regdb_streamk_narrow(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M,
                           int N, int K)
{
    static_assert(THREADS * MIN_BLOCKS <= 2048, "MIN_BLOCKS blocks must fit one SM's 2048 threads");
    extern __shared__ __align__(16) float smem[];
    streamk_run<false, BM, BN, BK, WM, WN, TM, TN, STAGES, THREADS, ORDER, true>(A, B, C, M, N, K, smem);
}

// The padded-C kernels (KernelSpec.pads_n without pads_b, ids ending -padc), launched where N % 4 != 0 between
// splitk_zero_c on C's copy and splitk_unpad_c: B is copied one column per thread as by the narrow kernels, and
// each partial tile is added into C's copy, whose rows are N rounded up to a multiple of 4 floats, in 16-byte
// reductions. At deep K, B is the large operand and C the small one, so only C is copied. The copy back stays a
// launch of its own: kernels whose block completing a tile copied it into C (a slice counter per tile) were 20-30
// points of cuBLAS slower at 333x127x8191 and 127x127x8191, where each of a handful of tiles is copied by one block
// after all the others have finished.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int THREADS, int MIN_BLOCKS,
          int ORDER>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
sgemm_regdb_splitk_padc(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M,
                        int N, int K)
{
    static_assert(THREADS * MIN_BLOCKS <= 2048, "MIN_BLOCKS blocks must fit one SM's 2048 threads");
    extern __shared__ __align__(16) float smem[];
    regdb_body<false, BM, BN, BK, WM, WN, TM, TN, STAGES, THREADS, ORDER, true, 0, true, false, true>(A, B, C, M, N,
                                                                                                    K, smem);
}

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int THREADS, int MIN_BLOCKS,
          int ORDER>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
sgemm_regdb_streamk_padc(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M,
                         int N, int K)
{
    static_assert(THREADS * MIN_BLOCKS <= 2048, "MIN_BLOCKS blocks must fit one SM's 2048 threads");
    extern __shared__ __align__(16) float smem[];
    streamk_run<false, BM, BN, BK, WM, WN, TM, TN, STAGES, THREADS, ORDER, true, true>(A, B, C, M, N, K, smem);
}

// The padded-B kernels (KernelSpec.pads_b without pads_c, ids ending -padb), launched where N % 4 != 0 after
// splitk_zero_c_pad_b has zeroed C and written B's copy (rows of N rounded up to a multiple of 4 floats): B is read
// from the copy in 16-byte pieces, as by the 16-byte kernel, and each partial tile is added into C where it lies in
// the widest reductions each address allows, as by the narrow kernels, so nothing is copied back. At 4096x127x4096
// on an H200 the padded 256x128 stream-K operation's copy back took 7.3 of its 110.6 us
// (results/h200-2026-11-30/padlaunch/); this kernel's multiply took 112.1 us alone against 101.3 for the 16-byte
// kernel's reductions into C's copy, so it is the slower operation there (padbalone/; kernels/tuning.py says where it
// is kept).
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int THREADS, int MIN_BLOCKS,
          int ORDER>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
sgemm_regdb_streamk_padb(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M,
                         int N, int K)
{
    static_assert(THREADS * MIN_BLOCKS <= 2048, "MIN_BLOCKS blocks must fit one SM's 2048 threads");
    extern __shared__ __align__(16) float smem[];
    streamk_run<true, BM, BN, BK, WM, WN, TM, TN, STAGES, THREADS, ORDER, false, false, true>(A, B, C, M, N, K, smem);
}

// Serial splits (params["SERIAL"], ids ending -ser): one launch instead of two. Split 0 of each tile stores its
// partial tile, and the other splits add theirs only after it has (a count per tile in this module, acquired and
// released at GPU scope), so C needs no zeroing launch: at 333x127x4096 on an H100 that launch added 2.9 us to a
// 24 us multiply. A waiting block never holds up split 0: blocks are dispatched in order of their index, z last, so
// every split-0 block has started before any block of another split. The last split of a tile to arrive resets
// its count, so the counts are zero at every launch; they are this module's, so two serial launches of one module
// must not run at the same time (the worker runs one at a time). At most SERIAL_MAX_TILES tiles a launch
// (KernelSpec.size_problem refuses more). They win where a tile has a few splits (333x4096x333, 2 a tile: 32.3 us
// against 37.3 on an H100) and lose where a handful of tiles has dozens each, whose additions then wait for split 0
// and land on the same few tiles at once (333x127x4096, 12 tiles of 32 splits: 30.8 against 26.9 us;
// results/h100-2026-11-28/serial/launch_probe.md).
constexpr int SERIAL_MAX_TILES = 16384;
__device__ unsigned serial_tile_arrivals[SERIAL_MAX_TILES];

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int THREADS, int MIN_BLOCKS,
          int ORDER = 0>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
sgemm_regdb_splitk_serial(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M,
                          int N, int K)
{
    static_assert(THREADS * MIN_BLOCKS <= 2048, "MIN_BLOCKS blocks must fit one SM's 2048 threads");
    extern __shared__ __align__(16) float smem[];
    // Only the 16-byte body, as sgemm_regdb_streamk: the host launches the _narrow twin where N % 4 != 0.
    if ((N & 3) == 0)
        regdb_body<true, BM, BN, BK, WM, WN, TM, TN, STAGES, THREADS, ORDER, true, 0, false, false, false, true>(
            A, B, C, M, N, K, smem, {}, serial_tile_arrivals);
}

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int THREADS, int MIN_BLOCKS,
          int ORDER>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
sgemm_regdb_splitk_serial_narrow(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                 int M, int N, int K)
{
    static_assert(THREADS * MIN_BLOCKS <= 2048, "MIN_BLOCKS blocks must fit one SM's 2048 threads");
    extern __shared__ __align__(16) float smem[];
    regdb_body<false, BM, BN, BK, WM, WN, TM, TN, STAGES, THREADS, ORDER, true, 0, true, false, false, true>(
        A, B, C, M, N, K, smem, {}, serial_tile_arrivals);
}

// Serial splits whose split 0 zeroes its tile of C before its main loop (params["ZERO_FIRST"], ids ending -zf):
// no zeroing launch, and every split adds as in sgemm_regdb_splitk, so none waits behind split 0's additions (the
// serial kernels above lose where a handful of tiles has dozens of splits: 333x127x4096, 6 tiles of 22 splits on an
// H200, 78.5 % of cuBLAS against 86.6 % with the zeroing launch; results/h200-2026-11-29/grid_serial/).
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int THREADS, int MIN_BLOCKS,
          int ORDER = 0>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
sgemm_regdb_splitk_zfirst(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M,
                          int N, int K)
{
    static_assert(THREADS * MIN_BLOCKS <= 2048, "MIN_BLOCKS blocks must fit one SM's 2048 threads");
    extern __shared__ __align__(16) float smem[];
    if ((N & 3) == 0)
        regdb_body<true, BM, BN, BK, WM, WN, TM, TN, STAGES, THREADS, ORDER, true, 0, false, false, false, true, true>(
            A, B, C, M, N, K, smem, {}, serial_tile_arrivals);
}

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int THREADS, int MIN_BLOCKS,
          int ORDER>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
sgemm_regdb_splitk_zfirst_narrow(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                 int M, int N, int K)
{
    static_assert(THREADS * MIN_BLOCKS <= 2048, "MIN_BLOCKS blocks must fit one SM's 2048 threads");
    extern __shared__ __align__(16) float smem[];
    regdb_body<false, BM, BN, BK, WM, WN, TM, TN, STAGES, THREADS, ORDER, true, 0, true, false, false, true, true>(
        A, B, C, M, N, K, smem, {}, serial_tile_arrivals);
}

// Padded C (as sgemm_regdb_splitk_padc) with serial splits: split 0 stores into C's copy, so the operation is the
// multiply and splitk_unpad_c.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int THREADS, int MIN_BLOCKS,
          int ORDER>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
sgemm_regdb_splitk_serial_padc(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                               int M, int N, int K)
{
    static_assert(THREADS * MIN_BLOCKS <= 2048, "MIN_BLOCKS blocks must fit one SM's 2048 threads");
    extern __shared__ __align__(16) float smem[];
    regdb_body<false, BM, BN, BK, WM, WN, TM, TN, STAGES, THREADS, ORDER, true, 0, true, false, true, true>(
        A, B, C, M, N, K, smem, {}, serial_tile_arrivals);
}

// Padded C with zero-first splits: split 0 zeroes its tile of C's copy, padding columns included, so the operation
// is the multiply and splitk_unpad_c, with no zeroing launch before them. In 30 interleaved rounds with their twins on
// an H200 they were no faster (127x127x8191: 93.0-93.5 % of cuBLAS both ways; results/h200-2026-11-30/ab_zfpadc/).
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int THREADS, int MIN_BLOCKS,
          int ORDER>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
sgemm_regdb_splitk_zfirst_padc(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                               int M, int N, int K)
{
    static_assert(THREADS * MIN_BLOCKS <= 2048, "MIN_BLOCKS blocks must fit one SM's 2048 threads");
    extern __shared__ __align__(16) float smem[];
    regdb_body<false, BM, BN, BK, WM, WN, TM, TN, STAGES, THREADS, ORDER, true, 0, true, false, true, true, true>(
        A, B, C, M, N, K, smem, {}, serial_tile_arrivals);
}

// Padded stream-K with the copy back in the multiply (params["TILE_COPY"], ids ending -pad-tcopy): launched where
// N % 4 != 0 after splitk_zero_c_pad_b, as the padded operation's 16-byte kernel at n4 (N rounded up to a multiple of
// 4) on B's and C's copies Bp and Cp, but the block whose segment completes a tile copies that tile's first N columns
// of Cp into C, so no launch follows the multiply. A tile is complete when the count of its slices added (this
// module's serial_tile_arrivals, which that block resets, so the counts are zero at every launch) reaches all of
// them. At 4096x127x4096 on an H200 the padded 256x128 operation's copy back took 7.3 of its 110.6 us
// (results/h200-2026-11-30/padlaunch/); there this kernel's multiply took 108.3 us alone against 101.1, as 16 blocks
// (one per 256x128 tile) copy at the end, each through one SM (tilecopy/; the 64x128 tile, with four times the
// copying blocks, is kept, and no longer leads its programmatically launched twin: kernels/tuning.py). Its arguments
// are those of the fused kernel; B is not read.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int THREADS, int MIN_BLOCKS,
          int ORDER = 0>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
sgemm_regdb_streamk_tilecopy(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M,
                             int N, int K, const float* __restrict__ Bp, float* __restrict__ Cp)
{
    static_assert(THREADS * MIN_BLOCKS <= 2048, "MIN_BLOCKS blocks must fit one SM's 2048 threads");
    // A completed tile is copied in float4 loads of Cp, IN_FLIGHT a thread at once: one 4-byte load at a time, the
    // copy of a 256x128 tile would wait on L2 128 times in a row.
    constexpr int GROUPS_PER_ROW = BN / 4;
    constexpr int PER_THREAD = BM * GROUPS_PER_ROW / THREADS;
    constexpr int IN_FLIGHT = PER_THREAD < 8 ? PER_THREAD : 8;
    static_assert((BM * GROUPS_PER_ROW) % THREADS == 0 && PER_THREAD % IN_FLIGHT == 0, "copy units divide evenly");
    extern __shared__ __align__(16) float smem[];
    __shared__ bool tile_complete;
    const int n4 = (N + 3) & ~3;
    const int grid_m = (M + BM - 1) / BM;
    const int grid_n = (n4 + BN - 1) / BN;
    const int slices = (K + BK - 1) / BK;
    // Called after streamk_run's barrier at a segment's end, so every thread's additions are issued before the count.
    const auto copy_completed_tile = [&](int tile, int k_tiles) {
        if (threadIdx.x == 0) {
            __threadfence();
            const unsigned added = atomicAdd(&serial_tile_arrivals[tile], (unsigned)k_tiles) + (unsigned)k_tiles;
            tile_complete = added == (unsigned)slices;
            if (tile_complete) {
                serial_tile_arrivals[tile] = 0u;
                __threadfence();
            }
        }
        __syncthreads();
        if (!tile_complete) return;
        const int2 tile_at = v9::grouped_tile(tile, grid_m, grid_n);
        const int bm = tile_at.x * BM;
        const int bn = tile_at.y * BN;
        const int rows = min(BM, M - bm);
        const int cols = min(BN, N - bn);
        for (int first = 0; first < PER_THREAD; first += IN_FLIGHT) {
            float4 v[IN_FLIGHT];
#pragma unroll
            for (int u = 0; u < IN_FLIGHT; ++u) {
                const int g = (first + u) * THREADS + threadIdx.x;
                const int r = g / GROUPS_PER_ROW;
                const int c = (g % GROUPS_PER_ROW) * 4;
                // Read past the L1: the other blocks' additions landed in L2. Cp's rows are n4 floats, so a group
                // that starts before N lies inside its row.
                v[u] = r < rows && c < cols
                           ? __ldcg(reinterpret_cast<const float4*>(Cp + (size_t)(bm + r) * n4 + bn + c))
                           : make_float4(0.f, 0.f, 0.f, 0.f);
            }
#pragma unroll
            for (int u = 0; u < IN_FLIGHT; ++u) {
                const int g = (first + u) * THREADS + threadIdx.x;
                const int r = g / GROUPS_PER_ROW;
                const int c = (g % GROUPS_PER_ROW) * 4;
                if (r >= rows) continue;
                float* dst = C + (size_t)(bm + r) * N + bn + c;
                const float parts[4] = {v[u].x, v[u].y, v[u].z, v[u].w};
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    if (c + j < cols) dst[j] = parts[j];
            }
        }
    };
    streamk_run<true, BM, BN, BK, WM, WN, TM, TN, STAGES, THREADS, ORDER, false>(A, Bp, Cp, M, n4, K, smem,
                                                                                 copy_completed_tile);
}

// Stream-K in one launch (params["FUSED"], ids ending -fused): the launches before and after the multiply become
// phases of it, behind barriers over the whole grid. The two launches around the padded 256x128 stream-K multiply at
// 4096x127x4096 took 9.4 of the operation's 110.6 us on an H200, the multiply alone 101.1 against cuBLAS's 101.2
// (results/h200-2026-11-30/padlaunch/). Measured, slower everywhere (fused/: 119.8 against 111.2 us there; 109.3
// against the multiply's 101.3 alone at 4096x128x4096, where it only zeroes C): kept as one configuration for the
// record (kernels/tuning.py). Phase 1: every block zeroes its share of C (N % 4 == 0), or of C's copy Cp
// while it writes its share of B's copy Bp (both with rows of N rounded up to a multiple of 4 floats, n4); phase 2:
// the stream-K run of the 16-byte body at n4; phase 3 (N % 4 != 0): C's first N columns copied out of Cp. The grid is
// one wave launched cooperatively (the host passes enable_cooperative_groups), so every block is resident and
// the barriers cannot wait on a block that has not started. The barrier's count and generation are this module's:
// two fused launches of one module must not run at the same time (the worker runs one at a time).
// Each thread's loads in flight in the copy phases: with one block per SM, 33,792 threads on an H200, a copy of one
// float or float4 at a time waits on memory once per element (4096x127x4096: 16 of C's floats and 8 of B's groups a
// thread). The cooperative launch and both barriers, timed alone, cost 3.7 us over a plain launch on an H200, less
// than half of what the kernel lost to the three launches (results/h200-2026-11-30/coopprobe/). With 8 in flight it
// took 117.8 us at 4096x127x4096 (119.8 with one), the three launches 112.7 (fused_inflight/).
constexpr int FUSED_COPIES_IN_FLIGHT = 8;
__device__ unsigned fused_barrier_arrivals;
__device__ unsigned fused_barrier_generation;

// Every block's writes before it (additions included) are visible to every block after it.
__device__ __forceinline__ void grid_barrier()
{
    __syncthreads();
    if (threadIdx.x == 0) {
        const unsigned generation = v9::load_acquire(&fused_barrier_generation);
        __threadfence();
        if (atomicAdd(&fused_barrier_arrivals, 1u) == gridDim.x - 1) {
            atomicExch(&fused_barrier_arrivals, 0u);
            __threadfence();
            atomicExch(&fused_barrier_generation, generation + 1);
        } else {
            while (v9::load_acquire(&fused_barrier_generation) == generation) {
            }
        }
    }
    __syncthreads();
}

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int THREADS, int MIN_BLOCKS,
          int ORDER = 0>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
sgemm_regdb_streamk_fused(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M,
                          int N, int K, float* __restrict__ Bp, float* __restrict__ Cp)
{
    static_assert(THREADS * MIN_BLOCKS <= 2048, "MIN_BLOCKS blocks must fit one SM's 2048 threads");
    extern __shared__ __align__(16) float smem[];
    const bool padded = (N & 3) != 0;
    const int n4 = (N + 3) & ~3;
    const long long first = (long long)blockIdx.x * THREADS + threadIdx.x;
    const long long stride = (long long)gridDim.x * THREADS;
    if (padded)
        zero_c_pad_b_part<FUSED_COPIES_IN_FLIGHT>(Cp, (long long)M * n4, B, Bp, K, N, first, stride);
    else
        zero_c_part(C, (long long)M * N, first, stride);
    grid_barrier();
    streamk_run<true, BM, BN, BK, WM, WN, TM, TN, STAGES, THREADS, ORDER, false>(A, padded ? Bp : B, padded ? Cp : C,
                                                                                  M, n4, K, smem);
    if (!padded) return;
    grid_barrier();
    unpad_c_part<true, FUSED_COPIES_IN_FLIGHT>(Cp, C, M, N);
}

// Explicit instantiations of kernels/tuning.py V9_SPLITK_TUNING_CONFIGS (the catalog entry's is the first), so
// that an offline nvcc -cubin build emits them (NVRTC instantiates what the launcher names and skips this).
#ifndef __CUDACC_RTC__
template __global__ void sgemm_regdb_splitk<128,256,16,64,64,8,16,3,256,1,3>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_splitk<128,128,16,64,32,8,8,3,256,2>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_splitk<64,128,16,32,64,8,8,3,128,3>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_splitk<64,64,16,32,64,8,8,3,64,6>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_splitk<128,128,8,64,64,8,16,3,128,2>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_splitk<128,128,8,64,64,8,16,4,128,2>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_splitk<64,128,16,32,64,8,8,4,128,3>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_splitk<64,128,16,32,64,8,8,4,128,3,3>(const float*, const float*, float*, int, int, int);
// Their N % 4 != 0 kernels.
template __global__ void sgemm_regdb_splitk_narrow<128,256,16,64,64,8,16,3,256,1,3>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_splitk_narrow<128,128,16,64,32,8,8,3,256,2,0>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_splitk_narrow<64,128,16,32,64,8,8,3,128,3,0>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_splitk_narrow<64,64,16,32,64,8,8,3,64,6,0>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_splitk_narrow<128,128,8,64,64,8,16,3,128,2,0>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_splitk_narrow<128,128,8,64,64,8,16,4,128,2,0>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_splitk_narrow<64,128,16,32,64,8,8,4,128,3,0>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_splitk_narrow<64,128,16,32,64,8,8,4,128,3,3>(const float*, const float*, float*, int, int, int);
// The stream-K configurations and their N % 4 != 0 kernels.
template __global__ void sgemm_regdb_streamk<128,256,16,64,64,8,16,3,256,1,3>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_streamk<256,128,16,64,64,16,8,3,256,1,4>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_streamk<128,128,16,64,32,8,8,3,256,2>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_streamk<64,128,16,32,64,8,8,3,128,3>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_streamk_narrow<128,256,16,64,64,8,16,3,256,1,3>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_streamk_narrow<256,128,16,64,64,16,8,3,256,1,4>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_streamk_narrow<128,128,16,64,32,8,8,3,256,2,0>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_streamk_narrow<64,128,16,32,64,8,8,3,128,3,0>(const float*, const float*, float*, int, int, int);
// The padded-C configurations' N % 4 != 0 kernels.
template __global__ void sgemm_regdb_splitk_padc<64,128,16,32,64,8,8,3,128,3,0>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_splitk_padc<64,64,16,32,64,8,8,3,64,6,0>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_streamk_padc<256,128,16,64,64,16,8,3,256,1,4>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_streamk_padc<64,128,16,32,64,8,8,3,128,3,0>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_streamk_padb<256,128,16,64,64,16,8,3,256,1,4>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_streamk_tilecopy<64,128,16,32,64,8,8,3,128,3,0>(const float*, const float*, float*, int, int, int, const float*, float*);
// The stream-K configuration in one launch.
template __global__ void sgemm_regdb_streamk_fused<256,128,16,64,64,16,8,3,256,1,4>(const float*, const float*, float*, int, int, int, float*, float*);
// The serial configurations and their N % 4 != 0 (narrow or padded-C) kernels.
template __global__ void sgemm_regdb_splitk_serial<64,128,16,32,64,8,8,3,128,3>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_splitk_serial<64,64,16,32,64,8,8,3,64,6>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_splitk_serial<64,128,16,32,64,8,8,4,128,3>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_splitk_serial_narrow<64,128,16,32,64,8,8,3,128,3,0>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_splitk_serial_narrow<64,64,16,32,64,8,8,3,64,6,0>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_splitk_serial_narrow<64,128,16,32,64,8,8,4,128,3,0>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_splitk_serial_padc<64,128,16,32,64,8,8,3,128,3,0>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_splitk_serial_padc<64,64,16,32,64,8,8,3,64,6,0>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_splitk<128,64,8,64,32,8,8,5,128,1>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_splitk_narrow<128,64,8,64,32,8,8,5,128,1,0>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_splitk_serial<128,64,8,64,32,8,8,5,128,1>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_splitk_serial_narrow<128,64,8,64,32,8,8,5,128,1,0>(const float*, const float*, float*, int, int, int);
// The zero-first configurations and their N % 4 != 0 kernels.
template __global__ void sgemm_regdb_splitk_zfirst<64,128,16,32,64,8,8,4,128,3,3>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_splitk_zfirst_narrow<64,128,16,32,64,8,8,4,128,3,3>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_splitk_zfirst<64,64,16,32,64,8,8,3,64,6>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_splitk_zfirst_narrow<64,64,16,32,64,8,8,3,64,6,0>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_splitk_padc<128,64,8,64,32,8,8,5,128,1,0>(const float*, const float*, float*, int, int, int);
// The zero-first padded-C configurations (their N % 4 != 0 kernels; where N % 4 == 0 they run the zero-first kernel).
template __global__ void sgemm_regdb_splitk_zfirst<64,128,16,32,64,8,8,3,128,3>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_splitk_zfirst_padc<64,128,16,32,64,8,8,3,128,3,0>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_splitk_zfirst_padc<64,64,16,32,64,8,8,3,64,6,0>(const float*, const float*, float*, int, int, int);
#endif
