// TILE_WIDTH tiling: the lecture kernel of the design documents (002/003), shared-memory tiles of
// TILE_WIDTH x TILE_WIDTH with row = by*TILE+ty and col = bx*TILE+tx, so a warp's lanes walk columns
// (coalesced global loads, conflict-free shared loads). Instantiated for TILE_WIDTH 8, 16 and 32 to show
// how tile size trades data reuse against occupancy. The lecture assumes Width % TILE_WIDTH == 0; the
// guarded loads here make any M, N, K correct.
#define IDX2C(i, j, ld) ((size_t)(i) * (ld) + (j))

template <int TILE_WIDTH>
__global__ void sgemm_tiled(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                            int m, int n, int k) {
    __shared__ float sharedA[TILE_WIDTH][TILE_WIDTH];
    __shared__ float sharedB[TILE_WIDTH][TILE_WIDTH];
    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int row = blockIdx.y * TILE_WIDTH + ty;
    const int col = blockIdx.x * TILE_WIDTH + tx;
    float sum = 0.0f;
    for (int t = 0; t < k; t += TILE_WIDTH) {
        sharedA[ty][tx] = (row < m && t + tx < k) ? a[IDX2C(row, t + tx, k)] : 0.0f;
        sharedB[ty][tx] = (t + ty < k && col < n) ? b[IDX2C(t + ty, col, n)] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int i = 0; i < TILE_WIDTH; i++) {
            sum += sharedA[ty][i] * sharedB[i][tx];
        }
        __syncthreads();
    }
    if (row < m && col < n) c[IDX2C(row, col, n)] = sum;
}

template __global__ void sgemm_tiled<8>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_tiled<16>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_tiled<32>(const float*, const float*, float*, int, int, int);
