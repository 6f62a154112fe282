"""The rewriting study's HNSW graphs built as Ray tasks (``engine: ray``): one graph per task, so a cluster with as
many free cores as graphs builds a run's graphs (three seeds, and S1-ann4's extra ones: 12 under the protocol) in
the time of one.

Each task builds its graph exactly as the local engine does (:func:`ingest.rewriting.ann.build_index`: one thread,
the seed as hnswlib's ``random_seed``, chunks inserted in index order), saves it with hnswlib's own writer and
returns the file's bytes; the driver writes them where the local engine saves that graph
(:func:`ingest.rewriting.ann.graph_path`, atomically) as each task finishes. The stage then loads every graph from
there (:func:`ingest.rewriting.ann.cached_index`), so the searches are those of the local build, and the saved files
are the local build's byte for byte (tests). The vectors go to the object store once and are shared by the tasks.
Graphs already saved for the same chunks and vectors are not built again. A warehouse held in memory has no folder
for graphs: its graphs are built locally, as before.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from ingest.rewriting.ann import AnnParams, build_index, graph_path, load_saved, save_graph


def _build_file(vectors: np.ndarray, seed: int, params: AnnParams) -> tuple[bytes, float]:
    """On a worker: the saved bytes of the graph of ``seed`` and the seconds its build took."""
    started = time.perf_counter()
    graph = build_index(vectors, seed, params)
    seconds = time.perf_counter() - started
    with tempfile.TemporaryDirectory(prefix="ragwh-graph-") as folder:
        file = Path(folder) / "graph.bin"
        graph.save_index(str(file))
        return file.read_bytes(), seconds


def build_on_ray(
    seeds,
    vectors: np.ndarray,
    params: AnnParams,
    folder: Path | None,
    digest: str | None,
    settings,
    timing: dict[str, float],
) -> list[int]:
    """Build and save, as Ray tasks, the graphs of ``seeds`` (None entries: exact search, skipped) not yet saved in
    ``folder`` for ``digest``; returns the seeds built. ``settings``: the run's
    :class:`ingest.retrieval.ray_engine.RaySettings` (the cluster joined, or a local instance started).
    ``timing["ann_build"]`` adds each task's own build seconds."""
    if folder is None or digest is None:
        return []
    wanted = [
        s
        for s in dict.fromkeys(seeds)
        if s is not None and load_saved(graph_path(folder, s, params, digest), vectors.shape) is None
    ]
    if not wanted:
        return []
    from ingest.retrieval.ray_engine import connect

    ray = connect(settings)
    build = ray.remote(num_cpus=1, max_retries=settings.max_task_retries)(_build_file)  # a lost worker: built again
    shared = ray.put(np.ascontiguousarray(vectors, dtype=np.float32))
    pending = {build.remote(shared, seed, params): seed for seed in wanted}
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        seed = pending.pop(done[0])
        data, seconds = ray.get(done[0])
        timing["ann_build"] = timing.get("ann_build", 0.0) + seconds
        save_graph(graph_path(folder, seed, params, digest), lambda file, data=data: Path(file).write_bytes(data))
    return wanted
