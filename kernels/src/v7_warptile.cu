// v7 warp tiling: v6's loads, double buffer and 8x8 register tile, with the 128x128 block tile split
// block -> warp -> thread. The 8 warps each own a compact 64x32 sub-tile of C (2 x 4 warps); inside it
// the 32 lanes form an 8 x 4 grid and each thread owns a 2 x 2 set of 4x4 fragments spaced 32 rows and
// 16 columns apart instead of one contiguous 8x8 block. For every k a warp then reads A as 8 consecutive
// float4 (128 bytes) and B as 4 consecutive float4 (64 bytes), so each LDS.128 touches every bank at most
// once: v6's 2-way conflict on B is gone, and a warp's shared-memory footprint per k shrinks from
// 2 x 512 bytes to 128 + 64 bytes, which is what lets the FMA pipe stay fed (siboehm's kernel 10 layout).
//
// Any M, N, K >= 1, with v6's edge handling: 16-byte loads where aligned and in bounds, zero-filling
// guarded scalar loads elsewhere, guarded stores.

constexpr int V7_BM = 128;
constexpr int V7_BN = 128;
constexpr int V7_BK = 8;
constexpr int V7_WM = 64;  // warp tile rows
constexpr int V7_WN = 32;  // warp tile columns
constexpr int V7_TM = 8;   // rows per thread (as TM/4 fragments of 4)
constexpr int V7_TN = 8;   // columns per thread (as TN/4 fragments of 4)
constexpr int V7_THREADS = 256;
constexpr int V7_APAD = 4;  // see v6: conflict-free transposing stores, rows stay 16-byte aligned

constexpr int V7_WARPS_N = V7_BN / V7_WN;      // 4
constexpr int V7_LANES_M = V7_WM / V7_TM;      // 8 lanes down a warp tile
constexpr int V7_LANES_N = V7_WN / V7_TN;      // 4 lanes across
constexpr int V7_FRAG_M = V7_TM / 4;           // 2 fragments per thread vertically...
constexpr int V7_FRAG_N = V7_TN / 4;           // ...and 2 horizontally
constexpr int V7_FRAG_STRIDE_M = V7_LANES_M * 4;  // 32 rows between a thread's fragments
constexpr int V7_FRAG_STRIDE_N = V7_LANES_N * 4;  // 16 columns between them

static_assert((V7_BM / V7_WM) * (V7_BN / V7_WN) * 32 == V7_THREADS, "one warp per warp tile");
static_assert(V7_LANES_M * V7_LANES_N == 32, "a warp tile is covered by exactly 32 lanes");
static_assert(V7_BM * V7_BK == V7_THREADS * 4 && V7_BN * V7_BK == V7_THREADS * 4, "one float4 of A and B per thread");

extern "C" __global__ void __launch_bounds__(V7_THREADS, 2)
sgemm_warptile(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K)
{
    __shared__ __align__(16) float As[2][V7_BK][V7_BM + V7_APAD];
    __shared__ __align__(16) float Bs[2][V7_BK][V7_BN];

    const int tid = threadIdx.x;
    const int bm = blockIdx.y * V7_BM;  // grid_order "cols_x"
    const int bn = blockIdx.x * V7_BN;

    const int a_row = tid >> 1;
    const int a_col = (tid & 1) * 4;
    const int b_row = tid >> 5;
    const int b_col = (tid & 31) * 4;

    const int warp = tid >> 5;
    const int lane = tid & 31;
    const int wm0 = (warp / V7_WARPS_N) * V7_WM;
    const int wn0 = (warp % V7_WARPS_N) * V7_WN;
    const int tm0 = wm0 + (lane / V7_LANES_N) * 4;  // first row of this thread's first fragment
    const int tn0 = wn0 + (lane % V7_LANES_N) * 4;  // first column

    const bool a_vec_ok = (K & 3) == 0;
    const bool b_vec_ok = (N & 3) == 0;
    const bool a_row_in = bm + a_row < M;
    const int gb_col = bn + b_col;
    // Running pointers advance by one K-slice per fetch; they are clamped into the matrices so that an
    // out-of-range slot is never dereferenced (the guards below zero-fill it instead).
    const float* a_src = A + (size_t)(a_row_in ? bm + a_row : 0) * K + a_col;
    const float* b_src = B + (size_t)b_row * N + (gb_col < N ? gb_col : 0);
    int ka = a_col;  // K index of a_src[0]
    int kb = b_row;  // K index of b_src's row

    float4 a_stage, b_stage;

    // Fetches the slice at the current pointers, then steps them to the next slice.
    auto fetch = [&]() {
        if (a_row_in && a_vec_ok && ka < K) {
            a_stage = *reinterpret_cast<const float4*>(a_src);
        } else {
            a_stage.x = (a_row_in && ka + 0 < K) ? a_src[0] : 0.0f;
            a_stage.y = (a_row_in && ka + 1 < K) ? a_src[1] : 0.0f;
            a_stage.z = (a_row_in && ka + 2 < K) ? a_src[2] : 0.0f;
            a_stage.w = (a_row_in && ka + 3 < K) ? a_src[3] : 0.0f;
        }
        const bool kb_in = kb < K;
        if (kb_in && b_vec_ok && gb_col < N) {
            b_stage = *reinterpret_cast<const float4*>(b_src);
        } else {
            b_stage.x = (kb_in && gb_col + 0 < N) ? b_src[0] : 0.0f;
            b_stage.y = (kb_in && gb_col + 1 < N) ? b_src[1] : 0.0f;
            b_stage.z = (kb_in && gb_col + 2 < N) ? b_src[2] : 0.0f;
            b_stage.w = (kb_in && gb_col + 3 < N) ? b_src[3] : 0.0f;
        }
        ka += V7_BK;
        kb += V7_BK;
        a_src += V7_BK;
        b_src += (size_t)V7_BK * N;
    };

    auto stash = [&](int buf) {
        As[buf][a_col + 0][a_row] = a_stage.x;
        As[buf][a_col + 1][a_row] = a_stage.y;
        As[buf][a_col + 2][a_row] = a_stage.z;
        As[buf][a_col + 3][a_row] = a_stage.w;
        *reinterpret_cast<float4*>(&Bs[buf][b_row][b_col]) = b_stage;
    };

    float acc[V7_TM][V7_TN];
#pragma unroll
    for (int i = 0; i < V7_TM; ++i)
#pragma unroll
        for (int j = 0; j < V7_TN; ++j) acc[i][j] = 0.0f;

    const int k_tiles = (K + V7_BK - 1) / V7_BK;

    fetch();
    stash(0);
    __syncthreads();

    for (int t = 0; t < k_tiles; ++t) {
        const int cur = t & 1;
        const bool has_next = t + 1 < k_tiles;  // block-uniform, so the barrier below is reached by all
        if (has_next) fetch();

#pragma unroll
        for (int k = 0; k < V7_BK; ++k) {
            float a[V7_TM], b[V7_TN];
#pragma unroll
            for (int f = 0; f < V7_FRAG_M; ++f) {
                const float4 v = *reinterpret_cast<const float4*>(&As[cur][k][tm0 + f * V7_FRAG_STRIDE_M]);
                a[f * 4 + 0] = v.x; a[f * 4 + 1] = v.y; a[f * 4 + 2] = v.z; a[f * 4 + 3] = v.w;
            }
#pragma unroll
            for (int f = 0; f < V7_FRAG_N; ++f) {
                const float4 v = *reinterpret_cast<const float4*>(&Bs[cur][k][tn0 + f * V7_FRAG_STRIDE_N]);
                b[f * 4 + 0] = v.x; b[f * 4 + 1] = v.y; b[f * 4 + 2] = v.z; b[f * 4 + 3] = v.w;
            }
#pragma unroll
            for (int i = 0; i < V7_TM; ++i)
#pragma unroll
                for (int j = 0; j < V7_TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }

        if (has_next) stash(cur ^ 1);
        __syncthreads();
    }

    // acc[f*4 + r][g*4 + c] is C row tm0 + f*32 + r, column tn0 + g*16 + c.
    const bool c_vec_ok = (N & 3) == 0;
#pragma unroll
    for (int i = 0; i < V7_TM; ++i) {
        const int row = bm + tm0 + (i / 4) * V7_FRAG_STRIDE_M + (i % 4);
        if (row >= M) continue;
        float* c_row = C + (size_t)row * N;
#pragma unroll
        for (int g = 0; g < V7_FRAG_N; ++g) {
            const int col = bn + tn0 + g * V7_FRAG_STRIDE_N;
            if (c_vec_ok && col < N) {
                *reinterpret_cast<float4*>(c_row + col) =
                    make_float4(acc[i][g * 4 + 0], acc[i][g * 4 + 1], acc[i][g * 4 + 2], acc[i][g * 4 + 3]);
            } else {
#pragma unroll
                for (int c = 0; c < 4; ++c)
                    if (col + c < N) c_row[col + c] = acc[i][g * 4 + c];
            }
        }
    }
}
