"""The design documents the catalog was built from, and the passage each kernel follows.

The documents are notes in Chinese that the project started from; they are not in this repository (the catalog
names them by file, KernelSpec.design_doc). So the Kernels page says what each one is and quotes the passage a
kernel implements in English, the page's language, with the original beside it, and never names a file the reader
cannot open.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DesignDoc:
    """One seed document: its file name and what it is."""

    file: str
    title: str
    covers: str


@dataclass(frozen=True)
class Passage:
    """The part of a seed document one kernel follows: the section (in English), a short quote (original language;
    LaTeX $...$ and bold ** markers dropped, list items joined by " / "), its gist in English, the quote in English
    and, where the section's own title is Chinese, that title."""

    doc: str
    section: str
    quote: str
    gist: str
    english: str
    section_original: str = ""


DOCS: dict[str, DesignDoc] = {
    d.file: d
    for d in (
        DesignDoc(
            "000_f250783e70275440.txt",
            "SGEMM on CUDA, an optimisation walkthrough (Chinese blog notes)",
            "the SGEMM ladder, row-major C = A*B: v1 one thread per element of C; v2 32x32 shared-memory tiles; v3 "
            "128x128 block tiles with 8x8 per thread and BK = 8; v4 A tile stored transposed against bank "
            "conflicts; v5 double-buffered shared tiles",
        ),
        DesignDoc(
            "002_1261051180568d0e.txt",
            "Tiled matrix multiplication, the indexing explained (Chinese notes)",
            "classic TILE_WIDTH shared-memory tiling: which thread loads which element, and common indexing mistakes",
        ),
        DesignDoc(
            "003_7c25e50e7e1a5a5b.txt",
            "ECE408 lecture 5: locality and tiled matrix multiplication (Chinese notes)",
            "TILE_WIDTH tiles and where __syncthreads goes; assumes the width is a multiple of TILE_WIDTH",
        ),
        DesignDoc(
            "004_900f612d181a13a6.txt",
            "A CUDA AddMM operator explained (Chinese notes)",
            "tensor-core AddMM (A, B half; C, D float) with WMMA 16x16x16 fragments: 128x128 block tiles of 8 warps, "
            "128x64 K chunks, skewed shared memory against bank conflicts, int4 copies",
        ),
    )
}

_V1 = Passage(
    "000_f250783e70275440.txt",
    "SGEMM v1",
    "首先比较简单的思路是，既然要枚举 C 矩阵的 m*n 个元素，那就让每个线程对应一个 C 矩阵的元素",
    "the simplest plan: one thread per element of C, each looping over K for a dot product.",
    "The simplest idea to start with: since we have to enumerate the m*n elements of matrix C, let each thread "
    "handle one element of C.",
)
_TILES = Passage(
    "002_1261051180568d0e.txt",
    "overview",
    "每个线程计算C的一个元素 / 使用平铺技术将计算分解为多个阶段 / 每个阶段加载A和B的一个平铺到共享内存",
    "each thread computes one element of C; the work is split into phases, and each phase loads one tile of A "
    "and of B into shared memory.",
    "Each thread computes one element of C / tiling splits the computation into several phases / each phase loads "
    "one tile of A and of B into shared memory",
    "整体概念回顾",
)
PASSAGES: dict[str, Passage] = {
    "v1": _V1,
    "v1-coalesced": _V1,
    "v2": Passage(
        "000_f250783e70275440.txt",
        "SGEMM v2",
        "先从 A 矩阵和 B 矩阵取 32 * 32 的子矩阵到 shared memory，进行一番计算，再取 32 * 32 的子矩阵",
        "load 32x32 sub-matrices of A and B into shared memory, compute on them, then load the next pair, until "
        "the K dimension is done.",
        "First fetch 32 * 32 sub-matrices of A and B into shared memory, do some computation, then fetch the next "
        "32 * 32 sub-matrices",
    ),
    "tiled-8": _TILES,
    "tiled-16": _TILES,
    "tiled-32": _TILES,
    "v3": Passage(
        "000_f250783e70275440.txt",
        "SGEMM v3",
        "每个线程负责 8*8 的矩阵，每个 thread block 缩小到 16*16 个 thread",
        "each thread computes an 8x8 block of C and a thread block shrinks to 16x16 threads, so a block covers "
        "128x128 of C; the 8x8 results stay in registers.",
        "Each thread is responsible for an 8*8 matrix, and each thread block shrinks to 16*16 threads",
    ),
    "v4": Passage(
        "000_f250783e70275440.txt",
        "SGEMM v4",
        "一个简单的办法是，交换 aTile 的行和列的保存方式",
        "v3 reads aTile with a 256-byte stride between neighbouring threads, so they hit the same bank; storing "
        "aTile transposed makes the stride 32 bytes and removes most of the bank conflicts.",
        "A simple fix is to swap how aTile's rows and columns are stored",
    ),
    "v5": Passage(
        "000_f250783e70275440.txt",
        "SGEMM v5",
        "把 Buffer 空间复制两份，一份用来给当前轮做计算，同时去读取数据到另一份",
        "double buffering: two copies of the shared tiles, one computed on while the next tile loads into the "
        "other, then swap.",
        "Make two copies of the buffer space: one is used for the current round's computation while data is read "
        "into the other",
    ),
    "v6-vectorized": Passage(
        "000_f250783e70275440.txt",
        "SGEMM v4 / v5",
        "交换 aTile 的行和列的保存方式",
        "the transposed A tile of v4/v5 makes each thread's fragment contiguous, which v6 reads with 128-bit "
        "loads (LDS.128); the rest follows siboehm/SGEMM_CUDA kernel 6.",
        "Swap how aTile's rows and columns are stored",
    ),
    "wmma-addmm": Passage(
        "004_900f612d181a13a6.txt",
        "block layout",
        "一个Block用来计算一个128×128的分块, 这个分块被细分成8×8个tile, 一个tile是16×16个数",
        "a block of 8 warps computes a 128x128 tile of C as 8x8 WMMA tiles of 16x16, loading 128x64 chunks of A "
        "and B per step; shared-memory rows are skewed by 16 halves against bank conflicts.",
        "One block computes a 128×128 tile, which is subdivided into 8×8 tiles, each tile being 16×16 numbers",
        "分块布局",
    ),
    "wmma-async": Passage(
        "004_900f612d181a13a6.txt",
        "the shared-memory layout",
        "这里之所以要加16个额外的数是为了避免bank conflict",
        "the kernel it speeds up (wmma-addmm) pads each shared-memory row by 16 halves to avoid bank conflicts; "
        "wmma-async replaces the padding with an XOR swizzle and adds a 4-stage cp.async pipeline and 128x256 "
        "block tiles.",
        "The reason for adding 16 extra numbers here is to avoid bank conflicts",
        "创建共享内存",
    ),
}


def passage(kernel_id: str) -> tuple[DesignDoc, Passage] | None:
    """The seed document and passage a catalog kernel follows, or None (a kernel from another source)."""
    found = PASSAGES.get(kernel_id)
    return (DOCS[found.doc], found) if found else None
