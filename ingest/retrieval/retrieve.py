"""First-stage runs: flat and two-stage exact inner-product retrieval per (corpus, condition).

Flat: for every query of the corpus, the top ``k`` chunks of the condition's whole index (all
documents of the corpus) by ``score = <q, c>`` of L2-normalized vectors (= cosine), ties broken by
document then chunk number (:mod:`ingest.retrieval.ties`: the index is sorted into tie order, and
:func:`ingest.retrieval.topk.topk_inner_product` breaks ties by position).

Two-stage (``retrieval = two_stage`` in ``seeds/conditions.csv``): a section is a document plus one
top-level (level-1) heading of the chunkset's structure; a chunk belongs to the level-1 ancestor of
``chunks.section_idx`` (pre-order: the level-1 section with the largest ``section_idx <= it``). A
section's centroid is ``m / ||m||_2`` with ``m`` the mean of its chunks' vectors (the very vectors
flat retrieval searches). Stage 1 keeps the ``ROUTED_SECTIONS`` best centroids; stage 2 ranks the
chunks of those sections by inner product; when they are fewer than ``k``, the list is backfilled
from the flat ranking (flat order, flat scores, no duplicates), so ranks past the routed chunks may
have higher scores than ranks before them. A document indexed with fallback fixed windows (it lacks
the chunkset's structure: ``int_condition_texts.is_fallback``) is one section of its own, section index
-1, spanning its whole body. ``routing.section_recall`` is TRUE when a routed section
overlaps any gold evidence span of the query (same document, ``[s0, s1)`` and ``[e0, e1)`` with
``s0 < e1 and e0 < s1``), NULL when the query has no evidence rows.

Incremental: each (corpus, embedder, condition) run carries a fingerprint (sha256 of chunk ids and
text hashes, query ids and hashes, section assignment, k, embedder, reranker, mode); an unchanged
fingerprint skips the run. Runs, routing and manifest of one condition are written in one transaction.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as dt
import hashlib
import json

import duckdb
import numpy as np
import pyarrow as pa
import scipy.sparse as sp

from ingest.retrieval.embed import QUERY_HASH_PREFIX, arrow_query, require_condition_texts
from ingest.retrieval.embedders import EmbedderSpec, resolve_embedder
from ingest.retrieval.progress import progress_bar
from ingest.retrieval.ties import tie_order
from ingest.retrieval.topk import topk_inner_product
from warehouse.db import replace_where, transaction
from warehouse.paths import PROJECT_ROOT

ROUTED_SECTIONS = 5
FINGERPRINT_VERSION = "retrieve-v2"  # v2: ties by document then chunk number; fallback documents
WHOLE_DOCUMENT = -1  # section index of a fallback document's one section
CONDITIONS_SEED = PROJECT_ROOT / "seeds" / "conditions.csv"


class RetrieveError(ValueError):
    """Retrieval cannot run as asked; the message says why and what to do next."""


def retrieval_modes(seed=CONDITIONS_SEED) -> dict[str, str]:
    """``condition -> 'flat' | 'two_stage'`` from the conditions seed (the only place conditions live)."""
    with open(seed, newline="", encoding="utf-8") as fh:
        return {row["condition"]: row["retrieval"] for row in csv.DictReader(fh)}


@dataclasses.dataclass
class Index:
    """One condition's searchable chunks in tie order (:mod:`ingest.retrieval.ties`), and its queries
    sorted by query_id. ``chunkset`` is the condition's own chunkset; ``fallback[j]`` marks chunk
    ``j`` as a fallback fixed window."""

    chunk_ids: np.ndarray  # object (str)
    chunk_hashes: list[str]
    chunkset: str | None
    fallback: np.ndarray  # bool
    vectors: np.ndarray  # float32 (n, d)
    query_ids: np.ndarray
    query_hashes: list[str]
    query_vectors: np.ndarray  # float32 (q, d)


def _to_matrix(column: pa.ChunkedArray, what: str) -> np.ndarray:
    """A ``list<float>`` column as a float32 (rows, dim) matrix; all rows must share one dimension."""
    arr = column.combine_chunks()
    if len(arr) == 0:
        return np.zeros((0, 0), dtype=np.float32)
    lengths = arr.value_lengths().to_numpy(zero_copy_only=False)
    if lengths.min() != lengths.max():
        raise RetrieveError(f"{what}: stored vectors have mixed dimensions {sorted(set(lengths.tolist()))}")
    return arr.flatten().to_numpy(zero_copy_only=False).astype(np.float32).reshape(len(arr), int(lengths[0]))


def load_index(con: duckdb.DuckDBPyConnection, embedder: str, corpus: str, condition: str) -> Index:
    """Read a condition's chunks and the corpus's queries with their stored vectors.

    Raises :class:`RetrieveError` when any text lacks a vector (run ``ragwh embed`` first)."""
    chunks = arrow_query(
        con,
        """SELECT ct.chunk_id, ct.doc_id, ct.text_hash, ct.chunkset, ct.is_fallback, e.vector
           FROM int_condition_texts ct LEFT JOIN embeddings e ON e.embedder = $e AND e.text_hash = ct.text_hash
           WHERE ct.corpus = $corpus AND ct.condition = $condition ORDER BY ct.chunk_id""",
        {"e": embedder, "corpus": corpus, "condition": condition},
    )
    queries = arrow_query(
        con,
        f"""WITH q AS (SELECT query_id, sha256('{QUERY_HASH_PREFIX}' || text) AS text_hash FROM queries
                       WHERE corpus = $corpus)
            SELECT q.query_id, q.text_hash, e.vector FROM q
            LEFT JOIN embeddings e ON e.embedder = $e AND e.text_hash = q.text_hash ORDER BY q.query_id""",
        {"e": embedder, "corpus": corpus},
    )
    for table, what in ((chunks, "chunk"), (queries, "query")):
        missing = table.column("vector").null_count
        if missing:
            raise RetrieveError(
                f"{corpus}/{condition}: {missing} {what} texts have no {embedder!r} embedding: "
                f"run `ragwh embed --embedder {embedder}` first"
            )
        key = table.column("chunk_id" if what == "chunk" else "query_id").to_pylist()
        if len(set(key)) != len(key):
            raise RetrieveError(f"{corpus}/{condition}: duplicate {what} ids or duplicate embeddings for one text")
    chunks = chunks.take(
        pa.array(tie_order(chunks.column("doc_id").to_pylist(), chunks.column("chunk_id").to_pylist()))
    )
    fallback = np.asarray(chunks.column("is_fallback").to_numpy(zero_copy_only=False), dtype=bool)
    chunkset_of = chunks.column("chunkset").to_pylist()
    chunksets = sorted({c for c, f in zip(chunkset_of, fallback) if not f})
    if len(chunksets) > 1 or any(c != "fixed" for c, f in zip(chunkset_of, fallback) if f):
        raise RetrieveError(f"{corpus}/{condition}: int_condition_texts mixes chunksets {sorted(set(chunkset_of))}")
    return Index(
        chunk_ids=np.array(chunks.column("chunk_id").to_pylist(), dtype=object),
        chunk_hashes=chunks.column("text_hash").to_pylist(),
        chunkset=chunksets[0] if chunksets else None,
        fallback=fallback,
        vectors=_to_matrix(chunks.column("vector"), f"{corpus}/{condition} chunks"),
        query_ids=np.array(queries.column("query_id").to_pylist(), dtype=object),
        query_hashes=queries.column("text_hash").to_pylist(),
        query_vectors=_to_matrix(queries.column("vector"), f"{corpus} queries"),
    )


def fingerprint(parts: list[str], index: Index, extra: tuple[str, ...] | list[str] = ()) -> str:
    """sha256 hex over the run's settings, its chunk (id, hash) and query (id, hash) lists and ``extra``."""
    h = hashlib.sha256()
    for block in (
        parts,
        [f"{c}\t{t}" for c, t in zip(index.chunk_ids, index.chunk_hashes)],
        [f"{q}\t{t}" for q, t in zip(index.query_ids, index.query_hashes)],
        list(extra),
    ):
        h.update("\n".join(map(str, block)).encode("utf-8"))
        h.update(b"\x00")
    return h.hexdigest()


def stored_fingerprint(
    con: duckdb.DuckDBPyConnection, corpus: str, embedder: str, reranker: str, condition: str
) -> str | None:
    rows = con.execute(
        "SELECT fingerprint FROM run_manifest WHERE corpus = ? AND embedder = ? AND reranker = ? AND condition = ?",
        [corpus, embedder, reranker, condition],
    ).fetchall()
    return rows[0][0] if rows else None


@dataclasses.dataclass
class Sections:
    """Top-level sections of a condition's index: ``labels[s] = '<doc_id>#<section_idx>'``,
    ``of_chunk[j]`` the section of chunk ``j``."""

    doc_ids: list[str]
    section_idx: np.ndarray
    of_chunk: np.ndarray

    @property
    def labels(self) -> list[str]:
        return [f"{d}#{s}" for d, s in zip(self.doc_ids, self.section_idx.tolist())]


def top_level_sections(con: duckdb.DuckDBPyConnection, index: Index, corpus: str, condition: str) -> Sections:
    """Map each chunk of the index to its level-1 section of the chunkset's structure."""
    if index.chunkset is None or not index.chunkset.startswith("structural:"):
        raise RetrieveError(
            f"{corpus}/{condition}: two-stage retrieval needs a structural chunkset, got {index.chunkset!r} "
            "(fix the condition's retrieval mode in seeds/conditions.csv)"
        )
    structure = index.chunkset.removeprefix("structural:")
    con.register(
        "_index_chunks",
        pa.table(
            {
                "chunk_id": pa.array(index.chunk_ids.tolist(), pa.string()),
                "pos": pa.array(np.arange(len(index.chunk_ids))),
                "fallback": pa.array(index.fallback),
            }
        ),
    )
    try:
        mapped = arrow_query(
            con,
            f"""WITH l1 AS (SELECT doc_id, section_idx FROM sections WHERE structure = $structure AND level = 1),
                    c AS (SELECT i.pos, i.fallback, ch.doc_id, ch.section_idx FROM _index_chunks i
                          LEFT JOIN chunks ch ON ch.chunkset = CASE WHEN i.fallback THEN 'fixed' ELSE $chunkset END
                                             AND ch.chunk_id = i.chunk_id)
               SELECT c.pos, c.doc_id,
                      CASE WHEN c.fallback THEN {WHOLE_DOCUMENT} ELSE l1.section_idx END AS top_idx
               FROM c ASOF LEFT JOIN l1 ON c.doc_id = l1.doc_id AND c.section_idx >= l1.section_idx
               ORDER BY c.pos""",
            {"structure": structure, "chunkset": index.chunkset},
        )
    finally:
        con.unregister("_index_chunks")
    top = mapped.column("top_idx")
    if top.null_count or len(mapped) != len(index.chunk_ids):
        raise RetrieveError(
            f"{corpus}/{condition}: {top.null_count} chunks of {index.chunkset!r} have no level-1 section of "
            f"structure {structure!r} (chunks.section_idx NULL or sections missing): rebuild the chunks"
        )
    keys = sorted(set(zip(mapped.column("doc_id").to_pylist(), top.to_pylist())))
    number = {key: s for s, key in enumerate(keys)}
    of_chunk = np.array(
        [number[key] for key in zip(mapped.column("doc_id").to_pylist(), top.to_pylist())], dtype=np.int64
    )
    return Sections(
        doc_ids=[d for d, _ in keys], section_idx=np.array([s for _, s in keys], dtype=np.int64), of_chunk=of_chunk
    )


def centroids(vectors: np.ndarray, of_chunk: np.ndarray, n_sections: int) -> np.ndarray:
    """Per section ``m / ||m||_2`` with ``m`` the mean of its chunk vectors (float32)."""
    member = sp.csr_matrix(
        (np.ones(len(of_chunk), dtype=np.float32), (of_chunk, np.arange(len(of_chunk)))),
        shape=(n_sections, len(of_chunk)),
    )
    sums = np.asarray(member @ vectors, dtype=np.float32)
    norms = np.linalg.norm(sums, axis=1, keepdims=True)  # the mean's norm up to the count factor
    return sums / np.where(norms == 0, 1.0, norms)


def two_stage(
    index: Index,
    sections: Sections,
    k: int,
    flat_pos: np.ndarray,
    flat_scores: np.ndarray,
    n_routed: int = ROUTED_SECTIONS,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return ``(positions (q, k'), scores (q, k'), routed (q, r))``: stage-2 chunks of the routed
    sections in (score desc, chunk_id asc) order, then flat backfill; ``routed`` are section numbers."""
    n_sections = len(sections.doc_ids)
    cents = centroids(index.vectors, sections.of_chunk, n_sections)
    routed, _ = topk_inner_product(index.query_vectors, cents, n_routed)
    by_section = np.argsort(sections.of_chunk, kind="stable")  # chunk positions grouped by section, pos asc
    starts = np.searchsorted(sections.of_chunk[by_section], np.arange(n_sections + 1))
    kk = flat_pos.shape[1]
    pos_out = np.empty_like(flat_pos)
    scores_out = np.empty_like(flat_scores)
    for i in range(len(index.query_ids)):
        cand = np.sort(np.concatenate([by_section[starts[s] : starts[s + 1]] for s in routed[i]]))
        scores = index.vectors[cand] @ index.query_vectors[i]
        order = np.lexsort((cand, -scores))[:kk]
        chosen, chosen_scores = cand[order], scores[order]
        fill = ~np.isin(flat_pos[i], chosen)
        need = kk - len(chosen)
        pos_out[i] = np.concatenate([chosen, flat_pos[i][fill][:need]])
        scores_out[i] = np.concatenate([chosen_scores, flat_scores[i][fill][:need]])
    return pos_out, scores_out, routed


def section_recall(
    con: duckdb.DuckDBPyConnection, structure: str, query_ids: np.ndarray, sections: Sections, routed: np.ndarray
) -> list[bool | None]:
    """Per query: does any routed section overlap an evidence span of the query (NULL: no evidence rows).
    A fallback document's section (index -1) spans the document's whole body."""
    q_rep = np.repeat(np.arange(len(query_ids)), routed.shape[1])
    flat = routed.ravel()
    table = pa.table(
        {
            "q": pa.array(q_rep),
            "query_id": pa.array(query_ids[q_rep].tolist(), pa.string()),
            "doc_id": pa.array([sections.doc_ids[s] for s in flat], pa.string()),
            "section_idx": pa.array(sections.section_idx[flat]),
        }
    )
    qs = pa.table({"q": pa.array(np.arange(len(query_ids))), "query_id": pa.array(query_ids.tolist(), pa.string())})
    con.register("_routed", table)
    con.register("_routed_queries", qs)
    try:
        rows = con.execute(
            f"""WITH with_evidence AS (SELECT DISTINCT query_id FROM evidence),
                    spans AS (
                        SELECT doc_id, section_idx, char_start, char_end FROM sections WHERE structure = $structure
                        UNION ALL
                        SELECT doc_id, {WHOLE_DOCUMENT}, min(char_start), max(char_end) FROM paragraphs
                        WHERE doc_id IN (SELECT doc_id FROM _routed WHERE section_idx = {WHOLE_DOCUMENT})
                        GROUP BY doc_id),
                    hits AS (
                        SELECT r.q, bool_or(e.query_id IS NOT NULL) AS hit FROM _routed r
                        JOIN spans s ON s.doc_id = r.doc_id AND s.section_idx = r.section_idx
                        LEFT JOIN evidence e ON e.query_id = r.query_id AND e.doc_id = r.doc_id
                                            AND s.char_start < e.char_end AND e.char_start < s.char_end
                        GROUP BY r.q)
               SELECT CASE WHEN w.query_id IS NULL THEN NULL ELSE coalesce(h.hit, FALSE) END
               FROM _routed_queries q LEFT JOIN with_evidence w USING (query_id) LEFT JOIN hits h USING (q)
               ORDER BY q.q""",
            {"structure": structure},
        ).fetchall()
    finally:
        con.unregister("_routed")
        con.unregister("_routed_queries")
    return [r[0] for r in rows]


def run_table(
    corpus: str,
    embedder: str,
    reranker: str,
    condition: str,
    query_ids: np.ndarray,
    chunk_ids: np.ndarray,
    positions: np.ndarray,
    scores: np.ndarray,
) -> pa.Table:
    """Long-format ``runs`` rows: one per (query, rank), rank 1-based."""
    q, kk = positions.shape
    n = q * kk
    return pa.table(
        {
            "corpus": pa.array([corpus] * n, pa.string()),
            "embedder": pa.array([embedder] * n, pa.string()),
            "reranker": pa.array([reranker] * n, pa.string()),
            "condition": pa.array([condition] * n, pa.string()),
            "query_id": pa.array(np.repeat(query_ids, kk).tolist(), pa.string()),
            "rank": pa.array(np.tile(np.arange(1, kk + 1, dtype=np.int32), q)),
            "chunk_id": pa.array(chunk_ids[positions.ravel()].tolist() if n else [], pa.string()),
            "score": pa.array(scores.ravel().astype(np.float64)),
        }
    )


def write_run(
    con: duckdb.DuckDBPyConnection,
    *,
    corpus: str,
    embedder: str,
    reranker: str,
    condition: str,
    runs: pa.Table,
    fp: str,
    k: int,
    n_queries: int,
    routing: pa.Table | None,
    system_kind: str = "dense",
    system_params: dict | None = None,
) -> None:
    """Replace one run (and its routing, for first-stage runs) and its manifest row atomically; never an
    imported run by one of another kind (:class:`RetrieveError`).
    ``system_kind`` ('dense' | 'bm25' | 'imported') and ``system_params`` (JSON) describe the first-stage
    system whose name ``embedder`` holds."""
    key = "corpus = ? AND embedder = ? AND reranker = ? AND condition = ?"
    params = [corpus, embedder, reranker, condition]
    manifest = pa.table(
        {
            "corpus": [corpus],
            "embedder": [embedder],
            "reranker": [reranker],
            "condition": [condition],
            "fingerprint": [fp],
            "k": pa.array([k], pa.int32()),
            "n_queries": pa.array([n_queries], pa.int32()),
            "created_at": pa.array([dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)], pa.timestamp("us")),
            "system_kind": [system_kind],
            "system_params": [json.dumps(system_params or {}, sort_keys=True)],
        }
    )
    if (
        system_kind != "imported"
        and reranker == "none"
        and con.execute(
            f"SELECT count(*) FROM run_manifest WHERE {key} AND system_kind = 'imported'", params
        ).fetchone()[0]
    ):
        raise RetrieveError(
            f"{corpus}/{condition}: system {embedder!r} holds an imported run (`ragwh import run`) "
            f"that this {system_kind} run would replace: re-import it under another --name first"
        )
    with transaction(con):
        replace_where(con, "runs", key, params, runs)
        if reranker == "none":
            replace_where(
                con, "routing", "corpus = ? AND embedder = ? AND condition = ?", [corpus, embedder, condition], routing
            )
        replace_where(con, "run_manifest", key, params, manifest)


def dense_params(spec: EmbedderSpec) -> dict:
    """What ``run_manifest.system_params`` records for a dense embedder's runs."""
    return {
        "model": spec.model_name,
        "precision": spec.precision,
        "query_instruction": spec.query_instruction,
        "max_seq_length": spec.max_seq_length,
        "score": "inner product of L2-normalized vectors (cosine)",
    }


def retrieve_condition(
    con: duckdb.DuckDBPyConnection,
    embedder: str,
    corpus: str,
    condition: str,
    k: int,
    mode: str,
    params: dict | None = None,
) -> dict:
    """Compute (or skip when unchanged) one first-stage run; returns its report line."""
    index = load_index(con, embedder, corpus, condition)
    report = {
        "corpus": corpus,
        "condition": condition,
        "retrieval": mode,
        "n_chunks": len(index.chunk_ids),
        "n_queries": len(index.query_ids),
    }
    sections = top_level_sections(con, index, corpus, condition) if mode == "two_stage" else None
    extra = [] if sections is None else [f"{s}" for s in sections.of_chunk.tolist()] + sections.labels
    fp = fingerprint([FINGERPRINT_VERSION, mode, str(k), embedder, "none", str(ROUTED_SECTIONS)], index, extra)
    if stored_fingerprint(con, corpus, embedder, "none", condition) == fp:
        return {**report, "status": "unchanged", "rows": None}
    if (
        index.vectors.shape[0]
        and index.query_vectors.shape[0]
        and index.vectors.shape[1] != index.query_vectors.shape[1]
    ):
        raise RetrieveError(f"{corpus}/{condition}: chunk and query vectors differ in dimension")
    positions, scores = topk_inner_product(index.query_vectors, index.vectors, k)
    routing = None
    if sections is not None:
        positions, scores, routed = two_stage(index, sections, k, positions, scores, n_routed=ROUTED_SECTIONS)
        labels = np.array(sections.labels, dtype=object)
        routing = pa.table(
            {
                "corpus": pa.array([corpus] * len(index.query_ids), pa.string()),
                "embedder": pa.array([embedder] * len(index.query_ids), pa.string()),
                "condition": pa.array([condition] * len(index.query_ids), pa.string()),
                "query_id": pa.array(index.query_ids.tolist(), pa.string()),
                "routed_sections": pa.array([labels[r].tolist() for r in routed], pa.list_(pa.string())),
                "section_recall": pa.array(
                    section_recall(con, index.chunkset.removeprefix("structural:"), index.query_ids, sections, routed),
                    pa.bool_(),
                ),
            }
        )
    runs = run_table(corpus, embedder, "none", condition, index.query_ids, index.chunk_ids, positions, scores)
    write_run(
        con,
        corpus=corpus,
        embedder=embedder,
        reranker="none",
        condition=condition,
        runs=runs,
        fp=fp,
        k=k,
        n_queries=len(index.query_ids),
        routing=routing,
        system_params=params,
    )
    return {**report, "status": "computed", "rows": runs.num_rows}


def retrieval_units(
    con: duckdb.DuckDBPyConnection, conditions: list[str] | None, corpus: str | None
) -> tuple[list[tuple[str, str]], list[str]]:
    """The (corpus, condition) pairs present in ``int_condition_texts`` (filtered), and requested
    conditions that have no chunks at all (empty)."""
    require_condition_texts(con)
    rows = con.execute(
        "SELECT DISTINCT corpus, condition FROM int_condition_texts WHERE ($corpus IS NULL OR corpus = $corpus) "
        "ORDER BY corpus, condition",
        {"corpus": corpus},
    ).fetchall()
    units = [(c, cond) for c, cond in rows if conditions is None or cond in conditions]
    empty = sorted(set(conditions or []) - {cond for _, cond in units})
    return units, empty


def retrieve_stage(
    con: duckdb.DuckDBPyConnection,
    embedder: str | EmbedderSpec | None = None,
    k: int = 50,
    conditions: list[str] | None = None,
    corpus: str | None = None,
    show_progress: bool = True,
    precision: str | None = "auto",
) -> dict:
    """First-stage runs for every (corpus, condition) of ``int_condition_texts`` (optionally filtered),
    over the vectors of ``embedder`` computed in ``precision`` (resolved as the embed job does).

    Returns ``{"embedder", "k", "conditions": [report per run], "empty": [requested conditions
    without chunks]}``; unchanged runs are skipped (``status = 'unchanged'``)."""
    if k < 1:
        raise RetrieveError(f"k must be >= 1, got {k}")
    spec = resolve_embedder(embedder, precision)
    name = spec.name
    modes = retrieval_modes()
    unknown = sorted(set(conditions or []) - set(modes))
    if unknown:
        raise RetrieveError(f"unknown conditions {unknown}: conditions live in {CONDITIONS_SEED}")
    units, empty = retrieval_units(con, conditions, corpus)
    missing_mode = sorted({cond for _, cond in units if cond not in modes})
    if missing_mode:
        raise RetrieveError(f"int_condition_texts has conditions {missing_mode} that are not in {CONDITIONS_SEED}")
    reports = []
    with progress_bar(f"retrieving top-{k} with {name}", total=len(units), enabled=show_progress) as advance:
        for corpus_name, condition in units:
            reports.append(
                retrieve_condition(con, name, corpus_name, condition, k, modes[condition], dense_params(spec))
            )
            advance(1)
    return {"embedder": name, "k": k, "conditions": reports, "empty": empty}
