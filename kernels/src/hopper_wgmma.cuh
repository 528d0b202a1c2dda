// PTX wrappers of Hopper's GEMM machinery (sm_90a): mbarriers with transaction counts, 2-D TMA loads, wgmma
// matrix descriptors and the m64n128k16 and m64n256k16 multiplies. Used by wgmma-tma, wgmma-tma-store and
// wgmma-pingpong (scripts/sass_identity.py showed wgmma-tma's machine code unchanged when its own copies of these
// went).
#pragma once

namespace hopper {

// The 128-byte CUtensorMap, passed by value as a __grid_constant__ kernel parameter: TMA reads it from the
// parameter space, so no copy to global memory and no tensormap fence are needed.
struct alignas(64) TensorMap {
    unsigned long long opaque[16];
};

__device__ __forceinline__ unsigned smem_u32(const void* p)
{
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

// Arrive and announce `bytes` more transaction bytes for this phase (the TMA copies complete them).
__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void mbar_arrive(unsigned bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// Spin until the phase of parity `parity` has completed (a fresh barrier counts its "previous" phase, parity 1,
// as completed, which lets the producer fill every stage once before it waits).
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity)
{
    unsigned done;
    do {
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
    } while (!done);
}

// 2-D TMA load of the box at element coordinates (c0 innermost, c1) into shared memory, completing `bar`.
__device__ __forceinline__ void tma_load_2d(unsigned dst, const TensorMap* map, int c0, int c1, unsigned bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
                 ::"r"(dst), "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(bar)
                 : "memory");
}

// A producer's K slice t into stage s: wait until the consumers have released the stage (its use `round` rounds
// of the ring ago), announce the bytes the copies bring (the zero-filled out-of-bounds parts of a box count too),
// and TMA-load A's box and the `b_boxes` B boxes that overlap N (boxes wholly right of N are not loaded: their
// stale columns are never stored).
template <int BK, int B_BOX_N, int A_STAGE_BYTES, int B_BOX_BYTES, int STAGE_BYTES>
__device__ __forceinline__ void load_slice(unsigned smem_base, unsigned full0, unsigned empty0, int s, unsigned round,
                                           const TensorMap* map_a, const TensorMap* map_b, int t, int bm, int bn,
                                           int b_boxes)
{
    mbar_wait(empty0 + 8 * s, (round & 1) ^ 1);
    const unsigned full = full0 + 8 * s;
    mbar_arrive_expect_tx(full, A_STAGE_BYTES + b_boxes * B_BOX_BYTES);
    const unsigned a_dst = smem_base + s * STAGE_BYTES;
    tma_load_2d(a_dst, map_a, t * BK, bm, full);
    for (int j = 0; j < b_boxes; ++j)
        tma_load_2d(a_dst + A_STAGE_BYTES + j * B_BOX_BYTES, map_b, bn + j * B_BOX_N, t * BK, full);
}

// wgmma shared-memory matrix descriptor: start address, leading and stride byte offsets (all >> 4), and the
// swizzle mode in bits 62-63 (1 = 128-byte swizzle). Base offset (bits 49-51) stays 0: every swizzle atom
// starts 1024-byte aligned.
__device__ __forceinline__ constexpr unsigned long long make_desc(unsigned addr, unsigned lbo, unsigned sbo)
{
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | ((unsigned long long)((lbo >> 4) & 0x3FFF) << 16) |
           ((unsigned long long)((sbo >> 4) & 0x3FFF) << 32) | (1ull << 62);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int PENDING>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(PENDING) : "memory"); }

// Keeps the compiler from moving reads or writes of the accumulators across a wgmma fence or wait: the
// asynchronous wgmma writes them behind the compiler's back.
template <int N>
__device__ __forceinline__ void fence_accumulators(float (&d)[N])
{
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// d (64 x 128 per instruction, float) += A (64 x 16, K-major) * B (16 x 128, N-major), both from shared memory;
// B's two 64-column swizzle atoms lie `lbo` bytes apart. Scale-d 1: the accumulators are zeroed before a tile.
__device__ __forceinline__ void wgmma_m64n128k16(float (&d)[64], unsigned long long desc_a, unsigned long long desc_b)
{
    asm volatile("{\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
                 "%64, %65, 1, 1, 1, 0, 1;\n"
                 "}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "l"(desc_a), "l"(desc_b));
}

// The element type of A and B in shared memory (what TMA loaded and wgmma multiplies): float16 or bfloat16. Both have
// 2-byte elements, so tiles, swizzles and descriptors are the same; only the wgmma instruction's input type differs.
enum class Input { f16, bf16 };

// One m64n256k16 wgmma with inputs of PTX type TYPE ("f16" or "bf16"), the operand list written once for both.
#define HOPPER_WGMMA_M64N256K16(TYPE)                                                                                \
    asm volatile("{\n"                                                                                               \
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32." TYPE "." TYPE " "                                   \
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                          \
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "                 \
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "                 \
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "                 \
                 "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "                 \
                 "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "                 \
                 "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "     \
                 "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, " \
                 "%128, %129, 1, 1, 1, 0, %130;\n"                                                                  \
                 "}\n"                                                                                               \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
                   "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
                   "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
                   "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
                   "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
                   "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), \
                   "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
                   "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
                   "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
                   "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), \
                   "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), \
                   "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), \
                   "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), \
                   "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127]) \
                 : "l"(desc_a), "l"(desc_b), "n"(TRANS_B))

// d (64 x 256 per warp group, float) += A (64 x 16, K-major) * B (16 x 256), both from shared memory, elements of
// type IN; TRANS_B 1: B is N-major (row-major K x N), wgmma's imm-trans-b. Scale-d 1, as above.
template <int TRANS_B, Input IN = Input::f16>
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], unsigned long long desc_a, unsigned long long desc_b)
{
    if constexpr (IN == Input::bf16)
        HOPPER_WGMMA_M64N256K16("bf16");
    else
        HOPPER_WGMMA_M64N256K16("f16");
}
#undef HOPPER_WGMMA_M64N256K16

// d (64 x 64 per warp group, float) += A (64 x 16, K-major) * B (16 x 64): the last 64 columns of a 320-wide tile
// (PERSISTENT_BN 320, beside an m64n256k16), same operands and modes as above.
#define HOPPER_WGMMA_M64N64K16(TYPE)                                                                                 \
    asm volatile("{\n"                                                                                               \
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE " "                                    \
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                          \
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "                \
                 "%32, %33, 1, 1, 1, 0, %34;\n"                                                                     \
                 "}\n"                                                                                               \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
                   "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]) \
                 : "l"(desc_a), "l"(desc_b), "n"(TRANS_B))

template <int TRANS_B, Input IN = Input::f16>
__device__ __forceinline__ void wgmma_m64n64k16(float (&d)[32], unsigned long long desc_a, unsigned long long desc_b)
{
    if constexpr (IN == Input::bf16)
        HOPPER_WGMMA_M64N64K16("bf16");
    else
        HOPPER_WGMMA_M64N64K16("f16");
}
#undef HOPPER_WGMMA_M64N64K16

// The pipeline of wgmma-tma and wgmma-tma-store (128 x 256 block tiles, STAGES slices of BK halves, one
// producer thread, consumer warp groups of 64 rows each). The kernels pass their own tile constants. Their
// producer loops stay in the kernels around the shared load_slice: as one shared function taking the C prefetch
// as a lambda, ptxas scheduled both kernels differently (scripts/sass_identity.py).

// Where this block's tile starts (rows bm, columns bn of C): blocks in groups of GROUP_M block rows, walking down
// a group's rows first, so the blocks resident together share A's row panels and B's column panels in L2.
template <int BM, int BN, int GROUP_M>
__device__ __forceinline__ void grouped_block_origin(int& bm, int& bn)
{
    const int grid_n = gridDim.x;
    const int grid_m = gridDim.y;
    const int pid = blockIdx.y * grid_n + blockIdx.x;
    const int group_size = GROUP_M * grid_n;
    const int first_m = (pid / group_size) * GROUP_M;
    const int rows_in_group = min(grid_m - first_m, GROUP_M);
    bm = (first_m + (pid % group_size) % rows_in_group) * BM;
    bn = ((pid % group_size) / rows_in_group) * BN;
}

// A consumer warp group's K loop: d (zeroed by the caller) += its 64 rows of A times B over all slices, with
// m64n256k16 from the swizzled stages (B descriptors: leading byte offset B_LBO, stride byte offset B_SBO);
// returns when every wgmma has finished.
template <int STAGES, int STAGE_BYTES, int A_STAGE_BYTES, int BK, int B_LBO, int B_SBO, int TRANS_B>
__device__ __forceinline__ void consume_slices(float (&d)[128], unsigned smem_base, unsigned full0, unsigned empty0,
                                               int consumer, int lane, int k_tiles)
{
    for (int t = 0; t < k_tiles; ++t) {
        const int s = t % STAGES;
        mbar_wait(full0 + 8 * s, (t / STAGES) & 1);
        const unsigned a_tile = smem_base + s * STAGE_BYTES + consumer * (64 * BK * 2);
        const unsigned b_tile = smem_base + s * STAGE_BYTES + A_STAGE_BYTES;
        fence_accumulators(d);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {
            // A, K-major: 16 halves = 32 bytes further along the swizzled 128-byte rows; 8-row groups 1024 B apart
            // (the leading byte offset is unused for swizzled K-major layouts).
            const unsigned long long da = make_desc(a_tile + kk * 32, 16, 1024);
            // B, N-major: 16 K rows of 128 bytes further down each box.
            const unsigned long long db = make_desc(b_tile + kk * 16 * 128, B_LBO, B_SBO);
            wgmma_m64n256k16<TRANS_B>(d, da, db);
        }
        wgmma_commit();
        // Let this slice's wgmmas run on; the previous slice's are finished after this wait, so its stage is free.
        wgmma_wait<1>();
        fence_accumulators(d);
        if (t > 0 && lane == 0) mbar_arrive(empty0 + 8 * ((t - 1) % STAGES));
    }
    wgmma_wait<0>();
    fence_accumulators(d);
}

}  // namespace hopper
