"""Overlapping sentence windows: the query-rewriting study's chunkset ``sentence:<T>/<O>`` (512/50).

LlamaIndex ``SentenceSplitter`` semantics on this project's sentences (:mod:`ingest.chunking.sentences`;
a paragraph boundary is a sentence boundary), with token counts ``t_k`` of the stripped sentences under
the embedder's tokenizer (no special tokens; the sum over sentences is the chunk's count, as for every
chunker in :mod:`ingest.chunking.chunkers`):

1. **Units.** Each sentence is a unit; a sentence over ``T`` tokens is cut at whitespace into word runs
   of at most ``T`` tokens by greedy fill (LlamaIndex falls back to words too; a single word over ``T``
   tokens stays one oversized unit and is counted).
2. **Packing** (LlamaIndex ``_merge``): units are added in order while the chunk stays ``<= T``; the unit
   that would push it over closes the chunk. The next chunk starts with the *overlap*: the longest run
   of trailing units of the closed chunk whose tokens sum to ``<= O`` (whole units, so the next chunk
   starts at most ``O`` tokens back; a last unit over ``O`` tokens means no overlap).
3. **Bound.** Where the overlap plus the next unit would exceed ``T`` (LlamaIndex then exceeds the chunk
   size, a limitation its source comments on), overlap units are dropped from the front until it fits:
   no chunk is over ``T`` tokens unless one unit alone is.
4. A document of at most ``T`` tokens is one chunk (its whole body).

Counting: the stored ``content_tokens`` of a chunk is the count of its stripped text, as for every
chunkset. Under a BERT-style tokenizer (the default MiniLM, the bge models;
:func:`ingest.chunking.tokens.counts_add_at_whitespace`) that count is taken as the sum of its sentences'
(units') counts wherever every boundary inside the chunk follows a space, tab, newline or carriage return,
where the sum is the same number, so each text is tokenized once rather than three times (body, sentences,
windows; a sentence cut at words is counted again per word run); every other chunk, and every chunk under any
other tokenizer, is counted on its own text. Documents are split and counted ``BLOCK_DOCS`` at a time.

Offsets: a window of units ``a .. b-1`` spans ``[start_a, start_b)`` (the last ends at the body end), so
consecutive chunks OVERLAP by whole units: this chunkset does NOT tile the body, and the tiling
checks (the chunk stage's, ``tests/dbt/chunk_tiling.sql``) exclude it; ``tests/dbt/sentence_window_cover.sql``
checks what holds instead (the windows cover the body in order, each starting after the previous
start and no later than its end). Every chunk keeps its document's offsets (``documents.text``).

:func:`sentence_chunk_stage` writes the chunkset's ``chunks`` (``section_idx`` NULL), ``chunkset_docs``,
one ``title`` prefix per chunk (BEIR's ``title + " "``, :func:`ingest.chunking.prefixes.title_prefix`)
and its funnel, replacing the chunkset's rows of the corpus in one transaction.
"""

from __future__ import annotations

import re
import time

import duckdb
import numpy as np
import pyarrow as pa

from ingest.chunking.chunkers import body_sentence_starts, sentence_texts
from ingest.chunking.documents import read_documents
from ingest.chunking.prefixes import title_prefix
from ingest.chunking.tokens import JOIN_WHITESPACE, count_tokens, counts_add_at_whitespace, tokenizer_name
from ingest.errors import IngestError
from warehouse.db import replace_where, transaction

SENTENCE_CHUNKSET_PREFIX = "sentence:"
CHUNK_TOKENS = 512
OVERLAP_TOKENS = 50
FUNNEL_STAGE = "chunk_sentence"
BLOCK_DOCS = 2048  # documents whose sentences are split and counted at a time (bounds the texts held at once)
_WORD = re.compile(r"\S+\s*")


def chunkset_name(chunk_tokens: int = CHUNK_TOKENS, overlap: int = OVERLAP_TOKENS) -> str:
    """``sentence:<chunk_tokens>/<overlap>`` (e.g. ``sentence:512/50``)."""
    if chunk_tokens < 1 or not 0 <= overlap < chunk_tokens:
        raise ValueError(
            f"sentence windows need chunk_tokens >= 1 and 0 <= overlap < chunk_tokens, got {chunk_tokens}/{overlap}"
        )
    return f"{SENTENCE_CHUNKSET_PREFIX}{chunk_tokens}/{overlap}"


def pack_windows(tokens: np.ndarray, chunk_tokens: int, overlap: int) -> list[tuple[int, int]]:
    """Windows ``(first, end)`` over units with token counts ``tokens`` (rules 2-4 of the module doc).

    >>> pack_windows(np.array([30, 30, 30]), 60, 30)
    [(0, 2), (1, 3)]
    >>> pack_windows(np.array([40, 40]), 100, 10)
    [(0, 2)]
    """
    n = len(tokens)
    if n == 0:
        return []
    t = [int(x) for x in tokens]
    if sum(t) <= chunk_tokens:
        return [(0, n)]
    windows: list[tuple[int, int]] = []
    first, size, k = 0, 0, 0
    while k < n:
        if k > first and size + t[k] > chunk_tokens:
            windows.append((first, k))
            # overlap: trailing whole units of the closed window, <= overlap tokens in all
            back, acc = k, 0
            while back - 1 > first and acc + t[back - 1] <= overlap:
                back -= 1
                acc += t[back]
            # bound: drop overlap units from the front until the next unit fits
            while back < k and acc + t[k] > chunk_tokens:
                acc -= t[back]
                back += 1
            first, size = back, acc
            continue
        size += t[k]
        k += 1
    windows.append((first, n))
    return windows


def split_long_unit(text: str, start: int, end: int, chunk_tokens: int, tokenizer: str | None) -> list[int]:
    """Start offsets of word runs of ``text[start:end]`` with at most ``chunk_tokens`` tokens each
    (greedy fill over whitespace-delimited words; the first is ``start``)."""
    words = [(start + m.start(), start + m.end()) for m in _WORD.finditer(text[start:end])]
    if not words:
        return [start]
    counts = count_tokens([text[s:e].strip() for s, e in words], tokenizer)
    starts, acc = [start], 0
    for (s, _), c in zip(words, counts.tolist()):
        if acc and acc + c > chunk_tokens:
            starts.append(s)
            acc = 0
        acc += c
    return starts


def document_windows(
    text: str,
    starts: np.ndarray,
    tokens: np.ndarray,
    body_end: int,
    chunk_tokens: int,
    overlap: int,
    tokenizer: str | None,
) -> tuple[list[int], np.ndarray, list[tuple[int, int]]]:
    """The windows of one document over ``chunk_tokens`` tokens (rules 1-3 of the module doc), from its
    sentence starts and their token counts: ``(bounds, unit_tokens, windows)``, where unit ``k`` spans
    ``[bounds[k], bounds[k + 1])`` and window ``(a, b)`` holds units ``a .. b-1``."""
    unit_starts: list[int] = []
    ends = starts[1:].tolist() + [body_end]
    split_any = False
    for s, e, t in zip(starts.tolist(), ends, tokens.tolist()):
        if t > chunk_tokens:
            unit_starts.extend(split_long_unit(text, s, e, chunk_tokens, tokenizer))
            split_any = True
        else:
            unit_starts.append(s)
    if split_any:
        unit_ends = unit_starts[1:] + [body_end]
        tokens = count_tokens([text[s:e].strip() for s, e in zip(unit_starts, unit_ends)], tokenizer)
    tokens = np.asarray(tokens, dtype=np.int64)
    return unit_starts + [body_end], tokens, pack_windows(tokens, chunk_tokens, overlap)


def _joins(text: str, bounds) -> np.ndarray:
    """Per boundary in ``bounds``, whether the character before it is one at which counts add up."""
    return np.fromiter((text[b - 1] in JOIN_WHITESPACE for b in bounds), dtype=bool, count=len(bounds))


def _sentence_counts(docs: dict, ids: list[str], tokenizer: str) -> dict[str, tuple[np.ndarray, int, np.ndarray]]:
    """``{doc_id: (sentence starts, body end, token counts of the stripped sentences)}``, the sentences of all
    ``ids`` counted in one batched call."""
    spans, pieces = [], []
    for d in ids:
        doc = docs[d]
        starts, _ = body_sentence_starts(doc.text, doc.paragraphs)
        spans.append((d, starts, doc.paragraphs[-1][1], len(pieces)))
        pieces.extend(sentence_texts(doc.text, starts, doc.paragraphs[-1][1]))
    counts = count_tokens(pieces, tokenizer)
    his = [lo for *_, lo in spans[1:]] + [len(pieces)]
    return {d: (starts, end, counts[lo:hi]) for (d, starts, end, lo), hi in zip(spans, his)}


def chunk_block(docs: dict, block: list[str], chunk_tokens: int, overlap: int, tokenizer: str, additive: bool):
    """The windows of the documents ``block`` (in order): ``(rows, content_tokens, oversized units, documents
    of more than one window)``, rows ``(doc_id, chunk_idx, char_start, char_end)``.

    A body or window is counted on its own stripped text (:mod:`ingest.chunking.tokens`). When ``additive``
    (:func:`ingest.chunking.tokens.counts_add_at_whitespace`), a body or window whose internal boundaries all
    follow a :data:`~ingest.chunking.tokens.JOIN_WHITESPACE` character takes the sum of its sentences' or
    units' counts instead, which is the same number: every text is then tokenized once, not three times
    (whole body, sentences, windows); any other body or window is still counted on its own text."""
    sentences = _sentence_counts(docs, block, tokenizer) if additive else {}
    body_tokens: dict[str, int] = {}
    for d, (starts, _, counts) in sentences.items():
        if _joins(docs[d].text, starts[1:].tolist()).all():
            body_tokens[d] = int(counts.sum())
    direct = [d for d in block if d not in body_tokens]
    bodies = [docs[d].text[docs[d].paragraphs[0][0] : docs[d].paragraphs[-1][1]].strip() for d in direct]
    body_tokens.update(zip(direct, count_tokens(bodies, tokenizer).tolist()))
    long = [d for d in block if body_tokens[d] > chunk_tokens]
    if not additive:
        sentences = _sentence_counts(docs, long, tokenizer)
    rows: list[tuple[str, int, int, int]] = []
    content: list[int | None] = []
    recount: list[int] = []  # positions in rows of windows counted on their own text
    oversized = multi = 0
    for d in block:
        doc = docs[d]
        if body_tokens[d] <= chunk_tokens:  # rule 4: one chunk, counted whole
            rows.append((d, 0, doc.paragraphs[0][0], doc.paragraphs[-1][1]))
            content.append(body_tokens[d])
            continue
        starts, body_end, counts = sentences[d]
        bounds, units, windows = document_windows(doc.text, starts, counts, body_end, chunk_tokens, overlap, tokenizer)
        oversized += int(np.sum(units > chunk_tokens))
        multi += len(windows) > 1
        breaks = np.concatenate([[0], np.cumsum(~_joins(doc.text, bounds[1:-1]))]) if additive else None
        sums = np.concatenate([[0], np.cumsum(units)])
        for k, (a, b) in enumerate(windows):
            if additive and breaks[b - 1] == breaks[a]:  # no boundary inside the window breaks the sum
                content.append(int(sums[b] - sums[a]))
            else:
                recount.append(len(rows))
                content.append(None)
            rows.append((d, k, bounds[a], bounds[b]))
    counted = count_tokens([docs[rows[i][0]].text[rows[i][2] : rows[i][3]].strip() for i in recount], tokenizer)
    for i, n in zip(recount, counted.tolist()):
        content[i] = n
    return rows, content, oversized, multi


def sentence_chunk_stage(
    con: duckdb.DuckDBPyConnection,
    corpus: str,
    tokenizer: str | None = None,
    *,
    chunk_tokens: int = CHUNK_TOKENS,
    overlap: int = OVERLAP_TOKENS,
) -> dict:
    """Build and load the ``sentence:<chunk_tokens>/<overlap>`` chunks of every document of ``corpus``.

    Replaces, in one transaction, the chunkset's ``chunks``, ``chunkset_docs`` and ``title`` prefixes of
    the corpus's documents and of documents no longer in ``documents``, and the funnel stage
    ``chunk_sentence`` (input documents, ``single_chunk``, ``multi_chunk``, ``oversized_unit``).
    Returns the counts and the stage's seconds."""
    started = time.perf_counter()
    chunkset = chunkset_name(chunk_tokens, overlap)
    tok = tokenizer_name(tokenizer)
    docs = read_documents(con, corpus)
    if not docs:
        raise IngestError(
            "warehouse", f"corpus {corpus}", "no documents to chunk", "load the corpus first with `ragwh ingest ...`"
        )
    additive = counts_add_at_whitespace(tok)
    order = sorted(docs)
    rows: list[tuple[str, int, int, int]] = []
    content: list[int] = []
    oversized = multi = 0
    for lo in range(0, len(order), BLOCK_DOCS):
        block_rows, block_content, big, many = chunk_block(
            docs, order[lo : lo + BLOCK_DOCS], chunk_tokens, overlap, tok, additive
        )
        rows.extend(block_rows)
        content.extend(block_content)
        oversized += big
        multi += many
    content_tokens = np.asarray(content, dtype=np.int64)
    prefixes = [title_prefix(docs[d].title) for d, _, _, _ in rows]
    unique = sorted(set(prefixes))
    prefix_tokens = dict(zip(unique, count_tokens(unique, tok).tolist()))
    ids = [f"{chunkset}|{d}|{k}" for d, k, _, _ in rows]
    chunks = pa.table(
        {
            "chunkset": [chunkset] * len(rows),
            "chunk_id": ids,
            "doc_id": [r[0] for r in rows],
            "chunk_idx": pa.array([r[1] for r in rows], pa.int32()),
            "char_start": pa.array([r[2] for r in rows], pa.int32()),
            "char_end": pa.array([r[3] for r in rows], pa.int32()),
            "content_tokens": pa.array(content_tokens.tolist(), pa.int32()),
            "section_idx": pa.array([None] * len(rows), pa.int32()),
        }
    )
    prefix_table = pa.table(
        {
            "chunkset": [chunkset] * len(rows),
            "chunk_id": ids,
            "prefix_kind": ["title"] * len(rows),
            "depth": pa.array([0] * len(rows), pa.int32()),
            "prefix": prefixes,
            "prefix_tokens": pa.array([prefix_tokens[p] for p in prefixes], pa.int32()),
        }
    )
    doc_ids = sorted(docs)
    chunkset_docs = pa.table(
        {
            "chunkset": [chunkset] * len(doc_ids),
            "doc_id": doc_ids,
            "reference_structure": pa.array([None] * len(doc_ids), pa.string()),
            "target_tokens": pa.array([None] * len(doc_ids), pa.float64()),
            "tokenizer": [tok] * len(doc_ids),
        }
    )
    counts = {"input": len(docs), "single_chunk": len(docs) - multi, "multi_chunk": multi, "oversized_unit": oversized}
    funnel = pa.table(
        {
            "corpus": [corpus] * len(counts),
            "stage": [FUNNEL_STAGE] * len(counts),
            "reason": list(counts),
            "n": pa.array(list(counts.values()), pa.int64()),
        }
    )
    scope = "chunkset = ? AND (starts_with(doc_id, ?) OR doc_id NOT IN (SELECT doc_id FROM documents))"
    params = [chunkset, corpus + "/"]
    with transaction(con):
        con.execute(f"DELETE FROM chunk_prefixes WHERE chunk_id IN (SELECT chunk_id FROM chunks WHERE {scope})", params)
        replace_where(con, "chunks", scope, params, chunks)
        replace_where(con, "chunk_prefixes", "FALSE", [], prefix_table)
        replace_where(con, "chunkset_docs", scope, params, chunkset_docs)
        replace_where(con, "funnel", "corpus = ? AND stage = ?", [corpus, FUNNEL_STAGE], funnel)
    return {
        "corpus": corpus,
        "chunkset": chunkset,
        "tokenizer": tok,
        "documents": len(docs),
        "chunks": len(rows),
        **{k: v for k, v in counts.items() if k != "input"},
        "mean_content_tokens": float(np.mean(content_tokens)) if len(rows) else 0.0,
        "seconds": time.perf_counter() - started,
    }
