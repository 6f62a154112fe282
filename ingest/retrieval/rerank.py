"""Reranked runs: a cross-encoder re-scores the top ``depth`` (50) chunks of each first-stage run.

For a first-stage run ``(corpus, embedder, 'none', condition)`` and a query ``q``, each of its top
``depth`` chunks ``c`` gets ``score = CE(q.text, c.text)`` (the cross-encoder's output for the raw
query text and the exact condition text that was embedded, instruction-free); the chunks are re-ranked
by score descending, then by document and chunk number (:mod:`ingest.retrieval.ties`), and stored as
the run ``(corpus, embedder, <reranker name>, condition)``. A (query, text) pair shared by several
conditions is scored once per call. The run's fingerprint is sha256 of the first-stage fingerprint,
the reranker name and ``depth``: an unchanged first stage is not re-scored.

Precision as for embedders (:mod:`ingest.retrieval.precision`): ``auto`` scores in bf16 on a CPU with
native bf16 instructions when the cross-encoder is known to be an encoder, fp16 on CUDA, else fp32;
the stored reranker name carries the suffix (``BAAI/bge-reranker-v2-m3@bf16``).
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from ingest.retrieval.embed import QUERY_HASH_PREFIX, arrow_query, require_condition_texts
from ingest.retrieval.embedders import EmbedderSpec, auto_device, resolve_embedder
from ingest.retrieval.precision import (
    PrecisionError,
    apply_precision,
    encoder_from_source,
    resolve_precision,
    split_name,
    stored_name,
)
from ingest.retrieval.progress import progress_bar
from ingest.retrieval.retrieve import stored_fingerprint, write_run
from ingest.retrieval.ties import tie_ranks

DEFAULT_RERANKER = "BAAI/bge-reranker-v2-m3"
RERANK_DEPTH = 50
SCORE_BLOCK = 1024  # pairs per progress step (and per Ray block)
FINGERPRINT_VERSION = "rerank-v2"  # v2: ties by document then chunk number
#: Cross-encoders known to be encoders without reading their config (XLM-RoBERTa).
KNOWN_ENCODERS = frozenset({"BAAI/bge-reranker-v2-m3", "BAAI/bge-reranker-base", "BAAI/bge-reranker-large"})


class RerankError(ValueError):
    """Reranking cannot run as asked; the message says why and what to do next."""


@dataclasses.dataclass(frozen=True)
class RerankerSpec:
    """``name`` is stored in ``runs.reranker`` (model + precision suffix); ``source`` is what
    ``CrossEncoder`` loads; ``encoder``: known to be an encoder (None: unknown); ``precision``: what
    it computes in."""

    name: str
    source: str
    encoder: bool | None = None
    precision: str = "fp32"

    def at_precision(self, precision: str | None, device: str | None = None) -> "RerankerSpec":
        """This cross-encoder computing in ``precision`` (``auto | fp32 | bf16``); None: unchanged."""
        if precision is None:
            return self
        try:
            computed = resolve_precision(precision, device or auto_device(), self.encoder)
        except PrecisionError as exc:
            raise RerankError(f"reranker {self.name!r}: {exc}") from None
        base = split_name(self.name)[0]
        return dataclasses.replace(self, name=stored_name(base, computed), precision=computed)

    def load(self, device: str | None = None):
        """Load the cross-encoder (auto device) computing in ``precision``. Raises :class:`RerankError`."""
        from sentence_transformers import CrossEncoder

        device = device or auto_device()
        try:
            model = CrossEncoder(self.source, device=device)
        except Exception as exc:  # OSError / hub errors: all mean "cannot load"
            raise RerankError(
                f"cannot load reranker {self.name!r} from {self.source!r}: {type(exc).__name__}: {exc} "
                "(pass --reranker with an existing local cross-encoder directory or a reachable hub id)"
            ) from exc
        try:
            return apply_precision(model, self.precision, device)
        except PrecisionError as exc:
            raise RerankError(f"reranker {self.name!r}: {exc}") from None


def resolve_reranker(
    name_or_path: str | RerankerSpec | None = None, precision: str | None = None, device: str | None = None
) -> RerankerSpec:
    """A local directory (stored under its absolute path) or a hub id ``owner/model``, computing in
    ``precision`` (None: the name's own ``@suffix``, else fp32)."""
    if isinstance(name_or_path, RerankerSpec):
        return name_or_path.at_precision(precision, device)
    key, named = split_name(name_or_path or DEFAULT_RERANKER)
    if named is not None:
        if precision not in (None, "auto", named):
            raise RerankError(f"reranker {name_or_path!r} names precision {named} but precision {precision} was asked")
        precision = named
    path = Path(key).expanduser()
    if path.is_dir():
        source = str(path.resolve())
        return RerankerSpec(name=source, source=source, encoder=encoder_from_source(source)).at_precision(
            precision, device
        )
    parts = key.split("/")
    if len(parts) == 2 and all(parts) and not key.startswith((".", "~", "/")):
        encoder = True if key in KNOWN_ENCODERS else encoder_from_source(key)
        return RerankerSpec(name=key, source=key, encoder=encoder).at_precision(precision, device)
    raise RerankError(f"reranker {key!r} is neither an existing local directory nor a hub id of the form owner/model")


def first_stage_runs(
    con: duckdb.DuckDBPyConnection, embedder: str, corpus: str | None, conditions: list[str] | None
) -> list[tuple[str, str, str]]:
    """``(corpus, condition, fingerprint)`` of the stored first-stage runs of ``embedder``."""
    rows = con.execute(
        """SELECT corpus, condition, fingerprint FROM run_manifest
           WHERE embedder = $e AND reranker = 'none' AND ($corpus IS NULL OR corpus = $corpus)
           ORDER BY corpus, condition""",
        {"e": embedder, "corpus": corpus},
    ).fetchall()
    return [r for r in rows if conditions is None or r[1] in conditions]


def candidates(con: duckdb.DuckDBPyConnection, embedder: str, corpus: str, condition: str, depth: int) -> pa.Table:
    """The top ``depth`` of a first-stage run with query and passage texts and their keys."""
    return arrow_query(
        con,
        f"""SELECT r.query_id, r.chunk_id, ct.doc_id, q.text AS query_text,
                   sha256('{QUERY_HASH_PREFIX}' || q.text) AS query_hash, ct.text AS passage, ct.text_hash
            FROM runs r
            JOIN queries q ON q.query_id = r.query_id
            JOIN int_condition_texts ct ON ct.corpus = r.corpus AND ct.condition = r.condition AND ct.chunk_id = r.chunk_id
            WHERE r.corpus = $corpus AND r.embedder = $e AND r.reranker = 'none' AND r.condition = $condition
              AND r.rank <= $depth
            ORDER BY r.query_id, r.rank""",
        {"corpus": corpus, "e": embedder, "condition": condition, "depth": depth},
    )


def rerank_order(query_ids: np.ndarray, doc_ids: np.ndarray, chunk_ids: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Row order grouping queries (ascending) and, within a query, score desc then tie order
    (document, then chunk number: :func:`ingest.retrieval.ties.tie_ranks`)."""
    return np.lexsort((tie_ranks(doc_ids, chunk_ids), -scores, query_ids))


def rerank_stage(
    con: duckdb.DuckDBPyConnection,
    reranker: str | RerankerSpec | None = None,
    embedder: str | EmbedderSpec | None = None,
    corpus: str | None = None,
    conditions: list[str] | None = None,
    *,
    depth: int = RERANK_DEPTH,
    model=None,
    device: str | None = None,
    batch_size: int = 32,
    show_progress: bool = True,
    precision: str | None = "auto",
    embedder_precision: str | None = "auto",
    engine=None,
) -> dict:
    """Rerank every stored first-stage run of ``embedder`` (its vectors computed in
    ``embedder_precision``; optionally filtered) with ``reranker`` computing in ``precision``.

    ``engine``: None scores in this process; a :class:`ingest.retrieval.ray_engine.RaySettings` scores the
    missing pairs as a Ray Data job (:func:`ingest.retrieval.ray_engine.score_pairs`: the same blocks of
    :data:`SCORE_BLOCK` pairs and model batches of ``batch_size``, so the same scores and rows).

    Returns ``{"reranker", "embedder", "depth", "pairs_scored", "conditions": [report per run]}``."""
    require_condition_texts(con)
    spec = resolve_reranker(reranker, precision, device)
    embedder_name = resolve_embedder(embedder, embedder_precision).name
    runs = first_stage_runs(con, embedder_name, corpus, conditions)
    if not runs:
        raise RerankError(f"no first-stage runs for embedder {embedder_name!r}: run `ragwh retrieve` first")
    cache: dict[tuple[str, str], float] = {}
    reports = []
    for corpus_name, condition, first_fp in runs:
        fp = hashlib.sha256(f"{FINGERPRINT_VERSION}\n{first_fp}\n{spec.name}\n{depth}".encode()).hexdigest()
        report = {"corpus": corpus_name, "condition": condition}
        if stored_fingerprint(con, corpus_name, embedder_name, spec.name, condition) == fp:
            reports.append({**report, "status": "unchanged", "rows": None})
            continue
        cand = candidates(con, embedder_name, corpus_name, condition, depth)
        keys = list(zip(cand.column("query_hash").to_pylist(), cand.column("text_hash").to_pylist()))
        query_text, passage = cand.column("query_text").to_pylist(), cand.column("passage").to_pylist()
        first_row: dict[tuple[str, str], int] = {}
        for i, key in enumerate(keys):
            if key not in cache:
                first_row.setdefault(key, i)
        todo = sorted(first_row.items(), key=lambda item: (-len(passage[item[1]]) - len(query_text[item[1]]), item[0]))
        if todo and engine is not None:
            from ingest.retrieval.ray_engine import score_pairs

            pairs = [(query_text[i], passage[i]) for _, i in todo]
            with progress_bar(
                f"reranking {corpus_name}/{condition} with {spec.name} on Ray", total=len(pairs), enabled=show_progress
            ) as advance:
                scores = score_pairs(spec, pairs, engine, batch_size, SCORE_BLOCK, advance)
            cache.update({key: float(s) for (key, _), s in zip(todo, scores)})
        elif todo:
            model = model if model is not None else spec.load(device)
            pairs = [(query_text[i], passage[i]) for _, i in todo]
            scores = np.empty(len(pairs), dtype=np.float64)
            with progress_bar(
                f"reranking {corpus_name}/{condition} with {spec.name}", total=len(pairs), enabled=show_progress
            ) as advance:
                for start in range(0, len(pairs), SCORE_BLOCK):
                    part = pairs[start : start + SCORE_BLOCK]
                    scores[start : start + len(part)] = np.asarray(
                        model.predict(part, batch_size=batch_size, show_progress_bar=False), dtype=np.float64
                    ).reshape(-1)
                    advance(len(part))
            cache.update({key: float(s) for (key, _), s in zip(todo, scores)})
        query_ids = np.array(cand.column("query_id").to_pylist(), dtype=str)
        chunk_ids = np.array(cand.column("chunk_id").to_pylist(), dtype=str)
        scores = np.array([cache[key] for key in keys], dtype=np.float64)
        order = rerank_order(query_ids, cand.column("doc_id").to_pylist(), chunk_ids.tolist(), scores)
        query_ids, chunk_ids, scores = query_ids[order], chunk_ids[order], scores[order]
        uq, first, counts = np.unique(query_ids, return_index=True, return_counts=True)
        ranks = np.arange(len(order)) - np.repeat(first, counts) + 1
        table = pa.table(
            {
                "corpus": pa.array([corpus_name] * len(order), pa.string()),
                "embedder": pa.array([embedder_name] * len(order), pa.string()),
                "reranker": pa.array([spec.name] * len(order), pa.string()),
                "condition": pa.array([condition] * len(order), pa.string()),
                "query_id": pa.array(query_ids.tolist(), pa.string()),
                "rank": pa.array(ranks.astype(np.int32)),
                "chunk_id": pa.array(chunk_ids.tolist(), pa.string()),
                "score": pa.array(scores),
            }
        )
        write_run(
            con,
            corpus=corpus_name,
            embedder=embedder_name,
            reranker=spec.name,
            condition=condition,
            runs=table,
            fp=fp,
            k=depth,
            n_queries=len(uq),
            routing=None,
            system_params={"reranker": split_name(spec.name)[0], "precision": spec.precision, "depth": depth},
        )
        reports.append(
            {**report, "status": "computed", "rows": table.num_rows, "n_queries": len(uq), "pairs_scored": len(todo)}
        )
    return {
        "reranker": spec.name,
        "embedder": embedder_name,
        "depth": depth,
        "pairs_scored": len(cache),
        "conditions": reports,
    }
