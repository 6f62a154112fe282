"""The searchable index of the study: one corpus's sentence-window chunks with their vectors.

A chunk's text is exactly what is embedded and what the cross-encoder reads: its ``title`` prefix
(BEIR's ``title + " "``, :func:`ingest.chunking.prefixes.title_prefix`) followed by its content
``documents.text[char_start:char_end].strip()``; its key is ``sha256(text)``. Chunks are ordered by
``doc_id`` then ``chunk_idx`` (as numbers), which is also the order ties break in (dense top-k ties go
to the earlier position). Documents are numbered in that order (``doc_codes``).

Only a cross-encoder reads chunk texts after they are embedded: without a reranker the index keeps no text
(``ChunkIndex.texts`` is None), its keys are hashed block by block of documents, and only the texts whose
vectors are not stored yet are held, to embed them. At 1.2M chunks that is ~2.3 KiB less per chunk.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterator
from pathlib import Path

import duckdb
import numpy as np

from ingest.retrieval import memory
from ingest.retrieval.embed import arrow_query, stored_dimension
from ingest.retrieval.memory import check_memory, graph_memory, index_memory
from ingest.rewriting.ann import AnnParams, graph_folder
from ingest.rewriting.vectors import Embedder, fetch_vectors, store_missing, stored_keys, text_key, text_vectors
from udfs.cores import usable_cores
from warehouse.db import release_cached_memory, warehouse_file

DOC_BLOCK = 20_000  # documents read at a time when slicing chunk texts
#: The dimension assumed before any vector is stored (the smallest of the registered embedders): a lower bound.
MIN_DIM = 384
#: HNSW graphs built at once (each on one thread; ``ann.graphs_in_turn`` keeps that many alive) when
#: ``rewriting.ann.build_workers`` is not set: as many as the usable cores, at most this many, and only as
#: many as fit in memory beside the matrix (:func:`check_index_memory`).
AUTO_GRAPH_WORKERS = 16


class RewriteError(ValueError):
    """The rewriting stage cannot run as asked; the message says what to do next."""


@dataclasses.dataclass
class ChunkIndex:
    chunk_ids: np.ndarray  # object (str), in index order
    doc_ids: np.ndarray  # object (str), per chunk
    doc_codes: np.ndarray  # int64, per chunk: position of its document in ``documents``
    documents: np.ndarray  # object (str), the distinct doc_ids in order
    texts: list[str] | None  # None: not kept (no reranker reads them)
    vectors: np.ndarray  # float32 (n, d), L2-normalized
    graph_folder: Path | None = None  # where its HNSW graphs are persisted (None: built in memory)
    graph_workers: int = 2  # HNSW graphs built (and alive) at once (check_index_memory)
    engine: object = None  # a RaySettings: the graphs are built as Ray tasks (ingest.rewriting.ann_ray)
    _digest: str | None = None

    def digest(self) -> str:
        """``sha256`` of the chunk ids and the vectors: names the graphs built over exactly this index."""
        if self._digest is None:
            h = hashlib.sha256("\n".join(self.chunk_ids.tolist()).encode("utf-8"))
            h.update(str(self.vectors.shape).encode())
            h.update(np.ascontiguousarray(self.vectors, dtype=np.float32))  # the buffer itself, no bytes copy
            self._digest = h.hexdigest()
        return self._digest


def chunk_texts(con: duckdb.DuckDBPyConnection, corpus: str, chunkset: str) -> tuple[list[str], list[str], list[str]]:
    """``(chunk_ids, doc_ids, texts)`` of the chunkset's chunks of ``corpus`` in index order.

    Each document's text is read once (in blocks of :data:`DOC_BLOCK` documents) and sliced for all of
    its chunks, so no chunk row carries a copy of its document's text: memory is the chunk texts plus
    one block of documents."""
    chunk_ids, doc_ids, blocks = chunk_text_blocks(con, corpus, chunkset)
    return chunk_ids, doc_ids, [t for block in blocks for t in block]


def chunk_text_blocks(
    con: duckdb.DuckDBPyConnection, corpus: str, chunkset: str
) -> tuple[list[str], list[str], Iterator[list[str]]]:
    """``(chunk_ids, doc_ids, blocks)``: :func:`chunk_texts` with the texts as an iterator of lists, one per
    block of :data:`DOC_BLOCK` documents, in index order (memory: one block of documents and its texts)."""
    table = arrow_query(
        con,
        """
        SELECT c.chunk_id, c.doc_id, c.char_start, c.char_end, coalesce(p.prefix, '') AS prefix
        FROM chunks c JOIN documents d USING (doc_id)
        LEFT JOIN chunk_prefixes p ON p.chunk_id = c.chunk_id AND p.prefix_kind = 'title' AND p.depth = 0
        WHERE c.chunkset = $cs AND d.corpus = $corpus
        ORDER BY c.doc_id, c.chunk_idx""",
        {"cs": chunkset, "corpus": corpus},
    )
    chunk_ids, doc_ids = table.column("chunk_id").to_pylist(), table.column("doc_id").to_pylist()
    starts, ends = table.column("char_start").to_pylist(), table.column("char_end").to_pylist()
    prefixes = table.column("prefix").to_pylist()
    del table

    def blocks() -> Iterator[list[str]]:
        docs = list(dict.fromkeys(doc_ids))  # in index order (doc_id order)
        i = 0
        for lo in range(0, len(docs), DOC_BLOCK):
            block = docs[lo : lo + DOC_BLOCK]
            rows = arrow_query(
                con,
                "SELECT doc_id, text FROM documents WHERE doc_id BETWEEN $lo AND $hi "
                "AND corpus = $corpus ORDER BY doc_id",
                {"lo": block[0], "hi": block[-1], "corpus": corpus},
            )
            text_of = dict(zip(rows.column("doc_id").to_pylist(), rows.column("text").to_pylist()))
            texts: list[str] = []
            while i < len(doc_ids) and (text := text_of.get(doc_ids[i])) is not None:
                texts.append(prefixes[i] + text[starts[i] : ends[i]].strip())
                i += 1
            yield texts
        if i != len(doc_ids):
            raise RewriteError(
                f"chunk {chunk_ids[i]!r}: its document {doc_ids[i]!r} has no text in corpus {corpus!r}; "
                "rerun the sentence chunking stage after loading the corpus"
            )

    return chunk_ids, doc_ids, blocks()


def check_index_memory(
    con: duckdb.DuckDBPyConnection,
    corpus: str,
    chunkset: str,
    embedder: str,
    ann: AnnParams | None = None,
    keep_texts: bool = True,
    build_workers: int | None = None,
) -> tuple[int, int]:
    """``(estimate in bytes, graphs built at once)``; refuses (:class:`ingest.retrieval.memory.MemoryEstimateError`,
    before anything is read) an index whose matrix, chunk texts (their 64-character keys when ``keep_texts`` is
    false) and HNSW graphs (``ann``) would not fit in the available memory
    (:func:`ingest.retrieval.memory.index_memory`). The graphs alive at once are ``build_workers`` when given,
    else as many as the usable cores (at most :data:`AUTO_GRAPH_WORKERS`) that fit in memory beside the
    matrix and texts, at least one: so a machine with more cores and memory builds more graphs at once, and
    one with little memory builds them one at a time rather than refusing. Without ``ann``: 0 graphs."""
    n, chars = con.execute(
        """
        SELECT count(*), coalesce(sum(c.char_end - c.char_start + coalesce(strlen(p.prefix), 0)), 0)
        FROM chunks c JOIN documents d USING (doc_id)
        LEFT JOIN chunk_prefixes p ON p.chunk_id = c.chunk_id AND p.prefix_kind = 'title' AND p.depth = 0
        WHERE c.chunkset = ? AND d.corpus = ?""",
        [chunkset, corpus],
    ).fetchall()[0]
    n, dim = int(n), stored_dimension(con, embedder) or MIN_DIM
    base = index_memory(n, dim, int(chars) if keep_texts else 64 * n)
    workers = 0
    if ann is not None:
        graph = graph_memory(n, dim, ann.m)
        allowed = memory.max_memory_fraction() * memory.available_bytes()
        workers = build_workers or max(
            1, min(usable_cores(), AUTO_GRAPH_WORKERS, int((allowed - base) // max(graph, 1)))
        )
        base += workers * graph
    check_memory(
        base,
        f"the dense index of {corpus!r} ({n:,} chunks x {dim} dimensions, float32 matrix, chunk "
        f"{'texts' if keep_texts else 'keys'}"
        f"{' and %d HNSW graph%s at M %d' % (workers, 's' * (workers > 1), ann.m) if ann else ''})",
        "lower rewriting.ann.build_workers (graphs built at once)"
        if build_workers and build_workers > 1
        else "run the study on fewer documents (a corpus sample)",
    )
    return base, workers


def load_index(
    con: duckdb.DuckDBPyConnection,
    corpus: str,
    chunkset: str,
    embedder: Embedder,
    show_progress: bool = True,
    ann: AnnParams | None = None,
    keep_texts: bool = True,
    build_workers: int | None = None,
) -> ChunkIndex:
    """The corpus's index, embedding chunk texts not yet stored for the embedder; refused first when it would
    not fit in memory (:func:`check_index_memory`, with the graphs of ``ann`` when given). ``keep_texts``
    false (nothing reads them after embedding: no reranker): the index holds no text (module doc)."""
    _, workers = check_index_memory(con, corpus, chunkset, embedder.spec.name, ann, keep_texts, build_workers)
    chunk_ids, doc_ids, blocks = chunk_text_blocks(con, corpus, chunkset)
    if not chunk_ids:
        raise RewriteError(
            f"corpus {corpus!r} has no {chunkset!r} chunks: run the sentence chunking stage "
            "(`ragwh run` with a rewriting config does) after loading the corpus"
        )
    label = f"embedding {corpus} chunks"
    if keep_texts:
        texts: list[str] | None = [t for block in blocks for t in block]
        vectors, _ = text_vectors(con, embedder, texts, [False] * len(texts), label=label, show_progress=show_progress)
    else:
        texts = None
        keys: list[str] = []
        todo: dict[str, tuple[str, bool]] = {}  # only the texts whose vectors are not stored yet (each once)
        for block in blocks:
            block_keys = [text_key(t, False) for t in block]
            stored = stored_keys(con, embedder.spec.name, block_keys)
            todo.update((k, (t, False)) for k, t in zip(block_keys, block) if k not in stored)
            keys += block_keys
        store_missing(con, embedder, todo, label=label, show_progress=show_progress)
        del todo
        vectors = fetch_vectors(con, embedder.spec.name, keys)
    documents, codes = np.unique(np.array(doc_ids, dtype=object), return_inverse=True)
    del doc_ids  # one string per chunk; the index's doc_ids point into ``documents`` instead
    release_cached_memory(con)  # what DuckDB cached while reading, before the graphs are built
    return ChunkIndex(
        np.array(chunk_ids, dtype=object),
        documents[codes],
        codes.astype(np.int64),
        documents,
        texts,
        vectors,
        graph_folder(warehouse_file(con), corpus, embedder.spec.name, chunkset),
        graph_workers=max(workers, 1),
        engine=embedder.engine,
    )
