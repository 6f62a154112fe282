"""Benchmark: does HNSW construction grow faster than N log N because of the stand-in's vectors or the machine?

An HNSW insertion's cost grows with the *intrinsic* dimension of the data (the graph navigates worse the higher
it is), and the scale benchmark's stand-in embedder (``hash-standin-384``, hashed words) spreads its vectors far
more evenly over the sphere than a trained model does. This script estimates the intrinsic dimension of both
(TwoNN, Facco et al. 2017, Sci. Rep. 7:12140: ``d = n / sum(log(r2 / r1))`` over each point's first and second
nearest neighbours) and writes vectors of a chosen intrinsic dimension, so one graph's construction can be timed
against N on data shaped like a model's (``bench_hnsw_pages.py build --rows N``)::

    PYTHONPATH=$PWD python benchmarks/bench_hnsw_dimension.py embed-scifact --out /work/scifact_minilm.npy
    PYTHONPATH=$PWD python benchmarks/bench_hnsw_dimension.py twonn --vectors /work/scifact_minilm.npy
    PYTHONPATH=$PWD python benchmarks/bench_hnsw_dimension.py twonn --vectors /work/vectors.npy --rows 5183
    PYTHONPATH=$PWD python benchmarks/bench_hnsw_dimension.py synth --dim 24 --rows 1213191 --out /work/d24.npy
    PYTHONPATH=$PWD python benchmarks/bench_hnsw_pages.py build --vectors /work/d24.npy --pages huge --rows 75824

``synth``: ``normalize(Z @ Q.T)`` with ``Z ~ N(0, I_dim)`` and ``Q`` a random 384 x ``dim`` orthonormal map (seed
0): unit vectors in 384 dimensions on a ``dim``-dimensional subspace, the same bytes per vector as the stand-in's.
Results: benchmarks/README.md ("A graph's construction and the data's intrinsic dimension").
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from bench_hnsw_pages import sample_rows

DIM = 384


def twonn(x: np.ndarray, block: int = 2048) -> tuple[float, int]:
    """(TwoNN intrinsic dimension of the unit vectors ``x``, points used): exact first and second neighbours by
    blocked inner products; points with a duplicate (r1 = 0) are left out, as the estimator requires."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    logs = []
    for lo in range(0, len(x), block):
        sims = x[lo : lo + block] @ x.T
        sims[np.arange(len(sims)), np.arange(lo, lo + len(sims))] = -np.inf  # not its own neighbour
        top2 = -np.partition(-sims, 1, axis=1)[:, :2]
        top2.sort(axis=1)
        r1 = np.sqrt(np.maximum(2.0 - 2.0 * top2[:, 1].astype(np.float64), 0.0))
        r2 = np.sqrt(np.maximum(2.0 - 2.0 * top2[:, 0].astype(np.float64), 0.0))
        ok = r1 > 1e-9
        logs.append(np.log(r2[ok] / r1[ok]))
    logs = np.concatenate(logs)
    return float(len(logs) / logs.sum()), int(len(logs))


def synth(dim: int, rows: int, seed: int = 0, block: int = 65_536) -> np.ndarray:
    """``rows`` unit vectors in :data:`DIM` dimensions of intrinsic dimension ``dim`` (module doc), float32."""
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((DIM, dim)))
    out = np.empty((rows, DIM), dtype=np.float32)
    for lo in range(0, rows, block):
        z = rng.standard_normal((min(block, rows - lo), dim))
        v = z @ q.T
        out[lo : lo + len(v)] = v / np.linalg.norm(v, axis=1, keepdims=True)
    return out


def embed_scifact(data: Path, rows: int | None) -> np.ndarray:
    """all-MiniLM-L6-v2 (fp32) vectors, normalized, of SciFact's abstracts (title and text), in file order."""
    from ingest.retrieval.embedders import resolve_embedder

    texts = []
    with open(data / "beir_scifact" / "corpus.jsonl", encoding="utf-8") as handle:
        for line in handle:
            doc = json.loads(line)
            texts.append(f"{doc.get('title', '')} {doc.get('text', '')}".strip())
    texts = texts[:rows] if rows else texts
    model = resolve_embedder("all-MiniLM-L6-v2", "fp32").load("cpu")
    t = time.perf_counter()
    x = model.encode(texts, batch_size=64, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=True)
    print(f"embedded {len(texts)} abstracts in {time.perf_counter() - t:.1f} s", flush=True)
    return x.astype(np.float32)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    tw = sub.add_parser("twonn")
    tw.add_argument("--vectors", type=Path, required=True)
    tw.add_argument("--rows", type=int, help="a sample of this many vectors (seed 0)")
    sy = sub.add_parser("synth")
    sy.add_argument("--dim", type=int, required=True)
    sy.add_argument("--rows", type=int, required=True)
    sy.add_argument("--seed", type=int, default=0)
    sy.add_argument("--out", type=Path, required=True)
    em = sub.add_parser("embed-scifact")
    em.add_argument("--data", type=Path, default=Path("../shared/data"))
    em.add_argument("--rows", type=int)
    em.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    if args.cmd == "twonn":
        x = np.load(args.vectors, mmap_mode="r")
        pick = sample_rows(len(x), args.rows)
        d, n = twonn(np.asarray(x if pick is None else x[pick]))
        print(f"{args.vectors}: TwoNN intrinsic dimension {d:.1f} over {n} points", flush=True)
    elif args.cmd == "synth":
        np.save(args.out, synth(args.dim, args.rows, args.seed))
        print(f"wrote {args.out}: {args.rows} x {DIM}, intrinsic dimension {args.dim}", flush=True)
    else:
        x = embed_scifact(args.data, args.rows)
        np.save(args.out, x)
        print(f"wrote {args.out}: {x.shape}", flush=True)


if __name__ == "__main__":
    main()
