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
Rows of the corpus's fixed chunks are replaced in one transaction; every call goes through the cache.
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
from warehouse.db import replace_where, transaction

PROMPT = "contextual_chunk"
STAGE = "contexts"


def generate_contexts(con: duckdb.DuckDBPyConnection, corpus: str | None = None, backend: Any = None, *,
                      max_tokens: int = 150, temperature: float = 0.0, tokenizer: str | None = None) -> dict:
    """Write ``llm_context`` prefixes for every ``fixed`` chunk of ``corpus`` (all corpora when None).

    ``backend``: an :class:`ingest.llm.LLMCache`, a bare backend, or None for the configured one.
    Returns per corpus: chunks, contexts written, empty answers, calls, cache hits, token statistics."""
    corpora = [corpus] if corpus is not None else [r[0] for r in con.execute(
        "SELECT DISTINCT d.corpus FROM chunks c JOIN documents d USING (doc_id) WHERE c.chunkset = 'fixed' ORDER BY 1"
    ).fetchall()]
    if not corpora:
        raise IngestError("warehouse", None, "no fixed chunks to write contexts for", "run `ragwh chunk` first")
    llm = as_llm(con, backend)
    prompt = load_prompt(PROMPT)
    sampling = Sampling(temperature=temperature, max_tokens=max_tokens, seed=llm.seed)
    report: dict[str, Any] = {"model": llm.model, "backend": llm.backend_name, "prompt": prompt.key, "corpora": {}}
    for name in corpora:
        t0, calls0, hits0 = time.perf_counter(), llm.calls, llm.hits
        rows = con.execute(
            "SELECT c.chunk_id, c.char_start, c.char_end, d.text, d.source_file FROM chunks c JOIN documents d USING (doc_id) "
            "WHERE c.chunkset = 'fixed' AND d.corpus = ? ORDER BY c.doc_id, c.chunk_idx", [name]).fetchall()
        if not rows:
            raise IngestError("warehouse", f"corpus {name}", "has no fixed chunks", f"run `ragwh chunk --corpus {name}` first")
        requests = [
            LLMRequest(chunk_id, prompt.key,
                       ({"role": "user", "content": prompt.render(document=text, chunk=text[s:e].strip())},), sampling)
            for chunk_id, s, e, text, _ in rows
        ]
        answers = [a.strip() for a in llm.generate(requests, label=f"contexts [{name}]")]
        keep = [i for i, a in enumerate(answers) if a]
        empty = [i for i, a in enumerate(answers) if not a]
        prefixes = [answers[i] + "\n\n" for i in keep]
        tokens = count_tokens(prefixes, tokenizer) if prefixes else np.zeros(0, dtype=np.int64)
        table = pa.table({
            "chunkset": ["fixed"] * len(keep),
            "chunk_id": [rows[i][0] for i in keep],
            "prefix_kind": ["llm_context"] * len(keep),
            "depth": pa.array([0] * len(keep), pa.int32()),
            "prefix": prefixes,
            "prefix_tokens": pa.array(tokens, pa.int32()),
        })
        quarantine = pa.table({
            "corpus": [name] * len(empty),
            "source_file": [rows[i][4] for i in empty],
            "record_id": [rows[i][0] for i in empty],
            "stage": [STAGE] * len(empty),
            "reason": ["model returned an empty context; the chunk has no llm_context prefix"] * len(empty),
        })
        funnel = pa.table({"corpus": [name] * 3, "stage": [STAGE] * 3, "reason": ["input", "empty_answer", "kept"],
                           "n": pa.array([len(rows), len(empty), len(keep)], pa.int64())})
        scope = "chunk_id IN (SELECT c.chunk_id FROM chunks c JOIN documents d USING (doc_id) WHERE c.chunkset = 'fixed' AND d.corpus = ?)"
        with transaction(con):
            replace_where(con, "chunk_prefixes", f"chunkset = 'fixed' AND prefix_kind = 'llm_context' AND {scope}", [name], table)
            replace_where(con, "quarantine", "corpus = ? AND stage = ?", [name, STAGE], quarantine)
            replace_where(con, "funnel", "corpus = ? AND stage = ?", [name, STAGE], funnel)
        report["corpora"][name] = {
            "chunks": len(rows),
            "contexts": len(keep),
            "empty_answers": len(empty),
            "calls": llm.calls - calls0,
            "cache_hits": llm.hits - hits0,
            "prefix_tokens_mean": float(tokens.mean()) if len(tokens) else None,
            "prefix_tokens_quartiles": [float(q) for q in np.percentile(tokens, [25, 50, 75])] if len(tokens) else None,
            "share_50_100_tokens": float(((tokens >= 50) & (tokens <= 100)).mean()) if len(tokens) else None,
            "seconds": time.perf_counter() - t0,
        }
    return report
