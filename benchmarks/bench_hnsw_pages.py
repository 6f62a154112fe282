"""Benchmark: one HNSW graph built with its node block on huge pages or on ordinary pages (same graph).

Two runs side by side, one per core, as the rewriting stage builds two graphs on a 2-core machine::

    # the vectors of a bench_scale.py warehouse (after its embed stage), once
    RAGWH_STANDIN_EMBEDDER=1 PYTHONPATH=$PWD python benchmarks/bench_hnsw_pages.py export \\
        --warehouse /work/scale512/scale.duckdb --out /work/vectors.npy
    PYTHONPATH=$PWD python benchmarks/bench_hnsw_pages.py build --vectors /work/vectors.npy --pages ordinary &
    PYTHONPATH=$PWD python benchmarks/bench_hnsw_pages.py build --vectors /work/vectors.npy --pages huge

``--rows N`` builds the graph of N of the vectors (drawn with seed 0) instead, for the growth of a
graph's construction with its size. Each ``build`` prints its CPU seconds and the process's ``AnonHugePages``; ``--save`` writes the graph, so
``cmp`` can show the two are the same bytes. Results: benchmarks/README.md ("Huge pages for the graphs").
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path

import numpy as np


def export(warehouse: Path, out: Path) -> None:
    """The chunk vectors of the bench_scale corpus, in index order, as one float32 .npy."""
    import duckdb

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench_scale

    from ingest.chunking.sentence_windows import chunkset_name
    from ingest.retrieval.embedders import resolve_embedder
    from ingest.retrieval.standin import STANDIN_NAME
    from ingest.rewriting.index import load_index
    from ingest.rewriting.vectors import Embedder

    spec = resolve_embedder(STANDIN_NAME)
    con = duckdb.connect(str(warehouse), read_only=True)
    s = bench_scale._settings()
    index = load_index(
        con,
        bench_scale.CORPUS,
        chunkset_name(s.chunk_tokens, s.chunk_overlap),
        Embedder(spec, load=spec.load),
        show_progress=False,
        keep_texts=False,
    )
    np.save(out, index.vectors)
    print(f"wrote {out}: {index.vectors.shape}")


def sample_rows(n_all: int, rows: int | None) -> np.ndarray | None:
    """``rows`` of ``n_all`` drawn without replacement (seed 0), ascending: a smaller graph over the same
    distribution of vectors (the corpus is stored source by source, so a prefix would not be); None: all."""
    if rows is None or rows >= n_all:
        return None
    if rows < 1:
        raise ValueError(f"--rows must be >= 1, got {rows}")
    return np.sort(np.random.default_rng(0).choice(n_all, rows, replace=False))


def build(vectors: Path, pages: str, seed: int, save: Path | None, rows: int | None = None) -> None:
    from ingest.rewriting import ann, hugepages

    x = np.load(vectors, mmap_mode="r")
    pick = sample_rows(len(x), rows)
    x = np.array(x if pick is None else x[pick], dtype=np.float32, order="C")  # in memory, not the file's pages
    if pages == "ordinary":
        hugepages.advise_new_blocks = lambda min_bytes: contextlib.nullcontext([])
    t = time.process_time()
    graph = ann.build_index(x, seed, ann.AnnParams())
    cpu = time.process_time() - t
    huge = next((line.split()[1] for line in open("/proc/self/smaps_rollup") if line.startswith("AnonHugePages")), "?")
    print(f"{pages}: {len(x)} nodes, seed {seed}, {cpu:.1f} CPU-s, AnonHugePages {huge} kB", flush=True)
    if save:
        graph.save_index(str(save))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    ex = sub.add_parser("export")
    ex.add_argument("--warehouse", type=Path, required=True)
    ex.add_argument("--out", type=Path, required=True)
    bu = sub.add_parser("build")
    bu.add_argument("--vectors", type=Path, required=True)
    bu.add_argument("--pages", choices=("huge", "ordinary"), required=True)
    bu.add_argument("--seed", type=int, default=42)
    bu.add_argument("--save", type=Path)
    bu.add_argument("--rows", type=int, help="a graph of this many of the vectors (sampled; growth with N)")
    args = ap.parse_args()
    if args.cmd == "export":
        export(args.warehouse, args.out)
    else:
        build(args.vectors, args.pages, args.seed, args.save, args.rows)


if __name__ == "__main__":
    main()
