"""A strategy's texts for every query and seed: the LLM requests, their answers, the screened candidates.

Every request goes through the one cached interface (:class:`ingest.llm.LLMCache`): prompt
``ingest/llm/prompts/<prompt>.v<N>.txt`` rendered with the query (and ``n``), one user message,
``Sampling(temperature, top_p=1, max_tokens, seed)`` where the seed is the study's seed (42, 123, 2024),
so it is part of each request and of its cache key; three seeds give three sets of texts and a rerun
answers every request from ``llm_calls``. HyDE passage ``i >= 1`` (``hyde_passages > 1``) uses the
sampling seed ``1000 * seed + i`` (passage 0 uses ``seed``), so its requests differ. ``item_id`` is
``<query_id>|<strategy>|<seed>[|<passage>]``.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

from ingest.llm import LLMCache, LLMRequest, Sampling, cache_key, load_prompt
from ingest.rewriting.answers import passage_text, question_lines
from ingest.rewriting.settings import RewriteSettings
from ingest.rewriting.strategies import Q2D_SEPARATOR, Strategy
from ingest.rewriting.variants import Candidate, screen


@dataclasses.dataclass
class QueryTexts:
    """The candidates of one (query, strategy, seed) and the answer-parsing counts."""

    query_id: str
    candidates: list[Candidate]
    counts: Counter


def _sampling_seed(seed: int, passage: int) -> int:
    return seed if passage == 0 else 1000 * seed + passage


def requests_for(
    strategy: Strategy, queries: list[tuple[str, str]], seed: int, settings: RewriteSettings
) -> list[list[LLMRequest]]:
    """Per query, the requests of one strategy and seed (one, or ``hyde_passages`` for HyDE)."""
    prompt = load_prompt(strategy.prompt)
    n_requests = settings.hyde_passages if strategy.form == "passage" else 1
    out = []
    for query_id, text in queries:
        content = prompt.render(query=text, n=str(settings.variants_of(strategy.name)))
        out.append(
            [
                LLMRequest(
                    item_id=f"{query_id}|{strategy.name}|{seed}" + (f"|{i}" if n_requests > 1 else ""),
                    prompt=prompt.key,
                    messages=({"role": "user", "content": content},),
                    sampling=Sampling(
                        temperature=settings.temperature,
                        top_p=1.0,
                        max_tokens=settings.max_tokens,
                        seed=_sampling_seed(seed, i),
                    ),
                )
                for i in range(n_requests)
            ]
        )
    return out


def usable_for(strategy: Strategy, settings: RewriteSettings):
    """Whether an answer gives the strategy at least one text (a question line, or a passage): one that
    does not is a failed call (:class:`ingest.llm.LLMCache`: not cached, asked again by the next run)."""
    if strategy.form == "questions":
        n = settings.variants_of(strategy.name)
        return lambda answer: bool(question_lines(answer, n)[0])
    return lambda answer: bool(passage_text(answer)[0])


def strategy_texts(
    strategy: Strategy, queries: list[tuple[str, str]], seed: int, settings: RewriteSettings, llm: LLMCache | None
) -> list[QueryTexts]:
    """Screened candidates (:func:`ingest.rewriting.variants.screen`) of every query for one strategy and seed."""
    return strategy_texts_by_seed(strategy, queries, (seed,), settings, llm)[seed]


def strategy_texts_by_seed(
    strategy: Strategy, queries: list[tuple[str, str]], seeds, settings: RewriteSettings, llm: LLMCache | None
) -> dict[int, list[QueryTexts]]:
    """:func:`strategy_texts` of every seed in ``seeds``, the LLM asked once for all of them: one
    :meth:`LLMCache.generate` call holds every seed's requests, so a local backend fills its batches across
    seeds (each request keeps its own sampling seed, so its answer is the one it gets alone)."""
    if not strategy.uses_llm:
        return {
            seed: [
                QueryTexts(qid, [Candidate(0, text, "query", None, reason="original", kept=True)], Counter())
                for qid, text in queries
            ]
            for seed in seeds
        }
    if llm is None:
        raise ValueError(f"strategy {strategy.name} needs an LLM and none is configured (llm.backend: none)")
    per_seed = {seed: requests_for(strategy, queries, seed, settings) for seed in seeds}
    flat = [r for seed in seeds for rs in per_seed[seed] for r in rs]
    label = f"{strategy.name} seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}"
    answers = iter(llm.generate(flat, label=label, usable=usable_for(strategy, settings)))
    return {seed: _parse(strategy, queries, per_seed[seed], answers, settings, llm) for seed in seeds}


def _parse(
    strategy: Strategy, queries: list[tuple[str, str]], per_query, answers, settings: RewriteSettings, llm: LLMCache
) -> list[QueryTexts]:
    """Each query's texts from its answers (taken in order from the iterator ``answers``), screened."""
    out = []
    for (query_id, text), requests in zip(queries, per_query):
        counts: Counter = Counter()
        texts, keys = [], []
        for request in requests:
            answer = next(answers)
            counts["llm_answers"] += 1
            key = cache_key(llm.model, request)
            if strategy.form == "questions":
                lines, c = question_lines(answer, settings.variants_of(strategy.name))
                texts += lines
                keys += [key] * len(lines)
            else:
                passage, c = passage_text(answer)
                if passage:
                    texts.append(text + Q2D_SEPARATOR + passage if strategy.form == "query2doc" else passage)
                    keys.append(key)
            counts.update(c)
        encode = {"query2doc": settings.q2d_encoding, "passage": settings.hyde_encoding}.get(strategy.form, "query")
        out.append(QueryTexts(query_id, screen(text, texts, encode, keys), counts))
    return out
