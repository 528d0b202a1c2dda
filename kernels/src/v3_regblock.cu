// v3 register blocking: over v2, each thread computes an 8x8 block of C kept in registers, so a
// 128x128 block tile needs only 16x16 threads, and every pair of shared-memory loads feeds 64 FMAs
// instead of one. Shared tiles shrink along K to BK = 8 (aTile[128][8], bTile[8][128]). Indexing follows
// the design document: tid = threadIdx.x * 16 + threadIdx.y, threadIdx.x picks the rows of C.
// Because threadIdx.x varies fastest within a warp, the 16 lanes read aTile rows 8*8 floats = 256 bytes
// apart, all in one bank: the bank conflicts v4 removes. Out-of-range elements load as zero.
#define IDX2C(i, j, ld) ((size_t)(i) * (ld) + (j))
#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8

extern "C" __global__ void __launch_bounds__(256) sgemm_v3_regblock(const float* __restrict__ a,
                                                                     const float* __restrict__ b,
                                                                     float* __restrict__ c, int m, int n,
                                                                     int k) {
    __shared__ float aTile[BM][BK];
    __shared__ float bTile[BK][BN];
    const int tid = threadIdx.x * 16 + threadIdx.y;
    // A: each thread copies 4 consecutive elements of one row of the 128x8 slice.
    const int a_row = tid / 2, a_col = 4 * (tid % 2);
    // B: each thread copies 4 consecutive elements of one row of the 8x128 slice.
    const int b_row = tid / 32, b_col = 4 * (tid % 32);
    const int block_row = BM * blockIdx.x;
    const int block_col = BN * blockIdx.y;

    float sum[TM][TN] = {};
    for (int i = 0; i < k; i += BK) {
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int r = block_row + a_row, col = i + a_col + j;
            aTile[a_row][a_col + j] = (r < m && col < k) ? a[IDX2C(r, col, k)] : 0.0f;
        }
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int r = i + b_row, col = block_col + b_col + j;
            bTile[b_row][b_col + j] = (r < k && col < n) ? b[IDX2C(r, col, n)] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk++) {
#pragma unroll
            for (int xx = 0; xx < TM; xx++) {
#pragma unroll
                for (int yy = 0; yy < TN; yy++) {
                    sum[xx][yy] += aTile[threadIdx.x * TM + xx][kk] * bTile[kk][threadIdx.y * TN + yy];
                }
            }
        }
        __syncthreads();
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
