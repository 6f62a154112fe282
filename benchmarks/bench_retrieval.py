"""Top-k retrieval kernel vs a bare numpy GEMM + argpartition baseline, in the same process.

Random unit vectors (seeded): ``--queries`` x ``--index`` at each ``--dims``. For each dimension:

* baseline: per batch of ``--query-batch`` queries, ``S = Q @ X.T`` over the whole index, then
  ``argpartition`` to the top k and a sort of those k by score (no tie handling, no streaming);
* kernel: :func:`ingest.retrieval.topk.topk_inner_product` (streamed over index blocks, exact ties).

Reported: wall seconds (``time.perf_counter``), peak traced memory of the call (``tracemalloc``,
MiB; numpy registers its buffers there), ratio = kernel seconds / baseline seconds (target <= 1.5),
and agreement: the share of queries whose top-k lists are identical and, for the others, the largest
difference between the two lists' sorted scores recomputed in float64 (both lists are a valid top-k
when that is at float32 rounding level: different GEMM tile shapes sum in different orders, which
can swap two candidates whose scores differ by ~1e-7).

    .venv/bin/python benchmarks/bench_retrieval.py --queries 5000 --index 100000 --dims 384 1024
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

from ingest.retrieval.topk import topk_inner_product


def unit_vectors(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    v = rng.standard_normal((n, dim), dtype=np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return v


def baseline(queries: np.ndarray, index: np.ndarray, k: int, query_batch: int) -> np.ndarray:
    """Bare numpy: full-index GEMM per query batch, argpartition, sort the k by score."""
    out = np.empty((len(queries), k), dtype=np.int64)
    for s in range(0, len(queries), query_batch):
        scores = queries[s : s + query_batch] @ index.T
        top = np.argpartition(scores, -k, axis=1)[:, -k:]
        order = np.argsort(-np.take_along_axis(scores, top, axis=1), axis=1)
        out[s : s + query_batch] = np.take_along_axis(top, order, axis=1)
    return out


def measure(fn, *args, **kwargs) -> tuple[object, float, float]:
    """``(result, seconds, peak MiB)`` of one call."""
    tracemalloc.start()
    started = time.perf_counter()
    result = fn(*args, **kwargs)
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return result, seconds, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=5000)
    parser.add_argument("--index", type=int, default=100_000)
    parser.add_argument("--dims", type=int, nargs="+", default=[384, 1024])
    parser.add_argument("--k", type=int, default=50)
    parser.add_argument("--query-batch", type=int, default=512)
    parser.add_argument("--index-block", type=int, default=32768)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(
        f"{args.queries} queries x {args.index} vectors, k={args.k}, query batch {args.query_batch}, "
        f"index block {args.index_block}"
    )
    print("| dim | baseline s | kernel s | ratio | baseline peak MiB | kernel peak MiB | identical top-k lists |")
    print("|---|---|---|---|---|---|---|")
    for dim in args.dims:
        rng = np.random.default_rng(args.seed)
        index = unit_vectors(rng, args.index, dim)
        queries = unit_vectors(rng, args.queries, dim)
        base, base_s, base_mb = measure(baseline, queries, index, args.k, args.query_batch)
        (pos, _), kern_s, kern_mb = measure(
            topk_inner_product, queries, index, args.k, query_batch=args.query_batch, index_block=args.index_block
        )
        differ = np.flatnonzero((base != pos).any(axis=1))
        gap = 0.0
        for i in differ:
            q = queries[i].astype(np.float64)
            s_base = np.sort(index[base[i]].astype(np.float64) @ q)
            s_kern = np.sort(index[pos[i]].astype(np.float64) @ q)
            gap = max(gap, float(np.abs(s_base - s_kern).max()))
        agree = f"{1 - len(differ) / len(queries):.4f}" + (f" (max score gap {gap:.1e})" if len(differ) else "")
        print(
            f"| {dim} | {base_s:.1f} | {kern_s:.1f} | {kern_s / base_s:.2f} | {base_mb:.0f} | {kern_mb:.0f} | {agree} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
