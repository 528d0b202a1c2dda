// v5 double buffering: v4 with two copies of each shared tile. While the FMAs work on buffer
// `buffer_index`, the next K-slice is fetched and written to buffer `buffer_index ^ 1`, so one
// __syncthreads per slice replaces v4's two and global loads overlap arithmetic. The next slice is
// fetched into registers before the FMAs and stored to shared memory after them: storing straight from
// global memory (as the design document's sketch reads) would stall each thread on the load before it
// could start computing.
#define IDX2C(i, j, ld) ((size_t)(i) * (ld) + (j))
#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8

extern "C" __global__ void __launch_bounds__(256) sgemm_v5_double_buffer(const float* __restrict__ a,
                                                                          const float* __restrict__ b,
                                                                          float* __restrict__ c, int m,
                                                                          int n, int k) {
    __shared__ __align__(16) float aTile[2][BK][BM];
    __shared__ __align__(16) float bTile[2][BK][BN];
    const int tid = threadIdx.x * 16 + threadIdx.y;
    const int a_row = tid / 2, a_col = 4 * (tid % 2);
    const int b_row = tid / 32, b_col = 4 * (tid % 32);
    const int block_row = BM * blockIdx.x;
    const int block_col = BN * blockIdx.y;

    float a_next[4], b_next[4];
    auto fetch = [&](int i) {
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int r = block_row + a_row, col = i + a_col + j;
            a_next[j] = (r < m && col < k) ? a[IDX2C(r, col, k)] : 0.0f;
        }
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int r = i + b_row, col = block_col + b_col + j;
            b_next[j] = (r < k && col < n) ? b[IDX2C(r, col, n)] : 0.0f;
        }
    };
    auto store = [&](int buf) {
#pragma unroll
        for (int j = 0; j < 4; j++) {
            aTile[buf][a_col + j][a_row] = a_next[j];
            bTile[buf][b_row][b_col + j] = b_next[j];
        }
    };

    float sum[TM][TN] = {};
    int buffer_index = 0;
    fetch(0);
    store(buffer_index);
    __syncthreads();
    for (int i = 0; i < k; i += BK) {
        const bool has_next = i + BK < k;
        if (has_next) fetch(i + BK);
#pragma unroll
        for (int kk = 0; kk < BK; kk++) {
#pragma unroll
            for (int xx = 0; xx < TM; xx++) {
#pragma unroll
                for (int yy = 0; yy < TN; yy++) {
                    sum[xx][yy] +=
                        aTile[buffer_index][kk][threadIdx.x * TM + xx] * bTile[buffer_index][kk][threadIdx.y * TN + yy];
                }
            }
        }
        if (has_next) {
            // Writes go to the other buffer, which every thread finished reading before the last barrier.
            store(buffer_index ^ 1);
            __syncthreads();
            buffer_index ^= 1;
        }
    }

    const int x = block_row + threadIdx.x * TM;
    const int y = block_col + threadIdx.y * TN;
#pragma unroll
    for (int xx = 0; xx < TM; xx++) {
#pragma unroll
        for (int yy = 0; yy < TN; yy++) {
            if (x + xx < m && y + yy < n) c[IDX2C(x + xx, y + yy, n)] = sum[xx][yy];
        }
    }
}
