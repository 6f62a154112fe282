"""The LLM strategies' texts: every seed's requests in one cached call, each seed's texts as if asked alone."""

from __future__ import annotations

from ingest.llm.cache import cache_key
from ingest.rewriting.settings import RewriteSettings
from ingest.rewriting.strategies import load_strategies
from ingest.rewriting.texts import requests_for, strategy_texts, strategy_texts_by_seed

QUERIES = [("c/q1", "Who wrote Dune?"), ("c/q2", "Where is Lyon?")]


class RecordingLLM:
    """Answers each request from its item id (query | strategy | seed), so an answer never depends on the
    call it came in; records every call's item ids and label."""

    model = "recording"

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []

    def generate(self, requests, label="", usable=None):
        self.calls.append((label, [r.item_id for r in requests]))
        return [f"What else did the author of {r.item_id} write?\nWho published it ({r.item_id})?" for r in requests]


def test_one_call_for_every_seed_and_the_same_texts_as_one_seed_at_a_time():
    strategy, settings = load_strategies()["S3"], RewriteSettings(seeds=(42, 123))
    llm = RecordingLLM()
    together = strategy_texts_by_seed(strategy, QUERIES, (42, 123), settings, llm)
    assert [label for label, _ in llm.calls] == ["S3 seeds 42, 123"]
    assert llm.calls[0][1] == ["c/q1|S3|42", "c/q2|S3|42", "c/q1|S3|123", "c/q2|S3|123"]
    for seed in (42, 123):
        alone = RecordingLLM()
        assert strategy_texts(strategy, QUERIES, seed, settings, alone) == together[seed]
        assert alone.calls == [(f"S3 seed {seed}", [f"c/q1|S3|{seed}", f"c/q2|S3|{seed}"])]
    first = together[123][0]
    assert first.query_id == "c/q1" and first.counts["llm_answers"] == 1
    kept = [c for c in first.candidates if c.text != QUERIES[0][1]]
    assert [c.text for c in kept] == [
        "What else did the author of c/q1|S3|123 write?",
        "Who published it (c/q1|S3|123)?",
    ]
    request = requests_for(strategy, QUERIES[:1], 123, settings)[0][0]
    assert {c.llm_call_key for c in kept} == {cache_key("recording", request)}


def test_llm_free_strategies_make_no_call():
    llm = RecordingLLM()
    out = strategy_texts_by_seed(load_strategies()["S1"], QUERIES, (42, 123), RewriteSettings(seeds=(42, 123)), llm)
    assert llm.calls == [] and [q.candidates[0].text for q in out[123]] == ["Who wrote Dune?", "Where is Lyon?"]
