// v6 vectorized: v5's double-buffered 128x128x8 tiles with every memory access widened to 16 bytes.
// Each thread fetches its share of a K-slice with one LDG.128 per operand (v5: eight scalar loads), the
// A tile is written transposed into shared memory so that a thread's 8 A values for one k are contiguous,
// and the inner loop reads both operands with LDS.128: 4 shared loads feed 64 FMAs. Threads still own a
// contiguous 8x8 block of C, which leaves a 2-way bank conflict on the B reads; v7 removes it.
//
// Any M, N, K >= 1: a 16-byte load is used only where the row is long enough and 16-byte aligned
// (K % 4 == 0 for A, N % 4 == 0 for B, and the four elements in bounds); the rest of the edge goes
// through guarded scalar loads that fill zeros, so the same loop runs unchanged on partial tiles.

constexpr int V6_BM = 128;
constexpr int V6_BN = 128;
constexpr int V6_BK = 8;
constexpr int V6_TM = 8;
constexpr int V6_TN = 8;
constexpr int V6_THREADS = 256;
// Padding the transposed A tile by 4 floats moves the rows written by the two A-loading half-warps
// (k and k+4) 16 banks apart, so the transposing scalar stores are conflict-free; 4 keeps rows 16-byte aligned.
constexpr int V6_APAD = 4;

static_assert(V6_BM * V6_BK == V6_THREADS * 4, "one float4 of A per thread per K-slice");
static_assert(V6_BN * V6_BK == V6_THREADS * 4, "one float4 of B per thread per K-slice");
static_assert((V6_BM / V6_TM) * (V6_BN / V6_TN) == V6_THREADS, "one 8x8 C block per thread");

// __launch_bounds__(256, 2) caps registers at 128 so two blocks (16 warps) share an SM.
extern "C" __global__ void __launch_bounds__(V6_THREADS, 2)
sgemm_vec(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K)
{
    __shared__ __align__(16) float As[2][V6_BK][V6_BM + V6_APAD];
    __shared__ __align__(16) float Bs[2][V6_BK][V6_BN];

    const int tid = threadIdx.x;
    const int bm = blockIdx.y * V6_BM;  // grid_order "cols_x": blockIdx.x walks column tiles
    const int bn = blockIdx.x * V6_BN;

    // Loader roles: A is 128 rows x 2 float4, B is 8 rows x 32 float4, one float4 of each per thread.
    const int a_row = tid >> 1;
    const int a_col = (tid & 1) * 4;
    const int b_row = tid >> 5;
    const int b_col = (tid & 31) * 4;

    // Compute roles: a 16x16 grid of threads, each owning rows ty*8.. and columns tx*8.. of the tile.
    const int ty = tid >> 4;
    const int tx = tid & 15;

    const bool a_vec_ok = (K & 3) == 0;
    const bool b_vec_ok = (N & 3) == 0;
    const int ga_row = bm + a_row;
    const bool a_row_in = ga_row < M;
    // Clamp so the pointer stays inside A even for rows that are never dereferenced.
    const float* a_src = A + (size_t)(a_row_in ? ga_row : 0) * K;
    const int gb_col = bn + b_col;

    float4 a_stage, b_stage;

    auto fetch = [&](int k0) {
        const int ka = k0 + a_col;
        if (a_row_in && a_vec_ok && ka < K) {
            a_stage = *reinterpret_cast<const float4*>(a_src + ka);
        } else {
            a_stage.x = (a_row_in && ka + 0 < K) ? a_src[ka + 0] : 0.0f;
            a_stage.y = (a_row_in && ka + 1 < K) ? a_src[ka + 1] : 0.0f;
            a_stage.z = (a_row_in && ka + 2 < K) ? a_src[ka + 2] : 0.0f;
            a_stage.w = (a_row_in && ka + 3 < K) ? a_src[ka + 3] : 0.0f;
        }
        const int kb = k0 + b_row;
        const bool kb_in = kb < K;
        const float* b_src = B + (size_t)(kb_in ? kb : 0) * N;
        if (kb_in && b_vec_ok && gb_col < N) {
            b_stage = *reinterpret_cast<const float4*>(b_src + gb_col);
        } else {
            b_stage.x = (kb_in && gb_col + 0 < N) ? b_src[gb_col + 0] : 0.0f;
            b_stage.y = (kb_in && gb_col + 1 < N) ? b_src[gb_col + 1] : 0.0f;
            b_stage.z = (kb_in && gb_col + 2 < N) ? b_src[gb_col + 2] : 0.0f;
            b_stage.w = (kb_in && gb_col + 3 < N) ? b_src[gb_col + 3] : 0.0f;
        }
    };

    auto stash = [&](int buf) {
        As[buf][a_col + 0][a_row] = a_stage.x;
        As[buf][a_col + 1][a_row] = a_stage.y;
        As[buf][a_col + 2][a_row] = a_stage.z;
        As[buf][a_col + 3][a_row] = a_stage.w;
        *reinterpret_cast<float4*>(&Bs[buf][b_row][b_col]) = b_stage;
    };

    float acc[V6_TM][V6_TN];
#pragma unroll
    for (int i = 0; i < V6_TM; ++i)
#pragma unroll
        for (int j = 0; j < V6_TN; ++j) acc[i][j] = 0.0f;

    const int k_tiles = (K + V6_BK - 1) / V6_BK;

    fetch(0);
    stash(0);
    __syncthreads();

    for (int t = 0; t < k_tiles; ++t) {
        const int cur = t & 1;
        const bool has_next = t + 1 < k_tiles;  // uniform across the block: every thread reaches the barrier
        // The next slice's global loads are issued before the FMAs so their latency hides behind them.
        if (has_next) fetch((t + 1) * V6_BK);

#pragma unroll
        for (int k = 0; k < V6_BK; ++k) {
            const float4 a_lo = *reinterpret_cast<const float4*>(&As[cur][k][ty * V6_TM]);
            const float4 a_hi = *reinterpret_cast<const float4*>(&As[cur][k][ty * V6_TM + 4]);
            const float4 b_lo = *reinterpret_cast<const float4*>(&Bs[cur][k][tx * V6_TN]);
            const float4 b_hi = *reinterpret_cast<const float4*>(&Bs[cur][k][tx * V6_TN + 4]);
            const float a[V6_TM] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w, a_hi.x, a_hi.y, a_hi.z, a_hi.w};
            const float b[V6_TN] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
            for (int i = 0; i < V6_TM; ++i)
#pragma unroll
                for (int j = 0; j < V6_TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }

        // Writing the other buffer is safe: its last readers finished before the previous barrier.
        if (has_next) stash(cur ^ 1);
        __syncthreads();
    }

    const bool c_vec_ok = (N & 3) == 0;
#pragma unroll
    for (int i = 0; i < V6_TM; ++i) {
        const int row = bm + ty * V6_TM + i;
        if (row >= M) continue;
        float* c_row = C + (size_t)row * N;
#pragma unroll
        for (int h = 0; h < V6_TN / 4; ++h) {
            const int col = bn + tx * V6_TN + h * 4;
            if (c_vec_ok && col < N) {
                *reinterpret_cast<float4*>(c_row + col) =
                    make_float4(acc[i][h * 4 + 0], acc[i][h * 4 + 1], acc[i][h * 4 + 2], acc[i][h * 4 + 3]);
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    if (col + j < N) c_row[col + j] = acc[i][h * 4 + j];
            }
        }
    }
}
