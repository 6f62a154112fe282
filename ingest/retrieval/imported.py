"""``ragwh import run FILE``: a TREC run from any other system, over a condition's chunk ids, as a run of its own.

Input: TREC run lines ``<query_id> <Q0> <chunk_id> <rank> <score> <tag>`` (whitespace-separated, six
fields; the second is ignored, as trec_eval does), over the ids ``ragwh export corpus`` writes (the
corpus's query ids, the condition's chunk ids). A run may carry meaningful ranks, meaningful scores or
both: each query's ranking is ordered by score descending, then by the file's rank ascending (so a
rank-only run with constant scores keeps its ranks), then in the warehouse's tie order (document, chunk
number); ranks are renumbered 1..n in that order and the scores are stored as given.

Validation, before anything is written (one line naming the file and line, nothing written): a line
that is not UTF-8, a line without six fields, a rank that is not an integer, a score that is not a finite number, a query id
that is not one of the corpus's queries, a chunk id the condition does not index, a (query, chunk)
pair twice, an empty file. The run is stored in one transaction as ``runs`` rows with ``embedder`` =
the run's name (the system dimension: a dense embedder, ``bm25`` and imported runs share that
column) and ``reranker`` 'none'; ``run_manifest.system_kind`` = 'imported' and ``system_params``
records the file, its sha256, lines, queries, tags and the ordering rule. Importing the same name
and condition again replaces the run (an explicit replace); a name that a dense or BM25 system uses is
refused, and so is every name ``ragwh run`` itself stores runs under (:func:`reserved_names`: the registered
embedders, the stand-in, ``bm25``), so that no later run replaces an imported one. ``ragwh run`` in turn
refuses, before any work, a config whose systems would write over an imported run (:func:`imported_systems`). ``dbt build``
(or ``ragwh run``) then scores it with every metric of the condition's corpus, and a config may contrast
it with any other system (``contrasts: [{name, treatment: A3@NAME, control: A3@all-MiniLM-L6-v2}]``).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from ingest.retrieval.embed import require_condition_texts
from ingest.retrieval.retrieve import write_run
from ingest.retrieval.ties import chunk_key

SYSTEM_KIND = "imported"
ORDER_RULE = "score descending, then the file's rank ascending, then document and chunk number"


class ImportRunError(ValueError):
    """A run that cannot be imported; the message names the file and line."""


@dataclass(frozen=True)
class ImportedRun:
    name: str
    corpus: str
    condition: str
    n_lines: int
    n_queries: int
    n_queries_without_run: int  # queries of the corpus the file ranks nothing for
    k: int


def _fail(path: Path, number: int | None, problem: str) -> ImportRunError:
    where = f"{path}:{number}" if number is not None else str(path)
    return ImportRunError(f"{where}: {problem}")


def _corpus(con: duckdb.DuckDBPyConnection, condition: str, corpus: str | None, path: Path) -> str:
    corpora = [
        c
        for (c,) in con.execute(
            "SELECT DISTINCT corpus FROM int_condition_texts WHERE condition = ? AND (? IS NULL OR corpus = ?) ORDER BY 1",
            [condition, corpus, corpus],
        ).fetchall()
    ]
    if not corpora:
        raise _fail(
            path,
            None,
            f"condition {condition} indexes no texts{' in corpus ' + corpus if corpus else ''}: "
            "build its chunks first (`ragwh run`), or name another --condition / --corpus",
        )
    if len(corpora) > 1:
        raise _fail(path, None, f"condition {condition} indexes several corpora {corpora}: pass --corpus")
    return corpora[0]


def reserved_names() -> frozenset[str]:
    """Names ``ragwh run`` stores its own systems under whatever a config says: every registered embedder (at
    fp32 the bare name; other precisions carry ``@``, refused anyway), the stand-in, and BM25's default name.
    A config may still name another system (a hub id, ``bm25.name``): the pipeline refuses to write over an
    imported run (:func:`imported_systems`)."""
    from ingest.retrieval.bm25 import BM25Settings
    from ingest.retrieval.embedders import REGISTRY
    from ingest.retrieval.standin import STANDIN_NAME

    return frozenset({*REGISTRY, *(spec.model_name for spec in REGISTRY.values()), STANDIN_NAME, BM25Settings.name})


def imported_systems(con: duckdb.DuckDBPyConnection, names, corpora) -> list[tuple[str, str, str]]:
    """(system name, corpus, run file) of each imported run stored under one of ``names`` in one of ``corpora``."""
    names, corpora = sorted(set(names)), sorted(set(corpora))
    if not names or not corpora:
        return []
    return [
        (n, c, json.loads(p or "{}").get("file", "?"))
        for n, c, p in con.execute(
            "SELECT embedder, corpus, any_value(system_params) FROM run_manifest WHERE system_kind = ? "
            "AND list_contains(?, embedder) AND list_contains(?, corpus) GROUP BY ALL ORDER BY 1, 2",
            [SYSTEM_KIND, names, corpora],
        ).fetchall()
    ]


def _check_name(con: duckdb.DuckDBPyConnection, name: str, path: Path) -> None:
    if not name or name == "none" or "@" in name or any(ch.isspace() for ch in name):
        raise _fail(path, None, f"run name {name!r}: a name without spaces or '@', not 'none'")
    if name in reserved_names():
        raise _fail(
            path,
            None,
            f"run name {name!r} is reserved: `ragwh run` stores its own {name} runs under it "
            f"and would replace this one; choose another --name (e.g. {name}-imported)",
        )
    taken = con.execute(
        "SELECT DISTINCT coalesce(system_kind, 'dense') FROM run_manifest WHERE embedder = ? "
        "AND coalesce(system_kind, 'dense') <> ? ORDER BY 1",
        [name, SYSTEM_KIND],
    ).fetchall()
    dense = con.execute("SELECT count(*) FROM embeddings WHERE embedder = ?", [name]).fetchone()[0]
    if taken or dense:
        raise _fail(
            path, None, f"run name {name!r} is a {taken[0][0] if taken else 'dense'} system's: choose another --name"
        )


def parse_run(path: Path, queries: set[str], chunks: dict[str, str]) -> list[tuple[str, str, int, float, str, int]]:
    """``(query_id, chunk_id, rank, score, tag, line number)`` per line, validated (module docstring)."""
    rows, seen = [], {}
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise _fail(path, None, f"cannot read the run file: {exc.strerror}") from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise _fail(
                    path,
                    number,
                    f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}): "
                    "save the run file as UTF-8 (ids as `ragwh export corpus` writes them)",
                ) from None
            if not line.strip():
                continue
            fields = line.split()
            if len(fields) != 6:
                raise _fail(path, number, f"expected 6 fields (query Q0 chunk rank score tag), got {len(fields)}")
            query_id, _, chunk_id, rank, score, tag = fields
            try:
                rank_value = int(rank)
            except ValueError:
                raise _fail(path, number, f"rank {rank!r} is not an integer") from None
            try:
                score_value = float(score)
            except ValueError:
                raise _fail(path, number, f"score {score!r} is not a number") from None
            if not math.isfinite(score_value):
                raise _fail(path, number, f"score {score!r} is not finite")
            if query_id not in queries:
                raise _fail(
                    path,
                    number,
                    f"unknown query id {query_id!r} (not a query of the corpus; ids as "
                    "`ragwh export corpus` writes them)",
                )
            if chunk_id not in chunks:
                raise _fail(
                    path,
                    number,
                    f"unknown chunk id {chunk_id!r} (the condition does not index it; ids as "
                    "`ragwh export corpus` writes them)",
                )
            if (query_id, chunk_id) in seen:
                raise _fail(
                    path,
                    number,
                    f"chunk {chunk_id!r} ranked twice for {query_id!r} (first on line {seen[(query_id, chunk_id)]})",
                )
            seen[(query_id, chunk_id)] = number
            rows.append((query_id, chunk_id, rank_value, score_value, tag, number))
    if not rows:
        raise _fail(path, None, "the run file holds no line")
    return rows


def import_run(
    con: duckdb.DuckDBPyConnection, path: str | Path, name: str, condition: str, corpus: str | None = None
) -> ImportedRun:
    """Validate and store a TREC run (module docstring); raises :class:`ImportRunError`, writing nothing."""
    path = Path(path)
    require_condition_texts(con)
    corpus = _corpus(con, condition, corpus, path)
    _check_name(con, name, path)
    queries = {q for (q,) in con.execute("SELECT query_id FROM queries WHERE corpus = ?", [corpus]).fetchall()}
    chunks = dict(
        con.execute(
            "SELECT chunk_id, doc_id FROM int_condition_texts WHERE corpus = ? AND condition = ?", [corpus, condition]
        ).fetchall()
    )
    rows = parse_run(path, queries, chunks)
    rows.sort(key=lambda r: (r[0], -r[3], r[2], chunk_key(chunks[r[1]], r[1])))
    query_ids = np.array([r[0] for r in rows], dtype=object)
    _, first, counts = np.unique(query_ids, return_index=True, return_counts=True)
    ranks = np.arange(len(rows)) - np.repeat(first, counts) + 1
    table = pa.table(
        {
            "corpus": pa.array([corpus] * len(rows), pa.string()),
            "embedder": pa.array([name] * len(rows), pa.string()),
            "reranker": pa.array(["none"] * len(rows), pa.string()),
            "condition": pa.array([condition] * len(rows), pa.string()),
            "query_id": pa.array(query_ids.tolist(), pa.string()),
            "rank": pa.array(ranks.astype(np.int32)),
            "chunk_id": pa.array([r[1] for r in rows], pa.string()),
            "score": pa.array([r[3] for r in rows], pa.float64()),
        }
    )
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    params = {
        "file": str(path.resolve()),
        "sha256": digest,
        "lines": len(rows),
        "queries": len(counts),
        "tags": sorted({r[4] for r in rows}),
        "order": ORDER_RULE,
    }
    write_run(
        con,
        corpus=corpus,
        embedder=name,
        reranker="none",
        condition=condition,
        runs=table,
        fp=f"imported:{digest}",
        k=int(counts.max()),
        n_queries=len(counts),
        routing=None,
        system_kind=SYSTEM_KIND,
        system_params=params,
    )
    return ImportedRun(name, corpus, condition, len(rows), len(counts), len(queries) - len(counts), int(counts.max()))
