"""BM25 first-stage runs over any condition's texts: a lexical system beside the dense embedders.

Library: ``bm25s`` (eager sparse scoring; Lù 2024, arXiv 2407.03618), chosen because it reproduces the
Lucene BM25 variants exactly (Kamphuis et al. 2020) in numpy/scipy, orders of magnitude faster than
``rank_bm25``; stemming with ``PyStemmer`` (Snowball). For query q and text d of the condition's index
(the exact text it embeds: prefix + content, ``int_condition_texts.text``)::

    score(q, d) = Σ_{t in q} idf(t) · tf(t, d) / (tf(t, d) + k1 · (1 - b + b · |d| / avgdl))   (method lucene)
    idf(t)      = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

with N the texts of the (corpus, condition) index, df(t) the texts holding term t, tf its count in d,
|d| the text's terms after stopwords and stemming and avgdl their mean; a term repeated in the query
counts once per occurrence (as in Lucene's Boolean query). ``method`` ``robertson`` uses
idf = ln((N - df + 0.5) / (df + 0.5)) floored at 0 and the same term-frequency part; ``atire``
idf = ln(N / df) and tf·(k1 + 1) / (tf + k1 · (...)) (bm25s's definitions).

Terms: lower-cased, split with the regex ``(?u)\\b\\w\\w+\\b`` (runs of two or more word characters, as
bm25s and scikit-learn do), stopwords removed (``english``: Lucene's 33-word English list), stemmed
(``porter``: the original Porter algorithm, as Lucene's English analyzer; any PyStemmer algorithm, or
``none``). Defaults k1 = 0.9, b = 0.4: Anserini / Pyserini's BM25, whose "flat" run (title + text as
one field, as condition DOC embeds a BEIR document) is the reference figure for BEIR corpora.

Rankings: per query the chunks with a positive score, at most ``k``, by score descending, ties in the
tie order of every ranking (document, then chunk number: :mod:`ingest.retrieval.ties`). A query that
shares no term with any text has no positive score and no ranking (counted in the stage report).
Two-stage conditions (A4, G4) route by the mean of the chunks' embedding vectors, which BM25 does not
have: they are reported as not run for BM25.

Storage: ``runs`` with ``embedder`` = the system's name (``bm25`` unless the settings name another),
``reranker`` 'none'; ``run_manifest.system_kind`` = 'bm25' and ``system_params`` = the JSON of
:meth:`BM25Settings.params` (k1, b, method, tokenizer, stopwords, stemmer, library versions). Each
(corpus, condition) run carries a fingerprint of its settings, texts and queries; unchanged runs are
skipped.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json

import duckdb
import numpy as np
import pyarrow as pa
import scipy.sparse as sp

from ingest.retrieval.embed import arrow_query, require_condition_texts
from ingest.retrieval.progress import progress_bar
from ingest.retrieval.retrieve import (
    RetrieveError,
    retrieval_modes,
    retrieval_units,
    run_table,
    stored_fingerprint,
    write_run,
)
from ingest.retrieval.ties import tie_order
from ingest.retrieval.topk import topk_rows

TOKEN_PATTERN = r"(?u)\b\w\w+\b"
METHODS = ("lucene", "robertson", "atire")
STOPWORDS = ("english", "none")
FINGERPRINT_VERSION = "bm25-v1"
SYSTEM_KIND = "bm25"
_QUERY_BATCH = 256


@dataclasses.dataclass(frozen=True)
class BM25Settings:
    """One BM25 system: its stored ``name`` and scoring parameters (module docstring)."""

    name: str = "bm25"
    k1: float = 0.9
    b: float = 0.4
    method: str = "lucene"
    stopwords: str = "english"
    stemmer: str = "porter"

    def __post_init__(self) -> None:
        import Stemmer

        if not self.name or any(ch.isspace() for ch in self.name) or "@" in self.name:
            raise ValueError(f"BM25 system name {self.name!r}: a non-empty name without spaces or '@'")
        if not (self.k1 >= 0 and 0 <= self.b <= 1):
            raise ValueError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={self.k1}, b={self.b}")
        if self.method not in METHODS:
            raise ValueError(f"BM25 method {self.method!r} is not one of {', '.join(METHODS)}")
        if self.stopwords not in STOPWORDS:
            raise ValueError(f"BM25 stopwords {self.stopwords!r} is not one of {', '.join(STOPWORDS)}")
        if self.stemmer != "none" and self.stemmer not in Stemmer.algorithms():
            raise ValueError(
                f"BM25 stemmer {self.stemmer!r} is not 'none' or a PyStemmer algorithm "
                f"({', '.join(Stemmer.algorithms())})"
            )

    def params(self) -> dict:
        """What ``run_manifest.system_params`` records: every setting and the libraries' versions."""
        from importlib.metadata import version

        return {
            "k1": self.k1,
            "b": self.b,
            "method": self.method,
            "tokenizer": f"lowercase, regex {TOKEN_PATTERN}",
            "stopwords": self.stopwords,
            "stemmer": self.stemmer,
            "library": f"bm25s {version('bm25s')}",
            "stemmer_library": f"PyStemmer {version('PyStemmer')}",
        }


def tokenize(texts: list[str], settings: BM25Settings) -> list[list[str]]:
    """Each text's terms (module docstring), in order, repeats kept."""
    import bm25s
    import Stemmer

    stemmer = None if settings.stemmer == "none" else Stemmer.Stemmer(settings.stemmer)
    stopwords = [] if settings.stopwords == "none" else settings.stopwords
    return bm25s.tokenize(
        texts,
        lower=True,
        token_pattern=TOKEN_PATTERN,
        stopwords=stopwords,
        stemmer=stemmer,
        return_ids=False,
        show_progress=False,
    )


@dataclasses.dataclass
class BM25Index:
    """The eager BM25 weights of one index: ``weights[d, t]`` = the score term t adds to text d."""

    weights: sp.csc_matrix  # float64 (n_texts, n_terms)
    vocab: dict[str, int]

    def scores(self, queries: list[list[str]]) -> np.ndarray:
        """(q, n_texts) float64 scores of tokenized queries (unknown terms add nothing)."""
        rows, cols = [], []
        for i, terms in enumerate(queries):
            ids = [self.vocab[t] for t in terms if t in self.vocab and self.vocab[t] < self.weights.shape[1]]
            rows += [i] * len(ids)
            cols += ids
        counts = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(queries), self.weights.shape[1]))
        return np.asarray((counts @ self.weights.T).todense(), dtype=np.float64)


def build_index(tokens: list[list[str]], settings: BM25Settings) -> BM25Index:
    """bm25s's eager scores of tokenized texts as a sparse text x term matrix."""
    import logging

    import bm25s

    logging.getLogger("bm25s").setLevel(logging.WARNING)  # it sets DEBUG on import: keep run logs to the point
    retriever = bm25s.BM25(k1=settings.k1, b=settings.b, method=settings.method)
    retriever.index(tokens, show_progress=False)
    s = retriever.scores
    n_terms = len(s["indptr"]) - 1
    weights = sp.csc_matrix(
        (np.asarray(s["data"], dtype=np.float64), s["indices"], s["indptr"]), shape=(int(s["num_docs"]), n_terms)
    )
    return BM25Index(weights, dict(retriever.vocab_dict))


def rank(index: BM25Index, query_tokens: list[list[str]], k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` positions and scores per query (score desc, position asc); entries past a query's
    positive scores are -1 / 0."""
    n = index.weights.shape[0]
    kk = min(k, n)
    pos = np.full((len(query_tokens), kk), -1, dtype=np.int64)
    out = np.zeros((len(query_tokens), kk), dtype=np.float64)
    for start in range(0, len(query_tokens), _QUERY_BATCH):
        block = index.scores(query_tokens[start : start + _QUERY_BATCH])
        p, s = topk_rows(block, kk)
        keep = s > 0
        pos[start : start + len(block)] = np.where(keep, p, -1)
        out[start : start + len(block)] = np.where(keep, s, 0.0)
    return pos, out


def _check_name(con: duckdb.DuckDBPyConnection, name: str) -> None:
    other = con.execute(
        "SELECT DISTINCT coalesce(system_kind, 'dense') FROM run_manifest WHERE embedder = ? "
        "AND coalesce(system_kind, 'dense') <> ? ORDER BY 1",
        [name, SYSTEM_KIND],
    ).fetchall()
    dense = con.execute("SELECT count(*) FROM embeddings WHERE embedder = ?", [name]).fetchone()[0]
    if other or dense:
        kind = other[0][0] if other else "dense"
        raise RetrieveError(
            f"system name {name!r} is taken by a {kind} system's runs or vectors: give BM25 another "
            "name (bm25: {name: ...})"
        )


def bm25_condition(con: duckdb.DuckDBPyConnection, settings: BM25Settings, corpus: str, condition: str, k: int) -> dict:
    """Compute (or skip when unchanged) one BM25 run; returns its report line."""
    texts = arrow_query(
        con,
        """SELECT chunk_id, doc_id, text, text_hash FROM int_condition_texts
                                WHERE corpus = $corpus AND condition = $condition ORDER BY chunk_id""",
        {"corpus": corpus, "condition": condition},
    )
    texts = texts.take(pa.array(tie_order(texts.column("doc_id").to_pylist(), texts.column("chunk_id").to_pylist())))
    queries = con.execute("SELECT query_id, text FROM queries WHERE corpus = ? ORDER BY query_id", [corpus]).fetchall()
    chunk_ids = np.array(texts.column("chunk_id").to_pylist(), dtype=object)
    params = settings.params()
    h = hashlib.sha256()
    for block in (
        [FINGERPRINT_VERSION, json.dumps(params, sort_keys=True), str(k)],
        [f"{c}\t{t}" for c, t in zip(chunk_ids, texts.column("text_hash").to_pylist())],
        [f"{q}\t{t}" for q, t in queries],
    ):
        h.update("\n".join(block).encode("utf-8"))
        h.update(b"\x00")
    fp = h.hexdigest()
    report = {
        "corpus": corpus,
        "condition": condition,
        "retrieval": "flat",
        "n_chunks": len(chunk_ids),
        "n_queries": len(queries),
    }
    if stored_fingerprint(con, corpus, settings.name, "none", condition) == fp:
        return {**report, "status": "unchanged", "rows": None}
    index = build_index(tokenize(texts.column("text").to_pylist(), settings), settings)
    positions, scores = rank(index, tokenize([t for _, t in queries], settings), k)
    query_ids = np.array([q for q, _ in queries], dtype=object)
    runs = run_table(corpus, settings.name, "none", condition, query_ids, chunk_ids, np.maximum(positions, 0), scores)
    runs = runs.filter(pa.array((positions >= 0).ravel()))
    # ranks stay 1..n within each query: the kept entries of a row are its first n
    n_ranked = int((positions >= 0).any(axis=1).sum())
    write_run(
        con,
        corpus=corpus,
        embedder=settings.name,
        reranker="none",
        condition=condition,
        runs=runs,
        fp=fp,
        k=k,
        n_queries=n_ranked,
        routing=None,
        system_kind=SYSTEM_KIND,
        system_params=params,
    )
    return {**report, "status": "computed", "rows": runs.num_rows, "n_unmatched": len(queries) - n_ranked}


def bm25_stage(
    con: duckdb.DuckDBPyConnection,
    settings: BM25Settings | None = None,
    *,
    k: int = 50,
    conditions: list[str] | None = None,
    corpus: str | None = None,
    show_progress: bool = True,
) -> dict:
    """BM25 runs for every flat (corpus, condition) of ``int_condition_texts`` (optionally filtered).

    Returns ``{"system", "k", "params", "conditions": [report per run], "not_run": {condition: reason},
    "empty": [requested conditions without chunks]}``."""
    settings = settings or BM25Settings()
    if k < 1:
        raise RetrieveError(f"k must be >= 1, got {k}")
    require_condition_texts(con)
    _check_name(con, settings.name)
    modes = retrieval_modes()
    units, empty = retrieval_units(con, conditions, corpus)
    not_run = {
        cond: "two-stage routing ranks sections by the mean of their chunks' embedding vectors; BM25 has none"
        for _, cond in units
        if modes.get(cond) == "two_stage"
    }
    flat = [(c, cond) for c, cond in units if cond not in not_run]
    reports = []
    with progress_bar(f"BM25 top-{k} ({settings.name})", total=len(flat), enabled=show_progress) as advance:
        for corpus_name, condition in flat:
            reports.append(bm25_condition(con, settings, corpus_name, condition, k))
            advance(1)
    return {
        "system": settings.name,
        "k": k,
        "params": settings.params(),
        "conditions": reports,
        "not_run": not_run,
        "empty": empty,
    }
