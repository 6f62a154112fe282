"""A1: LLM-written chunk contexts (contextual retrieval) as ``llm_context`` prefixes of the fixed chunks.

For every chunk of chunkset ``fixed`` the model gets the published contextual-retrieval prompt
(``prompts/contextual_chunk.v<N>.txt``: the whole document text, then the chunk content
``text[char_start:char_end].strip()``, asking for a short succinct context that situates the chunk
within the document to improve search retrieval, answering only with the context). The answer,
whitespace-trimmed, becomes ``prefix = context + "\\n\\n"`` with ``prefix_kind = 'llm_context'``,
``depth = 0`` and ``prefix_tokens`` = tokens of the prefix under the configured tokenizer
(:func:`ingest.chunking.tokens.count_tokens`, no special tokens; the trailing blank line adds none).

The contextual-retrieval recipe targets 50-100 tokens; ``max_tokens`` (default 150 model tokens)
caps the generation and the report gives the realized distribution (mean, quartiles, share in
50..100). An empty answer gets no prefix: the chunk is quarantined (stage ``contexts``) and counted.
An answer cut at ``max_tokens`` is kept (it still situates the chunk) and counted (``cut_at_max_tokens``).
Rows of the corpus's fixed chunks are replaced in one transaction; every call goes through the cache.

A document longer than the model's context window (a local model: SmolLM2 holds 8192 tokens) is shown
truncated: title and the first ``k`` body paragraphs, the largest ``k`` for which the prompt with the
document's longest chunk plus ``max_tokens`` fits (:func:`ingest.llm.fit.fit_count`); every chunk of
that document gets the same shortened document, so all its prompts still share the document prefix
(the transformers backend reads that prefix once per batch). ``document_truncated`` counts the chunks
whose prompt showed a shortened document, ``documents_truncated`` the documents.
"""

from __future__ import annotations

import time
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa

from ingest.chunking.tokens import count_tokens
from ingest.errors import IngestError
from ingest.llm import LLMRequest, Sampling, as_llm, load_prompt
from ingest.llm.fit import fit_count
from warehouse.db import replace_where, transaction

PROMPT = "contextual_chunk"
STAGE = "contexts"


def generate_contexts(
    con: duckdb.DuckDBPyConnection,
    corpus: str | None = None,
    backend: Any = None,
    *,
    max_tokens: int = 150,
    temperature: float = 0.0,
    tokenizer: str | None = None,
) -> dict:
    """Write ``llm_context`` prefixes for every ``fixed`` chunk of ``corpus`` (all corpora when None).

    ``backend``: an :class:`ingest.llm.LLMCache`, a bare backend, or None for the configured one.
    Returns per corpus: chunks, contexts written, empty answers, calls, cache hits, token statistics."""
    corpora = (
        [corpus]
        if corpus is not None
        else [
            r[0]
            for r in con.execute(
                "SELECT DISTINCT d.corpus FROM chunks c JOIN documents d USING (doc_id) WHERE c.chunkset = 'fixed' ORDER BY 1"
            ).fetchall()
        ]
    )
    if not corpora:
        raise IngestError("warehouse", None, "no fixed chunks to write contexts for", "run `ragwh chunk` first")
    llm = as_llm(con, backend)
    prompt = load_prompt(PROMPT)
    sampling = Sampling(temperature=temperature, max_tokens=max_tokens, seed=llm.seed)
    report: dict[str, Any] = {"model": llm.model, "backend": llm.backend_name, "prompt": prompt.key, "corpora": {}}
    for name in corpora:
        t0, calls0, hits0 = time.perf_counter(), llm.calls, llm.hits
        rows = con.execute(
            "SELECT c.chunk_id, c.char_start, c.char_end, d.text, d.source_file, c.doc_id FROM chunks c "
            "JOIN documents d USING (doc_id) WHERE c.chunkset = 'fixed' AND d.corpus = ? ORDER BY c.doc_id, c.chunk_idx",
            [name],
        ).fetchall()
        if not rows:
            raise IngestError(
                "warehouse", f"corpus {name}", "has no fixed chunks", f"run `ragwh chunk --corpus {name}` first"
            )
        shown = _fitted_documents(con, llm, prompt, rows, max_tokens)
        requests = [
            LLMRequest(
                chunk_id,
                prompt.key,
                ({"role": "user", "content": prompt.render(document=shown[doc_id][0], chunk=text[s:e].strip())},),
                sampling,
            )
            for chunk_id, s, e, text, _, doc_id in rows
        ]
        completions = llm.complete(requests, label=f"contexts [{name}]")
        answers = [c.text.strip() for c in completions]
        n_cut = sum(c.cut for c in completions)
        n_shortened = sum(shown[r[5]][1] for r in rows)
        keep = [i for i, a in enumerate(answers) if a]
        empty = [i for i, a in enumerate(answers) if not a]
        prefixes = [answers[i] + "\n\n" for i in keep]
        tokens = count_tokens(prefixes, tokenizer) if prefixes else np.zeros(0, dtype=np.int64)
        table = pa.table(
            {
                "chunkset": ["fixed"] * len(keep),
                "chunk_id": [rows[i][0] for i in keep],
                "prefix_kind": ["llm_context"] * len(keep),
                "depth": pa.array([0] * len(keep), pa.int32()),
                "prefix": prefixes,
                "prefix_tokens": pa.array(tokens, pa.int32()),
            }
        )
        quarantine = pa.table(
            {
                "corpus": [name] * len(empty),
                "source_file": [rows[i][4] for i in empty],
                "record_id": [rows[i][0] for i in empty],
                "stage": [STAGE] * len(empty),
                "reason": ["model returned an empty context; the chunk has no llm_context prefix"] * len(empty),
            }
        )
        reasons = {
            "input": len(rows),
            "empty_answer": len(empty),
            "kept": len(keep),
            "cut_at_max_tokens": n_cut,
            "document_truncated": n_shortened,
        }
        funnel = pa.table(
            {
                "corpus": [name] * len(reasons),
                "stage": [STAGE] * len(reasons),
                "reason": list(reasons),
                "n": pa.array(list(reasons.values()), pa.int64()),
            }
        )
        scope = "chunk_id IN (SELECT c.chunk_id FROM chunks c JOIN documents d USING (doc_id) WHERE c.chunkset = 'fixed' AND d.corpus = ?)"
        with transaction(con):
            replace_where(
                con, "chunk_prefixes", f"chunkset = 'fixed' AND prefix_kind = 'llm_context' AND {scope}", [name], table
            )
            replace_where(con, "quarantine", "corpus = ? AND stage = ?", [name, STAGE], quarantine)
            replace_where(con, "funnel", "corpus = ? AND stage = ?", [name, STAGE], funnel)
        report["corpora"][name] = {
            "chunks": len(rows),
            "contexts": len(keep),
            "empty_answers": len(empty),
            "cut_at_max_tokens": n_cut,
            "documents": len(shown),
            "documents_truncated": sum(t for _, t in shown.values()),
            "chunks_with_truncated_document": n_shortened,
            "calls": llm.calls - calls0,
            "cache_hits": llm.hits - hits0,
            "prefix_tokens_mean": float(tokens.mean()) if len(tokens) else None,
            "prefix_tokens_quartiles": [float(q) for q in np.percentile(tokens, [25, 50, 75])] if len(tokens) else None,
            "share_50_100_tokens": float(((tokens >= 50) & (tokens <= 100)).mean()) if len(tokens) else None,
            "seconds": time.perf_counter() - t0,
        }
    return report


def _fitted_documents(
    con: duckdb.DuckDBPyConnection, llm, prompt, rows: list, max_tokens: int
) -> dict[str, tuple[str, bool]]:
    """Per document: the text shown in its prompts and whether it was shortened (module doc)."""
    longest: dict[str, tuple[int, int, str]] = {}
    for _, s, e, text, _, doc_id in rows:
        if doc_id not in longest or e - s > longest[doc_id][1] - longest[doc_id][0]:
            longest[doc_id] = (s, e, text)
    ends: dict[str, list[int]] = {}
    for doc_id, end in con.execute(
        "SELECT doc_id, char_end FROM paragraphs WHERE doc_id IN (SELECT unnest(?)) ORDER BY doc_id, para_idx",
        [sorted(longest)],
    ).fetchall():
        ends.setdefault(doc_id, []).append(end)
    out = {}
    for doc_id, (s, e, text) in longest.items():
        cuts = ends.get(doc_id, [])
        chunk = text[s:e].strip()

        def shown(k: int, text=text, cuts=cuts) -> str:
            return text if k == len(cuts) else text[: cuts[k - 1]] if k else text.split("\n\n", 1)[0]

        k = fit_count(
            llm,
            len(cuts),
            lambda k, shown=shown, chunk=chunk: (
                {"role": "user", "content": prompt.render(document=shown(k), chunk=chunk)},
            ),
            max_tokens,
        )
        out[doc_id] = (shown(k), k < len(cuts))
    return out
