"""The chunking stage: every chunkset and path/placebo prefix for the documents in the warehouse.

:func:`chunk_corpus` reads ``documents``, ``paragraphs`` and ``sections``, builds

* ``structural:<structure>`` chunks for every structure a document has (``gold``,
  ``induced:<inducer>``, ...), ``fixed`` size-matched windows (reference structure
  ``induced:<inducer>`` when the document has it, else ``gold``; a document with neither gets no
  fixed chunks and is counted in ``funnel``), and one ``doc`` chunk per document
  (rules: :mod:`ingest.chunking.chunkers`);
* ``chunk_prefixes`` of kind ``path`` and ``placebo`` at depths 1..3 for every structural chunk and
  the ``placebo_paths`` assignment, and of kind ``title`` (BEIR's ``title + " "``, depth 0) for every
  ``doc`` chunk (rules: :mod:`ingest.chunking.prefixes`);

and replaces the rows of those documents in ONE transaction (identical tables on rerun). Rows of
documents no longer in ``documents`` are removed too. ``llm_context`` prefixes (written by the LLM
stage) are kept when their chunk keeps its id and span, and deleted when the chunk changed or
disappeared (their count is returned as ``llm_context_invalidated``). Runs that rank a chunk that no
longer exists are deleted whole (:func:`warehouse.db.purge_dangling_runs`).
"""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Iterable

import duckdb
import numpy as np
import pyarrow as pa
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)

from ingest.chunking.chunkers import (
    BodySentences,
    Piece,
    body_sentence_starts,
    doc_chunk,
    fixed_chunks,
    sentence_texts,
    structural_chunks,
)
from ingest.chunking.documents import Chunk, Doc, read_documents
from ingest.chunking.prefixes import (
    DEPTHS,
    DERIVED_KINDS,
    PLACEBO_SEED,
    cut,
    derange,
    join_path,
    render,
    section_paths,
    title_prefix,
)
from ingest.chunking.sentence_windows import SENTENCE_CHUNKSET_PREFIX
from ingest.chunking.summary import FUNNEL_STAGE, funnel_rows, summarize
from ingest.chunking.tokens import count_tokens, tokenizer_name
from ingest.errors import IngestError
from warehouse.db import purge_dangling_runs, replace_where, transaction

COUNT_BATCH = 4096  # texts per progress step when counting tokens


def chunk_corpus(
    con: duckdb.DuckDBPyConnection,
    corpus: str | None = None,
    inducer: str = "texttiling",
    tokenizer: str | None = None,
    *,
    show_progress: bool = True,
) -> dict:
    """Chunk every document of ``corpus`` (all corpora when None) and load chunks and prefixes.

    ``inducer`` picks the fixed chunkset's reference structure ``induced:<inducer>``; ``tokenizer``
    names the embedder whose tokenizer counts tokens (default all-MiniLM-L6-v2). Returns a summary:
    per-chunkset counts and mean content tokens, the size matching per corpus (realized mean fixed
    vs mean reference-structural content tokens), placebo residuals, and timings.
    """
    t0 = time.perf_counter()
    tok_name = tokenizer_name(tokenizer)
    docs = read_documents(con, corpus)
    if corpus is not None and not docs:
        raise IngestError(
            "warehouse", f"corpus {corpus}", "no documents to chunk", "load the corpus first with `ragwh ingest ...`"
        )
    with _progress(show_progress) as progress:
        sents = _sentences(docs, tok_name, progress)
        chunks = _all_chunks(docs, sents, inducer, tok_name, progress)
        prefix_rows, placebo_rows = _prefixes(docs, chunks["structural"], chunks["doc"], tok_name, progress)
    all_chunks = chunks["structural"] + chunks["fixed"] + chunks["doc"]
    _check_tiling(docs, all_chunks)
    summary = summarize(docs, chunks, chunks["reference"], placebo_rows)
    funnel = funnel_rows(docs, chunks["reference"])
    invalidated = _write(con, docs, all_chunks, chunks["reference"], tok_name, prefix_rows, placebo_rows, funnel)
    summary.update(
        tokenizer=tok_name, inducer=inducer, llm_context_invalidated=invalidated, seconds=time.perf_counter() - t0
    )
    return summary


# --- computing --------------------------------------------------------------------------------------------


def _progress(show: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        disable=not show,
    )


def _count(texts: list[str], tokenizer: str, progress: Progress, label: str) -> np.ndarray:
    task = progress.add_task(label, total=len(texts))
    out = np.zeros(len(texts), dtype=np.int64)
    for lo in range(0, len(texts), COUNT_BATCH):
        out[lo : lo + COUNT_BATCH] = count_tokens(texts[lo : lo + COUNT_BATCH], tokenizer)
        progress.advance(task, min(COUNT_BATCH, len(texts) - lo))
    return out


def _sentences(docs: dict[str, Doc], tokenizer: str, progress: Progress) -> dict[str, BodySentences]:
    split: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    texts: list[str] = []
    task = progress.add_task("splitting sentences", total=len(docs))
    for doc in docs.values():
        starts, para_first = body_sentence_starts(doc.text, doc.paragraphs)
        split[doc.doc_id] = (starts, para_first)
        texts.extend(sentence_texts(doc.text, starts, doc.paragraphs[-1][1]))
        progress.advance(task)
    tokens = _count(texts, tokenizer, progress, "counting sentence tokens")
    out, lo = {}, 0
    for doc in docs.values():
        starts, para_first = split[doc.doc_id]
        out[doc.doc_id] = BodySentences(starts, para_first, doc.paragraphs[-1][1], tokens[lo : lo + len(starts)])
        lo += len(starts)
    return out


def _to_chunks(chunkset: str, doc: Doc, pieces: Iterable[Piece], sents: BodySentences) -> list[Chunk]:
    out = []
    for k, p in enumerate(pieces):
        s, e = sents.span(p.first, p.end)
        out.append(Chunk(chunkset, doc.doc_id, k, s, e, p.section_idx))
    return out


def _recount(docs: dict[str, Doc], chunks: list[Chunk], tokenizer: str, progress: Progress, label: str) -> None:
    texts = [docs[c.doc_id].text[c.char_start : c.char_end].strip() for c in chunks]
    for c, n in zip(chunks, _count(texts, tokenizer, progress, label).tolist()):
        c.content_tokens = n


def _all_chunks(
    docs: dict[str, Doc], sents: dict[str, BodySentences], inducer: str, tokenizer: str, progress: Progress
) -> dict:
    structural: list[Chunk] = []
    whole: list[Chunk] = []
    task = progress.add_task("structural + doc chunks", total=len(docs))
    for doc in docs.values():
        s = sents[doc.doc_id]
        for structure in sorted(doc.structures):
            pieces = structural_chunks(doc.structures[structure], s)
            structural.extend(_to_chunks(f"structural:{structure}", doc, pieces, s))
        whole.extend(_to_chunks("doc", doc, doc_chunk(len(s.starts), s.tokens), s))
        progress.advance(task)
    _recount(docs, structural + whole, tokenizer, progress, "counting chunk tokens")

    by_set: dict[tuple[str, str], list[int]] = defaultdict(list)
    for c in structural:
        by_set[(c.chunkset, c.doc_id)].append(c.content_tokens)
    reference: dict[str, tuple[str, float]] = {}
    fixed: list[Chunk] = []
    for doc in docs.values():
        for structure in (f"induced:{inducer}", "gold"):
            if structure in doc.structures:
                target = float(np.mean(by_set[(f"structural:{structure}", doc.doc_id)]))
                reference[doc.doc_id] = (structure, target)
                s = sents[doc.doc_id]
                fixed.extend(_to_chunks("fixed", doc, fixed_chunks(s.tokens, target), s))
                break
    _recount(docs, fixed, tokenizer, progress, "counting fixed-window tokens")
    return {"structural": structural, "fixed": fixed, "doc": whole, "reference": reference}


def _prefixes(
    docs: dict[str, Doc], structural: list[Chunk], whole: list[Chunk], tokenizer: str, progress: Progress
) -> tuple[pa.Table, pa.Table]:
    paths: dict[tuple[str, str], list[tuple[str, ...]]] = {}
    uses: list[tuple[Chunk, str, int, tuple[str, ...]]] = []
    for c in structural:
        structure = c.chunkset.removeprefix("structural:")
        key = (structure, c.doc_id)
        if key not in paths:
            doc = docs[c.doc_id]
            paths[key] = section_paths(doc.title, doc.structures[structure])
        full = paths[key][c.section_idx]
        uses.extend((c, structure, d, cut(full, d)) for d in DEPTHS)

    # placebo: unique (doc, path) pairs per (structure, corpus, number of elements)
    buckets: dict[tuple[str, str, int], set[tuple[str, tuple[str, ...]]]] = defaultdict(set)
    for c, structure, _, path in uses:
        buckets[(structure, docs[c.doc_id].corpus, len(path))].add((c.doc_id, path))
    placebo_of: dict[tuple[str, str, tuple[str, ...]], tuple[str, ...]] = {}
    placebo_cols: dict[str, list] = defaultdict(list)
    for (structure, corpus, depth), pairs in sorted(buckets.items()):
        ordered = sorted(pairs)
        perm, same = derange([d for d, _ in ordered], PLACEBO_SEED, f"{structure}|{corpus}", depth)
        for (doc_id, path), j, residual in zip(ordered, perm.tolist(), same.tolist()):
            placebo_doc, placebo_path = ordered[j]
            placebo_of[(structure, doc_id, path)] = placebo_path
            for name, value in (
                ("structure", structure),
                ("corpus", corpus),
                ("depth", depth),
                ("doc_id", doc_id),
                ("path", join_path(path)),
                ("placebo_doc_id", placebo_doc),
                ("placebo_path", join_path(placebo_path)),
                ("same_document", residual),
                ("seed", PLACEBO_SEED),
            ):
                placebo_cols[name].append(value)

    rows: dict[str, list] = defaultdict(list)
    for c, structure, d, path in uses:
        for kind, shown in (("path", path), ("placebo", placebo_of[(structure, c.doc_id, path)])):
            rows["chunkset"].append(c.chunkset)
            rows["chunk_id"].append(c.chunk_id)
            rows["prefix_kind"].append(kind)
            rows["depth"].append(d)
            rows["prefix"].append(render(shown))
    for c in whole:
        rows["chunkset"].append(c.chunkset)
        rows["chunk_id"].append(c.chunk_id)
        rows["prefix_kind"].append("title")
        rows["depth"].append(0)
        rows["prefix"].append(title_prefix(docs[c.doc_id].title))
    unique = sorted(set(rows["prefix"]))
    counts = dict(zip(unique, _count(unique, tokenizer, progress, "counting prefix tokens").tolist()))
    rows["prefix_tokens"] = [counts[p] for p in rows["prefix"]]
    prefix_schema = pa.schema(
        [
            ("chunkset", pa.string()),
            ("chunk_id", pa.string()),
            ("prefix_kind", pa.string()),
            ("depth", pa.int32()),
            ("prefix", pa.string()),
            ("prefix_tokens", pa.int32()),
        ]
    )
    placebo_schema = pa.schema(
        [
            ("structure", pa.string()),
            ("corpus", pa.string()),
            ("depth", pa.int32()),
            ("doc_id", pa.string()),
            ("path", pa.string()),
            ("placebo_doc_id", pa.string()),
            ("placebo_path", pa.string()),
            ("same_document", pa.bool_()),
            ("seed", pa.int64()),
        ]
    )
    return (
        pa.Table.from_pydict({n: rows.get(n, []) for n in prefix_schema.names}, schema=prefix_schema),
        pa.Table.from_pydict({n: placebo_cols.get(n, []) for n in placebo_schema.names}, schema=placebo_schema),
    )


def _check_tiling(docs: dict[str, Doc], chunks: list[Chunk]) -> None:
    """Raise if any chunkset of any document fails to tile the body (a bug, never bad input)."""
    by_set: dict[tuple[str, str], list[Chunk]] = defaultdict(list)
    for c in chunks:
        by_set[(c.chunkset, c.doc_id)].append(c)
    for (chunkset, doc_id), cs in by_set.items():
        paras = docs[doc_id].paragraphs
        edges = [paras[0][0]] + [c.char_end for c in cs]
        starts = [c.char_start for c in cs]
        if starts != edges[:-1] or edges[-1] != paras[-1][1] or any(c.char_end <= c.char_start for c in cs):
            raise AssertionError(f"chunkset {chunkset} does not tile {doc_id}")


# --- writing --------------------------------------------------------------------------------------------


def _scope(column: str) -> str:
    """Rows being replaced: the chunked documents and documents no longer in ``documents``."""
    return f"({column} IN (SELECT doc_id FROM _chunk_scope) OR {column} NOT IN (SELECT doc_id FROM documents))"


def _owned(column: str) -> str:
    """Chunksets this stage writes: every kind but the overlapping sentence windows, whose own stage
    (:mod:`ingest.chunking.sentence_windows`) replaces them."""
    return f"NOT starts_with({column}, '{SENTENCE_CHUNKSET_PREFIX}')"


def _write(
    con: duckdb.DuckDBPyConnection,
    docs: dict[str, Doc],
    chunks: list[Chunk],
    reference: dict[str, tuple[str, float]],
    tokenizer: str,
    prefixes: pa.Table,
    placebo: pa.Table,
    funnel: pa.Table,
) -> int:
    """Replace the chunking tables' rows of ``docs`` (and of vanished documents) in one transaction.

    Returns the number of ``llm_context`` prefixes deleted because their chunk changed span or vanished."""
    chunk_table = pa.table(
        {
            "chunkset": [c.chunkset for c in chunks],
            "chunk_id": [c.chunk_id for c in chunks],
            "doc_id": [c.doc_id for c in chunks],
            "chunk_idx": pa.array([c.chunk_idx for c in chunks], pa.int32()),
            "char_start": pa.array([c.char_start for c in chunks], pa.int32()),
            "char_end": pa.array([c.char_end for c in chunks], pa.int32()),
            "content_tokens": pa.array([c.content_tokens for c in chunks], pa.int32()),
            "section_idx": pa.array([c.section_idx for c in chunks], pa.int32()),
        }
    ).sort_by([("chunkset", "ascending"), ("doc_id", "ascending"), ("chunk_idx", "ascending")])
    sets = sorted({(c.chunkset, c.doc_id) for c in chunks})
    chunkset_docs = pa.table(
        {
            "chunkset": [s for s, _ in sets],
            "doc_id": [d for _, d in sets],
            "reference_structure": [reference[d][0] if s == "fixed" else None for s, d in sets],
            "target_tokens": pa.array([reference[d][1] if s == "fixed" else None for s, d in sets], pa.float64()),
            "tokenizer": [tokenizer] * len(sets),
        }
    )
    scope_docs = pa.table({"doc_id": sorted(docs)})
    corpora = pa.table({"corpus": sorted({d.corpus for d in docs.values()})})
    con.register("_chunk_scope", scope_docs)
    con.register("_chunk_corpora", corpora)
    con.register("_chunk_new", chunk_table)
    try:
        with transaction(con):
            invalidated = con.execute(
                f"DELETE FROM chunk_prefixes WHERE prefix_kind NOT IN {DERIVED_KINDS} AND chunk_id IN ("
                " SELECT o.chunk_id FROM chunks o LEFT JOIN _chunk_new n ON n.chunk_id = o.chunk_id"
                "  AND n.char_start = o.char_start AND n.char_end = o.char_end"
                f" WHERE {_scope('o.doc_id')} AND {_owned('o.chunkset')}"
                "  AND n.chunk_id IS NULL)"
            ).fetchone()[0]
            con.execute(
                f"DELETE FROM chunk_prefixes WHERE prefix_kind IN {DERIVED_KINDS} "
                f"AND chunk_id IN (SELECT chunk_id FROM chunks WHERE {_scope('doc_id')} AND {_owned('chunkset')})"
            )
            replace_where(con, "chunks", f"{_scope('doc_id')} AND {_owned('chunkset')}", [], chunk_table)
            purge_dangling_runs(con)  # a run ranking a chunk that is gone is stale: retrieval recomputes it
            replace_where(con, "chunk_prefixes", "FALSE", [], prefixes)
            replace_where(con, "chunkset_docs", f"{_scope('doc_id')} AND {_owned('chunkset')}", [], chunkset_docs)
            replace_where(
                con,
                "placebo_paths",
                "(corpus IN (SELECT corpus FROM _chunk_corpora) OR doc_id NOT IN (SELECT doc_id FROM documents))",
                [],
                placebo,
            )
            replace_where(
                con, "funnel", "stage = ? AND corpus IN (SELECT corpus FROM _chunk_corpora)", [FUNNEL_STAGE], funnel
            )
    finally:
        for name in ("_chunk_scope", "_chunk_corpora", "_chunk_new"):
            con.unregister(name)
    return int(invalidated)
