"""The kernel catalog: one entry per kernel version, with everything needed to compile, launch and explain it.

Adding a kernel means adding one `.cu` file under `kernels/src/` and one `KernelSpec` to `CATALOG`.
"""

from __future__ import annotations

from kernels.auto_entry import auto_entry
from kernels.catalog_hopper import HOPPER_KERNELS
from kernels.operations import OPERATIONS
from kernels.spec import KernelSpec
from profiling.errors import InvalidInput

SEED_LADDER = "000_f250783e70275440.txt"
SEED_TILES = "002_1261051180568d0e.txt, 003_7c25e50e7e1a5a5b.txt"
SEED_WMMA = "004_900f612d181a13a6.txt"

CATALOG: tuple[KernelSpec, ...] = (
    KernelSpec(
        id="cublas",
        title="cuBLAS SGEMM",
        adds="The reference: cupy.matmul on float32 with TF32 off (CUBLAS_COMPUTE_32F).",
        operation="sgemm",
        source=None,
        entry=None,
        is_reference=True,
        group="reference",
    ),
    KernelSpec(
        id="v1",
        title="v1 naive (rows on threadIdx.x)",
        adds="One thread per C element, 32x32 blocks; threadIdx.x walks rows as the design document indexes, "
        "so a warp reads A and writes C with a stride of a whole row (uncoalesced).",
        operation="sgemm",
        source="v1_naive.cu",
        entry="sgemm_v1_naive",
        block=(32, 32),
        tile_m=32,
        tile_n=32,
        grid_order="rows_x",
        design_doc=f"{SEED_LADDER} section 'SGEMM v1'",
    ),
    KernelSpec(
        id="v1-coalesced",
        title="v1 naive, coalesced",
        adds="The same kernel with threadIdx.x walking columns: a warp reads B and writes C in one contiguous run.",
        operation="sgemm",
        source="v1_coalesced.cu",
        entry="sgemm_v1_coalesced",
        block=(32, 32),
        tile_m=32,
        tile_n=32,
        grid_order="cols_x",
        design_doc=f"{SEED_LADDER} section 'SGEMM v1'",
        previous="v1",
    ),
    KernelSpec(
        id="v2",
        title="v2 shared-memory tiles 32x32",
        adds="32x32 tiles of A and B staged in shared memory, each element read from global memory once per "
        "block instead of once per thread; indexed as the design document does (threadIdx.x walks rows).",
        operation="sgemm",
        source="v2_shared.cu",
        entry="sgemm_v2_shared",
        block=(32, 32),
        tile_m=32,
        tile_n=32,
        grid_order="rows_x",
        design_doc=f"{SEED_LADDER} section 'SGEMM v2'",
        previous="v1",
    ),
    *(
        KernelSpec(
            id=f"tiled-{tile}",
            title=f"TILE_WIDTH {tile} shared-memory tiling",
            adds=f"The classic lecture kernel: TILE_WIDTH={tile}, row = by*TILE+ty, col = bx*TILE+tx "
            "(coalesced), one __syncthreads after loading and one after using each tile.",
            operation="sgemm",
            source="tiled.cu",
            entry=f"sgemm_tiled<{tile}>",
            block=(tile, tile),
            tile_m=tile,
            tile_n=tile,
            grid_order="cols_x",
            params={"TILE_WIDTH": tile},
            design_doc=SEED_TILES,
            previous="v1-coalesced",
            group="tile-width",
        )
        for tile in (8, 16, 32)
    ),
    KernelSpec(
        id="v3",
        title="v3 register blocking 8x8",
        adds="128x128 block tile, 16x16 threads, each thread keeps an 8x8 block of C in registers, BK=8: "
        "64 FMAs per 16 shared-memory loads instead of 1 per 2.",
        operation="sgemm",
        source="v3_regblock.cu",
        entry="sgemm_v3_regblock",
        block=(16, 16),
        tile_m=128,
        tile_n=128,
        grid_order="rows_x",
        params={"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8},
        design_doc=f"{SEED_LADDER} section 'SGEMM v3'",
        previous="v2",
    ),
    KernelSpec(
        id="v4",
        title="v4 transposed A tile",
        adds="aTile stored as [BK][BM] so threads of a warp read A at a 32-byte stride instead of 256 bytes: "
        "a quarter of v3's shared-memory bank conflicts, and 16-byte shared loads become possible.",
        operation="sgemm",
        source="v4_transposed.cu",
        entry="sgemm_v4_transposed",
        block=(16, 16),
        tile_m=128,
        tile_n=128,
        grid_order="rows_x",
        params={"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8},
        design_doc=f"{SEED_LADDER} section 'SGEMM v4'",
        previous="v3",
    ),
    KernelSpec(
        id="v5",
        title="v5 double buffering",
        adds="Two shared-memory buffers: the next K-slice is loaded into one while the other is computed on, "
        "one __syncthreads per slice instead of two.",
        operation="sgemm",
        source="v5_double_buffer.cu",
        entry="sgemm_v5_double_buffer",
        block=(16, 16),
        tile_m=128,
        tile_n=128,
        grid_order="rows_x",
        params={"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8, "STAGES": 2},
        design_doc=f"{SEED_LADDER} section 'SGEMM v5'",
        previous="v4",
    ),
    # --- beyond the ladder ---
    KernelSpec(
        id="cublas-addmm",
        title="cuBLAS AddMM",
        adds="The tensor-core reference: the whole AddMM D = alpha*A*B + beta*C in one cublasGemmEx call "
        "(float16 A and B, float32 C and D, FP32 accumulate), in place, so it reads C and writes D as the "
        "catalog's AddMM kernels do.",
        operation="hgemm_addmm",
        source=None,
        entry=None,
        dtype="float16",
        is_reference=True,
        library_call="addmm",
        group="reference",
    ),
    KernelSpec(
        id="cublas-hgemm",
        title="cuBLAS HGEMM, A*B only",
        adds="cupy.matmul on the float16 inputs: cuBLAS's product alone, written as float16, with no C read "
        "and no alpha or beta: less memory traffic than the AddMM (2 bytes written per output element instead "
        "of 4 read and 4 written). The reference of bundles measured before cublas-addmm existed; shown for "
        "the cost of the AddMM's epilogue.",
        operation="hgemm_addmm",
        source=None,
        entry=None,
        dtype="float16",
        is_reference=True,
        group="reference",
    ),
    KernelSpec(
        id="cublas-addmm-bf16",
        title="cuBLAS AddMM, BF16",
        adds="The BF16 tensor-core reference: cublas-addmm's one in-place cublasGemmEx call with bfloat16 A and B "
        "(float32 C and D, FP32 accumulate), the AddMM that bfloat16 models run.",
        operation="bgemm_addmm",
        source=None,
        entry=None,
        dtype="bfloat16",
        is_reference=True,
        library_call="addmm",
        group="reference",
    ),
    KernelSpec(
        id="v6-vectorized",
        title="v6 vectorized 16-byte loads",
        adds="v5 with every access 16 bytes wide: one LDG.128 of A and of B per thread per K-slice, the A tile "
        "stored transposed (padded by 4 floats so the transposing stores are conflict-free) and both operands "
        "read with LDS.128, 4 shared loads per 64 FMAs. Guarded scalar loads handle edges and odd K or N.",
        operation="sgemm",
        source="v6_vectorized.cu",
        entry="sgemm_vec",
        block=(256, 1),
        tile_m=128,
        tile_n=128,
        grid_order="cols_x",
        params={"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8, "STAGES": 2, "THREADS": 256, "MIN_BLOCKS": 2},
        design_doc=f"{SEED_LADDER} sections 'SGEMM v4'/'SGEMM v5' (LDS.128); siboehm/SGEMM_CUDA kernel 6",
        previous="v5",
        group="beyond",
    ),
    KernelSpec(
        id="v7-warptile",
        title="v7 warp tiling",
        adds="v6 with block -> warp -> thread tiling: each warp owns a 64x32 sub-tile of C, its lanes an 8x4 grid, "
        "each thread a 2x2 set of 4x4 fragments 32 rows / 16 columns apart. A warp's LDS.128 reads are then "
        "8 (A) and 4 (B) consecutive float4: no bank conflicts, a quarter of v6's shared-memory traffic per k.",
        operation="sgemm",
        source="v7_warptile.cu",
        entry="sgemm_warptile",
        block=(256, 1),
        tile_m=128,
        tile_n=128,
        grid_order="cols_x",
        params=dict(BM=128, BN=128, BK=8, WM=64, WN=32, TM=8, TN=8, STAGES=2, THREADS=256, MIN_BLOCKS=2),
        design_doc="siboehm/SGEMM_CUDA kernel 10 (warptiling); builds on v6-vectorized",
        previous="v6-vectorized",
        group="beyond",
    ),
    KernelSpec(
        id="v8-async",
        title="v8 cp.async pipeline (templated)",
        adds="v7's warp tiling fed by cp.async through 3 shared-memory stages: copies bypass registers and two "
        "slices are in flight while one is computed; src-size zero-fill handles every edge; blocks are visited "
        "in groups of 8 block-rows for L2 reuse. All tile sizes are template parameters (kernels/tuning.py).",
        operation="sgemm",
        source="v8_async.cu",
        entry="sgemm_async<128,128,16,64,32,8,8,3,256>",
        block=(256, 1),
        tile_m=128,
        tile_n=128,
        grid_order="cols_x",
        params=dict(BM=128, BN=128, BK=16, WM=64, WN=32, TM=8, TN=8, STAGES=3, THREADS=256, MIN_BLOCKS=2),
        dynamic_smem_bytes=49920,
        design_doc="CUDA Programming Guide, asynchronous copies (cp.async); siboehm/SGEMM_CUDA kernel 10; "
        "builds on v7-warptile",
        previous="v7-warptile",
        group="beyond",
    ),
    KernelSpec(
        id="wmma-addmm",
        title="WMMA AddMM (design document)",
        adds="Tensor cores: D = alpha*A*B + beta*C with half A, B and float C, D through 16x16x16 WMMA fragments; "
        "the document's 128x128 block of 8 warps (32x64 warp tiles), K in chunks of 64 staged with 16-byte "
        "copies into skewed shared memory, result staged through shared memory for coalesced 16-byte stores. "
        "Typos fixed, any M, N, K that are multiples of 16 (edges zero-filled), alpha = 0 safe.",
        operation="hgemm_addmm",
        source="hgemm_wmma.cu",
        entry="hgemm_wmma_addmm<1>",
        block=(256, 1),
        tile_m=128,
        tile_n=128,
        grid_order="cols_x",
        dtype="float16",
        params={
            "BM": 128,
            "BN": 128,
            "CHUNK_K": 4,
            "BK": 64,
            "WARPS": 8,
            "WARP_M": 32,
            "WARP_N": 64,
            "FRAG_M": 16,
            "FRAG_N": 16,
            "FRAG_K": 16,
            "SKEW_HALF": 16,
            "SHARED_MEMORY_LIMIT_64K": 1,
            "THREADS": 256,
            "MIN_BLOCKS": 2,
        },
        multiple_of=16,
        dynamic_smem_bytes=65536,
        design_doc=f"{SEED_WMMA} (WMMA AddMM walkthrough and listing)",
        previous=None,
        group="tensor-core",
    ),
    KernelSpec(
        id="wmma-async",
        title="Tensor-core AddMM, cp.async + ldmatrix + mma.sync",
        adds="The WMMA AddMM rebuilt for throughput: 4-stage cp.async pipeline of 32-deep K slices, 128x256 "
        "block tile with 64x64 warp tiles (4x8 mma.sync.m16n8k16 tiles per warp), XOR-swizzled shared memory "
        "read by ldmatrix.x4 / .x4.trans without bank conflicts, next K step's fragments loaded during the "
        "current mma, alpha/beta applied from registers, grouped block order for L2 reuse.",
        operation="hgemm_addmm",
        source="hgemm_mma_async.cu",
        entry="hgemm_mma_async<128,256,4>",
        block=(256, 1),
        tile_m=128,
        tile_n=256,
        grid_order="cols_x",
        dtype="float16",
        params={
            "BM": 128,
            "BN": 256,
            "BK": 32,
            "WM": 64,
            "WN": 64,
            "MMA_M": 16,
            "MMA_N": 8,
            "MMA_K": 16,
            "STAGES": 4,
            "THREADS": 256,
            "MIN_BLOCKS": 1,
        },
        multiple_of=16,
        dynamic_smem_bytes=98304,
        design_doc=f"{SEED_WMMA} (the kernel it speeds up); PTX ISA: cp.async, ldmatrix, mma.m16n8k16 fragment "
        "layouts; CUTLASS-style multistage pipeline and XOR swizzle",
        previous="wmma-addmm",
        group="tensor-core",
    ),
    *HOPPER_KERNELS,  # wgmma-tma .. wgmma-cluster (kernels/catalog_hopper.py)
    KernelSpec(
        id="v9-regdb",
        title="v9 register double buffering, 8x16 thread tiles",
        adds="v8's cp.async pipeline with the next k step's A and B fragments loaded from shared memory while the "
        "current k step's FMAs issue, the barrier and the next slice's copies inside a slice's last k step "
        "(no branch in the loop, so they interleave with FMAs), and 8x16 accumulators per thread in a "
        "128x256 block of 8 warps (64x64 warp tiles, one block per SM, up to 255 registers): 128 FMAs per 6 "
        "LDS.128. All tile sizes are template parameters (kernels/tuning.py V9_TUNING_CONFIGS), and so is the "
        "order of the 128 FFMAs (sgemm_regdb_ordered): on the H100 and H200 the tuned 128x256 tiles with the "
        "rows taken one from each 4-row fragment, every other one reversed (ORDER 3), cut dispatch stalls and "
        "run at 96-97 % of cuBLAS against 91-92 % in plain row order. Where N % 4 != 0 (rows of B not "
        "16-byte aligned) the runner launches each configuration's twin, sgemm_regdb_narrow, which copies B in "
        "4-byte pieces one column per thread, so that a warp reads 128 contiguous bytes, and, in tiles of up to 64 "
        "accumulators a thread, A with a warp on 4 rows x 8 consecutive k, one whole 32-byte sector a row as "
        "cuBLAS copies it (4096x333x333 on an H200: 81 -> 88.5 % of cuBLAS); results and captures name it.",
        operation="sgemm",
        source="v9_regdb.cu",
        entry="sgemm_regdb<128,256,16,64,64,8,16,3,256,1>",
        narrow_entry="sgemm_regdb_narrow<128,256,16,64,64,8,16,3,256,1,0>",
        block=(256, 1),
        tile_m=128,
        tile_n=256,
        grid_order="cols_x",
        params=dict(BM=128, BN=256, BK=16, WM=64, WN=64, TM=8, TN=16, STAGES=3, THREADS=256, MIN_BLOCKS=1),
        dynamic_smem_bytes=74496,
        design_doc="CUTLASS SIMT multistage SGEMM (register-level fragment double buffering, 128x256 tiles); "
        "builds on v8-async",
        previous="v8-async",
        group="beyond",
    ),
    KernelSpec(
        id="v8-splitk",
        title="v8 split-K (small M x N, large K)",
        adds="v8-async with K split across gridDim.z blocks per 128x128 tile, for shapes whose tiles cannot fill "
        "the GPU (127x127x8191 is one tile for 132 SMs; cuBLAS runs it as a split-K kernel plus a reduction): "
        "each block multiplies its own range of K slices and adds its partial tile into C with float "
        "reductions (red.global.add.v4.f32 on sm_90), after a first launch has zeroed C, so the GEMM is one "
        "operation of two launches, timed and profiled together. Splits per shape (kernels/splitk_policy.py): "
        "every extra split is one more reduction per C element, so once the GPU has a block on every SM the "
        "splits stay at least 16 slices deep (within one wave of resident blocks); where that leaves SMs idle, "
        "the geometric mean of that count and the one that fills the SMs (64 at 127x127x8191); at 4096^2 and "
        "above 1 (v8-async plus the zeroing pass). The summed order makes C's last bits vary run to run. Its "
        "tile configurations are tuned like v8-async's (kernels/tuning.py SPLITK_TUNING_CONFIGS); sgemm-auto "
        "chooses between kernels.",
        operation="sgemm",
        source="v8_splitk.cu",
        entry="sgemm_splitk<128,128,16,64,32,8,8,3,256>",
        block=(256, 1),
        tile_m=128,
        tile_n=128,
        grid_order="cols_x",
        params=dict(BM=128, BN=128, BK=16, WM=64, WN=32, TM=8, TN=8, STAGES=3, THREADS=256, MIN_BLOCKS=2),
        dynamic_smem_bytes=49920,
        design_doc="CUTLASS split-K (serial and parallel reduction) and stream-K; cuBLAS's own 127x127x8191 "
        "launch (CUTLASS split-K SGEMM, grid 2x1x64, then splitKreduce_kernel); builds on v8-async",
        previous="v8-async",
        group="beyond",
        split_k=True,
    ),
    KernelSpec(
        id="v9-splitk",
        title="v9 split-K (register double buffering, K split across blocks)",
        adds="v9-regdb's register-double-buffered body (v9_body.cuh, ORDER 3 FFMAs in its default 128x256 tile) "
        "with K split across gridDim.z blocks per tile, as v8-splitk does for v8's body: each block multiplies its "
        "own range of K slices and adds its partial tile into C with red.global.add.v4.f32, after a zeroing launch. "
        "For shapes whose v9 tiles leave SMs idle while K is deep (1024x1024 is 32 of its tiles for 132 SMs). Same "
        "split-count rule as v8-splitk; tile configurations in kernels/tuning.py V9_SPLITK_TUNING_CONFIGS, which "
        "sgemm-auto runs where the tuning record measured them faster. The summed order makes C's last bits vary "
        "run to run. Where N % 4 != 0 its twin sgemm_regdb_splitk_narrow runs instead: B copied one column per "
        "thread, and the partial tiles added in the widest reductions each address allows (16 or 8 bytes). Its "
        "stream-K configurations (ids ending in -sk, sgemm_regdb_streamk) launch one wave of blocks instead, each an "
        "equal run of all tiles' K slices that may cross tile boundaries, so no SM idles where tiles x splits would "
        "leave part of a wave empty. On sm_90 an operation's launches after its first are programmatic dependent "
        "launches: each is scheduled while the launch before it drains and waits in its own code "
        "(griddepcontrol.wait) for that launch's writes.",
        operation="sgemm",
        source="v9_splitk.cu",
        entry="sgemm_regdb_splitk<128,256,16,64,64,8,16,3,256,1,3>",
        narrow_entry="sgemm_regdb_splitk_narrow<128,256,16,64,64,8,16,3,256,1,3>",
        block=(256, 1),
        tile_m=128,
        tile_n=256,
        grid_order="cols_x",
        params=dict(BM=128, BN=256, BK=16, WM=64, WN=64, TM=8, TN=16, STAGES=3, THREADS=256, MIN_BLOCKS=1, ORDER=3),
        dynamic_smem_bytes=74496,
        design_doc="CUTLASS split-K (serial and parallel reduction) and stream-K; builds on v9-regdb and v8-splitk",
        previous="v9-regdb",
        group="beyond",
        split_k=True,
    ),
    KernelSpec(
        id="v9-clusterk",
        title="v9 cluster split-K (partial tiles summed in distributed shared memory)",
        adds="v9-splitk's K split with the partial tiles reduced inside a thread-block cluster instead of added into "
        "C: the SPLITS blocks of one tile (gridDim.z = SPLITS, a template parameter of 2, 4 or 8) form one cluster, "
        "each writes its partial tile into its own shared memory after v9's main loop, and after a cluster barrier "
        "block r sums rows r*BM/SPLITS .. (r+1)*BM/SPLITS-1 over every block's shared memory (mapa + "
        "ld.shared::cluster, float4, in rank order) and stores them with plain stores. So the GEMM is one launch, "
        "with no zeroing launch before it and no red.global.add queueing at L2, and C is the same bits on every run. "
        "For narrow or small M x N with deep K, where v9-splitk's two launches and reductions cost most "
        "(1024x127x4096, 333x333x4096). sm_90 and newer; tile configurations and split counts in kernels/tuning.py "
        "V9_CLUSTERK_TUNING_CONFIGS. Measured (H100, same run as cuBLAS): slower than v9-splitk at every narrow "
        "shape (1024x127x4096 56-61 % of cuBLAS against 84 %), ahead only at 1024x1024x8191 (128x128, clusters of 2: "
        "91.2 % against 89.3 %); sgemm-auto does not run it (kernels/auto.py AUTO_BASES).",
        operation="sgemm",
        source="v9_clusterk.cu",
        entry="sgemm_regdb_clusterk<64,128,16,32,64,8,8,3,128,3,4>",
        block=(128, 1),
        tile_m=64,
        tile_n=128,
        grid_order="cols_x",
        params=dict(BM=64, BN=128, BK=16, WM=32, WN=64, TM=8, TN=8, STAGES=3, THREADS=128, MIN_BLOCKS=3, SPLITS=4),
        dynamic_smem_bytes=37632,
        design_doc="CUDA Programming Guide, thread block clusters and distributed shared memory; PTX ISA mapa, "
        "ld.shared::cluster, barrier.cluster; CUTLASS split-K; builds on v9-splitk",
        previous="v9-splitk",
        group="beyond",
        cluster_split_k=True,
        min_cc="9.0",
        min_cc_needs="thread-block clusters and distributed shared memory",
    ),
    # --- end beyond the ladder ---
)

# sgemm-auto, not a kernel of its own: resolved at launch to another entry's tuned configuration (kernels/auto.py).
CATALOG += (auto_entry(next(spec for spec in CATALOG if spec.id == "v9-regdb")),)

_BY_ID = {spec.id: spec for spec in CATALOG}


def kernel_ids() -> list[str]:
    """All catalog ids in catalog order."""
    return [spec.id for spec in CATALOG]


def catalog_entry(kernel_id: str) -> KernelSpec:
    """The catalog entry for `kernel_id` (tuning configurations aside: `kernels.get_kernel` resolves those too)."""
    if kernel_id in _BY_ID:
        return _BY_ID[kernel_id]
    raise InvalidInput(f"unknown kernel '{kernel_id}'; known kernels: {', '.join(kernel_ids())}")


def reference_for(spec: KernelSpec) -> KernelSpec | None:
    """The library kernel a catalog entry is compared with (cuBLAS SGEMM or cuBLAS AddMM)."""
    return _BY_ID.get(spec.operation_spec.reference_id)


def library_ids() -> frozenset[str]:
    """The ids of the library kernels (cuBLAS): each operation's reference and any other library call shown beside
    it (cublas-hgemm, the reference of older bundles)."""
    return frozenset(spec.id for spec in CATALOG if spec.is_reference)


def reference_ids() -> dict[str, str]:
    """The reference kernel id of each operation ({"sgemm": "cublas", "hgemm_addmm": "cublas-addmm", ...})."""
    return {name: op.reference_id for name, op in OPERATIONS.items()}
