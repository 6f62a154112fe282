"""The reader stage: one answer per reader input group of one corpus and stack (arXiv 2609.05637's answer quality).

:func:`reader_stage` for corpus ``c``, embedder ``e`` and reranker ``r`` (``'none'`` when cosine-only):

1. read: the dbt view ``rewrite_reader_inputs`` (``models/marts/rewriting/``; built by
   ``dbt build --select +tag:rewriting``, which ``ragwh run`` does) for the cell, in ONE query ordered by
   (setting, helper, tau, seed, query_id, rank), NULLs first. A group is one (setting, helper, tau, seed,
   query): ``S1`` (helper and tau NULL), ``always-merge`` per helper (tau NULL), ``router`` per helper and
   tau; its rows are its top ``top_k`` documents in rank order. Each document's text comes back once (at
   its first row; the view's ``passage`` is NOT NULL, so NULL means "seen before"), not once per group.
2. prompt, by ``mode``: ``short`` (HotpotQA, AmbigNQ: gold answers of a few words)
   ``ingest/llm/prompts/reader_answer.v1.txt`` ("a few words, no sentence"); ``long`` (EnterpriseRAG-Bench:
   gold answers are sentences, so EM is ~0 and token F1 is the measure) ``reader_answer_long.v1.txt``
   ("written out in full sentences"); ``$query`` and ``$passages``, one user message;
   ``$passages`` are the group's documents in rank order, ``[i] <documents.text>`` (title, blank line,
   body; stripped), separated by a blank line. Fit: when the backend knows its context window
   (:mod:`ingest.llm.fit`), a prompt whose passages plus ``max_tokens`` do not fit shows the first ``k``
   whole passages that fit, then passage ``k+1`` cut after its last word that still fits (dropped when
   not even one word does); such a group counts as ``shortened``. A prompt that cannot hold one word of
   its first passage is an error (the window is smaller than the instruction and the question).
3. sampling, by ``calls``: ``shared`` (default) ``Sampling(temperature=0, top_p=1, max_tokens,
   seed=llm.seed)``: the run's fixed LLM seed, NOT the group's rewriting seed, so a request depends only on
   the query and its passages. Identical passages and query give identical requests and the cache
   (:class:`ingest.llm.LLMCache`) answers them with one call: the router's lists repeat S1's or
   always-merge's (so an untriggered query's router - S1 difference is 0 by construction), and a list
   repeated under several seeds (S1 does not depend on the seed) is read once. ``per_arm`` (the paper's
   reading: separate reader calls per arm): ``Sampling(temperature, top_p=1, max_tokens, seed=llm.seed +
   ARM_SEED[setting])`` with ``temperature`` the study's sampling temperature (0.7), so S1, always-merge and
   the router each get their own seeded sample even where their passages are the same (the paper's
   untriggered +0.20 F1 is such reader noise). Which one a run used is ``corpus_meta`` key
   ``reader_calls``. ``item_id`` is ``<query_id>|reader|<setting>|<helper>|<tau>|<seed>`` (``-`` for a NULL
   helper or tau).
4. post-processing: ``short`` (:func:`clean_answer`): strip; the first line that is non-empty once stripped
   and rid of a leading ``Answer:`` label (any case) is the answer; ``long`` (:func:`clean_long_answer`): the
   whole reply with that label removed, its lines joined by one space (whitespace collapsed). An answer left empty is stored as ``''``
   (``reader_answers.answer`` is NOT NULL; it scores 0) and counted, never dropped. An answer cut at
   ``max_tokens`` is kept as it is (its first line) and counted.
5. write: ``reader_answers`` (one row per group: the view's ``top_k``, the cleaned answer,
   ``llm_call_key`` = the request's :func:`ingest.llm.cache_key`, whose ``llm_calls`` row holds the raw
   answer) and the funnel; the cell's previous rows (every setting, helper, tau and seed) and its funnel
   rows are replaced in ONE transaction.

Funnel (``funnel.stage`` = ``reader:<embedder>:<reranker>``): ``groups`` (answers written),
``distinct_prompts`` (distinct requests), ``llm_calls`` (requests the backend answered in this run),
``llm_cached`` (groups answered without a new call: from ``llm_calls``, or an identical request of this
run; ``groups = llm_calls + llm_cached``), ``empty_answer``, ``cut`` (finish reason ``length``),
``shortened`` (groups whose passages were fitted to the window).
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Sequence

import duckdb
import pyarrow as pa
from rich.progress import Progress

from ingest.llm import LLMCache, LLMRequest, Prompt, Sampling, cache_key, load_prompt
from ingest.llm.fit import fit_count
from ingest.rewriting.index import RewriteError
from warehouse.db import replace_where, transaction

#: how the arms' answers are asked: one cached temperature-0 call per distinct prompt, or per arm (module doc)
READER_CALLS = ("shared", "per_arm")
#: per_arm: the reader seed's offset per setting, so each arm's request is its own seeded sample
ARM_SEED = {"S1": 0, "always-merge": 1, "router": 2}
#: reader mode -> (prompt name, the answer's post-processing); the prompts are versioned files
PROMPTS = {"short": "reader_answer", "long": "reader_answer_long"}
#: the answer's token bound per mode when none is given (a sentence-long answer needs room)
MAX_TOKENS = {"short": 32, "long": 256}
VIEW = "rewrite_reader_inputs"
FUNNEL_REASONS = ("groups", "distinct_prompts", "llm_calls", "llm_cached", "empty_answer", "cut", "shortened")
_LABEL = re.compile(r"^answer\s*:\s*", re.IGNORECASE)
_WORD = re.compile(r"\S+")


def clean_answer(text: str) -> str:
    """The first line of ``text`` that is non-empty once stripped and rid of a leading ``Answer:`` label
    (``''`` when there is none)."""
    for line in text.strip().splitlines():
        line = _LABEL.sub("", line.strip()).strip()
        if line:
            return line
    return ""


def clean_long_answer(text: str) -> str:
    """The whole of ``text`` as one line: a leading ``Answer:`` label removed, whitespace runs collapsed."""
    return " ".join(_LABEL.sub("", text.strip()).split())


CLEAN = {"short": clean_answer, "long": clean_long_answer}


def reader_messages(prompt: Prompt, query: str, passages: Sequence[str]) -> tuple[dict, ...]:
    """The one user message asking ``query`` over ``passages`` (numbered ``[1]``, ``[2]``, ... in order)."""
    shown = "\n\n".join(f"[{i}] {p.strip()}" for i, p in enumerate(passages, 1))
    return ({"role": "user", "content": prompt.render(query=query, passages=shown)},)


def fitted_messages(
    llm: LLMCache, prompt: Prompt, query: str, passages: Sequence[str], max_tokens: int, item_id: str
) -> tuple[tuple[dict, ...], bool]:
    """The messages with as many passages as fit the window with ``max_tokens`` (module doc, step 2) and
    whether any passage text was left out."""
    n = len(passages)
    k = fit_count(llm, n, lambda k: reader_messages(prompt, query, passages[:k]), max_tokens)
    if k == n:
        return reader_messages(prompt, query, passages), False
    cut = passages[k].strip()
    ends = [m.end() for m in _WORD.finditer(cut)]

    def with_words(w: int) -> tuple[dict, ...]:
        return reader_messages(prompt, query, [*passages[:k], cut[: ends[w - 1]]] if w else passages[:k])

    w = fit_count(llm, len(ends), with_words, max_tokens)
    if k == 0 and w == 0:
        raise RewriteError(
            f"reader prompt {item_id} does not fit the model's context window with even one word of "
            f"its first passage: lower max_tokens ({max_tokens}) or use a model with a larger window"
        )
    return with_words(w), True


def _item_id(setting: str, helper: str | None, tau: float | None, seed: int, query_id: str) -> str:
    return f"{query_id}|reader|{setting}|{'-' if helper is None else helper}|{'-' if tau is None else tau}|{seed}"


def _read(con: duckdb.DuckDBPyConnection, corpus: str, embedder: str, reranker: str) -> list[tuple]:
    """Groups of the cell in order: ``(setting, helper, tau, seed, query_id, query_text, top_k, doc_ids,
    passages)``."""
    exists = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [VIEW]).fetchall()[0][0]
    if not exists:
        raise RewriteError(
            f"no {VIEW} view in the warehouse: build the rewriting marts first "
            "(`dbt build --select +tag:rewriting`, which `ragwh run` does)"
        )
    rows = con.execute(
        f"""
        SELECT setting, helper, tau, seed, query_id, query_text, top_k, doc_id,
            CASE WHEN row_number() OVER (PARTITION BY doc_id ORDER BY setting, helper NULLS FIRST, tau NULLS FIRST,
                                         seed, query_id, rank) = 1 THEN passage END AS passage
        FROM {VIEW} WHERE corpus = ? AND embedder = ? AND reranker = ?
        ORDER BY setting, helper NULLS FIRST, tau NULLS FIRST, seed, query_id, rank""",
        [corpus, embedder, reranker],
    ).fetchall()
    if not rows:
        cells = con.execute(f"SELECT DISTINCT corpus, embedder, reranker FROM {VIEW} ORDER BY ALL").fetchall()
        have = ", ".join("/".join(c) for c in cells[:10]) or "none"
        raise RewriteError(
            f"{VIEW} has no rows for corpus {corpus!r}, embedder {embedder!r}, reranker {reranker!r} "
            f"(cells it has: {have}): run the rewriting stage for that cell, then rebuild the marts "
            "(`dbt build --select +tag:rewriting`)"
        )
    texts = {doc_id: passage for *_, doc_id, passage in rows if passage is not None}
    groups = []
    for key, members in itertools.groupby(rows, key=lambda r: r[:5]):
        members = list(members)
        doc_ids = tuple(r[7] for r in members)
        groups.append((*key, members[0][5], members[0][6], doc_ids, [texts[d] for d in doc_ids]))
    return groups


def reader_stage(
    con: duckdb.DuckDBPyConnection,
    corpus: str,
    llm: LLMCache | None,
    *,
    embedder: str,
    reranker: str,
    mode: str = "short",
    max_tokens: int | None = None,
    show_progress: bool = True,
    calls: str = "shared",
    temperature: float = 0.7,
) -> dict:
    """Answer every reader input group of the cell (``corpus``, ``embedder``, ``reranker``) and write
    ``reader_answers`` (module doc); returns the funnel counts and seconds per step.

    ``mode``: ``short`` | ``long`` (module doc); ``max_tokens``: the answer's bound (None: 32 short, 256 long);
    ``calls``: ``shared`` | ``per_arm`` and ``temperature`` (per_arm only), module doc step 3.
    ``show_progress`` draws a bar while the prompts are built (and fitted to the window); the LLM calls'
    bar is the cache's own (``LLMCache(progress=...)``)."""
    if llm is None:
        raise RewriteError(
            "the reader stage needs an LLM and none is configured (llm.backend: none): "
            "configure one in the experiment's llm section"
        )
    if mode not in PROMPTS:
        raise ValueError(f"reader mode must be one of {', '.join(PROMPTS)}, got {mode!r}")
    if calls not in READER_CALLS:
        raise ValueError(f"reader calls must be one of {', '.join(READER_CALLS)}, got {calls!r}")
    if max_tokens is None:
        max_tokens = MAX_TOKENS[mode]
    if max_tokens < 1:
        raise ValueError(f"max_tokens (the reader answer's length bound) must be >= 1, got {max_tokens}")
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    groups = _read(con, corpus, embedder, reranker)
    seconds["read"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    prompt = load_prompt(PROMPTS[mode])

    def sampling_of(setting: str) -> Sampling:
        if calls == "shared":
            return Sampling(temperature=0.0, top_p=1.0, max_tokens=max_tokens, seed=llm.seed)
        return Sampling(temperature=temperature, top_p=1.0, max_tokens=max_tokens, seed=llm.seed + ARM_SEED[setting])

    built: dict[tuple, tuple[tuple[dict, ...], bool, str]] = {}
    requests, keys, shortened = [], [], 0
    with Progress(disable=not show_progress) as bar:
        task = bar.add_task(f"reader prompts [{corpus}]", total=len(groups))
        for setting, helper, tau, seed, query_id, query_text, _, doc_ids, passages in groups:
            item_id = _item_id(setting, helper, tau, seed, query_id)
            sampling = sampling_of(setting)
            if (query_text, doc_ids, sampling) not in built:
                messages, short = fitted_messages(llm, prompt, query_text, passages, max_tokens, item_id)
                key = cache_key(llm.model, LLMRequest(item_id, prompt.key, messages, sampling))
                built[(query_text, doc_ids, sampling)] = (messages, short, key)
            messages, short, key = built[(query_text, doc_ids, sampling)]
            requests.append(LLMRequest(item_id, prompt.key, messages, sampling))
            keys.append(key)
            shortened += short
            bar.advance(task)
    seconds["prompts"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    calls0 = llm.calls
    completions = llm.complete(requests, label=f"reader [{corpus}]")
    answers = [CLEAN[mode](c.text) for c in completions]
    seconds["llm"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    n_calls = llm.calls - calls0
    counts = {
        "groups": len(groups),
        "distinct_prompts": len(set(keys)),
        "llm_calls": n_calls,
        "llm_cached": len(groups) - n_calls,
        "empty_answer": sum(not a for a in answers),
        "cut": sum(c.cut for c in completions),
        "shortened": shortened,
    }
    table = pa.table(
        {
            "corpus": [corpus] * len(groups),
            "embedder": [embedder] * len(groups),
            "reranker": [reranker] * len(groups),
            "setting": [g[0] for g in groups],
            "helper": pa.array([g[1] for g in groups], pa.string()),
            "tau": pa.array([g[2] for g in groups], pa.float64()),
            "seed": pa.array([g[3] for g in groups], pa.int32()),
            "query_id": [g[4] for g in groups],
            "top_k": pa.array([g[6] for g in groups], pa.int32()),
            "answer": answers,
            "llm_call_key": keys,
        }
    )
    stage = f"reader:{embedder}:{reranker}"
    funnel = pa.table(
        {
            "corpus": [corpus] * len(FUNNEL_REASONS),
            "stage": [stage] * len(FUNNEL_REASONS),
            "reason": list(FUNNEL_REASONS),
            "n": pa.array([counts[r] for r in FUNNEL_REASONS], pa.int64()),
        }
    )
    with transaction(con):
        replace_where(
            con, "reader_answers", "corpus = ? AND embedder = ? AND reranker = ?", [corpus, embedder, reranker], table
        )
        replace_where(con, "funnel", "corpus = ? AND stage = ?", [corpus, stage], funnel)
        replace_where(
            con,
            "corpus_meta",
            "corpus = ? AND key = 'reader_calls'",
            [corpus],
            pa.table({"corpus": [corpus], "key": ["reader_calls"], "value": [calls]}),
        )
    seconds["write"] = time.perf_counter() - t0
    return {
        "corpus": corpus,
        "embedder": embedder,
        "reranker": reranker,
        "mode": mode,
        "calls": calls,
        "prompt": prompt.key,
        **counts,
        "seconds": seconds,
    }
