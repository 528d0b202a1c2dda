// v1 naive: one thread per element of C, 32x32 threads per block, exactly as the design document
// indexes it: x = blockIdx.x * 32 + threadIdx.x is the ROW. Consecutive lanes of a warp therefore read
// A and write C a whole row apart (uncoalesced); the catalog keeps it to show what that costs.
#define IDX2C(i, j, ld) ((size_t)(i) * (ld) + (j))

extern "C" __global__ void sgemm_v1_naive(const float* __restrict__ a, const float* __restrict__ b,
                                          float* __restrict__ c, int m, int n, int k) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;  // row of C
    const int y = blockIdx.y * blockDim.y + threadIdx.y;  // column of C
    if (x >= m || y >= n) return;
    float sum = 0.0f;
    for (int i = 0; i < k; i++) {
        sum += a[IDX2C(x, i, k)] * b[IDX2C(i, y, n)];
    }
    c[IDX2C(x, y, n)] = sum;
}
