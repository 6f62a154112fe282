"""Benchmark: the rewriting stage's own cost at the paper's HotpotQA scale, models excluded.

A synthetic corpus (``--queries`` questions x ``--docs-per-query`` one-chunk documents, HotpotQA-like
sizes), a scripted LLM (deterministic texts derived from the query, through the real cache) and a
hash-seeded stand-in encoder (random unit vectors, 384-d) and, with ``--rerank``, a stand-in
cross-encoder (hash scores): nothing here is a result, it times everything but the models — sentence
windows, LLM cache and parsing, filtering, dense top-k, rerank plumbing, MMR, merge and the one write of
the lineage tables — for every strategy x 3 seeds. Then the stage is run again: zero LLM calls, zero
texts embedded.

    .venv/bin/python benchmarks/bench_rewriting.py --workdir /tmp/bench_rw --queries 5000
"""

from __future__ import annotations

import argparse
import resource
import time
import zlib
from pathlib import Path

import numpy as np

from ingest.chunking.sentence_windows import sentence_chunk_stage
from ingest.corpora.flat import FlatCorpus, write_flat_corpus
from ingest.llm import LLMCache
from ingest.llm.scripted import ScriptedBackend
from ingest.retrieval.embedders import EmbedderSpec
from ingest.retrieval.rerank import RerankerSpec
from ingest.rewriting.settings import RewriteSettings
from ingest.rewriting.stage import rewrite_stage
from warehouse.db import connect

WORDS = [
    "river",
    "castle",
    "market",
    "harbour",
    "library",
    "railway",
    "bridge",
    "tower",
    "garden",
    "museum",
    "festival",
    "treaty",
    "council",
    "island",
    "mountain",
    "valley",
    "forest",
    "village",
    "station",
    "temple",
]


class HashEncoder:
    """Stand-in bi-encoder: the sum of a hash-seeded random vector per lower-cased word (deterministic; a
    variant sharing most of the query's words lands inside the cosine band, as real ones do)."""

    def __init__(self) -> None:
        self.words: dict[str, np.ndarray] = {}

    def get_embedding_dimension(self) -> int:
        return 384

    def _word(self, w: str) -> np.ndarray:
        if w not in self.words:
            self.words[w] = np.random.default_rng(zlib.crc32(w.encode())).standard_normal(384)
        return self.words[w]

    def encode(self, texts, **_):
        return np.stack(
            [np.sum([self._word(w) for w in t.lower().split()] or [np.ones(384)], axis=0) for t in texts]
        ).astype(np.float32)


class HashCrossEncoder:
    def predict(self, pairs, **_):
        return np.array([(zlib.crc32((a + "\0" + b).encode()) % 10_000) / 10_000 for a, b in pairs])


def answer(request) -> str:
    q = request.messages[-1]["content"].rsplit(": ", 1)[-1].split("\n")[0]
    s = request.sampling.seed
    if request.prompt.startswith(("rewrite_hyde", "rewrite_query2doc")):
        return f"A passage about {q} written for seed {s}, with more words about the topic."
    return "\n".join(f"{i + 1}. {q.rstrip('?')} {WORDS[(s + i) % len(WORDS)]} variant {i}?" for i in range(3))


def build(con, n_queries: int, per_query: int) -> None:
    built = FlatCorpus("synthetic")
    rng = np.random.default_rng(0)
    for d in range(n_queries * per_query):
        body = " ".join(WORDS[i] for i in rng.integers(0, len(WORDS), 24)) + f" doc {d}."
        built.add_document(f"d{d}", f"Title {d}", body.capitalize(), "synthetic", None)
    for q in range(n_queries):
        qid = built.add_query(f"q{q}", f"Which {WORDS[q % len(WORDS)]} is in title {q * per_query}?", "synthetic")
        built.add_qrel(qid, f"synthetic/d{q * per_query}", 1)
        built.add_qrel(qid, f"synthetic/d{q * per_query + 1}", 1)
    write_flat_corpus(con, built)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--queries", type=int, default=5000)
    parser.add_argument("--docs-per-query", type=int, default=10)
    parser.add_argument("--rerank", action="store_true", help="time the rerank path with a hash cross-encoder")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    path = args.workdir / "bench_rewriting.duckdb"
    path.unlink(missing_ok=True)
    con = connect(path)
    t0 = time.perf_counter()
    build(con, args.queries, args.docs_per_query)
    print(
        f"synthetic corpus: {args.queries} queries, {args.queries * args.docs_per_query} documents "
        f"({time.perf_counter() - t0:.1f} s)"
    )
    t0 = time.perf_counter()
    chunks = sentence_chunk_stage(con, "synthetic")
    print(f"sentence windows: {chunks['chunks']} chunks ({time.perf_counter() - t0:.1f} s)")
    backend = ScriptedBackend(answer)
    kwargs = {"embedder": EmbedderSpec("hash-encoder", "unused"), "embed_model": HashEncoder(), "show_progress": False}
    if args.rerank:
        kwargs |= {"reranker": RerankerSpec("hash-reranker", "unused"), "rerank_model": HashCrossEncoder()}
    for attempt in ("first run", "rerun"):
        t0 = time.perf_counter()
        report = rewrite_stage(
            con, "synthetic", RewriteSettings(), llm=LLMCache(con, backend, progress=False), **kwargs
        )
        wall = time.perf_counter() - t0
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        steps = ", ".join(f"{k} {v:.1f}" for k, v in report["seconds"].items())
        print(f"{attempt}: {wall:.1f} s wall, peak RSS {peak:.0f} MiB; steps (s): {steps}")
        print(
            f"  {report['llm_calls']} LLM calls ({report['llm_cached']} cached), {report['texts_embedded']} texts embedded, "
            f"{report['searches']} distinct searches, {report['pairs_scored']} pairs reranked; rows: rewrites "
            f"{report['rewrites']:,}, rewrite_text_runs {report['rewrite_text_runs']:,}, rewrite_runs {report['rewrite_runs']:,}"
        )
    con.close()


if __name__ == "__main__":
    main()
