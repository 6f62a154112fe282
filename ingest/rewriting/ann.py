"""Seeded approximate-nearest-neighbour indexes: the study's dense stage (hnswlib HNSW graphs).

The paper's vector store is an approximate HNSW index (a Chroma-style store: cosine space, M 16,
ef_construction 100, a small ef_search) built per run, so even S1, which makes no LLM call, varies
across seeds. With ``dense: hnsw`` (the default) every search of a run with seed ``s`` goes through the
graph of *index seed* ``s`` (three seeds, three graphs); ``dense: exact`` searches exactly (checks).
The budget control S1-ann4 searches ``graphs`` (4) graphs of one run, index seeds
:func:`graph_seeds`: ``s`` first (S1's own graph), then three seeds drawn from ``SeedSequence(s,
spawn_key=(ANN_SPAWN_KEY, g))`` into ``[2^30, 2^31 - 1)``, a range no run seed reaches (run seeds lie in
``[0, 2^30)``; hnswlib reduces a seed modulo ``2^31 - 1`` and 0 to 1, so below that bound distinct seeds
other than 0 and 1 are distinct graphs), so S1-ann4's extra graphs at seed 42 are never S1's graph at another seed; it asks whether four
*different* approximate searches, unioned, buy what rewriting buys. Each graph is built
once per (corpus, embedder, index seed) within a run and shared by every strategy that searches it.
A graph is built over the chunk vectors (inner-product space; the vectors are L2-normalized, so inner
product = cosine):
``hnswlib.Index(space="ip")`` with ``M`` links per node, ``ef_construction`` and ``random_seed`` = the
seed (it draws each node's level, so the graphs differ by seed), chunks inserted in index order on one
thread (multi-threaded insertion is not reproducible), the graph's node block on transparent huge pages
where the kernel grants them (:mod:`ingest.rewriting.hugepages`: 12-13% less CPU per graph at 1.2M chunks,
the same graph). A search asks the graph for ``P`` neighbours
with ``ef = max(ef_search, P)`` (hnswlib requires ``ef >= k``).

Only *which* chunks enter the pool comes from the graph: each candidate's score is then recomputed
exactly, ``score = q . v`` in float64 over the stored float32 vectors (the exact search of the other
strategies scores in float32: the two agree to float32 rounding, ~1e-7), and the pool is ordered by
score descending, ties by index position, the exact search's order (:func:`ingest.retrieval.topk.
topk_inner_product`). So a candidate found by two graphs has one score, and the union by max score
(:mod:`ingest.rewriting.merge`) unions documents, never rescales them.

Graphs are persisted next to the warehouse (:func:`cached_index`): a file warehouse ``W`` keeps each
graph in ``W.ann/<corpus>/<embedder>/<chunkset>/g2_seed<s>_m<M>_efc<C>_<digest>.bin`` (``g2``: the file
layout :data:`FILE_LAYOUT`; files of an older layout are never loaded, and are removed when a graph is
saved beside them), where the digest is
``sha256`` of the index's chunk ids and vectors, so a rerun (or another strategy, seed or process) over
the same chunks, embedder and index seed loads the graph instead of rebuilding it, and any change of
the chunks or vectors builds a new one (the older file of that seed and settings is removed). A loaded
graph is the saved graph, so its searches equal the built graph's. An in-memory warehouse, or a folder
that cannot be written, builds every graph in memory as before.

Worked example: vectors ``[1, 0]``, ``[0.6, 0.8]``, ``[0, 1]`` and query ``[1, 0]`` with ``P = 2``: any
graph that finds the two nearest returns positions ``[0, 1]`` with scores ``[1.0, 0.6]``.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ingest.rewriting import hugepages
from udfs.cores import usable_cores

RESCORE_BATCH = 512  # queries re-scored at a time


@dataclasses.dataclass(frozen=True)
class AnnParams:
    """HNSW settings: ``m`` (links per node), ``ef_construction`` (candidate list while building) and
    ``ef_search`` (candidate list while searching; raised to the pool size when smaller)."""

    m: int = 16
    ef_construction: int = 100
    ef_search: int = 20


#: run seeds (rewriting.seeds) lie in [0, RUN_SEED_LIMIT); the extra graphs of S1-ann4 in [RUN_SEED_LIMIT, LEVEL_SEEDS)
RUN_SEED_LIMIT = 2**30
#: hnswlib draws node levels with std::default_random_engine (minstd_rand0), which reduces its seed modulo
#: 2^31 - 1 (and 0 to 1): two index seeds below this value (and not {0, 1}) give two different graphs
LEVEL_SEEDS = 2**31 - 1
#: the spawn key of the extra graphs' SeedSequence (no other SeedSequence of the project uses it)
ANN_SPAWN_KEY = 0x414E4E34  # "ANN4"
#: layout of the saved graphs' file names; a file of another layout is never loaded (and is removed)
FILE_LAYOUT = "g2"


def graph_seeds(run_seed: int, graphs: int) -> tuple[int, ...]:
    """The index seeds of a run's ``graphs`` HNSW graphs: graph 0 is ``run_seed`` itself (the graph S1
    searches), graph ``g >= 1`` is drawn from ``SeedSequence(run_seed, spawn_key=(ANN_SPAWN_KEY, g))``
    into ``[RUN_SEED_LIMIT, LEVEL_SEEDS)``, a range no run seed reaches, so an extra graph of one run seed
    is never the graph of another run seed (a drawn seed already taken by an earlier graph of the same
    run seed moves to the next free value). Run seeds must lie in ``[0, RUN_SEED_LIMIT)``.

    >>> graph_seeds(42, 4)
    (42, 1435181059, 2052046708, 1945459689)
    """
    if not 0 <= run_seed < RUN_SEED_LIMIT:
        raise ValueError(f"run seed {run_seed} is outside [0, {RUN_SEED_LIMIT}) (the HNSW index seeds' range)")
    width = LEVEL_SEEDS - RUN_SEED_LIMIT
    out = [run_seed]
    for g in range(1, graphs):
        drawn = int(np.random.SeedSequence(run_seed, spawn_key=(ANN_SPAWN_KEY, g)).generate_state(1, np.uint64)[0])
        seed = RUN_SEED_LIMIT + drawn % width
        while seed in out:
            seed = RUN_SEED_LIMIT + (seed - RUN_SEED_LIMIT + 1) % width
        out.append(seed)
    return tuple(out)


def build_index(vectors: np.ndarray, seed: int, params: AnnParams):
    """One HNSW graph over ``vectors`` (float32, (n, d), rows L2-normalized), built on one thread, its node
    block on transparent huge pages where the kernel grants them (:mod:`ingest.rewriting.hugepages`)."""
    import hnswlib

    n, dim = vectors.shape
    index = hnswlib.Index(space="ip", dim=dim)
    with hugepages.advise_new_blocks(n * dim * 4):  # the node block on huge pages: the same graph, faster
        index.init_index(max_elements=max(n, 1), ef_construction=params.ef_construction, M=params.m, random_seed=seed)
    index.set_num_threads(1)
    index.add_items(np.ascontiguousarray(vectors, dtype=np.float32), np.arange(n))
    return index


def graph_folder(warehouse: str | None, corpus: str, embedder: str, chunkset: str) -> Path | None:
    """Where the graphs of (corpus, embedder, chunkset) of the warehouse file ``warehouse`` live (None: in memory)."""
    if not warehouse or warehouse == ":memory:":
        return None
    safe = [re.sub(r"[^A-Za-z0-9._-]", "_", part) for part in (corpus, embedder, chunkset)]
    return Path(f"{warehouse}.ann").joinpath(*safe)


def cached_index(vectors: np.ndarray, seed: int, params: AnnParams, folder: Path | None, digest: str | None):
    """``(graph, loaded)``: the graph of ``seed`` loaded from ``folder`` when saved there for ``digest``, else
    built (:func:`build_index`) and saved (module doc); ``loaded`` says which."""
    if folder is None or digest is None:
        return build_index(vectors, seed, params), False
    path = graph_path(folder, seed, params, digest)
    graph = load_saved(path, vectors.shape)
    if graph is not None:
        return graph, True
    graph = build_index(vectors, seed, params)
    save_graph(path, graph.save_index)
    return graph, False


def graph_path(folder: Path, seed: int, params: AnnParams, digest: str) -> Path:
    """The file of the graph of ``seed`` over the chunks and vectors of ``digest`` (module doc)."""
    return folder / f"{FILE_LAYOUT}_seed{seed}_m{params.m}_efc{params.ef_construction}_{digest[:24]}.bin"


def load_saved(path: Path, shape: tuple[int, int]):
    """The graph saved at ``path`` for ``shape`` (n vectors, dim), or None when there is none that reads whole."""
    import hnswlib

    if not path.is_file():
        return None
    n, dim = shape
    graph = hnswlib.Index(space="ip", dim=dim)
    try:
        graph.load_index(str(path), max_elements=max(n, 1))
    except RuntimeError:  # unreadable (cut short, another hnswlib's format): rebuilt and saved again
        return None
    return graph if graph.get_current_count() == n else None


def save_graph(path: Path, write: Callable[[str], None]) -> bool:
    """Save a graph at ``path`` with ``write(file)`` atomically (a reader never sees a half-written graph), removing
    this seed's graph of older chunks and graphs of an older layout; False when the folder cannot be written (the
    graph then lives in memory for this run only)."""
    folder, stem = path.parent, path.name.rsplit("_", 1)[0]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for old in [
            *folder.glob(f"{stem}_*.bin"),
            *(p for p in folder.glob("*.bin") if not p.name.startswith(f"{FILE_LAYOUT}_")),
        ]:
            old.unlink(missing_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        write(str(tmp))
        os.replace(tmp, path)
    except OSError:
        return False
    return True


def graphs_in_turn(
    seeds,
    vectors: np.ndarray,
    params: AnnParams | None,
    folder: Path | None,
    digest: str | None,
    timing: dict[str, float],
    workers: int | None = None,
    idle: Callable[[], bool] | None = None,
):
    """Yield ``(seed, graph)`` for ``seeds`` in order (``None``: exact search, no graph), each graph from
    :func:`cached_index`. Up to ``workers`` (default: the usable cores, at most 2; the rewriting stage passes
    what :func:`ingest.rewriting.index.check_index_memory` allows) graphs are built at once, each
    on one thread (hnswlib releases the GIL; a graph built on one thread is the same whichever thread
    builds it), and at most ``workers`` are alive while one is searched, so memory holds a few graphs,
    never all of a run's. ``timing["ann_build" | "ann_load"]`` adds each graph's own seconds (summed
    over threads, so it can exceed the wall time). ``idle``: work that needs no graph, one unit per call
    (it returns whether more is left), run on this thread while the graph to yield next is not ready and
    fewer graphs are being built than there are usable cores (the last graphs of a run build alone on a
    2-core machine), with BLAS limited to the free cores (:func:`_while_building`)."""
    import time
    from concurrent.futures import ThreadPoolExecutor

    def make(seed):
        t = time.perf_counter()
        graph, loaded = cached_index(vectors, seed, params, folder, digest)
        return graph, loaded, time.perf_counter() - t

    queue = [s for s in seeds if s is not None]
    if None in seeds:
        yield None, None
    workers = max(1, min(workers or min(usable_cores(), 2), len(queue) or 1))
    with ThreadPoolExecutor(workers) as pool:
        pending = [(s, pool.submit(make, s)) for s in queue[: workers - 1]]
        for k, seed in enumerate(queue):
            if k + workers - 1 < len(queue):  # keep the next ones building while this one is searched
                nxt = queue[k + workers - 1]
                pending.append((nxt, pool.submit(make, nxt)))
            _, future = pending.pop(0)
            if idle is not None and not _while_building(idle, future, [f for _, f in pending]):
                idle = None  # nothing left to do meanwhile
            graph, loaded, seconds = future.result()
            del future  # it holds the graph too
            timing["ann_load" if loaded else "ann_build"] += seconds
            yield seed, graph
            del graph


def _while_building(idle: Callable[[], bool], future, others) -> bool:
    """Call ``idle()`` while ``future`` (the graph wanted next) is not done, each call with BLAS limited to the
    cores no graph build holds (at most BLAS's own thread count), and only while one is free (else wait for a build to end); returns whether
    ``idle`` has more to do."""
    from concurrent.futures import FIRST_COMPLETED, wait

    from threadpoolctl import threadpool_info, threadpool_limits

    cores, blas = usable_cores(), None
    while not future.done():
        building = [f for f in (future, *others) if not f.done()]
        free = cores - len(building)
        if free < 1:
            wait(building, return_when=FIRST_COMPLETED)
            continue
        if blas is None:  # never more threads than BLAS was given (OPENBLAS_NUM_THREADS and the like)
            blas = max((i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"), default=cores)
        with threadpool_limits(limits=min(free, blas), user_api="blas"):
            if not idle():
                return False
    return True


def search(index, vectors: np.ndarray, queries: np.ndarray, k: int, ef_search: int) -> tuple[np.ndarray, np.ndarray]:
    """Per query row, the graph's ``min(k, n)`` candidates as positions, re-scored exactly and ordered by
    score descending then position (module doc); returns ``(positions int64 (q, k'), scores float64)``."""
    n = vectors.shape[0]
    k = min(k, n)
    if len(queries) == 0 or k == 0:
        return np.zeros((len(queries), k), np.int64), np.zeros((len(queries), k))
    index.set_ef(max(ef_search, k))
    index.set_num_threads(1)
    labels, _ = index.knn_query(np.ascontiguousarray(queries, dtype=np.float32), k=k)
    labels = labels.astype(np.int64)
    scores = np.empty(labels.shape, dtype=np.float64)
    for lo in range(0, len(labels), RESCORE_BATCH):  # bounded memory: RESCORE_BATCH x k x d doubles at a time
        part = slice(lo, lo + RESCORE_BATCH)
        scores[part] = np.einsum(
            "qkd,qd->qk", vectors[labels[part]].astype(np.float64), queries[part].astype(np.float64)
        )
    order = np.lexsort((labels, -scores), axis=1)
    return np.take_along_axis(labels, order, 1), np.take_along_axis(scores, order, 1)
