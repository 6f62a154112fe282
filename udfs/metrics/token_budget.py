"""Token-budget coverage TBC@B: share of gold characters a reader gets within a context budget.

Chunks are taken in rank order while the running total of tokens (content + prefix: each
treatment pays its real context-window cost) stays within the budget B; the first chunk that
would exceed it ends the context (no skipping ahead to smaller chunks):

    n_B   = max{ n : Σ_{i<=n} tokens_i <= B }
    TBC@B = | G ∩ ∪_{i<=n_B} I_i | / |G|,   G = union of the query's gold spans (each character once)

Units: tokens of the configured tokenizer; characters of the document text.
"""

from __future__ import annotations

import numpy as np

from udfs.metrics._coverage import coverage_inputs, first_cover, merge_spans
from udfs.ragged import Ragged, RaggedLike, as_ragged, check_same_shape


def token_budget_coverage(
    chunk_starts: RaggedLike,
    chunk_ends: RaggedLike,
    chunk_tokens: RaggedLike,
    span_starts: RaggedLike,
    span_ends: RaggedLike,
    budget: int,
) -> np.ndarray:
    """TBC@budget per row (see module docstring)."""
    if budget < 0:
        raise ValueError(f"budget must be >= 0, got {budget}")
    cs, ce, ss, se = coverage_inputs(chunk_starts, chunk_ends, span_starts, span_ends)
    tok = as_ragged(chunk_tokens, np.int64, "chunk tokens")
    check_same_shape(cs, tok, "chunk starts/tokens")
    if (tok.values < 0).any():
        raise ValueError("negative token count")
    running = np.cumsum(tok.values) - np.repeat(
        np.concatenate([[0], np.cumsum(tok.values)])[tok.offsets[:-1]], tok.lengths
    )
    keep = running <= budget  # a prefix of every row (tokens are >= 0)
    n_keep = np.bincount(cs.row_ids[keep], minlength=cs.n_rows)
    offsets = np.concatenate([[0], np.cumsum(n_keep)]).astype(np.int64)
    ks, ke = Ragged(cs.values[keep], offsets), Ragged(ce.values[keep], offsets)
    ms, me = merge_spans(ss, se)
    _, sp, new = first_cover(ks, ke, ms, me)
    covered = np.bincount(ms.row_ids[sp], weights=new, minlength=cs.n_rows)
    total = np.bincount(ms.row_ids, weights=(me.values - ms.values).astype(np.float64), minlength=cs.n_rows)
    return covered / total
