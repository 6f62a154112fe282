"""Fitting a prompt to the model's context window by showing fewer input units (paragraphs).

A local model has a fixed window (SmolLM2: 8192 tokens for prompt plus completion); a QASPER paper or
a Wikipedia article can be longer. A stage that puts a long text into a prompt builds the prompt from
the first ``k`` of its ``n`` units and asks :func:`fit_count` for the largest ``k`` whose prompt plus
``max_tokens`` completion tokens fits (bisection over ``k``: prompt length grows with ``k``). The
stage records how many inputs were shortened. Backends that do not know their window (HTTP, vLLM)
always fit: the server enforces its own limit.
"""

from __future__ import annotations

from typing import Callable, Sequence

from ingest.llm.cache import LLMCache


def fit_count(llm: LLMCache, n: int, messages_for: Callable[[int], Sequence[dict]], max_tokens: int) -> int:
    """Largest ``k`` in ``0..n`` with ``messages_for(k)`` + ``max_tokens`` within the window
    (``n`` when the whole input fits; 0 when not even one unit does)."""
    if n == 0 or llm.fits(messages_for(n), max_tokens):
        return n
    lo, hi = 0, n  # invariant: k = lo fits (0 by convention), k = hi does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if llm.fits(messages_for(mid), max_tokens):
            lo = mid
        else:
            hi = mid
    return lo
