"""HNSW graphs as Ray tasks (``engine: ray``): each graph's file is the local build's byte for byte, saved where
the local engine saves it, and graphs already saved are not built again. One local Ray instance (2 CPUs); skips
only when Ray is not installed."""

from __future__ import annotations

import numpy as np

from ingest.retrieval.ray_engine import RaySettings
from ingest.rewriting.ann import AnnParams, cached_index, graph_path
from ingest.rewriting.ann_ray import build_on_ray


def _vectors(n: int = 600, dim: int = 16) -> np.ndarray:
    v = np.random.default_rng(7).standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_graphs_built_as_ray_tasks_are_the_local_files_byte_for_byte(ray_instance, tmp_path):
    vectors, params, digest = _vectors(), AnnParams(m=8, ef_construction=40, ef_search=10), "ab" * 32
    seeds = [None, 42, 7, 1435181059]
    local, remote = tmp_path / "local", tmp_path / "ray"
    for seed in seeds[1:]:
        cached_index(vectors, seed, params, local, digest)
    timing: dict[str, float] = {}
    built = build_on_ray(seeds, vectors, params, remote, digest, RaySettings(concurrency=1), timing)
    assert built == [42, 7, 1435181059] and timing["ann_build"] > 0
    for seed in seeds[1:]:
        mine, theirs = graph_path(local, seed, params, digest), graph_path(remote, seed, params, digest)
        assert theirs.name == mine.name and theirs.read_bytes() == mine.read_bytes(), seed
    # the stage then loads them: the same graph, and nothing is built a second time
    graph, loaded = cached_index(vectors, 7, params, remote, digest)
    assert loaded and graph.get_current_count() == len(vectors)
    assert build_on_ray(seeds, vectors, params, remote, digest, RaySettings(concurrency=1), {}) == []
    # a warehouse in memory has no folder for graphs: nothing to build there
    assert build_on_ray(seeds, vectors, params, None, None, RaySettings(concurrency=1), {}) == []
