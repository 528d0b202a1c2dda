"""The Hopper (sm_90a) entries of the kernel catalog: wgmma + TMA AddMM kernels from wgmma-tma on, in ladder order.
kernels.catalog places them after wmma-async; each entry's `previous` names the step it is explained against."""

from __future__ import annotations

from dataclasses import replace

from kernels.spec import KernelSpec

# wgmma-tma-store's block and tile; the persistent steps keep them and add the grouped tile order (GROUP_M). They
# differ from each other in how blocks share B (clusters), not in their tile: one set of template values.
TMA_STORE_PARAMS = dict(
    BM=128,
    BN=256,
    BK=64,
    STAGES=4,
    CONSUMERS=2,
    WGMMA_M=64,
    WGMMA_N=256,
    WGMMA_K=16,
    SWIZZLE_BYTES=128,
    OUT_BOX_ROWS=64,
    OUT_BOX_COLS=32,
    THREADS=384,
    MIN_BLOCKS=1,
)
PERSISTENT_PARAMS = {**TMA_STORE_PARAMS, "GROUP_M": 16}


# The persistent steps after wgmma-persistent are each the step they build on with the fields they change, so a
# shared field (block, tile, params, shared memory) is written once.
WGMMA_PERSISTENT = KernelSpec(
    id="wgmma-persistent",
    title="Hopper AddMM: persistent wgmma, C through the stage ring",
    adds="wgmma-tma-store's warp-specialised 128x256 block (a producer warp group that gives its registers away "
    "with setmaxnreg, two consumer warp groups of 64x256 accumulators each, 4 stages of 64-deep slices) made "
    "persistent: one block per SM walks the tiles in grouped order (16 tile rows per group), and its producer "
    "streams the K slices of all its tiles through one stage ring, so a tile's first slice is in shared "
    "memory when the consumers finish the previous tile. The float C tile travels through the same ring as "
    "three more slots after each tile's slices (prefetched into L2 16 slices earlier); the consumers add "
    "alpha*acc + beta*C in place and TMA stores D from there, and those slots return to the ring at the next "
    "tile's first slice, once TMA has read them. Each consumer waits for its own slice's wgmmas before "
    "releasing the stage (wgmma.wait_group 0): the other consumer's keep the tensor cores busy. Measured "
    "(H100): as fast as wgmma-tma-store (interleaved A/B: 0.998 of its time at 4096^3, 0.995 at 8192^3); "
    "against cuBLAS doing the same AddMM (cublas-addmm), 0.956 of its time at 4096^3 and the same at 8192^3 "
    "(interleaved A/B). cuBLAS's A*B alone (cublas-hgemm, no C, half D) is 17-23 % faster than either: "
    "the float C read and D write per tile, while the tensor cores idle, cost that much.",
    operation="hgemm_addmm",
    source="hgemm_wgmma_persistent.cu",
    entry="hgemm_wgmma_persistent",
    block=(384, 1),
    tile_m=128,
    tile_n=256,
    grid_order="cols_x",
    dtype="float16",
    params=dict(PERSISTENT_PARAMS),
    multiple_of=16,
    dynamic_smem_bytes=197632,
    backend="nvcc",
    design_doc="CUTLASS KernelTmaWarpSpecializedCooperative with its persistent tile scheduler and TMA epilogue; "
    "PTX ISA wgmma matrix descriptors (64-byte swizzle), cp.async.bulk.tensor, mbarrier; builds on "
    "wgmma-tma-store",
    previous="wgmma-tma-store",
    group="tensor-core",
    arch="sm_90a",
    operand_args="tensor_maps_cd",
    persistent=True,
)

WGMMA_STAGED = replace(
    WGMMA_PERSISTENT,
    id="wgmma-staged",
    title="Hopper AddMM: D through staging, C's ring slots back early",
    adds="wgmma-persistent with one change to its epilogue. C still travels through the stage ring as three "
    "slots after each tile's slices, but each slot now holds the same column strips of both consumers (strips "
    "0-2, 3-5 and 6-7 of eight 32-column strips), and D no longer goes back over C in those slots: each consumer "
    "writes alpha*acc + beta*C into two 8 KB staging boxes of its own (32 KB more shared memory), which TMA "
    "stores while the next box is blended. A C slot therefore returns to the producer as soon as both consumers "
    "have blended its boxes, a third of the way into the epilogue for the first, instead of at the next tile's "
    "first slice once TMA has read the D written over it; the next tile's slices start loading that much "
    "sooner. On an H200 the epilogue cost wgmma-persistent 8-14 % of its time (its main loop alone is 108-124 % "
    "of cuBLAS's AddMM), about half of it the ring waiting for its C slots. Measured (H200, results/h200-"
    "2026-11-28/): 108.1 against 107.3 % of cublas-addmm at 4096^3, 99.0 against 97.0 % at 6144^3 and 101.8 "
    "against 100.4 % at 8192^3 (interleaved rounds); paired A/B against wgmma-persistent, the same at 4096^3 "
    "(1.002 of its time) and 0.984 at 8192^3; under ncu at 4096^3, 210.6 against 209.4 us. The gain comes "
    "where the power cap holds the clock down, as through most of a run at 8192^3: in the A/B's first pairs, at "
    "full clock, it ran 1.549-1.567 ms against wgmma-persistent's 1.535-1.551.",
    source="hgemm_wgmma_staged.cu",
    entry="hgemm_wgmma_staged",
    dynamic_smem_bytes=230400,
    design_doc="CUTLASS sm90 collective epilogue (its own shared-memory staging buffers, stored by TMA while "
    "the next subtile is computed); PTX ISA cp.async.bulk.tensor, cp.async.bulk.wait_group.read, mbarrier; "
    "builds on wgmma-persistent",
    previous="wgmma-persistent",
)

WGMMA_STREAMK = replace(
    WGMMA_STAGED,
    id="wgmma-streamk",
    title="Hopper AddMM: stream-K over the last wave",
    adds="wgmma-staged with one change to its schedule. The persistent grid (one block per SM) walks the 128x256 "
    "tiles in waves; when the tile count is not a multiple of the SM count, the last wave keeps only some SMs "
    "busy: at 8192^3 on 132 SMs, 2048 tiles are 15 whole waves and 68 tiles, so the run takes 16 tile times for "
    "15.5 tiles of work (3 % idle), and at 5120^3, 800 tiles are 6 waves and 8 tiles. Here the whole waves run "
    "as before, and the last wave's tiles are laid end to end along K and cut into equal runs of slices, one per "
    "block (stream-K over the tail, each run at least a quarter of a tile). A block that runs a tile's first "
    "slices writes its float sums to a slot in global memory and raises a flag; the block that runs the tile's "
    "last slices waits for the flags, adds the sums in block order (so results do not depend on timing) and "
    "writes D through wgmma-staged's epilogue. A block runs its contribution before the piece it finishes, so a "
    "waiting block only waits for pieces that wait for nothing. The producer's schedule takes 16 more registers "
    "(setmaxnreg 56, consumers 216), and the module holds 20 MiB of partial-sum slots. Splitting costs about a "
    "quarter of a tile's time, so the tail is split only where it would leave at least 20 % of the blocks idle: "
    "split always, 4096^3's 116-tile tail lost 3-5 points. Runs of at least half a tile measured 1-3 points "
    "slower, and sharing the wave before the tail as well (the paper's hybrid) 2-8 points slower. Measured (H200, "
    "results/h200-2026-11-29/quarter/, interleaved rounds, % of cublas-addmm against wgmma-staged): 5120^3 97.6 "
    "against 91.0, 3072^3 84.5 against 75.8, 8192^3 103.9 against 101.8, 10240^3 103.0 against 100.5; paired A/B "
    "against wgmma-staged 0.940 at 5120^3, 0.982 at 8192^3, 1.004 at 4096^3 (not split); against cublas-addmm "
    "1.046 at 5120^3 (cuBLAS runs a 320x128 tile there, 640 tiles in 4.85 waves), 0.940 at 4096^3, and at 8192^3 "
    "and full clock 1.0056 [1.0044, 1.0067] (40 pairs, each after 2 s of rest, results/h200-2026-11-29/full_clock/): "
    "the main loop alone takes 1.356 of its 1.493 ms there, the epilogue the other 9 %. Since session 24 its "
    "consumers keep the ring's barrier addresses in registers, build each wgmma descriptor by one add, and wait for "
    "the next slice's data while this slice's wgmmas run: the path between two slices' wgmmas, 17.5 % of their warp "
    "samples at 8192^3, went from about 90 instructions to 58. The same A/B then read 1.003 [1.001, 1.005] at "
    "8192^3 and 0.933 at 4096^3 (results/h200-2026-11-29/fastdesc_check/).",
    source="hgemm_wgmma_streamk.cu",
    entry="hgemm_wgmma_streamk",
    design_doc="Osama et al., Stream-K: Work-centric Parallel Decomposition for Dense Matrix-Matrix "
    "Multiplication on the GPU (2023), stream-K over the last wave of data-parallel tiles; CUTLASS sm90 persistent stream-K "
    "tile scheduler (fix-up through a workspace and flags); builds on wgmma-staged",
    previous="wgmma-staged",
    # tail_partials and tail_ready (hopper_persistent.cuh): TAIL_MAX_BLOCKS x 2 consumers x 64 x 256 floats, and a
    # 4-byte flag for each block and consumer.
    module_global_bytes=160 * 2 * 64 * 256 * 4 + 160 * 2 * 4,
)


WGMMA_STREAMK_CLUSTER = replace(
    WGMMA_STREAMK,
    id="wgmma-streamk-cluster",
    title="Hopper AddMM: stream-K in 2-block clusters multicasting B",
    adds="wgmma-streamk run as thread-block clusters of two blocks, as wgmma-cluster is to wgmma-persistent: the "
    "two blocks of a cluster take vertically adjacent 128x256 tiles, which need the same slices of B, and each "
    "block's producer loads two of a slice's four 64-column B boxes and multicasts them by TMA into both blocks' "
    "stages, so B leaves L2 once per pair (32 KB instead of 48 KB per block and slice). A stage is refilled once "
    "the consumers of both blocks have released it. The schedule walks units of two tiles, the stream-K tail "
    "included: both blocks of a cluster run the same K slices of their own tiles, and each block's partial sums "
    "take the slot of its own block index. The producer needs 64 registers (it spills at 56). Why it pays now "
    "when wgmma-cluster did not: at 8192^3 on an H200 these kernels run at the power limit. Under ncu "
    "(results/h200-2026-11-29/why8192/, clocks free) wgmma-streamk took 2.216 M SM cycles against cuBLAS's "
    "2.312 M but ran at 1.444 GHz against 1.522, and moved 424 M L2 sectors against cuBLAS's 292 M (cuBLAS's "
    "kernel runs 1x2 clusters): fewer cycles, at a lower clock. Measured (H200, "
    "results/h200-2026-11-29/cluster_sk/, 16 rested rounds, % of cublas-addmm): 8192^3 101.6 against "
    "wgmma-streamk's 100.4 (1.4696 against 1.4870 ms), 4096^3 107.1 against 106.8; in 12 rounds (sizes/) "
    "6144^3 99.5 against 98.3, 5120^3 96.0 against 95.6, 10240^3 97.4 against 97.0, 3072^3 84.4 against 85.0. "
    "Paired A/B, every pair after 2 s of rest (hskc/): against cublas-addmm 0.9959 [0.994, 0.998] at 8192^3 "
    "and 0.9315 at 4096^3, against wgmma-streamk 0.9921 at 8192^3. Under ncu at 8192^3 (why_cluster/) it "
    "took 0.7 % more cycles than wgmma-streamk, at a 1.2 % higher SM clock (1.480 -> 1.498 GHz), with 8 % fewer "
    "L2 sectors; against cuBLAS's AddMM (why_cluster_cublas/) 3.9 % fewer cycles at a 3.0 % lower clock, where "
    "wgmma-streamk had run 5.1 % lower.",
    source="hgemm_wgmma_streamk_cluster.cu",
    entry="hgemm_wgmma_streamk_cluster",
    design_doc="CUDA Programming Guide, thread block clusters; PTX ISA cp.async.bulk.tensor .multicast::cluster, "
    "mbarrier.arrive .shared::cluster; Osama et al., Stream-K (2023); builds on wgmma-streamk",
    previous="wgmma-streamk",
    cluster=2,
)


HOPPER_KERNELS: tuple[KernelSpec, ...] = (
    KernelSpec(
        id="wgmma-tma",
        title="Hopper AddMM: TMA + wgmma, warp-specialised",
        adds="Hopper's own tensor-core path (sm_90a only), against wmma-async's cp.async + ldmatrix + mma.sync: "
        "the Tensor Memory Accelerator copies each 128x64 A tile and 64x256 B tile (tensor maps, one thread "
        "issues the bulk copies, edges zero-filled by the hardware) into 128-byte swizzled shared memory; "
        "wgmma.mma_async multiplies 64x256x16 per warp-group instruction straight from shared memory "
        "(no ldmatrix, no fragment registers); a 4-stage mbarrier pipeline with transaction counts replaces "
        "__syncthreads; a producer warp group (registers given away with setmaxnreg) feeds two consumer warp "
        "groups that each hold 64x256 float accumulators; alpha/beta epilogue from registers, C prefetched "
        "into L2 by the producer.",
        operation="hgemm_addmm",
        source="hgemm_wgmma_tma.cu",
        entry="hgemm_wgmma_tma",
        block=(384, 1),
        tile_m=128,
        tile_n=256,
        grid_order="cols_x",
        dtype="float16",
        params=dict(
            BM=128,
            BN=256,
            BK=64,
            STAGES=4,
            CONSUMERS=2,
            WGMMA_M=64,
            WGMMA_N=256,
            WGMMA_K=16,
            SWIZZLE_BYTES=128,
            THREADS=384,
            MIN_BLOCKS=1,
        ),
        multiple_of=16,
        dynamic_smem_bytes=197632,
        backend="nvcc",
        design_doc="PTX ISA: wgmma.mma_async (matrix descriptors, 128-byte swizzle, N-major B via imm-trans-b), "
        "cp.async.bulk.tensor, mbarrier transaction counts, setmaxnreg; CUDA driver API cuTensorMapEncodeTiled; "
        "builds on wmma-async",
        previous="wmma-async",
        group="tensor-core",
        arch="sm_90a",
        operand_args="tensor_maps",
    ),
    KernelSpec(
        id="wgmma-pingpong",
        title="Hopper AddMM: persistent ping-pong wgmma",
        adds="wgmma-tma's TMA + wgmma + mbarrier machinery, made persistent (one block per SM loops over the "
        "tiles in grouped order) and ping-pong: each consumer warp group owns a whole 128x128 tile (two "
        "m64n128k16 per K step, 128 float accumulators per thread) and the two take alternate tiles, so one "
        "group's alpha/beta epilogue (the float32 C read and D write) overlaps the other's multiplies; the "
        "producer runs up to 6 slices ahead across tile boundaries, so no tile starts on an empty pipeline; a "
        "turn barrier orders the two groups' K loops.",
        operation="hgemm_addmm",
        source="hgemm_wgmma_pingpong.cu",
        entry="hgemm_wgmma_pingpong",
        block=(384, 1),
        tile_m=128,
        tile_n=128,
        grid_order="cols_x",
        dtype="float16",
        params=dict(
            BM=128,
            BN=128,
            BK=64,
            STAGES=6,
            CONSUMERS=2,
            WGMMA_M=64,
            WGMMA_N=128,
            WGMMA_K=16,
            SWIZZLE_BYTES=128,
            THREADS=384,
            MIN_BLOCKS=1,
        ),
        multiple_of=16,
        dynamic_smem_bytes=197632,
        backend="nvcc",
        design_doc="CUTLASS KernelTmaWarpSpecializedPingpong (persistent tile scheduler, ordered math warp "
        "groups); PTX ISA wgmma.mma_async m64n128k16, mbarrier parity waits; builds on wgmma-tma",
        previous="wgmma-tma",
        group="tensor-core",
        arch="sm_90a",
        operand_args="tensor_maps",
        persistent=True,
    ),
    KernelSpec(
        id="wgmma-tma-store",
        title="Hopper AddMM: wgmma-tma with a TMA store epilogue",
        adds="wgmma-tma's block, main loop and 128x256 tile, with its epilogue moved onto the Tensor Memory "
        "Accelerator: once the consumers release the stages of the last slices but one, the producer copies the "
        "block's float C tile by TMA into three of the freed stage buffers (16 boxes of 64x32 floats, 128-byte "
        "swizzled) while the last slice is multiplied; each consumer warp group adds alpha*acc + beta*C there "
        "(conflict-free through the swizzle) and one thread issues TMA bulk tensor stores of D, waiting only "
        "until TMA has read shared memory: the block exits and its D writes drain while the next block on the "
        "SM multiplies. C and D come as tensor maps too.",
        operation="hgemm_addmm",
        source="hgemm_wgmma_tma_store.cu",
        entry="hgemm_wgmma_tma_store",
        block=(384, 1),
        tile_m=128,
        tile_n=256,
        grid_order="cols_x",
        dtype="float16",
        params=dict(TMA_STORE_PARAMS),
        multiple_of=16,
        dynamic_smem_bytes=197632,
        backend="nvcc",
        design_doc="CUTLASS sm90 TMA epilogue (smem staging, bulk tensor store); PTX ISA cp.async.bulk.tensor "
        "shared::cta -> global with bulk_group, cp.async.bulk.wait_group.read, fence.proxy.async; builds on "
        "wgmma-tma",
        previous="wgmma-tma",
        group="tensor-core",
        arch="sm_90a",
        operand_args="tensor_maps_cd",
    ),
    WGMMA_PERSISTENT,
    replace(
        WGMMA_PERSISTENT,
        id="wgmma-cluster",
        title="Hopper AddMM: 2-block clusters multicasting B",
        adds="wgmma-persistent run as thread-block clusters of two blocks on neighbouring SMs that take vertically "
        "adjacent 128x256 tiles, which need the same slices of B: each block's producer loads two of the four "
        "64-column B boxes of a slice and multicasts them by TMA into both blocks' stages, so B leaves L2 once per "
        "pair (32 KB instead of 48 KB per block and slice from L2). A stage is refilled only when the consumers "
        "of both blocks have released it (their warps arrive on both blocks' barriers, with CTA-scope release: "
        "cluster scope put a MEMBAR.ALL.GPU before every arrive and made it four times slower). Measured (H100): "
        "0.969 of cublas-addmm's time at 4096^3 and the same at 8192^3; against wgmma-persistent 1.2 % slower at "
        "4096^3 and the same at 8192^3 "
        "(interleaved A/B): the operand traffic from L2 that it halves for B is not what limits these kernels.",
        source="hgemm_wgmma_cluster.cu",
        entry="hgemm_wgmma_cluster",
        design_doc="CUDA Programming Guide, thread block clusters and distributed shared memory; PTX ISA "
        "cp.async.bulk.tensor .multicast::cluster, mapa, mbarrier.arrive .shared::cluster, barrier.cluster; "
        "builds on wgmma-persistent",
        previous="wgmma-persistent",
        cluster=2,
    ),
    replace(
        WGMMA_PERSISTENT,
        id="wgmma-persistent-bf16",
        title="Hopper AddMM, BF16: persistent wgmma on bfloat16 inputs",
        adds="wgmma-persistent with bfloat16 A and B instead of float16, and nothing else: the same source body "
        "(kernels/src/hopper_persistent.cuh, its input type a template parameter), block, tiles, ring, tile order "
        "and epilogue. Both types are 2 bytes, so the TMA boxes, swizzle and wgmma descriptors are unchanged; A's "
        "and B's tensor maps say BFLOAT16 and the wgmma instruction multiplies .bf16 inputs "
        "(m64n256k16.f32.bf16.bf16) into the same float32 accumulators, at the same tensor-core rate as float16 on "
        "Hopper. C and D stay float32. Its machine code is wgmma-persistent's instruction for instruction, registers "
        "included, but for the four HGMMA of each K slice, which read BF16. Compared with cuBLAS doing the same "
        "BF16 AddMM (cublas-addmm-bf16).",
        operation="bgemm_addmm",
        source="bgemm_wgmma_persistent.cu",
        entry="bgemm_wgmma_persistent",
        dtype="bfloat16",
        design_doc="PTX ISA wgmma.mma_async (.bf16 inputs, f32 accumulators); CUDA driver API "
        "cuTensorMapEncodeTiled with CU_TENSOR_MAP_DATA_TYPE_BFLOAT16; builds on wgmma-persistent",
        previous="wgmma-persistent",
    ),
    WGMMA_STAGED,
    WGMMA_STREAMK,
    replace(
        WGMMA_STREAMK,
        id="wgmma-streamk-bf16",
        title="Hopper AddMM, BF16: stream-K over the last wave on bfloat16 inputs",
        adds="wgmma-streamk with bfloat16 A and B instead of float16, and nothing else, as wgmma-persistent-bf16 is "
        "to wgmma-persistent: the same source body (kernels/src/hopper_persistent.cuh), block, tiles, ring, strips "
        "epilogue and stream-K tail; A's and B's tensor maps say BFLOAT16 and the wgmma instruction multiplies .bf16 "
        "inputs into the same float32 accumulators. C and D stay float32. Compared with cuBLAS doing the same BF16 "
        "AddMM (cublas-addmm-bf16). Measured (H200, results/h200-2026-11-29/quarter/hskbf16/, paired A/B): against "
        "cublas-addmm-bf16 0.944 at 4096^3, 1.045 at 5120^3, 0.960 at 8192^3 (capped pairs among them), and at 8192^3 "
        "with every pair at full clock 0.9987 [0.9974, 0.9997] (40 pairs after 2 s of rest each, "
        "results/h200-2026-11-29/full_clock/); against wgmma-persistent-bf16 0.934 at 5120^3 and 0.984 at 8192^3.",
        operation="bgemm_addmm",
        source="bgemm_wgmma_streamk.cu",
        entry="bgemm_wgmma_streamk",
        dtype="bfloat16",
        design_doc="PTX ISA wgmma.mma_async (.bf16 inputs, f32 accumulators); CUDA driver API "
        "cuTensorMapEncodeTiled with CU_TENSOR_MAP_DATA_TYPE_BFLOAT16; builds on wgmma-streamk",
        previous="wgmma-streamk",
    ),
    WGMMA_STREAMK_CLUSTER,
    replace(
        WGMMA_STREAMK_CLUSTER,
        id="wgmma-streamk-cluster-bf16",
        title="Hopper AddMM, BF16: stream-K in 2-block clusters on bfloat16 inputs",
        adds="wgmma-streamk-cluster with bfloat16 A and B instead of float16, and nothing else, as wgmma-streamk-bf16 "
        "is to wgmma-streamk: the same source body (kernels/src/hopper_persistent.cuh), clusters, tiles, ring, strips "
        "epilogue and stream-K tail; A's and B's tensor maps say BFLOAT16 and the wgmma instruction multiplies .bf16 "
        "inputs into the same float32 accumulators. C and D stay float32. Compared with cuBLAS doing the same BF16 "
        "AddMM (cublas-addmm-bf16). Measured (H200, results/h200-2026-11-29/hskcbf16/, paired A/B, every pair after "
        "2 s of rest): against cublas-addmm-bf16 0.9438 [0.938, 0.945] at 4096^3 and 0.9785 [0.978, 0.979] at "
        "8192^3; against wgmma-streamk-bf16 0.9872 at 8192^3.",
        operation="bgemm_addmm",
        source="bgemm_wgmma_streamk_cluster.cu",
        entry="bgemm_wgmma_streamk_cluster",
        dtype="bfloat16",
        design_doc="PTX ISA wgmma.mma_async (.bf16 inputs, f32 accumulators); CUDA driver API "
        "cuTensorMapEncodeTiled with CU_TENSOR_MAP_DATA_TYPE_BFLOAT16; builds on wgmma-streamk-cluster",
        previous="wgmma-streamk-cluster",
    ),
)
