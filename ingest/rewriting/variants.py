"""The variant filter: which of a strategy's texts are searched, and why each other one is not.

For one (query, strategy, seed), the texts are ``variant_idx`` 0 = the original query and 1.. = the
LLM's texts in answer order. Each text gets a ``reason`` (the ``rewrites.reason`` vocabulary):

1. ``identical`` — its :func:`~ingest.rewriting.answers.normalize` key equals the query's;
   ``duplicate`` — it equals an earlier text's. Neither is embedded (``cosine`` NULL), neither is searched.
2. Filtered strategies (``cosine_filter``, the multi-query S2/S3/S4): ``c = cos(e(text), e(query))``
   with both embedded as queries; ``kept`` when ``lo <= c <= hi`` (``cosine_band``, default [0.4, 0.9]),
   else ``cosine_low`` / ``cosine_high``. Unfiltered strategies (HyDE, Query2Doc) keep every new text;
   its cosine is still recorded.
3. The original (``variant_idx`` 0; its cosine is that of its own embedding, 1 up to rounding): searched
   beside the variants when ``include_original`` holds for a multi-query strategy (reason ``original``);
   when no other text is kept, the original is searched alone and its reason is ``fallback`` (counted).
   (S1 has no variants: the stage writes its one row as ``original``, searched, without this filter.)

:func:`screen` does step 1 (no vectors needed), :func:`decide` steps 2-3 once cosines are known.
"""

from __future__ import annotations

import dataclasses

from ingest.rewriting.answers import normalize


@dataclasses.dataclass
class Candidate:
    """One text of a strategy for one query and seed (a future ``rewrites`` row)."""

    variant_idx: int
    text: str
    encode_as: str  # 'query' | 'passage'
    llm_call_key: str | None
    reason: str | None = None  # set by screen() / decide()
    cosine: float | None = None
    kept: bool = False


def screen(original: str, texts: list[str], encode_as: str, llm_call_keys: list[str | None]) -> list[Candidate]:
    """Candidates for the original and ``texts`` with step 1 applied (``identical`` / ``duplicate``)."""
    out = [Candidate(0, original, "query", None)]
    seen = {normalize(original)}
    for i, (text, key) in enumerate(zip(texts, llm_call_keys), 1):
        c = Candidate(i, text, encode_as, key)
        k = normalize(text)
        if k == normalize(original):
            c.reason = "identical"
        elif k in seen:
            c.reason = "duplicate"
        seen.add(k)
        out.append(c)
    return out


def decide(
    candidates: list[Candidate],
    *,
    filtered: bool,
    band: tuple[float, float],
    include_original: bool,
    original_searched_alongside: bool,
) -> None:
    """Steps 2-3 in place; ``cosine`` must be set on every candidate not screened out.

    ``original_searched_alongside``: the strategy searches the original beside its variants (multi-query
    strategies with ``include_original``; S1). Forms whose texts already carry the query (Query2Doc) or
    replace it (HyDE) pass False: the original is searched only as the fallback."""
    lo, hi = band
    for c in candidates[1:]:
        if c.reason is not None:
            continue
        if not filtered or lo <= c.cosine <= hi:
            c.reason, c.kept = "kept", True
        else:
            c.reason = "cosine_low" if c.cosine < lo else "cosine_high"
    original = candidates[0]
    if not any(c.kept for c in candidates[1:]):
        original.reason, original.kept = "fallback", True
    else:
        original.reason, original.kept = "original", include_original and original_searched_alongside
