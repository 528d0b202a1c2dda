"""Print the `auto` stage's table (scripts/gpu_check.sh): % of cuBLAS per kernel and shape from a bench results
document, and the configuration each kernel ran (the result's `config`; sgemm-auto's says record or default)."""

from __future__ import annotations

import json
import sys


def main(path: str) -> int:
    results = json.loads(open(path).read())["results"]
    shapes = list(dict.fromkeys(f"{r['m']}x{r['n']}x{r['k']}" for r in results))
    kernels = [k for k in dict.fromkeys(r["kernel"] for r in results) if k != "cublas"]
    by = {(r["kernel"], f"{r['m']}x{r['n']}x{r['k']}"): r for r in results}
    print("% of cuBLAS (TFLOP/s of cuBLAS in the last column)")
    print(f"{'shape':<16}" + "".join(f"{k:>12}" for k in kernels) + f"{'cublas TF':>12}")
    for shape in shapes:
        cells = []
        for kernel in kernels:
            r = by.get((kernel, shape), {})
            ok = r.get("status") == "ok" and r.get("pct_cublas") is not None
            cells.append(f"{r['pct_cublas']:>11.1f}%" if ok else f"{r.get('status', '-'):>12}")
        ref = by.get(("cublas", shape), {})
        print(f"{shape:<16}" + "".join(cells) + f"{ref.get('tflops') or 0:>12.2f}")
    print("\nconfiguration run (launch grid)")
    for shape in shapes:
        for kernel in kernels:
            r = by.get((kernel, shape), {})
            grid = (r.get("launch") or {}).get("grid")
            print(f"{shape:<16} {kernel:<11} {r.get('config')} grid={grid}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
