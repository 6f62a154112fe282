"""The seeded HNSW graphs of S1-ann4 (ingest/rewriting/ann.py): the docstring's worked example, exact
re-scoring and ordering, agreement with exact search when the graph search is exhaustive, one seed =
one graph (reproducible), and different seeds giving different approximate pools."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ingest.retrieval.topk import topk_inner_product
from ingest.rewriting.ann import AnnParams, build_index, search


def _unit(rng, n, d):
    x = rng.standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_worked_example():
    vectors = np.array([[1, 0], [0.6, 0.8], [0, 1]], dtype=np.float32)
    graph = build_index(vectors, 1, AnnParams())
    pos, scores = search(graph, vectors, np.array([[1, 0]], dtype=np.float32), 2, 20)
    assert pos.tolist() == [[0, 1]]
    assert np.allclose(scores, [[1.0, 0.6]], atol=1e-7)


def test_scores_are_exact_and_ties_break_by_position():
    vectors = np.array([[0, 1], [1, 0], [0, 1], [1, 0]], dtype=np.float32)
    graph = build_index(vectors, 3, AnnParams())
    pos, scores = search(graph, vectors, np.array([[0.6, 0.8]], dtype=np.float32), 4, 20)
    assert pos.tolist() == [[0, 2, 1, 3]]  # 0.8, 0.8, 0.6, 0.6: equal scores in index order
    assert scores.dtype == np.float64 and np.allclose(scores, [[0.8, 0.8, 0.6, 0.6]], atol=1e-7)
    pos, _ = search(graph, vectors, np.array([[1, 0]], dtype=np.float32), 10, 20)
    assert pos.shape == (1, 4)  # k is capped at the index size


def test_exhaustive_graph_search_equals_exact_search():
    rng = np.random.default_rng(0)
    vectors, queries = _unit(rng, 300, 16), _unit(rng, 25, 16)
    graph = build_index(vectors, 7, AnnParams(ef_construction=300))
    pos, scores = search(graph, vectors, queries, 20, 300)  # ef = n: the graph search visits everything
    exact_pos, exact_scores = topk_inner_product(queries, vectors, 20)
    assert np.array_equal(pos, exact_pos)
    assert np.allclose(scores, exact_scores, atol=1e-6)


def test_one_seed_one_graph_and_seeds_differ():
    rng = np.random.default_rng(1)
    vectors, queries = _unit(rng, 2000, 32), _unit(rng, 200, 32)
    params = AnnParams(m=4, ef_construction=20, ef_search=20)
    pools = {seed: search(build_index(vectors, seed, params), vectors, queries, 20, 20)[0] for seed in (1, 2)}
    again = search(build_index(vectors, 1, params), vectors, queries, 20, 20)[0]
    assert np.array_equal(pools[1], again)  # rebuilt with the same seed: the same pools
    assert not np.array_equal(pools[1], pools[2])  # another seed: another graph, other approximate pools
    exact = topk_inner_product(queries, vectors, 20)[0]
    recall = np.mean([len(set(a) & set(e)) / 20 for a, e in zip(pools[1], exact)])
    union = np.mean([len((set(a) | set(b)) & set(e)) / 20 for a, b, e in zip(pools[1], pools[2], exact)])
    assert 0.3 < recall < 1.0 and union > recall  # approximate, and a second graph finds more of the exact top 20


def _index(vectors: np.ndarray, docs: list[int]):
    from ingest.rewriting.index import ChunkIndex

    n = len(vectors)
    doc_ids = np.array([f"d{d:04d}" for d in docs], dtype=object)
    documents, codes = np.unique(doc_ids, return_inverse=True)
    return ChunkIndex(
        np.array([f"c{i}" for i in range(n)], dtype=object),
        doc_ids,
        codes.astype(np.int64),
        documents,
        [f"text {i}" for i in range(n)],
        vectors,
    )


def test_hnsw_pools_record_exact_membership_and_exact_equals_brute_force():
    """run_searches: ``in_exact`` per pool chunk = membership in the brute-force top P (by hand with
    set(); the graph is deliberately poor, so some pools miss); ``ann_seed`` None is brute force itself;
    two index seeds give two graphs."""
    from ingest.rewriting.textrun import Search, run_searches

    rng = np.random.default_rng(5)
    vectors, queries = _unit(rng, 1500, 32), _unit(rng, 40, 32)
    index = _index(vectors, list(range(1500)))  # one chunk per document
    params = AnnParams(m=2, ef_construction=4, ef_search=4)
    exact_pos, exact_scores = topk_inner_product(queries, vectors, 20)
    runs = {}
    for seed in (None, 42, 123):
        searches = [Search((i,), "q", 20, seed, 10) for i in range(len(queries))]
        runs[seed], _ = run_searches(index, searches, queries, scorer=None, lam=1.0, ann=params)
    for i, run in enumerate(runs[None]):
        assert np.array_equal(run.dense_pos, exact_pos[i]) and np.allclose(run.dense_score, exact_scores[i])
        assert run.dense_exact.all() and run.pool == 20
        assert run.mmr_pos.tolist() == exact_pos[i][:10].tolist()  # lambda 1: MMR = relevance order
    recalls = []
    for i, run in enumerate(runs[42]):
        assert run.dense_exact.tolist() == [p in set(exact_pos[i].tolist()) for p in run.dense_pos.tolist()]
        recalls.append(run.dense_exact.mean())
    assert 0.0 < np.mean(recalls) < 1.0  # approximate: the mart rewrite_ann_recall averages these
    assert any(not np.array_equal(a.dense_pos, b.dense_pos) for a, b in zip(runs[42], runs[123]))  # two graphs
    # recall_check=False: the same pools and lists, no exact search, HNSW flags -1 (written NULL), exact pools all in
    from ingest.rewriting.tables import _flags

    for seed in (None, 42):
        searches = [Search((i,), "q", 20, seed, 10) for i in range(len(queries))]
        unchecked, _ = run_searches(index, searches, queries, scorer=None, lam=1.0, ann=params, recall_check=False)
        for a, b in zip(unchecked, runs[seed]):
            assert np.array_equal(a.dense_pos, b.dense_pos) and np.array_equal(a.mmr_pos, b.mmr_pos)
            assert _flags(a).tolist() == ([1] * 20 if seed is None else [-1] * 20)


def test_recall_check_runs_beside_the_graphs_and_flags_do_not_depend_on_when(monkeypatch):
    """The recall check's exact searches run while a graph is still being built when a core is free
    (``recall_check_beside_graphs`` > 0), else after the graphs (0); either way the flags are membership in
    the brute-force top P, the same both ways. 1,100 texts: three units of 512; the builds are slowed so
    each is still running when the graph is wanted."""
    import dataclasses
    import time

    from ingest.rewriting import ann as ann_index
    from ingest.rewriting.textrun import Search, run_searches

    rng = np.random.default_rng(9)
    vectors, queries = _unit(rng, 3000, 16), _unit(rng, 1100, 16)
    index = dataclasses.replace(_index(vectors, list(range(3000))), graph_workers=1)
    params = AnnParams(m=2, ef_construction=4, ef_search=4)
    real = ann_index.cached_index

    def slow(*args, **kwargs):
        time.sleep(0.3)
        return real(*args, **kwargs)

    monkeypatch.setattr(ann_index, "cached_index", slow)
    searches = [Search((i,), "q", 20, seed, 10) for seed in (42, 123) for i in range(len(queries))]
    exact_pos, _ = topk_inner_product(queries, vectors, 20)
    out = {}
    for cores in (2, 1):  # 2: one graph builds on one of them, the check runs on the other; 1: none is free
        monkeypatch.setattr(ann_index, "usable_cores", lambda cores=cores: cores)
        runs, seconds = run_searches(
            index, searches, np.concatenate([queries, queries]), scorer=None, lam=1.0, ann=params
        )
        out[cores] = [r.dense_exact.tolist() for r in runs]
        assert seconds["recall_check"] > 0
        assert (seconds["recall_check_beside_graphs"] > 0) == (cores == 2)
        for i, run in enumerate(runs):
            assert run.dense_exact.tolist() == [p in set(exact_pos[i % 1100].tolist()) for p in run.dense_pos.tolist()]
    assert out[2] == out[1] and 0 < np.mean([np.mean(f) for f in out[1]]) < 1


def test_exact_checks_run_in_planned_units_and_drop_widened_ones():
    """_ExactChecks: 600 texts at pool 20 are two units (512 + 88); once the last 88 widened to 40, their
    pool-20 unit, not run yet, is dropped and one pool-40 unit runs instead; every result is brute force."""
    from ingest.rewriting.textrun import _ExactChecks

    rng = np.random.default_rng(3)
    vectors, texts = _unit(rng, 300, 8), _unit(rng, 600, 8)
    timing: dict[str, float] = {}
    checks = _ExactChecks(vectors, texts, timing)
    checks.plan({(20, (i,)): i for i in range(600)})
    assert checks.step() is True and len(checks.done) == 512
    checks.plan({**{(20, (i,)): i for i in range(512)}, **{(40, (i,)): i for i in range(512, 600)}}, drop_unwanted=True)
    assert checks.step() is False and checks.step() is False
    assert set(checks.done) == {(20, (i,)) for i in range(512)} | {(40, (i,)) for i in range(512, 600)}
    for pool, rows in ((20, range(512)), (40, range(512, 600))):
        exact, _ = topk_inner_product(texts, vectors, pool)
        assert all(np.array_equal(checks.done[(pool, (i,))], exact[i]) for i in rows)
    assert timing["recall_check"] > 0 and timing["recall_check_beside_graphs"] == timing["recall_check"]


def test_work_beside_the_builds_waits_for_a_free_core(monkeypatch):
    """_while_building calls ``idle`` only while the wanted graph is not ready and a core is free (2 cores,
    two builds: none until the other build ends), with BLAS limited to the free cores; it stops calling once
    ``idle`` says nothing is left, or once the wanted graph is ready."""
    import threading
    import time
    from concurrent.futures import Future

    from threadpoolctl import threadpool_info

    from ingest.rewriting import ann as ann_index

    monkeypatch.setattr(ann_index, "usable_cores", lambda: 2)
    wanted, other = Future(), Future()
    calls = []

    def idle():  # the wanted graph gets ready during the third call
        calls.append(
            (other.done(), wanted.done(), [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"])
        )
        if len(calls) == 3:
            wanted.set_result(None)
        return True

    threading.Timer(0.2, other.set_result, (None,)).start()
    t = time.perf_counter()
    assert ann_index._while_building(idle, wanted, [other]) is True
    assert time.perf_counter() - t >= 0.15 and len(calls) == 3  # waited for the other build, then 3 calls
    assert all(o and not w and blas and all(n == 1 for n in blas) for o, w, blas in calls)
    done = Future()
    left = [True, True, False]
    assert ann_index._while_building(lambda: left.pop(0), Future(), []) is False and left == []
    done.set_result(None)
    assert ann_index._while_building(lambda: pytest.fail("the graph is ready"), done, []) is True


def test_pools_widen_until_they_hold_k_documents():
    """Long documents fill the pool: 10 documents of 8 near-identical chunks each; a 20-chunk pool holds
    3 documents. Under fill 'widen' a text that must keep 5 widens to 40 chunks (5 documents), one that must
    keep 10 to 80 (every chunk), one of 2 keeps the configured 20; under 'fixed' (the paper's, the default)
    every pool stays at 20 chunks and the lists hold the 3 documents it has."""
    from ingest.rewriting.textrun import Search, run_searches

    rng = np.random.default_rng(2)
    centers = _unit(rng, 10, 16)
    vectors = np.repeat(centers, 8, axis=0) + 0.01 * rng.standard_normal((80, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = _index(vectors.astype(np.float32), [c for c in range(10) for _ in range(8)])
    query = (centers[0] + 0.9 * centers[1] + 0.8 * centers[2] + 0.7 * centers[3])[None, :].astype(np.float32)
    searches = [Search(("q",), "q", 20, None, k) for k in (2, 5, 10, 20)]
    fixed, _ = run_searches(index, searches, np.repeat(query, 4, axis=0), scorer=None, lam=0.85)
    assert [r.pool for r in fixed] == [20] * 4 and [len(r.dense_pos) for r in fixed] == [20] * 4
    assert [len(r.mmr_pos) for r in fixed] == [2, 3, 3, 3]
    runs, _ = run_searches(index, searches, np.repeat(query, 4, axis=0), scorer=None, lam=0.85, fill="widen")
    held = [len({index.doc_ids[p] for p in r.dense_pos}) for r in runs]
    assert [r.pool for r in runs] == [20, 40, 80, 80] and [len(r.dense_pos) for r in runs] == [20, 40, 80, 80]
    assert held[0] < 5 <= held[1] and held[2] == held[3] == 10
    assert [len(r.mmr_pos) for r in runs] == [2, 5, 10, 10]  # K documents, or every document the corpus has
    assert len({index.doc_ids[p] for p in runs[2].mmr_pos}) == 10
    # the same through an HNSW graph: a widened pool's recall check is at its widened size
    searches = [Search(("q",), "q", 20, 42, k) for k in (2, 5)]
    ann_runs, _ = run_searches(
        index,
        searches,
        np.repeat(query, 2, axis=0),
        scorer=None,
        lam=0.85,
        ann=AnnParams(m=2, ef_construction=4, ef_search=4),
        fill="widen",
    )
    assert [r.pool for r in ann_runs] == [20, 40]
    for r in ann_runs:
        exact, _ = topk_inner_product(query, index.vectors, r.pool)
        assert r.dense_exact.tolist() == [p in set(exact[0].tolist()) for p in r.dense_pos.tolist()]


def test_persisted_graph_is_loaded_and_searches_as_the_built_one(tmp_path):
    """cached_index: the first call builds and saves, the second loads the same graph (same search), a changed
    digest rebuilds and replaces the file; no folder: built in memory, nothing written."""
    from ingest.rewriting.ann import AnnParams, cached_index, graph_folder, search

    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((300, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    params = AnnParams(m=4, ef_construction=8, ef_search=4)
    folder = graph_folder(str(tmp_path / "w.duckdb"), "c", "e/x", "sentence:512/50")
    assert folder == tmp_path / "w.duckdb.ann" / "c" / "e_x" / "sentence_512_50"
    built, loaded = cached_index(vectors, 7, params, folder, "a" * 64)
    assert not loaded and [p.name for p in folder.iterdir()] == [f"g2_seed7_m4_efc8_{'a' * 24}.bin"]
    again, loaded = cached_index(vectors, 7, params, folder, "a" * 64)
    assert loaded
    queries = vectors[:20]
    for a, b in zip(search(built, vectors, queries, 10, 4), search(again, vectors, queries, 10, 4)):
        np.testing.assert_array_equal(a, b)
    _, loaded = cached_index(vectors, 7, params, folder, "b" * 64)
    assert not loaded and [p.name for p in folder.iterdir()] == [f"g2_seed7_m4_efc8_{'b' * 24}.bin"]
    assert cached_index(vectors, 7, params, None, None)[1] is False and graph_folder(None, "c", "e", "s") is None
    saved = folder / f"g2_seed7_m4_efc8_{'b' * 24}.bin"
    saved.write_bytes(saved.read_bytes()[:100])  # cut short: unreadable, so rebuilt and saved again
    rebuilt, loaded = cached_index(vectors, 7, params, folder, "b" * 64)
    assert not loaded and rebuilt.get_current_count() == 300 and saved.stat().st_size > 100


def test_extra_graphs_never_share_a_run_seeds_graph(tmp_path):
    """S1-ann4's graphs at run seed 42 and S1's graph at run seed 42001 (the old rule's 1000 s + 1) are five
    different graphs: graph 0 is the run seed's own, the extra ones lie above every run seed and below
    hnswlib's modulus 2^31 - 1 (so distinct seeds are distinct graphs). A saved graph of the older file
    layout (named by its seed only) is never loaded, and is removed when a graph is saved beside it."""
    from ingest.rewriting.ann import LEVEL_SEEDS, RUN_SEED_LIMIT, cached_index, graph_seeds

    ann4, s1 = graph_seeds(42, 4), graph_seeds(42001, 1)
    assert ann4[0] == 42 and s1 == (42001,) and len(set(ann4) | set(s1)) == 5
    assert ann4 == (42, 1435181059, 2052046708, 1945459689)  # SeedSequence(42, spawn_key=(ANN_SPAWN_KEY, g))
    for run_seed in (0, 1, 42, 123, 2024, 42000, RUN_SEED_LIMIT - 1):
        extra = graph_seeds(run_seed, 8)[1:]
        assert len(set(extra)) == 7 and all(RUN_SEED_LIMIT <= e < LEVEL_SEEDS for e in extra)
    rng = np.random.default_rng(4)
    vectors, queries = _unit(rng, 1500, 32), _unit(rng, 60, 32)
    params = AnnParams(m=2, ef_construction=4, ef_search=4)
    pools = [search(build_index(vectors, s, params), vectors, queries, 20, 4)[0] for s in (*ann4, *s1)]
    assert all(not np.array_equal(pools[i], pools[j]) for i in range(5) for j in range(i))  # five graphs
    folder = tmp_path / "g"
    folder.mkdir()
    # a file of the older layout under the name the seed would have had, holding another graph (42001's)
    build_index(vectors, 42001, params).save_index(str(folder / f"seed{ann4[1]}_m2_efc4_{'c' * 24}.bin"))
    graph, loaded = cached_index(vectors, ann4[1], params, folder, "c" * 64)
    assert not loaded and sorted(p.name for p in folder.iterdir()) == [f"g2_seed{ann4[1]}_m2_efc4_{'c' * 24}.bin"]
    assert np.array_equal(search(graph, vectors, queries, 20, 4)[0], pools[1])
    with pytest.raises(ValueError, match=r"run seed 1073741824 is outside \[0, 1073741824\)"):
        graph_seeds(RUN_SEED_LIMIT, 4)


def test_graphs_built_one_or_several_at_once_are_the_same_graphs(tmp_path):
    """graphs_in_turn yields the seeds in order whatever the workers, and each graph is the one built alone
    (same saved bytes): the number built at once changes the time, never a graph."""
    from ingest.rewriting.ann import AnnParams, graph_folder, graphs_in_turn

    rng = np.random.default_rng(5)
    vectors = rng.standard_normal((400, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    params = AnnParams(m=4, ef_construction=16, ef_search=8)
    seeds = [None, 42, 7, 2024, 99]
    saved = {}
    for workers in (1, 3):
        folder = graph_folder(str(tmp_path / f"w{workers}.duckdb"), "c", "e", "s")
        timing = {"ann_build": 0.0, "ann_load": 0.0}
        order = [
            seed for seed, graph in graphs_in_turn(seeds, vectors, params, folder, "d" * 64, timing, workers=workers)
        ]
        assert order == seeds and timing["ann_build"] > 0 and timing["ann_load"] == 0
        saved[workers] = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert len(saved[1]) == 4 and saved[1] == saved[3]


def test_build_workers_and_recall_check_settings(tmp_path):
    from ingest.rewriting.settings import RewriteSettings
    from ragwh.experiment.config.rewriting import parse_rewriting_config

    assert RewriteSettings(ann_build_workers=8).fingerprint() == RewriteSettings().fingerprint()
    assert "ann_recall_check" not in RewriteSettings().fingerprint()  # the default: as before the setting existed
    assert RewriteSettings(ann_recall_check=False).fingerprint() != RewriteSettings().fingerprint()
    exact = dict(dense="exact", strategies=("S1",))  # no pool is checked under exact search either way
    assert RewriteSettings(ann_recall_check=False, **exact).fingerprint() == RewriteSettings(**exact).fingerprint()
    assert RewriteSettings(ann_m=8).fingerprint() != RewriteSettings().fingerprint()
    with pytest.raises(ValueError, match="ann build_workers must be >= 1"):
        RewriteSettings(ann_build_workers=-1)
    base = {
        "name": "t",
        "study": "rewriting",
        "corpora": [{"name": "h", "loader": "hotpotqa", "sources": ["h.json"]}],
        "embedder": "all-MiniLM-L6-v2",
        "llm": {"backend": "openai", "model": "m"},
    }
    cfg = parse_rewriting_config({**base, "rewriting": {"ann": {"build_workers": 4}}}, tmp_path / "a.yml")
    assert cfg.settings.ann_build_workers == 4
    with pytest.raises(Exception, match=r"rewriting.ann.build_workers: expected an integer >= 1"):
        parse_rewriting_config({**base, "rewriting": {"ann": {"build_workers": 0}}}, tmp_path / "b.yml")
    cfg = parse_rewriting_config({**base, "rewriting": {"ann": {"recall_check": False}}}, tmp_path / "c.yml")
    assert cfg.settings.ann_recall_check is False
    with pytest.raises(Exception, match=r"rewriting.ann.recall_check: expected true or false, got 'no'"):
        parse_rewriting_config({**base, "rewriting": {"ann": {"recall_check": "no"}}}, tmp_path / "d.yml")


# Run in a fresh interpreter: in a process that has already freed a region of its heap as large as the block
# (a long test session), malloc serves the block from that region, which was mapped before the graph, so it
# is rightly not advised (hugepages' docstring) and there would be nothing to check.
ADVISED_SCRIPT = """
import contextlib, json, sys
import numpy as np
from ingest.rewriting import ann, hugepages

def vm_flags(address):  # the VmFlags of the mapping of /proc/self/smaps that holds address
    inside = False
    for line in open("/proc/self/smaps").read().splitlines():
        head = line.split()[0]
        if "-" in head and not head.endswith(":"):
            lo, hi = (int(x, 16) for x in head.split("-"))
            inside = lo <= address < hi
        elif inside and line.startswith("VmFlags:"):
            return line.removeprefix("VmFlags:").split()
    return None

x = np.random.default_rng(4).standard_normal((44_000, 384)).astype(np.float32)
x /= np.linalg.norm(x, axis=1, keepdims=True)
seen, real = [], hugepages.advise_new_blocks

@contextlib.contextmanager
def spy(min_bytes):
    with real(min_bytes) as advised:
        yield advised
    seen.append((min_bytes, list(advised)))

hugepages.advise_new_blocks = spy
graph = ann.build_index(x, 5, ann.AnnParams(m=4, ef_construction=8))
json.dump({"count": graph.get_current_count(), "seen": seen,
           "flags": [vm_flags(lo) for _, advised in seen for lo, _ in advised]}, sys.stdout)
"""


@pytest.mark.skipif(
    not Path("/sys/kernel/mm/transparent_hugepage/enabled").exists(),
    reason="a kernel without transparent huge pages: nothing to advise",
)
def test_node_block_is_advised_huge_pages():
    # 44,000 x 1,580 B (M 4): a 70 MB node block, above hugepages.MIN_BLOCK and malloc's largest mmap
    # threshold (32 MiB), so a mapping of its own, as a graph of the paper's scale gets
    done = subprocess.run(
        [sys.executable, "-c", ADVISED_SCRIPT],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["count"] == 44_000
    [(min_bytes, advised)] = out["seen"]
    assert min_bytes == 44_000 * 384 * 4 and len(advised) >= 1
    widest = max(range(len(advised)), key=lambda i: advised[i][1] - advised[i][0])
    lo, hi = advised[widest]
    assert hi - lo >= 44_000 * 1_580 - 4096
    assert "hg" in out["flags"][widest]  # MADV_HUGEPAGE took on the block the graph lives in


def test_only_new_parts_of_mappings_are_advised():
    from ingest.rewriting.hugepages import new_ranges

    before = [(0, 100), (200, 300), (400, 500)]
    # a range merged onto an old one (0-150), one spanning two old ones (180-520), an old one unchanged
    after = [(0, 150), (180, 520), (600, 700)]
    assert new_ranges(before, after) == [(100, 150), (180, 200), (300, 400), (500, 520), (600, 700)]
    assert new_ranges(before, before) == []


def test_small_blocks_and_memory_seen_before_are_not_advised():
    from ingest.rewriting import hugepages

    assert hugepages.anonymous_ranges()  # this process has anonymous mappings: /proc/self/maps was read
    with hugepages.advise_new_blocks(0) as advised:
        pass
    assert advised == []  # nothing new
    with hugepages.advise_new_blocks(0) as advised:
        block = np.ones(8 << 20, np.uint8)  # 8 MiB, under MIN_BLOCK (64 MiB)
    assert advised == [] and block.sum() == 8 << 20
