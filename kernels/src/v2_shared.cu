// v2 shared-memory tiles: over v1, each 32x32 block stages 32x32 tiles of A and B in shared memory, so
// every element is read from global memory once per block instead of once per thread. Indexed as the
// design document does (threadIdx.x walks rows, aTile[threadIdx.x][threadIdx.y]): lanes of a warp hit
// aTile a whole 32-float row apart, the same bank, which the dashboard shows as bank conflicts.
// Out-of-range elements load as zero so any M, N, K works.
#define IDX2C(i, j, ld) ((size_t)(i) * (ld) + (j))
#define TILE 32

extern "C" __global__ void sgemm_v2_shared(const float* __restrict__ a, const float* __restrict__ b,
                                           float* __restrict__ c, int m, int n, int k) {
    __shared__ float aTile[TILE][TILE];
    __shared__ float bTile[TILE][TILE];
    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int x = blockIdx.x * TILE + tx;  // row of C
    const int y = blockIdx.y * TILE + ty;  // column of C
    float sum = 0.0f;
    for (int i = 0; i < k; i += TILE) {
        aTile[tx][ty] = (x < m && i + ty < k) ? a[IDX2C(x, i + ty, k)] : 0.0f;
        bTile[tx][ty] = (i + tx < k && y < n) ? b[IDX2C(i + tx, y, n)] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int ii = 0; ii < TILE; ii++) {
            sum += aTile[tx][ii] * bTile[ii][ty];
        }
        // The next iteration overwrites the tiles: wait until every thread has finished reading them.
        __syncthreads();
    }
    if (x < m && y < n) c[IDX2C(x, y, n)] = sum;
}
