// v1 coalesced: the v1 kernel with threadIdx.x walking COLUMNS of C. A warp now reads 32 consecutive
// floats of a row of B and writes 32 consecutive floats of C, while all its lanes share one A element
// (a broadcast). Only the mapping of threads to elements changes.
#define IDX2C(i, j, ld) ((size_t)(i) * (ld) + (j))

extern "C" __global__ void sgemm_v1_coalesced(const float* __restrict__ a, const float* __restrict__ b,
                                              float* __restrict__ c, int m, int n, int k) {
    const int y = blockIdx.x * blockDim.x + threadIdx.x;  // column of C
    const int x = blockIdx.y * blockDim.y + threadIdx.y;  // row of C
    if (x >= m || y >= n) return;
    float sum = 0.0f;
    for (int i = 0; i < k; i++) {
        sum += a[IDX2C(x, i, k)] * b[IDX2C(i, y, n)];
    }
    c[IDX2C(x, y, n)] = sum;
}
