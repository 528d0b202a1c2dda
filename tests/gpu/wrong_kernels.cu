// Deliberately wrong SGEMM kernels (test tree only, never in the catalog): the worker must report each one
// "wrong". C = A B, row-major, A is m x k, B is k x n, C is m x n; 16x16 threads per block, one thread per
// element of C, blockIdx.x walks columns. sgemm_test_control is the same kernel done right, so a failure of
// the harness (compile error, launch error) cannot pass for a detected wrong result.
#define TILE 16
#define IDX(i, j, ld) ((size_t)(i) * (ld) + (j))

// Dot product of row `row` of A and column `col` of B over the first `tiles` K tiles, staged through shared
// memory. Every thread of the block must call it (it synchronises), including those outside C.
__device__ __forceinline__ float tiled_dot(const float* __restrict__ a, const float* __restrict__ b, int m, int n,
                                           int k, int row, int col, int tiles) {
    __shared__ float as[TILE][TILE + 1];
    __shared__ float bs[TILE][TILE + 1];
    float sum = 0.0f;
    for (int t = 0; t < tiles; ++t) {
        const int ak = t * TILE + threadIdx.x;
        const int bk = t * TILE + threadIdx.y;
        as[threadIdx.y][threadIdx.x] = (row < m && ak < k) ? a[IDX(row, ak, k)] : 0.0f;
        bs[threadIdx.y][threadIdx.x] = (bk < k && col < n) ? b[IDX(bk, col, n)] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TILE; ++i) sum += as[threadIdx.y][i] * bs[i][threadIdx.x];
        __syncthreads();
    }
    return sum;
}

#define ROW (blockIdx.y * TILE + threadIdx.y)
#define COL (blockIdx.x * TILE + threadIdx.x)
#define ALL_TILES(k) (((k) + TILE - 1) / TILE)

// Correct: all ceil(K / 16) tiles, every element of C written.
extern "C" __global__ void sgemm_test_control(const float* __restrict__ a, const float* __restrict__ b,
                                              float* __restrict__ c, int m, int n, int k) {
    const int row = ROW, col = COL;
    const float sum = tiled_dot(a, b, m, n, k, row, col, ALL_TILES(k));
    if (row < m && col < n) c[IDX(row, col, n)] = sum;
}

// Off by one element: the K loop stops one short (i < k - 1), so the last product of every dot is missing.
// Every element is written and finite: only the relative error can see it.
extern "C" __global__ void sgemm_test_off_by_one(const float* __restrict__ a, const float* __restrict__ b,
                                                 float* __restrict__ c, int m, int n, int k) {
    const int row = ROW, col = COL;
    if (row >= m || col >= n) return;
    float sum = 0.0f;
    for (int i = 0; i < k - 1; ++i) sum += a[IDX(row, i, k)] * b[IDX(i, col, n)];
    c[IDX(row, col, n)] = sum;
}

// Skips the last K tile: (k - 1) / 16 tiles instead of ceil(k / 16). Written and finite, wrong at every K.
extern "C" __global__ void sgemm_test_skip_last_k_tile(const float* __restrict__ a, const float* __restrict__ b,
                                                       float* __restrict__ c, int m, int n, int k) {
    const int row = ROW, col = COL;
    const float sum = tiled_dot(a, b, m, n, k, row, col, (k - 1) / TILE);
    if (row < m && col < n) c[IDX(row, col, n)] = sum;
}

// Leaves the bottom-right 8 x 8 corner of C unwritten (it keeps the worker's NaN poison): 64 NaN outputs.
extern "C" __global__ void sgemm_test_corner_unwritten(const float* __restrict__ a, const float* __restrict__ b,
                                                       float* __restrict__ c, int m, int n, int k) {
    const int row = ROW, col = COL;
    const float sum = tiled_dot(a, b, m, n, k, row, col, ALL_TILES(k));
    if (row >= m - 8 && col >= n - 8) return;
    if (row < m && col < n) c[IDX(row, col, n)] = sum;
}

// Correct everywhere except one element, where it writes a NaN (a quiet NaN bit pattern): 1 NaN output.
extern "C" __global__ void sgemm_test_writes_nan(const float* __restrict__ a, const float* __restrict__ b,
                                                 float* __restrict__ c, int m, int n, int k) {
    const int row = ROW, col = COL;
    const float sum = tiled_dot(a, b, m, n, k, row, col, ALL_TILES(k));
    if (row < m && col < n) c[IDX(row, col, n)] = (row == m / 2 && col == n / 2) ? __int_as_float(0x7fc00000) : sum;
}
