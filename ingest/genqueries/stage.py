"""Generated queries: sample gold spans, write a query, filter leakage, paraphrase, filter again, balance.

Funnel per query type (``funnel`` rows, stage ``generated_queries:<type>``):

* ``candidates``: spans sampled by the pipeline (:mod:`.sampling`);
* the model writes a query (``prompts/query_<type>.v<N>.txt``); its first non-empty line, with
  surrounding quotes and a leading ``Question:``/``Query:`` label removed, is the query;
  ``rejected_<reason>`` counts rejections: ``cut_at_max_tokens`` (the answer was cut, so it is no
  finished question), then the leakage filter's (:mod:`.leakage`: ``empty``, ``rouge_l``,
  ``shared_4gram``); ``survivors`` the rest;
* a second call paraphrases each survivor (``prompts/query_paraphrase.v<N>.txt``; the model sees
  only the query); the paraphrase must pass the same checks against the same spans:
  ``paraphrase_rejected_<reason>``, ``paraphrase_survivors``;
* ``final``: a per-type cap: ``final_t = min(cap, paraphrase survivors_t)`` with ``cap =
  final_per_type`` (250 by default: the study's 250/250/250/201 when multihop has 201 survivors);
  each type's finals are drawn without replacement from its survivors (sorted by candidate id) with
  ``numpy.random.default_rng([seed, type index])``.

A passage longer than the model's context window (a local model; in practice only a structural
query's whole top-level section can be) is shown cut to its first paragraphs that fit
(:func:`ingest.llm.fit.fit_count`; counted as ``passage_truncated``); the leakage filter and the
evidence always use the whole span. The report also gives the ROUGE-L F1 distribution (max over a
candidate's spans) of the first queries and of the finals.

Only paraphrases enter ``queries`` (``query_id = <corpus>/gen-<candidate id>``, ``query_type`` = the
type) and ``evidence`` (one row per gold span, ``match_method = 'generated'``). The corpus's generated
queries, their evidence, funnel rows and the ``genq_*`` settings in ``corpus_meta`` are replaced in one
transaction. The report includes the BM25 gold-top-1 rate on the finals (:mod:`.bm25`).
"""

from __future__ import annotations

import re
import time
from collections import Counter
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa

from ingest.corpora.docs import read_docs
from ingest.errors import IngestError
from ingest.genqueries.bm25 import bm25_top1
from ingest.genqueries.leakage import leak_reason, rouge_l_f1
from ingest.genqueries.sampling import QUERY_TYPES, Candidate, sample_candidates
from ingest.llm import LLMRequest, Sampling, as_llm, load_prompt
from ingest.llm.fit import fit_count
from warehouse.db import replace_where, transaction

PARAPHRASE_PROMPT = "query_paraphrase"
FINAL_PER_TYPE = 250
_LABEL = re.compile(r"^(question|query|paraphrase[d]?(?: question)?)\s*:\s*", re.IGNORECASE)
_QUOTES = "\"'`“”‘’"


def clean_query(answer: str) -> str:
    """The first non-empty line of ``answer`` without a leading label or surrounding quotes."""
    for line in answer.strip().splitlines():
        line = _LABEL.sub("", line.strip().strip(_QUOTES).strip()).strip().strip(_QUOTES).strip()
        if line:
            return line
    return ""


def _messages(prompt, doc, cand: Candidate, shown: int | None = None) -> tuple[dict, ...]:
    """The request of one candidate; ``shown`` paragraphs of a single-span passage (None: all of it)."""
    texts = [doc.text[s:e].strip() for s, e in cand.spans]
    if cand.query_type == "multihop":
        return ({"role": "user", "content": prompt.render(title=doc.title, passage_a=texts[0], passage_b=texts[1])},)
    if shown is not None:
        s, _ = cand.spans[0]
        texts = [doc.text[s : _paragraph_ends(doc, cand)[shown - 1]].strip()] if shown else [""]
    return ({"role": "user", "content": prompt.render(title=doc.title, passage=texts[0])},)


def _paragraph_ends(doc, cand: Candidate) -> list[int]:
    s, e = cand.spans[0]
    return [pe for ps, pe in doc.paragraphs if ps >= s and pe <= e]


def _fitted(llm, prompt, doc, cand: Candidate, max_tokens: int) -> tuple[tuple[dict, ...], bool]:
    """The candidate's messages, its passage cut to fit the window when needed, and whether it was cut."""
    whole = _messages(prompt, doc, cand)
    if cand.query_type == "multihop" or llm.fits(whole, max_tokens):
        return whole, False
    k = fit_count(llm, len(_paragraph_ends(doc, cand)), lambda k: _messages(prompt, doc, cand, k), max_tokens)
    return _messages(prompt, doc, cand, k), True


def _quantiles(values: list[float]) -> dict | None:
    if not values:
        return None
    q = np.percentile(values, [0, 25, 50, 75, 100])
    return {
        "n": len(values),
        "mean": float(np.mean(values)),
        "min": float(q[0]),
        "q1": float(q[1]),
        "median": float(q[2]),
        "q3": float(q[3]),
        "max": float(q[4]),
    }


def generate_queries(
    con: duckdb.DuckDBPyConnection,
    corpus: str = "wikipedia",
    backend: Any = None,
    *,
    seed: int | None = None,
    per_doc: int = 3,
    final_per_type: int = FINAL_PER_TYPE,
    min_words: int = 40,
    temperature: float = 0.7,
    max_tokens: int = 96,
) -> dict:
    """Run the whole funnel for ``corpus`` and load the finals (module doc); returns the report.

    ``seed`` defaults to the LLM config's seed; it drives span sampling, the final draw and the
    sampling seed of every request. ``backend``: an :class:`ingest.llm.LLMCache`, a bare backend, or
    None for the configured one."""
    t0 = time.perf_counter()
    llm = as_llm(con, backend)
    seed = llm.seed if seed is None else seed
    docs = {d.doc_id: d for d in read_docs(con, corpus, structure="gold")}
    with_gold = [d for d in docs.values() if d.sections]
    if not with_gold:
        raise IngestError(
            "warehouse",
            f"corpus {corpus}",
            "no document has a gold structure to sample spans from",
            "load a corpus with headings (ragwh ingest wikipedia ...)",
        )
    candidates = [c for d in with_gold for c in sample_candidates(d, seed, per_doc, min_words)]
    sampling = Sampling(temperature=temperature, max_tokens=max_tokens, seed=seed)
    prompts = {t: load_prompt(f"query_{t}") for t in QUERY_TYPES}
    paraphrase = load_prompt(PARAPHRASE_PROMPT)
    if final_per_type < 1:
        raise ValueError(f"final_per_type (the per-type cap on finals) must be >= 1, got {final_per_type}")
    span_texts = {c.cand_id: [docs[c.doc_id].text[s:e] for s, e in c.spans] for c in candidates}
    fitted = [_fitted(llm, prompts[c.query_type], docs[c.doc_id], c, max_tokens) for c in candidates]
    counts: dict[str, Counter] = {t: Counter() for t in QUERY_TYPES}
    for c, (_, cut) in zip(candidates, fitted):
        counts[c.query_type]["candidates"] += 1
        counts[c.query_type]["passage_truncated"] += cut

    first = llm.complete(
        [
            LLMRequest(f"{corpus}/gen-{c.cand_id}", prompts[c.query_type].key, messages, sampling)
            for c, (messages, _) in zip(candidates, fitted)
        ],
        label=f"generate-queries [{corpus}]",
    )
    survivors: list[tuple[Candidate, str]] = []
    rouge_first: list[float] = []
    for c, answer in zip(candidates, first):
        query = clean_query(answer.text)
        rouge_first.append(max(rouge_l_f1(query, span) for span in span_texts[c.cand_id]))
        reason = "cut_at_max_tokens" if answer.cut else leak_reason(query, span_texts[c.cand_id])
        if reason:
            counts[c.query_type][f"rejected_{reason}"] += 1
        else:
            counts[c.query_type]["survivors"] += 1
            survivors.append((c, query))

    second = (
        llm.complete(
            [
                LLMRequest(
                    f"{corpus}/gen-{c.cand_id}:paraphrase",
                    paraphrase.key,
                    ({"role": "user", "content": paraphrase.render(query=q)},),
                    sampling,
                )
                for c, q in survivors
            ],
            label=f"paraphrase [{corpus}]",
        )
        if survivors
        else []
    )
    passed: dict[str, list[tuple[Candidate, str]]] = {t: [] for t in QUERY_TYPES}
    for (c, _), answer in zip(survivors, second):
        query = clean_query(answer.text)
        reason = "cut_at_max_tokens" if answer.cut else leak_reason(query, span_texts[c.cand_id])
        if reason:
            counts[c.query_type][f"paraphrase_rejected_{reason}"] += 1
        else:
            counts[c.query_type]["paraphrase_survivors"] += 1
            passed[c.query_type].append((c, query))

    finals: list[tuple[Candidate, str]] = []
    for t, qtype in enumerate(QUERY_TYPES):
        pool = sorted(passed[qtype], key=lambda x: x[0].cand_id)
        n_final = min(final_per_type, len(pool))
        idx = np.random.default_rng([seed, t]).choice(len(pool), size=n_final, replace=False) if n_final else []
        chosen = sorted((pool[i] for i in idx), key=lambda x: x[0].cand_id)
        counts[qtype]["final"] = len(chosen)
        finals.extend(chosen)

    _load(
        con,
        corpus,
        finals,
        counts,
        {
            "genq_seed": seed,
            "genq_per_doc": per_doc,
            "genq_min_words": min_words,
            "genq_final_per_type": final_per_type,
            "genq_model": llm.model,
        },
    )
    final_ids = [f"{corpus}/gen-{c.cand_id}" for c, _ in finals]
    return {
        "corpus": corpus,
        "model": llm.model,
        "backend": llm.backend_name,
        "seed": seed,
        "documents": len(docs),
        "documents_without_gold": len(docs) - len(with_gold),
        "funnel": {t: dict(sorted(counts[t].items())) for t in QUERY_TYPES},
        "final_per_type_cap": final_per_type,
        "finals": {t: counts[t]["final"] for t in QUERY_TYPES},
        "rouge_l": {
            "first_queries": _quantiles(rouge_first),
            "finals": _quantiles([max(rouge_l_f1(q, span) for span in span_texts[c.cand_id]) for c, q in finals]),
        },
        "calls": llm.calls,
        "cache_hits": llm.hits,
        "bm25": bm25_top1(con, corpus, final_ids),
        "seconds": time.perf_counter() - t0,
    }


def _load(
    con: duckdb.DuckDBPyConnection,
    corpus: str,
    finals: list[tuple[Candidate, str]],
    counts: dict[str, Counter],
    meta: dict[str, Any],
) -> None:
    queries = pa.table(
        {
            "query_id": [f"{corpus}/gen-{c.cand_id}" for c, _ in finals],
            "doc_id": [c.doc_id for c, _ in finals],
            "corpus": [corpus] * len(finals),
            "text": [q for _, q in finals],
            "query_type": [c.query_type for c, _ in finals],
        }
    )
    ev = [(f"{corpus}/gen-{c.cand_id}", k, c.doc_id, s, e) for c, _ in finals for k, (s, e) in enumerate(c.spans)]
    evidence = pa.table(
        {
            "query_id": [r[0] for r in ev],
            "span_idx": pa.array([r[1] for r in ev], pa.int32()),
            "doc_id": [r[2] for r in ev],
            "char_start": pa.array([r[3] for r in ev], pa.int32()),
            "char_end": pa.array([r[4] for r in ev], pa.int32()),
            "match_method": ["generated"] * len(ev),
        }
    )
    funnel_rows = [
        (f"generated_queries:{t}", reason, n) for t in QUERY_TYPES for reason, n in sorted(counts[t].items())
    ]
    funnel = pa.table(
        {
            "corpus": [corpus] * len(funnel_rows),
            "stage": [r[0] for r in funnel_rows],
            "reason": [r[1] for r in funnel_rows],
            "n": pa.array([r[2] for r in funnel_rows], pa.int64()),
        }
    )
    meta_table = pa.table(
        {
            "corpus": [corpus] * len(meta),
            "key": list(meta),
            "value": ["none" if v is None else str(v) for v in meta.values()],
        }
    )
    prefix = f"{corpus}/gen-"
    with transaction(con):
        replace_where(con, "queries", "corpus = ? AND starts_with(query_id, ?)", [corpus, prefix], queries)
        replace_where(con, "evidence", "starts_with(query_id, ?)", [prefix], evidence)
        replace_where(con, "funnel", "corpus = ? AND starts_with(stage, 'generated_queries:')", [corpus], funnel)
        replace_where(con, "corpus_meta", "corpus = ? AND starts_with(key, 'genq_')", [corpus], meta_table)
