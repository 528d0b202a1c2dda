// How many thread-block clusters of each size fit on this GPU at once for a block like the persistent Hopper
// kernels' (384 threads, 230,400 bytes of dynamic shared memory, one block per SM): cudaOccupancyMaxActiveClusters.
// A cluster's blocks must share one GPC, so clusters of 4 or more can leave SMs of a GPC idle; a persistent grid
// sized by SM count would then run a second wave. Usage: nvcc -arch=sm_90a -o /tmp/co scripts/cluster_occupancy.cu
// && /tmp/co [SMEM_BYTES [THREADS]]
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void cluster_block(float* out)
{
    extern __shared__ float smem[];
    if (out) out[threadIdx.x] = smem[threadIdx.x];
}

int main(int argc, char** argv)
{
    const int smem = argc > 1 ? atoi(argv[1]) : 230400;
    const int threads = argc > 2 ? atoi(argv[2]) : 384;
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    cudaFuncSetAttribute(cluster_block, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    cudaFuncSetAttribute(cluster_block, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    printf("%s, %d SMs; blocks of %d threads, %d bytes of dynamic shared memory\n", prop.name,
           prop.multiProcessorCount, threads, smem);
    printf("cluster size  clusters at once  SMs used\n");
    for (int size = 1; size <= 16; size *= 2) {
        cudaLaunchConfig_t config = {};
        config.gridDim = dim3(size * 64);
        config.blockDim = dim3(threads);
        config.dynamicSmemBytes = smem;
        cudaLaunchAttribute attr;
        attr.id = cudaLaunchAttributeClusterDimension;
        attr.val.clusterDim.x = size;
        attr.val.clusterDim.y = 1;
        attr.val.clusterDim.z = 1;
        config.attrs = &attr;
        config.numAttrs = 1;
        int clusters = 0;
        const cudaError_t err = cudaOccupancyMaxActiveClusters(&clusters, cluster_block, &config);
        if (err != cudaSuccess)
            printf("%12d  %s\n", size, cudaGetErrorString(err));
        else
            printf("%12d  %16d  %8d\n", size, clusters, clusters * size);
    }
    return 0;
}
